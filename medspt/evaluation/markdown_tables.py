"""Markdown versions of the summary and comparison tables, with the chance levels.

Used by the command line's results, a study's report and its dashboard note; the number
formats (:func:`format_signed`, :func:`format_interval`, :func:`format_p`) are public so
that other tables print differences, intervals and p-values the same way.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = [
    "ALPHA",
    "TABLE_NOTE",
    "claimed_direction",
    "format_interval",
    "format_p",
    "format_signed",
    "interval_side",
    "interval_words",
    "markdown_comparisons",
    "markdown_table",
    "probe_note",
    "rounded",
]

ALPHA = 0.05  # a direction is claimed only below this corrected p-value


def format_signed(x) -> str:
    """A difference with its sign and three decimals (blank for NaN)."""
    return "" if pd.isna(x) else f"{0.0 if abs(x) < 5e-4 else x:+.3f}"  # no "-0.000"


def format_interval(lo, hi) -> str:
    """An interval ``[lo, hi]`` of signed differences (blank for NaN)."""
    return "" if pd.isna(lo) else f"[{format_signed(lo)}, {format_signed(hi)}]"


def format_p(p) -> str:
    """A p-value with three decimals, ``<0.001`` below that (blank for NaN)."""
    return "" if pd.isna(p) else ("<0.001" if p < 0.001 else f"{p:.3f}")


def rounded(x) -> float:
    """``x`` as :func:`format_signed` prints it (NaN stays NaN): what a reader sees, so
    that words about a number follow the printed digits, never the hidden ones."""
    return float("nan") if pd.isna(x) else float(format_signed(x))


def interval_side(low, high) -> str:
    """Where an interval lies relative to zero, read from its printed bounds.

    Returns
    -------
    str
        ``"above"`` (printed lower bound > 0), ``"below"`` (printed upper bound < 0),
        ``"touches"`` (a printed bound is 0.000, e.g. an upper bound of -0.0002),
        ``"includes"`` (zero strictly inside) or ``"none"`` (no interval: NaN).
    """
    lo, hi = rounded(low), rounded(high)
    if np.isnan(lo) or np.isnan(hi):
        return "none"
    if lo > 0:
        return "above"
    if hi < 0:
        return "below"
    return "touches" if lo == 0 or hi == 0 else "includes"


def interval_words(low, high) -> str:
    """``"the interval lies above zero"`` and its siblings, by :func:`interval_side`."""
    return {
        "above": "the interval lies above zero",
        "below": "the interval lies below zero",
        "touches": "the interval touches zero",
        "includes": "the interval includes zero",
        "none": "no interval could be computed",
    }[interval_side(low, high)]


def claimed_direction(low, high, p) -> int:
    """+1 or -1 when a difference may be called a gain or a loss, else 0.

    A direction needs both: the printed interval on one side of zero
    (:func:`interval_side`) and a corrected p-value below :data:`ALPHA`. The bootstrap
    interval and the permutation test can disagree near the edge; then nothing is
    claimed.
    """
    if pd.isna(p) or p >= ALPHA:
        return 0
    return {"above": 1, "below": -1}.get(interval_side(low, high), 0)


def markdown_table(table: pd.DataFrame, metric: str = "balanced_accuracy") -> str:
    """A :func:`medspt.summarize` table as Markdown: mean ± std, runs, optimizer steps,
    gain over scratch with its 95 % interval, p-value and Holm-adjusted p, and the
    models' mean attention distance and locality ratio when the table has them."""
    diag = "attention_distance" in table.columns and table["attention_distance"].notna().any()
    steps = "steps" in table.columns
    lines = [
        f"| depth | configuration | {metric} (mean ± std) | folds×seeds |"
        + (" steps/fit |" if steps else "")
        + " gain vs scratch | 95 % CI | p (unit) | p (Holm) |"
        + (" attention distance | locality |" if diag else ""),
        "|---:|---|---:|---:|"
        + ("---:|" if steps else "")
        + "---:|---:|---:|---:|"
        + ("---:|---:|" if diag else ""),
    ]
    for r in table.itertuples():
        p = getattr(r, "p_value", np.nan)
        unit = {"subjects": "subjects", "folds": "folds"}.get(getattr(r, "test", ""), "")
        p = "" if pd.isna(p) else f"{format_p(p)} (n={r.n_pairs} {unit})".replace(" )", ")")
        gain = r.subject_gain if getattr(r, "test", "") == "subjects" else r.gain_vs_scratch
        std = 0.0 if pd.isna(r.std) else r.std
        depth = "–" if pd.isna(r.depth) else int(r.depth)
        lines.append(
            f"| {depth} | {r.config} | {r.mean:.3f} ± {std:.3f} | {r.count} |"
            + (f" {_count(r.steps)} |" if steps else "")
            + f" {format_signed(gain)} | {format_interval(r.ci_low, r.ci_high)} | {p} |"
            + f" {format_p(r.p_holm)} |"
            + (f" {_num(r.attention_distance)} | {_num(r.locality_ratio)} |" if diag else "")
        )
    lines += _chance_rows(table, 1 + steps + 4 + 2 * diag)  # cells after the score
    probes = _probe_rows(table, 1 + steps + 4 + 2 * diag)
    note = [] if not probes else ["", probe_note(table)]
    return "\n".join(lines + probes + note) + "\n"


def _chance_rows(table: pd.DataFrame, n_empty: int) -> list[str]:
    """Chance levels as the table's last rows, so no score is read without them."""
    if "chance_majority" not in table.columns or not len(table):
        return []
    major, uniform = table["chance_majority"].iloc[0], table["chance_uniform"].iloc[0]
    if pd.isna(major):
        return []
    rest = " |" * n_empty
    if np.isclose(major, uniform):
        return [f"| – | *chance* (majority class = uniform guess) | {major:.3f} |{rest}"]
    return [
        f"| – | *chance: majority class* | {major:.3f} |{rest}",
        f"| – | *chance: uniform guess* | {uniform:.3f} |{rest}",
    ]


def _probe_rows(table: pd.DataFrame, n_empty: int) -> list[str]:
    """The confound probes' scores (``probe_<name>`` columns of :func:`medspt.summarize`)
    as rows after chance: what a shortcut alone scores on the same folds."""
    cols = [c for c in table.columns if str(c).startswith("probe_")]
    if not len(table):
        return []
    rest = " |" * n_empty
    return [
        f"| – | *probe: {c.removeprefix('probe_').replace('_', '-')}* | "
        f"{table[c].iloc[0]:.3f} |{rest}"
        for c in cols
        if pd.notna(table[c].iloc[0])
    ]


# what each probe row of the summary table sees, in a reader's words
PROBE_WORDS = {
    "position": "*position*: the window's start in its recording",
    "channel-means": "*channel-means*: each channel's mean level in the window",
    "window-levels": "*window-levels*: each channel's mean and log standard deviation in "
    "the window, which the model's head receives",
}


def probe_note(table: pd.DataFrame) -> str:
    """The sentence under a summary table's probe rows, naming what each shown probe sees."""
    shown = [
        str(c).removeprefix("probe_").replace("_", "-")
        for c in table.columns
        if str(c).startswith("probe_") and len(table) and pd.notna(table[c].iloc[0])
    ]
    seen = "; ".join(PROBE_WORDS.get(p, f"*{p}*") for p in shown)
    return (
        "*probe* rows: models that see only a shortcut, fitted and scored on the same "
        f"subject-wise folds, mean over folds ({seen}). A score near a probe's may come "
        "from that shortcut."
    )


TABLE_NOTE = (
    "Seeds of one fold share its subjects, so they are averaged before any test. *gain* is "
    "the difference to scratch at the same depth: with out-of-fold predictions, of the "
    "metric pooled over all held-out windows, tested over subjects (each subject's share "
    "of the metric, seeds averaged; two-sided sign-flip permutation test, 95 % subject "
    "bootstrap interval); otherwise the mean over folds of seed-averaged differences, "
    "tested over folds (exact sign-flip test, t interval; 5 folds cannot give p below "
    "0.0625). *p (Holm)* adjusts for the number of comparisons in the table."
)


def markdown_comparisons(table: pd.DataFrame, metric: str = "balanced_accuracy") -> str:
    """A :func:`medspt.comparison_table` as Markdown: fold-level and subject-level
    differences, intervals and p-values side by side, then Holm's adjusted p."""
    lines = [
        f"| depth | configuration | versus | {metric} (folds) | versus | diff (folds) "
        "| 95 % CI (folds) | p (folds) | diff (subjects, pooled) | 95 % CI (subjects) "
        "| p (subjects) | p (Holm) |",
        "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in table.itertuples():
        depth = "–" if pd.isna(r.depth) else int(r.depth)
        subj = r.n_subjects > 0
        lines.append(
            f"| {depth} | {r.config} | {r.versus} | {r.mean:.3f} | {r.versus_mean:.3f} | "
            f"{format_signed(r.fold_diff)} | {format_interval(r.fold_ci_low, r.fold_ci_high)} | "
            f"{format_p(r.fold_p)} (n={r.n_folds}) | "
            + (
                f"{format_signed(r.subject_diff)} | "
                f"{format_interval(r.subject_ci_low, r.subject_ci_high)} | "
                f"{format_p(r.subject_p)} (n={r.n_subjects}) | "
                if subj
                else "– | – | – | "
            )
            + f"{format_p(r.p_holm)} |"
        )
    n = int(table["p_holm"].notna().sum())
    lines += [
        "",
        f"Holm's correction over the {n} comparisons of this table, on the subject-level "
        "p-values (fold-level where no out-of-fold predictions exist).",
    ]
    if "chance_majority" in table.columns and len(table) and table["chance_majority"].notna().any():
        major, uniform = table["chance_majority"].iloc[0], table["chance_uniform"].iloc[0]
        lines.append(
            f"Chance level of {metric}: {major:.3f} (always the majority class), "
            f"{uniform:.3f} (uniform guess)."
        )
    return "\n".join(lines) + "\n"


def _count(x) -> str:
    return "" if pd.isna(x) else f"{x:,.0f}"


def _num(x) -> str:
    return "" if pd.isna(x) else f"{x:.2f}"
