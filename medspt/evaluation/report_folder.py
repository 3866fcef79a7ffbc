"""An evaluation written to a folder: what ``medspt evaluate --out`` writes, from Python.

>>> results = medspt.compare(df, window="10s")
>>> medspt.write_results(results, "my_study/")        # summary.md, figures, predictions

One table of declared comparisons feeds ``summary.md``'s answer, the paired answer
against each baseline, ``comparisons.md`` and the gain figure, so they cannot disagree.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from medspt.data.summary import dropouts_text
from medspt.evaluation.comparisons import (
    comparison_table,
    spt_answer,
    spt_comparisons,
    summarize,
)
from medspt.evaluation.markdown_tables import TABLE_NOTE, markdown_comparisons, markdown_table
from medspt.evaluation.plots import plot_accuracy_vs_depth, plot_gain_vs_depth
from medspt.evaluation.probes import probe_table_markdown
from medspt.evaluation.report_text import column_notes, config_notes
from medspt.evaluation.result_files import per_class_markdown, write_oof_files
from medspt.evaluation.versus import versus_markdown

__all__ = ["summary_markdown", "write_results"]


def summary_markdown(table: pd.DataFrame, metric: str, explain: bool = False) -> str:
    """The summary table as markdown; ``explain``: with the configurations and columns
    in words (as ``summary.md`` has them)."""
    text = markdown_table(table, metric)
    if not explain:
        return text + "\n" + TABLE_NOTE + "\n"
    header = [c.strip() for c in text.splitlines()[0].strip("|").split("|")]
    header = ["mean ± std" if "mean ± std" in c else c for c in header] + ["chance"]
    return "\n".join(
        [
            text.rstrip(),
            "",
            *[f"- {note}" for note in config_notes(table["config"])],
            "",
            *column_notes(header),
            "",
            "How the tests work: " + TABLE_NOTE,
            "",
        ]
    )


def write_results(
    results: pd.DataFrame,
    out: str | Path,
    metric: str = "balanced_accuracy",
    title: str | None = None,
) -> pd.DataFrame:
    """Write an evaluation into folder ``out``, as ``medspt evaluate --out`` does.

    Parameters
    ----------
    results : Results
        What :func:`medspt.evaluate` or :func:`medspt.compare` returned.
    out : str or Path
        Folder (created if needed). It receives ``results.csv`` (one row per fit),
        ``summary.md`` (the table, the answer in words, the paired answer against each
        baseline, and what cutting the table into windows left out or split),
        ``comparisons.md``, ``per_class.md``, ``probes.md`` (when the probes ran),
        ``accuracy_vs_depth.png``, ``gain_vs_depth.png`` and the out-of-fold files
        of :func:`medspt.evaluation.result_files.write_oof_files` (predictions, subjects,
        confusion matrices and their figures).
    metric : str, default="balanced_accuracy"
    title : str, optional
        Title of the accuracy figure.

    Returns
    -------
    DataFrame
        The summary table (:func:`medspt.summarize`).
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    results.to_csv(out / "results.csv", index=False)
    write_oof_files(results, out)  # predictions, subjects, confusion, per class, figures
    table = summarize(results, metric)
    comparisons = comparison_table(results, metric=metric)
    answer = spt_answer(results, metric, comparisons)
    # what cutting the table into windows left out or split, when evaluate knows it
    dropouts = dropouts_text(getattr(results, "dropped", None))
    (out / "summary.md").write_text(
        summary_markdown(table, metric, explain=True)
        + "\n"  # the answer is a paragraph of its own
        + answer
        + "\n"
        + versus_markdown(results, metric, comparisons)
        + (f"\nDropouts in the data: {dropouts}; nothing was filled in.\n" if dropouts else "")
    )
    (out / "comparisons.md").write_text(markdown_comparisons(comparisons, metric))
    if getattr(results, "predictions", None) is not None:
        (out / "per_class.md").write_text(per_class_markdown(results.per_class))
    if getattr(results, "probes", None) is not None:
        (out / "probes.md").write_text(probe_table_markdown(results.probes))
    plot_accuracy_vs_depth(table, out / "accuracy_vs_depth.png", metric, title)
    plot_gain_vs_depth(
        spt_comparisons(results, metric, comparisons), out / "gain_vs_depth.png", metric
    )
    return table
