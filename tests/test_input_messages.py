"""What a new user hits when turning real recordings into a DataFrame, and the message each
gets: every unknown channel at once with the column meant (whitespace and case included),
numbers written with a decimal comma, a window in samples that was meant in seconds,
channels that are mostly missing or of one value, warnings at the user's own line and
once per call, command-line messages in command-line words, and labels and recording
ids that print plainly."""

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import FAST, subject_frame

import medspt
from medspt import InputError, SPTClassifier, evaluate, fit_spt, make_windows
from medspt.cli.commands import build_parser, main
from medspt.cli.messages import cli_hints, command_parser
from medspt.core.warn import once_per_call, warn


def stress_frame(subjects=4, seconds=60.0, fs=8.0) -> pd.DataFrame:
    """Wearable-like recordings at 8 Hz: acceleration, EDA and temperature."""
    rng = np.random.default_rng(0)
    parts = []
    for k in range(subjects):
        t = np.arange(int(seconds * fs)) / fs
        parts.append(
            pd.DataFrame(
                {
                    "subject": f"S{k + 1}",
                    "time": t,
                    "label": "ab"[k % 2],
                    "ax": np.sin(t) + 0.1 * rng.normal(size=t.size),
                    "EDA": 0.08 + 0.01 * np.cos(t / 4),
                    "temp": 33 + 0.1 * np.sin(t / 9),
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def recorded(fn, *args, **kwargs):
    """fn's result and the warnings it raised (every one, none filtered)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn(*args, **kwargs)
    return out, caught


def texts(caught) -> list[str]:
    return [str(w.message) for w in caught]


# ------------------------------------------------------------------ unknown channels


def test_every_unknown_channel_is_named_at_once_with_the_column_meant():
    df = stress_frame()
    with pytest.raises(InputError) as e:
        make_windows(df, window="10s", channels=["ax", "EDA ", "tmp", "Temp"])
    assert str(e.value) == (
        "channels=['ax', 'EDA ', 'tmp', 'Temp'] has 3 names that are not columns of the "
        "DataFrame: 'EDA ' (did you mean 'EDA'? it has a trailing space), 'tmp' (did you "
        "mean 'temp'?), 'Temp' (did you mean 'temp'? the upper and lower case differ). The "
        "DataFrame's columns: ['subject', 'time', 'label', 'ax', 'EDA', 'temp']"
    )


def test_whitespace_in_the_column_name_itself_names_the_strip_fix():
    df = stress_frame().rename(columns={"EDA": " EDA  "})
    with pytest.raises(InputError) as e:
        make_windows(df, window="10s", channels=["ax", "EDA"])
    assert (
        "'EDA' (did you mean ' EDA  '? the column's name has a leading space and 2 trailing "
        "spaces; strip the names with df.columns = df.columns.str.strip())"
    ) in str(e.value)
    with pytest.raises(InputError, match=r"'eda ' \(did you mean 'EDA'\? the upper and lower "):
        make_windows(stress_frame(), window="10s", channels=["eda "])
    with pytest.raises(InputError) as e:  # nothing close: no guess
        make_windows(stress_frame(), window="10s", channels=["heart_rate"])
    assert "'heart_rate'. The DataFrame's columns" in str(e.value)


def test_the_command_line_names_its_option_for_unknown_channels(tmp_path, capsys):
    csv = tmp_path / "rec.csv"
    stress_frame().to_csv(csv, index=False)
    assert main(["fit", "--data", str(csv), "--channels", "ax,eda,Temp"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        "medspt fit: error: --channels ax,eda,Temp has 2 names that are not columns of the "
        "DataFrame: 'eda' (did you mean 'EDA'?"
    )
    assert "channels=" not in err


# ------------------------------------------------------------------ numbers as text


def with_decimal_commas(df: pd.DataFrame, column: str = "EDA") -> pd.DataFrame:
    out = df.copy()
    out[column] = out[column].map(lambda v: f"{v:.3f}".replace(".", ","))
    return out


def test_decimal_commas_in_a_named_channel_show_a_value_and_both_fixes():
    df = with_decimal_commas(stress_frame())
    with pytest.raises(InputError) as e:
        make_windows(df, window="10s", channels=["ax", "EDA"])
    msg = str(e.value)
    assert msg.startswith(f"channel 'EDA' must be numeric, got dtype {df['EDA'].dtype}: it ")
    assert "holds numbers written with a decimal comma, stored as text" in msg
    assert "e.g. '0,090' (row position 0)" in msg
    assert msg.endswith(
        'Read the file with pd.read_csv(..., decimal=","), or convert the column: '
        "df['EDA'] = df['EDA'].str.replace(\",\", \".\").astype(float)"
    )


def test_decimal_commas_are_refused_not_left_out_when_channels_are_inferred():
    df = with_decimal_commas(stress_frame())
    df.loc[7, "EDA"] = "n/a"
    with pytest.raises(InputError) as e:
        make_windows(df, window="10s")
    msg = str(e.value)
    assert msg.startswith("column 'EDA' holds numbers written with a decimal comma")
    assert "it also holds text that is not a number: 'n/a' (row position 7)" in msg
    assert "pd.to_numeric(df['EDA'].str.replace(\",\", \".\"), errors='coerce')" in msg


def test_a_comma_that_may_separate_thousands_says_so():
    df = stress_frame().assign(steps=lambda d: np.where(d.index % 2, "1,250", "2,000"))
    with pytest.raises(InputError) as e:
        make_windows(df, window="10s")
    assert 'decimal=",") (or thousands=",", if the commas separate thousands)' in str(e.value)


def test_a_named_channel_of_words_shows_a_value():
    df = stress_frame().assign(phase="rest")
    with pytest.raises(InputError) as e:
        make_windows(df, window="10s", channels=["ax", "phase"])
    assert str(e.value) == (
        f"channel 'phase' must be numeric, got dtype {df['phase'].dtype}: it holds text such "
        "as 'rest' (row position 0), not numbers; name only signal columns in channels=[...]"
    )


def test_a_text_column_left_out_says_why_with_a_value_and_how_to_include_it():
    df = stress_frame().assign(level=lambda d: np.where(d["time"] < 30, "low", "0.82x"))
    _, caught = recorded(make_windows, df, window="10s")
    (msg,) = [m for m in texts(caught) if "left out" in m]
    assert msg == (
        "column(s) left out, not channels: 'level' (not numeric (text such as 'low')). Text "
        "is not a signal: if one of them is, convert it to numbers first, e.g. df['level'] = "
        "pd.to_numeric(df['level'], errors='coerce') (what is not a number becomes NaN), and "
        "it is picked up as a channel; to use only the signals you mean, pass channels=[...] "
        "(inferred: ['ax', 'EDA', 'temp'])"
    )


# ------------------------------------------------------------------ window units


def test_a_short_window_in_samples_asks_whether_seconds_were_meant():
    ws, caught = recorded(make_windows, stress_frame(), window=10)
    assert ws.X.shape[2] == 10  # taken as given: a warning, not a change
    assert texts(caught) == [
        "window=10 is 10 samples = 1.25 s at 8 Hz; did you mean window='10s'? Lengths in "
        "seconds end in 's'; to keep 10 samples without this warning, pass window='1.25s'"
    ]
    assert caught[0].filename == __file__
    _, caught = recorded(make_windows, stress_frame(), window="1.25s")  # confirmed
    assert texts(caught) == []


def test_window_units_are_only_questioned_where_a_rate_says_what_they_last():
    df = stress_frame()
    _, caught = recorded(make_windows, df, window=80)  # 10 s in samples: as meant
    assert texts(caught) == []
    _, caught = recorded(make_windows, df.drop(columns="time"), window=10)  # no rate known
    assert texts(caught) == []
    _, caught = recorded(make_windows, df.drop(columns="time"), window=10, fs=8.0)
    assert texts(caught)[0].startswith("window=10 is 10 samples = 1.25 s at 8 Hz")


def test_a_stride_in_samples_beside_a_window_in_seconds_is_questioned():
    _, caught = recorded(make_windows, stress_frame(), window="10s", stride=5)
    assert texts(caught) == [
        "stride=5 is 5 samples = 0.625 s at 8 Hz, while window='10s' is in seconds; did you "
        "mean stride='5s'? To keep 5 samples without this warning, pass stride='0.625s'"
    ]
    _, caught = recorded(make_windows, stress_frame(), window=10, stride=5)
    assert texts(caught) == [
        "window=10 is 10 samples = 1.25 s at 8 Hz (stride=5 is in samples too: 0.625 s); did "
        "you mean window='10s'? Lengths in seconds end in 's'; to keep 10 samples without "
        "this warning, pass window='1.25s'"
    ]


def test_a_model_cutting_new_data_with_its_own_lengths_does_not_question_them():
    df = subject_frame(n_per_class=3, seconds=12)  # 20 Hz
    clf, _ = recorded(fit_spt, df, window="1s", **FAST)  # 20 samples, in seconds
    assert clf.frame_spec_.window == 20
    _, caught = recorded(clf.predict, df)
    assert not [m for m in texts(caught) if "did you mean" in m]


# ------------------------------------------------------------------ channels with little in them


def test_a_mostly_missing_channel_and_a_constant_one_are_named_with_the_fix():
    df = stress_frame()
    df.loc[df.index % 5 != 0, "temp"] = np.nan  # recorded at a fifth of the rate
    df["flat"] = 1e30
    _, caught = recorded(make_windows, df, window="10s")
    assert texts(caught) == [
        "channel 'temp' is missing (NaN) in 80% of the rows (1,536 of 1,920); missing values "
        "are never filled in, so most of its windows carry gaps. If it should be complete, "
        "check how it was read (a sensor at a slower rate merged onto the others' timestamps "
        "leaves NaN between its samples); to leave it out, pass channels=['ax', 'EDA', "
        "'flat']",
        "channel 'flat' has the same value (1e+30) in every row where it is recorded: it "
        "carries no information for the model; to leave it out, pass channels=['ax', 'EDA', "
        "'temp']",
    ]
    half = stress_frame()
    half.loc[half.index % 2 == 0, "temp"] = np.nan  # exactly half: not "mostly"
    _, caught = recorded(make_windows, half, window="10s")
    assert texts(caught) == []


def test_a_constant_channel_in_arrays_is_named_once_per_fit(arrays):
    X, y, groups = arrays
    X = X.copy()
    X[:, 2] = 5.0
    _, caught = recorded(SPTClassifier(**FAST).fit, X, y, groups=groups)
    flat = [m for m in texts(caught) if "same value" in m]
    assert flat == [
        "channel 'ch2' has the same value (5) in every training window where it is recorded: "
        "it carries no information for the model; leave it out (channels=[...] when "
        "windowing a DataFrame, or drop it from X)"
    ]


# ------------------------------------------------------------------ where and how often


def test_one_evaluate_shows_each_warning_once_at_the_callers_line():
    df = subject_frame(n_per_class=3, seconds=12)
    df["flat"] = 1e30  # checked on the frame, then on every fold's training windows
    res, caught = recorded(
        evaluate, df, window="2s", cv=2, depths=(1,), scratch_long=False, baselines=(),
        probes=False, verbose=False, **FAST,
    )  # fmt: skip
    assert len(res) == 4  # 2 folds x (scratch, spt-span)
    said = texts(caught)
    assert len(said) == len(set(said))  # nothing twice
    flat = [m for m in said if "'flat' has the same value" in m]
    assert len(flat) == 1 and "in every row" in flat[0]  # the frame's words, not 'ch2'
    # three training subjects per fold: the validation warning of 4 fits, shown once
    assert sum("only 3 training subjects" in m for m in said) == 1
    assert all(w.filename == __file__ for w in caught), [w.filename for w in caught]


def test_the_same_warning_twice_in_one_call_shows_once_and_again_in_the_next():
    @once_per_call
    def twice():
        warn("the same")
        warn("the same")
        warn("another one", key="k")
        warn("another one, other words", key="k")

    _, caught = recorded(twice)
    assert texts(caught) == ["the same", "another one"]
    _, caught = recorded(twice)  # a new call: shown again
    assert texts(caught) == ["the same", "another one"]
    assert all(w.filename == __file__ for w in caught)
    _, caught = recorded(lambda: (warn("x"), warn("x")))  # outside any call: every one
    assert texts(caught) == ["x", "x"]


# ------------------------------------------------------------------ command-line words


def _parser(*argv: str):
    parser = build_parser()
    return command_parser(parser, parser.parse_args(list(argv)))


def test_command_line_messages_name_each_option_once():
    ev = _parser("evaluate", "--data", "x")
    assert cli_hints("or a larger val_size", ev) == "or a larger --val-size"
    assert cli_hints("a larger val_size / --val-size", ev) == "a larger --val-size"
    assert cli_hints("or none (baselines=())", ev) == "or none (--no-baselines)"
    assert cli_hints("choose (baselines=(...), --baselines)", ev) == "choose (--baselines NAME)"
    assert cli_hints("fit with window_stats=False (--no-window-stats) when", ev) == (
        "fit with --no-window-stats when"
    )
    assert cli_hints("give window= and", ev) == "give --window and"
    assert cli_hints("depth=2, depth=4", ev) == "--depths 2, --depths 4"  # two values stay
    assert cli_hints('pd.read_csv(..., decimal=",")', ev) == 'pd.read_csv(..., decimal=",")'
    assert cli_hints("window=10 is 10 samples; did you mean window='10s'?", ev) == (
        "--window 10 is 10 samples; did you mean --window 10s?"
    )


def test_library_messages_carry_no_command_line_options():
    """Python callers read Python arguments; the command line translates them."""
    root = Path(medspt.__file__).parent
    for path in ("evaluation/choice.py", "baselines/__init__.py", "baselines/_base.py"):
        text = (root / path).read_text()
        for option in ("--val-size", "--baselines", "--no-baselines", "--window", "--channels"):
            assert option not in text, (path, option)


# ------------------------------------------------------------------ plain labels and ids


def test_class_labels_print_as_plain_strings_and_integers_stay_integers(arrays):
    X, y, groups = arrays
    clf = SPTClassifier(**FAST).fit(X, y, groups=groups)
    assert repr(list(clf.classes_)) == "['control', 'pd']"
    assert type(clf.predict(X[:1])[0]) is str
    ints = SPTClassifier(**FAST).fit(X, (y == "pd").astype(int), groups=groups)
    assert ints.classes_.dtype.kind == "i"


def test_a_frame_without_recording_ids_marks_them_nan_in_windows_and_recordings():
    df = subject_frame(n_per_class=3, seconds=12).drop(columns="recording")
    ws = make_windows(df, window="2s")
    assert ws.meta["recording"].isna().all()
    clf = fit_spt(df, window="2s", **FAST)
    pred = clf.predict(df)
    assert pred.windows["recording"].isna().all()
    assert pred.recordings["recording"].isna().all()
    assert pred.windows["recording"].dtype == pred.recordings["recording"].dtype
    assert len(pred.recordings) == df["subject"].nunique()
