"""The capacity-versus-pretraining study: Optuna studies, workers, dashboard, reports.

>>> study = run_study("demo", depths=(1, 2), maskings=("span",), storage="sqlite:///s.db")
>>> write_report(study, "report/")

The public names load on first use, so that ``medspt study report`` does not load the
model (PyTorch) to read stored results.
"""

from typing import TYPE_CHECKING

from medspt.core.lazy import lazy_exports

if TYPE_CHECKING:  # what the lazy names are, for readers and type checkers
    from medspt.study.compaction import compact_storage
    from medspt.study.dashboard import refresh_note, serve
    from medspt.study.data import load_study_data
    from medspt.study.grid import Cell, grid_cells
    from medspt.study.refit import refit_study
    from medspt.study.report import capacity_table, results_frame, write_report
    from medspt.study.runner import run_study, run_worker
    from medspt.study.storage import make_storage

_EXPORTS = {
    "compact_storage": "medspt.study.compaction",
    "refresh_note": "medspt.study.dashboard",
    "serve": "medspt.study.dashboard",
    "load_study_data": "medspt.study.data",
    "Cell": "medspt.study.grid",
    "grid_cells": "medspt.study.grid",
    "refit_study": "medspt.study.refit",
    "capacity_table": "medspt.study.report",
    "results_frame": "medspt.study.report",
    "write_report": "medspt.study.report",
    "run_study": "medspt.study.runner",
    "run_worker": "medspt.study.runner",
    "make_storage": "medspt.study.storage",
}
__all__ = [
    "Cell",
    "capacity_table",
    "compact_storage",
    "grid_cells",
    "load_study_data",
    "make_storage",
    "refit_study",
    "refresh_note",
    "results_frame",
    "run_study",
    "run_worker",
    "serve",
    "write_report",
]
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
