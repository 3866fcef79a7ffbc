"""Public names of a package that load on first use (PEP 562).

``import medspt`` should cost no more than Python itself: the command line's ``--help`` and
commands that need no model must not pay for PyTorch, scikit-learn and Numba. A package
lists where each public name lives; the module behind a name is imported the first time the
name is read, and the value is then kept in the package like an ordinary attribute.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, namespace: dict, exports: dict[str, str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``, whose ``exports`` map each public name
    to the module that defines it.

    Parameters
    ----------
    package : str
        The package's name (``__name__``).
    namespace : dict
        The package's ``globals()``: a loaded name is stored there, so later reads are
        plain attribute reads.
    exports : dict of str to str
        Public name -> module (``{"fit_spt": "medspt.api"}``). A name not listed that is a
        submodule of ``package`` (``medspt.datasets``) loads as the submodule.

    Returns
    -------
    tuple of callables
        The module-level ``__getattr__`` and ``__dir__`` of the package.
    """

    def __getattr__(name: str) -> object:
        if name in exports:
            value = getattr(importlib.import_module(exports[name]), name)
        elif not name.startswith("__") and importlib.util.find_spec(f"{package}.{name}"):
            value = importlib.import_module(f"{package}.{name}")
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *exports})

    return __getattr__, __dir__
