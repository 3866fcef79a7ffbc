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
from medspt.core.warn import once_per_call
from medspt.evaluation.choice import baseline_configs, display_name, versus_frame
from medspt.evaluation.comparisons import comparison_table
from medspt.evaluation.markdown_tables import (
    ALPHA,
    claimed_direction,
    format_p,
    format_signed,
    interval_side,
    interval_words,
)
from medspt.evaluation.results import Results, config_rows

__all__ = ["compare", "preference", "versus_baseline", "versus_markdown"]


@once_per_call
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
    results: pd.DataFrame,
    baseline: str | None = None,
    metric: str = "balanced_accuracy",
    table: pd.DataFrame | None = None,
) -> dict:
    """The medspt configuration a user would get (chosen by validation subjects) against
    ``baseline`` (default: the first baseline in ``results``), paired on identical folds.

    The numbers are the row of the declared comparisons (:func:`comparison_table` of
    ``results``, or ``table`` when already computed) that sets medspt's side against
    ``baseline``, so the sentence, the comparisons table and the summary table agree.

    Returns
    -------
    dict
        ``medspt`` (the chosen side's name) and ``chosen`` (how, in words), ``baseline``,
        ``metric``; ``mean`` / ``baseline_mean``: the mean of ``metric`` over fold × seed
        rows, the summary table's ``mean``; ``pooled`` / ``baseline_pooled``: the metric
        of the pooled out-of-fold predictions, seeds averaged (NaN when the test runs over
        folds); ``diff``: the tested difference (of the pooled metrics over subjects, else
        the mean over folds of seed-averaged differences) with its 95 % interval
        ``ci_low`` / ``ci_high``, ``p`` (over ``n`` subjects, or folds: ``unit``) and
        ``p_holm`` (Holm over the ``n_comparisons`` comparisons of the table); ``fit_s`` /
        ``baseline_fit_s`` (mean seconds per fit); ``prefer`` (``"medspt"``,
        ``"baseline"`` or ``"either"``, :func:`preference`) and ``sentence``, written from
        ``prefer`` (:func:`_sentence`).
    """
    present = baseline_configs(results)
    if baseline is None:
        if not present:
            raise InputError("no baseline rows in the results: evaluate with baselines=(...)")
        baseline = present[0]
    elif baseline not in present:
        raise InputError(f"baseline {baseline!r} has no rows in the results; have {present}")
    frame, key, why = versus_frame(results)
    if table is None:
        table = comparison_table(results, metric=metric)
    c = _versus_row(table, key, baseline)
    subjects = c["n_subjects"] > 0
    pick = "subject" if subjects else "fold"
    out = {
        "medspt": key[0] if pd.isna(key[1]) else f"{key[0]} at depth {int(key[1])}",
        "chosen": why,
        "baseline": baseline,
        "metric": metric,
        # the summary table's numbers (mean over fold x seed rows), so that a reader
        # finds the sentence's scores in the table
        "mean": float(c["mean"]),
        "baseline_mean": float(c["versus_mean"]),
        "pooled": float(c["pooled"]),
        "baseline_pooled": float(c["versus_pooled"]),
        "diff": float(c[f"{pick}_diff"]),
        "ci_low": float(c[f"{pick}_ci_low"]),
        "ci_high": float(c[f"{pick}_ci_high"]),
        "p": float(c[f"{pick}_p"]),
        "p_holm": float(c["p_holm"]),
        "n_comparisons": len(table),
        "n": int(c["n_subjects"] if subjects else c["n_folds"]),
        "unit": "subjects" if subjects else "folds",
        "fit_s": _fit_seconds(frame, key),
        "baseline_fit_s": _fit_seconds(frame, (baseline, np.nan)),
    }
    out["prefer"] = preference(out["ci_low"], out["ci_high"], out["p_holm"])
    out["sentence"] = _sentence(out)
    return out


def _versus_row(table: pd.DataFrame, key: tuple[str, float], baseline: str) -> pd.Series:
    """The comparison table's row of medspt's side ``key`` against ``baseline``."""
    same = (table["config"] == key[0]) & (table["versus"] == baseline)
    same &= table["depth"].isna() if pd.isna(key[1]) else table["depth"] == key[1]
    if not same.any():
        raise InputError(
            f"the comparison table has no row of {key[0]!r} against {baseline!r}: pass "
            "table=comparison_table(results) with its default pairs, or leave table out"
        )
    return table[same].iloc[0]


def _fit_seconds(results: pd.DataFrame, key: tuple[str, float]) -> float:
    rows = config_rows(results, *key)
    return float(rows["wall_time_s"].mean()) if "wall_time_s" in rows and len(rows) else np.nan


def preference(low: float, high: float, p: float) -> str:
    """Which to prefer: ``"medspt"`` or ``"baseline"`` only when the difference has a
    claimed direction (its printed interval on one side of zero and the corrected
    ``p`` below 0.05, :func:`medspt.evaluation.markdown_tables.claimed_direction`),
    else ``"either"``."""
    return {1: "medspt", -1: "baseline", 0: "either"}[claimed_direction(low, high, p)]


def _sentence(v: dict) -> str:
    """The one-sentence answer, opened by the verdict of ``v["prefer"]`` and nothing else:
    "Prefer medspt", "Prefer <baseline>" or "No clear winner" (which never says prefer)."""
    base = display_name(v["baseline"])
    if not np.isfinite(v["diff"]):
        return f"No paired comparison of medspt with {base} was possible on these results."
    verdict = {
        "medspt": "Prefer medspt on this data",
        "baseline": f"Prefer {base} on this data",
        "either": "No clear winner on this data",
    }[v["prefer"]]
    return f"{verdict}: {_numbers(v)}; {_evidence(v)}. {_cost(v)}".rstrip(" .") + "."


def _numbers(v: dict) -> str:
    """The scores as the summary table shows them, then the tested difference."""
    base, nice = display_name(v["baseline"]), v["metric"].replace("_", " ")
    what = (
        "the difference of their pooled out-of-fold scores"
        if v["unit"] == "subjects"
        else "the mean over folds of their seed-averaged differences"
    )
    p = f"Holm p {format_p(v['p_holm'])}" if v["n_comparisons"] > 1 else f"p {format_p(v['p'])}"
    return (
        f"medspt ({v['medspt']}, {v['chosen']}) scores {v['mean']:.3f} against "
        f"{v['baseline_mean']:.3f} for {base} ({nice}, mean over folds × seeds, as in the "
        f"summary table); paired over {v['n']} {v['unit']}, {what} is "
        f"{format_signed(v['diff'])} (95 % CI {format_signed(v['ci_low'])} to "
        f"{format_signed(v['ci_high'])}, {p})"
    )


def _evidence(v: dict) -> str:
    """Why the verdict follows: the interval as printed and, without a direction, the
    p-value that withholds it."""
    words = interval_words(v["ci_low"], v["ci_high"])
    if v["prefer"] != "either" or not np.isfinite(v["p_holm"]) or v["p_holm"] < ALPHA:
        return words
    p = "Holm p" if v["n_comparisons"] > 1 else "p"
    joint = "but" if interval_side(v["ci_low"], v["ci_high"]) in ("above", "below") else "and"
    return f"{words}, {joint} {p} is not below {ALPHA:g}"


def _cost(v: dict) -> str:
    """Fitting time of both, naming the cheaper one only when the numbers say so."""
    base = display_name(v["baseline"])
    mine, theirs = v["fit_s"], v["baseline_fit_s"]
    if not (np.isfinite(mine) and np.isfinite(theirs)):
        return ""
    times = f"{base} fits in {theirs:.1f} s, medspt in {mine:.1f} s"
    if f"{mine:.1f}" == f"{theirs:.1f}":  # equal as printed: neither is cheaper
        return times
    cheaper = base if theirs < mine else "medspt"
    return f"{times}: {cheaper} is the cheaper to fit"


def versus_markdown(
    results: pd.DataFrame, metric: str = "balanced_accuracy", table: pd.DataFrame | None = None
) -> str:
    """A section per baseline in ``results``: the one-sentence answer and its numbers
    (empty without baselines); ``table``: the declared comparisons, when already
    computed (:func:`comparison_table`)."""
    names = baseline_configs(results)
    if names and table is None:
        table = comparison_table(results, metric=metric)  # once for every baseline
    lines = []
    for name in names:
        v = versus_baseline(results, name, metric, table)
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
