"""The ``cost`` mode of ``gpd2.py``: what full and hierarchical attention cost per
optimizer step, per epoch and in memory on GPD-2's whole walks, each configuration timed
in a fresh interpreter, and the Markdown table of it."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from _common import (
    cpu_seconds,
    current_rss_mb,
    fmt_num,
    high_water_rss_mb,
    peak_rss_mb,
    reset_peak_rss,
    run_script,
)
from _gpd2_report import run_section, seconds

MARK = "@@GPD2-JSON@@"
SCRIPT = Path(__file__).with_name("gpd2.py")  # re-invoked with --cell, one per configuration
DEFAULT_EPOCHS = {"pretrain": 10, "finetune": 15}  # SPTClassifier's, with min_steps 600
MIN_STEPS = 600


def _per_step(history: list[dict]) -> tuple[float, float]:
    """Fastest and median seconds per optimizer step over a stage's timed epochs (the
    fastest is the one least disturbed by other work on the machine)."""
    per = [r["seconds"] / r["steps"] for r in history if r.get("steps")]
    return (min(per), float(np.median(per))) if per else (float("nan"), float("nan"))


def _cost_params(spec: dict, batch: int, epochs: int) -> dict:
    """Estimator parameters of a timed fit: ``epochs`` per stage, no early stopping."""
    params = dict(
        depth=spec["depth"],
        d_model=spec["d_model"],
        n_heads=4,
        patch_len=spec["patch_len"],
        attention=spec["attention"],
        pretrain=spec["recipe"] == "spt",
        pretrain_epochs=epochs,
        epochs=epochs,
        min_steps=0,
        val_size=0.0,
        batch_size=batch,
        patience=None,
        random_state=0,
    )
    if spec["attn_dropout"] is not None:
        params["attn_dropout"] = spec["attn_dropout"]
    return params


def cost_cell(spec: dict) -> dict:
    """Time one configuration in this (fresh) process.

    Parameters
    ----------
    spec : dict
        Rate, attention, recipe, data root, fold, steps, repeats, slow-step limit, model
        size, patch length, attention dropout and threads (see :func:`run_cost`).

    Returns
    -------
    dict
        JSON-able readings: shapes, batch and steps, seconds per step per stage, the
        validation pass, resident memory and the share of CPU other processes took.
    """
    import torch

    from medspt import SPTClassifier
    from medspt.core.splits import validation_split
    from medspt.datasets import protocol
    from medspt.estimator.auto import batch_size_for

    torch.set_num_threads(spec["threads"])
    p = protocol(f"GPD-2@{spec['rate']:g}", spec["root"])
    ws = p.windows
    tr, _ = p.folds[spec["fold"]]
    labels = ws.classes[ws.y]
    fit, val = validation_split(labels[tr], ws.groups[tr], 0.2, 0)
    fit, val = tr[fit], tr[val]
    batch = batch_size_for(len(fit))
    per_epoch = math.ceil(len(fit) / batch)
    order = np.random.default_rng(0).permutation(fit)
    # warm-up, one step per stage: Numba's index build compiles, the allocator grows
    warm = SPTClassifier(**_cost_params(spec, batch, 1)).fit(
        ws.X[order[:batch]], labels[order[:batch]]
    )
    steps, repeats = spec["steps"] or per_epoch, spec["repeats"]
    if _per_step(warm.history_["finetune"])[0] > spec["slow_step_s"]:
        steps, repeats = min(steps, 2), min(repeats, 2)  # slow: a few steps only
    steps = min(steps, per_epoch)
    chosen = order[: steps * batch]
    rss_before = current_rss_mb()
    reset_peak_rss()
    # children excluded: what this process itself used, the rest counts as other work
    c0, t0 = cpu_seconds(children=False), time.perf_counter()
    clf = SPTClassifier(**_cost_params(spec, batch, repeats)).fit(ws.X[chosen], labels[chosen])
    t1 = time.perf_counter()
    clf.predict_proba(ws.X[val])
    val_s = time.perf_counter() - t1
    peak, wall, c1 = high_water_rss_mb(), time.perf_counter() - t0, cpu_seconds(children=False)
    other = None
    if c0 is not None and c1 is not None:
        other = max(0.0, (c1[0] - c0[0]) - (c1[1] - c0[1])) / (wall * (os.cpu_count() or 1))
    out = {
        "rate": spec["rate"],
        "attention": spec["attention"],
        "recipe": spec["recipe"],
        "T": int(ws.X.shape[2]),
        "tokens": math.ceil(ws.X.shape[2] / spec["patch_len"]),
        "real_tokens_median": int(np.median(np.ceil(ws.meta["length"] / spec["patch_len"]))),
        "n_fit": len(fit),
        "n_val": len(val),
        "batch": batch,
        "steps_per_epoch": per_epoch,
        "steps_timed": steps,
        "repeats": repeats,
        "val_pass_s": val_s,
        "rss_before_mib": rss_before,
        "peak_rss_mib": peak,
        "peak_growth_mib": peak - rss_before,
        "process_peak_mib": peak_rss_mb(),
        "other_cpu": other,
        "threads": spec["threads"],
    }
    for stage in ("pretrain", "finetune"):
        out[f"{stage}_s_per_step"], out[f"{stage}_median_s_per_step"] = _per_step(
            clf.history_[stage]
        )
    return out


def _run_cost_cell(spec: dict) -> dict:
    """:func:`cost_cell` in a fresh interpreter, so memory readings do not mix; a failed
    cell (out of memory, a crash) becomes a row that says why."""
    payload, error, wall = run_script(SCRIPT, ["--cell", json.dumps(spec)], MARK)
    if payload is None:
        keys = {k: spec[k] for k in ("rate", "attention", "recipe")}
        return {**keys, "skipped": f"failed: {error}"}
    return {**payload, "cell_wall_s": wall}


def _estimates(row: dict) -> dict:
    """Epoch seconds per stage and the default recipe's fit time (an upper bound)."""
    per_epoch, val = row["steps_per_epoch"], row["val_pass_s"]
    out = {}
    for stage in ("pretrain", "finetune"):
        s = row.get(f"{stage}_s_per_step", float("nan"))
        out[f"{stage}_epoch_s"] = per_epoch * s + val if np.isfinite(s) else float("nan")
    epochs = {k: max(v, math.ceil(MIN_STEPS / per_epoch)) for k, v in DEFAULT_EPOCHS.items()}
    fit = epochs["finetune"] * out["finetune_epoch_s"]
    if row["recipe"] == "spt":
        fit += epochs["pretrain"] * out["pretrain_epoch_s"]
    out["default_fit_s"] = fit
    out["default_epochs"] = epochs["pretrain"] if row["recipe"] == "spt" else 0
    out["default_epochs_ft"] = epochs["finetune"]
    return out


def run_cost(args: argparse.Namespace) -> pd.DataFrame:
    """Time every rate × attention × recipe, each in a fresh interpreter.

    Parameters
    ----------
    args : argparse.Namespace
        ``gpd2.py``'s options (``--rates``, ``--attentions``, ``--steps``, ...).

    Returns
    -------
    pandas.DataFrame
        One row per configuration: the cell's readings and the estimates made from them,
        or the reason it failed (column ``skipped``).
    """
    rows = []
    for rate in args.rates:
        for attention in args.attentions:
            for recipe in ("spt", "scratch"):
                spec = dict(
                    rate=rate,
                    attention=attention,
                    recipe=recipe,
                    root=args.root,
                    fold=args.fold,
                    steps=None if args.epoch else args.steps,
                    repeats=args.repeats,
                    slow_step_s=args.slow_step_s,
                    depth=args.depth,
                    d_model=args.d_model,
                    patch_len=args.patch_len,
                    attn_dropout=args.attn_dropout,
                    threads=args.threads,
                )
                print(f"  {rate:g} Hz {attention:<12} {recipe:<7} …", file=sys.stderr, flush=True)
                row = _run_cost_cell(spec)
                if "skipped" not in row:
                    row.update(_estimates(row))
                    msg = (
                        f"pretrain {row['pretrain_s_per_step']:.2f} s/step, finetune "
                        f"{row['finetune_s_per_step']:.2f} s/step, peak +"
                        f"{row['peak_growth_mib']:,.0f} MiB"
                    )
                else:
                    msg = row["skipped"]
                print(f"    {msg}", file=sys.stderr, flush=True)
                rows.append(row)
    return pd.DataFrame(rows)


def render_cost(df: pd.DataFrame, args: argparse.Namespace, wall: float) -> str:
    """The cost report in Markdown.

    Parameters
    ----------
    df : pandas.DataFrame
        :func:`run_cost`'s rows.
    args : argparse.Namespace
        The options the rows were made with (stated in the report).
    wall : float
        Seconds the run took.

    Returns
    -------
    str
        The report: method, one table row per configuration, hierarchical against full
        attention, and the run section.
    """
    drop = "estimator default (= dropout 0.1)" if args.attn_dropout is None else args.attn_dropout
    per = "whole epochs" if args.epoch else f"epochs of {args.steps} optimizer steps"
    lines = [
        "# GPD-2 whole walks: full vs hierarchical attention, time and memory per epoch",
        "",
        f"GPD-2 (one case per walk, padded with NaN to the longest walk), training cases of "
        f"fold {args.fold}, split into fit and validation subjects as the estimator splits "
        f"them; `SPTClassifier(depth={args.depth}, d_model={args.d_model}, n_heads=4, "
        f"patch_len={args.patch_len})`, attention dropout {drop}, whole-token masks, other "
        f"settings the estimator's defaults; batch size as `batch_size='auto'` gives for "
        f"the fit cases. After a warm-up fit, each stage runs {args.repeats} timed {per} "
        f"(*steps × repeats*; a configuration whose warm-up step took over "
        f"{args.slow_step_s:g} s: 2 × 2), in a fresh process per row; seconds per step are "
        "the fastest epoch's, from the training loop's own history (the fastest is the "
        "least disturbed by other work on the machine; *other CPU* is the share of the "
        "machine's CPU other processes used meanwhile). Epoch = steps per epoch × seconds "
        "per step + one validation pass (`predict_proba` on the validation cases). Default "
        "fit = the default recipe's epochs (at least 600 optimizer steps per stage: 10 "
        "pretraining and 15 fine-tuning epochs, raised to reach 600 steps) without early "
        "stopping: an upper bound. Peak memory: resident-set high-water mark of the "
        "process during the timed fit and the validation pass (Linux `VmHWM` after "
        "`clear_refs`), and its growth over the resident memory before them (data already "
        "loaded).",
        "",
        "| rate | tokens (padded / median real) | attention | recipe | batch × steps/epoch "
        "| timed (steps × repeats) | pretrain s/step | fine-tune s/step | validation pass "
        "| pretrain epoch | fine-tune epoch | default fit (upper bound) | peak RSS "
        "| peak growth | other CPU |",
        "|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in df.to_dict("records"):
        if isinstance(r.get("skipped"), str):
            lines.append(
                f"| {r['rate']:g} Hz | | {r['attention']} | {r['recipe']} | "
                f"{r['skipped']} |" + " |" * 10
            )
            continue
        lines.append(
            f"| {r['rate']:g} Hz | {r['tokens']:,} / {r['real_tokens_median']:,} "
            f"| {r['attention']} | {r['recipe']} | {r['batch']} × {r['steps_per_epoch']} "
            f"| {r['steps_timed']} × {r['repeats']} "
            f"| {seconds(r['pretrain_s_per_step'])} | {seconds(r['finetune_s_per_step'])} "
            f"| {seconds(r['val_pass_s'])} | {seconds(r['pretrain_epoch_s'])} "
            f"| {seconds(r['finetune_epoch_s'])} | {seconds(r['default_fit_s'])} "
            f"| {r['peak_rss_mib']:,.0f} MiB | {r['peak_growth_mib']:,.0f} MiB "
            f"| {fmt_num(r.get('other_cpu'), '.0%')} |"
        )
    lines += ["", *_speedups(df), "", *run_section(args, wall)]
    return "\n".join(lines)


def _speedups(df: pd.DataFrame) -> list[str]:
    """Hierarchical against full attention per rate and recipe: step speed-up per stage
    and peak memory growth."""
    if "pretrain_s_per_step" not in df.columns:
        return []
    out = []
    ok = df[df["pretrain_s_per_step"].notna() | df["finetune_s_per_step"].notna()]
    for (rate, recipe), g in ok.groupby(["rate", "recipe"], sort=False):
        by = g.set_index("attention")
        if not {"full", "hierarchical"} <= set(by.index):
            continue
        f, h = by.loc["full"], by.loc["hierarchical"]
        parts = []
        for stage in ("pretrain", "finetune"):
            a, b = f[f"{stage}_s_per_step"], h[f"{stage}_s_per_step"]
            if np.isfinite(a) and np.isfinite(b) and b > 0:
                parts.append(f"{stage} step {a / b:.1f}× faster")
        parts.append(f"peak growth {h['peak_growth_mib']:,.0f} vs {f['peak_growth_mib']:,.0f} MiB")
        out.append(f"- {rate:g} Hz, {recipe}: " + ", ".join(parts))
    return ["Hierarchical against full attention, same rate and recipe:", "", *out] if out else []
