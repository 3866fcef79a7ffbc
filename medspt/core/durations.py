"""Window and stride lengths given in samples (an int) or seconds ("10s")."""

from __future__ import annotations

import numpy as np

from medspt.core.errors import InputError

__all__ = ["to_samples"]


def to_samples(value: float | int | str | None, fs: float | None, name: str) -> int | None:
    """Window/stride given as samples (int), seconds (float or "10s")."""
    if value is None:
        return None
    if isinstance(value, str):
        v = value.strip().lower()
        if not v.endswith("s"):
            raise InputError(f"{name}={value!r}: use an int (samples) or a string like '10s'")
        try:
            seconds = float(v[:-1])
        except ValueError:
            raise InputError(f"{name}={value!r} is not a duration like '10s'") from None
        if fs is None:
            raise InputError(
                f"{name}={value!r} is in seconds, so the sampling rate is needed: pass fs "
                f"(in Hz, e.g. fs=100), give a time column in seconds, or give {name} in "
                "samples (an int)"
            )
        return int(round(seconds * fs))
    if isinstance(value, (bool, np.bool_)):
        raise InputError(f"{name} must be a number of samples, got {value!r}")
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        if float(value).is_integer():
            return int(value)
        raise InputError(
            f"{name}={value!r}: give samples as an int or seconds as a string like '{value}s'"
        )
    raise InputError(f"{name} must be an int (samples) or a string like '10s', got {value!r}")
