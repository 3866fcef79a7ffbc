"""medspt: self-pretraining of Transformers for medical time-series classification.

>>> import medspt
>>> clf = medspt.fit_spt(df)                       # long DataFrame -> fitted classifier
>>> results = medspt.evaluate(df, cv=5)            # subject-wise CV, scratch vs SPT
>>> medspt.compare(df)                             # the default model against MiniRocket

The public names load on first use (PyTorch with the first model), so that ``medspt --help``
and commands that need no model start at once.
"""

from typing import TYPE_CHECKING

from medspt import _moved
from medspt._version import __version__
from medspt.core.lazy import lazy_exports

if TYPE_CHECKING:  # what the lazy names are, for readers and type checkers
    from medspt.api import comparison_table, evaluate, fit_spt, summarize
    from medspt.core.errors import InputError, ModelFileError
    from medspt.core.splits import fold_split, subject_folds
    from medspt.data.windowset import WindowSet, from_arrays, make_windows
    from medspt.estimator.classifier import FramePredictions, SPTClassifier
    from medspt.estimator.persistence import load
    from medspt.evaluation.report_folder import write_results
    from medspt.evaluation.versus import compare

_EXPORTS = {
    "SPTClassifier": "medspt.estimator.classifier",
    "FramePredictions": "medspt.estimator.classifier",
    "WindowSet": "medspt.data.windowset",
    "fit_spt": "medspt.api",
    "evaluate": "medspt.api",
    "compare": "medspt.evaluation.versus",
    "write_results": "medspt.evaluation.report_folder",
    "summarize": "medspt.api",
    "comparison_table": "medspt.api",
    "subject_folds": "medspt.core.splits",
    "fold_split": "medspt.core.splits",
    "make_windows": "medspt.data.windowset",
    "from_arrays": "medspt.data.windowset",
    "load": "medspt.estimator.persistence",
    "InputError": "medspt.core.errors",
    "ModelFileError": "medspt.core.errors",
}
__all__ = [
    "__version__",
    "SPTClassifier",
    "FramePredictions",
    "WindowSet",
    "fit_spt",
    "evaluate",
    "compare",
    "write_results",
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
_moved.install()  # old module paths (medspt.model, ...) work for one more release
