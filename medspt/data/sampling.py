"""Sampling rates: check a given one, infer one from a time column, catch unit mix-ups.

Shared by windowing (:func:`medspt.data.windowset.make_windows`), resampling onto a regular grid
(:mod:`medspt.data.timing`) and filtering (:mod:`medspt.data.preprocess`). Imports nothing from
medspt but its errors.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from medspt.core.errors import InputError

__all__ = [
    "MAX_DOWNSAMPLE",
    "MAX_UPSAMPLE",
    "check_fs",
    "check_given_fs",
    "infer_fs",
    "median_step",
]

#: A given fs above this many times the time column's rate is refused ...
MAX_UPSAMPLE = 4
#: ... and one below the time column's rate over this.
MAX_DOWNSAMPLE = 100


def check_fs(fs: float | None, name: str = "fs") -> float:
    """``fs`` as a positive, finite float; ``name`` is the argument named in refusals."""
    if fs is None:
        raise InputError(f"{name} (sampling rate in Hz) is required")
    try:
        fs = float(fs)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a sampling rate in Hz, got {fs!r}") from None
    if not math.isfinite(fs) or fs <= 0:
        raise InputError(f"{name} must be a positive sampling rate in Hz, got {fs!r}")
    return fs


def median_step(df: pd.DataFrame, time: str, keys: list[str]) -> float | None:
    """Median positive step of the ``time`` column within recordings (``keys`` columns
    identify one); None when no recording has two distinct times."""
    t_all = df[time].to_numpy(dtype=float)
    dts = []
    for idx in df.groupby(keys, sort=False).indices.values():
        if len(idx) > 1:
            d = np.diff(np.sort(t_all[idx]))
            dts.append(d[d > 0])
    d = np.concatenate(dts) if dts else np.array([])
    if len(d) == 0:
        return None
    dt = float(np.median(d))
    return dt if np.isfinite(dt) and dt > 0 else None


def infer_fs(df: pd.DataFrame, time: str, keys: list[str]) -> float:
    """Sampling rate in Hz from the median step of the ``time`` column, per recording
    (``keys`` columns identify one; rows need not be in time order)."""
    dts = []
    for _, g in df.groupby(keys, sort=False):
        t = np.sort(g[time].to_numpy(dtype=float))
        if len(t) > 1:
            dts.append(np.diff(t))
    if not dts:
        raise InputError(f"cannot infer fs from column {time!r}: every recording has one row")
    dt = float(np.median(np.concatenate(dts)))
    if not np.isfinite(dt) or dt <= 0:
        raise InputError(
            f"cannot infer fs from column {time!r}: the median time step is {dt}; pass fs"
        )
    return 1.0 / dt


def _near(a: float, b: float, rel: float = 0.1) -> bool:
    return abs(a / b - 1.0) <= rel


def check_given_fs(fs: float, dt: float, time: str) -> None:
    """Refuse a given ``fs`` that the time column (median step ``dt`` seconds) shows to be
    a unit mix-up, or too far from the recording's rate to resample to.

    ``fs`` is the rate windows are cut at. A rate that differs from the time column's is
    a legitimate resampling target (a model fitted at 50 Hz predicting on 100 Hz data;
    :func:`medspt.data.windowset.make_windows` resamples with a warning) up to ``MAX_UPSAMPLE``-fold
    upsampling and ``MAX_DOWNSAMPLE``-fold downsampling. Beyond that, or where ``fs``
    looks like the sampling period, a rate in kHz, or the time column looks like
    milliseconds, it is refused.
    """
    col_fs = 1.0 / dt
    ratio = col_fs / fs
    if _near(ratio, 1.0, 0.05):
        return
    fix = f"fs is a rate in Hz: pass fs={col_fs:g}, or omit fs to take it from column {time!r}"
    where = f"column {time!r} steps {dt:g} s per sample ({col_fs:g} Hz)"
    if _near(fs, dt):
        raise InputError(f"fs={fs:g} looks like the sampling period, not the rate: {where}. {fix}")
    if _near(ratio, 1000.0):
        raise InputError(f"fs={fs:g} looks like a rate in kHz: {where}, 1000 times more. {fix}")
    if ratio < 0.0015:
        raise InputError(
            f"time column {time!r} implies {col_fs:g} Hz but fs is {fs:g} Hz: the time "
            f"column must count seconds. If it counts milliseconds, divide it by 1000 "
            f"(df[{time!r}] = df[{time!r}] / 1000); if fs is wrong, {fix}"
        )
    if 1.0 / ratio > MAX_UPSAMPLE * 1.05 or ratio > MAX_DOWNSAMPLE * 1.05:
        how = (
            f"upsampling {1 / ratio:.3g}-fold would invent the samples in between"
            if ratio < 1
            else f"downsampling {ratio:.3g}-fold would discard nearly all samples"
        )
        raise InputError(
            f"fs={fs:g} Hz but {where}: {how}. {fix}; to resample on purpose, call "
            f"medspt.data.timing.regularize(df, fs=...) first"
        )
