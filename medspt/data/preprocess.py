"""Filtering, resampling and EMG envelopes for whole recordings.

Every function here works on whole recordings, *before* they are cut into windows: a
long FIR filter run on a short window is mostly edge effect (mne warns about it, and the
result is distorted). Filter the long DataFrame first, then call
:func:`medspt.data.windowset.make_windows`.

Frame-level functions (:func:`filter_frame`, :func:`resample_frame`) take medspt's long
DataFrame (see :mod:`medspt.data.windowset`) and process each recording (``by`` columns, default
``("subject", "recording")``) on its own, so nothing bleeds from one recording into the
next. Array-level functions (:func:`filter_array`, :func:`resample_array`,
:func:`emg_envelope`) take one recording as an array with time on ``axis``.

Filtering is done by :func:`mne.filter.filter_data` and :func:`mne.filter.notch_filter`
on plain arrays (float64 in, the input's floating dtype out), never through
``mne.io.RawArray``, so mne's channel types (``misc``, ``gsr``, ``temperature`` are
"non-data" types that filters skip unless ``picks="all"``) play no part. Resampling uses
:func:`scipy.signal.resample_poly` (polyphase, with an anti-aliasing low-pass).

Missing samples (NaN)
---------------------
mne cannot filter NaN. Gaps are filled by linear interpolation between the neighbouring
samples (the first/last valid value is held at the edges), the recording is filtered,
and the gap is set back to NaN: the output has NaN exactly where the input had it. Valid
samples within about half a filter length of a long gap are influenced by the straight
line drawn across it; if that matters, split the recording at long gaps first. A channel
that is entirely NaN in a recording stays NaN.

Short recordings
----------------
A FIR filter longer than the recording cannot be applied faithfully. With
``short="iir"`` (the default) such recordings are filtered with a zero-phase Butterworth
IIR filter of order ``iir_order`` instead (one warning lists how many fell back); with
``short="raise"`` an :class:`~medspt.core.errors.InputError` names the recording. No filter
can do wonders on a short signal: a notch 1 Hz wide or a 0.5 Hz high-pass needs a few
seconds of data whatever its type, so expect residual line noise and edge effects there.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from functools import lru_cache
from typing import Literal

import mne
import numpy as np
import pandas as pd
from scipy.signal import resample_poly

from medspt.core.errors import InputError
from medspt.core.warn import warn
from medspt.data.channels import infer_channels, validate_channels
from medspt.data.sampling import check_fs, infer_fs

__all__ = [
    "DEFAULTS",
    "filter_frame",
    "filter_array",
    "resample_frame",
    "resample_array",
    "emg_envelope",
]

#: Sensible per-dataset settings (all respect Nyquist). ``fs`` is the native rate;
#: ``filter`` holds keyword arguments for :func:`filter_frame`. For ``camargo``,
#: ``filter`` applies to the IMU and goniometer channels at the common 200 Hz rate and
#: ``emg_envelope`` to the raw 1000 Hz EMG (see :func:`emg_envelope`). These are
#: optional clean-up steps; the evaluation protocols (GPD-1, NE-1, CAM-1) do not apply
#: them unless they say so.
DEFAULTS: dict[str, dict] = {
    "gaitpd": {"fs": 100.0, "filter": {"l_freq": None, "h_freq": 20.0}},
    "noneeg": {"fs": 8.0, "filter": {"l_freq": None, "h_freq": 3.0}},
    "camargo": {
        "fs": 200.0,
        "filter": {"l_freq": None, "h_freq": 25.0},
        "emg_fs": 1000.0,
        "emg_envelope": {"band": (20.0, 450.0), "lowpass": 6.0},
    },
}

_VERBOSE = "error"
_RESERVED = ("label",)


# ----------------------------------------------------------------------------- checks


def _check_freq(value: float | None, name: str, fs: float) -> float | None:
    """A cut-off frequency: None (or 0 for l_freq) means "not applied"."""
    if value is None:
        return None
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a frequency in Hz or None, got {value!r}") from None
    if not math.isfinite(v) or v < 0:
        raise InputError(f"{name} must be a positive frequency in Hz, got {value!r}")
    if v == 0:
        return None
    nyq = fs / 2.0
    if v >= nyq:
        raise InputError(
            f"{name}={v:g} Hz is not below the Nyquist frequency fs/2 = {nyq:g} Hz "
            f"(fs={fs:g} Hz); choose {name} < {nyq:g}"
        )
    return v


def _check_band(
    fs: float, l_freq: float | None, h_freq: float | None
) -> tuple[float | None, float | None]:
    lf = _check_freq(l_freq, "l_freq", fs)
    hf = _check_freq(h_freq, "h_freq", fs)
    if lf is not None and hf is not None and lf >= hf:
        raise InputError(
            f"l_freq={lf:g} Hz must be below h_freq={hf:g} Hz for a band-pass "
            "(a band-stop is done with notch=...)"
        )
    return lf, hf


def _check_notch(notch, fs: float) -> np.ndarray | None:
    if notch is None:
        return None
    freqs = np.atleast_1d(np.asarray(notch, dtype=float))
    if freqs.size == 0:
        return None
    nyq = fs / 2.0
    for f in freqs:
        if not np.isfinite(f) or f <= 0 or f >= nyq:
            raise InputError(
                f"notch frequency {f:g} Hz must lie between 0 and the Nyquist frequency "
                f"fs/2 = {nyq:g} Hz (fs={fs:g} Hz)"
            )
    return freqs


def _check_choice(value, name: str, choices: Sequence[str]) -> None:
    if value not in choices:
        raise InputError(f"{name} must be one of {list(choices)!r}, got {value!r}")


# ------------------------------------------------------------------------ filter core


@lru_cache(maxsize=256)
def _fir_length(fs: float, l_freq: float | None, h_freq: float | None) -> int:
    """Length in samples of the FIR filter mne designs for these settings."""
    if l_freq is None and h_freq is None:
        return 0
    h = mne.filter.create_filter(None, fs, l_freq, h_freq, fir_design="firwin", verbose=_VERBOSE)
    return len(h)


@lru_cache(maxsize=64)
def _notch_fir_length(fs: float, freqs: tuple[float, ...]) -> int:
    """Length of mne's FIR notch (band-stop with its default widths, 1 Hz transition)."""
    tb2 = 0.5
    length = 0
    for f in freqs:
        nw = f / 200.0
        lo, hi = f - nw / 2 - tb2, f + nw / 2 + tb2
        if lo <= 0 or hi >= fs / 2:
            continue  # mne will adapt; the IIR fallback check below still applies
        h = mne.filter.create_filter(
            None,
            fs,
            hi,
            lo,
            l_trans_bandwidth=tb2,
            h_trans_bandwidth=tb2,
            fir_design="firwin",
            verbose=_VERBOSE,
        )
        length = max(length, len(h))
    return length


def _fill_nan(x: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Linear interpolation across NaN along the last axis of a 2-D float64 array.

    Returns the filled copy and the NaN mask (None when nothing was missing). Rows that
    are entirely NaN are left NaN (the caller skips them).
    """
    mask = np.isnan(x)
    if not mask.any():
        return x, None
    x = x.copy()
    idx = np.arange(x.shape[-1])
    for j in np.flatnonzero(mask.any(axis=-1)):
        good = ~mask[j]
        if good.any():
            x[j, mask[j]] = np.interp(idx[mask[j]], idx[good], x[j, good])
    return x, mask


def _filter_2d(
    x: np.ndarray,
    fs: float,
    l_freq: float | None,
    h_freq: float | None,
    notch: np.ndarray | None,
    method: str,
    short: str,
    iir_order: int,
    where: str,
) -> tuple[np.ndarray, bool]:
    """Filter ``x`` (C, n) float64; returns (filtered, fell_back_to_iir)."""
    n = x.shape[-1]
    x, mask = _fill_nan(x)
    rows = np.ones(x.shape[0], bool) if mask is None else ~mask.all(axis=-1)
    use = method
    if method == "fir":
        need = _fir_length(fs, l_freq, h_freq)
        if notch is not None:
            need = max(need, _notch_fir_length(fs, tuple(float(f) for f in notch)))
        if need > n:
            if short == "raise":
                raise InputError(
                    f"{where} has {n} samples, fewer than the FIR filter needs ({need} "
                    f"samples at fs={fs:g} Hz); use short='iir' or method='iir', or drop "
                    "the recording"
                )
            use = "iir"
    if n < 2:
        raise InputError(f"{where} has {n} sample(s); at least 2 are needed to filter")
    iir_params = dict(order=iir_order, ftype="butter", output="sos") if use == "iir" else None
    y = x.copy()
    if rows.any():
        data = np.ascontiguousarray(x[rows])
        if l_freq is not None or h_freq is not None:
            data = mne.filter.filter_data(
                data,
                fs,
                l_freq,
                h_freq,
                method=use,
                iir_params=None if iir_params is None else dict(iir_params),
                phase="zero",
                fir_design="firwin",
                verbose=_VERBOSE,
            )
        if notch is not None:
            # mne's IIR notch takes one stop-band at a time; FIR takes them all at once
            for freqs in [notch] if use == "fir" else [[f] for f in notch]:
                data = mne.filter.notch_filter(
                    data,
                    fs,
                    np.asarray(freqs, dtype=float),
                    method=use,
                    iir_params=None if iir_params is None else dict(iir_params),
                    phase="zero",
                    fir_design="firwin",
                    verbose=_VERBOSE,
                )
        y[rows] = data
    if mask is not None:
        y[mask] = np.nan
    return y, use != method


def _out_dtype(dtype) -> np.dtype:
    dtype = np.dtype(dtype)
    return dtype if np.issubdtype(dtype, np.floating) else np.dtype(np.float64)


def _warn_fallback(where: list[str], order: int) -> None:
    if where:
        shown = ", ".join(where[:3]) + (", ..." if len(where) > 3 else "")
        warn(
            f"{len(where)} recording(s) are shorter than the FIR filter ({shown}); they "
            f"were filtered with a zero-phase Butterworth IIR filter of order {order}"
        )


def filter_array(
    x: np.ndarray,
    fs: float,
    l_freq: float | None = None,
    h_freq: float | None = None,
    notch: float | Sequence[float] | None = None,
    *,
    axis: int = -1,
    method: Literal["fir", "iir"] = "fir",
    short: Literal["iir", "raise"] = "iir",
    iir_order: int = 4,
) -> np.ndarray:
    """Zero-phase filter one recording given as an array.

    Parameters
    ----------
    x : array_like
        Signal, time along ``axis`` (any number of other axes).
    fs : float
        Sampling rate in Hz.
    l_freq, h_freq : float or None
        High-pass and low-pass edges in Hz: both for a band-pass, one of them for a
        high-pass (``l_freq``) or low-pass (``h_freq``). Each must be below fs/2.
    notch : float or sequence of float, optional
        Line-noise frequencies to remove (e.g. ``50`` or ``[50, 100]``).
    axis : int
        Time axis.
    method : {"fir", "iir"}
        mne filter type: windowed-sinc FIR (default) or Butterworth IIR (order
        ``iir_order``), both applied forward and backward (zero phase).
    short : {"iir", "raise"}
        What to do when the signal is shorter than the FIR filter (see module notes).
    iir_order : int
        Butterworth order for ``method="iir"`` and for the short-signal fallback.

    Returns
    -------
    ndarray
        Filtered signal, same shape; float input keeps its dtype, integer input gives
        float64. NaN stays NaN (gaps are interpolated only while filtering).
    """
    fs = check_fs(fs)
    lf, hf = _check_band(fs, l_freq, h_freq)
    freqs = _check_notch(notch, fs)
    _check_choice(method, "method", ("fir", "iir"))
    _check_choice(short, "short", ("iir", "raise"))
    arr = np.asarray(x)
    dtype = _out_dtype(arr.dtype)
    if lf is None and hf is None and freqs is None:
        return arr.astype(dtype, copy=True)
    moved = np.moveaxis(arr.astype(np.float64), axis, -1)
    shape = moved.shape
    flat = moved.reshape(-1, shape[-1])
    y, fell_back = _filter_2d(flat, fs, lf, hf, freqs, method, short, iir_order, "the signal")
    if fell_back:
        _warn_fallback(["the signal"], iir_order)
    return np.moveaxis(y.reshape(shape), -1, axis).astype(dtype, copy=False)


# ---------------------------------------------------------------------- frame helpers


def _keys(df: pd.DataFrame, by: str | Sequence[str] | None) -> list[str]:
    """Columns that identify a recording; ``recording`` may be absent (optional)."""
    if by is None:
        return []
    by = [by] if isinstance(by, str) else list(by)
    missing = [c for c in by if c not in df.columns and c != "recording"]
    if missing:
        raise InputError(
            f"column(s) {missing!r} named in by= not found in the DataFrame; available "
            f"columns: {list(map(str, df.columns))!r}"
        )
    return [c for c in by if c in df.columns]


def _channels(
    df: pd.DataFrame, channels: Sequence[str] | None, keys: list[str], time: str | None
) -> list[str]:
    if channels is None:
        channels = infer_channels(df, keys + [time] + list(_RESERVED))
    elif isinstance(channels, str):
        channels = [channels]
    channels = list(channels)
    if not channels:
        raise InputError("channels is empty; name at least one signal column")
    for c in channels:
        if c in keys or c == time:
            raise InputError(f"column {c!r} cannot be both a channel and a key/time column")
    validate_channels(df, channels)
    return channels


def _groups(df: pd.DataFrame, keys: list[str], time: str | None):
    """Yield (key, positional row indices in time order) per recording."""
    n = len(df)
    if keys:
        items = df.groupby(keys, sort=False, dropna=False).indices.items()
    else:
        items = [((), np.arange(n))]
    tvals = None
    if time is not None and time in df.columns:
        if not pd.api.types.is_numeric_dtype(df[time]):
            raise InputError(f"time column {time!r} must be numeric seconds, got {df[time].dtype}")
        tvals = df[time].to_numpy(dtype=float)
    for key, idx in items:
        idx = np.asarray(idx)
        if tvals is not None:
            t = tvals[idx]
            if np.any(np.diff(t) < 0):
                idx = idx[np.argsort(t, kind="stable")]
        yield key, idx


def _describe(keys: list[str], key) -> str:
    if not keys:
        return "the recording"
    key = key if isinstance(key, tuple) else (key,)
    return "recording " + ", ".join(f"{k}={v!r}" for k, v in zip(keys, key))


def _frame_fs(df: pd.DataFrame, time: str | None, keys: list[str]) -> float:
    """Sampling rate inferred from the time column, per recording."""
    if time is None:
        raise InputError("fs is required (no time column to infer it from)")
    return infer_fs(df, time, keys) if keys else infer_fs(df.assign(_k=0), time, ["_k"])


def filter_frame(
    df: pd.DataFrame,
    channels: Sequence[str] | None = None,
    fs: float | None = None,
    l_freq: float | None = None,
    h_freq: float | None = None,
    notch: float | Sequence[float] | None = None,
    by: str | Sequence[str] | None = ("subject", "recording"),
    *,
    time: str | None = "time",
    method: Literal["fir", "iir"] = "fir",
    short: Literal["iir", "raise"] = "iir",
    iir_order: int = 4,
) -> pd.DataFrame:
    """Band-pass, low-pass, high-pass and/or notch filter each recording of a long frame.

    Parameters
    ----------
    df : DataFrame
        medspt's long format, one row per sample.
    channels : sequence of str, optional
        Columns to filter; default: every numeric column that is not a ``by``, ``time``
        or ``label`` column. Other columns are returned unchanged.
    fs : float, optional
        Sampling rate in Hz; inferred from the ``time`` column (median step) if omitted.
    l_freq, h_freq : float or None
        High-pass and low-pass edges in Hz (see :func:`filter_array`). ``h_freq`` (and
        ``l_freq``) must be below fs/2, else an :class:`~medspt.core.errors.InputError` names
        the argument and fs.
    notch : float or sequence of float, optional
        Line-noise frequencies to notch out.
    by : str or sequence of str
        Columns identifying one recording; each is filtered on its own, in ``time``
        order (a missing ``recording`` column is allowed). ``None``: the whole frame is
        one recording.
    time : str or None
        Time column (seconds), used for ordering and to infer ``fs``.
    method, short, iir_order
        See :func:`filter_array` and the module notes on short recordings.

    Returns
    -------
    DataFrame
        A copy with the same index, columns and row order; filtered channels keep a
        floating dtype (integer channels become float64). NaN positions are preserved.
    """
    keys = _keys(df, by)
    time = time if (time is not None and time in df.columns) else None
    chans = _channels(df, channels, keys, time)
    if fs is None:
        fs = _frame_fs(df, time, keys)
    fs = check_fs(fs)
    lf, hf = _check_band(fs, l_freq, h_freq)
    freqs = _check_notch(notch, fs)
    _check_choice(method, "method", ("fir", "iir"))
    _check_choice(short, "short", ("iir", "raise"))
    out = df.copy()
    if lf is None and hf is None and freqs is None:
        return out
    values = df[chans].to_numpy(dtype=np.float64)
    result = values.copy()
    fell_back = []
    for key, idx in _groups(df, keys, time):
        where = _describe(keys, key)
        y, fb = _filter_2d(values[idx].T, fs, lf, hf, freqs, method, short, iir_order, where)
        result[idx] = y.T
        if fb:
            fell_back.append(where)
    _warn_fallback(fell_back, iir_order)
    for j, c in enumerate(chans):
        out[c] = result[:, j].astype(_out_dtype(df[c].dtype), copy=False)
    return out


# ------------------------------------------------------------------------- resampling


def _ratio(fs: float, new_fs: float) -> tuple[int, int]:
    frac = Fraction(new_fs / fs).limit_denominator(10_000)
    if frac.numerator == 0 or abs(float(frac) - new_fs / fs) > 1e-9 * (new_fs / fs):
        raise InputError(
            f"cannot resample from {fs:g} Hz to {new_fs:g} Hz with a rational factor of "
            "moderate size; pick rates with a simpler ratio"
        )
    return frac.numerator, frac.denominator


def _nan_after_resample(mask: np.ndarray, n_new: int, r: float) -> np.ndarray:
    """(C, n) NaN mask -> (C, n_new): a new sample is NaN when any old sample within half
    a new period of it (or, when there is none, the nearest one) was NaN."""
    n = mask.shape[-1]
    k = np.arange(n_new)
    lo = np.clip(np.ceil((k - 0.5) * r - 1e-9).astype(np.int64), 0, n)
    hi = np.clip(np.ceil((k + 0.5) * r - 1e-9).astype(np.int64), 0, n)
    nearest = np.clip(np.rint(k * r).astype(np.int64), 0, n - 1)
    empty = hi <= lo
    lo = np.where(empty, nearest, lo)
    hi = np.where(empty, nearest + 1, hi)
    cs = np.concatenate([np.zeros((mask.shape[0], 1), np.int64), np.cumsum(mask, axis=-1)], -1)
    return (cs[:, hi] - cs[:, lo]) > 0


def _resample_2d(x: np.ndarray, fs: float, new_fs: float) -> np.ndarray:
    """Anti-aliased polyphase resampling of (C, n) float64 along the last axis."""
    up, down = _ratio(fs, new_fs)
    if up == down:
        return x.copy()
    filled, mask = _fill_nan(x)
    rows = np.ones(x.shape[0], bool) if mask is None else ~mask.all(axis=-1)
    n_new = int(math.ceil(x.shape[-1] * up / down))
    y = np.full((x.shape[0], n_new), np.nan)
    if rows.any():
        y[rows] = resample_poly(filled[rows], up, down, axis=-1, padtype="line")[..., :n_new]
    if mask is not None:
        y[_nan_after_resample(mask, n_new, fs / new_fs)] = np.nan
    return y


def resample_array(x: np.ndarray, fs: float, new_fs: float, *, axis: int = -1) -> np.ndarray:
    """Resample one recording to ``new_fs`` with an anti-aliasing filter.

    Uses :func:`scipy.signal.resample_poly` (Kaiser-windowed low-pass at the lower of the
    two Nyquist frequencies, linear-trend padding at the edges). Sample ``k`` of the
    output sits at time ``k / new_fs`` after the first input sample; the output has
    ``ceil(n * new_fs / fs)`` samples. NaN gaps are interpolated for the filter and
    marked NaN again in the output.

    Returns a float array (float input keeps its dtype, integer input gives float64).
    """
    fs = check_fs(fs)
    new_fs = check_fs(new_fs, "new_fs")
    arr = np.asarray(x)
    dtype = _out_dtype(arr.dtype)
    moved = np.moveaxis(arr.astype(np.float64), axis, -1)
    shape = moved.shape
    y = _resample_2d(moved.reshape(-1, shape[-1]), fs, new_fs)
    return np.moveaxis(y.reshape(shape[:-1] + (y.shape[-1],)), -1, axis).astype(dtype)


def resample_frame(
    df: pd.DataFrame,
    channels: Sequence[str] | None = None,
    fs: float | None = None,
    new_fs: float | None = None,
    by: str | Sequence[str] | None = ("subject", "recording"),
    time: str | None = "time",
) -> pd.DataFrame:
    """Resample every recording of a long frame to ``new_fs`` (anti-aliased).

    Parameters
    ----------
    df : DataFrame
        medspt's long format.
    channels : sequence of str, optional
        Signal columns to resample (default: numeric columns other than ``by``, ``time``
        and ``label``). Every other column (label, subject, ...) is carried over from
        the nearest original sample.
    fs : float, optional
        Current rate in Hz; inferred from ``time`` if omitted. Assumed uniform.
    new_fs : float
        Target rate in Hz.
    by : str or sequence of str
        Columns identifying one recording (each is resampled on its own).
    time : str or None
        Time column; recomputed as ``t0 + k / new_fs`` with ``t0`` the recording's first
        time. Without a time column, labels are carried by sample position.

    Returns
    -------
    DataFrame
        New frame with a fresh RangeIndex, the same columns in the same order, recordings
        in their original order and rows in time order; ``df.attrs`` is kept.
    """
    keys = _keys(df, by)
    time = time if (time is not None and time in df.columns) else None
    chans = _channels(df, channels, keys, time)
    if fs is None:
        fs = _frame_fs(df, time, keys)
    fs = check_fs(fs)
    new_fs = check_fs(new_fs, "new_fs")
    values = df[chans].to_numpy(dtype=np.float64)
    others = [c for c in df.columns if c not in chans and c != time]
    tvals = df[time].to_numpy(dtype=float) if time is not None else None
    parts = []
    for _, idx in _groups(df, keys, time):
        y = _resample_2d(values[idx].T, fs, new_fs).T  # (n_new, C)
        n_new = len(y)
        k = np.arange(n_new)
        if tvals is not None:
            t = tvals[idx]
            t_new = t[0] + k / new_fs
            pos = np.clip(np.searchsorted(t, t_new), 1, len(t) - 1) if len(t) > 1 else None
            if pos is None:
                src = np.zeros(n_new, np.int64)
            else:
                src = np.where(np.abs(t[pos - 1] - t_new) <= np.abs(t[pos] - t_new), pos - 1, pos)
        else:
            t_new = None
            src = np.clip(np.rint(k * fs / new_fs).astype(np.int64), 0, len(idx) - 1)
        rows = idx[src]
        part = {}
        for c in df.columns:
            if c in chans:
                part[c] = y[:, chans.index(c)].astype(_out_dtype(df[c].dtype), copy=False)
            elif c == time:
                part[c] = t_new
            else:
                part[c] = df[c].to_numpy()[rows]
        parts.append(pd.DataFrame(part, columns=df.columns))
    if not parts:
        return df.iloc[:0].copy()
    out = pd.concat(parts, ignore_index=True)
    for c in others:  # keep categorical / string dtypes of carried columns
        if out[c].dtype != df[c].dtype:
            try:
                out[c] = out[c].astype(df[c].dtype)
            except (TypeError, ValueError):
                pass
    out.attrs = dict(df.attrs)
    return out


# ------------------------------------------------------------------------ EMG envelope


def emg_envelope(
    x: np.ndarray,
    fs: float,
    band: tuple[float, float] | None = (20.0, 450.0),
    lowpass: float = 6.0,
    *,
    axis: int = -1,
    short: Literal["iir", "raise"] = "iir",
) -> np.ndarray:
    """Linear envelope of raw EMG: band-pass, full-wave rectify, low-pass.

    Parameters
    ----------
    x : array_like
        Raw EMG of one recording, time along ``axis``.
    fs : float
        Sampling rate in Hz (typically 1000–2000 Hz).
    band : (float, float)
        Band-pass edges in Hz. The upper edge is clipped to ``0.45 * fs`` (just below
        Nyquist), so the default ``(20, 450)`` works at any rate above 1000 Hz and
        adapts below it. Use ``band=None`` to skip the band-pass.
    lowpass : float
        Cut-off of the smoothing low-pass in Hz (3–10 Hz is usual; 6 Hz by default).
    axis : int
        Time axis.
    short : {"iir", "raise"}
        Short-signal handling (see module notes).

    Returns
    -------
    ndarray
        Envelope, same shape; non-negative (tiny undershoots of the low-pass below zero
        are clipped to 0). NaN stays NaN.
    """
    fs = check_fs(fs)
    arr = np.asarray(x)
    dtype = _out_dtype(arr.dtype)
    moved = np.moveaxis(arr.astype(np.float64), axis, -1)
    shape = moved.shape
    flat = moved.reshape(-1, shape[-1])
    fell_back = False
    if band is not None:
        lo, hi = float(band[0]), float(band[1])
        hi = min(hi, 0.45 * fs)
        lf, hf = _check_band(fs, lo, hi)
        flat, fb = _filter_2d(flat, fs, lf, hf, None, "fir", short, 4, "the EMG signal")
        fell_back |= fb
    flat = np.abs(flat)
    lp = _check_freq(lowpass, "lowpass", fs)
    if lp is not None:
        flat, fb = _filter_2d(flat, fs, None, lp, None, "fir", short, 4, "the EMG signal")
        fell_back |= fb
        flat = np.where(np.isnan(flat), np.nan, np.maximum(flat, 0.0))
    if fell_back:
        _warn_fallback(["the EMG signal"], 4)
    return np.moveaxis(flat.reshape(shape), -1, axis).astype(dtype, copy=False)
