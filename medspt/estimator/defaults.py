"""The package's frozen default: :class:`~medspt.SPTClassifier`'s settings and their hash.

Every result that reports "the default model" names the hash of the settings it ran with
(``defaults_hash()``: the first 8 hex digits of the SHA-1 of ``SPTClassifier().get_params()``
as sorted JSON). ``FROZEN_HASH`` is the default as it was declared frozen (issue 59, at
the commit that added this module): nothing changes the default without a declared
selection round, and ``tests/test_defaults_frozen.py`` fails when the code's defaults and
``FROZEN_HASH`` part ways. Its history -- which selection round saw which test results --
is told in ``docs/concepts.md`` ("How the defaults were chosen").
"""

from __future__ import annotations

import hashlib
import json

from medspt.estimator.classifier import SPTClassifier

__all__ = ["FROZEN_HASH", "FROZEN_AT", "default_params", "params_json", "defaults_hash"]

# The default of rounds 1-7 of benchmarks/select_defaults.py and select_model.py (conv
# tokens, 1,500-step floor, window statistics, five members below 300 windows), frozen.
FROZEN_HASH = "8b5a2958"
FROZEN_AT = "issue 59 (2026-12-07)"


def default_params(overrides: dict | None = None) -> dict:
    """Every :class:`~medspt.SPTClassifier` parameter at its default, ``overrides``
    applied."""
    return SPTClassifier(**(overrides or {})).get_params()


def params_json(overrides: dict | None = None) -> str:
    """:func:`default_params` as sorted JSON: what a result row records, so that a row
    under other settings is never taken for the same run."""
    return json.dumps(default_params(overrides), sort_keys=True, default=str)


def defaults_hash(overrides: dict | None = None) -> str:
    """The short hash of :func:`params_json` (``FROZEN_HASH`` without ``overrides``)."""
    return hashlib.sha1(params_json(overrides).encode()).hexdigest()[:8]
