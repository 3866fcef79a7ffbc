"""Figures for results tables and training histories (matplotlib, no display needed)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless-safe; medspt only writes files
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from medspt.api import summarize  # noqa: E402

__all__ = [
    "plot_accuracy_vs_depth",
    "plot_distance_profiles",
    "plot_gain_vs_depth",
    "plot_history",
    "plot_positional_score",
]


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


def plot_distance_profiles(profiles: dict, path, title: str | None = None) -> Path:
    """Attention weight against token distance, one panel per layer, one line per model.

    ``profiles`` maps a model name (e.g. ``"scratch"``, ``"spt-span"``) to its
    :class:`medspt.diagnostics.AttentionProfile`; lines are means over heads, scaled by
    the number of tokens ``N`` so that uniform attention is the dotted line at 1. Models
    of different depths share the panels of the layers they have."""
    if not profiles:
        raise ValueError("profiles is empty")
    depth = max(p.profile.shape[0] for p in profiles.values())
    cols = min(depth, 4)
    rows = -(-depth // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 2.9 * rows), squeeze=False)
    for layer, ax in enumerate(axes.ravel()):
        if layer >= depth:
            ax.set_axis_off()
            continue
        spread = 1.0
        for name, prof in profiles.items():
            if layer < prof.profile.shape[0]:
                y = prof.profile[layer].mean(0) * prof.n_tokens  # vs uniform, (N,)
                ratio = prof.locality_ratio[layer].mean()
                ax.plot(np.arange(len(y)), y, label=f"{name} (locality {ratio:.2f})")
            spread = max(spread, float(y.max() / max(y.min(), 1e-12)))
        ax.axhline(1.0, color="black", linestyle=":", linewidth=1, label="uniform")
        if spread > 10:  # sharply local attention: a log axis shows the tail
            ax.set_yscale("log")
        ax.set_title(f"layer {layer + 1}", fontsize=9)
        ax.set_xlabel("token distance |i − j|", fontsize=8)
        ax.set_ylabel("attention weight × N", fontsize=8)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
    fig.suptitle(
        title or "attention by token distance, relative to uniform (mean over heads)", fontsize=10
    )
    return _save(fig, path)


def plot_positional_score(score, path, title: str | None = None) -> Path:
    """Heatmaps of the input-free positional score ``S(i, j)``: rows = layers, columns =
    heads, each titled with its Spearman ρ against ``−|i − j|``."""
    S = score.scores
    L, H = S.shape[:2]
    fig, axes = plt.subplots(
        L, H, figsize=(1.9 * H + 0.6, 1.9 * L + 0.6), squeeze=False, sharex=True, sharey=True
    )
    for li in range(L):
        for h in range(H):
            ax = axes[li, h]
            m = S[li, h]
            lim = float(np.abs(m).max()) or 1.0
            ax.imshow(m, cmap="RdBu_r", vmin=-lim, vmax=lim, interpolation="nearest")
            ax.set_title(f"L{li + 1} h{h + 1}  ρ={score.spearman[li, h]:.2f}", fontsize=7)
            ax.tick_params(labelsize=6)
    fig.suptitle(title or f"positional score S(i, j) ({score.positional} positions)", fontsize=10)
    return _save(fig, path)
