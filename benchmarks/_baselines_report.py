"""Rows, summary and Markdown report of ``baselines.py``: one row per fold × model × seed
in :func:`medspt.evaluate`'s columns, their mean ± std per config, and the report's header.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from _baselines_folds import (
    CONFIG_NAMES,
    EVALUATE_COLUMNS,
    EVALUATE_METRICS,
    EXTRA_COLUMNS,
    METRICS,
    MODELS,
    FoldPlan,
    Settings,
)
from _common import command_line, fmt_pm, git_revision, machine

if TYPE_CHECKING:
    from medspt import WindowSet

PATH_FLAGS = ("--tsai-python", "--out", "--root")  # their values are this machine's paths


def make_row(
    model: str,
    settings: Settings,
    plan: FoldPlan,
    y: np.ndarray,
    groups: np.ndarray,
    proba: np.ndarray,
    info: dict,
    protocol: str,
) -> dict:
    """One result row in :func:`medspt.evaluate`'s column order, then the extra columns.

    ``y`` are the class codes of all windows and ``proba`` the test probabilities
    ``(len(plan.test), n_classes)`` in the order of ``ws.classes``; ``info`` holds what
    the run measured (``wall_time_s``, ``pretrain_epochs``, ``finetune_epoch``,
    ``windows_per_s``, ``n_params``; missing ones become NaN).
    """
    from medspt.estimator.metrics import classification_metrics

    if model not in CONFIG_NAMES:
        raise ValueError(f"unknown model {model!r}; choose from {list(MODELS)}")
    te = plan.test
    if proba.shape[0] != len(te):
        raise ValueError(f"{proba.shape[0]} probability rows for {len(te)} test windows")
    metrics = classification_metrics(y[te], proba, groups[te])
    tst = model.startswith("tstplus")
    row = {
        "config": CONFIG_NAMES[model],
        "depth": settings.tst_depth if tst else np.nan,
        "masking": "mvp" if model == "tstplus-mvp" else np.nan,
        "pretrain": model == "tstplus-mvp",
        "seed": plan.seed,
        "fold": plan.fold,
        "n_train": len(plan.train),
        "n_test": len(te),
        "n_test_subjects": len(np.unique(groups[te])),
        **{k: metrics[k] for k in EVALUATE_METRICS},
        "pretrain_epochs": info.get("pretrain_epochs", np.nan),
        "finetune_epoch": info.get("finetune_epoch", np.nan),
        "optimizer_steps": info.get("optimizer_steps", np.nan),
        "val_subjects": " ".join(map(str, np.unique(groups[plan.val]))),
        "val_score": info.get("val_score", np.nan),  # validation subjects' score, if kept
        "n_unlabelled": 0,  # baselines never pretrain
        "pretrain_relative": np.nan,  # tsai's pretraining loss is not on medspt's scale
        "not_learned": "",
        "wall_time_s": info.get("wall_time_s", np.nan),
        "windows_per_s": info.get("windows_per_s", np.nan),
        "protocol": protocol,
        "n_val": len(plan.val),
        "n_params": info.get("n_params", np.nan),
    }
    return row


def summarize(results: pd.DataFrame) -> pd.DataFrame:
    """Mean and std over folds × seeds of each metric and of the wall time, per config
    (and depth), in the order of :data:`MODELS`."""
    cols = [*METRICS, "wall_time_s"]
    df = results.assign(depth=results["depth"].fillna(-1))
    g = df.groupby(["config", "depth"], sort=False)
    out = g[cols].agg(["mean", "std"])
    out.columns = [f"{c}_{s}" for c, s in out.columns]
    out.insert(0, "runs", g.size())
    out = out.reset_index()
    out["depth"] = out["depth"].where(out["depth"] >= 0, np.nan)
    order = {CONFIG_NAMES[m]: i for i, m in enumerate(MODELS)}
    return out.sort_values("config", key=lambda s: s.map(order)).reset_index(drop=True)


def _pm(mean: float, std: float, digits: int = 3) -> str:
    """:func:`fmt_pm`, but ``n/a`` without a mean, as the stored reports read."""
    return fmt_pm(mean, std, digits) if np.isfinite(mean) else "n/a"


def render(summary: pd.DataFrame, header: list[str], notes: list[str], title: str) -> str:
    """Markdown report: header lines, the table of mean ± std, notes."""
    out = [f"# {title}", ""] + [f"- {h}" for h in header] + [""]
    out += [
        "| config | depth | runs | " + " | ".join(METRICS) + " | wall time (s) |",
        "|---|---:|---:|" + "---:|" * len(METRICS) + "---:|",
    ]
    for _, r in summary.iterrows():
        depth = "" if not np.isfinite(r["depth"]) else f"{int(r['depth'])}"
        cells = [_pm(r[f"{m}_mean"], r[f"{m}_std"]) for m in METRICS]
        wall = _pm(r["wall_time_s_mean"], r["wall_time_s_std"], 1)
        out.append(
            f"| {r['config']} | {depth} | {int(r['runs'])} | " + " | ".join(cells) + f" | {wall} |"
        )
    out += [
        "",
        "Mean ± std over folds × seeds; wall time = fitting (pretraining included), "
        "without predicting the test windows.",
    ]
    if notes:
        out += ["", "Notes:", ""] + [f"- {n}" for n in notes]
    return "\n".join(out) + "\n"


def collect(
    ws: WindowSet,
    plans: list[FoldPlan],
    models: list[str],
    s: Settings,
    results: dict,
    protocol: str,
) -> tuple[pd.DataFrame, list[pd.DataFrame], list[str]]:
    """Rows, out-of-fold prediction frames and failures of every (plan, model) run.

    ``results`` maps ``(job, model)`` to ``(proba, info)``; a run missing there or without
    probabilities is listed as failed.
    """
    from medspt.api import oof_frame

    rows, failed, predictions = [], [], []
    for i, plan in enumerate(plans):
        for model in models:
            proba, info = results.get((i, model), (None, {"error": "not run"}))
            if proba is None:
                failed.append(f"fold {plan.fold} seed {plan.seed} {model}: {info['error']}")
                continue
            rows.append(make_row(model, s, plan, ws.y, ws.groups, proba, info, protocol))
            keys = dict(config=CONFIG_NAMES[model], depth=rows[-1]["depth"], seed=plan.seed)
            predictions.append(oof_frame(ws, plan.test, proba, **keys, fold=plan.fold))
    return pd.DataFrame(rows, columns=[*EVALUATE_COLUMNS, *EXTRA_COLUMNS]), predictions, failed


def header_lines(
    argv: list[str],
    s: Settings,
    versions: dict | None,
    run: dict,
) -> list[str]:
    """The report's header: date and command, machine, versions, protocol and settings.

    ``run`` holds what the run itself saw: ``name``, ``description``, ``fold_ids``,
    ``seeds``, ``load_before`` and ``elapsed``.
    """
    m = machine()
    v = versions or {}
    return [
        f"Date: {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC; command: "
        f"`{command_line('baselines.py', argv, PATH_FLAGS)}`"
        + (" with MEDSPT_TSAI_PYTHON set" if os.environ.get("MEDSPT_TSAI_PYTHON") else ""),
        f"Machine: {m['cpu']}, {m['cores']} logical cores, {m['os']}; device "
        f"{v.get('device', s.device)}, "
        f"torch threads {v.get('threads', '-')}; load average (1 min) before / after "
        f"{run['load_before']:.2f} / {os.getloadavg()[0]:.2f}; total wall time "
        f"{run['elapsed']:.0f} s",
        f"Baselines: tsai {v.get('tsai', '-')}, fastai {v.get('fastai', '-')}, torch "
        f"{v.get('torch', '-')}, scikit-learn {v.get('sklearn', '-')}, Python "
        f"{v.get('python', '-')}; folds, validation split and metrics: medspt "
        f"(checkout {git_revision()})",
        f"Protocol {run['name']}: {run['description']}",
        f"Folds {run['fold_ids']}, seeds {run['seeds']}; per fold {s.val_size:g} of the "
        "training subjects held out for model selection (medspt's split); channels "
        "standardized with training-fold statistics",
        f"Networks: fit_one_cycle, {s.epochs} epochs (MVP pretraining {s.pretrain_epochs}), "
        f"lr_max {s.lr:g}, batch {s.batch_size}, class-weighted cross-entropy, best "
        f"validation balanced accuracy epoch kept; TSTPlus n_layers {s.tst_depth}, d_model "
        f"{s.d_model}, {s.n_heads} heads, d_ff {4 * s.d_model}, dropout {s.dropout}; "
        f"MiniRocket: aeon {_aeon_version()} MiniRocketClassifier via medspt.baselines"
        + (
            f"; at most {s.max_train_windows} training windows per fold"
            if s.max_train_windows
            else ""
        ),
    ]


def _aeon_version() -> str:
    import aeon

    return aeon.__version__


def show_and_write(
    df: pd.DataFrame, report: str, predictions: list[pd.DataFrame], out: Path | None, stem: str
) -> None:
    """Print the per-run table and the report; with ``out``, write ``<stem>.csv``, ``.md``
    and the out-of-fold predictions ``<stem>_predictions.csv.gz``."""
    shown = ["config", "fold", "seed", *METRICS, "finetune_epoch", "wall_time_s", "windows_per_s"]
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(df[shown].to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    print()
    print(report)
    if out is None or not len(df):
        return
    out.mkdir(parents=True, exist_ok=True)
    csv_path, md_path = out / f"{stem}.csv", out / f"{stem}.md"
    df.to_csv(csv_path, index=False)
    md_path.write_text(report)
    # out-of-fold predictions of every test window, for paired tests over subjects
    pred_path = out / f"{stem}_predictions.csv.gz"
    pd.concat(predictions, ignore_index=True).round(4).to_csv(pred_path, index=False)
    print(f"wrote {csv_path}, {md_path} and {pred_path}")
