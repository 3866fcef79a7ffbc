"""The study's results as a table anyone can read: Markdown, CSV and figures."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import optuna
import pandas as pd
from optuna.trial import TrialState

from medspt.baselines import BASELINES
from medspt.core.errors import InputError
from medspt.evaluation.comparisons import (
    comparison_table,
    spt_answer,
    spt_comparisons,
    summarize,
)
from medspt.evaluation.markdown_tables import TABLE_NOTE, markdown_comparisons, markdown_table
from medspt.evaluation.plots import plot_accuracy_vs_depth, plot_gain_vs_depth
from medspt.evaluation.probes import probe_markdown
from medspt.evaluation.report_text import column_notes, config_notes, settings_table
from medspt.evaluation.result_files import per_class_markdown, write_oof_files
from medspt.evaluation.results import Results
from medspt.evaluation.versus import versus_markdown
from medspt.study import oof
from medspt.study.data import load_study_data

__all__ = ["results_frame", "capacity_table", "write_report"]


def results_frame(study: optuna.Study) -> Results:
    """One row per fold of every completed cell, in the format of :func:`medspt.evaluate`
    (config, depth, masking, pretrain, seed, fold, counts, metrics, epochs, wall time),
    plus the trial number and, with tuning, the parameters chosen in that fold.

    ``.predictions`` holds the window-level out-of-fold predictions of the cells that
    recorded them (None for studies from before they were kept)."""
    rows, oofs = [], []
    attrs = study.user_attrs.get("medspt", {})
    classes = attrs.get("classes", [])
    # the positions every configuration shares; studies that did not set them ran when
    # learned positions were the estimator's default
    shared_positional = attrs.get("params", {}).get("positional", "learned")
    for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
        folds = t.user_attrs.get("folds")
        if not folds:
            continue
        config = t.params["config"]
        base = {
            "config": config,
            # a baseline's cell carries the first depth as a placeholder: it has none
            "depth": np.nan if config in BASELINES else int(t.params["depth"]),
            "masking": config.removeprefix("spt-") if config.startswith("spt-") else None,
            "pretrain": config.startswith("spt-"),
            "positional": "alibi" if config.endswith("alibi") else shared_positional,
            "seed": int(t.params["seed"]),
        }
        for f in folds:
            skip = ("curves", "oof", "tuned_params")
            row = {**base, **{k: v for k, v in f.items() if k not in skip}, "trial": t.number}
            if "val_score" not in row:  # trials from before val_score was kept
                row["val_score"] = _val_from_curves(f.get("curves") or {})
            row.update({f"tuned_{k}": v for k, v in (f.get("tuned_params") or {}).items()})
            rows.append(row)
            if f.get("oof"):
                keys = {k: base[k] for k in ("config", "depth", "seed")}
                oofs.append(oof.unpack(f["oof"], classes, **keys, fold=int(f["fold"])))
    df = pd.DataFrame(rows)
    if not df.empty:
        df = df.sort_values(["depth", "config", "seed", "fold"], kind="stable")
    out = Results(df.reset_index(drop=True))
    out.predictions = pd.concat(oofs, ignore_index=True) if oofs else None
    out.classes = np.asarray(classes)
    return out


def _val_from_curves(curves: dict) -> float:
    """Validation balanced accuracy of the kept epoch, from a fold's learning curves."""
    vals = [
        v
        for stage in ("finetune", "recover")
        for v in (curves.get(stage) or {}).get("val_balanced_accuracy", [])
        if v is not None
    ]
    return float(max(vals)) if vals else float("nan")


def capacity_table(results: pd.DataFrame, metric: str = "balanced_accuracy") -> pd.DataFrame:
    """:func:`medspt.summarize` of the study's rows: mean ± std per depth × configuration,
    gain over scratch with seeds averaged, tested over subjects (over folds for studies
    without out-of-fold predictions), Holm-adjusted."""
    if results.empty:
        raise InputError("the study has no completed trials yet")
    return summarize(results, metric)


def _probe_section(attrs: dict) -> str:
    """Confound probes on the study's own windows and folds (when another process can
    load them: a protocol, a data file or the demo)."""
    try:
        ws, folds = load_study_data(attrs["data"])
    except (InputError, KeyError, OSError) as e:
        return f"## Confound probes\n\nNot run: the study's data cannot be loaded here ({e}).\n"
    return probe_markdown(ws, folds)


def _baseline_lines(baselines: pd.DataFrame, metric: str, chance: dict | None = None) -> list[str]:
    lines = [
        "",
        "## Baselines on the same folds",
        "",
        f"| baseline | {metric} (mean ± std) | runs |",
    ]
    lines.append("|---|---:|---:|")
    for config, g in baselines.groupby("config", sort=False):
        lines.append(
            f"| {config} | {g[metric].mean():.3f} ± {g[metric].std(ddof=1):.3f} | {len(g)} |"
        )
    if chance and np.isfinite(chance.get("majority", np.nan)):
        lines.append(f"| *chance: majority class* | {chance['majority']:.3f} | |")
        lines.append(f"| *chance: uniform guess* | {chance['uniform']:.3f} | |")
    return lines


def write_report(
    study: optuna.Study,
    out,
    metric: str = "balanced_accuracy",
    baselines: pd.DataFrame | None = None,
) -> dict[str, Path]:
    """Write a study's report into ``out``: ``report.md`` (for a clinical reader: what was
    run, the table with chance levels, what each column means, declared comparisons,
    per-class recall and precision, probes, settings), ``results.csv``, ``capacity.csv``,
    ``accuracy_vs_depth.png``, ``gain_vs_depth.png`` (SPT against the better label-only
    control at each depth, the comparisons the report's answer states) with its numbers in
    ``gain_vs_depth.csv`` and, when the study kept out-of-fold
    predictions, the files of :func:`medspt.evaluation.result_files.write_oof_files`
    (``predictions.csv.gz``, ``subjects.csv``, ``confusion.csv``, ``per_class.csv`` and
    their figures). Returns the paths by name."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    results = results_frame(study)
    table = capacity_table(results, metric)
    paths = {
        "results": out / "results.csv",
        "capacity": out / "capacity.csv",
        "report": out / "report.md",
        "accuracy_vs_depth": out / "accuracy_vs_depth.png",
        "gain_vs_depth": out / "gain_vs_depth.png",
        "gain_vs_depth_numbers": out / "gain_vs_depth.csv",
    }
    results.to_csv(paths["results"], index=False)
    table.to_csv(paths["capacity"], index=False)
    paths.update(write_oof_files(results, out, compress=True))
    plot_accuracy_vs_depth(table, paths["accuracy_vs_depth"], metric, study.study_name)
    # one table of declared comparisons feeds the answer, its figure, the comparisons
    # section and the paired answer against each baseline
    comparisons = comparison_table(results, metric=metric)
    plot_gain_vs_depth(
        spt_comparisons(results, metric, comparisons), paths["gain_vs_depth"], metric
    )
    attrs = study.user_attrs.get("medspt", {})
    sections = [
        _intro(study, attrs, results, table, metric),
        spt_answer(results, metric, comparisons).rstrip(),
        _comparisons(results, metric, comparisons),
        versus_markdown(results, metric, comparisons).rstrip(),
        _per_class(results),
        _baseline_section(baselines, metric, results.chance(metric)),
        _probe_section(attrs).rstrip(),
        "![accuracy vs depth](accuracy_vs_depth.png) ![gain vs depth](gain_vs_depth.png)",
        _provenance(study, attrs, results, paths),
    ]
    paths["report"].write_text("\n\n".join(s for s in sections if s) + "\n")
    return paths


def _intro(study, attrs: dict, results: Results, table: pd.DataFrame, metric: str) -> str:
    """Title, what was run, the table and one sentence per column."""
    n_seeds = len(attrs.get("grid", {}).get("seeds", [])) or results["seed"].nunique()
    shown = markdown_table(table, metric).rstrip()
    header = [c.strip() for c in shown.splitlines()[0].strip("|").split("|")]
    header = ["mean ± std" if "mean ± std" in c else c for c in header] + ["chance"]
    return "\n".join(
        [
            f"# {study.study_name}: does self-pretraining help, and how does it change with depth?",
            "",
            "Each row is one way of training the model at one depth, scored on subjects "
            f"it never saw: {metric.replace('_', ' ')} averaged over "
            f"{attrs.get('n_folds', '?')} subject-wise folds × {n_seeds} seed(s).",
            "",
            "Configurations run:",
            "",
            *[f"- {note}" for note in config_notes(table["config"])],
            "",
            shown,
            "",
            "What the columns mean:",
            "",
            *column_notes(header),
            "",
            "How the tests work: " + TABLE_NOTE,
        ]
    )


def _comparisons(results: Results, metric: str, table: pd.DataFrame | None = None) -> str:
    long = (results["config"] == "scratch-long").any()
    if table is None:
        table = comparison_table(results, metric=metric)
    return "\n".join(
        [
            "## Declared comparisons",
            "",
            "Every configuration against scratch"
            + (
                ", and every SPT configuration against the compute-matched scratch-long,"
                if long
                else ""
            )
            + " at the same depth. No row is called best: a choice among these rows made "
            "on their test scores would be optimistic (`medspt study refit` chooses on "
            "validation subjects only)."
            + (
                ' "SPT helped" needs SPT to beat the better of scratch and scratch-long at '
                "its depth (the one with the higher mean); `gain_vs_depth.png` draws those "
                "rows."
                if long
                else ""
            ),
            "",
            markdown_comparisons(table, metric).rstrip(),
        ]
    )


def _per_class(results: Results) -> str:
    if results.predictions is None or not len(results.predictions):
        return ""
    return "\n".join(
        [
            "## Per class",
            "",
            per_class_markdown(results.per_class).rstrip(),
            "",
            "Confusion matrices per configuration: `confusion/*.png` (counts in "
            "`confusion.csv`); each held-out subject's predicted probability of its true "
            "class: `subjects/*.png` (table in `subjects.csv`).",
        ]
    )


def _baseline_section(baselines: pd.DataFrame | None, metric: str, chance: dict) -> str:
    if baselines is None or not len(baselines):
        return ""
    return "\n".join(_baseline_lines(baselines, metric, chance)).strip()


def _provenance(study, attrs: dict, results: Results, paths: dict) -> str:
    """How this was produced, with the settings as a table."""
    states = pd.Series([t.state.name for t in study.get_trials(deepcopy=False)]).value_counts()
    n_cells = len(results.groupby(["depth", "config", "seed"])) if len(results) else 0
    settings = {
        "data": attrs.get("data"),
        "classes": attrs.get("classes"),
        "grid": attrs.get("grid"),
        "tuned per cell": attrs.get("tune", False),
        "shared model settings": attrs.get("params") or "estimator defaults",
        "cells completed": n_cells,
        "trials by state": ", ".join(f"{k} {v}" for k, v in states.items()),
        "medspt": attrs.get("medspt_version", "?"),
        "report written": dt.datetime.now().isoformat(timespec="minutes"),
    }
    files = ", ".join(f"`{Path(p).relative_to(paths['report'].parent)}`" for k, p in paths.items()
                      if "/" not in k)  # fmt: skip
    return "\n".join(
        ["## How this was produced", "", settings_table(settings), "", f"Files: {files}."]
    )
