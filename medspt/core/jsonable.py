"""Numpy values to plain JSON (model files, study attributes, reports)."""

from __future__ import annotations

import numpy as np

__all__ = ["to_jsonable"]


def to_jsonable(value):
    """Numpy scalars/arrays to plain Python, recursively; NaN and infinities become None."""
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return [to_jsonable(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        return to_jsonable(value.item())  # numpy NaN/inf become None too
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value
