"""Loaders for the public datasets of the SPT study, and the protocol presets.

Each loader returns medspt's long DataFrame (one row per sample: ``subject``,
``recording``, ``time``, ``label``, channel columns); subject metadata travels in
``df.attrs["subjects"]`` as ``{column: [values]}`` (``subject_table(df)`` rebuilds it).
The names load on first use, so that ``medspt datasets list`` / ``info`` start at once.
"""

from typing import TYPE_CHECKING

from medspt.core.lazy import lazy_exports

# eager: the function shares its module's name, and a lazy name would be replaced by the
# submodule the first time anything imports medspt.datasets.download
from medspt.datasets.download import download

if TYPE_CHECKING:
    from medspt.datasets._paths import ENV_VAR, find_dataset
    from medspt.datasets.camargo import check_camargo, load_camargo, load_camargo_subjects
    from medspt.datasets.gaitpd import load_gaitpd, load_gaitpd_demographics, subject_table
    from medspt.datasets.noneeg import load_noneeg
    from medspt.datasets.protocols import Protocol, protocol
    from medspt.datasets.registry import DATASETS, get_info

_EXPORTS = {
    "load_gaitpd": "medspt.datasets.gaitpd",
    "load_gaitpd_demographics": "medspt.datasets.gaitpd",
    "load_noneeg": "medspt.datasets.noneeg",
    "load_camargo": "medspt.datasets.camargo",
    "load_camargo_subjects": "medspt.datasets.camargo",
    "check_camargo": "medspt.datasets.camargo",
    "subject_table": "medspt.datasets.gaitpd",
    "protocol": "medspt.datasets.protocols",
    "Protocol": "medspt.datasets.protocols",
    "DATASETS": "medspt.datasets.registry",
    "get_info": "medspt.datasets.registry",
    "find_dataset": "medspt.datasets._paths",
    "ENV_VAR": "medspt.datasets._paths",
}
__all__ = [
    "ENV_VAR",
    "find_dataset",
    "download",
    "load_gaitpd",
    "load_gaitpd_demographics",
    "load_noneeg",
    "load_camargo",
    "load_camargo_subjects",
    "check_camargo",
    "subject_table",
    "protocol",
    "Protocol",
    "DATASETS",
    "get_info",
]
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
