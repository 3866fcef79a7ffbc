"""medspt against a baseline, in one paired answer: which to prefer on this data, and
how sure that is.

The medspt side is chosen by validation subjects only
(:func:`medspt.evaluation.choice.chosen_rows`);
the baseline ran on the same folds. The comparison is paired over subjects (seeds
averaged within each subject first; bootstrap interval and sign-flip test,
:mod:`medspt.evaluation.statistics`), over folds where no out-of-fold predictions exist.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from medspt.api import evaluate
from medspt.core.errors import InputError
from medspt.evaluation.choice import baseline_configs, display_name, versus_frame
from medspt.evaluation.comparisons import compare as compare_pair
from medspt.evaluation.results import Results, config_rows

__all__ = ["compare", "versus_baseline", "versus_markdown"]


def compare(
    data,
    y=None,
    groups=None,
    *,
    baseline: str = "minirocket",
    cv=5,
    seeds=(0,),
    metric: str = "balanced_accuracy",
    verbose: bool = True,
    **kwargs,
) -> Results:
    """Is a self-pretrained Transformer worth it on this data? The default SPT model and
    ``baseline`` on the same subject-wise folds, with the paired answer.

    Takes what :func:`medspt.evaluate` takes (a long DataFrame, windows or arrays; data
    options such as ``window``; model settings); it fits only the default SPT model
    (no scratch models) and the baseline, every seed on every fold.

    Returns
    -------
    Results
        The rows and out-of-fold predictions of both, as :func:`medspt.evaluate` returns
        them, with ``.versus``: :func:`versus_baseline`'s answer, whose ``sentence`` is
        printed unless ``verbose=False``.

    Examples
    --------
    >>> res = medspt.compare(df)          # doctest: +SKIP
    >>> res.versus["prefer"]              # "medspt", "baseline" or "either"
    """
    for name in ("scratch", "baselines", "refit"):
        if name in kwargs:
            raise InputError(
                f"compare() sets {name}= itself (the default SPT model against one "
                "baseline); use medspt.evaluate for other grids"
            )
    results = evaluate(
        data, y, groups, cv=cv, seeds=seeds, scratch=False, baselines=(baseline,),
        verbose=verbose, **kwargs,
    )  # fmt: skip
    results.versus = versus_baseline(results, baseline, metric)
    if verbose:
        print(results.versus["sentence"])
    return results


def versus_baseline(
    results: pd.DataFrame, baseline: str | None = None, metric: str = "balanced_accuracy"
) -> dict:
    """The medspt configuration a user would get (chosen by validation subjects) against
    ``baseline`` (default: the first baseline in ``results``), paired on identical folds.

    Returns
    -------
    dict
        ``medspt`` (the chosen side's name) and ``chosen`` (how, in words), ``baseline``,
        ``metric``, ``mean`` / ``baseline_mean`` (pooled over the out-of-fold predictions,
        seeds averaged, when the test runs over subjects; else over fold × seed rows), ``diff`` with
        its 95 % interval ``ci_low`` / ``ci_high`` and ``p`` (over ``n`` subjects, or
        folds: ``unit``), ``fit_s`` / ``baseline_fit_s`` (mean seconds per fit),
        ``prefer`` (``"medspt"``, ``"baseline"`` or ``"either"``) and ``sentence``.
    """
    present = baseline_configs(results)
    if baseline is None:
        if not present:
            raise InputError("no baseline rows in the results: evaluate with baselines=(...)")
        baseline = present[0]
    elif baseline not in present:
        raise InputError(f"baseline {baseline!r} has no rows in the results; have {present}")
    frame, key, why = versus_frame(results)
    c = compare_pair(frame, key, (baseline, np.nan), metric)
    subjects = c["n_subjects"] > 0
    pick = "subject" if subjects else "fold"
    out = {
        "medspt": key[0] if pd.isna(key[1]) else f"{key[0]} at depth {int(key[1])}",
        "chosen": why,
        "baseline": baseline,
        "metric": metric,
        # the pooled out-of-fold metric when the test runs over subjects (what the
        # difference is of), else the mean over fold x seed rows
        "mean": c["pooled"] if subjects else c["mean"],
        "baseline_mean": c["versus_pooled"] if subjects else c["versus_mean"],
        "diff": c[f"{pick}_diff"],
        "ci_low": c[f"{pick}_ci_low"],
        "ci_high": c[f"{pick}_ci_high"],
        "p": c[f"{pick}_p"],
        "n": int(c["n_subjects"] if subjects else c["n_folds"]),
        "unit": "subjects" if subjects else "folds",
        "fit_s": _fit_seconds(frame, key),
        "baseline_fit_s": _fit_seconds(frame, (baseline, np.nan)),
    }
    out["prefer"] = _prefer(out["ci_low"], out["ci_high"])
    out["sentence"] = _sentence(out)
    return out


def _fit_seconds(results: pd.DataFrame, key: tuple[str, float]) -> float:
    rows = config_rows(results, *key)
    return float(rows["wall_time_s"].mean()) if "wall_time_s" in rows and len(rows) else np.nan


def _prefer(low: float, high: float) -> str:
    """Only an interval that excludes zero names a winner."""
    if np.isfinite(low) and low > 0:
        return "medspt"
    if np.isfinite(high) and high < 0:
        return "baseline"
    return "either"


def _sentence(v: dict) -> str:
    base = display_name(v["baseline"])
    who = f"medspt ({v['medspt']}, {v['chosen']})"
    nice = v["metric"].replace("_", " ")
    numbers = (
        f"{v['mean']:.3f} against {v['baseline_mean']:.3f} {nice}, a difference of "
        f"{v['diff']:+.3f} (95 % CI {v['ci_low']:+.3f} to {v['ci_high']:+.3f}, "
        f"p = {v['p']:.3g}, {v['n']} {v['unit']} paired)"
    )
    cost = f"{base} fits in {v['baseline_fit_s']:.1f} s, medspt in {v['fit_s']:.1f} s"
    if not np.isfinite(v["diff"]):
        return f"No paired comparison of medspt with {base} was possible on these results."
    if v["prefer"] == "medspt":
        return f"Prefer medspt on this data: {who} scores {numbers}; the interval lies above zero."
    if v["prefer"] == "baseline":
        return (
            f"Prefer {base} on this data: {who} scores {numbers}; the interval lies below "
            f"zero ({cost})."
        )
    return (
        f"No clear winner on this data, so prefer the cheaper {base} ({cost}): {who} "
        f"scores {numbers}; the interval includes zero."
    )


def versus_markdown(results: pd.DataFrame, metric: str = "balanced_accuracy") -> str:
    """A section per baseline in ``results``: the one-sentence answer and its numbers
    (empty without baselines)."""
    lines = []
    for name in baseline_configs(results):
        v = versus_baseline(results, name, metric)
        lines += [
            f"## medspt or {display_name(name)}?",
            "",
            v["sentence"],
            "",
            "Both ran on identical subject-wise folds with the same seeds; seeds are "
            "averaged within each subject before the paired test, and medspt's side was "
            "chosen without looking at the test folds.",
            "",
        ]
    return "\n".join(lines)
