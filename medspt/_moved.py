"""Old module paths of medspt, kept working for one release.

The modules moved into layer folders (``medspt.model`` is now ``medspt.nn.model``); an
import of an old path gets the module at its new place, with a ``DeprecationWarning``
that names the new path. ``medspt.data``, ``medspt.estimator`` and ``medspt.cli`` are
packages now and keep their public names themselves.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings

__all__ = ["MOVED", "install"]

MOVED = {  # old path -> new path
    "medspt.errors": "medspt.core.errors",
    "medspt.params": "medspt.core.params",
    "medspt.channels": "medspt.data.channels",
    "medspt.sampling": "medspt.data.sampling",
    "medspt.timing": "medspt.data.timing",
    "medspt.preprocess": "medspt.data.preprocess",
    "medspt.windowing": "medspt.data.windowing",
    "medspt.data_summary": "medspt.data.summary",
    "medspt.synthetic": "medspt.data.synthetic",
    "medspt.model": "medspt.nn.model",
    "medspt.attention": "medspt.nn.attention",
    "medspt.kernels": "medspt.nn.kernels",
    "medspt.masking": "medspt.nn.masking",
    "medspt.augment": "medspt.nn.augment",
    "medspt.training": "medspt.nn.training",
    "medspt.auto": "medspt.estimator.auto",
    "medspt.model_file": "medspt.estimator.model_file",
    "medspt.persistence": "medspt.estimator.persistence",
    "medspt.metrics": "medspt.estimator.metrics",
    "medspt.configs": "medspt.evaluation.configs",
    "medspt.results": "medspt.evaluation.results",
    "medspt.stats": "medspt.evaluation.statistics",
    "medspt.choice": "medspt.evaluation.choice",
    "medspt.comparisons": "medspt.evaluation.comparisons",
    "medspt.selection": "medspt.evaluation.selection",
    "medspt.markdown_tables": "medspt.evaluation.markdown_tables",
    "medspt.report_text": "medspt.evaluation.report_text",
    "medspt.plots": "medspt.evaluation.plots",
    "medspt.result_files": "medspt.evaluation.result_files",
    "medspt.probes": "medspt.evaluation.probes",
    "medspt.diagnostics": "medspt.evaluation.diagnostics",
    "medspt.versus": "medspt.evaluation.versus",
    "medspt.cli_args": "medspt.cli.args",
    "medspt.cli_messages": "medspt.cli.messages",
    # tiny modules merged into their owners
    "medspt.core.durations": "medspt.data.windowing",
    "medspt.study.note": "medspt.study.dashboard",
    # command-line modules gathered in the cli layer
    "medspt.study.cli": "medspt.cli.study",
    "medspt.datasets.cli": "medspt.cli.datasets",
}


class _MovedLoader(importlib.abc.Loader):
    """Hands out the module at its new path under the old name."""

    def create_module(self, spec):
        new = MOVED[spec.name]
        warnings.warn(
            f"{spec.name} moved to {new}; import it from there (the old path goes in the "
            "next release)",
            DeprecationWarning,
            stacklevel=2,
        )
        module = importlib.import_module(new)
        self._own_spec = module.__spec__  # the import system overwrites it; put it back
        return module

    def exec_module(self, module) -> None:  # the new module ran when it was imported
        module.__spec__ = self._own_spec


class _MovedFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, _MovedLoader())


def install() -> None:
    """Make the old paths importable (once per interpreter)."""
    if not any(isinstance(f, _MovedFinder) for f in sys.meta_path):
        sys.meta_path.append(_MovedFinder())
