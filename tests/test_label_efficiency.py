"""The label-efficiency benchmark: each cell keeps the labels of a stratified share of the
training subjects, hands the others' windows to pretraining, never a test subject's, and
resumes from the cells already written."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import label_efficiency as le  # noqa: E402
from _baselines_folds import load_windows  # noqa: E402

from medspt.core.splits import labelled_subjects  # noqa: E402

TINY = (
    '{"d_model": 16, "n_heads": 2, "min_steps": 0, "n_estimators": 1, "epochs": 2, '
    '"pretrain_epochs": 1}'
)


def test_labelled_subjects_are_a_stratified_seeded_share():
    groups = np.repeat(np.arange(40), 3)
    labels = np.repeat(np.where(np.arange(40) < 10, "pd", "co"), 3)  # 10 : 30 subjects
    chosen = labelled_subjects(labels, groups, 0.2, random_state=3)
    assert len(chosen) == 8 and (chosen < 10).sum() == 2  # the classes' share kept
    assert np.array_equal(chosen, labelled_subjects(labels, groups, 0.2, random_state=3))
    assert not np.array_equal(chosen, labelled_subjects(labels, groups, 0.2, random_state=4))
    assert np.array_equal(labelled_subjects(labels, groups, 1.0), np.arange(40))
    tiny = labelled_subjects(labels, groups, 0.01, random_state=0)  # at least one per class
    assert set(labels[np.isin(groups, tiny)]) == {"pd", "co"}
    with pytest.raises(ValueError, match=r"fraction=0: give the share of subjects in \(0, 1\]"):
        labelled_subjects(labels, groups, 0)


def test_a_cell_splits_training_subjects_and_never_hands_over_a_test_subject():
    _, ws, folds, _ = load_windows("demo")
    for k, (tr, te) in enumerate(folds):
        labelled, unlabelled, keep = le.cell_split(ws, (tr, te), 0.5, 0, k)
        train_subjects = set(ws.groups[tr])
        assert set(ws.groups[labelled]) == set(keep) and len(keep) == len(train_subjects) // 2
        assert set(unlabelled.groups) == train_subjects - set(keep)
        assert not set(unlabelled.groups) & set(ws.groups[te])
        assert len(labelled) + len(unlabelled) == len(tr)
        assert set(ws.labels[labelled]) == set(ws.labels[tr])  # every class keeps labels
        assert le.cell_split(ws, (tr, te), 1.0, 0, k)[1] is None


def test_cells_are_appended_and_a_rerun_resumes(tmp_path, capsys):
    argv = ["--protocol", "demo", "--fractions", "0.5", "--seeds", "0", "--params", TINY,
            "--out", str(tmp_path)]  # fmt: skip
    assert le.main(argv) == 0
    rows = pd.read_csv(tmp_path / "label_efficiency" / "demo.csv")
    assert len(rows) == 9 and rows.groupby("config").size().to_dict() == {
        "scratch": 3, "scratch-long": 3, "spt-span": 3,
    }  # fmt: skip
    assert (rows.loc[rows["config"] == "scratch", "n_unlabelled"] == 0).all()
    spt = rows[rows["config"] == "spt-span"].set_index("fold")
    assert (spt["n_unlabelled"] > 0).all() and (spt["n_labelled_subjects"] == 4).all()
    long = rows[rows["config"] == "scratch-long"].set_index("fold")
    assert (long["optimizer_steps"] >= spt["optimizer_steps"]).all()
    md = (tmp_path / "label_efficiency.md").read_text()
    assert "| 50% | 4 |" in md and "spt-span @ 50% | scratch-long @ 50%" in md
    # one share of one seed: 3 of 4 shares × 3 seeds × 3 folds
    assert "**Partial: 3 of 36 cells** (4 shares × 3 seeds × 3 folds)" in md
    assert md.count(" ± 0.") == 3 and "(1 fold)" not in md  # mean ± std over 3 folds
    assert (tmp_path / "label_efficiency.png").stat().st_size > 0
    assert (rows["n_folds"] == 3).all()
    # a share stopped after two of its folds still plans 3 folds per share and seed
    csv = tmp_path / "label_efficiency" / "demo.csv"
    rows[rows["fold"] < 2].to_csv(csv, index=False)
    partial = le.report(tmp_path, json.loads(TINY), "cmd")
    assert "**Partial: 2 of 36 cells** (4 shares × 3 seeds × 3 folds)" in partial
    uneven = rows.assign(n_labelled_subjects=np.where(rows["fold"] == 0, 5, 4))
    uneven.to_csv(csv, index=False)  # folds with 5, 4, 4 labelled subjects: a mean of 4.3
    assert "| 50% | 4.3 |" in le.report(tmp_path, json.loads(TINY), "cmd")
    rows.to_csv(csv, index=False)
    capsys.readouterr()
    assert le.main(argv) == 0  # resumed: nothing refitted
    assert "labelled, seed" not in capsys.readouterr().out
    assert len(pd.read_csv(tmp_path / "label_efficiency" / "demo.csv")) == 9


def test_a_share_with_one_fold_shows_its_mean_without_a_std():
    one = pd.Series({"mean": 0.7, "std": np.nan, "count": 1})
    assert le._mean_std(one) == "0.700 (1 fold)"
    assert le._mean_std(pd.Series({"mean": 0.7, "std": 0.05, "count": 2})) == "0.700 ± 0.050"


def _table(rows):
    cols = ["config", "versus", "subject_diff", "subject_ci_low", "subject_ci_high", "p_holm"]
    t = pd.DataFrame(rows, columns=cols).assign(n_subjects=165)
    return t.assign(fold_diff=np.nan, fold_ci_low=np.nan, fold_ci_high=np.nan, n_folds=5)


def test_the_answer_names_the_shares_where_spt_helped_or_did_worse():
    table = _table([
        ("spt-span @ 10%", "scratch @ 10%", 0.2, 0.1, 0.3, 0.001),  # not the control
        ("spt-span @ 10%", "scratch-long @ 10%", 0.05, 0.01, 0.09, 0.01),
        ("spt-span @ 25%", "scratch-long @ 25%", -0.03, -0.06, -0.005, 0.08),  # Holm: not
        ("spt-span @ 50%", "scratch-long @ 50%", 0.02, -0.01, 0.05, 0.2),
        ("spt-span @ 100%", "scratch-long @ 100%", -0.04, -0.07, -0.01, 0.03),
    ])  # fmt: skip
    text = le.answer("GPD-1", table, "spt-span")
    assert "paired over test subjects" in text
    assert "10%: +0.050 (95 % CI +0.010 to +0.090, Holm p 0.010, 165 test subjects)" in text
    assert "+0.200" not in text  # against scratch: not the compute-matched answer
    assert text.endswith(
        "SPT helped with labels from 10% of the training subjects; it was worse at 100%."
    )
    none = le.answer("NE-1", table.iloc[[3]], "spt-span")
    assert none.endswith("SPT did not demonstrably help at any share of labelled subjects.")
    assert le.answer("NE-1", table.iloc[[0]], "spt-span") == ""


def test_the_answer_says_what_spt_cost_in_time_at_each_share():
    table = _table([("spt-span @ 10%", "scratch-long @ 10%", 0.05, 0.01, 0.09, 0.01)])
    res = pd.DataFrame(
        [
            ("spt-span @ 10%", 0.1, 600.0),
            ("spt-span @ 10%", 0.1, 500.0),  # two folds: the mean, 550 s
            ("scratch-long @ 10%", 0.1, 1100.0),
            ("scratch @ 10%", 0.1, 10.0),  # not the control
            ("spt-span @ 25%", 0.25, 300.0),
            ("scratch-long @ 25%", 0.25, 100.0),
            ("spt-span @ 50%", 0.5, 900.0),  # no control yet: left out
        ],
        columns=["config", "fraction", "wall_time_s"],
    )
    text = le.answer("GPD-1", table, "spt-span", res)
    assert text.endswith(
        "SPT helped with labels from 10% of the training subjects. Mean fitting time per "
        "fold, SPT against scratch-long: 10%: 550 s vs 1100 s (0.5×); 25%: 300 s vs 100 s "
        "(3.0×)."
    )
    assert le.answer("GPD-1", table, "spt-span").endswith("of the training subjects.")
