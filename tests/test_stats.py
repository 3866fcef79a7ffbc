"""Paired statistics over subjects: constructed predictions with known answers."""

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import accuracy_score, balanced_accuracy_score

from medspt.api import Results, comparison_table, summarize
from medspt.evaluation.statistics import (
    bootstrap_ci,
    compare_folds,
    compare_gains,
    compare_subjects,
    holm,
    sign_flip_test,
    subject_scores,
)


def _predictions(n_subjects=40, windows=10, n_classes=2, seed=0, p_correct=0.7, config="a"):
    """Window-level predictions: subject s has label s % n_classes; each window is right
    with probability p_correct (a per-subject rate when p_correct is an array)."""
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(n_subjects):
        p = p_correct[s] if np.ndim(p_correct) else p_correct
        y = s % n_classes
        for w in range(windows):
            right = rng.random() < p
            pred = y if right else (y + 1) % n_classes
            proba = np.full(n_classes, 0.1 / max(1, n_classes - 1))
            proba[pred] = 0.9
            rows.append(
                dict(
                    config=config,
                    depth=2,
                    seed=seed,
                    fold=s % 5,
                    window=s * windows + w,
                    subject=f"S{s:02d}",
                    label_code=y,
                    predicted_code=pred,
                    **{f"proba_{k}": proba[k] for k in range(n_classes)},
                )
            )
    return pd.DataFrame(rows)


@pytest.mark.parametrize("metric", ["accuracy", "balanced_accuracy"])
def test_subject_scores_sum_to_the_pooled_metric(metric):
    rng = np.random.default_rng(1)
    pred = _predictions(n_subjects=13, windows=7, n_classes=3, p_correct=rng.random(13))
    # unbalanced classes: drop some windows of class 0
    pred = pred[~((pred["label_code"] == 0) & (pred["window"] % 3 == 0))]
    scores = subject_scores(pred, metric)
    want = {"accuracy": accuracy_score, "balanced_accuracy": balanced_accuracy_score}[metric]
    assert scores.sum() == pytest.approx(want(pred["label_code"], pred["predicted_code"]))
    assert len(scores) == pred["subject"].nunique()


def test_subject_accuracy_scores_count_subjects_right():
    pred = _predictions(n_subjects=10, windows=5, p_correct=np.r_[np.ones(7), np.zeros(3)])
    scores = subject_scores(pred, "subject_accuracy")
    assert scores.sum() == pytest.approx(0.7)
    assert set(scores.round(6)) == {0.0, 0.1}


def test_subject_accuracy_refuses_subjects_with_several_labels():
    pred = _predictions(n_subjects=4, windows=4)
    pred.loc[pred.index[0], "label_code"] = 1 - pred.loc[pred.index[0], "label_code"]
    with pytest.raises(ValueError, match="one label per subject"):
        subject_scores(pred, "subject_accuracy")


def test_identical_models_give_p_one_and_a_zero_interval():
    a = _predictions(seed=0)
    res = compare_subjects(a, a.assign(config="b"))
    assert res["p_value"] == 1.0
    assert res["diff"] == 0.0
    assert res["ci_low"] == res["ci_high"] == 0.0
    assert res["n_subjects"] == 40


def test_a_constant_shift_over_40_subjects_is_significant():
    # b misses exactly one more window per subject than a: a shift every subject shares
    a = _predictions(p_correct=np.ones(40), windows=10)
    b = a.copy()
    first = b.groupby("subject").head(1).index
    b.loc[first, "predicted_code"] = 1 - b.loc[first, "label_code"]
    res = compare_subjects(a, b, "accuracy")
    assert res["diff"] == pytest.approx(0.1)
    assert res["p_value"] < 0.01
    assert res["ci_low"] > 0
    assert res["ci_low"] == pytest.approx(0.1) == res["ci_high"]  # no spread at all
    # noise of the same size that cancels out is not significant
    c = a.copy()
    half = first[::2]
    c.loc[half, "predicted_code"] = 1 - c.loc[half, "label_code"]
    d = a.copy()
    d.loc[first[1::2], "predicted_code"] = 1 - d.loc[first[1::2], "label_code"]
    assert compare_subjects(c, d, "accuracy")["p_value"] > 0.5


def test_seed_copies_of_one_fold_cannot_shrink_the_p_value():
    rng = np.random.default_rng(3)
    a = _predictions(n_subjects=12, p_correct=rng.uniform(0.5, 0.9, 12), seed=0)
    b = _predictions(n_subjects=12, p_correct=rng.uniform(0.4, 0.8, 12), seed=0, config="b")
    one = compare_subjects(a, b)
    three = compare_subjects(
        pd.concat([a.assign(seed=s) for s in range(3)]),
        pd.concat([b.assign(seed=s) for s in range(3)]),
    )
    assert three["p_value"] == pytest.approx(one["p_value"])
    assert three["diff"] == pytest.approx(one["diff"])
    # fold level: the same for seeds of the same folds
    fa = pd.DataFrame({"fold": range(5), "seed": 0, "m": [0.7, 0.72, 0.69, 0.75, 0.71]})
    fb = fa.assign(m=fa["m"] - [0.01, 0.03, 0.02, 0.04, 0.01])
    p1 = compare_folds(fa, fb, "m")["p_value"]
    p3 = compare_folds(
        pd.concat([fa.assign(seed=s) for s in range(3)]),
        pd.concat([fb.assign(seed=s) for s in range(3)]),
        "m",
    )["p_value"]
    assert p1 == p3 == pytest.approx(2 / 32)  # five folds, all one sign: the floor


@pytest.mark.parametrize("metric", ["accuracy", "balanced_accuracy", "subject_accuracy"])
def test_a_seed_that_covers_only_some_folds_keeps_the_pooled_scale(metric):
    # a nested choice can win one fold with a configuration fitted with more seeds: a
    # second seed of fold 0 only, identical to the first, must change nothing
    rng = np.random.default_rng(5)
    a = _predictions(n_subjects=15, windows=6, n_classes=3, p_correct=rng.random(15))
    a = a[~((a["label_code"] == 0) & (a["window"] % 2 == 0))]  # unbalanced classes
    extra = a[a["fold"] == 0].assign(seed=1)
    both = pd.concat([a, extra], ignore_index=True)
    b = _predictions(n_subjects=15, windows=6, n_classes=3, p_correct=0.5, config="b")
    one, two = compare_subjects(a, b, metric), compare_subjects(both, b, metric)
    assert two["metric_a"] == pytest.approx(one["metric_a"])
    assert two["diff"] == pytest.approx(one["diff"])
    if metric != "subject_accuracy":
        want = {"accuracy": accuracy_score, "balanced_accuracy": balanced_accuracy_score}
        assert two["metric_a"] == pytest.approx(want[metric](a["label_code"], a["predicted_code"]))
    # a second seed that does differ moves fold 0's subjects by half its difference
    wrong = (extra["label_code"] + 1) % 3
    worse = extra.assign(
        predicted_code=wrong, **{f"proba_{k}": (wrong == k) * 0.9 for k in range(3)}
    )
    mixed = compare_subjects(pd.concat([a, worse], ignore_index=True), b, metric)
    lost = subject_scores(a, metric).loc[lambda s: s.index.isin(extra["subject"])].sum()
    assert mixed["metric_a"] == pytest.approx(one["metric_a"] - lost / 2)


def test_sign_flip_test_exact_and_monte_carlo():
    assert sign_flip_test(np.array([1.0, 1.0, 1.0])) == pytest.approx(2 / 8)
    assert sign_flip_test(np.zeros(6)) == 1.0
    assert np.isnan(sign_flip_test(np.array([1.0])))
    d = np.r_[np.ones(30), -np.ones(2)] * 0.1
    p = sign_flip_test(d, n_resamples=5000)
    assert 0 < p < 1e-3
    sym = np.r_[np.ones(15), -np.ones(15)]
    assert sign_flip_test(sym) > 0.9


def test_bootstrap_interval_covers_the_sum_and_is_seeded():
    d = np.random.default_rng(0).normal(0.01, 0.02, 50)
    lo, hi = bootstrap_ci(d)
    assert lo < d.sum() < hi
    assert (lo, hi) == bootstrap_ci(d)
    assert hi - lo == pytest.approx(2 * 1.96 * d.std(ddof=1) * np.sqrt(50), rel=0.15)


def test_holm_matches_its_definition():
    p = [0.01, 0.04, 0.03, np.nan, 0.5]
    adj = holm(p)
    assert np.isnan(adj[3])
    np.testing.assert_allclose(adj[[0, 2, 1, 4]], [0.04, 0.09, 0.09, 0.5])
    assert (holm([0.2, 0.3]) == [0.4, 0.4]).all()
    assert (holm([0.9, 0.8, 0.7]) <= 1).all()


def _results(pred_a, pred_b):
    rows = []
    for frame in (pred_a, pred_b):
        for (c, s, f), g in frame.groupby(["config", "seed", "fold"]):
            rows.append(
                dict(
                    config=c,
                    depth=2,
                    seed=s,
                    fold=f,
                    balanced_accuracy=balanced_accuracy_score(g["label_code"], g["predicted_code"]),
                )
            )
    res = Results(rows)
    res.predictions = pd.concat([pred_a, pred_b], ignore_index=True)
    return res


def test_summarize_tests_over_subjects_and_corrects_for_multiplicity():
    a = _predictions(config="scratch", p_correct=0.6, seed=0)
    b = _predictions(config="spt-span", p_correct=0.9, seed=0)
    res = _results(a, b)
    table = summarize(res)
    row = table[table["config"] == "spt-span"].iloc[0]
    assert row["test"] == "subjects" and row["n_pairs"] == 40
    assert row["subject_gain"] == pytest.approx(
        balanced_accuracy_score(b["label_code"], b["predicted_code"])
        - balanced_accuracy_score(a["label_code"], a["predicted_code"])
    )
    assert row["p_value"] < 0.001 and row["ci_low"] > 0.15
    # without predictions the test falls back to the 5 folds
    plain = summarize(pd.DataFrame(res))
    prow = plain[plain["config"] == "spt-span"].iloc[0]
    assert prow["test"] == "folds" and prow["n_pairs"] == 5
    assert prow["p_value"] == pytest.approx(2 / 32)
    comp = comparison_table(res)
    assert list(comp["versus"]) == ["scratch"]
    assert comp["p_holm"].iloc[0] == pytest.approx(comp["subject_p"].iloc[0])


def test_fold_interval_is_the_t_interval_of_seed_averaged_fold_differences():
    from scipy import stats

    fa = pd.DataFrame({"fold": [0, 0, 1, 1, 2, 2], "seed": [0, 1] * 3})
    fa["m"] = [0.70, 0.72, 0.60, 0.62, 0.80, 0.84]
    fb = fa.assign(m=[0.65, 0.65, 0.61, 0.61, 0.70, 0.70])
    res = compare_folds(fa, fb, "m")
    d = np.array([0.71 - 0.65, 0.61 - 0.61, 0.82 - 0.70])
    half = stats.t.ppf(0.975, 2) * d.std(ddof=1) / np.sqrt(3)
    assert res["diff"] == pytest.approx(d.mean())
    assert res["ci_low"] == pytest.approx(d.mean() - half)
    assert res["ci_high"] == pytest.approx(d.mean() + half)
    assert res["n_folds"] == 3
    assert res["p_value"] == pytest.approx(sign_flip_test(d))
    # a constant difference has no spread: the interval is the point
    two = fa[fa.fold < 2]
    same = compare_folds(two, two.assign(m=two["m"] - 0.01), "m")
    assert same["ci_low"] == pytest.approx(0.01) == same["ci_high"]
    spread = compare_folds(two, fb[fb.fold < 2], "m")  # two folds still get a t interval
    assert spread["ci_low"] < spread["diff"] < spread["ci_high"]
    assert np.isnan(compare_folds(fa[fa.fold == 0], fb[fb.fold == 0], "m")["ci_low"])


def test_monte_carlo_p_matches_the_binomial_answer():
    from scipy.stats import binom

    # equal magnitudes: |sum| = |2K - n| with K ~ Binomial(n, 1/2), ties included
    d = np.r_[np.ones(20), -np.ones(10)]
    exact = binom.sf(19, 30, 0.5) + binom.cdf(10, 30, 0.5)  # P(K >= 20) + P(K <= 10)
    p = sign_flip_test(d, n_resamples=7_000, seed=1)  # draws in chunks of 5,000
    assert p == pytest.approx(exact, abs=0.012)
    assert sign_flip_test(d, n_resamples=2_000, seed=1) == sign_flip_test(d, 2_000, seed=1)
    # nothing as extreme in 20,000 draws: the smallest p the draws allow
    assert sign_flip_test(np.ones(40), n_resamples=20_000) == pytest.approx(1 / 20_001)
    assert sign_flip_test(np.array([0.5, 0.2])) == pytest.approx(0.5)
    assert sign_flip_test(np.array([0.5, -0.2])) == pytest.approx(1.0)


def test_bootstrap_interval_is_the_percentile_interval_of_resampled_sums():
    d = np.random.default_rng(4).normal(0.0, 1.0, 12)
    rng = np.random.default_rng(7)
    sums = d[rng.integers(0, 12, size=(3000, 12))].sum(axis=1)
    want = np.quantile(sums, [0.05, 0.95])
    got = bootstrap_ci(d, n_resamples=3000, seed=7, level=0.90)
    np.testing.assert_allclose(got, want)
    assert np.isfinite(bootstrap_ci(np.array([0.1, 0.3]))).all()
    assert np.isnan(bootstrap_ci(np.array([0.1]))).all()


def test_subject_scores_are_named_and_indexed_by_subject():
    pred = _predictions(n_subjects=6, windows=3)
    for metric in ("accuracy", "balanced_accuracy", "subject_accuracy"):
        scores = subject_scores(pred, metric)
        assert scores.name == metric
        assert sorted(scores.index) == [f"S{s:02d}" for s in range(6)]
    with pytest.raises(ValueError, match="metric must be one of"):
        subject_scores(pred, "macro_f1")


def test_subject_comparison_is_reproducible_and_uses_the_metric_asked_for():
    a = _predictions(n_subjects=30, seed=1)  # over 20 subjects: Monte Carlo p
    b = _predictions(n_subjects=30, seed=2, config="b")
    assert compare_subjects(a, b) == compare_subjects(a, b)
    a3 = a[~((a["label_code"] == 0) & (a["window"] % 2 == 0))]  # unbalanced classes
    res = compare_subjects(a3, b, "accuracy")
    assert res["metric_a"] == pytest.approx(accuracy_score(a3["label_code"], a3["predicted_code"]))
    assert res["metric_a"] != pytest.approx(
        balanced_accuracy_score(a3["label_code"], a3["predicted_code"])
    )


def test_gain_comparison_is_the_difference_of_the_two_pooled_gains():
    rng = np.random.default_rng(5)
    a, b, ra, rb = (
        _predictions(p_correct=rng.uniform(0.3, 1.0, 40), seed=0, config=c)
        for c in ("a", "b", "ra", "rb")
    )
    rb = rb[rb["subject"] != "S03"]  # a subject only three models scored is left out
    res = compare_gains(a, b, ra, rb)
    assert res["n_subjects"] == 39

    def bacc(p):
        p = p[p["subject"] != "S03"]
        return balanced_accuracy_score(p["label_code"], p["predicted_code"])

    assert res["gain"] == pytest.approx(bacc(a) - bacc(b))
    assert res["gain_ref"] == pytest.approx(bacc(ra) - bacc(rb))
    assert res["diff"] == pytest.approx(res["gain"] - res["gain_ref"])
    assert res["ci_low"] <= res["diff"] <= res["ci_high"]


def test_equal_gains_give_p_one_and_a_gain_on_every_subject_is_significant():
    a = _predictions(p_correct=np.ones(40), windows=10)
    b = a.copy()
    first = b.groupby("subject").head(1).index
    b.loc[first, "predicted_code"] = (
        1 - b.loc[first, "label_code"]
    )  # b misses one window per subject
    same = compare_gains(a, b, a.copy(), b.copy(), "accuracy")
    assert same["diff"] == 0.0 and same["p_value"] == 1.0
    assert same["gain"] == pytest.approx(0.1) == same["gain_ref"]
    # the reference pair is equal: all of a's gain is extra, on all 40 subjects
    more = compare_gains(a, b, a.copy(), a.copy(), "accuracy")
    assert more["diff"] == pytest.approx(0.1)
    assert more["gain_ref"] == 0.0
    assert more["p_value"] < 0.01 and more["ci_low"] > 0
    # the other way round the sign flips
    less = compare_gains(a, a.copy(), a.copy(), b, "accuracy")
    assert less["diff"] == pytest.approx(-0.1) and less["ci_high"] < 0


def test_gain_comparison_averages_seeds_and_needs_common_subjects():
    rng = np.random.default_rng(8)
    frames = [_predictions(n_subjects=12, p_correct=rng.uniform(0.4, 0.9, 12)) for _ in range(4)]
    one = compare_gains(*frames)
    three = compare_gains(*(pd.concat([f.assign(seed=s) for s in range(3)]) for f in frames))
    assert three["p_value"] == pytest.approx(one["p_value"])
    assert three["diff"] == pytest.approx(one["diff"])
    apart = frames[3].assign(subject="X" + frames[3]["subject"])
    with pytest.raises(ValueError, match="subjects scored by all four models; 0 are"):
        compare_gains(*frames[:3], apart)


def test_gain_comparison_is_seeded_and_takes_two_subjects():
    rng = np.random.default_rng(11)
    frames = [_predictions(p_correct=rng.uniform(0.2, 1.0, 40)) for _ in range(4)]
    res = compare_gains(*frames)
    assert res == compare_gains(*frames, seed=0)
    other = compare_gains(*frames, seed=3)
    assert (other["ci_low"], other["p_value"]) != (res["ci_low"], res["p_value"])
    s = [subject_scores(f) for f in frames]
    d = ((s[0] - s[1]) - (s[2] - s[3])).to_numpy()
    assert (other["ci_low"], other["ci_high"]) == bootstrap_ci(d, seed=3)
    assert other["p_value"] == sign_flip_test(d, seed=3)
    two = [f[f["subject"].isin(["S00", "S01"])] for f in frames]
    assert compare_gains(*two)["n_subjects"] == 2
    with pytest.raises(ValueError, match="1 are"):
        compare_gains(*(f[f["subject"] == "S00"] for f in frames))
