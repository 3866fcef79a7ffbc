"""Figures for results tables, predictions, training histories and attention diagnostics
(matplotlib, no display needed).

Every figure has a ``figure_*`` function that builds and returns the matplotlib
:class:`~matplotlib.figure.Figure` (for tests and notebooks) and a ``plot_*`` function that
writes it to a file. Figures take data frames (a :func:`medspt.summarize` table, a
:func:`medspt.estimator.metrics.confusion_frame`, a
:func:`medspt.estimator.metrics.subject_table`), never the
API. Axis ranges are fixed where the quantity has a natural range, so that noise never
looks like an effect after auto-zooming.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless-safe; medspt only writes files
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

__all__ = [
    "DRAWN_COLUMNS",
    "NESTED_LABEL",
    "figure_accuracy_vs_depth",
    "figure_confusion",
    "figure_distance_profiles",
    "figure_gain_vs_depth",
    "figure_history",
    "figure_positional_score",
    "figure_subjects",
    "gain_caption",
    "gain_points",
    "plot_accuracy_vs_depth",
    "plot_confusion",
    "plot_distance_profiles",
    "plot_gain_vs_depth",
    "plot_history",
    "plot_positional_score",
    "plot_subjects",
]

NESTED_LABEL = "chosen per fold"  # x tick of rows without a depth (e.g. nested-best)
UNIT_METRICS = ("accuracy", "balanced_accuracy", "macro_f1", "roc_auc", "subject_accuracy")
MAX_DODGE = 0.3  # largest x offset of a configuration from its depth


def _save(fig, path) -> Path:
    """Write a figure to ``path`` (folders created) and release it."""
    if fig.get_layout_engine() is None:  # constrained figures keep their own layout
        fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _nice(metric: str) -> str:
    return metric.replace("_", " ")


# ---------------------------------------------------------------- depth axis


def _dodge(configs: list) -> dict:
    """Symmetric x offsets per configuration, within ±MAX_DODGE, so that points of
    several configurations at one depth do not hide each other."""
    n = len(configs)
    step = min(0.12, 2 * MAX_DODGE / (n - 1)) if n > 1 else 0.0
    return {c: (i - (n - 1) / 2) * step for i, c in enumerate(configs)}


def _depth_axis(depths: pd.Series) -> tuple[np.ndarray, float]:
    """The finite depths (sorted) and the x position of rows without a depth: one
    step (the median gap between depths, at least 1) right of the deepest."""
    finite = np.sort(pd.unique(depths.dropna().astype(float)))
    if not len(finite):
        return finite, 0.0
    gap = max(1.0, float(np.median(np.diff(finite)))) if len(finite) > 1 else 1.0
    return finite, float(finite[-1] + gap)


def _positions(frame: pd.DataFrame, extra: float) -> dict:
    """x of every row per configuration: its depth (``extra`` when it has none) plus the
    configuration's offset. Rows with and without a depth are dodged separately, so a
    configuration that exists only without a depth does not shift the others."""
    has = frame["depth"].notna()
    at_depth = _dodge(list(pd.unique(frame.loc[has, "config"])))
    nested = _dodge(list(pd.unique(frame.loc[~has, "config"])))
    out = {}
    for config, g in frame.groupby("config", sort=False):
        d = g["depth"].astype(float)
        shift = np.where(d.notna(), at_depth.get(config, 0.0), nested.get(config, 0.0))
        out[config] = d.fillna(extra).to_numpy() + shift
    return out


def _style_depth_axis(ax, finite: np.ndarray, extra: float, nested: bool) -> None:
    ticks = list(finite) + ([extra] if nested else [])
    labels = [f"{d:g}" for d in finite] + ([NESTED_LABEL] if nested else [])
    ax.set_xticks(ticks, labels)
    if ticks:
        ax.set_xlim(min(ticks) - 0.6, max(ticks) + 0.6)
    if nested and len(finite):  # the nested column is no depth: set it apart
        ax.axvline((finite[-1] + extra) / 2, color="grey", linewidth=0.8, alpha=0.5)
    ax.set_xlabel("depth (Transformer blocks)")


def _as_table(table: pd.DataFrame, metric: str) -> pd.DataFrame:
    """A summarize() table; raw results (one row per fit) are reduced to mean, std and
    count per depth and configuration so that callers passing them keep working."""
    if "mean" in table.columns:
        return table
    if metric not in table.columns:
        raise ValueError(
            f"expected a medspt.summarize() table (with a 'mean' column) or results with a "
            f"{metric!r} column; got columns {list(table.columns)}"
        )
    warnings.warn(
        "plotting raw results is deprecated: pass medspt.summarize(results, metric)",
        DeprecationWarning,
        stacklevel=3,
    )
    g = table.groupby(["depth", "config"], sort=False, dropna=False)[metric]
    return g.agg(["mean", "std", "count"]).reset_index()


def _chance_from(table: pd.DataFrame, chance: dict | None) -> dict | None:
    """``chance`` as given, else the table's ``chance_majority`` / ``chance_uniform``."""
    if chance is not None or "chance_majority" not in table.columns or not len(table):
        return chance
    return {
        "majority": float(table["chance_majority"].iloc[0]),
        "uniform": float(table.get("chance_uniform", pd.Series([np.nan])).iloc[0]),
    }


def _chance_lines(ax, chance: dict | None) -> None:
    """Horizontal reference lines at the chance levels (NaN levels are left out)."""
    if not chance:
        return
    major = float(chance.get("majority", np.nan))
    uniform = float(chance.get("uniform", np.nan))
    if np.isfinite(major) and np.isfinite(uniform) and math.isclose(major, uniform):
        ax.axhline(
            major, color="dimgrey", linestyle=":", linewidth=1.2, label=f"chance ({major:.2f})"
        )
        return
    if np.isfinite(major):
        ax.axhline(
            major,
            color="dimgrey",
            linestyle="-.",
            linewidth=1.2,
            label=f"chance: majority class ({major:.2f})",
        )
    if np.isfinite(uniform):
        ax.axhline(
            uniform,
            color="dimgrey",
            linestyle=":",
            linewidth=1.2,
            label=f"chance: uniform guess ({uniform:.2f})",
        )


def _split_baselines(table: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rows of medspt's configurations and those of baselines (the table's
    ``baseline`` column, :func:`medspt.summarize`)."""
    if "baseline" not in table.columns:
        return table, table.iloc[:0]
    is_base = table["baseline"].fillna(False).astype(bool)
    return table[~is_base], table[is_base]


def _baseline_lines(ax, baselines: pd.DataFrame) -> None:
    """Each baseline across the whole depth axis: its mean as a dashed line, ± std as a
    band (a baseline has no depth)."""
    styles = iter(["--", (0, (5, 2, 1, 2)), (0, (1, 1))])
    for _, r in baselines.iterrows():
        mean, std = float(r["mean"]), float(0 if pd.isna(r["std"]) else r["std"])
        line = ax.axhline(
            mean, color="tab:red", linestyle=next(styles, "--"), linewidth=1.4,
            label=f"{r['config']} ({mean:.2f} ± {std:.2f})",
        )  # fmt: skip
        ax.axhspan(mean - std, mean + std, color=line.get_color(), alpha=0.08, linewidth=0)


def figure_accuracy_vs_depth(
    table: pd.DataFrame,
    metric: str = "balanced_accuracy",
    title: str | None = None,
    chance: dict | None = None,
) -> Figure:
    """Mean ``metric`` (± std over folds × seeds) against depth, one line per configuration.

    Parameters
    ----------
    table : DataFrame
        A :func:`medspt.summarize` table (``depth``, ``config``, ``mean``, ``std``). Rows
        without a depth (e.g. ``nested-best``) are drawn at an extra position right of
        the deepest, labelled "chosen per fold"; baselines (rows with ``baseline`` True:
        ``minirocket``, ...) as a dashed line across every depth with a ± std band.
    metric : str
        Name of the metric, for the labels; metrics in [0, 1] get the fixed y range
        [0, 1.02].
    title : str, optional
        Figure title.
    chance : dict, optional
        ``{"majority": x, "uniform": y}`` (NaN allowed), drawn as horizontal lines;
        taken from the table's ``chance_majority`` / ``chance_uniform`` when not given.

    Returns
    -------
    Figure
        One axes; each configuration is an errorbar container labelled with its name,
        its points shifted by a small symmetric offset at every depth.
    """
    table = _as_table(table, metric)
    chance = _chance_from(table, chance)
    table, baselines = _split_baselines(table)
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    finite, extra = _depth_axis(table["depth"])
    configs = list(pd.unique(table["config"]))
    xs = _positions(table, extra)
    colors = {}
    for config in configs:
        g = table[table["config"] == config]
        x = xs[config]
        y = g["mean"].to_numpy(dtype=float)
        err = g["std"].fillna(0).to_numpy(dtype=float)
        style = dict(color="black", linestyle="--", marker="s") if config == "scratch" else {}
        style.setdefault("marker", "o")
        has = g["depth"].notna().to_numpy()
        order = np.argsort(x[has], kind="stable")
        if has.any():
            bars = ax.errorbar(
                x[has][order],
                y[has][order],
                yerr=err[has][order],
                capsize=3,
                label=str(config),
                **style,
            )
            colors[config] = bars.lines[0].get_color()
        if (~has).any():  # no line to the depth points: this is another kind of row
            ax.errorbar(
                x[~has],
                y[~has],
                yerr=err[~has],
                capsize=3,
                linestyle="none",
                marker=style["marker"],
                color=colors.get(config, style.get("color")),
                label=str(config) if not has.any() else f"_{config} ({NESTED_LABEL})",
            )
    _chance_lines(ax, chance)
    _baseline_lines(ax, baselines)
    values = pd.concat([table["mean"] - table["std"].fillna(0), table["mean"]]).dropna()
    if metric in UNIT_METRICS or (len(values) and values.between(0, 1).all()):
        ax.set_ylim(0.0, 1.02)  # fixed: a zoomed axis makes small differences look large
    _style_depth_axis(ax, finite, extra, table["depth"].isna().any())
    ax.set_ylabel(_nice(metric))
    ax.set_title(title or f"{_nice(metric)} vs depth (subject-wise CV, ± std)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    return fig


def plot_accuracy_vs_depth(
    table: pd.DataFrame,
    path,
    metric: str = "balanced_accuracy",
    title: str | None = None,
    chance: dict | None = None,
) -> Path:
    """Write :func:`figure_accuracy_vs_depth` to ``path``; returns the path."""
    return _save(figure_accuracy_vs_depth(table, metric, title, chance), path)


def _shown_gain(table: pd.DataFrame) -> pd.Series:
    """The gain the tables show: ``subject_gain`` where the test ran over subjects, else
    ``gain_vs_scratch``."""
    gain = table["gain_vs_scratch"].astype(float)
    if "subject_gain" in table.columns and "test" in table.columns:
        gain = gain.where(table["test"] != "subjects", table["subject_gain"].astype(float))
    return gain


# what figure_gain_vs_depth draws, one row per point (its ``drawn`` attribute)
DRAWN_COLUMNS = ("config", "depth", "versus", "diff", "low", "high", "p_holm", "star", "unit")


def _column(frame: pd.DataFrame, name: str) -> pd.Series:
    """A float column of ``frame``, NaN where it has none."""
    if name in frame.columns:
        return frame[name].astype(float)
    return pd.Series(np.nan, index=frame.index)


def _comparison_points(table: pd.DataFrame) -> pd.DataFrame:
    """Points of declared comparison rows (``medspt.evaluation.comparisons.spt_comparisons``
    or a ``comparison_table`` with one row per configuration and depth): the tested
    difference (over subjects where ``n_subjects > 0``, else over folds) and its interval;
    a star where the row claims a direction (``direction``), else where Holm's p < 0.05."""
    twice = table.duplicated(["config", "depth"], keep=False)
    if twice.any():
        raise ValueError(
            "the comparison rows hold several controls for one configuration and depth "
            f"({', '.join(sorted(set(table.loc[twice, 'config'].astype(str))))}); pass the "
            "rows one answer states, e.g. medspt.evaluation.comparisons.spt_comparisons(results)"
        )
    subjects = _column(table, "n_subjects").fillna(0) > 0
    pick = lambda own, subj, fold: (  # noqa: E731
        _column(table, own)
        if own in table.columns
        else _column(table, subj).where(subjects, _column(table, fold))
    )
    p = _column(table, "p_holm")
    star = table["direction"].fillna(0).astype(int) != 0 if "direction" in table else p < 0.05
    return pd.DataFrame(
        {
            "config": table["config"].astype(str),
            "depth": _column(table, "depth"),
            "versus": table["versus"].astype(str),
            "diff": pick("diff", "subject_diff", "fold_diff"),
            "low": pick("low", "subject_ci_low", "fold_ci_low"),
            "high": pick("high", "subject_ci_high", "fold_ci_high"),
            "p_holm": p,
            "star": star.to_numpy(dtype=bool),
            "unit": np.where(subjects, "subjects", "folds"),
        }
    )


def _summary_points(table: pd.DataFrame) -> pd.DataFrame:
    """Points of a :func:`medspt.summarize` table: each configuration's gain over scratch
    (the gain the table shows) with its interval; a star where Holm's p < 0.05."""
    table, _ = _split_baselines(table)  # baselines have no depth and no scratch to gain on
    gain = _shown_gain(table)
    keep = (table["config"] != "scratch") & gain.notna()
    t = table[keep]
    p = _column(t, "p_holm")
    unit = t["test"].astype(str) if "test" in t.columns else pd.Series("", index=t.index)
    return pd.DataFrame(
        {
            "config": t["config"].astype(str),
            "depth": _column(t, "depth"),
            "versus": "scratch",
            "diff": gain[keep],
            "low": _column(t, "ci_low"),
            "high": _column(t, "ci_high"),
            "p_holm": p,
            "star": (p < 0.05).to_numpy(dtype=bool),
            "unit": unit,
        }
    ).reset_index(drop=True)


def gain_points(table: pd.DataFrame) -> pd.DataFrame:
    """What :func:`figure_gain_vs_depth` draws for ``table``, one row per point:
    ``config``, ``depth``, ``versus`` (the control the difference is taken against),
    ``diff``, ``low``, ``high`` (95 % interval), ``p_holm``, ``star`` and ``unit``."""
    if "versus" in table.columns:
        return _comparison_points(table).reset_index(drop=True)
    return _summary_points(table)


def _gain_caption(points: pd.DataFrame, star_rule: str, better: bool) -> tuple[str, str]:
    """The title and y label, naming the control(s) every difference is taken against;
    ``better``: each was chosen as the better of several controls."""
    units = set(points["unit"]) - {""}
    unit = f" over {units.pop()}" if len(units) == 1 else ""
    controls = list(pd.unique(points["versus"]))
    if len(controls) == 1:
        against = controls[0]
        head = (
            f"gain over the better label-only control ({against}) vs depth"
            if better
            else f"gain over {against} vs depth"
        )
        ylabel = f"gain in {{metric}} over {against}"
    else:
        where = "; ".join(
            f"{c} at depth "
            + ", ".join(f"{d:g}" for d in sorted(set(points.loc[points["versus"] == c, "depth"])))
            for c in controls
        )
        head = f"gain over the better label-only control vs depth\n({where})"
        ylabel = "gain in {metric} over its control"
    return f"{head}\n(95 % interval{unit}; * {star_rule})", ylabel


def _star_rule(table: pd.DataFrame) -> str:
    """When a point of :func:`figure_gain_vs_depth` gets its star, in words."""
    if "versus" in table.columns:
        return "interval off zero and Holm p < 0.05"
    return "Holm-adjusted p < 0.05"


def gain_caption(table: pd.DataFrame, metric: str = "balanced_accuracy") -> tuple[str, str]:
    """The title and y label :func:`figure_gain_vs_depth` gives ``table``.

    Parameters
    ----------
    table : DataFrame
        As in :func:`figure_gain_vs_depth`.
    metric : str
        Name of the metric, for the y label.

    Returns
    -------
    tuple of str
        The title (lines separated by ``"\\n"``), naming the control every difference is
        taken against (the better label-only control where ``table`` lists several per
        row in ``controls``), and the y label.
    """
    points = gain_points(table)
    # spt_comparisons lists the controls each row was chosen from
    better = "controls" in table.columns and table["controls"].astype(str).str.contains(",").any()
    head, ylabel = _gain_caption(points, _star_rule(table), bool(better))
    if points.empty:
        head = "no configuration with a control at its depth"
    return head, ylabel.format(metric=_nice(metric))


def figure_gain_vs_depth(
    table: pd.DataFrame, metric: str = "balanced_accuracy", title: str | None = None
) -> Figure:
    """Gain of each configuration over its control against depth, with its 95 % interval.

    Parameters
    ----------
    table : DataFrame
        Either declared comparison rows, one per configuration and depth (with a
        ``versus`` column: :func:`medspt.evaluation.comparisons.spt_comparisons`, the rows
        :func:`~medspt.evaluation.comparisons.spt_answer` states): each row's tested
        difference against its control ``versus``, ``diff`` / ``low`` / ``high`` (or the
        subject-level ones where ``n_subjects > 0``, else the fold-level ones), a star
        where the row claims a direction (``direction``; Holm's ``p_holm < 0.05`` without
        it), the control named in the title and, when it changes with depth, beside each
        point (with ``controls`` listing several, the title says it is the better one).
        Or a :func:`medspt.summarize` table: the gain over scratch
        (``subject_gain`` where ``test == "subjects"``, else ``gain_vs_scratch``), error
        bars from ``ci_low`` to ``ci_high``, a star where ``p_holm < 0.05``.
    metric : str
        Name of the metric, for the labels.
    title : str, optional
        Figure title (default: names the control and the interval).

    Returns
    -------
    Figure
        One axes with a zero line and a symmetric y range that covers every interval and
        at least ±0.1. ``fig.drawn`` holds the points exactly as drawn
        (:func:`gain_points`), so that tests and readers can hold the figure against the
        sentence that states the same comparisons.
    """
    points = gain_points(table)
    declared = "versus" in table.columns
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    finite, extra = _depth_axis(points["depth"] if declared else table["depth"])
    xs = _positions(points, extra)
    reach = [0.0]
    named = points["versus"].nunique() > 1  # the control changes: say it at each point
    for config in pd.unique(points["config"]):
        g = points[points["config"] == config]
        reach += _draw_gain(ax, g, xs[config], config, named)
    ax.axhline(0.0, color="black", linestyle="--", linewidth=1)
    lim = max(0.1, math.ceil(max(reach) * 1.1 / 0.05) * 0.05)  # symmetric: no side favoured
    ax.set_ylim(-lim, lim)
    _style_depth_axis(ax, finite, extra, points["depth"].isna().any())
    rule = _star_rule(table)
    head, ylabel = gain_caption(table, metric)
    if points.empty:
        ax.text(0.5, 0.5, head, ha="center", va="center", transform=ax.transAxes)
    ax.set_ylabel(ylabel)
    ax.set_title(title or head, fontsize=9 if head.count("\n") > 1 else 10)  # 3 lines: smaller
    ax.grid(alpha=0.3)
    if len(points):
        ax.legend(fontsize=7, title=f"* {rule}", title_fontsize=7)
    x = pd.Series(np.nan, index=points.index)
    for config, g in points.groupby("config", sort=False):  # the order _positions used
        x[g.index] = xs[config]
    fig.drawn = points.assign(x=x)
    return fig


def _draw_gain(ax, g: pd.DataFrame, x: np.ndarray, config: str, named: bool) -> list[float]:
    """One configuration's points, intervals, stars and (``named``) control names; returns
    the largest absolute values drawn, for the y range."""
    y, lo, hi = (g[c].to_numpy(dtype=float) for c in ("diff", "low", "high"))
    # an interval that misses its own estimate (it can't, but) must not draw backwards
    err = np.vstack([np.nan_to_num(y - lo).clip(0), np.nan_to_num(hi - y).clip(0)])
    has = g["depth"].notna().to_numpy()
    bars = ax.errorbar(x[has], y[has], yerr=err[:, has], capsize=3, marker="o", label=config)
    color = bars.lines[0].get_color()
    if (~has).any():
        ax.errorbar(
            x[~has], y[~has], yerr=err[:, ~has], capsize=3, marker="o", linestyle="none",
            color=color, label=f"_{config} ({NESTED_LABEL})",
        )  # fmt: skip
    tops = np.where(np.isfinite(hi), hi, y)
    for xi, top, bottom, star, versus in zip(
        x, tops, np.where(np.isfinite(lo), lo, y), g["star"], g["versus"]
    ):
        if star:
            ax.annotate("*", (xi, top), textcoords="offset points", xytext=(0, 1),
                        ha="center", fontsize=12, color=color)  # fmt: skip
        if named:
            ax.annotate(f"vs {versus}", (xi, bottom), textcoords="offset points",
                        xytext=(0, -9), ha="center", fontsize=6, color=color)  # fmt: skip
    return [float(np.nanmax(np.abs(v))) for v in (y, lo, hi) if np.isfinite(v).any()]


def plot_gain_vs_depth(
    table: pd.DataFrame, path, metric: str = "balanced_accuracy", title: str | None = None
) -> Path:
    """Write :func:`figure_gain_vs_depth` to ``path`` and the points it draws
    (``fig.drawn``) beside it as ``<path>.csv`` (same name, ``.csv``), so the figure can be
    read against the text; returns the path of the figure."""
    fig = figure_gain_vs_depth(table, metric, title)
    drawn = fig.drawn
    out = _save(fig, path)
    drawn.to_csv(out.with_suffix(".csv"), index=False)
    return out


# ---------------------------------------------------------------- training history


def figure_history(clf) -> Figure:
    """Loss curves of a fitted SPTClassifier: pretraining and fine-tuning side by side,
    plus the full-attention recovery epochs when there were any. Epoch ticks are
    integers.

    Pretraining is shown relative to predicting each window's visible mean (the
    ``*_relative`` entries of ``clf.history_``): one thin line per channel on the
    validation subjects, the pooled validation and training losses, and a dashed line at
    1.0, where nothing was learned. Models saved before those entries existed show the
    masked MSE."""
    stages = ["pretrain", "finetune"] + (["recover"] if clf.history_.get("recover") else [])
    fig, axes = plt.subplots(1, len(stages), figsize=(4.5 * len(stages), 3.5), squeeze=False)
    for ax, stage in zip(axes[0], stages):
        hist = pd.DataFrame(clf.history_.get(stage, []))
        if hist.empty:
            ax.text(0.5, 0.5, f"no {stage}", ha="center", va="center")
            ax.set_axis_off()
            continue
        relative = "train_relative" in hist
        if relative:
            _relative_curves(ax, hist, list(getattr(clf, "channels_", [])))
        else:
            ax.plot(hist["epoch"], hist["train_loss"], label="train")
            if "val_loss" in hist:
                ax.plot(hist["epoch"], hist["val_loss"], label="validation subjects")
        best = clf.best_epoch_.get(stage)
        if best:
            ax.axvline(best, color="grey", linestyle=":", label=f"chosen epoch {best}")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # no epoch 1.5
        ax.set_title(stage)
        ax.set_xlabel("epoch")
        is_mse = stage == "pretrain" or (stage == "recover" and "val_balanced_accuracy" not in hist)
        if relative:
            ax.set_ylabel("loss / visible-mean baseline")
        else:
            ax.set_ylabel("masked MSE" if is_mse else "cross-entropy")
        ax.legend(fontsize=7 if relative else 8)
    return fig


def _relative_curves(ax, hist: pd.DataFrame, channels: list[str]) -> None:
    """Pretraining losses relative to the visible mean on ``ax``: per channel (thin, on the
    validation subjects), pooled (validation and training), and the 1.0 reference."""
    epochs = hist["epoch"].to_numpy()
    drawn = []
    if "val_relative_channels" in hist:
        # rows of a loaded model hold None where a channel had nothing to predict
        per_channel = np.array(hist["val_relative_channels"].tolist(), dtype=float)  # (E, C)
        for c in range(per_channel.shape[1]):
            name = channels[c] if c < len(channels) else f"ch{c}"
            if not np.isfinite(per_channel[:, c]).any():  # constant wherever it was hidden
                name += " (nothing to predict)"
            ax.plot(epochs, per_channel[:, c], linewidth=0.8, alpha=0.7, label=name)
            drawn.append(per_channel[:, c])
        val = np.array(hist["val_relative"].tolist(), dtype=float)
        ax.plot(epochs, val, color="black", linewidth=2, label="validation subjects, pooled")
        drawn.append(val)
    train = np.array(hist["train_relative"].tolist(), dtype=float)
    ax.plot(epochs, train, color="black", linewidth=1.2, linestyle="--", label="train, pooled")
    drawn.append(train)
    ax.axhline(
        1.0, color="firebrick", linestyle="--", linewidth=1, label="visible mean (no learning)"
    )
    values = np.concatenate(drawn + [np.ones(1)])
    values = values[np.isfinite(values) & (values > 0)]
    if values.size and values.max() / values.min() > 30:  # a channel far above the rest
        ax.set_yscale("log")


def plot_history(clf, path) -> Path:
    """Write :func:`figure_history` to ``path``; returns the path."""
    return _save(figure_history(clf), path)


# ---------------------------------------------------------------- predictions

_KEYS = ("config", "depth", "seed")
NORMALIZE = {
    "true": "share of the true class",
    "pred": "share of the predicted class",
    "all": "share of all windows",
    None: "windows",
}


def _one_model(frame: pd.DataFrame, what: str) -> dict:
    """The configuration and depth a frame holds; ValueError naming them when several."""
    keys = [k for k in ("config", "depth") if k in frame.columns]
    if not keys:
        return {}
    combos = frame[keys].drop_duplicates()
    if len(combos) > 1:
        names = [", ".join(f"{k}={v}" for k, v in r.items()) for r in combos.to_dict("records")]
        raise ValueError(
            f"{what} holds several configurations/depths ({'; '.join(names)}); "
            "select one, e.g. frame[(frame.config == c) & (frame.depth == d)]"
        )
    return combos.iloc[0].to_dict()


def _model_name(model: dict) -> str:
    parts = [str(model["config"])] if "config" in model else []
    if "depth" in model:
        d = model["depth"]
        parts.append(NESTED_LABEL if pd.isna(d) else f"depth {d:g}")
    return ", ".join(parts)


def figure_confusion(
    confusion: pd.DataFrame, title: str | None = None, normalize: str | None = "true"
) -> Figure:
    """Confusion matrix of one configuration as a heatmap with counts in the cells.

    Parameters
    ----------
    confusion : DataFrame
        A :func:`medspt.estimator.metrics.confusion_frame` (long form: optional ``config``,
        ``depth``, ``seed``, then ``label``, ``predicted``, ``count``) of one
        configuration and depth; counts of several seeds are averaged.
    title : str, optional
        Figure title ("mean over N seeds" is added when seeds were averaged).
    normalize : {"true", "pred", "all", None}
        What the colour and the percentage show: the share of the true class (rows,
        i.e. recall), of the predicted class (columns, precision), of all windows, or
        (None) the counts alone.

    Returns
    -------
    Figure
        The matrix axes (rows: true class, columns: predicted class, classes in order
        of first appearance) and a colour-bar axes. Each cell's text is the count (the
        mean over seeds when several), then the percentage on a second line.

    Raises
    ------
    ValueError
        When the frame is empty or holds several configurations or depths.
    """
    if normalize not in NORMALIZE:
        raise ValueError(f"normalize must be one of {list(NORMALIZE)}, got {normalize!r}")
    if confusion is None or not len(confusion):
        raise ValueError("confusion is empty")
    model = _one_model(confusion, "confusion")
    classes = list(pd.unique(pd.concat([confusion["label"], confusion["predicted"]])))
    n_seeds = confusion["seed"].nunique(dropna=False) if "seed" in confusion.columns else 1
    # sum over seeds (and duplicate rows), then divide: seeds missing a pair count as 0
    counts = (
        confusion.pivot_table(
            index="label", columns="predicted", values="count", aggfunc="sum", fill_value=0
        )
        .reindex(index=classes, columns=classes, fill_value=0)
        .to_numpy(dtype=float)
        / n_seeds
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        share = {
            "true": counts / counts.sum(1, keepdims=True),
            "pred": counts / counts.sum(0, keepdims=True),
            "all": counts / counts.sum(),
            None: counts,
        }[normalize]
    K = len(classes)
    fig, ax = plt.subplots(figsize=(1.1 * K + 2.6, 1.0 * K + 1.6))
    vmax = 1.0 if normalize else max(float(counts.max()), 1.0)  # shares: fixed [0, 1]
    im = ax.imshow(np.nan_to_num(share), cmap="Blues", vmin=0.0, vmax=vmax)
    cbar = fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    label = NORMALIZE[normalize]
    cbar.set_label(f"mean {label} over seeds" if normalize is None and n_seeds > 1 else label)
    for i in range(K):
        for j in range(K):
            c = counts[i, j]
            text = f"{c:.0f}" if float(c).is_integer() else f"{c:.1f}"
            if normalize:
                text += "\n–" if np.isnan(share[i, j]) else f"\n{100 * share[i, j]:.0f} %"
            dark = np.nan_to_num(share[i, j]) > 0.55 * vmax
            ax.text(
                j, i, text, ha="center", va="center", fontsize=8, color="white" if dark else "black"
            )
    ax.set_xticks(
        range(K),
        [str(c) for c in classes],
        rotation=30 if K > 3 else 0,
        ha="right" if K > 3 else "center",
    )
    ax.set_yticks(range(K), [str(c) for c in classes])
    ax.set_xlabel("predicted class")
    ax.set_ylabel("true class")
    name = _model_name(model)
    title = title or "confusion matrix (windows)" + (f": {name}" if name else "")
    if n_seeds > 1:
        title += f"\nmean over {n_seeds} seeds"
    ax.set_title(title, fontsize=10)
    return fig


def plot_confusion(
    confusion: pd.DataFrame, path, title: str | None = None, normalize: str | None = "true"
) -> Path:
    """Write :func:`figure_confusion` to ``path``; returns the path."""
    return _save(figure_confusion(confusion, title, normalize), path)


def _subject_points(subjects: pd.DataFrame, proba: list[str]) -> pd.DataFrame:
    """One row per labelled subject of one configuration, sorted by ``p_true``: its
    label, the seed-averaged probability of its true class (``p_true``) and whether the
    class of highest seed-averaged probability is the true one (``correct``)."""
    g = subjects.groupby("subject", sort=False)
    mean = g[proba].mean()
    label = g["label"].first().astype(str).to_numpy()
    names = np.asarray([c.removeprefix("proba_") for c in proba], dtype=object)
    col = pd.Index(names).get_indexer(label)
    if (col < 0).any():
        raise ValueError(f"labels {sorted(set(label[col < 0]))} have no proba_<class> column")
    p = mean.to_numpy()
    out = pd.DataFrame(
        {
            "subject": mean.index.astype(str),
            "label": label,
            "p_true": p[np.arange(len(p)), col],
            "correct": p.argmax(1) == col,
        }
    )
    return out.sort_values(["p_true", "subject"], kind="stable").reset_index(drop=True)


def _unlabelled(subjects: pd.DataFrame, keys: list[str]) -> pd.Series:
    """Rows of subjects without one label: windows of several classes (empty label) or,
    across seeds of one configuration, different labels."""
    empty = subjects["label"].isna() | (subjects["label"].astype(str) == "")
    by = subjects.assign(_empty=empty).groupby([*keys, "subject"], sort=False, dropna=False)
    several = by["label"].transform("nunique") > 1
    return by["_empty"].transform("any") | several


def figure_subjects(subjects: pd.DataFrame, title: str | None = None) -> Figure:
    """Per-subject confidence: one dot per subject at the mean probability of its true
    class, sorted, coloured by right/wrong.

    Parameters
    ----------
    subjects : DataFrame
        A :func:`medspt.estimator.metrics.subject_table` (``subject``, ``label``, ``proba_<class>``
        and optional ``config``, ``depth``, ``seed``). Seeds are averaged per subject;
        a subject is right when the class of highest seed-averaged probability is its
        label. Subjects whose windows carry several labels (empty ``label``) are left
        out, with a note in the title.
    title : str, optional
        Figure title.

    Returns
    -------
    Figure
        One panel per configuration and depth; y axis fixed to [0, 1] with a dashed line
        at chance ``1/K``. Right and wrong subjects are two scatter collections labelled
        "right" and "wrong".
    """
    proba = [c for c in subjects.columns if str(c).startswith("proba_")]
    if not proba:
        raise ValueError("subjects has no proba_<class> columns (a subject_table is needed)")
    K = len(proba)
    keys = [k for k in ("config", "depth") if k in subjects.columns]
    left = _unlabelled(subjects, keys)
    n_left = subjects.loc[left, "subject"].nunique()
    kept = subjects[~left]
    groups = (
        list(kept.groupby(keys, sort=False, dropna=False)) if keys and len(kept) else [((), kept)]
    )
    n = len(groups)
    cols = min(n, 3)
    rows = -(-n // cols)
    fig, axes = plt.subplots(
        rows, cols, figsize=(4.6 * cols, 3.3 * rows), squeeze=False, sharey=True
    )
    for ax in axes.ravel()[n:]:
        ax.set_axis_off()
    for ax, (key, g) in zip(axes.ravel(), groups):
        pts = (
            _subject_points(g, proba)
            if len(g)
            else pd.DataFrame(columns=["subject", "p_true", "correct"])
        )
        x = np.arange(len(pts))
        ok = pts["correct"].to_numpy(dtype=bool)
        ax.scatter(x[ok], pts["p_true"][ok], color="tab:green", s=22, label="right", zorder=3)
        ax.scatter(
            x[~ok], pts["p_true"][~ok], color="tab:red", s=22, marker="X", label="wrong", zorder=3
        )
        ax.axhline(
            1 / K, color="black", linestyle="--", linewidth=1, label=f"chance (1/{K} = {1 / K:.2f})"
        )
        ax.set_ylim(0.0, 1.0)
        if len(pts) <= 40:  # few subjects: name them
            ax.set_xticks(x, pts["subject"], rotation=90, fontsize=6)
        ax.set_xlabel("subject (sorted)")
        ax.set_ylabel("mean probability of the true class")
        key = key if isinstance(key, tuple) else (key,)
        name = _model_name(dict(zip(keys, key)))
        seeds = g["seed"].nunique() if "seed" in g.columns else 1
        info = f"{len(pts)} subjects" + (f", mean over {seeds} seeds" if seeds > 1 else "")
        ax.set_title(f"{name} ({info})" if name else info, fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    sup = title or "per-subject mean probability of the true class (out of fold)"
    if n_left:
        sup += f"\n({n_left} subject{'s' if n_left > 1 else ''} without a single label left out)"
    fig.suptitle(sup, fontsize=10)
    return fig


def plot_subjects(subjects: pd.DataFrame, path, title: str | None = None) -> Path:
    """Write :func:`figure_subjects` to ``path``; returns the path."""
    return _save(figure_subjects(subjects, title), path)


# ---------------------------------------------------------------- attention diagnostics


def _profile_limits(lows: list[float], highs: list[float]) -> tuple[str, tuple[float, float]]:
    """Scale and y range of relative attention profiles (uniform = 1): linear from 0 to at
    least 2, or, when the spread exceeds 10×, log spanning at least a decade on each
    side of 1. Never zoomed to the data, so that 0.99–1.01 looks flat, as it is."""
    lo = min(lows, default=1.0)
    hi = max(highs, default=1.0)
    positive_lo = max(lo, 1e-6)  # weights of exactly 0 cannot sit on a log axis
    if hi / positive_lo > 10:
        return "log", (min(0.1, positive_lo / 1.5), max(10.0, hi * 1.5))
    return "linear", (0.0, max(2.0, hi * 1.05))


def figure_distance_profiles(profiles: dict, title: str | None = None) -> Figure:
    """Attention weight against token distance, one panel per layer, one line per model.

    ``profiles`` maps a model name (e.g. ``"scratch"``, ``"spt-span"``) to its
    :class:`medspt.evaluation.diagnostics.AttentionProfile`; lines are means over heads, scaled by
    the number of tokens ``N`` so that uniform attention is the dotted line at 1. Models
    of different depths share the panels of the layers they have. All panels share one
    fixed y range (see :func:`_profile_limits`)."""
    if not profiles:
        raise ValueError("profiles is empty")
    depth = max(p.profile.shape[0] for p in profiles.values())
    curves = {
        name: prof.profile.mean(1) * prof.n_tokens for name, prof in profiles.items()
    }  # (L, N) per model, relative to uniform
    scale, ylim = _profile_limits(
        [float(np.nanmin(c)) for c in curves.values()],
        [float(np.nanmax(c)) for c in curves.values()],
    )
    cols = min(depth, 4)
    rows = -(-depth // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 2.9 * rows), squeeze=False)
    for layer, ax in enumerate(axes.ravel()):
        if layer >= depth:
            ax.set_axis_off()
            continue
        for name, prof in profiles.items():
            if layer < prof.profile.shape[0]:
                y = curves[name][layer]
                ratio = prof.locality_ratio[layer].mean()
                ax.plot(np.arange(len(y)), y, label=f"{name} (locality {ratio:.2f})")
        ax.axhline(1.0, color="black", linestyle=":", linewidth=1, label="uniform attention")
        ax.set_yscale(scale)
        ax.set_ylim(*ylim)
        ax.set_title(f"layer {layer + 1}", fontsize=9)
        ax.set_xlabel("token distance |i − j|", fontsize=8)
        ax.set_ylabel("attention weight × N", fontsize=8)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
    fig.suptitle(
        title or "attention by token distance, relative to uniform (mean over heads)", fontsize=10
    )
    return fig


def plot_distance_profiles(profiles: dict, path, title: str | None = None) -> Path:
    """Write :func:`figure_distance_profiles` to ``path``; returns the path."""
    return _save(figure_distance_profiles(profiles, title), path)


def figure_positional_score(score, title: str | None = None) -> Figure:
    """Heatmaps of the input-free positional score ``S(i, j)``: rows = layers, columns =
    heads, each titled with its Spearman ρ against ``−|i − j|``.

    All panels share one symmetric colour scale (so heads can be compared) and one
    colour bar labelled with what the colour is; x is the key token ``j``, y the query
    token ``i``."""
    S = np.asarray(score.scores, dtype=float)
    L, H = S.shape[:2]
    # constrained layout: tight_layout cannot place a colour bar shared by several axes
    fig, axes = plt.subplots(
        L,
        H,
        figsize=(1.9 * H + 1.4, 1.9 * L + 0.9),
        squeeze=False,
        sharex=True,
        sharey=True,
        layout="constrained",
    )
    lim = float(np.nanmax(np.abs(S))) if S.size else 0.0
    lim = lim if np.isfinite(lim) and lim > 0 else 1.0
    im = None
    for li in range(L):
        for h in range(H):
            ax = axes[li, h]
            im = ax.imshow(S[li, h], cmap="RdBu_r", vmin=-lim, vmax=lim, interpolation="nearest")
            ax.set_title(f"L{li + 1} h{h + 1}  ρ={score.spearman[li, h]:.2f}", fontsize=7)
            ax.tick_params(labelsize=6)
            if li == L - 1:
                ax.set_xlabel("key token j", fontsize=7)
            if h == 0:
                ax.set_ylabel("query token i", fontsize=7)
    cbar = fig.colorbar(im, ax=axes.ravel().tolist(), fraction=0.05, pad=0.03)
    cbar.set_label("positional score S(i, j) (red: attends more)", fontsize=7)
    cbar.ax.tick_params(labelsize=6)
    fig.suptitle(title or f"positional score S(i, j) ({score.positional} positions)", fontsize=10)
    return fig


def plot_positional_score(score, path, title: str | None = None) -> Path:
    """Write :func:`figure_positional_score` to ``path``; returns the path."""
    return _save(figure_positional_score(score, title), path)
