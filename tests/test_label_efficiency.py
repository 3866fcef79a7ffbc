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
    arms = ["scratch", "scratch-long", "spt-span", "minirocket", "multirocket-hydra"]
    assert len(rows) == 15 and rows.groupby("config").size().to_dict() == dict.fromkeys(arms, 3)
    assert (rows.loc[rows["config"] == "scratch", "n_unlabelled"] == 0).all()
    spt = rows[rows["config"] == "spt-span"].set_index("fold")
    assert (spt["n_unlabelled"] > 0).all() and (spt["n_labelled_subjects"] == 4).all()
    rocket = rows[rows["config"] == "minirocket"].set_index("fold")
    # the baselines see the labelled subjects' windows only, no unlabelled ones
    assert (rocket["n_train"] == spt["n_train"]).all() and (rocket["n_unlabelled"] == 0).all()
    assert rocket["depth"].isna().all()
    md = (tmp_path / "label_efficiency.md").read_text()
    assert "| 50% | 4 | 5 |" in md  # 4 labelled subjects, five-member fits
    assert "spt-span @ 50% | scratch-long @ 50%" in md and "spt-span @ 50% | minirocket @ 50%" in md
    assert "Holm's correction over the 4 comparisons of both protocols" in md
    # one share of one seed: 3 of 4 shares × 3 seeds × 3 folds, for every arm
    assert "**Partial**: of 36 cells per arm (4 shares × 3 seeds × 3 folds)" in md
    assert "scratch 3, scratch-long 3, spt-span 3, minirocket 3, multirocket-hydra 3" in md
    assert md.count(" ± 0.") == 5 and "(1 fold)" not in md  # mean ± std over 3 folds
    assert (tmp_path / "label_efficiency.png").stat().st_size > 0
    assert (rows["n_folds"] == 3).all()
    # a share stopped after two of its folds still plans 3 folds per share and seed
    csv = tmp_path / "label_efficiency" / "demo.csv"
    rows[rows["fold"] < 2].to_csv(csv, index=False)
    partial = le.report(tmp_path, json.loads(TINY), "cmd")
    assert "done so far: scratch 2, scratch-long 2, spt-span 2, minirocket 2" in partial
    uneven = rows.assign(n_labelled_subjects=np.where(rows["fold"] == 0, 5, 4))
    uneven.to_csv(csv, index=False)  # folds with 5, 4, 4 labelled subjects: a mean of 4.3
    assert "| 50% | 4.3 |" in le.report(tmp_path, json.loads(TINY), "cmd")
    # an arm missing from a cell is fitted alone on a rerun; the others are kept
    rows[rows["config"] != "minirocket"].to_csv(csv, index=False)
    capsys.readouterr()
    assert le.main(argv) == 0
    out = capsys.readouterr().out
    assert out.count("labelled, seed") == 3 and out.count(", minirocket:") == 3
    assert len(pd.read_csv(csv)) == 15
    assert le.main(argv) == 0  # resumed: nothing refitted
    assert "labelled, seed" not in capsys.readouterr().out
    assert len(pd.read_csv(csv)) == 15


def test_a_share_with_one_fold_shows_its_mean_without_a_std():
    one = pd.Series({"mean": 0.7, "std": np.nan, "count": 1})
    assert le._mean_std(one) == "0.700 (1 fold)"
    assert le._mean_std(pd.Series({"mean": 0.7, "std": 0.05, "count": 2})) == "0.700 ± 0.050"


def _table(rows):
    cols = ["config", "versus", "subject_diff", "subject_ci_low", "subject_ci_high", "p_holm"]
    t = pd.DataFrame(rows, columns=cols).assign(n_subjects=165)
    return t.assign(fold_diff=np.nan, fold_ci_low=np.nan, fold_ci_high=np.nan, n_folds=5)


def _curve(means):
    """A curve frame: (fraction, config, mean) rows."""
    return pd.DataFrame(means, columns=["fraction", "config", "mean"])


def test_the_answer_compares_spt_with_the_better_control_and_with_minirocket():
    table = _table([
        ("spt-span @ 10%", "scratch @ 10%", 0.2, 0.1, 0.3, 0.001),
        ("spt-span @ 10%", "scratch-long @ 10%", 0.05, 0.01, 0.09, 0.01),
        ("spt-span @ 10%", "minirocket @ 10%", -0.08, -0.12, -0.04, 0.001),
        ("spt-span @ 25%", "scratch @ 25%", 0.04, 0.01, 0.07, 0.01),
        ("spt-span @ 25%", "scratch-long @ 25%", 0.09, 0.05, 0.12, 0.001),
        ("spt-span @ 25%", "minirocket @ 25%", 0.01, -0.03, 0.05, 0.6),
    ]).assign(fraction=[0.1, 0.1, 0.1, 0.25, 0.25, 0.25])  # fmt: skip
    # 10 %: scratch-long is the better control; 25 %: scratch is
    curve = _curve([(0.1, "scratch", 0.50), (0.1, "scratch-long", 0.60),
                    (0.25, "scratch", 0.66), (0.25, "scratch-long", 0.61)])  # fmt: skip
    assert le.better_control(curve, 0.1) == "scratch-long"
    assert le.better_control(curve, 0.25) == "scratch"
    assert le.better_control(curve, 0.5) is None
    text = le.answer("GPD-1", table, curve, "spt-span")
    assert "10% (scratch-long): +0.050 (95 % CI +0.010 to +0.090, Holm p 0.010, 165 test " \
        "subjects)" in text  # fmt: skip
    assert "25% (scratch): +0.040" in text and "+0.200" not in text and "+0.090 (95" not in text
    assert "SPT beat the better label-only control with labels from 10%, 25% of" in text
    assert "spt-span minus MiniRocket: 10%: -0.080" in text
    assert text.endswith("MiniRocket was ahead at 10%.")
    # the better control decides: SPT not above it at 25 % is no help there
    worse = table.copy()
    worse.loc[3, ["subject_diff", "subject_ci_low", "subject_ci_high", "p_holm"]] = \
        [0.01, -0.02, 0.04, 0.5]  # fmt: skip
    text = le.answer("GPD-1", worse, curve, "spt-span")
    assert "with labels from 10% of the training subjects" in text
    pending = le.answer("NE-1", table.iloc[[0]], curve[curve["config"] == "scratch"], "spt-span")
    assert "10% (scratch; scratch-long not run yet)" in pending


def test_the_answer_says_what_each_arm_cost_in_time_at_each_share():
    table = _table([("spt-span @ 10%", "scratch-long @ 10%", 0.05, 0.01, 0.09, 0.01)]).assign(
        fraction=0.1
    )
    curve = _curve([(0.1, "scratch-long", 0.6)])
    res = pd.DataFrame(
        [
            ("spt-span @ 10%", 0.1, 600.0),
            ("spt-span @ 10%", 0.1, 500.0),  # two folds: the mean, 550 s
            ("scratch-long @ 10%", 0.1, 1100.0),
            ("minirocket @ 10%", 0.1, 20.0),
            ("spt-span @ 50%", 0.5, 900.0),  # nothing beside it: left out
        ],
        columns=["config", "fraction", "wall_time_s"],
    )
    text = le.answer("GPD-1", table, curve, "spt-span", res)
    assert text.endswith(
        "Mean fitting time per fold: 10%: spt-span 550 s, scratch-long 1100 s, MiniRocket 20 s."
    )
    assert le.answer("GPD-1", table, curve, "spt-span").endswith("of the training subjects.")


def test_cells_of_another_default_are_not_appended_from_this_code(capsys):
    # the issue-59 cells (defaults 8b5a2958, before the instance floor) resume only from
    # that code; today's code would add cells of another default under their name
    with pytest.raises(SystemExit):
        le.main(["--protocol", "demo", "--defaults", "8b5a2958"])
    err = capsys.readouterr().err
    assert "the cells reported are those of 8b5a2958" in err and "--defaults" in err
