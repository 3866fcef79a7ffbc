"""Figures for results tables and training histories (matplotlib, no display needed)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless-safe; medspt only writes files
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from medspt.api import summarize  # noqa: E402

__all__ = ["plot_accuracy_vs_depth", "plot_gain_vs_depth", "plot_history"]


def _save(fig, path) -> Path:
    """Write a figure to ``path`` (folders created) and release it."""
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_accuracy_vs_depth(
    results: pd.DataFrame, path, metric: str = "balanced_accuracy", title: str | None = None
) -> Path:
    """Mean ``metric`` (± std over folds × seeds) against depth, one line per configuration."""
    table = summarize(results, metric)
    fig, ax = plt.subplots(figsize=(6, 4))
    for config, g in table.groupby("config", sort=False):
        style = dict(color="black", linestyle="--", marker="s") if config == "scratch" else {}
        style.setdefault("marker", "o")
        ax.errorbar(
            g["depth"], g["mean"], yerr=g["std"].fillna(0), capsize=3, label=config, **style
        )
    lo, hi = ax.get_ylim()
    ax.set_ylim(max(0.0, lo), min(1.02, hi))  # metrics live in [0, 1]; std bars may not
    ax.set_xlabel("depth (Transformer blocks)")
    ax.set_ylabel(metric.replace("_", " "))
    ax.set_xticks(sorted(table["depth"].unique()))
    ax.set_title(title or f"{metric.replace('_', ' ')} vs depth (subject-wise CV)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, path)


def plot_history(clf, path) -> Path:
    """Loss curves of a fitted SPTClassifier: pretraining and fine-tuning side by side,
    plus the full-attention recovery epochs when there were any."""
    stages = ["pretrain", "finetune"] + (["recover"] if clf.history_.get("recover") else [])
    fig, axes = plt.subplots(1, len(stages), figsize=(4.5 * len(stages), 3.5))
    for ax, stage in zip(axes, stages):
        hist = pd.DataFrame(clf.history_.get(stage, []))
        if hist.empty:
            ax.text(0.5, 0.5, f"no {stage}", ha="center", va="center")
            ax.set_axis_off()
            continue
        ax.plot(hist["epoch"], hist["train_loss"], label="train")
        if "val_loss" in hist:
            ax.plot(hist["epoch"], hist["val_loss"], label="validation subjects")
        best = clf.best_epoch_.get(stage)
        if best:
            ax.axvline(best, color="grey", linestyle=":", label=f"chosen epoch {best}")
        ax.set_title(stage)
        ax.set_xlabel("epoch")
        is_mse = stage == "pretrain" or (stage == "recover" and "val_balanced_accuracy" not in hist)
        ax.set_ylabel("masked MSE" if is_mse else "cross-entropy")
        ax.legend(fontsize=8)
    return _save(fig, path)


def plot_gain_vs_depth(table: pd.DataFrame, path, metric: str = "balanced_accuracy") -> Path:
    """Gain of each SPT configuration over scratch against depth."""
    fig, ax = plt.subplots(figsize=(6, 4))
    spt = table[table["config"] != "scratch"].dropna(subset=["gain_vs_scratch"])
    for config, g in spt.groupby("config", sort=False):
        ax.plot(g["depth"], g["gain_vs_scratch"], marker="o", label=config)
        for d, gain, p in zip(g["depth"], g["gain_vs_scratch"], g["p_value"]):
            if np.isfinite(p) and p < 0.05:
                ax.annotate("*", (d, gain), textcoords="offset points", xytext=(4, 2))
    ax.axhline(0.0, color="black", linestyle="--", linewidth=1)
    ax.set_xlabel("depth (Transformer blocks)")
    ax.set_ylabel(f"gain in {metric.replace('_', ' ')} over scratch")
    ax.set_xticks(sorted(table["depth"].dropna().unique()))
    ax.set_title("SPT gain vs depth (* paired p < 0.05)")
    ax.grid(alpha=0.3)
    if len(spt):
        ax.legend(fontsize=8)
    return _save(fig, path)
