"""The capacity-versus-pretraining study: Optuna studies, workers, dashboard, reports.

>>> study = run_study("demo", depths=(1, 2), maskings=("span",), storage="sqlite:///s.db")
>>> write_report(study, "report/")
"""

from medspt.study.dashboard import refresh_note, serve
from medspt.study.data import load_study_data
from medspt.study.grid import Cell, grid_cells
from medspt.study.refit import refit_study
from medspt.study.report import capacity_table, results_frame, write_report
from medspt.study.runner import run_study, run_worker
from medspt.study.storage import make_storage

__all__ = [
    "refit_study",
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
