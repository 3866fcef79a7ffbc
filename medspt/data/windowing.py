"""The steps of :func:`medspt.data.windowset.make_windows`, each one usable and testable on its own.

::

    validate_frame      key columns, labels and arguments        -> Keys
    select_channels     inferred or named signal columns          -> channels, left_out
    regularize_timing   time column checks, fs, resampling        -> df, fs, fs_source
    window_samples      window and stride in samples              -> window, stride
    encode_labels       class codes of every row                  -> classes, codes
    segment_recordings  rows of each recording, in time order     -> Recording, ...
    cut_recordings      windows (window_starts, cut_windows) or   -> Cases
                        one case per recording (window=None)
    check_short_subjects, stack_cases                             -> X, meta

:func:`window_starts` and :func:`cut_windows` are the one place where windows are cut:
the evaluation protocols call them too (:mod:`medspt.datasets.protocols`).

Warnings point at the code that called :func:`~medspt.data.windowset.make_windows` (or the step),
not at the step that noticed the problem.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from medspt.core.errors import InputError
from medspt.data import timing
from medspt.data.channels import (
    CHANNELS_HINT,
    check_column,
    classify_columns,
    clock_like_channels,
    validate_channels,
)
from medspt.data.sampling import check_given_fs, infer_fs, median_step

__all__ = [
    "MIN_WINDOW",
    "Cases",
    "Keys",
    "Recording",
    "check_length",
    "check_short_subjects",
    "cut_recordings",
    "cut_windows",
    "encode_labels",
    "longest_nan_run",
    "pad_cases",
    "regularize_timing",
    "segment_recordings",
    "select_channels",
    "stack_cases",
    "to_samples",
    "validate_frame",
    "window_meta",
    "window_samples",
    "window_starts",
]

#: Samples: a window given in seconds that comes to fewer is refused.
MIN_WINDOW = 4


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


def _warn(message: str) -> None:
    """Warn at the first caller outside this module and :mod:`medspt.data.windowset`."""
    frame, level = inspect.currentframe(), 1
    while frame is not None and frame.f_globals.get("__name__") in (
        __name__,
        "medspt.data.windowset",
    ):
        frame, level = frame.f_back, level + 1
    del frame  # a frame held in a local keeps its whole stack alive
    warnings.warn(message, UserWarning, stacklevel=level)


# ---------------------------------------------------------------------------- validate


@dataclass(frozen=True)
class Keys:
    """The key columns of a long frame, resolved against it.

    ``recording`` and ``time`` are None when the frame has no such column; ``label`` is
    as given and ``has_label`` says whether the frame holds it (predicting with known
    classes needs no label column).
    """

    subject: str
    recording: str | None = None
    time: str | None = None
    label: str | None = None
    has_label: bool = False

    @property
    def by(self) -> list[str]:
        """Columns that identify one recording."""
        return [self.subject] + ([self.recording] if self.recording else [])

    def roles(self, df: pd.DataFrame) -> dict[str, str]:
        """Key columns present in ``df``, with why each is not a channel."""
        roles = {
            self.subject: "subject column",
            self.recording: "recording column",
            self.time: "time column (bookkeeping, never a feature)",
            self.label: "label column",
        }
        return {c: why for c, why in roles.items() if c is not None and c in df.columns}


def validate_frame(
    df: pd.DataFrame,
    *,
    subject: str = "subject",
    label: str | None = "label",
    recording: str | None = "recording",
    time: str | None = "time",
    classes: Sequence | None = None,
    max_missing: float = 0.5,
) -> Keys:
    """Check the frame, its subject and label columns and ``max_missing``.

    A label column that is absent is allowed only when ``classes`` is given (windows
    cut for prediction). ``recording`` and ``time`` are optional and resolved to None
    when absent.
    """
    if not isinstance(df, pd.DataFrame):
        raise InputError(f"expected a pandas DataFrame in long format, got {type(df).__name__}")
    if len(df) == 0:
        raise InputError("the DataFrame is empty (0 rows)")
    if not 0.0 <= float(max_missing) <= 1.0:
        raise InputError(f"max_missing must lie in [0, 1], got {max_missing!r}")
    check_column(df, subject, "subject")
    if df[subject].isna().any():
        raise InputError(
            f"subject column {subject!r} has {int(df[subject].isna().sum())} "
            "missing values; every row needs a subject"
        )
    has_label = label is not None and label in df.columns
    if label is not None and not has_label and classes is None:
        check_column(df, label, "label")
    if has_label and df[label].isna().any():
        n = int(df[label].isna().sum())
        raise InputError(
            f"label column {label!r} has {n} missing values; drop unlabelled rows first "
            f"(df = df.dropna(subset=[{label!r}]))"
        )
    return Keys(
        subject=subject,
        recording=recording if recording is not None and recording in df.columns else None,
        time=time if time is not None and time in df.columns else None,
        label=label,
        has_label=has_label,
    )


# ---------------------------------------------------------------------------- channels


def _infer_signal_columns(df: pd.DataFrame, keys: Keys) -> tuple[list[str], dict[str, str]]:
    """Numeric non-key columns; refuses none at all and columns named like a clock,
    warns about columns that only ever increase and names the columns it leaves out."""
    roles = keys.roles(df)
    channels, left_out = classify_columns(df, roles)
    others = {c: why for c, why in left_out.items() if c not in roles}
    if not channels:
        raise InputError(
            "found no numeric channel columns in the DataFrame "
            f"(other columns, with why they are not channels: {others!r}); {CHANNELS_HINT}"
        )
    if others:
        shown = ", ".join(f"{c!r} ({why})" for c, why in others.items())
        _warn(
            f"column(s) left out, not channels: {shown}. If one is a signal, convert it "
            "with pd.to_numeric(df[column], errors='coerce'); to use only the signals you "
            f"mean, pass channels=[...] (inferred: {channels})"
        )
    named, rising = clock_like_channels(df, channels, keys.by)
    if named:
        raise InputError(
            f"column(s) {named} are named like an index or a clock (a CSV's saved "
            "index, a sample counter, a timestamp); position in a recording can leak "
            "the label, so they are not used as channels by default. Drop them, or "
            f"pass channels=[...] naming the signal columns (inferred: {channels})"
        )
    if rising:
        _warn(
            f"channel(s) {rising} only ever increase within every recording, like a "
            "clock or a counter; position in a recording can leak the label. If they "
            "are not sensor signals, drop them or pass channels=[...]"
        )
    return channels, left_out


def _named_signal_columns(
    df: pd.DataFrame, channels: Sequence[str] | str, keys: Keys
) -> tuple[list[str], dict[str, str]]:
    """The named channels (no duplicates, no key column); every other column is left out."""
    channels = [str(c) for c in channels] if not isinstance(channels, str) else [channels]
    if len(channels) == 0:
        raise InputError("channels is empty; name at least one signal column")
    if len(set(channels)) != len(channels):
        raise InputError(f"channels has duplicates: {channels!r}")
    for reserved in (keys.subject, keys.recording, keys.time, keys.label):
        if reserved is not None and reserved in channels:
            raise InputError(f"column {reserved!r} cannot be both a channel and a key column")
    roles = keys.roles(df)
    named = set(channels)
    left_out = {
        str(c): roles.get(c, "not named in channels=[...]")
        for c in df.columns
        if str(c) not in named
    }
    return channels, left_out


def select_channels(
    df: pd.DataFrame, channels: Sequence[str] | str | None, keys: Keys
) -> tuple[list[str], dict[str, str]]:
    """The signal columns, inferred (``channels=None``) or as named, checked for use.

    Returns
    -------
    channels : list of str
        In the order of axis 1 of the windows.
    left_out : dict of str to str
        Every other column with the reason in plain words.
    """
    if channels is None:
        channels, left_out = _infer_signal_columns(df, keys)
    else:
        channels, left_out = _named_signal_columns(df, channels, keys)
    validate_channels(df, channels)
    return channels, left_out


# ------------------------------------------------------------------------------ timing


def _check_time_column(df: pd.DataFrame, time: str) -> None:
    if not pd.api.types.is_numeric_dtype(df[time]) or pd.api.types.is_bool_dtype(df[time]):
        raise InputError(
            f"time column {time!r} must be numeric seconds since the start of the "
            f"recording, got dtype {df[time].dtype}; convert it (for datetimes: "
            f"(df[{time!r}] - df[{time!r}].min()).dt.total_seconds()), or pass "
            "time=None to go by row order"
        )
    if df[time].isna().any():
        raise InputError(
            f"time column {time!r} has {int(df[time].isna().sum())} missing values; "
            "every row needs its time"
        )


def _check_fs_argument(fs) -> float | None:
    """``fs`` as given to make_windows: None, or a positive finite number (not a bool)."""
    if fs is None:
        return None
    if isinstance(fs, (bool, np.bool_)) or not isinstance(fs, (int, float, np.number)):
        raise InputError(f"fs must be a positive sampling rate in Hz, got {fs!r}")
    if not np.isfinite(fs) or fs <= 0:
        raise InputError(f"fs must be a positive sampling rate in Hz, got {fs!r}")
    return float(fs)


def _rate_source(df: pd.DataFrame, keys: Keys, fs: float | None) -> str:
    """Where ``fs`` comes from, after checking it against the time column's median step
    (a given fs that contradicts it by a unit mix-up, or an inferred rate below 1 Hz,
    likely milliseconds, is refused)."""
    source = "given" if fs is not None else "not given"
    time = keys.time
    dt = median_step(df, time, keys.by) if time is not None else None
    if dt is None:
        return source
    col_fs = 1.0 / dt
    if fs is not None:
        check_given_fs(fs, dt, time)
        return source
    if col_fs < 1.0:
        raise InputError(
            f"column {time!r} advances {dt:g} per sample (fs = {col_fs:g} Hz): if it "
            f"counts milliseconds, divide it by 1000 (df[{time!r}] = df[{time!r}] / "
            f"1000); if the rate really is {col_fs:g} Hz, pass fs={col_fs:g}"
        )
    return f"time column {time!r}, median step {dt:g} s"


def _resample_if_irregular(
    df: pd.DataFrame, keys: Keys, channels: list[str], fs: float | None, source: str
) -> tuple[pd.DataFrame, float | None, str]:
    """Resample to a regular grid, with a warning, when the time column is irregular or
    contradicts a given ``fs``; otherwise return the inputs unchanged."""
    time = keys.time
    try:
        report = timing.check_timing(df, time, keys.by)
    except InputError:  # no recording with two times: nothing to measure
        return df, fs, source
    # A given fs (e.g. the model's rate at predict time) that the time column
    # contradicts would cut windows of the wrong duration without any error.
    off_rate = fs is not None and abs(report.median_fs - float(fs)) > report.tol * float(fs)
    if not (off_rate or not report.regular):
        return df, fs, source
    target = float(fs) if fs is not None else report.median_fs
    what = (
        f"recorded at {report.median_fs:g} Hz (time column {time!r}), not at fs={target:g} Hz"
        if off_rate and report.regular
        else f"time column {time!r} is {report}"
    )
    _warn(
        f"{what}. Resampled every recording to a regular "
        f"{target:g} Hz grid (anti-aliased; gaps longer than 3 samples left missing, "
        "never interpolated). Call medspt.data.timing.regularize(df, fs=...) yourself to "
        "choose the rate, or pass regularize=False to keep the rows as they are"
    )
    # gaps are 3 samples at the coarser of the two rates, so that upsampling slower data
    # does not turn every step into a gap
    gap = 3.0 / min(target, report.median_fs)
    df = timing.regularize(df, target, time=time, by=keys.by, channels=channels, max_gap=gap)
    if fs is not None:
        source = f"given; data resampled from {report.median_fs:g} Hz (time column {time!r})"
    else:
        source = (
            f"time column {time!r}, median rate {report.median_fs:g} Hz; resampled "
            "to a regular grid"
        )
    return df, target, source


def regularize_timing(
    df: pd.DataFrame,
    keys: Keys,
    channels: list[str],
    fs: float | None,
    *,
    regularize: bool = True,
    in_seconds: bool = False,
) -> tuple[pd.DataFrame, float | None, str]:
    """Check the time column and ``fs``; resample irregular timing onto a regular grid.

    Parameters
    ----------
    keys : Keys
        From :func:`validate_frame`.
    fs : float or None
        The rate asked for; checked against the time column (see
        :func:`medspt.data.sampling.check_given_fs`).
    regularize : bool
        Resample (with a warning) when the time column is irregular or contradicts
        ``fs``; see :func:`medspt.data.timing.regularize`.
    in_seconds : bool
        Window or stride is given in seconds: a rate that cannot be inferred is then an
        error rather than None.

    Returns
    -------
    df : DataFrame
        The frame, resampled or as given.
    fs : float or None
        The rate the windows are cut at.
    fs_source : str
        Where ``fs`` came from, in words.
    """
    if keys.time is not None:
        _check_time_column(df, keys.time)
    fs = _check_fs_argument(fs)
    source = _rate_source(df, keys, fs)
    if keys.time is not None and regularize:
        df, fs, source = _resample_if_irregular(df, keys, channels, fs, source)
    if fs is None and keys.time is not None:
        try:
            fs = infer_fs(df, keys.time, keys.by)
        except InputError:
            if in_seconds:
                raise  # seconds need a rate; windows in samples do not
    return df, fs, source


# ----------------------------------------------------------------------------- lengths


def window_samples(
    window: int | str, stride: int | str | None, fs: float | None, fs_source: str = "given"
) -> tuple[int, int]:
    """Window and stride in samples (``stride=None``: the window, no overlap).

    Lengths in seconds (``"10s"``) need ``fs``; a window in seconds must come to at
    least :data:`MIN_WINDOW` samples; both must come to at least 1 sample.
    """
    win = to_samples(window, fs, "window")
    step = to_samples(stride, fs, "stride") if stride is not None else win
    rate = f"fs={fs:g} Hz ({fs_source})" if fs is not None else ""
    if isinstance(window, str) and win < MIN_WINDOW:
        raise InputError(
            f"window={window!r} at {rate} is only {win} sample(s); a window needs at "
            f"least {MIN_WINDOW} samples (and a few dozen to show a pattern). Give a "
            f"longer window, e.g. window='{MIN_WINDOW * 8 / fs:g}s' or "
            f"window={MIN_WINDOW * 8} (samples), or check fs"
        )
    if win is None or win < 1:
        raise InputError(f"window must be at least 1 sample, got {window!r}")
    if step < 1:
        at = f" at {rate}" if isinstance(stride, str) else ""
        raise InputError(
            f"stride must be at least 1 sample, got {stride!r}{at}; give a longer stride "
            "or one in samples (an int)"
        )
    return win, step


def check_length(length: int | None) -> None:
    """``length`` (cases padded to it, with ``window=None``) is None or a positive int."""
    if length is not None and (not isinstance(length, (int, np.integer)) or length < 1):
        raise InputError(f"length must be a positive number of samples, got {length!r}")


# ------------------------------------------------------------------------------ labels


def encode_labels(
    df: pd.DataFrame, keys: Keys, classes: Sequence | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Class labels and the code of every row (codes index into the classes).

    Classes default to the sorted labels (first-seen order when they do not sort);
    given ``classes`` refuse any other label. Without a label column every code is 0.

    Returns
    -------
    classes : ndarray
    codes : ndarray of int64, shape (len(df),)
    """
    if not keys.has_label:
        cls = np.asarray(classes) if classes is not None else np.array([])
        return cls, np.zeros(len(df), np.int64)
    values = df[keys.label]
    if classes is None:
        cls = pd.unique(values)
        try:
            cls = np.array(sorted(cls))
        except TypeError:  # mixed types: keep first-seen order
            cls = np.asarray(cls, dtype=object)
    else:
        cls = np.asarray(classes)
        unknown = sorted(set(pd.unique(values)) - set(cls.tolist()), key=str)
        if unknown:
            raise InputError(
                f"label column {keys.label!r} has values the model was not trained on: "
                f"{unknown[:10]!r}; known classes: {cls.tolist()!r}"
            )
    return cls, pd.Categorical(values, categories=cls).codes.astype(np.int64)


# -------------------------------------------------------------------------- recordings


@dataclass
class Recording:
    """The rows of one recording, in time order.

    Attributes
    ----------
    subject, recording
        Its keys (``recording`` None when the frame has no recording column).
    where : str
        ``"subject 'S1', recording 'r1'"``, for messages.
    rows : ndarray of int, shape (n,)
        Row positions in the frame.
    t : ndarray of float, shape (n,), or None
        Their times (None without a time column).
    """

    subject: object
    recording: object
    where: str
    rows: np.ndarray
    t: np.ndarray | None = None


def segment_recordings(df: pd.DataFrame, keys: Keys) -> Iterator[Recording]:
    """Yield the recordings of ``df`` in order of first appearance.

    Rows out of time order are sorted (with a warning); duplicated timestamps are
    refused. A generator, so that each recording is checked when its turn comes.
    """
    t_all = df[keys.time].to_numpy(dtype=float) if keys.time is not None else None
    for key, idx in df.groupby(keys.by, sort=False).indices.items():
        key = key if isinstance(key, tuple) else (key,)
        subj, rec = key[0], (key[1] if keys.recording else None)
        where = f"subject {subj!r}" + (f", recording {rec!r}" if keys.recording else "")
        rows, t = np.asarray(idx), None
        if t_all is not None:
            t = t_all[rows]
            if np.any(np.diff(t) < 0):
                _warn(f"rows of {where} are not in {keys.time!r} order; they are sorted by time")
                order = np.argsort(t, kind="stable")
                rows, t = rows[order], t[order]
            if np.any(np.diff(t) == 0):
                raise InputError(
                    f"time column {keys.time!r} has duplicated timestamps in {where}; "
                    "each sample needs its own time"
                )
        yield Recording(subj, rec, where, rows, t)


# ------------------------------------------------------------------------- cut windows


def window_starts(n: int, window: int, stride: int, codes: np.ndarray | None = None) -> np.ndarray:
    """Starts of the windows of one recording of ``n`` samples.

    The grid is anchored at sample 0: starts 0, stride, 2·stride, … while
    start + window ≤ n. With ``codes`` (the class code of every sample), only windows
    whose samples all share one label are kept.
    """
    starts = np.arange(0, n - window + 1, stride)
    if codes is not None and len(starts):
        # Run id increases at every label change: a window is pure iff its first and last
        # sample lie in the same run.
        run_id = np.concatenate([[0], np.cumsum(codes[1:] != codes[:-1])])
        starts = starts[run_id[starts] == run_id[starts + window - 1]]
    return starts


def cut_windows(
    values: np.ndarray, starts: np.ndarray, window: int, max_missing: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """Cut the windows at ``starts`` out of one recording.

    Parameters
    ----------
    values : ndarray, shape (n, C)
        One recording, time first; NaN marks a missing sample.
    starts : ndarray of int
        Window starts, e.g. from :func:`window_starts`.
    window : int
        Window length in samples.
    max_missing : float
        Windows with a larger fraction of NaN values are dropped (1.0 keeps all).

    Returns
    -------
    X : ndarray of float32, shape (n_w, C, window)
        Channels first, contiguous.
    starts : ndarray of int, shape (n_w,)
        The starts of the windows kept.
    """
    starts = np.asarray(starts)
    if len(starts) == 0:
        return np.empty((0, values.shape[1], window), np.float32), starts
    w = np.lib.stride_tricks.sliding_window_view(values, window, axis=0)[starts]  # (n_w, C, T)
    if np.isnan(values).any():
        keep = np.isnan(w).mean(axis=(1, 2)) <= max_missing
        w, starts = w[keep], starts[keep]
    return np.ascontiguousarray(w, dtype=np.float32), starts


def window_meta(subject, recording, starts: np.ndarray, window: int, start_time) -> pd.DataFrame:
    """One bookkeeping row per window: subject, recording, start, stop, start_time."""
    return pd.DataFrame(
        {
            "subject": subject,
            "recording": recording,
            "start": starts,
            "stop": starts + window,
            "start_time": start_time,
        }
    )


def longest_nan_run(mask: np.ndarray) -> tuple[int, int, int]:
    """Longest run of True along axis 0 of a (n, C) bool array: (length, start, channel
    index) of the longest over channels; (0, 0, 0) when there is none."""
    if not mask.any():
        return 0, 0, 0
    m = np.vstack([np.zeros((1, mask.shape[1]), bool), mask, np.zeros((1, mask.shape[1]), bool)])
    d = np.diff(m.astype(np.int8), axis=0)
    best = (0, 0, 0)
    for j in range(mask.shape[1]):
        starts = np.flatnonzero(d[:, j] == 1)
        stops = np.flatnonzero(d[:, j] == -1)
        if len(starts):
            k = int(np.argmax(stops - starts))
            if stops[k] - starts[k] > best[0]:
                best = (int(stops[k] - starts[k]), int(starts[k]), j)
    return best


def _gap_message(
    rec: Recording,
    mask: np.ndarray,
    run: tuple[int, int, int],
    window: int,
    channels: list[str],
    fs: float | None,
    keys: Keys,
) -> str:
    """Refusal for a stretch of missing samples at least a window long: which recording,
    where, whether rows are missing or one channel, and what to do."""
    length, start, j = run
    stop = start + length  # first sample after the gap (may be past the end)
    every = bool(mask[start:stop].all())
    t = rec.t
    if t is not None:
        end = f"t={t[stop]:g} s" if stop < len(t) else "the end"
        span = f"from t={t[start]:g} s to {end}"
        after = f"the rows from t={t[stop]:g} s on" if stop < len(t) else None
    else:
        span = f"from sample {start} to {'sample ' + str(stop) if stop < len(mask) else 'the end'}"
        after = f"the rows from sample {stop} on" if stop < len(mask) else None
    dur = f" = {length / fs:g} s" if fs else ""
    column = (
        f"column {keys.recording!r}" if keys.recording else "a recording column (recording=...)"
    )
    split = (
        f"split the recording at the gap: give {after} a recording id of their own in "
        f"{column}, so that windows are cut on either side of it"
        if after
        else "cut the recording where the gap begins"
    )
    if every:
        why = (
            f"rows are missing there (the time column {keys.time!r} jumps; resampling "
            "leaves gaps missing, never interpolated) or every channel is NaN"
            if keys.time is not None
            else "every channel is NaN there"
        )
        return (
            f"{rec.where} has a gap of {length} samples{dur} with no value in any channel "
            f"({span}): {why}. That is at least a whole window ({window} samples). To fix "
            f"it, {split}"
        )
    missing = [c for c, m in zip(channels, mask[start:stop].all(axis=0)) if m]
    return (
        f"{rec.where} has a gap of {length} samples{dur} in channel(s) {missing} ({span}), "
        f"at least a whole window ({window} samples); missing values are never filled in. "
        f"To fix it, {split}; or leave those channel(s) out with channels=[...] naming the "
        "others"
    )


@dataclass
class Cases:
    """What :func:`cut_recordings` cut, one entry per recording that gave any.

    ``xs`` holds windows (n_w, C, T) (or one case (C, n) each, with ``window=None``),
    ``ys`` their class codes, ``metas`` their bookkeeping rows; ``short`` maps each
    subject with a recording too short for any window to those recordings' lengths.
    """

    xs: list[np.ndarray] = field(default_factory=list)
    ys: list[np.ndarray] = field(default_factory=list)
    metas: list[pd.DataFrame] = field(default_factory=list)
    short: dict = field(default_factory=dict)


def _recording_windows(
    rec: Recording,
    vals: np.ndarray,
    codes: np.ndarray,
    keys: Keys,
    channels: list[str],
    *,
    window: int,
    stride: int,
    max_missing: float,
    fs: float | None,
) -> tuple[np.ndarray, np.ndarray, pd.DataFrame] | None:
    """Windows, codes and meta of one recording (``vals`` (n, C)); None when it has no
    complete window within one label. A gap of a whole window is refused."""
    if len(vals) < window:
        return None
    nan = np.isnan(vals)
    if nan.any():
        run = longest_nan_run(nan)
        if run[0] >= window:
            raise InputError(_gap_message(rec, nan, run, window, channels, fs, keys))
    starts = window_starts(len(vals), window, stride, codes)
    if len(starts) == 0:
        return None
    x, starts = cut_windows(vals, starts, window, max_missing)  # (n_w, C, T)
    if rec.t is not None:
        start_time = rec.t[starts] - rec.t[0]
    else:
        start_time = starts / fs if fs else np.nan
    return x, codes[starts], window_meta(rec.subject, rec.recording, starts, window, start_time)


def _whole_case(
    rec: Recording,
    vals: np.ndarray,
    codes: np.ndarray,
    keys: Keys,
    *,
    max_missing: float,
    fs: float | None,
) -> tuple[np.ndarray, np.ndarray, pd.DataFrame] | None:
    """One recording as one case (C, n); None (with a warning) when too much of it is
    missing. A label change inside it is refused."""
    if keys.has_label and np.any(codes[1:] != codes[:-1]):
        raise InputError(
            f"window=None makes one case per recording, but the label changes "
            f"inside {rec.where}; give a window length to cut labelled segments instead"
        )
    frac = float(np.isnan(vals).mean())
    if frac > max_missing:
        _warn(
            f"{rec.where}: {frac:.0%} of its values are missing (more than "
            f"max_missing={max_missing}); the case is dropped"
        )
        return None
    meta = pd.DataFrame(
        {"subject": [rec.subject], "recording": [rec.recording], "start": [0], "stop": [len(vals)]}
    ).assign(start_time=0.0 if (keys.time is not None or fs) else np.nan)
    return vals.T, codes[:1], meta


def cut_recordings(
    df: pd.DataFrame,
    keys: Keys,
    channels: list[str],
    codes: np.ndarray,
    *,
    window: int | None,
    stride: int | None,
    max_missing: float = 0.5,
    fs: float | None = None,
) -> Cases:
    """Cut every recording (:func:`segment_recordings`) into windows, or into one case
    each with ``window=None``.

    ``codes`` holds the class code of every row of ``df`` (:func:`encode_labels`).
    """
    values = df[channels].to_numpy(dtype=np.float32)  # (rows, C)
    cases = Cases()
    for rec in segment_recordings(df, keys):
        vals, rec_codes = values[rec.rows], codes[rec.rows]  # (n, C), (n,)
        if window is None:
            case = _whole_case(rec, vals, rec_codes, keys, max_missing=max_missing, fs=fs)
        else:
            case = _recording_windows(
                rec,
                vals,
                rec_codes,
                keys,
                channels,
                window=window,
                stride=stride,
                max_missing=max_missing,
                fs=fs,
            )
            if case is None:
                cases.short.setdefault(rec.subject, []).append(len(vals))
        if case is not None:
            cases.xs.append(case[0])
            cases.ys.append(case[1])
            cases.metas.append(case[2])
    return cases


# ------------------------------------------------------------------------------- stack


def check_short_subjects(cases: Cases, window: int | None, drop_short: bool = False) -> None:
    """Refuse (or, with ``drop_short``, warn about) subjects left without any window."""
    have = {m["subject"].iloc[0] for m in cases.metas if len(m)}
    missing = [s for s in cases.short if s not in have]
    if not missing:
        return
    detail = ", ".join(f"{s!r} (longest usable part {max(cases.short[s])})" for s in missing[:5])
    msg = (
        f"{len(missing)} subject(s) have no complete window of {window} samples "
        f"within one label: {detail}; use a shorter window or drop_short=True"
    )
    if not drop_short:
        raise InputError(msg)
    _warn(msg + " — dropped")


def pad_cases(xs: list[np.ndarray], length: int | None, subjects: Sequence) -> np.ndarray:
    """Stack cases (C, n_i) into (N, C, T), NaN-padded at the end to ``length`` (default:
    the longest); a case longer than ``length`` is refused, naming its subject."""
    longest = max(x.shape[1] for x in xs)
    T = longest if length is None else int(length)
    if longest > T:
        i = int(np.argmax([x.shape[1] for x in xs]))
        raise InputError(
            f"subject {subjects[i]!r} has a recording of {longest} samples, longer "
            f"than length={T} (the longest case the model was fitted on); cut it first"
        )
    X = np.full((len(xs), xs[0].shape[0], T), np.nan, dtype=np.float32)  # (N, C, T)
    for i, x in enumerate(xs):
        X[i, :, : x.shape[1]] = x
    return X


def stack_cases(
    cases: Cases, *, window: int | None, length: int | None = None
) -> tuple[np.ndarray, pd.DataFrame]:
    """All windows as one array (N, C, T) and their meta; refuses when there is none."""
    if not cases.xs:
        if window is None:
            raise InputError("no recording is left (every one has too many missing values)")
        raise InputError(f"no complete window of {window} samples in any recording")
    meta = pd.concat(cases.metas, ignore_index=True)
    if window is None:
        return pad_cases(cases.xs, length, meta["subject"]), meta
    return np.concatenate(cases.xs), meta
