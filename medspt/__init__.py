"""medspt: self-pretraining of Transformers for medical time-series classification.

>>> import medspt
>>> clf = medspt.fit_spt(df)                       # long DataFrame -> fitted classifier
>>> results = medspt.evaluate(df, cv=5)            # subject-wise CV, scratch vs SPT
>>> medspt.compare(df)                             # the default model against MiniRocket

The public names load on first use (PyTorch with the first model), so that ``medspt --help``
and commands that need no model start at once.
"""

from typing import TYPE_CHECKING

from medspt._version import __version__
from medspt.core.lazy import lazy_exports

if TYPE_CHECKING:  # what the lazy names are, for readers and type checkers
    from medspt.api import comparison_table, evaluate, fit_spt, summarize
    from medspt.core.splits import fold_split, subject_folds
    from medspt.data import WindowSet, from_arrays, make_windows
    from medspt.errors import InputError, ModelFileError
    from medspt.estimator import FramePredictions, SPTClassifier
    from medspt.persistence import load
    from medspt.versus import compare

_EXPORTS = {
    "SPTClassifier": "medspt.estimator",
    "FramePredictions": "medspt.estimator",
    "WindowSet": "medspt.data",
    "fit_spt": "medspt.api",
    "evaluate": "medspt.api",
    "compare": "medspt.versus",
    "summarize": "medspt.api",
    "comparison_table": "medspt.api",
    "subject_folds": "medspt.core.splits",
    "fold_split": "medspt.core.splits",
    "make_windows": "medspt.data",
    "from_arrays": "medspt.data",
    "load": "medspt.persistence",
    "InputError": "medspt.errors",
    "ModelFileError": "medspt.errors",
}
__all__ = [
    "__version__",
    "SPTClassifier",
    "FramePredictions",
    "WindowSet",
    "fit_spt",
    "evaluate",
    "compare",
    "summarize",
    "comparison_table",
    "subject_folds",
    "fold_split",
    "make_windows",
    "from_arrays",
    "load",
    "InputError",
    "ModelFileError",
]
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
