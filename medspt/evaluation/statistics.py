"""Paired comparisons with the subject as the unit.

Models compared on the same subject-wise folds make *paired* predictions: every test
subject is scored by both. Seeds of one fold share its test and validation subjects, so
they are not independent samples: every statistic here first averages seeds within a
subject (or within a fold), then tests over subjects (or folds).

The subject-level statistics rest on one identity: window accuracy and balanced accuracy
of the pooled out-of-fold predictions are *sums of per-subject contributions*
(:func:`subject_scores`), so the difference between two models is the sum of per-subject
differences. A sign-flip permutation test of that sum and a subject bootstrap of it give
the p-value and the 95 % confidence interval of the difference in the metric itself.

Predictions frames (out-of-fold, one row per test window and fit) have the columns
``config, depth, seed, fold, window, subject, y, pred`` and one ``proba_<class>`` per class
(:func:`medspt.api.evaluate`, :func:`medspt.study.predictions_frame`).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = [
    "SUBJECT_METRICS",
    "subject_scores",
    "sign_flip_test",
    "bootstrap_ci",
    "compare_subjects",
    "compare_gains",
    "compare_folds",
    "holm",
]

SUBJECT_METRICS = ("balanced_accuracy", "accuracy", "subject_accuracy")
EXACT_MAX = 20  # enumerate all 2**n sign flips up to this many units (about 1e6)


def _proba_columns(pred: pd.DataFrame) -> list[str]:
    return [c for c in pred.columns if str(c).startswith("proba_")]


def subject_scores(
    predictions: pd.DataFrame,
    metric: str = "balanced_accuracy",
    pooled_over: pd.DataFrame | None = None,
) -> pd.Series:
    """Each subject's additive share of the pooled out-of-fold ``metric`` of one fit.

    Parameters
    ----------
    predictions : DataFrame
        Window-level out-of-fold predictions of ONE model fitted with ONE seed (all folds):
        columns ``subject``, ``y`` (true class code), ``pred`` (predicted code) and, for
        ``subject_accuracy``, the ``proba_<class>`` columns.
    metric : {"balanced_accuracy", "accuracy", "subject_accuracy"}
        ``accuracy``: the subject's correct windows / all windows. ``balanced_accuracy``:
        its correct windows of class c / (K · windows of class c), summed over classes,
        with K the number of classes present. ``subject_accuracy`` (one label per subject):
        1 / n_subjects when the class with the highest mean probability is the subject's
        label, else 0.
    pooled_over : DataFrame, optional
        The windows the pooled metric is taken over (one copy of each subject's windows),
        when ``predictions`` covers only some of them; default: ``predictions`` itself.

    Returns
    -------
    Series indexed by subject; its sum is the pooled metric.
    """
    if metric not in SUBJECT_METRICS:
        raise ValueError(f"metric must be one of {SUBJECT_METRICS}, got {metric!r}")
    pool = predictions if pooled_over is None else pooled_over
    y = predictions["label_code"].to_numpy()
    correct = (predictions["predicted_code"].to_numpy() == y).astype(float)
    subj = predictions["subject"].astype(str).to_numpy()
    if metric == "accuracy":
        w = np.full(len(y), 1.0 / len(pool))
    elif metric == "balanced_accuracy":
        classes, counts = np.unique(pool["label_code"].to_numpy(), return_counts=True)
        per_class = dict(zip(classes.tolist(), counts.tolist()))
        w = np.array([1.0 / (len(classes) * per_class[c]) for c in y.tolist()])
    else:
        cols = _proba_columns(predictions)
        frame = predictions.assign(subject=subj)
        labels = frame.groupby("subject")["label_code"].agg(["nunique", "first"])
        if (labels["nunique"] > 1).any():
            raise ValueError(
                "subject_accuracy needs one label per subject; these subjects have several: "
                f"{labels.index[labels['nunique'] > 1][:5].tolist()}"
            )
        mean_proba = frame.groupby("subject")[cols].mean()
        hit = mean_proba.to_numpy().argmax(1) == labels.loc[mean_proba.index, "first"].to_numpy()
        n_subjects = pool["subject"].astype(str).nunique()
        return pd.Series(hit / n_subjects, index=mean_proba.index, name=metric)
    return pd.Series(w * correct, index=subj).groupby(level=0).sum().rename(metric)


def sign_flip_test(diff: np.ndarray, n_resamples: int = 20_000, seed: int = 0) -> float:
    """Two-sided paired permutation p-value of ``sum(diff)`` under random sign flips.

    Exact (all ``2**n`` flips) for up to 20 units, else Monte Carlo with ``n_resamples``
    draws and the ``(1 + hits) / (1 + draws)`` correction. All-zero differences give 1.0;
    fewer than 2 units give NaN.
    """
    d = np.asarray(diff, dtype=float)
    d = d[np.isfinite(d)]
    if len(d) < 2:
        return float("nan")
    observed = abs(d.sum())
    if np.allclose(d, 0.0):
        return 1.0
    tol = 1e-12 * max(1.0, np.abs(d).sum())
    if len(d) <= EXACT_MAX:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=len(d))))
        stats = np.abs(signs @ d)
        return float(np.mean(stats >= observed - tol))
    rng = np.random.default_rng(seed)
    hits = 0
    for start in range(0, n_resamples, 5_000):
        m = min(5_000, n_resamples - start)
        signs = rng.choice((-1.0, 1.0), size=(m, len(d)))
        hits += int(np.sum(np.abs(signs @ d) >= observed - tol))
    return float((1 + hits) / (1 + n_resamples))


def bootstrap_ci(
    diff: np.ndarray, n_resamples: int = 10_000, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``sum(diff)`` resampling units with replacement
    (``sum`` = n · mean, so it estimates the pooled-metric difference)."""
    d = np.asarray(diff, dtype=float)
    d = d[np.isfinite(d)]
    if len(d) < 2:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(d), size=(n_resamples, len(d)))
    sums = d[idx].sum(axis=1)
    a = (1 - level) / 2
    return float(np.quantile(sums, a)), float(np.quantile(sums, 1 - a))


def _per_subject(predictions: pd.DataFrame, metric: str) -> pd.Series:
    """Subject contributions averaged over the seeds of one configuration.

    Seeds may cover different folds (a nested choice can win a fold with a configuration
    run with more seeds than the others), so every seed's shares are weighted by the
    windows of all subjects, one copy each, not by that seed's own windows.
    """
    first_seed = predictions.groupby("subject")["seed"].transform("min")
    one_copy = predictions[predictions["seed"] == first_seed]
    per_seed = {
        seed: subject_scores(g, metric, pooled_over=one_copy)
        for seed, g in predictions.groupby("seed", sort=True)
    }
    return pd.DataFrame(per_seed).mean(axis=1)


def _tested(d: np.ndarray, seed: int) -> dict:
    """The summed per-subject differences ``d`` with their interval and p-value."""
    lo, hi = bootstrap_ci(d, seed=seed)
    return {
        "diff": float(d.sum()),
        "ci_low": lo,
        "ci_high": hi,
        "p_value": sign_flip_test(d, seed=seed),
        "n_subjects": len(d),
    }


def compare_subjects(
    a: pd.DataFrame, b: pd.DataFrame, metric: str = "balanced_accuracy", seed: int = 0
) -> dict:
    """Paired comparison of two models' out-of-fold predictions over subjects.

    ``a`` and ``b`` hold the window-level predictions of one configuration each (any
    number of seeds, all folds). Seeds are averaged within each subject first, so adding
    copies of a seed cannot shrink the p-value.

    Returns
    -------
    dict
        ``metric_a``, ``metric_b`` (pooled metric, seeds averaged), ``diff`` (a − b),
        ``ci_low``, ``ci_high`` (95 % subject bootstrap), ``p_value`` (two-sided sign-flip
        permutation over subjects), ``n_subjects`` (subjects scored by both).
    """
    sa, sb = _per_subject(a, metric), _per_subject(b, metric)
    both = sa.index.intersection(sb.index)
    d = (sa[both] - sb[both]).to_numpy()
    return {"metric_a": float(sa.sum()), "metric_b": float(sb.sum()), **_tested(d, seed)}


def compare_gains(
    a: pd.DataFrame,
    b: pd.DataFrame,
    a_ref: pd.DataFrame,
    b_ref: pd.DataFrame,
    metric: str = "balanced_accuracy",
    seed: int = 0,
) -> dict:
    """Is the gain of ``a`` over ``b`` larger than that of ``a_ref`` over ``b_ref``?

    A difference of paired differences over the subjects all four scored, e.g. SPT's gain
    over scratch on whole recordings against its gain on windows of the same subjects. Each
    subject contributes ``(a − b) − (a_ref − b_ref)`` (seeds averaged within the subject
    for each of the four), so the sum is the difference of the two pooled gains; tested
    with the sign-flip test and a subject bootstrap like :func:`compare_subjects`. The
    pooled metrics are taken over the common subjects only, so that both gains weigh the
    same people.

    Returns
    -------
    dict
        ``gain`` (a − b), ``gain_ref`` (a_ref − b_ref), ``diff`` (gain − gain_ref),
        ``ci_low``, ``ci_high`` (95 % subject bootstrap of ``diff``), ``p_value``,
        ``n_subjects``.
    """
    frames = (a, b, a_ref, b_ref)
    common = set.intersection(*(set(f["subject"].astype(str)) for f in frames))
    if len(common) < 2:
        raise ValueError(
            f"compare_gains needs subjects scored by all four models; {len(common)} are"
        )
    sa, sb, ra, rb = (
        _per_subject(f[f["subject"].astype(str).isin(common)], metric) for f in frames
    )
    gain, gain_ref = sa - sb, ra - rb  # Series, aligned on the subject
    d = (gain - gain_ref).to_numpy(dtype=float)
    return {"gain": float(gain.sum()), "gain_ref": float(gain_ref.sum()), **_tested(d, seed)}


def compare_folds(a: pd.DataFrame, b: pd.DataFrame, metric: str = "balanced_accuracy") -> dict:
    """Paired comparison of fold-level scores: seeds averaged within each fold, then a
    sign-flip test (exact) and a t interval of the mean difference over folds.

    ``a`` and ``b`` are result rows (``fold``, ``seed``, ``metric``) of one configuration
    each. With 5 folds the smallest possible two-sided p is 2/32 = 0.0625.
    """
    from scipy import stats

    fa = a.groupby("fold")[metric].mean()
    fb = b.groupby("fold")[metric].mean()
    both = fa.index.intersection(fb.index)
    d = (fa[both] - fb[both]).to_numpy(dtype=float)
    n = len(d)
    if n >= 2 and np.std(d, ddof=1) > 0:
        half = stats.t.ppf(0.975, n - 1) * np.std(d, ddof=1) / np.sqrt(n)
        lo, hi = d.mean() - half, d.mean() + half
    elif n >= 2:
        lo = hi = float(d.mean())
    else:
        lo = hi = float("nan")
    return {
        "diff": float(d.mean()) if n else float("nan"),
        "ci_low": float(lo),
        "ci_high": float(hi),
        "p_value": sign_flip_test(d),
        "n_folds": n,
    }


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm–Bonferroni adjusted p-values (family-wise error), NaN entries left out of the
    family and returned as NaN."""
    p = np.asarray(p_values, dtype=float)
    out = np.full(len(p), np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    m = len(ok)
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out
