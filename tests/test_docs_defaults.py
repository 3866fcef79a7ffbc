"""Defaults quoted in the docs equal the code's.

A page that says "`normalize=True` (the default)" while the code's default is
``"instance"`` teaches the reader the wrong model. Every ```name=value``` that the text
calls a default (``(the default)``, ``(default)``, ``, the default``, ``(also the
default)``) is checked against the defaults of :class:`medspt.SPTClassifier` and of the
public functions that take a parameter of that name; the training floor quoted as "at
least N optimizer steps" against ``min_steps``.
"""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

import medspt

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
# `name=value` followed, within a few words and no sentence break, by "default"
QUOTED = re.compile(r"`(?P<name>[a-z_]+)=(?P<value>[^`]+)`[^.;:\n`]{0,16}\bdefault\b")
STEPS = re.compile(r"at\s+least\s+(?P<n>[\d,]+)\s+optimizer\s+steps")


def _public_callables() -> list:
    """The estimator and every public function of medspt's modules a user calls."""
    import medspt.api
    import medspt.evaluation.diagnostics
    import medspt.evaluation.probes
    import medspt.study

    found = [medspt.SPTClassifier]
    for module in (medspt, medspt.api, medspt.study, medspt.evaluation.diagnostics,
                   medspt.evaluation.probes):  # fmt: skip
        for name in dir(module):
            obj = getattr(module, name)
            if not name.startswith("_") and (inspect.isfunction(obj) or inspect.isclass(obj)):
                found.append(obj)
    return found


def _defaults() -> dict[str, list]:
    """Parameter name -> the defaults it has in medspt's public callables."""
    out: dict[str, list] = {}
    for obj in _public_callables():
        try:
            sig = inspect.signature(obj)
        except (TypeError, ValueError):
            continue
        for p in sig.parameters.values():
            if p.default is not inspect.Parameter.empty:
                out.setdefault(p.name, []).append(p.default)
    return out


def _quotes() -> list[tuple[str, int, str, str]]:
    rows = []
    for page in PAGES:
        for i, line in enumerate(page.read_text().splitlines(), 1):
            for m in QUOTED.finditer(line):
                rows.append((page.name, i, m["name"], m["value"]))
    return rows


def test_the_pages_quote_defaults():
    # the scan finds what it is meant to find (a regex that matches nothing passes forever)
    names = {name for _, _, name, _ in _quotes()}
    assert {"normalize", "window_stats", "min_steps", "label_smoothing"} <= names


@pytest.mark.parametrize(("page", "line", "name", "value"), _quotes())
def test_quoted_default_is_the_code_default(page, line, name, value):
    defaults = _defaults()
    assert name in defaults, (
        f"docs/{page}:{line} calls `{name}={value}` a default, but no public callable of "
        "medspt has a parameter of that name"
    )
    literal = ast.literal_eval(value)
    assert any(literal == d and type(literal) is type(d) for d in defaults[name]), (
        f"docs/{page}:{line} says `{name}={value}` is the default; the code's default is "
        f"{' or '.join(sorted({repr(d) for d in defaults[name]}))}"
    )


def test_training_floor_quoted_as_in_the_code():
    floor = medspt.SPTClassifier().min_steps
    quoted = [
        (page.name, int(m["n"].replace(",", "")))
        for page in PAGES
        for m in STEPS.finditer(page.read_text())
    ]
    assert quoted, "no page states the training floor any more: drop this test"
    wrong = [(p, n) for p, n in quoted if n != floor]
    assert not wrong, f"pages quote a floor other than min_steps={floor}: {wrong}"
