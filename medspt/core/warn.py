"""The one way medspt warns its user: at the user's own line, once per call.

Two things got in a user's way: a warning pointing at a line inside medspt (the user's
own call is what they can change), and the same warning repeated because one
``evaluate`` cuts windows, fits folds and refits, each of which checks the data again.

* :func:`warn` issues a warning at the first frame outside the medspt package (the
  user's call site), whatever the depth of the medspt code that noticed the problem.
* :func:`once_per_call` (a decorator) and :func:`warnings_once` (a context manager) open
  a scope around a top-level call (``fit_spt``, ``evaluate``, ``compare``,
  ``make_windows``, ``SPTClassifier.fit`` and ``predict``): inside it each distinct
  warning is shown once. Scopes nest: a call made inside another one (``fit_spt`` cuts
  windows with ``make_windows``) shares the outer scope. Outside any scope every warning
  is shown (Python's own warning filters still apply).

Imports nothing from medspt.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

__all__ = ["once_per_call", "warn", "warnings_once"]

F = TypeVar("F", bound=Callable)

# the keys of the warnings shown in the current top-level call; None outside one
_SHOWN: ContextVar[set | None] = ContextVar("medspt_warnings_shown", default=None)


def _inside_medspt(module: str | None) -> bool:
    return module is not None and (module == "medspt" or module.startswith("medspt."))


def _user_stacklevel() -> int:
    """The ``stacklevel`` of the first frame outside medspt, as seen from the caller of
    :func:`warn` (``warnings.warn`` counts its own caller as level 1)."""
    frame, level = inspect.currentframe(), 0
    # skip this function's frame, then walk up while the code is medspt's own
    while frame is not None and (level == 0 or _inside_medspt(frame.f_globals.get("__name__"))):
        frame, level = frame.f_back, level + 1
    del frame  # a frame held in a local keeps its whole stack alive
    # level 1 is warn() itself, which is also what stacklevel=1 means to warnings.warn
    return level


def warn(
    message: str, category: type[Warning] = UserWarning, *, key: Hashable | None = None
) -> None:
    """Warn at the user's call site, once per top-level call.

    Parameters
    ----------
    message : str
        The text: what was found, where (column, argument, subject) and the fix.
    category : Warning subclass
        ``UserWarning`` unless the warning is about an API (``DeprecationWarning``).
    key : hashable, optional
        What makes two warnings the same one inside a scope; default the category and
        the text. Two checks that word the same finding differently (on the frame and
        again on the windows cut from it) share a key, so that only the first shows.
    """
    shown = _SHOWN.get()
    if shown is not None:
        key = (category, message) if key is None else key
        if key in shown:
            return
        shown.add(key)
    warnings.warn(message, category, stacklevel=_user_stacklevel())


@contextmanager
def warnings_once() -> Iterator[None]:
    """A scope in which each distinct medspt warning is shown once (nested scopes share
    the outermost one)."""
    if _SHOWN.get() is not None:
        yield
        return
    token = _SHOWN.set(set())
    try:
        yield
    finally:
        _SHOWN.reset(token)


def once_per_call(function: F) -> F:
    """Decorate a top-level function or method: its warnings are shown once per call."""

    @functools.wraps(function)
    def call(*args, **kwargs):
        with warnings_once():
            return function(*args, **kwargs)

    return call  # type: ignore[return-value]
