"""Input a new user gets wrong: each is refused (InputError) or warned about (UserWarning)
with a message that names the column or argument, what was expected and the fix; and the
WindowSet records which columns were left out and where fs came from."""

import warnings

import numpy as np
import pandas as pd
import pytest

from medspt.core.errors import InputError
from medspt.core.splits import subject_folds, validation_split
from medspt.data.windowset import from_arrays, make_windows


def frame(fs=100.0, seconds=6.0, subjects=("s1", "s2"), **extra):
    """Regular long frame: two channels, one label per subject, extra columns as given."""
    parts = []
    for k, s in enumerate(subjects):
        t = np.arange(int(fs * seconds)) / fs
        d = pd.DataFrame(
            {
                "subject": s,
                "time": t,
                "label": "ab"[k % 2],
                "x": np.sin(2 * np.pi * t),
                "y": np.cos(2 * np.pi * t),
            }
        )
        parts.append(d)
    df = pd.concat(parts, ignore_index=True)
    for name, value in extra.items():
        df[name] = value(df) if callable(value) else value
    return df


def quiet(fn, *args, **kw):
    """Call fn with every warning turned into an error: the input was fine."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn(*args, **kw)


# ------------------------------------------------------------------ channel columns


def test_mostly_numeric_text_column_is_refused_with_values_rows_and_fixes():
    df = frame()
    z = df["x"].astype(object)
    z.iloc[[3, 17, 40, 41]] = ["n/a", "error", "n/a", "?"]
    df["z"] = z
    with pytest.raises(InputError) as e:
        make_windows(df, window=100)
    msg = str(e.value)
    assert "column 'z'" in msg and "mostly numbers" in msg
    assert "'n/a' (row position 3)" in msg and "'error' (row position 17)" in msg
    assert "and 1 more" in msg
    assert "pd.to_numeric(df['z'], errors='coerce')" in msg and "channels=[...]" in msg


def test_numbers_stored_as_text_are_refused_when_inferred():
    df = frame(z=lambda d: d["x"].map("{:.4f}".format))
    with pytest.raises(InputError, match=r"column 'z' holds numbers stored as text") as e:
        make_windows(df, window=100)
    assert "df['z'] = pd.to_numeric(df['z'])" in str(e.value)


def test_named_channel_with_some_text_names_values_and_coerce_fix():
    df = frame()
    z = df["x"].astype(object)
    z.iloc[5] = "lead off"
    df["z"] = z
    with pytest.raises(InputError, match=r"channel 'z' must be numeric, got dtype object") as e:
        make_windows(df, window=100, channels=["x", "z"])
    assert "'lead off' (row position 5)" in str(e.value)
    assert "errors='coerce'" in str(e.value)


@pytest.mark.parametrize("named", [False, True])
def test_complex_channels_are_refused_with_the_magnitude_fix(named):
    df = frame(z=lambda d: d["x"] + 1j * d["y"])
    kw = {"channels": ["x", "z"]} if named else {}
    with pytest.raises(InputError, match=r"'z' holds complex numbers") as e:
        make_windows(df, window=100, **kw)
    assert "np.abs(df['z'])" in str(e.value)


def test_left_out_records_every_column_that_is_not_a_channel():
    df = frame(
        recording="r1",
        condition="walk",
        artifact=False,
        clock=lambda d: pd.Timestamp("2024-01-01") + pd.to_timedelta(d["time"], unit="s"),
        empty=lambda d: pd.Series([None] * len(d), dtype=object),
    )
    with pytest.warns(UserWarning, match="left out, not channels: 'condition'"):
        ws = make_windows(df, window=100)
    assert ws.channels == ["x", "y"]
    assert ws.left_out == {
        "subject": "subject column",
        "time": "time column (bookkeeping, never a feature)",
        "label": "label column",
        "recording": "recording column",
        "condition": "not numeric (text such as 'walk')",
        "artifact": "boolean",
        "clock": "dates or times (dtype datetime64[ns]), not a signal",
        "empty": "entirely missing",
    }
    # a subset keeps both records
    sub = ws.subset(np.arange(2))
    assert sub.left_out == ws.left_out and sub.fs_source == ws.fs_source


def test_a_left_out_column_warns_once_naming_it_and_why():
    import warnings

    df = frame(condition="walk", level=lambda d: np.where(d["time"] < 3, "0.82x", "1.1x"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ws = make_windows(df, window=100)
    left = [str(w.message) for w in caught if "left out, not channels" in str(w.message)]
    assert len(left) == 1 and ws.channels == ["x", "y"]
    assert "'condition' (not numeric (text such as 'walk'))" in left[0]
    assert "'level' (not numeric (text such as '0.82x'))" in left[0]
    assert "pd.to_numeric" in left[0] and "subject" not in left[0]  # key columns are not news
    with warnings.catch_warnings(record=True) as caught:  # named channels: nothing to say
        warnings.simplefilter("always")
        make_windows(df, window=100, channels=["x"])
    assert not [w for w in caught if "left out" in str(w.message)]
    with warnings.catch_warnings(record=True) as caught:  # only signals and keys: silent
        warnings.simplefilter("always")
        make_windows(frame(), window=100)
    assert not [w for w in caught if "left out" in str(w.message)]


def test_left_out_with_named_channels():
    df = frame(condition="walk")
    ws = quiet(make_windows, df, window=100, channels=["y"])
    assert ws.left_out["x"] == "not named in channels=[...]"
    assert ws.left_out["condition"] == "not named in channels=[...]"
    assert ws.left_out["subject"] == "subject column"
    assert "y" not in ws.left_out


def test_categorical_text_is_left_out_by_name():
    df = frame(phase=lambda d: pd.Categorical(np.where(d["time"] < 3, "rest", "walk")))
    with pytest.warns(UserWarning, match="'phase' \\(not numeric \\(categorical"):
        ws = make_windows(df, window=100)
    assert ws.left_out["phase"] == "not numeric (categorical such as 'rest')"


def test_no_numeric_column_lists_why_each_was_left_out():
    df = frame(condition="walk").drop(columns=["x", "y"])
    with pytest.raises(InputError, match="found no numeric channel columns") as e:
        make_windows(df, window=100)
    assert "'condition': \"not numeric (text such as 'walk')\"" in str(e.value)
    assert "channels=[...]" in str(e.value)


# ------------------------------------------------------------------ sampling rate


def test_fs_given_as_the_sampling_period_is_refused():
    df = frame(fs=125.0)
    with pytest.raises(InputError, match=r"fs=0\.008 looks like the sampling period") as e:
        make_windows(df, window=100, fs=0.008)
    msg = str(e.value)
    assert "column 'time' steps 0.008 s per sample (125 Hz)" in msg
    assert "fs is a rate in Hz: pass fs=125, or omit fs to take it from column 'time'" in msg


def test_fs_given_in_khz_is_refused():
    df = frame(fs=125.0)
    with pytest.raises(InputError, match=r"fs=0\.125 looks like a rate in kHz") as e:
        make_windows(df, window=100, fs=0.125)
    assert "pass fs=125, or omit fs" in str(e.value)


def test_fs_far_above_the_time_columns_rate_is_refused():
    df = frame(fs=50.0)
    with pytest.raises(InputError, match=r"fs=1000 Hz but column 'time' steps 0\.02 s") as e:
        make_windows(df, window=100, fs=1000)
    msg = str(e.value)
    assert "upsampling 20-fold" in msg and "pass fs=50, or omit fs" in msg
    assert "medspt.data.timing.regularize(df, fs=...)" in msg


def test_given_fs_with_millisecond_times_names_both_fixes():
    df = frame(fs=125.0)
    df["time"] *= 1000
    with pytest.raises(InputError, match=r"time column 'time' implies 0\.125 Hz but fs is 125"):
        make_windows(df, window=100, fs=125.0)
    with pytest.raises(InputError, match=r"divide it by 1000 \(df\['time'\] = df\['time'\] / 1000"):
        make_windows(df, window=100, fs=125.0)


@pytest.mark.parametrize("window", [240, "30s"])
def test_millisecond_times_without_fs_are_refused_before_the_window(window):
    df = frame(fs=125.0, seconds=4.0)
    df["time"] *= 1000  # steps of 8 "seconds": 0.125 Hz
    with pytest.raises(InputError) as e:
        make_windows(df, window=window)
    assert str(e.value) == (
        "column 'time' advances 8 per sample (fs = 0.125 Hz): if it counts milliseconds, "
        "divide it by 1000 (df['time'] = df['time'] / 1000); if the rate really is "
        "0.125 Hz, pass fs=0.125"
    )


def test_a_slow_rate_given_explicitly_is_accepted():
    df = frame(fs=125.0, seconds=4.0)
    df["time"] *= 1000
    ws = quiet(make_windows, df, window=100, fs=0.125)
    assert ws.fs == 0.125 and ws.fs_source == "given"


def test_window_in_seconds_of_too_few_samples_names_window_and_fs():
    df = frame(fs=2.0, seconds=60.0)
    with pytest.raises(InputError) as e:
        make_windows(df, window="1s")
    msg = str(e.value)
    assert msg.startswith("window='1s' at fs=2 Hz (time column 'time', median step 0.5 s)")
    assert "only 2 sample(s)" in msg and "at least 4 samples" in msg
    assert "window='16s'" in msg


def test_stride_in_seconds_below_one_sample_names_stride_and_fs():
    df = frame(fs=2.0, seconds=60.0)
    with pytest.raises(InputError, match=r"stride must be at least 1 sample, got '0\.1s' at fs=2"):
        make_windows(df, window="10s", stride="0.1s")


def test_seconds_without_any_rate_name_the_ways_to_give_one():
    df = frame().drop(columns="time")
    with pytest.raises(InputError, match=r"window='1s' is in seconds.*pass fs .*e\.g\. fs=100"):
        make_windows(df, window="1s")


def test_fs_source_says_where_the_rate_came_from():
    df = frame(fs=100.0)
    assert quiet(make_windows, df, window=100).fs_source == (
        "time column 'time', median step 0.01 s"
    )
    assert quiet(make_windows, df, window=100, fs=100.0).fs_source == "given"
    with pytest.warns(UserWarning, match="recorded at 100 Hz"):
        down = make_windows(df, window=100, fs=50.0)
    assert down.fs == 50.0
    assert down.fs_source == "given; data resampled from 100 Hz (time column 'time')"
    no_time = df.drop(columns="time")
    assert quiet(make_windows, no_time, window=100).fs_source == "not given"
    assert quiet(make_windows, no_time, window=100, fs=100.0).fs_source == "given"
    jitter = df.copy()
    jitter["time"] += np.random.default_rng(0).uniform(-0.003, 0.003, len(df))
    with pytest.warns(UserWarning, match="irregular"):
        ws = make_windows(jitter, window=100)
    assert ws.fs_source.startswith("time column 'time', median rate ")
    assert ws.fs_source.endswith("; resampled to a regular grid")


def test_from_arrays_records_nothing_left_out():
    X = np.zeros((4, 2, 10))
    ws = from_arrays(X, ["a", "b", "a", "b"], [1, 2, 3, 4])
    assert ws.left_out == {} and ws.fs_source == "not given"
    assert from_arrays(X, fs=50.0).fs_source == "given"
    assert ws.subset(np.arange(2)).left_out == {}


# ------------------------------------------------------------------ gaps


def test_rows_removed_from_a_recording_name_where_and_how_to_split_when_strict():
    df = frame(fs=100.0, seconds=10.0, recording="r1")
    df = df.drop(index=range(300, 600))  # three seconds of subject s1 are gone
    with pytest.raises(InputError) as e:  # without strict, split there (test_dropouts.py)
        make_windows(df, window=200, strict=True)
    msg = str(e.value)
    assert msg.startswith("subject 's1', recording 'r1' has a gap of 300 samples = 3 s")
    assert "with no value in any channel (from t=3 s to t=6 s)" in msg
    assert "rows are missing there (the time column 'time' jumps" in msg
    assert "give the rows from t=6 s on a recording id of their own in column 'recording'" in msg
    assert "drop the channel" not in msg


def test_one_channel_missing_for_a_window_names_it_when_strict():
    df = frame(fs=100.0, seconds=10.0)
    df.loc[100:399, "y"] = np.nan
    with pytest.raises(InputError) as e:  # without strict, counted in a warning
        make_windows(df, window=200, strict=True)
    msg = str(e.value)
    assert "subject 's1' has a gap of 300 samples = 3 s in channel(s) ['y']" in msg
    assert "(from t=1 s to t=4 s)" in msg
    assert "leave those channel(s) out with channels=[...]" in msg


# ------------------------------------------------------------------ subjects


def test_too_few_subjects_for_validation_warn_with_the_fix():
    groups = np.repeat(["a", "b", "c"], 5)
    labels = np.tile(["x", "y", "x", "y", "x"], 3)
    with pytest.warns(UserWarning) as rec:
        fit, val = validation_split(labels, groups, 0.2, 0)
    assert len(fit) == 15 and len(val) == 0
    assert str(rec[0].message) == (
        "only 3 training subjects: no subject-wise validation is possible (needs at least "
        "4); training runs every epoch and keeps the final weights. Give more subjects, or "
        "set val_size=0 to do this without the warning."
    )
    quiet(validation_split, labels, groups, 0.0, 0)  # asked for no validation: silent
    four = np.repeat(["a", "b", "c", "d"], 5)
    fit, val = quiet(validation_split, np.tile(labels[:5], 4), four, 0.25, 0)
    assert len(val) > 0


def test_a_fit_on_three_subjects_warns_about_validation():
    from conftest import FAST

    from medspt import SPTClassifier

    rng = np.random.default_rng(0)
    X = rng.standard_normal((12, 2, 32)).astype(np.float32)
    y = np.array(["a", "b"] * 6)
    groups = np.repeat(["s1", "s2", "s3"], 4)
    with pytest.warns(UserWarning, match="only 3 training subjects"):
        SPTClassifier(**FAST).fit(X, y, groups=groups)


def test_more_folds_than_subjects_are_refused_with_the_fix():
    y = np.array(["a", "b", "a"] * 2)
    groups = np.repeat(["s1", "s2", "s3"], 2)
    with pytest.raises(InputError) as e:
        subject_folds(y, groups, 5)
    msg = str(e.value)
    assert msg.startswith("cv=5 folds need between 2 and the number of subjects (3)")
    assert "pass cv=3 or fewer" in msg and "give more subjects" in msg
    with pytest.raises(InputError, match="pass cv=2 or more"):
        subject_folds(y, groups, 1)
    with pytest.raises(InputError, match=r"cv must be a whole number of folds.*2\.5"):
        subject_folds(y, groups, 2.5)
    with pytest.raises(InputError, match="needs at least 2 subjects"):
        subject_folds(y, np.repeat("s1", 6), 2)


def test_regularize_refuses_a_named_complex_channel_and_skips_inferred_ones():
    from medspt.data.timing import regularize

    df = frame(z=lambda d: d["x"] + 1j * d["y"])
    with pytest.raises(InputError, match=r"channel 'z' holds complex numbers.*np\.abs"):
        regularize(df, 50.0, channels=["x", "z"])
    out = quiet(regularize, df, 50.0)  # z is carried along, not resampled as a signal
    assert len(out) < len(df) and out["z"].dtype.kind == "c"
