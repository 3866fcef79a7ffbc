"""The steps of :func:`medspt.data.windowset.make_windows`, each one usable and testable on its own.

::

    validate_frame      key columns, labels and arguments        -> Keys
    select_channels     inferred or named signal columns          -> channels, left_out
    regularize_timing   time column checks, fs, resampling        -> df, fs, fs_source
    window_samples      window and stride in samples              -> window, stride
    encode_labels       class codes of every row                  -> classes, codes
    segment_recordings  rows of each recording, in time order     -> Recording, ...
    cut_recordings      windows (window_starts, cut_windows) or   -> Cases
                        one case per recording (window=None);
                        split at gaps, drop what max_missing says
    check_short_subjects  drop subjects without any window        -> Cases
    stack_cases                                                   -> X, meta

:func:`window_starts` and :func:`cut_windows` are the one place where windows are cut:
the evaluation protocols call them too (:mod:`medspt.datasets.protocols`).

Warnings point at the code that called :func:`~medspt.data.windowset.make_windows` (or the step),
not at the step that noticed the problem.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from medspt.core.errors import InputError
from medspt.core.warn import warn
from medspt.data import timing
from medspt.data.channels import (
    CHANNELS_HINT,
    check_column,
    classify_columns,
    clock_like_channels,
    sparse_or_flat_channels,
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
    "samples_as_given",
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

#: Samples: a window given in samples (an int) shorter than this, at a known rate above
#: 1 Hz, gets a warning with its duration asking whether seconds were meant
#: (``window=10`` at 8 Hz for ``window='10s'``).
SHORT_SAMPLES_WINDOW = 64

# True while a model cuts new data with its own fitted lengths in samples: those ints
# are no slip of the user's
_SAMPLES_AS_GIVEN: ContextVar[bool] = ContextVar("medspt_samples_as_given", default=False)


@contextmanager
def samples_as_given() -> Iterator[None]:
    """Inside, a window or stride in samples is taken as meant, without the warning of
    :func:`window_samples` (a fitted model cutting new data with its own lengths)."""
    token = _SAMPLES_AS_GIVEN.set(True)
    try:
        yield
    finally:
        _SAMPLES_AS_GIVEN.reset(token)


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


def _warn(message: str, key=None) -> None:
    """Warn at the user's call site, once per top-level call (:func:`medspt.core.warn.warn`)."""
    warn(message, key=key)


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
        _warn(_left_out_message(others, channels))
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


def _left_out_message(others: dict[str, str], channels: list[str]) -> str:
    """Warning naming the non-key columns that inference left out, why (with a sample
    value), and how to include one or choose the channels."""
    shown = ", ".join(f"{c!r} ({why})" for c, why in others.items())
    text = [c for c, why in others.items() if why.startswith("not numeric")]
    if text:
        c = text[0]
        how = (
            f"Text is not a signal: if one of them is, convert it to numbers first, e.g. "
            f"df[{c!r}] = pd.to_numeric(df[{c!r}], errors='coerce') (what is not a "
            "number becomes NaN), and it is picked up as a channel"
        )
    else:
        how = "None of them can be a signal as it is"
    return (
        f"column(s) left out, not channels: {shown}. {how}; to use only the signals you "
        f"mean, pass channels=[...] (inferred: {channels})"
    )


def _named_signal_columns(
    df: pd.DataFrame, channels: Sequence[str] | str, keys: Keys
) -> tuple[list[str], dict[str, str]]:
    """The named channels (no duplicates, no key column); every other column is left out."""
    channels = [str(c) for c in channels] if not isinstance(channels, str) else [channels]
    if len(channels) == 0:
        raise InputError(
            "channels=[] names no column; name at least one signal column, or pass "
            "channels=None to use every numeric column"
        )
    twice = sorted({c for c in channels if channels.count(c) > 1})
    if twice:
        raise InputError(
            f"channels={channels!r} names {', '.join(map(repr, twice))} more than once; "
            "name each signal column once"
        )
    roles = keys.roles(df)
    for reserved in (keys.subject, keys.recording, keys.time, keys.label):
        if reserved is not None and reserved in channels:
            role = roles.get(reserved, "a key column").split(" (")[0]
            raise InputError(
                f"column {reserved!r} is the {role} and cannot also be a channel; take it "
                f"out of channels={channels!r}"
            )
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
    for channel, kind, message in sparse_or_flat_channels(df, channels):
        # keyed by channel: the check on the training windows (SPTClassifier.fit) finds
        # the same flat channel and must not say it again in other words
        _warn(message, key=(kind, channel))
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


def _rounded_clock(
    report: timing.TimingReport, time: str, fs: float | None, source: str
) -> tuple[float | None, str]:
    """``fs`` and where it came from, with the rate of a clock rounded to a coarser unit
    than its step: 1 / mean step (a 64 Hz clock rounded to milliseconds steps 15 and
    16 ms; its median step says 62.5 or 66.7 Hz). A given ``fs`` is kept."""
    if fs is not None or report.rounded_to <= 0:
        return fs, source
    fs = report.median_fs
    return fs, (
        f"time column {time!r}, mean step {1 / fs:g} s (its times are rounded to "
        f"{report.rounded_to:.3g} s)"
    )


def _resample_if_irregular(
    df: pd.DataFrame, keys: Keys, channels: list[str], fs: float | None, source: str
) -> tuple[pd.DataFrame, float | None, str]:
    """Resample to a regular grid, with a warning, when the time column is irregular or
    contradicts a given ``fs``; otherwise return the inputs unchanged (with the rate of
    a rounded clock, :func:`_rounded_clock`).

    Gaps alone (one rate, no jitter) are not resampled: :func:`cut_recordings` splits a
    recording at a gap of a window or more and marks the samples of a shorter one
    missing, so the values stay the recorded ones."""
    time = keys.time
    try:
        report = timing.check_timing(df, time, keys.by)
    except InputError:  # no recording with two times: nothing to measure
        return df, fs, source
    # A given fs (e.g. the model's rate at predict time) that the time column
    # contradicts would cut windows of the wrong duration without any error.
    off_rate = fs is not None and abs(report.median_fs - float(fs)) > report.tol * float(fs)
    if not off_rate and (report.regular or report.gaps_only):
        fs, source = _rounded_clock(report, time, fs, source)
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
        Resample (with a warning) when the time column is irregular (jitter, rates that
        differ between recordings) or contradicts ``fs``; see
        :func:`medspt.data.timing.regularize`. Gaps alone are left to
        :func:`cut_recordings`. A clock rounded to a coarser unit than its step is
        regular at 1 / mean step (that is ``fs`` when none is given).
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
    elif keys.time is not None and fs is None:  # rows kept as they are; the rate still counts
        try:
            fs, source = _rounded_clock(
                timing.check_timing(df, keys.time, keys.by), keys.time, fs, source
            )
        except InputError:  # no recording with two times: nothing to measure
            pass
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
    least :data:`MIN_WINDOW` samples; both must come to at least 1 sample. A window in
    samples shorter than :data:`SHORT_SAMPLES_WINDOW` samples at a known rate, or a
    stride in samples that short beside a window in seconds, gets a warning: seconds
    were most likely meant (see :func:`_samples_meant_as_seconds`).
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
    slip = _samples_meant_as_seconds(window, stride, win, step, fs)
    if slip is not None:
        _warn(slip)
    return win, step


def _samples_meant_as_seconds(
    window: int | str, stride: int | str | None, win: int, step: int, fs: float | None
) -> str | None:
    """A warning when a length in samples looks like seconds meant (``window=10`` at
    8 Hz is 1.25 s), else None.

    Only at a known rate above 1 Hz (at 1 Hz samples are seconds), and only for what
    looks like a slip: a window in samples shorter than :data:`SHORT_SAMPLES_WINDOW`
    samples (few for a pattern; the evaluation protocols' windows in samples are 200
    and 240, and a window of seconds written as an int is a small number), or a stride
    in samples that short beside a window in seconds (units mixed). The same length
    given in seconds is taken as meant, without a warning.
    """
    if fs is None or fs <= 1 or _SAMPLES_AS_GIVEN.get():
        return None
    stride_in_samples = stride is not None and not isinstance(stride, str)
    # 3 significant digits of a duration under 64 samples still round back to them
    hz = f"{round(fs, 2):g} Hz"
    if not isinstance(window, str) and win < SHORT_SAMPLES_WINDOW:
        also = (
            f" (stride={stride!r} is in samples too: {step / fs:.3g} s)"
            if stride_in_samples
            else ""
        )
        return (
            f"window={window!r} is {win} samples = {win / fs:.3g} s at {hz}{also}; did "
            f"you mean window='{window}s'? Lengths in seconds end in 's'; to keep {win} "
            f"samples without this warning, pass window='{win / fs:.3g}s'"
        )
    if isinstance(window, str) and stride_in_samples and step < SHORT_SAMPLES_WINDOW:
        return (
            f"stride={stride!r} is {step} samples = {step / fs:.3g} s at {hz}, while "
            f"window={window!r} is in seconds; did you mean stride='{stride}s'? To keep "
            f"{step} samples without this warning, pass stride='{step / fs:.3g}s'"
        )
    return None


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
    """One bookkeeping row per window: subject, recording, start, stop, start_time.

    ``recording`` None (the frame has no recording column) is recorded as NaN, the one
    marker of a missing recording id in windows and in predictions per recording."""
    return pd.DataFrame(
        {
            "subject": subject,
            "recording": np.nan if recording is None else recording,
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


@dataclass
class _Gap:
    """A stretch of one recording at least a window long without a value: rows missing
    (``rows`` True: the time column jumps over them), NaN in every channel (``channels``
    None; ``rows`` None where resampling may have left missing rows as NaN), or NaN in
    the channels named.

    ``start`` and ``stop`` say where in the reader's terms (``"t=3 s"``, ``"sample
    300"``); ``stop`` is the first sample after the gap, None when it runs to the end.
    """

    where: str
    length: int
    start: str
    stop: str | None
    rows: bool | None = False
    channels: list[str] | None = None
    jump: str = ""


def _gap_text(gap: _Gap, fs: float | None, keys: Keys) -> str:
    """``"<recording> has a gap of N samples = S s with no value in any channel (from
    ... to ...): <why>"``: where a gap lies and why it has no value (or which channels
    it lacks)."""
    dur = f" = {gap.length / fs:g} s" if fs else ""
    span = f"from {gap.start} to {gap.stop or 'the end'}"
    head = f"{gap.where} has a gap of {gap.length} samples{dur}"
    if gap.channels is not None:
        return f"{head} in channel(s) {gap.channels} ({span})"
    if gap.rows:
        why = f"rows are missing there (the time column {keys.time!r} jumps {gap.jump})"
    elif gap.rows is None and keys.time is not None:
        why = (
            f"rows are missing there (the time column {keys.time!r} jumps; resampling "
            "leaves gaps missing, never interpolated) or every channel is NaN"
        )
    else:
        why = "every channel is NaN there"
    return f"{head} with no value in any channel ({span}): {why}"


def _gap_message(gap: _Gap, window: int, fs: float | None, keys: Keys) -> str:
    """Refusal (``strict=True``) of a stretch of missing samples at least a window long:
    :func:`_gap_text` and what to do."""
    column = (
        f"column {keys.recording!r}" if keys.recording else "a recording column (recording=...)"
    )
    split = (
        f"split the recording at the gap: give the rows from {gap.stop} on a recording id "
        f"of their own in {column}, so that windows are cut on either side of it"
        if gap.stop
        else "cut the recording where the gap begins"
    )
    if gap.channels is None:
        return (
            f"{_gap_text(gap, fs, keys)}. That is at least a whole window ({window} "
            f"samples). To fix it, {split}"
        )
    return (
        f"{_gap_text(gap, fs, keys)}, at least a whole window ({window} samples); missing "
        f"values are never filled in. To fix it, {split}; or leave those channel(s) out "
        "with channels=[...] naming the others"
    )


@dataclass
class Cases:
    """What :func:`cut_recordings` cut, and what it left out.

    Attributes
    ----------
    xs, ys, metas : list
        Per recording that gave any: windows (n_w, C, T) (or one case (C, n) each, with
        ``window=None``), their class codes, their bookkeeping rows.
    short : dict
        Subject -> the longest usable part (samples) of each of its recordings too short
        for any window within one label.
    subjects : list
        Every subject, in order of first appearance.
    missing : dict
        Subject -> windows (or cases) left out for more than ``max_missing`` missing
        values: ``{"windows", "samples" (the time they cover, overlaps once),
        "channels" (C,) samples missing per channel within them}``.
    hidden : dict
        Subject -> windows kept although a channel is missing for the whole window
        (within ``max_missing`` of all values): ``{"windows", "samples", "channels" (C,)
        such windows per channel, "share" (the smallest missing share among them)}``.
    gaps : list of _Gap
        Stretches without any value at least a window long, where recordings were split;
        ``gap_subjects`` the subjects they belong to.
    dropped_cases : list of str
        With ``window=None``: why each case left out was.
    dropped_subjects : list
        Subjects left without any window (:func:`check_short_subjects`).
    max_missing : float
        The threshold the windows were cut with.
    """

    xs: list[np.ndarray] = field(default_factory=list)
    ys: list[np.ndarray] = field(default_factory=list)
    metas: list[pd.DataFrame] = field(default_factory=list)
    short: dict = field(default_factory=dict)
    subjects: list = field(default_factory=list)
    missing: dict = field(default_factory=dict)
    hidden: dict = field(default_factory=dict)
    gaps: list = field(default_factory=list)
    dropped_cases: list = field(default_factory=list)
    dropped_subjects: list = field(default_factory=list)
    max_missing: float = 0.5
    gap_subjects: list = field(default_factory=list)

    def counts(self, fs: float | None = None) -> dict:
        """What was left out or split, in numbers (``WindowSet.dropped``): windows and
        the samples (and ``seconds``, None without a rate ``fs``) they cover, windows
        kept with a whole channel missing, recordings split at gaps and the samples
        (``gap_seconds``) of those gaps, and the subjects dropped."""
        samples = int(sum(m["samples"] for m in self.missing.values()))
        gap = int(sum(g.length for g in self.gaps))
        return {
            "windows": int(sum(m["windows"] for m in self.missing.values())),
            "samples": samples,
            "seconds": round(samples / fs, 6) if fs else None,
            "windows_channel_missing": int(sum(h["windows"] for h in self.hidden.values())),
            "recordings_split": len({g.where for g in self.gaps}),
            "gap_samples": gap,
            "gap_seconds": round(gap / fs, 6) if fs else None,
            "subjects": [s.item() if hasattr(s, "item") else s for s in self.dropped_subjects],
        }


@dataclass
class _Piece:
    """A stretch of one recording on its sample grid: ``vals (n, C)`` (NaN where a value
    or a row is missing), ``codes (n,)``, ``start`` (grid position of its first sample in
    the recording) and ``t`` (the time column's value at every grid point, or None)."""

    start: int
    vals: np.ndarray
    codes: np.ndarray
    t: np.ndarray | None


def _time_pieces(
    rec: Recording, vals: np.ndarray, codes: np.ndarray, window: int, fs: float | None
) -> tuple[list[_Piece], list[_Gap]]:
    """One recording on its sample grid, split where its time column jumps over a window
    of missing rows or more; the rows of a shorter jump come back as missing (NaN)
    samples, with the label of the nearest row.

    A jump is a step longer than 2.5 samples (as :func:`medspt.data.timing.check_timing`
    counts gaps); it stands for ``round(step · fs) - 1`` missing rows. Without a time
    column or a rate, the recording is one piece as it is."""
    t = rec.t
    if t is None or not fs or len(t) < 2:
        return [_Piece(0, vals, codes, t)], []
    step = np.diff(t)
    jump = step > 2.5 / fs
    if not jump.any():
        return [_Piece(0, vals, codes, t)], []
    lost = np.where(jump, np.rint(step * fs).astype(np.int64) - 1, 0)  # rows missing after each
    pos = np.concatenate([[0], np.cumsum(1 + lost)])  # grid position of every row
    split = np.flatnonzero(lost >= window)
    gaps = [
        _Gap(
            rec.where,
            int(lost[i]),
            f"t={t[i] + 1 / fs:g} s",
            f"t={t[i + 1]:g} s",
            rows=True,
            jump=f"from t={t[i]:g} s to t={t[i + 1]:g} s",
        )
        for i in split
    ]
    pieces = []
    bounds = np.concatenate([[0], split + 1, [len(t)]])
    for a, b in zip(bounds[:-1], bounds[1:]):
        p = pos[a:b] - pos[a]  # grid positions of the piece's rows
        n = int(p[-1]) + 1
        if n == b - a:  # no row missing inside
            pieces.append(_Piece(int(pos[a]), vals[a:b], codes[a:b], t[a:b]))
            continue
        grid = np.arange(n)
        prev = np.searchsorted(p, grid, side="right") - 1  # the row at or before each point
        nxt = np.minimum(prev + 1, len(p) - 1)
        near = np.where(grid - p[prev] <= p[nxt] - grid, prev, nxt)
        v = np.full((n, vals.shape[1]), np.nan, dtype=vals.dtype)
        v[p] = vals[a:b]
        pieces.append(
            _Piece(int(pos[a]), v, codes[a:b][near], t[a:b][prev] + (grid - p[prev]) / fs)
        )
    return pieces, gaps


def _runs(mask: np.ndarray, length: int) -> list[tuple[int, int]]:
    """(start, stop) of every run of True in the 1-d ``mask`` at least ``length`` long."""
    edges = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    starts, stops = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    return [(int(a), int(b)) for a, b in zip(starts, stops) if b - a >= length]


def _where_in(piece: _Piece, i: int, last: bool, fs: float | None) -> str | None:
    """Grid point ``i`` of a piece in the reader's terms: ``"t=3 s"`` or ``"sample 300"``;
    None at the recording's end (``i`` past the last piece's end)."""
    if i < len(piece.vals):
        return f"t={piece.t[i]:g} s" if piece.t is not None else f"sample {piece.start + i}"
    if last:
        return None
    # the piece ends where rows are missing: the first grid point after it
    return f"t={piece.t[-1] + 1 / fs:g} s" if piece.t is not None else f"sample {piece.start + i}"


def _nan_pieces(
    piece: _Piece,
    rec: Recording,
    channels: list[str],
    *,
    window: int,
    last: bool,
    strict: bool,
    fs: float | None,
    keys: Keys,
    resampled: bool = False,
) -> tuple[list[_Piece], list[_Gap]]:
    """A piece split where every channel is missing for a window or more (never
    filled in: windows are cut on either side). ``strict``: such a stretch, or one
    channel missing that long, is refused instead. ``resampled``: the frame was put on a
    regular grid, whose points in a gap of the time column are NaN too."""
    rows = None if resampled else False  # what a stretch of NaN in every channel may be
    nan = np.isnan(piece.vals)
    if not nan.any():
        return [piece], []
    if strict:
        length, start, _ = longest_nan_run(nan)
        if length >= window:
            stop = start + length
            every = bool(nan[start:stop].all())
            gone = None if every else [c for c, m in zip(channels, nan[start:stop].all(0)) if m]
            gap = _Gap(
                rec.where,
                length,
                _where_in(piece, start, last, fs),
                _where_in(piece, stop, last, fs),
                rows=rows,
                channels=gone,
            )
            raise InputError(_gap_message(gap, window, fs, keys))
        return [piece], []
    runs = _runs(nan.all(axis=1), window)
    if not runs:
        return [piece], []
    gaps = [
        _Gap(
            rec.where, b - a, _where_in(piece, a, last, fs), _where_in(piece, b, last, fs),
            rows=rows,
        )
        for a, b in runs
    ]  # fmt: skip
    pieces, at = [], 0
    for a, b in [*runs, (len(piece.vals), len(piece.vals))]:
        if a > at:
            t = piece.t[at:a] if piece.t is not None else None
            pieces.append(_Piece(piece.start + at, piece.vals[at:a], piece.codes[at:a], t))
        at = b
    return pieces, gaps


def _covered(n: int, starts: np.ndarray, window: int) -> np.ndarray:
    """(n,) bool: the samples that one of the windows at ``starts`` covers."""
    edges = np.zeros(n + 1, np.int64)
    np.add.at(edges, starts, 1)
    np.add.at(edges, starts + window, -1)
    return np.cumsum(edges[:n]) > 0


@dataclass
class _Cut:
    """The windows of one recording and what it left out (:func:`_recording_windows`)."""

    xs: list = field(default_factory=list)
    codes: list = field(default_factory=list)
    starts: list = field(default_factory=list)  # grid positions in the recording
    times: list = field(default_factory=list)  # seconds since the recording's start
    candidates: int = 0  # windows within one label, before max_missing
    longest: int = 0  # the longest piece, in samples
    missing: dict | None = None
    hidden: dict | None = None
    gaps: list = field(default_factory=list)


def _tally(into: dict | None, windows: int, samples: int, channels: np.ndarray, share=None):
    """Add windows, the samples they cover and per-channel counts to a running total."""
    if into is None:
        into = {"windows": 0, "samples": 0, "channels": np.zeros(len(channels), np.int64)}
    into["windows"] += windows
    into["samples"] += samples
    into["channels"] = into["channels"] + channels
    if share is not None:
        into["share"] = min(into.get("share", 1.0), share)
    return into


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
    strict: bool = False,
    resampled: bool = False,
) -> _Cut:
    """Windows, codes, starts and times of one recording (``vals`` (n, C)), with what
    was left out.

    The recording is put on its sample grid and split at gaps of a window or more
    (:func:`_time_pieces`, :func:`_nan_pieces`); each piece gets its own window grid,
    anchored at its first sample. Windows with more than ``max_missing`` of their values
    missing are left out and counted; so are the windows kept with a channel missing
    throughout. ``strict``: a gap of a window or more is refused. ``resampled``: see
    :func:`_nan_pieces`."""
    cut = _Cut()
    pieces, cut.gaps = _time_pieces(rec, vals, codes, window, fs)
    if strict and cut.gaps:
        raise InputError(_gap_message(cut.gaps[0], window, fs, keys))
    t0 = rec.t[0] if rec.t is not None else None
    for k, piece in enumerate(pieces):
        parts, gaps = _nan_pieces(
            piece, rec, channels, window=window, last=k == len(pieces) - 1, strict=strict,
            fs=fs, keys=keys, resampled=resampled,
        )  # fmt: skip
        cut.gaps += gaps
        for part in parts:
            cut.longest = max(cut.longest, len(part.vals))
            _part_windows(cut, part, window, stride, max_missing, t0, fs)
    return cut


def _part_windows(
    cut: _Cut,
    part: _Piece,
    window: int,
    stride: int,
    max_missing: float,
    t0: float | None,
    fs: float | None,
) -> None:
    """Cut one gap-free piece into windows (into ``cut``), tallying what ``max_missing``
    leaves out and the windows kept with a channel missing throughout."""
    starts = window_starts(len(part.vals), window, stride, part.codes)
    if len(starts) == 0:
        return
    cut.candidates += len(starts)
    nan = np.isnan(part.vals)  # (n, C)
    # missing values per window and channel from cumulative counts: (n_w, C)
    cum = np.concatenate([np.zeros((1, nan.shape[1]), np.int64), np.cumsum(nan, axis=0)])
    per_channel = cum[starts + window] - cum[starts]
    share = per_channel.sum(axis=1) / (nan.shape[1] * window)  # of all values
    keep = share <= max_missing
    if not keep.all():
        gone = _covered(len(nan), starts[~keep], window)
        cut.missing = _tally(
            cut.missing, int((~keep).sum()), int(gone.sum()), nan[gone].sum(axis=0)
        )
    whole = keep & (per_channel == window).any(axis=1)
    if whole.any():
        cut.hidden = _tally(
            cut.hidden,
            int(whole.sum()),
            int(_covered(len(nan), starts[whole], window).sum()),
            (per_channel[whole] == window).sum(axis=0),
            share=float(share[whole].min()),
        )
    starts = starts[keep]
    if len(starts) == 0:
        return
    x, _ = cut_windows(part.vals, starts, window)  # (n_w, C, T)
    cut.xs.append(x)
    cut.codes.append(part.codes[starts])
    cut.starts.append(part.start + starts)
    if part.t is not None:
        cut.times.append(part.t[starts] - t0)
    else:
        cut.times.append((part.start + starts) / fs if fs else np.full(len(starts), np.nan))


def _whole_case(
    rec: Recording,
    vals: np.ndarray,
    codes: np.ndarray,
    keys: Keys,
    *,
    max_missing: float,
    fs: float | None,
) -> tuple[np.ndarray, np.ndarray, pd.DataFrame] | str:
    """One recording as one case (C, n); why not (a phrase for the warning) when more
    than ``max_missing`` of it is missing. A label change inside it is refused."""
    if keys.has_label and np.any(codes[1:] != codes[:-1]):
        raise InputError(
            f"window=None makes one case per recording, but the label changes "
            f"inside {rec.where}; give a window length to cut labelled segments instead"
        )
    frac = float(np.isnan(vals).mean())
    if frac > max_missing:
        return f"{rec.where}: {frac:.0%} of its values are missing"
    meta = pd.DataFrame(
        {
            "subject": [rec.subject],
            "recording": [np.nan if rec.recording is None else rec.recording],  # as window_meta
            "start": [0],
            "stop": [len(vals)],
        }
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
    strict: bool = False,
    resampled: bool = False,
) -> Cases:
    """Cut every recording (:func:`segment_recordings`) into windows, or into one case
    each with ``window=None``.

    ``codes`` holds the class code of every row of ``df`` (:func:`encode_labels`).

    A recording is split where it has no value for a window or more (rows missing: the
    time column jumps; or every channel NaN), and windows are cut on either side, never
    across; a jump shorter than a window leaves its samples missing. Windows with more
    than ``max_missing`` of their values missing are left out. One warning per call says
    which recordings were split and where; one names the subjects and the time left out
    for missing values (and the windows kept with a channel missing throughout). Nothing
    is filled in. ``strict=True``: a stretch of a window or more without a value (in
    any channel) is refused, naming where it lies and how to split the recording.
    ``resampled``: ``df`` was put on a regular grid (:func:`regularize_timing`), so a
    stretch of NaN in every channel may be rows that were missing; the messages say so.
    """
    values = df[channels].to_numpy(dtype=np.float32)  # (rows, C)
    cases = Cases(max_missing=float(max_missing))
    seen = set()
    for rec in segment_recordings(df, keys):
        if rec.subject not in seen:
            seen.add(rec.subject)
            cases.subjects.append(rec.subject)
        vals, rec_codes = values[rec.rows], codes[rec.rows]  # (n, C), (n,)
        if window is None:
            case = _whole_case(rec, vals, rec_codes, keys, max_missing=max_missing, fs=fs)
            if isinstance(case, str):
                cases.dropped_cases.append(case)
                cases.missing[rec.subject] = _tally(
                    cases.missing.get(rec.subject), 1, len(vals), np.isnan(vals).sum(axis=0)
                )
                continue
            cases.xs.append(case[0])
            cases.ys.append(case[1])
            cases.metas.append(case[2])
            continue
        cut = _recording_windows(
            rec, vals, rec_codes, keys, channels, window=window, stride=stride,
            max_missing=max_missing, fs=fs, strict=strict, resampled=resampled,
        )  # fmt: skip
        cases.gaps += cut.gaps
        if cut.gaps and rec.subject not in cases.gap_subjects:
            cases.gap_subjects.append(rec.subject)
        for name, part in (("missing", cut.missing), ("hidden", cut.hidden)):
            if part is not None:
                totals = getattr(cases, name)
                prev = totals.get(rec.subject)
                totals[rec.subject] = _tally(
                    prev, part["windows"], part["samples"], part["channels"], part.get("share")
                )
        if cut.candidates == 0:
            cases.short.setdefault(rec.subject, []).append(cut.longest)
        if cut.xs:
            starts = np.concatenate(cut.starts)
            cases.xs.append(np.concatenate(cut.xs))
            cases.ys.append(np.concatenate(cut.codes))
            cases.metas.append(
                window_meta(rec.subject, rec.recording, starts, window, np.concatenate(cut.times))
            )
    _warn_gaps(cases, window, fs, keys)
    _warn_missing(cases, window, fs, channels)
    return cases


def _duration(samples: int, fs: float | None) -> str:
    """``"132 s"`` (``"1.5 s"``), or ``"40 samples"`` without a rate."""
    if not fs:
        return f"{samples} samples"
    seconds = samples / fs
    return f"{seconds:.0f} s" if seconds >= 100 else f"{seconds:.4g} s"


def _listed(items: list[str], most: int = 5) -> str:
    """The first ``most`` items joined by "; ", and how many more there are."""
    shown = "; ".join(items[:most])
    return shown + (f"; and {len(items) - most} more" if len(items) > most else "")


def _warn_gaps(cases: Cases, window: int | None, fs: float | None, keys: Keys) -> None:
    """One warning naming the recordings split at gaps of a window or more, and where."""
    if not cases.gaps:
        return
    n = len({g.where for g in cases.gaps})
    total = sum(g.length for g in cases.gaps)
    _warn(
        f"{n} recording(s) split at gaps of at least a window ({window} samples"
        f"{' = ' + _duration(window, fs) if fs else ''}) without any value, {_duration(total, fs)}"
        " in all; windows are cut on either side of a gap, never across it, and nothing is "
        f"filled in: {_listed([_gap_text(g, fs, keys) for g in cases.gaps])}. Pass "
        "strict=True to stop with an error at such a gap instead"
    )


def _warn_missing(cases: Cases, window: int | None, fs: float | None, channels: list[str]) -> None:
    """One warning naming the subjects whose windows (or cases) more than ``max_missing``
    missing left out, with the time and the channels missing, and the windows kept with a
    channel missing throughout."""
    mm = cases.max_missing
    parts = []
    if cases.missing:
        what = "window" if window is not None else "case"
        n = sum(m["windows"] for m in cases.missing.values())
        samples = sum(m["samples"] for m in cases.missing.values())
        items = []
        for s, m in cases.missing.items():
            lacking = [
                f"{c!r} {_duration(int(k), fs)}"
                for k, c in sorted(zip(m["channels"], channels), key=lambda kc: -kc[0])
                if k
            ]
            items.append(
                f"subject {s!r} {m['windows']} {what}(s) ({_duration(m['samples'], fs)}; "
                f"missing: {', '.join(lacking)})"
            )
        detail = _listed(items)
        if cases.dropped_cases:
            detail += f" [{_listed(cases.dropped_cases)}]"
        parts.append(
            f"{n} {what}(s) ({_duration(samples, fs)}) with more than max_missing={mm:g} of "
            f"their values missing were left out: {detail}; raise max_missing to keep them "
            "(missing values are never filled in)"
        )
    if cases.hidden:
        n = sum(h["windows"] for h in cases.hidden.values())
        samples = sum(h["samples"] for h in cases.hidden.values())
        share = min(h["share"] for h in cases.hidden.values())
        lower = np.floor(share * 100) / 100
        lower = lower - 0.01 if lower >= share else lower
        items = [
            f"subject {s!r} {h['windows']} window(s) ({_duration(h['samples'], fs)}; channel(s) "
            + ", ".join(repr(c) for k, c in zip(h["channels"], channels) if k)
            + ")"
            for s, h in cases.hidden.items()
        ]
        parts.append(
            f"{n} window(s) ({_duration(samples, fs)}) were kept although a channel is missing "
            f"throughout them (within max_missing={mm:g} of all their values; the model "
            f"treats it as hidden there): {_listed(items)}; max_missing={lower:.2f} or lower "
            "leaves them out, and channels=[...] naming the others leaves the channel out"
        )
    if parts:
        _warn(". ".join(parts))


# ------------------------------------------------------------------------------- stack


def _no_window_reason(cases: Cases, subject, window: int | None) -> str:
    """Why a subject has no window, in a few words."""
    if subject in cases.missing:
        what = "window" if window is not None else "case"
        return (
            f"its {cases.missing[subject]['windows']} {what}(s) had more than "
            f"max_missing={cases.max_missing:g} of their values missing"
        )
    longest = max(cases.short.get(subject, [0]))
    rest = ", the rest without any value" if subject in cases.gap_subjects else ""
    return f"longest usable part {longest} samples{rest}"


def check_short_subjects(
    cases: Cases, window: int | None, drop_short: bool = False, *, strict: bool = False
) -> None:
    """Drop, with one warning naming them, the subjects left without any window (too
    short for a window within one label, every window over ``max_missing``, or no value
    at all); refuse when no subject is left.

    ``strict=True`` refuses instead (unless ``drop_short=True``, which drops them even
    then). The dropped subjects are kept in ``cases.dropped_subjects``."""
    have = {m["subject"].iloc[0] for m in cases.metas if len(m)}
    subjects = cases.subjects or list(cases.short)
    without = [s for s in subjects if s not in have]
    if not without:
        return
    short_only = all(s in cases.short and s not in cases.missing for s in without)
    if strict and short_only:  # the refusal of old, word for word
        detail = ", ".join(
            f"{s!r} (longest usable part {max(cases.short[s])})" for s in without[:5]
        )
        msg = (
            f"{len(without)} subject(s) have no complete window of {window} samples "
            f"within one label: {detail}; use a shorter window or drop_short=True"
        )
        if not drop_short:
            raise InputError(msg)
        _warn(msg + " — dropped")
        cases.dropped_subjects = without
        return
    detail = ", ".join(f"{s!r} ({_no_window_reason(cases, s, window)})" for s in without[:5])
    detail += f" and {len(without) - 5} more" if len(without) > 5 else ""
    fixes = []
    if any(s in cases.short and s not in cases.missing for s in without):
        fixes.append("use a shorter window")
    if any(s in cases.missing for s in without):
        fixes.append("raise max_missing")
    fix = " or ".join(fixes) or "check their recordings"
    what = f"window of {window} samples" if window is not None else "case"
    if len(without) == len(subjects):  # nothing would be left
        if window is None:
            raise InputError(
                f"no recording is left (every one has too many missing values): {detail}; {fix}"
            )
        raise InputError(f"no complete {what} within one label in any recording: {detail}; {fix}")
    if strict and not drop_short:
        raise InputError(
            f"{len(without)} subject(s) have no {what} left: {detail}; {fix}, or pass "
            "drop_short=True to drop them"
        )
    _warn(
        f"{len(without)} subject(s) have no {what} left and are dropped: {detail}; to "
        f"keep them, {fix}" + ("" if strict else "; strict=True stops with an error instead")
    )
    cases.dropped_subjects = without


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
