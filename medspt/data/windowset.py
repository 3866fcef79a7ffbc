"""DataFrame in, windows out.

The interchange format of medspt is a *long* DataFrame with one row per time sample:

========== ==============================================================
column     meaning
========== ==============================================================
subject    who was recorded (required; evaluation is split by subject)
recording  which recording of that subject (optional)
time       seconds since the start of the recording (optional; never a feature)
label      class of that sample; may change inside a recording (required to fit)
<channel>  one numeric column per sensor channel
========== ==============================================================

:func:`make_windows` cuts it into fixed-length windows on a grid anchored at the first
sample of every recording and returns a :class:`WindowSet` with ``X`` shaped
``(N, C, T)`` (channels first). Windows that straddle a label change are dropped.
Missing samples stay NaN; they are never zero-filled here. The steps of
:func:`make_windows` live in :mod:`medspt.data.windowing`, column checks in
:mod:`medspt.data.channels`, sampling-rate checks in :mod:`medspt.data.sampling`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from medspt.core.errors import InputError
from medspt.core.warn import once_per_call
from medspt.data.channels import infer_channels
from medspt.data.windowing import (
    check_length,
    check_short_subjects,
    cut_recordings,
    encode_labels,
    regularize_timing,
    select_channels,
    stack_cases,
    validate_frame,
    window_samples,
)

__all__ = ["WindowSet", "WindowSpec", "make_windows", "from_arrays", "infer_channels"]


@dataclass
class WindowSet:
    """Windows cut from recordings, ready for a model.

    Attributes
    ----------
    X : ndarray of float32, shape (N, C, T)
        Window values, channels first; NaN marks a missing sample.
    y : ndarray of int64, shape (N,), or None
        Class codes into ``classes`` (None when the data had no labels).
    classes : ndarray
        The class labels; ``classes[y]`` gives the label of each window.
    groups : ndarray, shape (N,)
        Subject of each window; splits never put one subject on both sides.
    channels : list of str
        Channel names, in the order of axis 1 of ``X``.
    fs : float or None
        Sampling rate in Hz.
    meta : DataFrame
        One row per window: ``subject``, ``recording``, ``start`` and ``stop`` (sample
        indices into the recording), ``start_time`` (seconds). For bookkeeping only;
        never feed it to a model (position in a recording can leak the label).
    left_out : dict of str to str
        Every column of the source DataFrame that is not a channel, with the reason in
        plain words (``{"condition": "not numeric (text such as 'walk')", "subject":
        "subject column", ...}``); empty for windows not cut from a DataFrame.
    fs_source : str
        Where ``fs`` came from: ``"given"``, ``"time column 'time', median step 0.01 s"``,
        ``"not given"``, ... Defaults to ``"given"`` or ``"not given"`` from ``fs``.
    dropped : dict
        What cutting left out or split (:meth:`medspt.data.windowing.Cases.counts`):
        ``windows`` over ``max_missing`` and the ``samples`` (``seconds``) they cover,
        ``windows_channel_missing`` (kept with a channel missing throughout),
        ``recordings_split`` at gaps of a window or more and their ``gap_samples``
        (``gap_seconds``), and the ``subjects`` dropped for want of any window; empty
        when not cut here.
    """

    X: np.ndarray
    y: np.ndarray | None
    classes: np.ndarray
    groups: np.ndarray
    channels: list[str]
    fs: float | None = None
    meta: pd.DataFrame = field(default_factory=pd.DataFrame)
    left_out: dict[str, str] = field(default_factory=dict)
    fs_source: str = ""
    dropped: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.fs_source:
            self.fs_source = "given" if self.fs is not None else "not given"

    def __len__(self) -> int:
        return len(self.X)

    @property
    def labels(self) -> np.ndarray | None:
        """Class label of each window (``classes[y]``)."""
        return None if self.y is None else self.classes[self.y]

    def subset(self, index: np.ndarray) -> WindowSet:
        """Return the windows at ``index`` (integer or boolean array)."""
        index = np.asarray(index)
        return WindowSet(
            X=self.X[index],
            y=None if self.y is None else self.y[index],
            classes=self.classes,
            groups=self.groups[index],
            channels=list(self.channels),
            fs=self.fs,
            meta=self.meta.iloc[index].reset_index(drop=True),
            left_out=dict(self.left_out),
            fs_source=self.fs_source,
            dropped=dict(self.dropped),  # what cutting the source left out, not the subset
        )

    def __repr__(self) -> str:
        n, c, t = self.X.shape
        counts = ""
        if self.y is not None:
            vc = np.bincount(self.y, minlength=len(self.classes))
            counts = ", ".join(f"{k}: {v}" for k, v in zip(self.classes, vc))
            counts = f", classes={{{counts}}}"
        fs = "" if self.fs is None else f", fs={self.fs:g} Hz"
        return f"WindowSet(N={n}, C={c}, T={t}{fs}, subjects={len(np.unique(self.groups))}{counts})"


@dataclass(frozen=True)
class WindowSpec:
    """How a long DataFrame was cut into windows; kept on fitted models so that
    ``predict(df)`` cuts new data exactly the same way."""

    label: str = "label"
    subject: str = "subject"
    recording: str | None = "recording"
    time: str | None = "time"
    channels: tuple[str, ...] = ()
    fs: float | None = None
    window: int | None = 0  # None: one case per recording, padded to `length`
    stride: int | None = 0
    length: int | None = None

    def to_dict(self) -> dict:
        d = dict(self.__dict__)
        d["channels"] = list(self.channels)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> WindowSpec:
        d = dict(d)
        d["channels"] = tuple(d.get("channels", ()))
        return cls(**d)


@once_per_call
def make_windows(
    df: pd.DataFrame,
    *,
    window: int | str | None,
    stride: int | str | None = None,
    label: str | None = "label",
    subject: str = "subject",
    recording: str | None = "recording",
    time: str | None = "time",
    channels: Sequence[str] | None = None,
    fs: float | None = None,
    classes: Sequence | None = None,
    max_missing: float = 0.5,
    drop_short: bool = False,
    length: int | None = None,
    regularize: bool = True,
    strict: bool = False,
) -> WindowSet:
    """Cut a long DataFrame into fixed-length windows, or one case per recording.

    Parameters
    ----------
    df : DataFrame
        Long format, one row per sample (see the module docstring). Rows of a recording
        are taken in ``time`` order when a time column exists, else in row order.
    window, stride : int, str or None
        Window length and step, in samples (``200``) or seconds (``"10s"``, needs ``fs``
        or a ``time`` column). ``stride`` defaults to ``window`` (no overlap). Under 64
        samples at a known rate, a number gets a warning: were seconds meant?
        ``window=None``: one case per recording (for data where each recording is one
        labelled case of its own length); the label must not change inside a recording,
        and shorter cases are padded with NaN at the end to the longest (or ``length``).
        Trailing steps missing in every channel are what the model treats as padding.
    label, subject, recording, time : str
        Column names; ``recording`` and ``time`` are skipped when absent, and ``label=None``
        (or absent, with ``classes``) cuts unlabelled windows, e.g. for prediction.
    channels : list of str, optional
        Signal columns. Default: every numeric column that is not one of the above;
        boolean, date and text columns (a condition name) are left out and listed in
        ``WindowSet.left_out``. Refused with the fix: names that are not columns (all at
        once), text of mostly numbers (``"n/a"`` entries, decimal commas ``"0,081"``) and
        complex values. Warned about: channels mostly missing, or of one value.
    fs : float, optional
        Sampling rate in Hz the windows are cut at; inferred from ``time`` when omitted (a
        time column slower than 1 Hz is refused as likely milliseconds unless ``fs`` is
        given). A given ``fs`` the time column contradicts is a resampling target within
        4-fold up- and 100-fold downsampling; a likely period, kHz or ms is refused.
    classes : sequence, optional
        Known classes (e.g. of a fitted model); labels outside them raise an error.
    max_missing : float
        Windows with a larger fraction of missing (NaN) values (of all their values, over
        every channel) are dropped, with one warning naming the subjects and the time
        left out. Windows kept although a channel is missing throughout them are named
        in the same warning. Isolated missing values within ``max_missing`` pass
        silently: the model treats them as hidden.
    drop_short : bool
        With ``strict=True``: drop (with a warning) the subjects left without any window
        instead of stopping with an error. Without ``strict`` such subjects are always
        dropped with a warning.
    length : int, optional
        With ``window=None``: the padded length of every case (default: the longest
        recording). A recording longer than ``length`` raises an error.
    regularize : bool
        If the ``time`` column is irregular (jitter, different rates per recording; see
        :func:`medspt.data.timing.check_timing`), warn with a report and resample every
        recording to a regular grid at ``fs`` (default: the median rate) with
        :func:`medspt.data.timing.regularize`. False keeps the rows as they are. Gaps
        alone are not resampled; a clock rounded finer than its step keeps 1 / mean step.
    strict : bool
        Stop with an error, as medspt did before it handled dropouts, where it would
        otherwise split or drop: at a stretch of a window or more without a value (rows
        missing, or NaN in any channel), and at a subject left without any window
        (unless ``drop_short=True``).

    Returns
    -------
    WindowSet
        Window grid anchored at sample 0 of each recording, or of each piece of a
        recording split at a gap (starts 0, stride, 2·stride, … while start + window ≤
        length); windows whose samples do not all share one label are dropped.
        ``left_out`` lists every column that is not a channel with the reason,
        ``fs_source`` where ``fs`` came from, ``dropped`` what was left out or split.

    A window given in seconds must come to at least 4 samples. A recording is split
    where it has no value for at least a window (the time column jumps, or every channel
    is NaN), with one warning; a shorter jump leaves its samples missing, never filled in.

    Each step below is a function of :mod:`medspt.data.windowing`, testable on its own.
    """
    keys = validate_frame(df, subject=subject, label=label, recording=recording, time=time,
                          classes=classes, max_missing=max_missing)  # fmt: skip
    channels, left_out = select_channels(df, channels, keys)
    in_seconds = isinstance(window, str) or isinstance(stride, str)  # they need a rate
    given = df
    df, fs, fs_source = regularize_timing(
        df, keys, channels, fs, regularize=regularize, in_seconds=in_seconds
    )
    if window is None:  # one case per recording
        check_length(length)
        win = step = None
    else:
        win, step = window_samples(window, stride, fs, fs_source)
    classes, codes = encode_labels(df, keys, classes)
    cut = dict(window=win, stride=step, fs=fs, max_missing=max_missing, strict=strict)
    cases = cut_recordings(df, keys, channels, codes, **cut, resampled=df is not given)
    check_short_subjects(cases, win, drop_short, strict=strict)
    X, meta = stack_cases(cases, window=win, length=length)  # (N, C, T)
    return WindowSet(
        X=X,
        y=np.concatenate(cases.ys) if keys.has_label else None,
        classes=classes,
        groups=meta["subject"].to_numpy(),
        channels=list(channels),
        fs=fs,
        meta=meta,
        left_out=left_out,
        fs_source=fs_source if fs is not None else "not given",
        dropped=cases.counts(fs),
    )


def from_arrays(
    X,
    y=None,
    groups=None,
    *,
    channels: Sequence[str] | None = None,
    fs: float | None = None,
    classes: Sequence | None = None,
) -> WindowSet:
    """Wrap ready-made windows ``X (N, C, T)`` (or ``(N, T)`` for one channel).

    ``y`` holds class labels of any type; ``groups`` the subject of each window (without
    it every window counts as its own subject, which is only honest if windows are
    independent cases).
    """
    try:
        arr = np.asarray(X, dtype=np.float32)
    except (TypeError, ValueError) as e:
        raise InputError(f"X must be a numeric array of shape (N, C, T): {e}") from None
    if arr.ndim == 2:
        arr = arr[:, None, :]
    if arr.ndim != 3:
        raise InputError(f"X must have shape (N, C, T) or (N, T), got shape {arr.shape}")
    if min(arr.shape) == 0:
        raise InputError(f"X is empty: shape {arr.shape}")
    if np.isinf(arr).any():
        raise InputError("X contains infinite values; use NaN for missing samples")
    n = len(arr)
    if channels is None:
        channels = [f"ch{i}" for i in range(arr.shape[1])]
    channels = [str(c) for c in channels]
    if len(channels) != arr.shape[1]:
        raise InputError(f"channels names {len(channels)} columns but X has {arr.shape[1]}")
    if groups is None:
        groups = np.arange(n)
    groups = np.asarray(groups)
    if groups.shape != (n,):
        raise InputError(f"groups must have one entry per window ({n}), got shape {groups.shape}")
    if y is not None:
        y = np.asarray(y)
        if y.ndim != 1 or len(y) != n:
            raise InputError(f"y must have one label per window ({n}), got shape {y.shape}")
        if pd.isna(y).any():
            raise InputError("y has missing labels")
        cls = np.unique(y) if classes is None else np.asarray(classes)
        codes = np.searchsorted(cls, y) if classes is None else _encode(y, cls)
        y = codes.astype(np.int64)
    else:
        cls = np.asarray(classes) if classes is not None else np.array([])
    meta = pd.DataFrame({"subject": groups, "recording": None, "start": 0, "stop": arr.shape[2]})
    return WindowSet(arr, y, cls, groups, channels, fs, meta)


def _encode(y: np.ndarray, classes: np.ndarray) -> np.ndarray:
    lookup = {c: i for i, c in enumerate(classes.tolist())}
    try:
        return np.array([lookup[v] for v in y.tolist()], dtype=np.int64)
    except KeyError as e:
        raise InputError(
            f"y has label {e.args[0]!r} that is not among the known classes {classes.tolist()!r}"
        ) from None
