"""Which columns of a long DataFrame are signal channels, and are they usable.

Shared by windowing (:func:`medspt.data.windowset.make_windows`) and the frame-level filters
(:mod:`medspt.data.preprocess`), so that both infer the same channels and refuse the same
columns with the same messages. Imports nothing from medspt but its errors.

* :func:`infer_channels` and :func:`classify_columns`: numeric columns are channels;
  booleans, dates and columns of words are left out (with the reason); a column of
  mostly numbers with some text, or of complex numbers, is refused with the fix.
* :func:`validate_channels`: named channels exist, are real, finite and not all NaN.
* :func:`clock_like_channels`: inferred channels that look like an index or a clock.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from medspt.core.errors import InputError

__all__ = [
    "CHANNELS_HINT",
    "check_column",
    "classify_columns",
    "clock_like_channels",
    "complex_message",
    "infer_channels",
    "text_problem",
    "validate_channels",
]

#: How to take over from inference; ends every "no channel found" refusal.
CHANNELS_HINT = "pass channels=[...] to choose the signal columns explicitly"

# Names of a CSV's saved index, sample counters and clocks (lower case).
_CLOCK_NAMES = {"index", "idx", "sample", "samples", "timestamp", "time_s", "seconds", "t"}


def check_column(df: pd.DataFrame, col: str, role: str) -> None:
    """Refuse a missing column, listing the columns there are."""
    if col not in df.columns:
        raise InputError(
            f"{role} column {col!r} not found in the DataFrame; available columns: "
            f"{list(map(str, df.columns))!r} (set {role}=... to name yours)"
        )


def complex_message(col: str, role: str = "column") -> str:
    """Refusal for a complex-valued column, with the fix."""
    return (
        f"{role} {col!r} holds complex numbers; pass a real signal, e.g. its magnitude "
        f"df[{col!r}] = np.abs(df[{col!r}]) (or its real and imaginary parts as two channels)"
    )


def _text_values(s: pd.Series) -> tuple[pd.Series, pd.Series]:
    """Non-missing values of a text-like column and their numeric conversion (NaN where a
    value is not a number); both indexed by row position."""
    vals = pd.Series(np.asarray(s, dtype=object)).dropna()
    try:
        conv = pd.to_numeric(vals, errors="coerce")
    except (TypeError, ValueError):  # e.g. lists or other objects in the cells
        conv = pd.Series(np.nan, index=vals.index)
    return vals, conv


def text_problem(col: str, s: pd.Series) -> str | None:
    """What is wrong with a text column whose values are mostly numbers, with the fix (a
    phrase to follow the column's name), else None.

    A column of words, such as a condition name, is simply not a signal (None); one of
    numbers stored as text, or of numbers with a few entries such as ``"n/a"``, was
    meant as a signal.
    """
    vals, conv = _text_values(s)
    if len(vals) == 0 or conv.notna().mean() < 0.5:
        return None
    bad = vals[conv.isna()]
    if len(bad) == 0:
        return (
            f"holds numbers stored as text (dtype {s.dtype}); convert it with "
            f"df[{col!r}] = pd.to_numeric(df[{col!r}]), or leave it out with channels=[...] "
            "naming the signal columns"
        )
    shown = ", ".join(f"{v!r} (row position {i})" for i, v in bad.iloc[:3].items())
    more = f" and {len(bad) - 3} more" if len(bad) > 3 else ""
    return (
        f"is mostly numbers ({int(conv.notna().sum())} of {len(vals)} values) but also "
        f"holds text: {shown}{more}. Convert it so that the text becomes missing values: "
        f"df[{col!r}] = pd.to_numeric(df[{col!r}], errors='coerce'), or leave it out with "
        "channels=[...] naming the signal columns"
    )


def _left_out_reason(name: str, s: pd.Series) -> str | None:
    """Why a column is not a channel (None: it is one); raises for a column that was
    meant as a signal but cannot be one as it is."""
    if pd.api.types.is_bool_dtype(s):
        return "boolean"
    if pd.api.types.is_complex_dtype(s):
        raise InputError(complex_message(name))
    if pd.api.types.is_numeric_dtype(s):
        return None
    if pd.api.types.is_datetime64_any_dtype(s) or pd.api.types.is_timedelta64_dtype(s):
        return f"dates or times (dtype {s.dtype}), not a signal"
    problem = text_problem(name, s)
    if problem is not None:
        raise InputError(f"column {name!r} {problem}")
    vals, conv = _text_values(s)
    if len(vals) == 0:
        return "entirely missing"
    kind = "categorical" if isinstance(s.dtype, pd.CategoricalDtype) else "text"
    example = vals[conv.isna()].iloc[0] if conv.isna().any() else vals.iloc[0]
    return f"not numeric ({kind} such as {example!r})"


def classify_columns(df: pd.DataFrame, skip: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """Inferred channels, and every other column with the reason it was left out.

    Parameters
    ----------
    df : DataFrame
        Long format, one row per sample.
    skip : dict of str to str
        Key columns (subject, label, ...) and the reason they are not channels.

    Returns
    -------
    channels : list of str
        Numeric columns not in ``skip``, in column order.
    left_out : dict of str to str
        Every other column and why (``"boolean"``, ``"not numeric (text such as
        'walk')"``, ...).
    """
    chans: list[str] = []
    left_out: dict[str, str] = {}
    for c in df.columns:
        name = str(c)
        why = skip[c] if c in skip else _left_out_reason(name, df[c])
        if why is None:
            chans.append(name)
        else:
            left_out[name] = why
    return chans, left_out


def infer_channels(df: pd.DataFrame, exclude: Sequence[str | None]) -> list[str]:
    """All numeric columns of ``df`` that are not one of the ``exclude`` columns.

    Boolean, date and text columns (a condition name, ...) are not channels. A text
    column whose values are mostly numbers, or a complex-valued column, is refused with
    the fix: it was most likely meant as a signal.
    """
    skip = {c: "excluded" for c in exclude if c is not None}
    chans, left_out = classify_columns(df, skip)
    if not chans:
        others = {c: why for c, why in left_out.items() if c not in skip}
        raise InputError(
            "found no numeric channel columns in the DataFrame "
            f"(other columns, with why they are not channels: {others!r}); {CHANNELS_HINT}"
        )
    return chans


def clock_like_channels(
    df: pd.DataFrame, channels: list[str], keys: list[str]
) -> tuple[list[str], list[str]]:
    """Channels that look like an index or a clock: position in a recording can leak the
    label.

    Returns
    -------
    named : list of str
        Named like one (a CSV's saved index ``Unnamed: 0``, ``index``, ``timestamp``, ...).
    rising : list of str
        Strictly increasing through every recording (``keys`` columns identify one) of
        more than 10 rows.
    """
    named, rising = [], []
    groups = df.groupby(keys, sort=False).indices.values() if keys else [np.arange(len(df))]
    groups = [g for g in groups if len(g) > 10]
    for c in channels:
        name = str(c).strip().lower()
        if name.startswith("unnamed:") or name in _CLOCK_NAMES:
            named.append(c)
            continue
        v = df[c].to_numpy(dtype=float)
        if groups and all(np.all(np.diff(v[g]) > 0) for g in groups):
            rising.append(c)
    return named, rising


def validate_channels(df: pd.DataFrame, channels: list[str]) -> None:
    """Refuse channels that are absent, complex, not numeric (booleans included),
    contain infinite values or are entirely missing, naming the fix."""
    for c in channels:
        check_column(df, c, "channel")
        s = df[c]
        if pd.api.types.is_complex_dtype(s):
            raise InputError(complex_message(c, "channel"))
        if pd.api.types.is_bool_dtype(s) or not pd.api.types.is_numeric_dtype(s):
            hint = ""
            if pd.api.types.is_bool_dtype(s):
                hint = f"; if it is a 0/1 signal, convert it: df[{c!r}] = df[{c!r}].astype(float)"
            elif s.dtype == object or pd.api.types.is_string_dtype(s):
                problem = text_problem(c, s)
                if problem is not None:
                    hint = f": it {problem}"
            raise InputError(f"channel {c!r} must be numeric, got dtype {s.dtype}{hint}")
        v = s.to_numpy(dtype=float)
        if np.isinf(v).any():
            raise InputError(
                f"channel {c!r} contains {int(np.isinf(v).sum())} infinite values; "
                "replace them with NaN (missing) or finite numbers"
            )
        if np.isnan(v).all():
            raise InputError(
                f"channel {c!r} is entirely missing (all NaN); drop the column "
                f"(df = df.drop(columns=[{c!r}])) or pass channels=[...] without it"
            )
