"""The accuracy report of ``gpd2.py`` (subject-level scores per configuration, paired
comparisons, GPD-1's windowed models on the same folds, time per fit), where its files
lie, and the time format and run section both of its reports share."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from _common import fmt_num, fmt_series_pm, run_lines
from _gpd2_stats import (
    GPD1_PREFIX,
    fold_scores,
    gain_lines,
    gpd1_pairs,
    gpd1_subjects,
    paired_table,
)

from medspt.estimator.metrics import read_predictions

METRICS = ("balanced_accuracy", "accuracy", "roc_auc")


def paths(args: argparse.Namespace) -> tuple[Path, Path, Path]:
    """Where the accuracy run's rows, out-of-fold predictions and report go.

    Parameters
    ----------
    args : argparse.Namespace
        ``gpd2.py``'s options (``--out-dir``, ``--tag``).

    Returns
    -------
    tuple of Path
        ``gpd2_accuracy[_TAG].csv``, ``..._predictions.csv`` and ``... .md``.
    """
    stem = "gpd2_accuracy" + (f"_{args.tag}" if args.tag else "")
    return (
        args.out_dir / f"{stem}.csv",
        args.out_dir / f"{stem}_predictions.csv",
        args.out_dir / f"{stem}.md",
    )


def seconds(x: float) -> str:
    """A duration for a table: ms below a second, minutes from ten minutes on."""
    if not np.isfinite(x):
        return "–"
    if x >= 600:
        return f"{x / 60:,.0f} min"
    return f"{x:,.1f} s" if x >= 1 else f"{x * 1000:,.0f} ms"


def run_section(args: argparse.Namespace, wall: float) -> list[str]:
    """The ``## Run`` section both reports end with (command, date, machine, versions)."""
    return run_lines("gpd2.py", args.argv, wall, args.threads)


def _summary_table(
    scores: pd.DataFrame, pred: pd.DataFrame, rows: pd.DataFrame | None
) -> list[str]:
    """Mean ± std over folds (seeds averaged within folds first), pooled metric."""
    from sklearn.metrics import balanced_accuracy_score

    lines = [
        "| configuration | folds × seeds | balanced accuracy | accuracy | ROC AUC "
        "| pooled balanced accuracy | time per fit | optimizer steps |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for config, g in scores.groupby("config", sort=False):
        folds = g.groupby("fold")[list(METRICS)].mean()
        pooled = [
            balanced_accuracy_score(s["label_code"], s["predicted_code"])
            for _, s in pred[pred["config"] == config].groupby("seed")
        ]
        fit = steps = "–"
        if rows is not None and config in set(rows["config"]):
            r = rows[rows["config"] == config]
            fit = seconds(r["wall_time_s"].mean())
            if r["optimizer_steps"].notna().any():
                steps = f"{r['optimizer_steps'].mean():,.0f}"
        lines.append(
            f"| {config} | {g['fold'].nunique()} × {g['seed'].nunique()} "
            f"| {fmt_series_pm(folds['balanced_accuracy'])} "
            f"| {fmt_series_pm(folds['accuracy'])} "
            f"| {fmt_series_pm(folds['roc_auc'])} | {np.mean(pooled):.3f} | {fit} | {steps} |"
        )
    return lines


def _fold_table(scores: pd.DataFrame) -> list[str]:
    """Balanced accuracy per fold (seeds averaged), configurations side by side."""
    wide = scores.groupby(["fold", "config"], sort=False)["balanced_accuracy"].mean().unstack()
    configs = list(dict.fromkeys(scores["config"]))
    wide = wide[configs]
    lines = [
        "| fold | " + " | ".join(configs) + " |",
        "|---:|" + "---:|" * len(configs),
    ]
    for fold, r in wide.sort_index().iterrows():
        lines.append(f"| {fold} | " + " | ".join(fmt_num(v, ".3f") for v in r) + " |")
    return lines


def _timing_lines(rows: pd.DataFrame) -> list[str]:
    """Time per fit and the estimate of a 5-fold × 3-seed run, per configuration."""
    lines = []
    for (config, protocol), r in rows.groupby(["config", "protocol"], sort=False):
        t = r["wall_time_s"].mean()
        lines.append(
            f"- {config} ({protocol}): {len(r)} fit(s), {seconds(t)} per fit on average "
            f"(range {seconds(r['wall_time_s'].min())}–{seconds(r['wall_time_s'].max())}); "
            f"5 folds × 3 seeds at this rate ≈ {t * 15 / 3600:.1f} h"
        )
    return lines


def _settings_text(rows: pd.DataFrame) -> str:
    """The fits' shared settings, per configuration when they differ."""
    by = rows.groupby("settings", sort=False)["config"].unique()
    if len(by) == 1:
        return f"`{by.index[0]}`"
    return "; ".join(f"`{k}` ({', '.join(v)})" for k, v in by.items())


def _section(title: str, text: str, table: list[str]) -> list[str]:
    """A report section: heading, explanation, table; nothing when the table is empty."""
    return [title, "", text, "", *table, ""] if table else []


def _overview(
    rows: pd.DataFrame, p2: pd.DataFrame, scores: pd.DataFrame, g1_scores: pd.DataFrame
) -> list[str]:
    """Title, what was fitted, the per-configuration table and the per-fold table."""
    gpd2 = rows["protocol"].str.startswith("GPD-2")
    protocols = ", ".join(sorted(set(rows.loc[gpd2, "protocol"])))
    return [
        "# GPD-2: whole walks, one prediction per subject",
        "",
        f"{protocols}: one case per gaitpdb walk (165 subjects), padded with NaN to the "
        "longest walk; the subjects of GPD-1's five folds, fold by fold. medspt fits "
        "through `medspt.api.fit_fold` with `SPTClassifier`'s defaults except: "
        + _settings_text(rows[gpd2])
        + " (plus each configuration's attention and, for scratch, `pretrain=False`). "
        "Accuracy and balanced accuracy are subject-level (one case per subject).",
        "",
        "## Per configuration",
        "",
        "Mean ± std over folds (seeds averaged within each fold first); pooled = the "
        "metric over all test subjects of the run's folds, mean over seeds.",
        "",
        *_summary_table(scores, p2, rows),
        "",
        "Balanced accuracy per fold (seeds averaged):",
        "",
        *_fold_table(pd.concat([scores, g1_scores], ignore_index=True)),
        "",
    ]


def _comparisons(p2: pd.DataFrame, scores: pd.DataFrame) -> list[str]:
    """SPT against scratch, each model against MiniRocket, full against hierarchical
    attention: paired tests on whole walks."""
    configs = list(dict.fromkeys(p2["config"]))
    present = set(configs)
    pairs = [(c, c.replace("spt-", "scratch-", 1)) for c in configs if c.startswith("spt-")]
    lines = []
    for metric in ("balanced_accuracy", "accuracy"):
        lines += _section(
            f"## SPT against scratch ({metric.replace('_', ' ')})",
            "Paired over subjects: seeds averaged within each subject, sign-flip "
            "permutation test and 95 % bootstrap interval of the pooled difference "
            "(`medspt.evaluation.statistics.compare_subjects`); over folds: seeds averaged "
            "within folds, exact sign-flip test (`compare_folds`; 5 folds cannot give p "
            "below 0.0625).",
            paired_table(pairs, scores, p2, metric),
        )
    # aeon's MiniRocket (medspt.baselines) where it ran, else the stored tsai runs
    mr = "minirocket" if "minirocket" in present else "tsai-minirocket"
    rocket = [(c, mr) for c in configs if c not in ("minirocket", "tsai-minirocket")]
    lines += _section(
        "## Against MiniRocket on the same whole walks (balanced accuracy)",
        "The same tests over the subjects both scored, each model's seeds averaged within "
        "each subject (MiniRocket may have fewer seeds).",
        paired_table(rocket if mr in present else [], scores, p2, "balanced_accuracy"),
    )
    attention = [
        (c, c.replace("-full", "-hierarchical"))
        for c in configs
        if c.endswith("-full") and c.replace("-full", "-hierarchical") in present
    ]
    lines += _section(
        "## Full against hierarchical attention (balanced accuracy)",
        "The same tests, on the subjects and seeds both configurations ran; where the "
        "two ran with different settings (see above) the difference is not the "
        "attention's alone.",
        paired_table(attention, scores, p2, "balanced_accuracy"),
    )
    return lines


def _gpd1_sections(
    p2: pd.DataFrame,
    scores: pd.DataFrame,
    g1: pd.DataFrame,
    g1_scores: pd.DataFrame,
    g1_notes: list[str],
) -> list[str]:
    """GPD-1's windowed models aggregated per subject against the whole-walk models, and
    SPT's gain on whole walks against its gain on windows."""
    pairs = gpd1_pairs(list(dict.fromkeys(p2["config"])), list(dict.fromkeys(g1["config"])))
    both = pd.concat([scores, g1_scores]), pd.concat([p2, g1], ignore_index=True)
    lines = [
        "## GPD-1's windowed models, aggregated per subject, on the same folds",
        "",
        "Each subject's 10-s windows (GPD-1) averaged into one PD probability "
        "(mean over the windows, PD above 0.5), so that both protocols predict one "
        "label per subject; only the folds of this GPD-2 run.",
        "",
        *_summary_table(g1_scores, g1, None),
        "",
        *paired_table(pairs, *both, "balanced_accuracy"),
        "",
        *[f"- {n}" for n in g1_notes],
        "",
    ]
    return lines + _section(
        "## Does SPT help more on whole walks than on windows?",
        "SPT's gain over scratch on GPD-2 against its gain on GPD-1 (windows "
        "aggregated per subject), per subject: (SPT − scratch, whole walks) − "
        "(SPT − scratch, windows), seeds averaged within each subject and model, "
        "summed over the subjects all four scored; sign-flip test and 95 % subject "
        "bootstrap interval (`medspt.evaluation.statistics.compare_gains`).",
        gain_lines(p2, g1),
    )


def render_accuracy(args: argparse.Namespace, notes: list[str], wall: float) -> str:
    """The accuracy report in Markdown, from the stored rows and predictions.

    Parameters
    ----------
    args : argparse.Namespace
        ``gpd2.py``'s options (where the rows lie, GPD-1 sources, the command).
    notes : list of str
        What the run has to add (listed under *Notes*).
    wall : float
        Seconds the run took.

    Returns
    -------
    str
        The report, or a line saying there are no rows yet.
    """
    csv, pred_path, _ = paths(args)
    if not csv.is_file():
        return "no accuracy rows yet\n"
    rows = pd.read_csv(csv)
    pred = read_predictions(pred_path)
    p2 = pred[pred["protocol"].str.startswith("GPD-2")]
    scores = fold_scores(p2)
    folds = {k: set(g["subject"]) for k, g in p2.groupby("fold")}
    g1, g1_notes = gpd1_subjects(args, folds, pred[pred["protocol"] == "GPD-1"])
    g1 = g1.assign(config=GPD1_PREFIX + g1["config"].astype(str)) if len(g1) else g1
    g1_scores = fold_scores(g1) if len(g1) else pd.DataFrame()
    lines = [*_overview(rows, p2, scores, g1_scores), *_comparisons(p2, scores)]
    if len(g1):
        lines += _gpd1_sections(p2, scores, g1, g1_scores, g1_notes)
    lines += ["## Time", "", *_timing_lines(rows), ""]
    if notes:
        lines += ["## Notes", "", *[f"- {n}" for n in notes], ""]
    lines += run_section(args, wall)
    return "\n".join(lines)
