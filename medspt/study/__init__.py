"""The capacity-versus-pretraining study: Optuna studies, workers, dashboard, reports.

>>> study = run_study("demo", depths=(1, 2), maskings=("span",), storage="sqlite:///s.db")
>>> write_report(study, "report/")
"""

from medspt.study.dashboard import refresh_note, serve
from medspt.study.report import capacity_table, results_frame, write_report
from medspt.study.runner import Cell, grid_cells, load_study_data, run_study, run_worker
from medspt.study.storage import make_storage

__all__ = [
    "Cell",
    "capacity_table",
    "grid_cells",
    "load_study_data",
    "make_storage",
    "refresh_note",
    "results_frame",
    "run_study",
    "run_worker",
    "serve",
    "write_report",
]
