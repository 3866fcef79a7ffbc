"""Paired comparisons of configurations on identical folds, and the summary table.

Seeds of one fold share its subjects, so they are averaged before any test; with
out-of-fold predictions the tests run over subjects (:mod:`medspt.evaluation.statistics`), otherwise
over folds. :func:`summarize` is the table of every configuration and depth with its
gain over scratch; :func:`comparison_table` the declared comparisons with Holm's
correction.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from medspt.baselines import BASELINES
from medspt.core.errors import InputError
from medspt.evaluation.choice import baseline_configs, versus_frame
from medspt.evaluation.markdown_tables import (
    ALPHA,
    claimed_direction,
    format_p,
    format_signed,
    interval_side,
    interval_words,
)
from medspt.evaluation.results import chance_of, config_predictions, config_rows
from medspt.evaluation.statistics import SUBJECT_METRICS, compare_folds, compare_subjects, holm

__all__ = [
    "COMPARISON_COLUMNS",
    "LABEL_ONLY",
    "compare",
    "comparison_table",
    "primary_estimates",
    "spt_answer",
    "spt_comparisons",
    "summarize",
]

# The label-only controls SPT must beat: the better of the two at each depth. scratch has
# SPT's fine-tuning budget, scratch-long its whole budget; either can score higher (early
# stopping, few validation subjects), and beating only the weaker one proves little.
LABEL_ONLY = ("scratch-long", "scratch")  # on a tie of their means, the compute-matched one


COMPARISON_COLUMNS = (
    "config", "depth", "versus", "mean", "versus_mean",
    "fold_diff", "fold_ci_low", "fold_ci_high", "fold_p", "n_folds",
    "pooled", "versus_pooled", "subject_diff", "subject_ci_low", "subject_ci_high",
    "subject_p", "n_subjects",
)  # fmt: skip


def compare(
    results: pd.DataFrame,
    a: tuple[str, float],
    b: tuple[str, float],
    metric: str = "balanced_accuracy",
    seed: int = 0,
) -> dict:
    """Paired comparison of configuration ``a = (config, depth)`` with ``b`` on identical
    folds.

    Fold level: seeds averaged within each fold, exact sign-flip test and t interval over
    folds. Subject level (when ``results.predictions`` holds both): each subject's share
    of the pooled out-of-fold metric, seeds averaged within the subject, sign-flip
    permutation test and 95 % bootstrap interval over subjects
    (:func:`medspt.evaluation.statistics.compare_subjects`).
    """
    ra, rb = config_rows(results, *a), config_rows(results, *b)
    fold = compare_folds(ra, rb, metric) if len(ra) and len(rb) else {}
    out = {
        "config": a[0],
        "depth": a[1],
        "versus": b[0],
        "mean": float(ra[metric].mean()) if len(ra) else np.nan,
        "versus_mean": float(rb[metric].mean()) if len(rb) else np.nan,
        "fold_diff": fold.get("diff", np.nan),
        "fold_ci_low": fold.get("ci_low", np.nan),
        "fold_ci_high": fold.get("ci_high", np.nan),
        "fold_p": fold.get("p_value", np.nan),
        "n_folds": fold.get("n_folds", 0),
        "pooled": np.nan,
        "versus_pooled": np.nan,
        "subject_diff": np.nan,
        "subject_ci_low": np.nan,
        "subject_ci_high": np.nan,
        "subject_p": np.nan,
        "n_subjects": 0,
    }
    pa, pb = config_predictions(results, *a), config_predictions(results, *b)
    if pa is not None and pb is not None and metric in SUBJECT_METRICS:
        try:
            subj = compare_subjects(pa, pb, metric, seed=seed)
        except ValueError:  # e.g. subject_accuracy on subjects with several labels
            return out
        out.update(
            pooled=subj["metric_a"],
            versus_pooled=subj["metric_b"],
            subject_diff=subj["diff"],
            subject_ci_low=subj["ci_low"],
            subject_ci_high=subj["ci_high"],
            subject_p=subj["p_value"],
            n_subjects=subj["n_subjects"],
        )
    return out


def comparison_table(
    results: pd.DataFrame,
    pairs: Sequence[tuple[tuple[str, float], tuple[str, float]]] | None = None,
    metric: str = "balanced_accuracy",
) -> pd.DataFrame:
    """Declared paired comparisons, one row each, with Holm's correction across the table.

    ``pairs`` default: at each depth, every configuration against ``scratch``, and every
    SPT configuration against ``scratch-long`` (the compute-matched control) when present;
    then, for each baseline in the results (:mod:`medspt.baselines`), the medspt
    configuration chosen by validation subjects (``nested-best``,
    :func:`medspt.evaluation.choice.chosen_rows`) against it.
    ``p_holm`` adjusts the subject-level p-values (the fold-level ones where no
    predictions exist) for the number of comparisons in this table;
    ``chance_majority`` / ``chance_uniform`` are the metric's chance levels.
    """
    if metric not in results.columns:
        raise InputError(f"metric {metric!r} not in the results; have {list(results.columns)}")
    if pairs is None:
        pairs = []
        for (d, c), _ in results.groupby(["depth", "config"], sort=False, dropna=False):
            if pd.isna(d):  # baselines and chosen rows: no scratch at their (no) depth
                continue
            # "<variant>: <config>" names (several studies side by side) pair within
            # their variant
            variant, sep, base = c.rpartition(": ")
            scratch, long = f"{variant}{sep}scratch", f"{variant}{sep}scratch-long"
            if base != "scratch" and len(config_rows(results, scratch, d)):
                pairs.append(((c, d), (scratch, d)))
            if base.startswith("spt-") and len(config_rows(results, long, d)):
                pairs.append(((c, d), (long, d)))
        baselines = baseline_configs(results)
        if baselines and len(results[~results["config"].isin(baselines)]):
            results, key, _ = versus_frame(results)
            pairs += [(key, (b, np.nan)) for b in baselines]
    rows = [compare(results, a, b, metric) for a, b in pairs]
    table = pd.DataFrame(rows, columns=COMPARISON_COLUMNS)
    primary = table["subject_p"].where(table["n_subjects"] > 0, table["fold_p"])
    table["test"] = np.where(table["n_subjects"] > 0, "subjects", "folds")
    table["p_holm"] = holm(primary.to_numpy(dtype=float))
    chance = chance_of(results, metric)
    table["chance_majority"], table["chance_uniform"] = chance["majority"], chance["uniform"]
    return table


def summarize(results: pd.DataFrame, metric: str = "balanced_accuracy") -> pd.DataFrame:
    """Mean ± std of ``metric`` per configuration and depth (rows) over folds × seeds,
    with the gain of each configuration over scratch at the same depth and a paired test.

    Seeds of one fold share its subjects, so they are averaged before any test.
    ``gain_vs_scratch`` is the mean over folds of the seed-averaged paired differences.
    With out-of-fold predictions (``evaluate``'s :class:`~medspt.evaluation.results.Results`, a
    study's
    ``results_frame``) the test runs over subjects: ``subject_gain`` is the difference of
    the pooled out-of-fold metric, with its 95 % bootstrap interval
    (``ci_low``, ``ci_high``) and sign-flip permutation ``p_value`` over ``n_pairs``
    subjects; without them over folds (``n_pairs`` folds; 5 folds cannot give p below
    0.0625). ``p_holm`` is Holm-adjusted across the rows of this table; ``test`` says
    which unit was used. ``steps`` is the mean number of optimizer steps per fit.
    ``baseline`` marks the rows of baselines (:mod:`medspt.baselines`), which have no
    depth; with baselines, the ``nested-best`` row (chosen per fold by validation
    subjects, :func:`medspt.evaluation.choice.chosen_rows`) is the medspt side they face.
    ``chance_majority`` / ``chance_uniform``: what the metric scores by always predicting
    the most frequent class / by guessing (:meth:`~medspt.evaluation.results.Results.chance`;
    NaN without
    out-of-fold predictions). ``probe_<name>`` (``probe_position``,
    ``probe_channel_means``, ``probe_window_levels``), when the results carry confound
    probes (``results.probes``, :func:`medspt.evaluate`): what a model that sees only that
    shortcut scores on the same folds, as the mean over folds like ``mean``; the same for
    every row.
    """
    if metric not in results.columns:
        raise InputError(f"metric {metric!r} not in the results; have {list(results.columns)}")
    probes = getattr(results, "probes", None)  # versus_frame below returns a new frame
    if baseline_configs(results) and len(results[~results["config"].isin(list(BASELINES))]):
        results, _, _ = versus_frame(results)  # the side a baseline faces gets its own row
    g = results.groupby(["depth", "config"], sort=False, dropna=False)[metric]
    out = g.agg(["mean", "std", "count"]).reset_index()
    out = out.sort_values(["depth"], kind="stable").reset_index(drop=True)
    if "optimizer_steps" in results.columns:
        steps = results.groupby(["depth", "config"], sort=False, dropna=False)["optimizer_steps"]
        means = steps.mean()
        out["steps"] = [means.get((d, c), np.nan) for d, c in zip(out["depth"], out["config"])]
    compared = [
        c != "scratch" and len(config_rows(results, "scratch", d)) > 0
        for d, c in zip(out["depth"], out["config"])
    ]
    pairs = [
        ((c, d), ("scratch", d))
        for (d, c), keep in zip(zip(out["depth"], out["config"]), compared)
        if keep
    ]
    for col in ("gain_vs_scratch", "subject_gain", "ci_low", "ci_high", "p_value", "p_holm"):
        out[col] = np.nan
    out["n_pairs"], out["test"] = 0, ""
    if pairs:  # one comparison per row that has a scratch row at its depth, in row order
        comp = comparison_table(results, pairs, metric)
        subjects = (comp["n_subjects"] > 0).to_numpy()
        at = out.index[compared]
        out.loc[at, "gain_vs_scratch"] = comp["fold_diff"].to_numpy()
        out.loc[at, "subject_gain"] = comp["subject_diff"].to_numpy()
        for col, subj, fold in (
            ("ci_low", "subject_ci_low", "fold_ci_low"),
            ("ci_high", "subject_ci_high", "fold_ci_high"),
            ("p_value", "subject_p", "fold_p"),
            ("n_pairs", "n_subjects", "n_folds"),
        ):
            out.loc[at, col] = np.where(subjects, comp[subj], comp[fold])
        out.loc[at, "p_holm"] = comp["p_holm"].to_numpy()
        out.loc[at, "test"] = comp["test"].to_numpy()
        out["n_pairs"] = out["n_pairs"].astype(int)
    out["baseline"] = out["config"].isin(list(BASELINES))  # drawn across depths in plots
    # what the metric scores without the signals, the same for every row
    chance = chance_of(results, metric)
    out["chance_majority"], out["chance_uniform"] = chance["majority"], chance["uniform"]
    for name, score in probe_scores(probes, metric).items():  # what a shortcut scores
        out[name] = score
    # attention-proximity diagnostics of the models (studies record them per fold)
    for col in ("attention_distance", "locality_ratio"):
        if col in results.columns:
            means = results.groupby(["depth", "config"], sort=False, dropna=False)[col].mean()
            out[col] = [means.get((d, c), np.nan) for d, c in zip(out["depth"], out["config"])]
    return out


def probe_scores(probes: pd.DataFrame | None, metric: str) -> dict[str, float]:
    """``{"probe_<name>": score}`` of the probes that ran: each probe's mean over folds of
    ``metric`` (the definition of the summary's ``mean``), NaN where the probe table has
    no such column; empty without probes."""
    if probes is None or not len(probes):
        return {}
    column = f"{metric}_fold_mean"
    ran = probes[probes["not_run"].fillna("") == ""] if "not_run" in probes else probes
    return {
        "probe_" + str(r["probe"]).replace("-", "_"): float(r.get(column, np.nan))
        for _, r in ran.iterrows()
    }


def primary_estimates(table: pd.DataFrame) -> pd.DataFrame:
    """A :func:`comparison_table` with each row's tested difference and 95 % interval as
    ``diff``, ``low`` and ``high``: over subjects where predictions exist, else over folds."""
    by_subjects = table["n_subjects"] > 0
    return table.assign(
        diff=table["subject_diff"].where(by_subjects, table["fold_diff"]),
        low=table["subject_ci_low"].where(by_subjects, table["fold_ci_low"]),
        high=table["subject_ci_high"].where(by_subjects, table["fold_ci_high"]),
    )


def _variant(config: str) -> tuple[str, str]:
    """``("<variant>: ", "spt-span")`` of ``"<variant>: spt-span"``; ``("", name)`` else."""
    variant, sep, base = str(config).rpartition(": ")
    return variant + sep, base


def spt_comparisons(
    results: pd.DataFrame,
    metric: str = "balanced_accuracy",
    table: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Every SPT configuration against the better label-only control at its depth: the
    one set of rows that :func:`spt_answer`'s sentence, the gain figure
    (:func:`medspt.evaluation.plots.figure_gain_vs_depth`) and the comparisons table share.

    The better control at a depth is, of ``scratch`` and ``scratch-long`` (those that ran
    there), the one with the higher ``mean`` of ``metric`` over folds × seeds, the number
    the summary table shows (on a tie, ``scratch-long``, the compute-matched one).

    Parameters
    ----------
    results : DataFrame
        :func:`medspt.evaluate`'s results or a study's ``results_frame``.
    metric : str
        The metric compared.
    table : DataFrame, optional
        The declared comparisons (:func:`comparison_table` of ``results`` with its default
        pairs), when already computed; the rows are taken from it, so their p-values are
        Holm-corrected over its whole family.

    Returns
    -------
    DataFrame
        One row per SPT configuration and depth with a control beside it: the
        :func:`comparison_table` row (``config``, ``depth``, ``versus`` = the control,
        means, both tests, ``p_holm``) with ``diff``, ``low``, ``high`` (the tested
        difference and its 95 % interval, :func:`primary_estimates`), ``direction`` (+1
        gain, -1 loss, 0 nothing claimed:
        :func:`medspt.evaluation.markdown_tables.claimed_direction`), ``controls`` (the
        label-only controls that ran at that depth) and ``n_family`` (the comparisons
        Holm's correction counted).
    """
    if table is None:
        table = comparison_table(results, metric=metric)
    est = primary_estimates(table)
    parts = [_variant(c) for c in est["config"]]
    against = [_variant(v) for v in est["versus"]]
    keep = [
        base.startswith("spt-") and vbase in LABEL_ONLY and vvar == var
        for (var, base), (vvar, vbase) in zip(parts, against)
    ]
    rows = est[keep].copy()
    columns = [*est.columns, "direction", "controls", "n_family"]
    if rows.empty:
        return pd.DataFrame(columns=columns)
    rows["_rank"] = [LABEL_ONLY[::-1].index(_variant(v)[1]) for v in rows["versus"]]
    chosen = []
    for _, g in rows.groupby(["config", "depth"], sort=False, dropna=False):
        # the highest table mean wins; scratch-long (the higher rank) on a tie
        best = g.sort_values(["versus_mean", "_rank"], ascending=False, kind="stable")
        chosen.append({**best.iloc[0].to_dict(), "controls": ", ".join(g["versus"])})
    out = pd.DataFrame(chosen).drop(columns="_rank").reset_index(drop=True)
    out["direction"] = [
        claimed_direction(lo, hi, p) for lo, hi, p in zip(out["low"], out["high"], out["p_holm"])
    ]
    out["n_family"] = len(table)
    return out[columns]


def spt_answer(
    results: pd.DataFrame, metric: str = "balanced_accuracy", table: pd.DataFrame | None = None
) -> str:
    """The answer to "did self-pretraining help?" in one paragraph a clinician can read:
    every SPT configuration against the better label-only control at the same depth
    (:func:`spt_comparisons`: of scratch and the compute-matched scratch-long, the one with
    the higher mean score there, named), where SPT helped, by how much, how sure that is
    and what it cost in fitting time. Empty when the results hold no SPT configuration
    with a control beside it.

    "Helped" means the 95 % interval of the paired difference, as printed, lies above 0
    and the Holm-corrected p-value is below 0.05
    (:func:`medspt.evaluation.markdown_tables.claimed_direction`); Holm's family is the
    declared comparisons of :func:`comparison_table` (``table``, computed when not given).
    The differences are over subjects (seeds averaged) where out-of-fold predictions
    exist, else over folds.
    """
    rows = spt_comparisons(results, metric, table)
    if rows.empty:
        return ""
    what = metric.replace("_", " ")
    by_subjects = rows["n_subjects"] > 0
    unit = f"{int(rows['n_subjects'].max())} subjects" if by_subjects.all() else "folds"
    n, family = len(rows), int(rows["n_family"].iloc[0])
    count = f"{n} comparison{'s' if n != 1 else ''}"
    holm = "Holm-corrected" if family == n else (
        f"Holm-corrected over all {family} comparisons of the comparisons table")  # fmt: skip
    text = [f"**Did self-pretraining help?** SPT was compared with {_control_words(rows, what)}"
            f", paired over {unit} ({count}, {holm})"]  # fmt: skip
    named = rows["versus"].nunique() > 1 or rows["controls"].str.contains(",").any()
    listed = lambda part: "; ".join(_answer_row(r, what, named) for _, r in part.iterrows())  # noqa: E731
    helped, hurt = rows[rows["direction"] > 0], rows[rows["direction"] < 0]
    if len(helped):
        text.append("It helped " + listed(helped))
        if len(hurt):
            text.append("It was worse " + listed(hurt))
    elif len(hurt):
        text.append("It did not help at any depth, and it was worse " + listed(hurt))
    elif rows["diff"].isna().all():
        text.append("No difference could be computed at any depth")
    else:
        best = rows.loc[rows["diff"].idxmax()]
        text.append(
            "It did not demonstrably help at any depth: the largest difference was "
            + _answer_row(best, what, named)
            + f"; {_why_not(best)}"
        )
    text.append(_answer_cost(results, rows))
    return ". ".join(t for t in text if t) + ".\n"


def _control_words(rows: pd.DataFrame, what: str) -> str:
    """Which control SPT faced, in words: one kind everywhere, or the better of two,
    named per depth."""
    kinds = {_variant(c)[1] for cs in rows["controls"] for c in cs.split(", ")}
    if kinds == {"scratch-long"}:
        return "the compute-matched label-only control (scratch-long) at each depth"
    if kinds == {"scratch"}:
        return "training from scratch on the labels at each depth"
    per_control = {}
    for control, g in rows.groupby("versus", sort=False):
        depths = sorted({float(d) for d in g["depth"]})
        per_control[control] = " and ".join(f"{d:g}" for d in depths)
    where = "; ".join(
        f"{c} at depth{'s' if ' and ' in d else ''} {d}" for c, d in per_control.items()
    )
    return (
        "the better of scratch and the compute-matched scratch-long (the label-only "
        f"control with the higher mean {what} over folds × seeds: {where}) at each depth"
    )


def _answer_row(row: pd.Series, what: str, named: bool = False) -> str:
    """``at depth 2 with span masking: +0.031 balanced accuracy (95 % CI +0.004 to
    +0.058, Holm p 0.041)``; ``named``: with ``against <control>`` after the masking."""
    masking = _variant(row["config"])[1].removeprefix("spt-")
    against = f" against {row['versus']}" if named else ""
    return (
        f"at depth {row['depth']:g} with {masking} masking{against}: "
        f"{format_signed(row['diff'])} {what} (95 % CI {format_signed(row['low'])} to "
        f"{format_signed(row['high'])}, Holm p {format_p(row['p_holm'])})"
    )


def _why_not(row: pd.Series) -> str:
    """Why a difference is not called a gain or a loss, from its printed numbers."""
    words = interval_words(row["low"], row["high"])
    if pd.notna(row["p_holm"]) and row["p_holm"] >= ALPHA:
        joint = "but" if interval_side(row["low"], row["high"]) in ("above", "below") else "and"
        return f"{words}, {joint} Holm p is not below {ALPHA:g}"
    return words


def fit_times(results: pd.DataFrame, control: str) -> tuple[float, float] | None:
    """Mean fitting time in seconds of the SPT rows and of the ``control`` rows, from the
    rows' ``wall_time_s``, over the cells both have (same depth, labelled share, seed and
    fold where those columns exist: a partial grid must not set SPT's shallow cells against
    the control's deep ones); None when either is missing."""
    if "wall_time_s" not in results.columns:
        return None
    results = results.reset_index(drop=True)  # the cell keys below align on the index
    keys = [k for k in ("depth", "fraction", "seed", "fold") if k in results.columns]
    cell = results[keys].apply(tuple, axis=1) if keys else pd.Series(0, index=results.index)
    is_spt = results["config"].astype(str).str.startswith("spt-")
    # SPT's maskings of one cell averaged first, then paired with the control's cell
    spt = results.loc[is_spt, "wall_time_s"].groupby(cell).mean()
    base = results.loc[results["config"] == control, "wall_time_s"].groupby(cell).mean()
    shared = spt.index.intersection(base.index)
    spt_s, base_s = spt.loc[shared].mean(), base.loc[shared].mean()
    if not (np.isfinite(spt_s) and np.isfinite(base_s) and base_s > 0):
        return None
    return float(spt_s), float(base_s)


def _answer_cost(results: pd.DataFrame, rows: pd.DataFrame) -> str:
    """What SPT cost in fitting time against the control it faced, from the rows' wall
    times; with a control that changes with depth, against each at its own depths."""
    parts = []
    several = rows["versus"].nunique() > 1
    for control, g in rows.groupby("versus", sort=False):
        depths = sorted(set(g["depth"]))
        times = fit_times(results[results["depth"].isin(depths)], control)
        if times is None:
            continue
        spt, base = times
        where = f" at depth {', '.join(f'{d:g}' for d in depths)}" if several else ""
        parts.append(f"{spt:.0f} s on average against {base:.0f} s for {control}{where} "
                     f"({spt / base:.1f}×)")  # fmt: skip
    return "A fit with SPT took " + "; ".join(parts) if parts else ""
