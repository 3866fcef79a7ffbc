"""The study's results as a table anyone can read: Markdown, CSV and figures."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import optuna
import pandas as pd
from optuna.trial import TrialState

from medspt.api import (
    TABLE_NOTE,
    Results,
    comparison_table,
    markdown_comparisons,
    markdown_table,
    summarize,
)
from medspt.errors import InputError
from medspt.metrics import subject_table
from medspt.plots import plot_accuracy_vs_depth, plot_gain_vs_depth
from medspt.study import oof

__all__ = ["results_frame", "capacity_table", "write_report"]


def results_frame(study: optuna.Study) -> Results:
    """One row per fold of every completed cell, in the format of :func:`medspt.evaluate`
    (config, depth, masking, pretrain, seed, fold, counts, metrics, epochs, wall time),
    plus the trial number and, with tuning, the parameters chosen in that fold.

    ``.predictions`` holds the window-level out-of-fold predictions of the cells that
    recorded them (None for studies from before they were kept)."""
    rows, oofs = [], []
    classes = study.user_attrs.get("medspt", {}).get("classes", [])
    for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
        folds = t.user_attrs.get("folds")
        if not folds:
            continue
        config = t.params["config"]
        base = {
            "config": config,
            "depth": int(t.params["depth"]),
            "masking": config.removeprefix("spt-") if config.startswith("spt-") else None,
            "pretrain": config.startswith("spt-"),
            "positional": "alibi" if config.endswith("alibi") else "learned",
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
    from medspt.probes import probe_markdown
    from medspt.study.runner import load_study_data

    try:
        ws, folds = load_study_data(attrs["data"])
    except (InputError, KeyError, OSError) as e:
        return f"## Confound probes\n\nNot run: the study's data cannot be loaded here ({e}).\n"
    return probe_markdown(ws, folds)


def _baseline_lines(baselines: pd.DataFrame, metric: str) -> list[str]:
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
    return lines


def write_report(
    study: optuna.Study,
    out,
    metric: str = "balanced_accuracy",
    baselines: pd.DataFrame | None = None,
) -> dict[str, Path]:
    """Write ``results.csv``, ``capacity.csv``, ``report.md``, ``accuracy_vs_depth.png``,
    ``gain_vs_depth.png`` and, when the study kept them, ``predictions.csv.gz`` (window
    level) and ``subjects.csv`` (per subject) for a study into ``out``; returns their
    paths."""
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
    }
    results.to_csv(paths["results"], index=False)
    table.to_csv(paths["capacity"], index=False)
    if results.predictions is not None:
        paths["predictions"] = out / "predictions.csv.gz"
        paths["subjects"] = out / "subjects.csv"
        results.predictions.to_csv(paths["predictions"], index=False)
        subject_table(results.predictions).to_csv(paths["subjects"], index=False)
    plot_accuracy_vs_depth(results, paths["accuracy_vs_depth"], metric, study.study_name)
    plot_gain_vs_depth(table, paths["gain_vs_depth"], metric)
    attrs = study.user_attrs.get("medspt", {})
    states = pd.Series([t.state.name for t in study.get_trials(deepcopy=False)]).value_counts()
    n_cells = len(results.groupby(["depth", "config", "seed"])) if len(results) else 0
    n_seeds = len(attrs.get("grid", {}).get("seeds", []))
    lines = [
        f"# {study.study_name}: does self-pretraining help, and how does it change with depth?",
        "",
        "Each row is one model configuration at one depth (number of Transformer blocks), "
        f"scored on held-out subjects: {metric.replace('_', ' ')} averaged over "
        f"{attrs.get('n_folds', '?')} subject-wise folds × {n_seeds} "
        "seed(s). *scratch* trains on the labels only; *spt-X* first learns to reconstruct "
        "signals hidden by masking strategy X, then trains on the labels; *scratch-alibi* "
        "trains on the labels only, with ALiBi's proximity bias (-m·|i−j| added to the "
        "attention scores) instead of learned positions; *scratch-long* trains on the "
        "labels only for SPT's whole budget of optimizer steps (the compute-matched "
        "control). " + TABLE_NOTE,
        "",
        markdown_table(table, metric).rstrip(),
        "",
        "## Declared comparisons",
        "",
        "Every configuration against scratch, and every SPT configuration against the "
        "compute-matched scratch-long, at the same depth. No row is called best: a choice "
        "among these rows made on their test scores would be optimistic.",
        "",
        markdown_comparisons(comparison_table(results, metric=metric), metric).rstrip(),
    ]
    if "attention_distance" in table.columns:
        lines += [
            "",
            "*attention distance*: mean token distance |i−j| under the models' attention on "
            "their test windows (uniform attention: (N²−1)/(3N)); *locality*: attention mass "
            "within one token, divided by its share under uniform attention (1 = no "
            "preference for nearby tokens). Means over folds, seeds, layers and heads; see "
            "`medspt.diagnostics`.",
        ]
    if baselines is not None and len(baselines):
        lines += _baseline_lines(baselines, metric)
    lines += ["", _probe_section(attrs).rstrip()]
    lines += [
        "",
        "![accuracy vs depth](accuracy_vs_depth.png) ![gain vs depth](gain_vs_depth.png)",
        "",
        "## How this was produced",
        "",
        f"- data: {attrs.get('data')}; classes {attrs.get('classes')}",
        f"- grid: {attrs.get('grid')}; tuned per cell: {attrs.get('tune', False)}",
        f"- shared model settings: {attrs.get('params') or 'defaults'}",
        f"- cells completed: {n_cells}; trials by state: "
        + ", ".join(f"{k} {v}" for k, v in states.items()),
        f"- medspt {attrs.get('medspt_version', '?')}; report written "
        f"{dt.datetime.now().isoformat(timespec='minutes')}",
        "- per-fold numbers: `results.csv`; this table: `capacity.csv`"
        + (
            "; out-of-fold predictions per window: `predictions.csv.gz`; per subject: "
            "`subjects.csv`"
            if results.predictions is not None
            else ""
        ),
        "",
    ]
    paths["report"].write_text("\n".join(lines))
    return paths
