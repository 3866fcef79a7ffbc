"""Parameter rules: every parameter is checked in one place, by one line of a table.

A :class:`Rule` says what a value must be; :func:`check` applies a table of rules
(``{name: Rule}``) to a mapping of values and raises :class:`~medspt.core.errors.InputError`
naming the first bad one. :data:`medspt.nn.model.MODEL_RULES` holds the rules of the model's
shape, which :class:`~medspt.nn.model.ModelConfig` and :class:`~medspt.SPTClassifier` both
use; :data:`medspt.estimator.classifier.ESTIMATOR_RULES` holds those of the training parameters.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from medspt.core.errors import InputError

__all__ = ["Rule", "check", "flag", "integer", "interval", "is_integer", "is_real", "one_of"]


def is_integer(value: Any) -> bool:
    """A Python or numpy integer, not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def is_real(value: Any) -> bool:
    """A Python or numpy real number, not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


@dataclass(frozen=True)
class Rule:
    """What one parameter must be.

    Attributes
    ----------
    ok : callable
        ``ok(value)`` is true for a good value. A ``TypeError`` or ``ValueError`` it
        raises (a string compared with a number) counts as false.
    must : str or callable
        Completes the message ``"<name> must <must>, got <value>"``, e.g. ``"be positive"``;
        a callable returns the text when it depends on a registry that grows.
    """

    ok: Callable[[Any], bool]
    must: str | Callable[[], str]

    def problem(self, name: str, value: Any) -> str | None:
        """The error message for ``value``, or None when it is good."""
        try:
            good = bool(self.ok(value))
        except (TypeError, ValueError):
            good = False
        if good:
            return None
        must = self.must() if callable(self.must) else self.must
        return f"{name} must {must}, got {value!r}"

    def or_auto(self) -> Rule:
        """This rule, or the string ``"auto"`` (a value ``fit`` derives from the data)."""
        must = self.must() if callable(self.must) else self.must
        return Rule(
            lambda v: (isinstance(v, str) and v == "auto") or self.ok(v),
            "be 'auto' or " + must.removeprefix("be "),
        )


def integer(minimum: int = 1) -> Rule:
    """An integer >= ``minimum``."""
    return Rule(lambda v: is_integer(v) and v >= minimum, f"be an integer >= {minimum}")


def interval(text: str, *, none: bool = False) -> Rule:
    """A real number in the interval ``text``, e.g. ``"[0, 1)"``; with ``none`` also None."""
    low, high = (float(bound) for bound in text[1:-1].split(","))
    above = (lambda v: v >= low) if text[0] == "[" else (lambda v: v > low)
    below = (lambda v: v <= high) if text[-1] == "]" else (lambda v: v < high)
    return Rule(
        lambda v: (none and v is None) or (is_real(v) and above(v) and below(v)),
        f"lie in {text}" + (" or be None" if none else ""),
    )


def one_of(choices: tuple | Callable[[], tuple], *, must: str | None = None) -> Rule:
    """One of ``choices``: a tuple, or a callable returning one (a registry that grows).
    ``must`` replaces the default text ``"be one of <choices>"``."""

    def options() -> tuple:
        return tuple(choices()) if callable(choices) else tuple(choices)

    return Rule(lambda v: v in options(), must or (lambda: f"be one of {options()}"))


def flag() -> Rule:
    """True or False (numpy's bools too)."""
    return Rule(lambda v: isinstance(v, (bool, np.bool_)), "be True or False")


def check(values: Mapping[str, Any], rules: Mapping[str, Rule]) -> None:
    """Raise :class:`~medspt.core.errors.InputError` naming the first entry of ``values`` that
    its rule refuses, in the order of ``rules``; values without a rule are not checked."""
    for name, rule in rules.items():
        if name in values:
            problem = rule.problem(name, values[name])
            if problem:
                raise InputError(problem)
