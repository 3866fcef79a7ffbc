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
Missing samples stay NaN; they are never zero-filled here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from medspt.core.durations import to_samples
from medspt.errors import InputError

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


_RESERVED_HINT = "pass channels=[...] to choose the signal columns explicitly"


def _text_values(s: pd.Series) -> tuple[pd.Series, pd.Series]:
    """Non-missing values of a text-like column and their numeric conversion (NaN where a
    value is not a number); both indexed by row position."""
    vals = pd.Series(np.asarray(s, dtype=object)).dropna()
    try:
        conv = pd.to_numeric(vals, errors="coerce")
    except (TypeError, ValueError):  # e.g. lists or other objects in the cells
        conv = pd.Series(np.nan, index=vals.index)
    return vals, conv


def _text_problem(c: str, s: pd.Series) -> str | None:
    """What is wrong with a text column whose values are mostly numbers, with the fix
    (a phrase after the column's name), else None: a column of words, such as a
    condition name, is simply not a signal."""
    vals, conv = _text_values(s)
    if len(vals) == 0 or conv.notna().mean() < 0.5:
        return None
    bad = vals[conv.isna()]
    if len(bad) == 0:
        return (
            f"holds numbers stored as text (dtype {s.dtype}); convert it with "
            f"df[{c!r}] = pd.to_numeric(df[{c!r}]), or leave it out with channels=[...] "
            "naming the signal columns"
        )
    shown = ", ".join(f"{v!r} (row position {i})" for i, v in bad.iloc[:3].items())
    more = f" and {len(bad) - 3} more" if len(bad) > 3 else ""
    return (
        f"is mostly numbers ({int(conv.notna().sum())} of {len(vals)} values) but also "
        f"holds text: {shown}{more}. Convert it so that the text becomes missing values: "
        f"df[{c!r}] = pd.to_numeric(df[{c!r}], errors='coerce'), or leave it out with "
        "channels=[...] naming the signal columns"
    )


def _complex_message(c: str, role: str = "column") -> str:
    return (
        f"{role} {c!r} holds complex numbers; pass a real signal, e.g. its magnitude "
        f"df[{c!r}] = np.abs(df[{c!r}]) (or its real and imaginary parts as two channels)"
    )


def _classify_columns(df: pd.DataFrame, skip: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """Inferred channels and every other column with the reason it was left out.

    ``skip`` maps key columns (subject, label, ...) to their reason. Numeric columns are
    channels; booleans, dates and columns of words are left out; a column of mostly
    numbers with some text, or of complex numbers, is refused: it was meant as a signal.
    """
    chans: list[str] = []
    left_out: dict[str, str] = {}
    for c in df.columns:
        name = str(c)
        if c in skip:
            left_out[name] = skip[c]
            continue
        s = df[c]
        if pd.api.types.is_bool_dtype(s):
            left_out[name] = "boolean"
        elif pd.api.types.is_complex_dtype(s):
            raise InputError(_complex_message(name))
        elif pd.api.types.is_numeric_dtype(s):
            chans.append(name)
        elif pd.api.types.is_datetime64_any_dtype(s) or pd.api.types.is_timedelta64_dtype(s):
            left_out[name] = f"dates or times (dtype {s.dtype}), not a signal"
        else:
            problem = _text_problem(name, s)
            if problem is not None:
                raise InputError(f"column {name!r} {problem}")
            vals, conv = _text_values(s)
            if len(vals) == 0:
                left_out[name] = "entirely missing"
            else:
                kind = "categorical" if isinstance(s.dtype, pd.CategoricalDtype) else "text"
                example = vals[conv.isna()].iloc[0] if conv.isna().any() else vals.iloc[0]
                left_out[name] = f"not numeric ({kind} such as {example!r})"
    return chans, left_out


def infer_channels(df: pd.DataFrame, exclude: Sequence[str | None]) -> list[str]:
    """All numeric columns of ``df`` that are not one of the ``exclude`` columns.

    Boolean, date and text columns (a condition name, ...) are not channels. A text
    column whose values are mostly numbers, or a complex-valued column, is refused with
    the fix: it was most likely meant as a signal.
    """
    skip = {c: "excluded" for c in exclude if c is not None}
    chans, left_out = _classify_columns(df, skip)
    if not chans:
        others = {c: why for c, why in left_out.items() if c not in skip}
        raise InputError(
            "found no numeric channel columns in the DataFrame "
            f"(other columns, with why they are not channels: {others!r}); {_RESERVED_HINT}"
        )
    return chans


_CLOCK_NAMES = {"index", "idx", "sample", "samples", "timestamp", "time_s", "seconds", "t"}


def _clock_like(
    df: pd.DataFrame, channels: list[str], keys: list[str]
) -> tuple[list[str], list[str]]:
    """Inferred channels that look like an index or a clock: by name (a CSV's saved index
    ``Unnamed: 0``, ``index``, ``timestamp``, ...) and by value (strictly increasing
    through every recording). Position in a recording can leak the label."""
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


_MIN_WINDOW = 4  # samples: a window given in seconds that is shorter is refused
_MAX_UPSAMPLE = 4  # a given fs above this many times the time column's rate is refused
_MAX_DOWNSAMPLE = 100  # ... and below the time column's rate over this


def _time_step(df: pd.DataFrame, time: str, keys: list[str]) -> float | None:
    """Median positive step of the time column within recordings (None: no recording
    has two distinct times)."""
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


def _near(a: float, b: float, rel: float = 0.1) -> bool:
    return abs(a / b - 1.0) <= rel


def _check_given_fs(fs: float, dt: float, time: str) -> None:
    """Refuse a given ``fs`` that the time column shows to be a unit mix-up or too far
    from the recording's rate to resample to.

    ``fs`` is the rate the windows are cut at. A rate that differs from the time column's
    is a legitimate resampling target (a model fitted at 50 Hz predicting on 100 Hz data;
    :func:`make_windows` resamples with a warning) up to 4-fold upsampling and 100-fold
    downsampling. Beyond that, or where ``fs`` looks like the sampling period, a rate in
    kHz, or the time column looks like milliseconds, it is refused.
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
    if 1.0 / ratio > _MAX_UPSAMPLE * 1.05 or ratio > _MAX_DOWNSAMPLE * 1.05:
        how = (
            f"upsampling {1 / ratio:.3g}-fold would invent the samples in between"
            if ratio < 1
            else f"downsampling {ratio:.3g}-fold would discard nearly all samples"
        )
        raise InputError(
            f"fs={fs:g} Hz but {where}: {how}. {fix}; to resample on purpose, call "
            f"medspt.timing.regularize(df, fs=...) first"
        )


def _infer_fs(df: pd.DataFrame, time: str, keys: list[str]) -> float:
    """Median sampling rate from the time column, per recording."""
    dts = []
    for _, g in df.groupby(keys, sort=False):
        t = np.sort(g[time].to_numpy(dtype=float))  # rows need not be in time order
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


def _check_column(df: pd.DataFrame, col: str, role: str) -> None:
    if col not in df.columns:
        raise InputError(
            f"{role} column {col!r} not found in the DataFrame; available columns: "
            f"{list(map(str, df.columns))!r} (set {role}=... to name yours)"
        )


def _validate_channels(df: pd.DataFrame, channels: list[str]) -> None:
    for c in channels:
        _check_column(df, c, "channel")
        s = df[c]
        if pd.api.types.is_complex_dtype(s):
            raise InputError(_complex_message(c, "channel"))
        if pd.api.types.is_bool_dtype(s) or not pd.api.types.is_numeric_dtype(s):
            hint = ""
            if pd.api.types.is_bool_dtype(s):
                hint = f"; if it is a 0/1 signal, convert it: df[{c!r}] = df[{c!r}].astype(float)"
            elif s.dtype == object or pd.api.types.is_string_dtype(s):
                problem = _text_problem(c, s)
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


def _longest_nan_run(mask: np.ndarray) -> tuple[int, int, int]:
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
    where: str,
    mask: np.ndarray,
    run: tuple[int, int, int],
    win: int,
    channels: list[str],
    t: np.ndarray | None,
    fs: float | None,
    time: str | None,
    recording: str | None,
) -> str:
    """Refusal for a stretch of missing samples at least a window long: which recording,
    where, whether rows are missing or one channel, and what to do."""
    length, start, j = run
    stop = start + length  # first sample after the gap (may be past the end)
    every = bool(mask[start:stop].all())
    if t is not None:
        end = f"t={t[stop]:g} s" if stop < len(t) else "the end"
        span = f"from t={t[start]:g} s to {end}"
        after = f"the rows from t={t[stop]:g} s on" if stop < len(t) else None
    else:
        span = f"from sample {start} to {'sample ' + str(stop) if stop < len(mask) else 'the end'}"
        after = f"the rows from sample {stop} on" if stop < len(mask) else None
    dur = f" = {length / fs:g} s" if fs else ""
    column = f"column {recording!r}" if recording else "a recording column (recording=...)"
    split = (
        f"split the recording at the gap: give {after} a recording id of their own in "
        f"{column}, so that windows are cut on either side of it"
        if after
        else "cut the recording where the gap begins"
    )
    if every:
        why = (
            f"rows are missing there (the time column {time!r} jumps; resampling leaves "
            "gaps missing, never interpolated) or every channel is NaN"
            if time is not None
            else "every channel is NaN there"
        )
        return (
            f"{where} has a gap of {length} samples{dur} with no value in any channel "
            f"({span}): {why}. That is at least a whole window ({win} samples). To fix it, "
            f"{split}"
        )
    missing = [c for c, m in zip(channels, mask[start:stop].all(axis=0)) if m]
    return (
        f"{where} has a gap of {length} samples{dur} in channel(s) {missing} ({span}), "
        f"at least a whole window ({win} samples); missing values are never filled in. "
        f"To fix it, {split}; or leave those channel(s) out with channels=[...] naming the "
        "others"
    )


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
) -> WindowSet:
    """Cut a long DataFrame into fixed-length windows, or one case per recording.

    Parameters
    ----------
    df : DataFrame
        Long format, one row per sample (see the module docstring). Rows of a recording
        are taken in ``time`` order when a time column exists, else in row order.
    window, stride : int, str or None
        Window length and step, in samples (``200``) or seconds (``"10s"``, needs ``fs``
        or a ``time`` column). ``stride`` defaults to ``window`` (no overlap).
        ``window=None``: one case per recording (for data where each recording is one
        labelled case of its own length); the label must not change inside a recording,
        and shorter cases are padded with NaN at the end to the longest (or ``length``).
        Trailing steps missing in every channel are what the model treats as padding.
    label : str or None
        Label column; ``None`` (or a column that is absent, when ``classes`` is given)
        cuts unlabelled windows, e.g. for prediction.
    subject, recording, time : str
        Column names. ``recording`` and ``time`` are optional and skipped when absent.
    channels : list of str, optional
        Signal columns. Default: every numeric column that is not one of the above;
        boolean, date and text columns (a condition name) are left out and listed in
        ``WindowSet.left_out``. A text column of mostly numbers (a few entries such as
        ``"n/a"``) or a complex-valued column is refused, naming the values and the fix.
    fs : float, optional
        Sampling rate in Hz, the rate the windows are cut at; inferred from ``time`` when
        omitted (a time column slower than 1 Hz is then refused as likely milliseconds:
        pass ``fs`` to confirm a slow rate). A given ``fs`` that the time column
        contradicts is a resampling target (see ``regularize``) within 4-fold upsampling
        and 100-fold downsampling; beyond that, or where ``fs`` looks like the sampling
        period or a rate in kHz, or the time column like milliseconds, it is refused.
    classes : sequence, optional
        Known classes (e.g. of a fitted model); labels outside them raise an error.
    max_missing : float
        Windows with a larger fraction of missing (NaN) values are dropped.
    drop_short : bool
        If False (default), a subject without any complete window raises an error;
        if True, such subjects are dropped with a warning.
    length : int, optional
        With ``window=None``: the padded length of every case (default: the longest
        recording). A recording longer than ``length`` raises an error.
    regularize : bool
        If the ``time`` column is irregular (jitter, gaps, different rates per
        recording; see :func:`medspt.timing.check_timing`), warn with a report and
        resample every recording to a regular grid at ``fs`` (default: the median
        rate) with :func:`medspt.timing.regularize`. False keeps the rows as they are.

    Returns
    -------
    WindowSet
        Window grid anchored at sample 0 of each recording (starts 0, stride, 2·stride,
        … while start + window ≤ length); windows whose samples do not all share one
        label are dropped. ``left_out`` lists every column that is not a channel with
        the reason, ``fs_source`` where ``fs`` came from.

    A window given in seconds must come to at least 4 samples. A stretch of missing
    samples (rows absent from the time grid, or NaN) at least a window long is refused,
    naming the recording, where it lies and the channels; split the recording there.
    """
    if not isinstance(df, pd.DataFrame):
        raise InputError(f"expected a pandas DataFrame in long format, got {type(df).__name__}")
    if len(df) == 0:
        raise InputError("the DataFrame is empty (0 rows)")
    if not 0.0 <= float(max_missing) <= 1.0:
        raise InputError(f"max_missing must lie in [0, 1], got {max_missing!r}")
    _check_column(df, subject, "subject")
    if df[subject].isna().any():
        raise InputError(
            f"subject column {subject!r} has {int(df[subject].isna().sum())} "
            "missing values; every row needs a subject"
        )
    has_label = label is not None and label in df.columns
    if label is not None and not has_label and classes is None:
        _check_column(df, label, "label")
    if has_label and df[label].isna().any():
        n = int(df[label].isna().sum())
        raise InputError(
            f"label column {label!r} has {n} missing values; drop unlabelled rows first "
            f"(df = df.dropna(subset=[{label!r}]))"
        )
    recording = recording if recording is not None and recording in df.columns else None
    time = time if time is not None and time in df.columns else None
    roles = {
        subject: "subject column",
        recording: "recording column",
        time: "time column (bookkeeping, never a feature)",
        label: "label column",
    }
    roles = {c: why for c, why in roles.items() if c is not None and c in df.columns}
    if channels is None:
        channels, left_out = _classify_columns(df, roles)
        if not channels:
            others = {c: why for c, why in left_out.items() if c not in roles}
            raise InputError(
                "found no numeric channel columns in the DataFrame "
                f"(other columns, with why they are not channels: {others!r}); "
                f"{_RESERVED_HINT}"
            )
        keys_ = [subject] + ([recording] if recording else [])
        named, rising = _clock_like(df, channels, keys_)
        if named:
            raise InputError(
                f"column(s) {named} are named like an index or a clock (a CSV's saved "
                "index, a sample counter, a timestamp); position in a recording can leak "
                "the label, so they are not used as channels by default. Drop them, or "
                f"pass channels=[...] naming the signal columns (inferred: {channels})"
            )
        if rising:
            import warnings

            warnings.warn(
                f"channel(s) {rising} only ever increase within every recording, like a "
                "clock or a counter; position in a recording can leak the label. If they "
                "are not sensor signals, drop them or pass channels=[...]",
                stacklevel=2,
            )
    else:
        channels = [str(c) for c in channels] if not isinstance(channels, str) else [channels]
        if len(channels) == 0:
            raise InputError("channels is empty; name at least one signal column")
        if len(set(channels)) != len(channels):
            raise InputError(f"channels has duplicates: {channels!r}")
        for reserved in (subject, recording, time, label):
            if reserved is not None and reserved in channels:
                raise InputError(f"column {reserved!r} cannot be both a channel and a key column")
        named_set = set(channels)
        left_out = {
            str(c): roles.get(c, "not named in channels=[...]")
            for c in df.columns
            if str(c) not in named_set
        }
    _validate_channels(df, channels)

    keys = [subject] + ([recording] if recording else [])
    if time is not None:
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
    if fs is not None:
        if isinstance(fs, (bool, np.bool_)) or not isinstance(fs, (int, float, np.number)):
            raise InputError(f"fs must be a positive sampling rate in Hz, got {fs!r}")
        if not np.isfinite(fs) or fs <= 0:
            raise InputError(f"fs must be a positive sampling rate in Hz, got {fs!r}")
        fs = float(fs)
    fs_source = "given" if fs is not None else "not given"
    # What the time column says, checked before any seconds are turned into samples.
    dt = _time_step(df, time, keys) if time is not None else None
    if dt is not None:
        col_fs = 1.0 / dt
        if fs is not None:
            _check_given_fs(fs, dt, time)
        elif col_fs < 1.0:
            raise InputError(
                f"column {time!r} advances {dt:g} per sample (fs = {col_fs:g} Hz): if it "
                f"counts milliseconds, divide it by 1000 (df[{time!r}] = df[{time!r}] / "
                f"1000); if the rate really is {col_fs:g} Hz, pass fs={col_fs:g}"
            )
        else:
            fs_source = f"time column {time!r}, median step {dt:g} s"
    if time is not None and regularize:
        from medspt.timing import check_timing
        from medspt.timing import regularize as _regularize

        try:
            report = check_timing(df, time, keys)
        except InputError:  # no recording with two times: nothing to measure
            report = None
        # A given fs (e.g. the model's rate at predict time) that the time column
        # contradicts would cut windows of the wrong duration without any error.
        off_rate = (
            report is not None
            and fs is not None
            and abs(report.median_fs - float(fs)) > report.tol * float(fs)
        )
        if report is not None and (off_rate or not report.regular):
            target = float(fs) if fs is not None else report.median_fs
            import warnings

            what = (
                f"recorded at {report.median_fs:g} Hz (time column {time!r}), not at "
                f"fs={target:g} Hz"
                if off_rate and report.regular
                else f"time column {time!r} is {report}"
            )
            warnings.warn(
                f"{what}. Resampled every recording to a regular "
                f"{target:g} Hz grid (anti-aliased; gaps longer than 3 samples left missing, "
                "never interpolated). Call medspt.timing.regularize(df, fs=...) yourself to "
                "choose the rate, or pass regularize=False to keep the rows as they are",
                stacklevel=2,
            )
            # gaps are 3 samples at the coarser of the two rates, so that upsampling
            # slower data does not turn every step into a gap
            gap = 3.0 / min(target, report.median_fs)
            df = _regularize(df, target, time=time, by=keys, channels=channels, max_gap=gap)
            if fs is not None:
                fs_source = (
                    f"given; data resampled from {report.median_fs:g} Hz (time column {time!r})"
                )
            else:
                fs_source = (
                    f"time column {time!r}, median rate {report.median_fs:g} Hz; resampled "
                    "to a regular grid"
                )
            fs = target
    if fs is None and time is not None:
        try:
            fs = _infer_fs(df, time, keys)
        except InputError:
            if isinstance(window, str) or isinstance(stride, str):
                raise  # seconds need a rate; windows in samples do not
            fs = None

    whole = window is None  # one case per recording
    if whole:
        win = step = None
        if length is not None and (not isinstance(length, (int, np.integer)) or length < 1):
            raise InputError(f"length must be a positive number of samples, got {length!r}")
    else:
        win = to_samples(window, fs, "window")
        step = to_samples(stride, fs, "stride") if stride is not None else win
        rate = f"fs={fs:g} Hz ({fs_source})" if fs is not None else ""
        if isinstance(window, str) and win < _MIN_WINDOW:
            raise InputError(
                f"window={window!r} at {rate} is only {win} sample(s); a window needs at "
                f"least {_MIN_WINDOW} samples (and a few dozen to show a pattern). Give a "
                f"longer window, e.g. window='{_MIN_WINDOW * 8 / fs:g}s' or "
                f"window={_MIN_WINDOW * 8} (samples), or check fs"
            )
        if win is None or win < 1:
            raise InputError(f"window must be at least 1 sample, got {window!r}")
        if step < 1:
            at = f" at {rate}" if isinstance(stride, str) else ""
            raise InputError(
                f"stride must be at least 1 sample, got {stride!r}{at}; give a longer stride "
                "or one in samples (an int)"
            )

    if has_label:
        label_values = df[label]
        if classes is None:
            cls = pd.unique(label_values)
            try:
                cls = np.array(sorted(cls))
            except TypeError:  # mixed types: keep first-seen order
                cls = np.asarray(cls, dtype=object)
        else:
            cls = np.asarray(classes)
            unknown = sorted(set(pd.unique(label_values)) - set(cls.tolist()), key=str)
            if unknown:
                raise InputError(
                    f"label column {label!r} has values the model was not trained on: "
                    f"{unknown[:10]!r}; known classes: {cls.tolist()!r}"
                )
        codes_all = pd.Categorical(label_values, categories=cls).codes.astype(np.int64)
    else:
        cls = np.asarray(classes) if classes is not None else np.array([])
        codes_all = np.zeros(len(df), np.int64)

    values_all = df[channels].to_numpy(dtype=np.float32)
    Xs, ys, metas = [], [], []
    short_subjects: dict = {}
    position = np.arange(len(df))
    for key, idx in df.groupby(keys, sort=False).indices.items():
        key = key if isinstance(key, tuple) else (key,)
        subj, rec = key[0], (key[1] if recording else None)
        idx = position[idx]
        if time is not None:
            t = df[time].to_numpy(dtype=float)[idx]
            if np.any(np.diff(t) < 0):
                import warnings

                warnings.warn(
                    f"rows of subject {subj!r}"
                    + (f", recording {rec!r}" if recording else "")
                    + f" are not in {time!r} order; they are sorted by time",
                    stacklevel=2,
                )
                order = np.argsort(t, kind="stable")
                idx, t = idx[order], t[order]
            if np.any(np.diff(t) == 0):
                where = f"subject {subj!r}" + (f", recording {rec!r}" if recording else "")
                raise InputError(
                    f"time column {time!r} has duplicated timestamps in {where}; "
                    "each sample needs its own time"
                )
        vals = values_all[idx]  # (n, C)
        codes = codes_all[idx]
        n = len(idx)
        if whole:
            where = f"subject {subj!r}" + (f", recording {rec!r}" if recording else "")
            if has_label and np.any(codes[1:] != codes[:-1]):
                raise InputError(
                    f"window=None makes one case per recording, but the label changes "
                    f"inside {where}; give a window length to cut labelled segments instead"
                )
            frac = float(np.isnan(vals).mean())
            if frac > max_missing:
                import warnings

                warnings.warn(
                    f"{where}: {frac:.0%} of its values are missing (more than "
                    f"max_missing={max_missing}); the case is dropped",
                    stacklevel=2,
                )
                continue
            Xs.append(vals.T)  # (C, n), padded below
            ys.append(codes[:1])
            metas.append(
                pd.DataFrame(
                    {"subject": [subj], "recording": [rec], "start": [0], "stop": [n]}
                ).assign(start_time=0.0 if (time is not None or fs) else np.nan)
            )
            continue
        if n < win:
            short_subjects.setdefault(subj, []).append(n)
            continue
        nan = np.isnan(vals)
        if nan.any():
            run = _longest_nan_run(nan)
            if run[0] >= win:
                where = f"subject {subj!r}" + (f", recording {rec!r}" if recording else "")
                tt = t if time is not None else None
                raise InputError(
                    _gap_message(where, nan, run, win, channels, tt, fs, time, recording)
                )
        starts = np.arange(0, n - win + 1, step)
        # Run id increases at every label change: a window is pure iff its first and
        # last sample lie in the same run.
        run_id = np.concatenate([[0], np.cumsum(codes[1:] != codes[:-1])])
        keep = run_id[starts] == run_id[starts + win - 1]
        starts = starts[keep]
        if len(starts) == 0:
            short_subjects.setdefault(subj, []).append(n)
            continue
        w = np.lib.stride_tricks.sliding_window_view(vals, win, axis=0)[starts]  # (n_w, C, T)
        if nan.any():
            frac = np.isnan(w).mean(axis=(1, 2))
            ok = frac <= max_missing
            w, starts = w[ok], starts[ok]
        Xs.append(np.ascontiguousarray(w, dtype=np.float32))
        ys.append(codes[starts])
        t0 = (t[starts] - t[0]) if time is not None else starts / (fs or 1.0)
        metas.append(
            pd.DataFrame(
                {
                    "subject": subj,
                    "recording": rec,
                    "start": starts,
                    "stop": starts + win,
                    "start_time": t0 if (time is not None or fs) else np.nan,
                }
            )
        )

    have = {m["subject"].iloc[0] for m in metas if len(m)}
    missing = [s for s in short_subjects if s not in have]
    if missing:
        detail = ", ".join(
            f"{s!r} (longest usable part {max(short_subjects[s])})" for s in missing[:5]
        )
        msg = (
            f"{len(missing)} subject(s) have no complete window of {win} samples "
            f"within one label: {detail}; use a shorter window or drop_short=True"
        )
        if not drop_short:
            raise InputError(msg)
        import warnings

        warnings.warn(msg + " — dropped", stacklevel=2)
    if not Xs:
        if whole:
            raise InputError("no recording is left (every one has too many missing values)")
        raise InputError(f"no complete window of {win} samples in any recording")
    meta = pd.concat(metas, ignore_index=True)
    if whole:
        longest = max(x.shape[1] for x in Xs)
        T = longest if length is None else int(length)
        if longest > T:
            i = int(np.argmax([x.shape[1] for x in Xs]))
            raise InputError(
                f"subject {meta['subject'][i]!r} has a recording of {longest} samples, longer "
                f"than length={T} (the longest case the model was fitted on); cut it first"
            )
        X = np.full((len(Xs), len(channels), T), np.nan, dtype=np.float32)
        for i, x in enumerate(Xs):
            X[i, :, : x.shape[1]] = x
    else:
        X = np.concatenate(Xs)
    return WindowSet(
        X=X,
        y=np.concatenate(ys) if has_label else None,
        classes=cls,
        groups=meta["subject"].to_numpy(),
        channels=list(channels),
        fs=fs,
        meta=meta,
        left_out=left_out,
        fs_source=fs_source if fs is not None else "not given",
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
