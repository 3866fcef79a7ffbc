"""Each step of make_windows on its own (medspt.data.windowing), and the column and rate checks
it shares with filtering and resampling (medspt.data.channels, medspt.data.sampling)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from medspt.core.errors import InputError
from medspt.data.channels import (
    check_column,
    classify_columns,
    clock_like_channels,
    infer_channels,
    text_problem,
    validate_channels,
)
from medspt.data.sampling import check_fs, check_given_fs, infer_fs, median_step
from medspt.data.windowing import (
    Cases,
    Keys,
    check_length,
    check_short_subjects,
    cut_recordings,
    cut_windows,
    encode_labels,
    longest_nan_run,
    pad_cases,
    regularize_timing,
    segment_recordings,
    select_channels,
    stack_cases,
    validate_frame,
    window_meta,
    window_samples,
    window_starts,
)
from medspt.data.windowset import make_windows


def frame(n=100, fs=100.0, subjects=("s1", "s2"), labels=("a",), recording=True, seed=0):
    """Long frame: per subject one recording of n samples, label segments of equal length."""
    rng = np.random.default_rng(seed)
    parts = []
    for s in subjects:
        d = {"subject": s, "time": np.arange(n) / fs}
        if recording:
            d["recording"] = "r1"
        d["label"] = np.repeat(labels, -(-n // len(labels)))[:n]
        d["x"] = rng.normal(size=n)
        d["y"] = rng.normal(size=n)
        parts.append(pd.DataFrame(d))
    return pd.concat(parts, ignore_index=True)


KEYS = Keys("subject", "recording", "time", "label", has_label=True)


def caught(fn, *args, **kwargs):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = fn(*args, **kwargs)
    return out, w


# ------------------------------------------------------------------------ validate_frame


def test_validate_frame_resolves_optional_columns():
    df = frame(recording=False).drop(columns="time")
    keys = validate_frame(df)
    assert keys == Keys("subject", None, None, "label", has_label=True)
    assert keys.by == ["subject"]
    assert keys.roles(df) == {"subject": "subject column", "label": "label column"}
    full = validate_frame(frame())
    assert full.by == ["subject", "recording"]
    assert full.roles(frame())["time"] == "time column (bookkeeping, never a feature)"


def test_validate_frame_allows_a_missing_label_only_with_classes():
    df = frame().drop(columns="label")
    assert validate_frame(df, classes=["a"]).has_label is False
    with pytest.raises(InputError, match=r"label column 'label' not found .*available"):
        validate_frame(df)


@pytest.mark.parametrize(
    "change, kwargs, message",
    [
        (lambda d: d.to_numpy(), {}, "expected a pandas DataFrame in long format, got ndarray"),
        (lambda d: d.iloc[:0], {}, r"the DataFrame is empty \(0 rows\)"),
        (lambda d: d, {"max_missing": 1.5}, r"max_missing must lie in \[0, 1\], got 1.5"),
        (lambda d: d, {"subject": "who"}, "subject column 'who' not found in the DataFrame"),
        (
            lambda d: d.assign(subject=d["subject"].where(d.index > 1)),
            {},
            "subject column 'subject' has 2 missing values; every row needs a subject",
        ),
        (
            lambda d: d.assign(label=d["label"].where(d.index > 0)),
            {},
            r"label column 'label' has 1 missing values; drop unlabelled rows first",
        ),
    ],
)
def test_validate_frame_refusals(change, kwargs, message):
    with pytest.raises(InputError, match=message):
        validate_frame(change(frame()), **kwargs)


# ---------------------------------------------------------------------------- channels


def test_select_channels_infers_numeric_columns_and_says_why_others_are_not():
    df = frame().assign(
        cond="walk", flag=True, when=pd.Timestamp("2020-01-01"), gone=pd.Series(dtype=object)
    )
    channels, left_out = select_channels(df, None, KEYS)
    assert channels == ["x", "y"]
    assert left_out.pop("when").startswith("dates or times (dtype datetime64[")
    assert left_out == {
        "subject": "subject column",
        "time": "time column (bookkeeping, never a feature)",
        "recording": "recording column",
        "label": "label column",
        "cond": "not numeric (text such as 'walk')",
        "flag": "boolean",
        "gone": "entirely missing",
    }


def test_select_channels_as_named():
    channels, left_out = select_channels(frame(), "y", KEYS)
    assert channels == ["y"]
    assert left_out["x"] == "not named in channels=[...]"
    assert left_out["subject"] == "subject column"
    with pytest.raises(InputError) as e:
        select_channels(frame(), ["x", "x"], KEYS)
    assert str(e.value) == (
        "channels=['x', 'x'] names 'x' more than once; name each signal column once"
    )
    with pytest.raises(InputError) as e:
        select_channels(frame(), ["x", "time"], KEYS)
    assert str(e.value) == (
        "column 'time' is the time column and cannot also be a channel; take it out of "
        "channels=['x', 'time']"
    )
    with pytest.raises(InputError, match=r"channels=\[\] names no column; name at least one"):
        select_channels(frame(), [], KEYS)


def test_select_channels_refuses_clock_names_and_warns_about_counters():
    with pytest.raises(InputError, match=r"column\(s\) \['Unnamed: 0'\] are named like an index"):
        select_channels(frame().assign(**{"Unnamed: 0": 1.0}), None, KEYS)
    df = frame().assign(counter=np.arange(200.0))
    (channels, _), w = caught(select_channels, df, None, KEYS)
    assert channels == ["x", "y", "counter"]
    assert len(w) == 1 and "channel(s) ['counter'] only ever increase" in str(w[0].message)
    assert w[0].filename == __file__  # at the caller, not inside medspt


def test_select_channels_validates_what_it_selects():
    df = frame()
    df.loc[3, "x"] = np.inf
    with pytest.raises(InputError, match="channel 'x' contains 1 infinite values"):
        select_channels(df, None, KEYS)


def test_classify_and_infer_channels():
    df = pd.DataFrame({"a": [1.0, 2.0], "b": ["u", "v"], "k": [1, 2]})
    assert classify_columns(df, {"k": "key"}) == (
        ["a"],
        {"b": "not numeric (text such as 'u')", "k": "key"},
    )
    assert infer_channels(df, ["k", None]) == ["a"]
    with pytest.raises(InputError, match=r"found no numeric channel columns .*'b'"):
        infer_channels(df, ["a", "k"])
    with pytest.raises(InputError, match="column 'c' holds complex numbers"):
        classify_columns(df.assign(c=1j), {})


def test_text_problem_tells_numbers_from_words():
    assert text_problem("c", pd.Series(["walk", "run", "walk"])) is None
    assert "holds numbers stored as text" in text_problem("c", pd.Series(["1.5", "2", "3"]))
    msg = text_problem("c", pd.Series(["1", "2", "n/a", "4"]))
    assert msg.startswith("is mostly numbers (3 of 4 values) but also holds text: 'n/a'")
    assert "(row position 2)" in msg


def test_validate_channels_and_check_column():
    df = pd.DataFrame({"a": [1.0, np.nan], "b": [True, False], "c": [np.nan, np.nan]})
    validate_channels(df, ["a"])
    with pytest.raises(InputError, match=r"channel 'b' must be numeric, got dtype bool; if it"):
        validate_channels(df, ["b"])
    with pytest.raises(InputError, match=r"channel 'c' is entirely missing \(all NaN\)"):
        validate_channels(df, ["c"])
    with pytest.raises(InputError, match=r"channel column 'z' not found .*\['a', 'b', 'c'\]"):
        check_column(df, "z", "channel")


def test_clock_like_channels():
    df = frame(n=20).assign(idx=np.arange(40.0), ramp=np.tile(np.arange(20.0), 2))
    named, rising = clock_like_channels(df, ["x", "idx", "ramp"], ["subject"])
    assert (named, rising) == (["idx"], ["ramp"])
    # recordings of 10 rows or fewer are too short to tell
    assert clock_like_channels(frame(n=10), ["x"], ["subject"]) == ([], [])


# ---------------------------------------------------------------------------- sampling


def test_check_fs():
    assert check_fs("100") == 100.0
    with pytest.raises(InputError, match=r"new_fs \(sampling rate in Hz\) is required"):
        check_fs(None, "new_fs")
    with pytest.raises(InputError, match="fs must be a positive sampling rate in Hz, got -1"):
        check_fs(-1)
    with pytest.raises(InputError, match="fs must be a sampling rate in Hz, got 'fast'"):
        check_fs("fast")


def test_median_step_and_infer_fs_per_recording():
    df = frame(fs=50.0).sample(frac=1.0, random_state=0)  # rows out of time order
    assert median_step(df, "time", ["subject"]) == pytest.approx(0.02)
    assert infer_fs(df, "time", ["subject", "recording"]) == pytest.approx(50.0)
    one_row = frame(n=1)
    assert median_step(one_row, "time", ["subject"]) is None
    with pytest.raises(InputError, match="cannot infer fs from column 'time': every recording"):
        infer_fs(one_row, "time", ["subject"])


@pytest.mark.parametrize(
    "fs, message",
    [
        (0.01, "fs=0.01 looks like the sampling period, not the rate"),
        (0.1, "fs=0.1 looks like a rate in kHz"),
        (100_000, "the time column must count seconds"),
        (1000, "upsampling 10-fold would invent the samples in between"),
        (0.5, "downsampling 200-fold would discard nearly all samples"),
    ],
)
def test_check_given_fs_refusals(fs, message):
    with pytest.raises(InputError, match=message):
        check_given_fs(fs, 0.01, "time")


def test_check_given_fs_accepts_a_resampling_target():
    for fs in (100, 102, 50, 400, 1.0):
        check_given_fs(fs, 0.01, "time")


# ------------------------------------------------------------------------------ timing


def test_regularize_timing_leaves_a_regular_frame_alone():
    df = frame(fs=100.0)
    (out, fs, source), w = caught(regularize_timing, df, KEYS, ["x", "y"], None)
    assert out is df and fs == pytest.approx(100.0) and w == []
    assert source == "time column 'time', median step 0.01 s"
    _, fs, source = regularize_timing(df, KEYS, ["x", "y"], 100)
    assert (fs, source) == (100.0, "given")


def test_regularize_timing_resamples_jitter_with_a_warning():
    df = frame(n=400, fs=100.0)
    df["time"] += np.random.default_rng(1).uniform(-0.003, 0.003, len(df))
    (out, fs, source), w = caught(regularize_timing, df, KEYS, ["x", "y"], None)
    assert len(w) == 1 and "time column 'time' is irregular" in str(w[0].message)
    assert w[0].filename == __file__
    step = out.groupby("subject")["time"].diff().dropna()
    assert np.allclose(step, 1 / fs)
    assert source.startswith("time column 'time', median rate")
    (same, _, _), w = caught(regularize_timing, df, KEYS, ["x", "y"], None, regularize=False)
    assert same is df and w == []


def test_regularize_timing_resamples_to_a_given_rate():
    df = frame(n=400, fs=100.0)
    (out, fs, source), w = caught(regularize_timing, df, KEYS, ["x", "y"], 50.0)
    assert "recorded at 100 Hz (time column 'time'), not at fs=50 Hz" in str(w[0].message)
    assert fs == 50.0 and len(out) == 2 * 200
    assert source == "given; data resampled from 100 Hz (time column 'time')"


@pytest.mark.parametrize(
    "change, fs, message",
    [
        (lambda d: d, True, "fs must be a positive sampling rate in Hz, got True"),
        (lambda d: d, np.inf, "fs must be a positive sampling rate in Hz, got inf"),
        (lambda d: d.assign(time=d["time"] * 1000), None, "if it counts milliseconds"),
        (lambda d: d.assign(time=d["time"].astype(str)), None, "must be numeric seconds"),
        (lambda d: d.assign(time=d["time"].where(d.index > 0)), None, "has 1 missing values"),
    ],
)
def test_regularize_timing_refusals(change, fs, message):
    with pytest.raises(InputError, match=message):
        regularize_timing(change(frame()), KEYS, ["x"], fs)


def test_regularize_timing_needs_a_rate_only_for_seconds():
    df = frame(n=1)  # one row per recording: no rate to infer
    keys = Keys("subject", "recording", "time", "label", True)
    assert regularize_timing(df, keys, ["x"], None)[1] is None
    with pytest.raises(InputError, match="cannot infer fs"):
        regularize_timing(df, keys, ["x"], None, in_seconds=True)


# ----------------------------------------------------------------------------- lengths


def test_window_samples():
    assert window_samples(200, None, None) == (200, 200)
    assert window_samples("2s", "0.5s", 100.0) == (200, 50)
    with pytest.raises(InputError, match=r"window='0.02s' at fs=100 Hz \(given\) is only 2"):
        window_samples("0.02s", None, 100.0)
    with pytest.raises(InputError, match=r"stride must be at least 1 sample, got '0.001s' at"):
        window_samples(10, "0.001s", 100.0)
    with pytest.raises(InputError, match="window must be at least 1 sample, got 0"):
        window_samples(0, None, None)
    with pytest.raises(InputError, match="is in seconds, so the sampling rate is needed"):
        window_samples("2s", None, None)


def test_check_length():
    check_length(None)
    check_length(np.int64(5))
    for bad in (0, 2.5, "10"):
        with pytest.raises(InputError, match="length must be a positive number of samples"):
            check_length(bad)


# ------------------------------------------------------------------------------ labels


def test_encode_labels():
    df = pd.DataFrame({"label": ["b", "a", "b", "c"]})
    cls, codes = encode_labels(df, KEYS)
    assert cls.tolist() == ["a", "b", "c"] and codes.tolist() == [1, 0, 1, 2]
    cls, codes = encode_labels(df, KEYS, ["c", "b", "a"])
    assert codes.tolist() == [1, 2, 1, 0] and codes.dtype == np.int64
    with pytest.raises(InputError, match=r"values the model was not trained on: \['c'\]"):
        encode_labels(df, KEYS, ["a", "b"])
    cls, codes = encode_labels(df, Keys("subject"), ["a"])
    assert cls.tolist() == ["a"] and codes.tolist() == [0, 0, 0, 0]


# -------------------------------------------------------------------------- recordings


def test_segment_recordings_in_order_of_first_appearance():
    df = frame(n=5, subjects=("s2", "s1"))
    recs = list(segment_recordings(df, KEYS))
    assert [r.subject for r in recs] == ["s2", "s1"]
    assert recs[1].rows.tolist() == [5, 6, 7, 8, 9]
    assert recs[1].where == "subject 's1', recording 'r1'"
    assert np.allclose(recs[0].t, np.arange(5) / 100)
    no_time = list(segment_recordings(df, Keys("subject")))
    assert no_time[0].where == "subject 's2'" and no_time[0].t is None


def test_segment_recordings_sorts_rows_by_time_with_a_warning():
    df = frame(n=5, subjects=("s1",)).iloc[[0, 2, 1, 3, 4]].reset_index(drop=True)
    recs, w = caught(lambda: list(segment_recordings(df, KEYS)))
    assert recs[0].rows.tolist() == [0, 2, 1, 3, 4]
    assert "rows of subject 's1', recording 'r1' are not in 'time' order" in str(w[0].message)
    assert w[0].filename == __file__


def test_segment_recordings_refuses_duplicated_timestamps_at_their_turn():
    df = frame(n=5)
    df.loc[7, "time"] = df.loc[6, "time"]
    recs = segment_recordings(df, KEYS)
    assert next(recs).subject == "s1"  # the first recording is fine
    with pytest.raises(InputError, match=r"duplicated timestamps in subject 's2', recording"):
        next(recs)


# ------------------------------------------------------------------------- cut windows


def test_window_starts_grid_and_label_purity():
    assert window_starts(10, 4, 3).tolist() == [0, 3, 6]
    assert window_starts(3, 4, 1).tolist() == []
    codes = np.array([0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
    assert window_starts(10, 4, 1, codes).tolist() == [0, 1, 5, 6]
    assert window_starts(10, 5, 5, codes).tolist() == [0, 5]


def test_cut_windows_values_and_shape():
    values = np.arange(20, dtype=np.float64).reshape(10, 2)  # (n, C)
    X, starts = cut_windows(values, np.array([0, 3, 6]), 4)
    assert X.shape == (3, 2, 4) and X.dtype == np.float32 and X.flags["C_CONTIGUOUS"]
    assert np.array_equal(X[1], values[3:7].T)
    assert starts.tolist() == [0, 3, 6]
    empty, none = cut_windows(values, np.array([], dtype=int), 4)
    assert empty.shape == (0, 2, 4) and len(none) == 0


def test_cut_windows_drops_windows_with_too_much_missing():
    values = np.ones((8, 1))
    values[:3] = np.nan  # window 0 is 3/4 missing, window 4 none
    X, starts = cut_windows(values, np.array([0, 4]), 4, max_missing=0.5)
    assert starts.tolist() == [4] and X.shape == (1, 1, 4)
    assert len(cut_windows(values, np.array([0, 4]), 4)[1]) == 2  # default keeps all


def test_window_meta():
    meta = window_meta("s1", "r1", np.array([0, 50]), 100, np.array([0.0, 0.5]))
    assert meta.columns.tolist() == ["subject", "recording", "start", "stop", "start_time"]
    assert meta["stop"].tolist() == [100, 150] and meta["subject"].tolist() == ["s1", "s1"]


def test_longest_nan_run():
    mask = np.zeros((10, 2), bool)
    assert longest_nan_run(mask) == (0, 0, 0)
    mask[2:4, 0] = True
    mask[5:9, 1] = True
    assert longest_nan_run(mask) == (4, 5, 1)


def test_cut_recordings_windows_and_short_subjects():
    df = pd.concat([frame(n=100, subjects=("s1",)), frame(n=30, subjects=("s2",))])
    df = df.reset_index(drop=True)
    _, codes = encode_labels(df, KEYS)
    cases = cut_recordings(df, KEYS, ["x", "y"], codes, window=40, stride=20, fs=100.0)
    assert [x.shape for x in cases.xs] == [(4, 2, 40)]
    assert cases.metas[0]["start_time"].tolist() == [0.0, 0.2, 0.4, 0.6]
    assert cases.short == {"s2": [30]}
    # by default a subject left without any window is dropped with a warning naming it
    _, w = caught(check_short_subjects, cases, 40)
    assert [str(x.message) for x in w] == [
        "1 subject(s) have no window of 40 samples left and are dropped: 's2' (longest "
        "usable part 30 samples); to keep them, use a shorter window; strict=True stops "
        "with an error instead"
    ]
    assert cases.dropped_subjects == ["s2"]
    # strict=True: the refusal, unless drop_short=True
    with pytest.raises(InputError, match=r"1 subject\(s\) have no complete window of 40"):
        check_short_subjects(cases, 40, strict=True)
    _, w = caught(check_short_subjects, cases, 40, drop_short=True, strict=True)
    assert str(w[0].message).endswith("drop_short=True — dropped")


def test_cut_recordings_splits_at_a_gap_of_a_whole_window_or_refuses_it_when_strict():
    df = frame(n=100, subjects=("s1",))
    df.loc[30:69, ["x", "y"]] = np.nan
    _, codes = encode_labels(df, KEYS)
    cases, w = caught(cut_recordings, df, KEYS, ["x", "y"], codes, window=20, stride=20, fs=100.0)
    # windows on either side of the gap, the second grid anchored where the gap ends
    assert cases.metas[0]["start"].tolist() == [0, 70]
    assert [str(x.message) for x in w] == [
        "1 recording(s) split at gaps of at least a window (20 samples = 0.2 s) without any "
        "value, 0.4 s in all; windows are cut on either side of a gap, never across it, "
        "and nothing is filled in: subject 's1', recording 'r1' has a gap of 40 samples = "
        "0.4 s with no value in any channel (from t=0.3 s to t=0.7 s): every channel is NaN "
        "there. Pass strict=True to stop with an error at such a gap instead"
    ]
    assert cases.counts(100.0)["recordings_split"] == 1
    assert cases.counts(100.0)["gap_samples"] == 40
    with pytest.raises(InputError, match=r"subject 's1', recording 'r1' has a gap of 40 samples"):
        cut_recordings(df, KEYS, ["x", "y"], codes, window=40, stride=40, strict=True)


def test_cut_recordings_one_case_per_recording():
    df = pd.concat([frame(n=50, subjects=("s1",)), frame(n=30, subjects=("s2",))])
    df = df.reset_index(drop=True)
    df.loc[50:79, "x"] = np.nan  # half of s2 missing
    _, codes = encode_labels(df, KEYS)
    cases, w = caught(
        cut_recordings, df, KEYS, ["x", "y"], codes, window=None, stride=None, max_missing=0.4
    )
    assert [x.shape for x in cases.xs] == [(2, 50)]
    assert "subject 's2', recording 'r1': 50% of its values are missing" in str(w[0].message)
    assert str(w[0].message).startswith(
        "1 case(s) (30 samples) with more than max_missing=0.4 of their values missing were "
        "left out: subject 's2' 1 case(s) (30 samples; missing: 'x' 30 samples)"
    )
    changing = frame(n=20, subjects=("s1",), labels=("a", "b"))
    _, codes = encode_labels(changing, KEYS)
    with pytest.raises(InputError, match="the label changes inside subject 's1'"):
        cut_recordings(changing, KEYS, ["x"], codes, window=None, stride=None)


def test_pad_cases_and_stack_cases():
    xs = [np.ones((2, 3), np.float32), np.ones((2, 5), np.float32)]
    X = pad_cases(xs, None, ["s1", "s2"])
    assert X.shape == (2, 2, 5) and np.isnan(X[0, :, 3:]).all() and not np.isnan(X[1]).any()
    assert pad_cases(xs, 8, ["s1", "s2"]).shape == (2, 2, 8)
    with pytest.raises(InputError, match="subject 's2' has a recording of 5 samples, longer"):
        pad_cases(xs, 4, ["s1", "s2"])
    with pytest.raises(InputError, match="no complete window of 40 samples in any recording"):
        stack_cases(Cases(), window=40)
    with pytest.raises(InputError, match="no recording is left"):
        stack_cases(Cases(), window=None)


# ---------------------------------------------------------------------------- pipeline


def test_the_steps_compose_to_make_windows():
    df = frame(n=300, labels=("a", "b", "c"))
    ws = make_windows(df, window=50, stride=25)
    keys = validate_frame(df)
    channels, _ = select_channels(df, None, keys)
    df2, fs, _ = regularize_timing(df, keys, channels, None)
    win, step = window_samples(50, 25, fs)
    classes, codes = encode_labels(df2, keys)
    cases = cut_recordings(df2, keys, channels, codes, window=win, stride=step, fs=fs)
    X, meta = stack_cases(cases, window=win)
    assert np.array_equal(ws.X, X)
    assert np.array_equal(ws.y, np.concatenate(cases.ys))
    assert ws.classes.tolist() == classes.tolist()
    pd.testing.assert_frame_equal(ws.meta, meta)


def test_make_windows_warnings_point_at_its_caller():
    df = frame(n=300).assign(counter=np.arange(600.0))
    df["time"] += np.random.default_rng(2).uniform(-0.003, 0.003, len(df))
    _, w = caught(make_windows, df, window=50)  # 0.5 s in samples: a third warning
    assert len(w) == 3 and all(x.filename == __file__ for x in w)
    assert "window=50 is 50 samples = 0.502 s at 99.52 Hz" in str(w[-1].message)  # jittered
