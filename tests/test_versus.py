"""Baselines beside every result: evaluate's baseline rows, the validation-chosen medspt
side, the paired answer (medspt.evaluation.versus), compare(), the command line and the figure."""

import matplotlib
import numpy as np
import pandas as pd
import pytest
from conftest import FAST, subject_frame

import medspt
from medspt import InputError, comparison_table, evaluate, summarize
from medspt.api import fit_baseline_fold
from medspt.baselines import MiniRocket
from medspt.cli.commands import main
from medspt.evaluation.choice import NESTED, chosen_rows
from medspt.evaluation.plots import figure_accuracy_vs_depth
from medspt.evaluation.results import config_predictions
from medspt.evaluation.statistics import compare_subjects
from medspt.evaluation.versus import preference, versus_baseline, versus_markdown

matplotlib.use("Agg")


def _windows(n_sub=12, per=6, C=2, T=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_sub * per, C, T)).astype(np.float32)
    y = np.repeat(np.arange(n_sub) % 2, per)
    X[y == 1, 0] += 2 * np.sin(np.arange(T) / 2)
    groups = np.repeat([f"s{i}" for i in range(n_sub)], per)
    return X, np.where(y == 1, "pd", "control"), groups


@pytest.fixture(scope="module")
def results():
    X, y, g = _windows()
    # two depths give nested selection something to choose between
    return evaluate(X, y, g, cv=3, depths=(1,), seeds=(0, 1), verbose=False, **FAST)


def test_baseline_rows_sit_on_the_same_folds_and_seeds(results):
    base = results[results["config"] == "minirocket"]
    assert len(base) == 3 * 2  # folds x seeds
    assert base["depth"].isna().all() and base["val_score"].isna().all()
    assert (base["optimizer_steps"] == 0).all() and (base["pretrain_epochs"] == 0).all()
    assert set(base["seed"]) == {0, 1} and set(base["fold"]) == {0, 1, 2}
    pred = results.predictions
    for k in range(3):  # identical test subjects and windows per fold
        mine = pred[(pred["config"] == "spt-span") & (pred["fold"] == k) & (pred["seed"] == 0)]
        theirs = pred[(pred["config"] == "minirocket") & (pred["fold"] == k) & (pred["seed"] == 0)]
        assert set(mine["subject"]) == set(theirs["subject"])
        np.testing.assert_array_equal(np.sort(mine["window"]), np.sort(theirs["window"]))
    # the grid's own rows did not move: scratch, scratch-long, spt-span at depth 1
    own = results[results["config"] != "minirocket"]
    assert list(pd.unique(own["config"])) == ["scratch", "scratch-long", "spt-span"]


def test_baseline_rows_are_a_fit_on_the_training_fold_only(results):
    X, y, g = _windows()
    ws = medspt.from_arrays(X, y, g)
    test_subjects = set(
        results.predictions.query("fold == 1 and config == 'minirocket'")["subject"]
    )
    te = np.flatnonzero(np.isin(g, list(test_subjects)))
    tr = np.flatnonzero(~np.isin(g, list(test_subjects)))
    row, clf, proba = fit_baseline_fold(ws, tr, te, "minirocket", seed=1)
    direct = MiniRocket(random_state=1).fit(X[tr], y[tr]).predict_proba(X[te])
    np.testing.assert_allclose(proba, direct)
    stored = results[(results["config"] == "minirocket") & (results["fold"] == 1)]
    stored = stored[stored["seed"] == 1].iloc[0]
    assert row["balanced_accuracy"] == pytest.approx(stored["balanced_accuracy"])
    assert row["n_train"] == len(tr) and row["n_test"] == len(te)


def test_no_baselines_and_bad_names():
    X, y, g = _windows(n_sub=8)
    r = evaluate(X, y, g, cv=2, depths=(1,), baselines=(), scratch=False, verbose=False, **FAST)
    assert list(pd.unique(r["config"])) == ["spt-span"]
    with pytest.raises(InputError, match=r"unknown baseline\(s\) \['rocket'\]"):
        evaluate(X, y, g, cv=2, baselines=("rocket",), verbose=False, **FAST)
    with pytest.raises(InputError, match="no baseline rows"):
        versus_baseline(r)


def test_comparison_table_sets_the_validation_choice_against_the_baseline(results):
    table = comparison_table(results)
    row = table[table["versus"] == "minirocket"]
    assert len(row) == 1 and row["config"].iloc[0] == NESTED
    nested, key, why = chosen_rows(results)
    assert key[0] == NESTED and "validation subjects" in why
    # each fold's winner by validation score alone (test scores never looked at)
    own = results[results["config"] != "minirocket"]
    for k, g in own.groupby("fold"):
        best = g.groupby(["config", "depth"], sort=False)["val_score"].mean().idxmax()
        assert nested[nested["fold"] == k]["chosen"].iloc[0] == f"{best[0]} (depth {best[1]})"
    expect = compare_subjects(nested.predictions, config_predictions(results, "minirocket", np.nan))
    assert row["subject_diff"].iloc[0] == pytest.approx(expect["diff"])
    assert row["n_subjects"].iloc[0] == 12
    # the grid's own comparisons are still there, and Holm counts the new one
    assert {"scratch", "scratch-long"} <= set(table["versus"])
    assert summarize(results).query("config == 'minirocket'")["count"].iloc[0] == 6


def test_versus_answer_follows_its_interval(results):
    v = versus_baseline(results)
    assert v["baseline"] == "minirocket" and v["unit"] == "subjects" and v["n"] == 12
    assert v["ci_low"] <= v["diff"] <= v["ci_high"]
    assert v["pooled"] - v["baseline_pooled"] == pytest.approx(v["diff"])  # pooled, like diff
    # the scores are the summary table's, so the sentence and the table show one number
    table = summarize(results).set_index("config")
    assert v["mean"] == pytest.approx(table.loc[NESTED, "mean"])
    assert v["baseline_mean"] == pytest.approx(table.loc["minirocket", "mean"])
    assert f"against {v['baseline_mean']:.3f} for MiniRocket" in v["sentence"]
    # Holm's p of the comparisons table's own row
    row = comparison_table(results).query("versus == 'minirocket'").iloc[0]
    assert v["p_holm"] == pytest.approx(row["p_holm"]) and v["n_comparisons"] > 1
    assert v["prefer"] == preference(v["ci_low"], v["ci_high"], v["p_holm"])
    words = {"medspt": "Prefer medspt", "baseline": "Prefer MiniRocket", "either": "No clear"}
    assert v["sentence"].startswith(words[v["prefer"]])
    assert "12 subjects" in v["sentence"] and "Holm p" in v["sentence"]
    assert (
        preference(0.01, 0.2, 0.01),
        preference(-0.2, -0.01, 0.01),
        preference(-0.1, 0.1, 0.01),
        preference(0.01, 0.2, 0.2),  # an interval off zero, but p says nothing
    ) == ("medspt", "baseline", "either", "either")
    assert preference(np.nan, np.nan, np.nan) == "either"
    text = versus_markdown(results)
    assert text.startswith("## medspt or MiniRocket?") and v["sentence"] in text


def test_without_validation_scores_the_first_spt_configuration_is_declared():
    X, y, g = _windows(n_sub=8)
    r = evaluate(X, y, g, cv=2, depths=(1,), val_size=0.0, verbose=False, **FAST)
    rows, key, why = chosen_rows(r)
    assert key == ("spt-span", 1) and "first SPT configuration" in why
    assert set(rows["config"]) == {"spt-span"}
    assert versus_baseline(r)["medspt"] == "spt-span at depth 1"


def test_compare_is_the_default_model_against_minirocket():
    X, y, g = _windows(n_sub=8)
    r = medspt.compare(X, y, g, cv=2, verbose=False, **FAST)
    assert list(pd.unique(r["config"])) == ["spt-span", "minirocket"]
    assert r.versus["medspt"] == "spt-span at depth 2"  # the grid's default depth
    assert r.versus["chosen"] == "the only medspt configuration fitted"
    assert r.versus["n"] == 8
    with pytest.raises(InputError, match="compare\\(\\) sets scratch= itself"):
        medspt.compare(X, y, g, scratch=True)


def test_figure_draws_each_baseline_across_the_depths(results):
    table = summarize(results)
    fig = figure_accuracy_vs_depth(table)
    ax = fig.axes[0]
    mean = table.query("config == 'minirocket'")["mean"].iloc[0]
    lines = [ln for ln in ax.get_lines() if ln.get_label().startswith("minirocket (")]
    assert len(lines) == 1
    assert np.allclose(lines[0].get_ydata(), mean)
    # the baseline has no column of its own; the validation choice has
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "chosen per fold"]
    assert table["baseline"].tolist() == [False, False, False, True, False]
    nested = ax.containers[-1]  # nested-best, at the "chosen per fold" position
    assert nested.get_label().startswith("nested-best")


def test_cli_evaluate_shows_minirocket_and_the_paired_answer(tmp_path, capsys):
    data = tmp_path / "rec.csv"
    subject_frame(n_per_class=3).to_csv(data, index=False)
    out = tmp_path / "ev"
    fast = ["--d-model", "16", "--n-heads", "2", "--patch-len", "8", "--pretrain-epochs", "1",
            "--epochs", "2", "--min-steps", "0"]  # fmt: skip
    args = ["evaluate", "--data", str(data), "--window", "2s", "--cv", "3", "--depths", "1",
            "--no-scratch", "--quiet", "--out"]  # fmt: skip
    assert main([*args, str(out), *fast]) == 0
    printed = capsys.readouterr().out
    assert "## medspt or MiniRocket?" in printed
    rows = pd.read_csv(out / "results.csv")
    assert set(rows["config"]) == {"spt-span", "minirocket"}
    assert "## medspt or MiniRocket?" in (out / "summary.md").read_text()
    assert "minirocket" in (out / "comparisons.md").read_text()
    none = tmp_path / "none"
    assert main([*args, str(none), *fast, "--no-baselines"]) == 0
    assert set(pd.read_csv(none / "results.csv")["config"]) == {"spt-span"}
    assert "MiniRocket" not in (none / "summary.md").read_text()
    with pytest.raises(SystemExit):
        main([*args, str(none), "--baselines", "rocket"])
    assert "invalid choice: 'rocket'" in capsys.readouterr().err
