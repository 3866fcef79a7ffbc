"""The note optuna-dashboard shows beside a study: the capacity table as it stands.

Built from a study's results alone (no optuna-dashboard, no worker), so that the text
can be read and tested where the dashboard is not installed.
"""

from __future__ import annotations

import pandas as pd

from medspt.evaluation.markdown_tables import markdown_table
from medspt.study.grid import study_cells

__all__ = ["capacity_note"]


def capacity_note(study_name: str, attrs: dict, results: pd.DataFrame, table: pd.DataFrame) -> str:
    """Markdown for the dashboard: how many cells are done, the capacity ``table``
    (:func:`medspt.study.capacity_table` of ``results``) and how to write the full
    report. ``attrs`` is the study's ``medspt`` user attribute."""
    metric = attrs.get("metric", "balanced_accuracy")
    n_cells = len(results.groupby(["depth", "config", "seed"]))
    total = len(study_cells(attrs)) if attrs.get("grid") else n_cells
    return (
        f"## Capacity vs pretraining — {n_cells} of {total} cells done\n\n"
        f"{metric} on held-out subjects (mean ± std over folds × seeds); gain = paired "
        "difference to scratch at the same depth; seeds averaged, then tested over "
        "subjects (sign-flip permutation, 95 % bootstrap CI) or over folds where no "
        "predictions were kept; Holm across the table.\n\n"
        + markdown_table(table, metric)
        + "\nFull report: `medspt study report --storage URL --study "
        + f"{study_name} --out DIR`\n"
    )
