"""Irregular timestamps: detect them, report them, put the samples on a regular grid.

Models see samples, not seconds: a window of 200 samples must span the same time in
every recording. :func:`check_timing` measures each recording's time steps (rate, jitter,
gaps, rates that differ between recordings); :func:`regularize` resamples every recording
onto a regular grid at a stated rate:

* the samples of each stretch between gaps are interpolated linearly onto a fine regular
  grid at the stretch's own median rate, low-passed (zero-phase Butterworth at 0.45 ×
  the target rate, :func:`scipy.signal.sosfiltfilt`) when the target rate is lower, then
  read off at the target grid's times;
* a gap (a time step longer than ``max_gap``) is never interpolated across: grid points
  inside it are NaN (missing), which the windowing and the model treat as missing data;
  a gap at least a window long splits the recording there when it is cut into windows;
* samples that were NaN stay NaN at the grid points nearest to them;
* the label and every other column come from the nearest original sample; the ``time``
  column is rewritten as the grid's times. It is bookkeeping, never a model feature.

:func:`medspt.data.windowset.make_windows` (and so ``fit_spt``) calls :func:`check_timing` on every
frame with a time column and, when the timing is irregular, warns with the report and
resamples with :func:`regularize`; a regular clock whose only irregularity is gaps is not
resampled (the windowing splits the recording at a gap of a window or more, and marks the
samples of a shorter one missing).

A clock rounded to a coarser unit than its step (a 64 Hz recording whose times are
rounded to milliseconds steps 15 and 16 ms in turn) is not jitter: when the steps take
just two values, one rounding unit apart, the recording is regular at its mean step
(:func:`check_timing` reports ``rounded_to``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.signal import butter, sosfiltfilt

from medspt.core.errors import InputError
from medspt.data.sampling import check_fs

__all__ = ["TimingReport", "check_timing", "regularize"]


@dataclass
class TimingReport:
    """Time steps of every recording.

    Attributes
    ----------
    recordings : DataFrame
        One row per recording: keys, ``n``, ``fs`` (1 / median step; 1 / mean step when
        the clock is rounded), ``jitter`` (share of steps more than ``tol`` away from the
        median step, gaps excluded; 0 when the only jitter is rounding), ``rounded_to``
        (the rounding unit in seconds of a rounded clock, else 0), ``gaps`` (steps
        longer than ``gap_factor`` median steps), ``longest_gap_s``.
    tol, gap_factor : float
        The thresholds used.
    """

    recordings: pd.DataFrame
    tol: float
    gap_factor: float

    @property
    def rates_differ(self) -> bool:
        fs = self.recordings["fs"].to_numpy()
        return bool(len(fs) > 1 and (fs.max() - fs.min()) > self.tol * np.median(fs))

    @property
    def jittery(self) -> bool:
        return bool((self.recordings["jitter"] > 0.01).any())

    @property
    def has_gaps(self) -> bool:
        return bool((self.recordings["gaps"] > 0).any())

    @property
    def regular(self) -> bool:
        """True when every recording is on one regular grid at one common rate."""
        return not (self.rates_differ or self.jittery or self.has_gaps)

    @property
    def median_fs(self) -> float:
        return float(np.median(self.recordings["fs"]))

    @property
    def rounded_to(self) -> float:
        """The coarsest rounding unit (seconds) of a recording whose clock is rounded
        (0.0 when none is)."""
        r = self.recordings
        return float(r["rounded_to"].max()) if "rounded_to" in r and len(r) else 0.0

    @property
    def gaps_only(self) -> bool:
        """True when gaps are the only irregularity: one rate, no jitter."""
        return self.has_gaps and not (self.rates_differ or self.jittery)

    def __str__(self) -> str:
        r = self.recordings
        rounded = (
            f" (time steps rounded to {self.rounded_to:.3g} s; the rate is 1 / mean step)"
            if self.rounded_to > 0
            else ""
        )
        if self.regular:
            return f"regular: {len(r)} recording(s) at {self.median_fs:g} Hz{rounded}"
        parts = []
        if self.rates_differ:
            parts.append(
                f"rates differ between recordings ({r['fs'].min():.4g}–{r['fs'].max():.4g} Hz)"
            )
        if self.jittery:
            worst = r.loc[r["jitter"].idxmax()]
            parts.append(
                f"jittered time steps in {int((r['jitter'] > 0.01).sum())} recording(s) "
                f"(worst: {worst['jitter']:.0%} of steps off by more than {self.tol:.0%})"
            )
        if self.has_gaps:
            parts.append(
                f"{int(r['gaps'].sum())} gap(s) in {int((r['gaps'] > 0).sum())} recording(s), "
                f"longest {r['longest_gap_s'].max():.3g} s"
            )
        return "irregular: " + "; ".join(parts) + rounded


def _keys(df: pd.DataFrame, by) -> list[str]:
    by = [by] if isinstance(by, str) else list(by or [])
    return [c for c in by if c in df.columns]


def _recordings(df: pd.DataFrame, keys: list[str], time: str):
    t_all = df[time].to_numpy(dtype=float)
    items = df.groupby(keys, sort=False).indices.items() if keys else [((), np.arange(len(df)))]
    for key, idx in items:
        t = t_all[idx]
        order = np.argsort(t, kind="stable")
        yield (key if isinstance(key, tuple) else (key,)), idx[order], t[order]


def _rounding_unit(steps: np.ndarray, scale: float) -> float | None:
    """The rounding unit of a clock whose steps take two values one unit apart (a
    64 Hz clock rounded to milliseconds steps 0.015 and 0.016 s); None otherwise.

    ``scale`` is the largest absolute time: differences within the floating-point error
    of such times count as one value."""
    noise = 64 * np.finfo(np.float64).eps * max(scale, 1.0)
    values = np.unique(steps)
    # values closer than the float error of a difference of two times are one value
    values = values[np.concatenate([[True], np.diff(values) > noise])]
    if len(values) != 2:
        return None  # one value: no jitter; three or more: not rounding alone
    return float(values[1] - values[0])


def _rounded_rate(steps: np.ndarray, unit: float, n_stretches: int) -> float:
    """1 / mean step of a rounded clock, snapped to the shortest decimal within the
    accuracy of that mean (each stretch's two end times are off by half a unit at most)."""
    mean = float(steps.mean())
    fs = 1.0 / mean
    err = fs * fs * unit * n_stretches / len(steps)  # how far 1 / mean can be off
    for decimals in range(7):
        nice = round(fs, decimals)
        if abs(nice - fs) <= err:
            return nice
    return fs


def check_timing(
    df: pd.DataFrame,
    time: str = "time",
    by: str | Sequence[str] | None = ("subject", "recording"),
    tol: float = 0.05,
    gap_factor: float = 2.5,
) -> TimingReport:
    """Measure the time steps of every recording of a long frame.

    Parameters
    ----------
    time : str
        Time column in seconds.
    by : columns that identify a recording (absent ones are skipped).
    tol : float
        A step further than ``tol`` (relative) from the recording's median step counts
        as jitter; rates further apart than ``tol`` count as different.
    gap_factor : float
        A step longer than ``gap_factor`` median steps is a gap.

    Steps that take just two values, one rounding unit apart (a clock rounded to a unit
    that is not a whole fraction of its step), are rounding, not jitter: such a recording
    is regular at 1 / mean step, its ``rounded_to`` the unit. Steps of three or more
    values off the median by more than ``tol`` are jitter.
    """
    if time not in df.columns:
        raise InputError(f"time column {time!r} not found in the DataFrame")
    if not pd.api.types.is_numeric_dtype(df[time]) or df[time].isna().any():
        raise InputError(f"time column {time!r} must hold numeric seconds without gaps (NaN)")
    keys = _keys(df, by)
    rows = []
    scale = float(np.abs(df[time].to_numpy(dtype=float)).max())
    for key, _, t in _recordings(df, keys, time):
        d = np.diff(t)
        d = d[d > 0]
        if len(d) == 0:
            continue
        med = float(np.median(d))
        gap = d > gap_factor * med
        steps = d[~gap]
        jit = np.abs(steps - med) > tol * med
        fs, unit = 1.0 / med, 0.0
        if jit.any():
            found = _rounding_unit(steps, scale)
            if found is not None:  # rounding, not jitter: the rate is 1 / mean step
                unit = found
                fs = _rounded_rate(steps, unit, int(gap.sum()) + 1)
                jit = np.zeros(0, bool)
        rows.append(
            {
                **dict(zip(keys, key)),
                "n": len(t),
                "fs": fs,
                "jitter": float(jit.mean()) if len(jit) else 0.0,
                "rounded_to": unit,
                "gaps": int(gap.sum()),
                "longest_gap_s": float(d[gap].max()) if gap.any() else 0.0,
            }
        )
    if not rows:
        raise InputError(f"time column {time!r}: no recording has two distinct times")
    return TimingReport(pd.DataFrame(rows), tol, gap_factor)


def _segment_values(t, v, grid, fs, max_gap):
    """Values (len(grid), C) of one gap-free stretch (times t, values v) on ``grid``."""
    out = np.full((len(grid), v.shape[1]), np.nan)
    eps = 1e-6 / fs  # a grid point one rounding error past the stretch's end is inside
    inside = (grid >= t[0] - eps) & (grid <= t[-1] + eps)
    if not inside.any():
        return out
    g = grid[inside]
    if len(t) == 1:
        out[inside] = v[0]
        return out
    native = 1.0 / float(np.median(np.diff(t)))
    fine_fs = max(native, fs)
    fine = t[0] + np.arange(int(np.floor((t[-1] - t[0]) * fine_fs)) + 1) / fine_fs
    res = np.empty((len(fine), v.shape[1]))
    for c in range(v.shape[1]):
        ok = ~np.isnan(v[:, c])
        res[:, c] = np.interp(fine, t[ok], v[ok, c]) if ok.sum() >= 1 else np.nan
    if native > 1.1 * fs and len(fine) > 30:  # anti-alias before reading off a coarser grid
        sos = butter(4, 0.45 * fs, fs=fine_fs, output="sos")
        finite = np.isfinite(res).all(0)
        if len(fine) > 3 * (2 * len(sos) + 1):
            res[:, finite] = sosfiltfilt(sos, res[:, finite], axis=0)
    vals = np.stack([np.interp(g, fine, res[:, c]) for c in range(v.shape[1])], axis=1)
    # a grid point whose nearest original sample was missing stays missing
    near = np.clip(np.searchsorted(t, g), 1, len(t) - 1)
    near = np.where(np.abs(t[near - 1] - g) <= np.abs(t[near] - g), near - 1, near)
    vals[np.isnan(v[near])] = np.nan
    out[inside] = vals
    return out


def regularize(
    df: pd.DataFrame,
    fs: float,
    *,
    time: str = "time",
    by: str | Sequence[str] | None = ("subject", "recording"),
    channels: Sequence[str] | None = None,
    max_gap: float | None = None,
) -> pd.DataFrame:
    """Resample every recording onto a regular grid at ``fs`` Hz (see module docstring).

    Parameters
    ----------
    fs : float
        Target rate in Hz.
    channels : columns to resample (default: every numeric column other than ``time``,
        ``by`` and ``label``).
    max_gap : float, optional
        A time step longer than this (seconds) is a gap: grid points inside it are NaN.
        Default: 3 samples at the target rate.

    Returns
    -------
    DataFrame
        Same columns, one row per grid point ``t0 + k / fs`` of every recording (t0 =
        its first time), recordings in their original order.
    """
    fs = check_fs(fs)
    max_gap = 3.0 / fs if max_gap is None else float(max_gap)
    if not max_gap > 0:
        raise InputError(f"max_gap must be a positive number of seconds, got {max_gap!r}")
    check_timing(df, time, by)  # validates the time column
    keys = _keys(df, by)
    if channels is None:
        skip = {time, "label", *keys}
        channels = [
            c
            for c in df.columns
            if c not in skip
            and pd.api.types.is_numeric_dtype(df[c])
            and not pd.api.types.is_bool_dtype(df[c])
            and not pd.api.types.is_complex_dtype(df[c])
        ]
    channels = [channels] if isinstance(channels, str) else list(channels)
    for c in channels:
        if c not in df.columns:
            raise InputError(f"channel column {c!r} not found in the DataFrame")
        if pd.api.types.is_complex_dtype(df[c]):
            raise InputError(
                f"channel {c!r} holds complex numbers; pass a real signal, e.g. its "
                f"magnitude df[{c!r}] = np.abs(df[{c!r}])"
            )
    values = df[channels].to_numpy(dtype=np.float64)
    parts = []
    for _, idx, t in _recordings(df, keys, time):
        v = values[idx]
        grid = t[0] + np.arange(int(np.floor((t[-1] - t[0]) * fs + 1e-9)) + 1) / fs
        out = np.full((len(grid), len(channels)), np.nan)
        cut = np.flatnonzero(np.diff(t) > max_gap) + 1  # gap-free stretches
        for seg in np.split(np.arange(len(t)), cut):
            ts, vs = t[seg], v[seg]
            keep = np.concatenate([[True], np.diff(ts) > 0])  # duplicated times: first
            seg_vals = _segment_values(ts[keep], vs[keep], grid, fs, max_gap)
            eps = 1e-6 / fs
            have = ~np.isnan(seg_vals).all(1) | ((grid >= ts[0] - eps) & (grid <= ts[-1] + eps))
            out[have] = seg_vals[have]
        if len(t) > 1:
            near = np.clip(np.searchsorted(t, grid), 1, len(t) - 1)
            near = np.where(np.abs(t[near - 1] - grid) <= np.abs(t[near] - grid), near - 1, near)
        else:
            near = np.zeros(len(grid), dtype=np.int64)
        part = df.iloc[idx[near]].reset_index(drop=True)
        part[time] = grid
        for j, c in enumerate(channels):
            part[c] = out[:, j]
        parts.append(part)
    out_df = pd.concat(parts, ignore_index=True)
    out_df.attrs = dict(df.attrs)
    return out_df
