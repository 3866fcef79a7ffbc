"""Which columns of a long DataFrame are signal channels, and are they usable.

Shared by windowing (:func:`medspt.data.windowset.make_windows`) and the frame-level filters
(:mod:`medspt.data.preprocess`), so that both infer the same channels and refuse the same
columns with the same messages. Imports nothing from medspt but its errors.

* :func:`infer_channels` and :func:`classify_columns`: numeric columns are channels;
  booleans, dates and columns of words are left out (with the reason); a column of
  mostly numbers with some text, or of complex numbers, is refused with the fix.
* :func:`validate_channels`: named channels exist (every unknown name reported at once,
  with the column it most likely meant), are real, finite and not all NaN.
* :func:`clock_like_channels`: inferred channels that look like an index or a clock.
* :func:`sparse_or_flat_channels`: channels mostly missing or of one value, with the fix.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from medspt.core.errors import InputError

__all__ = [
    "CHANNELS_HINT",
    "check_column",
    "classify_columns",
    "clock_like_channels",
    "MOSTLY_MISSING",
    "complex_message",
    "flat_channel_message",
    "infer_channels",
    "sparse_or_flat_channels",
    "text_problem",
    "unknown_channels_message",
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


# a number written with a decimal comma, as spreadsheets in much of Europe save them:
# "0,081", "-12,5", ",5" (not "1,234.5", whose comma separates thousands)
_DECIMAL_COMMA = re.compile(r"^\s*[+-]?\d*,\d+(?:[eE][+-]?\d+)?\s*$")
# what may as well be a thousands separator: "1,000", "-12,500"
_THOUSANDS = re.compile(r"^\s*[+-]?[1-9]\d{0,2},\d{3}\s*$")


def _decimal_comma_numbers(vals: pd.Series) -> pd.Series:
    """The values of ``vals`` (text) written with a decimal comma, as numbers; NaN for
    every other value."""
    text = vals.astype(str)
    comma = text.str.match(_DECIMAL_COMMA)
    return pd.to_numeric(text.where(comma).str.replace(",", ".", regex=False), errors="coerce")


def _shown(vals: pd.Series, limit: int = 3) -> str:
    """``'n/a' (row position 3), ...`` for the first ``limit`` values, and how many more."""
    shown = ", ".join(f"{v!r} (row position {i})" for i, v in vals.iloc[:limit].items())
    return shown + (f" and {len(vals) - limit} more" if len(vals) > limit else "")


def text_problem(col: str, s: pd.Series) -> str | None:
    """What is wrong with a text column whose values are mostly numbers, with the fix (a
    phrase to follow the column's name), else None.

    A column of words, such as a condition name, is simply not a signal (None); one of
    numbers stored as text, written with a decimal comma (``"0,081"``), or of numbers
    with a few entries such as ``"n/a"``, was meant as a signal.
    """
    vals, conv = _text_values(s)
    if len(vals) == 0:
        return None
    comma = _decimal_comma_numbers(vals[conv.isna()]).reindex(vals.index)
    if comma.notna().any() and (conv.notna() | comma.notna()).mean() >= 0.5:
        return _decimal_comma_problem(col, s, vals, comma, conv.notna() | comma.notna())
    if conv.notna().mean() < 0.5:
        return None
    bad = vals[conv.isna()]
    if len(bad) == 0:
        return (
            f"holds numbers stored as text (dtype {s.dtype}); convert it with "
            f"df[{col!r}] = pd.to_numeric(df[{col!r}]), or leave it out with channels=[...] "
            "naming the signal columns"
        )
    return (
        f"is mostly numbers ({int(conv.notna().sum())} of {len(vals)} values) but also "
        f"holds text: {_shown(bad)}. Convert it so that the text becomes missing values: "
        f"df[{col!r}] = pd.to_numeric(df[{col!r}], errors='coerce'), or leave it out with "
        "channels=[...] naming the signal columns"
    )


def _decimal_comma_problem(
    col: str, s: pd.Series, vals: pd.Series, comma: pd.Series, numeric: pd.Series
) -> str:
    """A column of numbers written with a decimal comma, as text: a sample, and the two
    fixes (read the file again, or convert the column)."""
    sample = vals[comma.notna()]
    thousands = sample.astype(str).str.match(_THOUSANDS)
    if not thousands.all():  # show a value no one reads as thousands ("1,000")
        sample = sample[~thousands]
    bad = vals[~numeric]
    # .str only works when every value is text; a column mixing floats and text needs
    # astype(str) first, or its floats would silently become NaN
    text = f"df[{col!r}]" + ("" if all(isinstance(v, str) for v in vals) else ".astype(str)")
    also = f"; it also holds text that is not a number: {_shown(bad)}" if len(bad) else ""
    convert = (
        f'pd.to_numeric({text}.str.replace(",", "."), errors=\'coerce\')'
        if len(bad)
        else f'{text}.str.replace(",", ".").astype(float)'
    )
    # every value like "1,000": the commas may separate thousands instead
    either = ' (or thousands=",", if the commas separate thousands)' if thousands.all() else ""
    return (
        f"holds numbers written with a decimal comma, stored as text (dtype {s.dtype}), "
        f"e.g. {_shown(sample.iloc[:1])}{also}. Read the file with pd.read_csv(..., "
        f'decimal=","){either}, or convert the column: df[{col!r}] = {convert}'
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


def _spaces(text: str) -> str:
    """``a trailing space``, ``2 leading spaces``, ``a leading tab and a trailing space``:
    the whitespace around ``text``, in words ('' when there is none)."""

    def words(ws: str, where: str) -> str:
        if set(ws) == {" "}:
            return f"a {where} space" if len(ws) == 1 else f"{len(ws)} {where} spaces"
        if set(ws) == {"\t"}:
            return f"a {where} tab" if len(ws) == 1 else f"{len(ws)} {where} tabs"
        return f"{where} whitespace {ws!r}"

    lead = text[: len(text) - len(text.lstrip())]
    trail = text[len(text.rstrip()) :]
    parts = [words(ws, where) for ws, where in ((lead, "leading"), (trail, "trailing")) if ws]
    return " and ".join(parts)


def _did_you_mean(name: str, columns: list[str]) -> str:
    """`` (did you mean 'EDA'? it has a trailing space)`` for a name that is not a column:
    the column it most likely means, and how the two differ when only in whitespace or
    case; '' when no column is close."""

    def bare(text: str) -> str:
        return text.strip().casefold()

    same = [c for c in columns if c.strip() == name.strip()]
    if same:
        c = same[0]
        if _spaces(name) and not _spaces(c):
            return f" (did you mean {c!r}? it has {_spaces(name)})"
        if _spaces(c) and not _spaces(name):
            return (
                f" (did you mean {c!r}? the column's name has {_spaces(c)}; strip the names "
                "with df.columns = df.columns.str.strip())"
            )
        return f" (did you mean {c!r}? they differ in the spaces around them)"
    folded = [c for c in columns if bare(c) == bare(name)]
    if folded:
        c = folded[0]
        extra = f", and it has {_spaces(name)}" if _spaces(name) and not _spaces(c) else ""
        return f" (did you mean {c!r}? the upper and lower case differ{extra})"
    by_bare = {bare(c): c for c in reversed(columns)}  # the first column wins a tie
    close = difflib.get_close_matches(bare(name), list(by_bare), n=2, cutoff=0.6)
    if close:
        return f" (did you mean {' or '.join(repr(by_bare[c]) for c in close)}?)"
    return ""


def unknown_channels_message(df: pd.DataFrame, channels: Sequence[str]) -> str | None:
    """Every name in ``channels`` that is not a column of ``df``, each with the column it
    most likely means (whitespace and case included), and the columns there are; None
    when every name is a column."""
    missing = [c for c in channels if c not in df.columns]
    if not missing:
        return None
    columns = list(map(str, df.columns))
    listed = ", ".join(f"{c!r}{_did_you_mean(str(c), columns)}" for c in missing)
    what = (
        "a name that is not a column" if len(missing) == 1
        else f"{len(missing)} names that are not columns"
    )  # fmt: skip
    return (
        f"channels={list(channels)!r} has {what} of the DataFrame: {listed}. The "
        f"DataFrame's columns: {columns!r}"
    )


def validate_channels(df: pd.DataFrame, channels: list[str]) -> None:
    """Refuse channels that are absent (all such names at once), complex, not numeric
    (booleans included), contain infinite values or are entirely missing, naming the
    fix."""
    unknown = unknown_channels_message(df, channels)
    if unknown is not None:
        raise InputError(unknown)
    for c in channels:
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
                else:
                    vals = _text_values(s)[0]
                    if len(vals):
                        hint = (
                            f": it holds text such as {_shown(vals.iloc[:1])}, not numbers; "
                            "name only signal columns in channels=[...]"
                        )
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


#: A channel missing in more than this share of the frame's rows gets a warning.
MOSTLY_MISSING = 0.5


def sparse_or_flat_channels(df: pd.DataFrame, channels: list[str]) -> list[tuple[str, str, str]]:
    """Channels that carry little: missing (NaN) in more than :data:`MOSTLY_MISSING` of
    the rows, or one value in every row. Each as ``(channel, kind, message)``, ``kind``
    ``"missing"`` or ``"flat"``, the message naming the share missing or the value, and
    the fix: ``channels=[...]`` without it.

    Channels must be numeric and not entirely missing (:func:`validate_channels`).
    """
    found = []
    for c in channels:
        v = df[c].to_numpy(dtype=float)
        others = [o for o in channels if o != c]
        fix = (
            f"to leave it out, pass channels={others!r}"
            if others
            else "it is the only channel: check how the data were read"
        )
        missing = np.isnan(v)
        share = float(missing.mean())
        if share > MOSTLY_MISSING:
            found.append((c, "missing", (
                f"channel {c!r} is missing (NaN) in {share:.0%} of the rows "
                f"({int(missing.sum()):,} of {len(v):,}); missing values are never filled "
                "in, so most of its windows carry gaps. If it should be complete, check how "
                "it was read (a sensor at a slower rate merged onto the others' timestamps "
                f"leaves NaN between its samples); {fix}"
            )))  # fmt: skip
        lo, hi = np.nanmin(v), np.nanmax(v)
        if lo == hi:
            found.append((c, "flat", flat_channel_message(c, float(lo), "row", fix)))
    return found


def flat_channel_message(channel: str, value: float, where: str, fix: str) -> str:
    """Warning for a channel of one value in every ``where`` (row, training window)."""
    return (
        f"channel {channel!r} has the same value ({value:g}) in every {where} where it is "
        f"recorded: it carries no information for the model; {fix}"
    )
