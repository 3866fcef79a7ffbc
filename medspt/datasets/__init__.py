"""Loaders for the public datasets of the SPT study, and the protocol presets.

Each loader returns medspt's long DataFrame (one row per sample: ``subject``,
``recording``, ``time``, ``label``, channel columns); subject metadata travels in
``df.attrs["subjects"]`` as ``{column: [values]}`` (``subject_table(df)`` rebuilds it).
"""

from medspt.datasets.camargo import check_camargo, load_camargo, load_camargo_subjects
from medspt.datasets.download import download
from medspt.datasets.gaitpd import load_gaitpd, load_gaitpd_demographics, subject_table
from medspt.datasets.noneeg import load_noneeg
from medspt.datasets.protocols import Protocol, protocol
from medspt.datasets.registry import DATASETS, get_info

__all__ = [
    "load_gaitpd",
    "load_gaitpd_demographics",
    "load_noneeg",
    "load_camargo",
    "load_camargo_subjects",
    "check_camargo",
    "subject_table",
    "protocol",
    "Protocol",
    "download",
    "DATASETS",
    "get_info",
]
