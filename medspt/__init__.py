"""medspt: self-pretraining of Transformers for medical time-series classification.

>>> import medspt
>>> clf = medspt.fit_spt(df)                       # long DataFrame -> fitted classifier
>>> results = medspt.evaluate(df, cv=5)            # subject-wise CV, scratch vs SPT
>>> medspt.compare(df)                             # the default model against MiniRocket
"""

from medspt import attention as _attention  # noqa: F401  (registers attention="hierarchical")
from medspt._version import __version__
from medspt.api import comparison_table, evaluate, fit_spt, summarize
from medspt.core.splits import fold_split, subject_folds
from medspt.data import WindowSet, from_arrays, make_windows
from medspt.errors import InputError, ModelFileError
from medspt.estimator import FramePredictions, SPTClassifier
from medspt.persistence import load
from medspt.versus import compare

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
