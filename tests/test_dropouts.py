"""Real recordings as people have them: sensor dropouts, holes in the time column and
clocks rounded to milliseconds. A cohort is never refused for them: windows with too many
missing values are dropped, recordings are split at gaps of a window or more, subjects
left without any window are dropped, each with one warning per call, and the counts reach
the data summary and evaluate's summary.md. ``strict=True`` refuses as before."""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import FAST

import medspt
from medspt.cli.commands import build_parser
from medspt.cli.messages import cli_hints
from medspt.core.errors import InputError
from medspt.data.summary import DataSummary
from medspt.data.synthetic import make_demo_frame
from medspt.data.timing import check_timing
from medspt.data.windowset import make_windows


def caught(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` and the texts of the warnings it issued."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = fn(*args, **kwargs)
    return out, [str(x.message) for x in w]


def cohort(n_subjects: int = 6, seconds: float = 60.0) -> pd.DataFrame:
    """The demo data, small: 20 Hz, two recordings per subject, three channels."""
    return make_demo_frame(n_subjects=n_subjects, seconds_per_recording=seconds)


def lose_last_third(df: pd.DataFrame, subject: str, channel: str) -> pd.DataFrame:
    """``channel`` of ``subject`` missing (NaN) for the last third of every recording."""
    df = df.copy()
    df.loc[(df["subject"] == subject) & (df["time"] >= 40.0), channel] = np.nan
    return df


def clean_windows_after(df: pd.DataFrame, subject: str, t: float) -> int:
    """Windows of 10 s of ``subject`` starting at or after ``t`` s in the clean data."""
    meta = make_windows(df, window="10s").meta
    return int(((meta["subject"] == subject) & (meta["start_time"] >= t - 1e-9)).sum())


# ------------------------------------------------------------------- missing values


def test_evaluate_on_a_cohort_where_one_subject_loses_a_channel(tmp_path):
    clean = cohort()
    df = lose_last_third(clean, "S03", "emg")
    lost = clean_windows_after(clean, "S03", 40.0)  # emg missing throughout these
    assert lost > 0
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        results = medspt.evaluate(
            df, window="10s", max_missing=0.3, cv=2, depths=(1,), maskings=("span",),
            scratch=False, baselines=(), probes=False, verbose=False, **FAST,
        )  # fmt: skip
    assert len(results) == 2  # one configuration, two folds: it finished
    texts = [str(x.message) for x in w if "max_missing" in str(x.message)]
    assert texts == [
        f"{lost} window(s) ({10 * lost} s) with more than max_missing=0.3 of their values "
        f"missing were left out: subject 'S03' {lost} window(s) ({10 * lost} s; missing: "
        f"'emg' {10 * lost} s); raise max_missing to keep them (missing values are never "
        "filled in)"
    ]
    assert results.dropped["windows"] == lost and results.dropped["seconds"] == 10 * lost
    assert results.dropped["subjects"] == [] and results.dropped["recordings_split"] == 0
    from medspt.evaluation.report_folder import write_results

    write_results(results, tmp_path)
    summary = (tmp_path / "summary.md").read_text()
    assert (
        f"Dropouts in the data: {lost} windows dropped for too many missing values "
        f"({10 * lost} s); nothing was filled in." in summary
    )


def test_the_data_summary_counts_what_was_dropped():
    df = lose_last_third(cohort(), "S03", "emg")
    ws, _ = caught(make_windows, df, window="10s", max_missing=0.3)
    summary = DataSummary.of(ws)
    n = ws.dropped["windows"]
    assert (summary.windows_dropped, summary.samples_dropped) == (n, 200 * n)
    assert f"dropouts: {n} windows dropped for too many missing values ({10 * n} s)" in (
        str(summary).splitlines()
    )
    assert DataSummary.from_dict(summary.to_dict()) == summary
    # nothing dropped: no dropouts line
    assert "dropouts" not in str(DataSummary.of(make_windows(cohort(), window="10s")))
    # a fit records them too
    clf, _ = caught(medspt.fit_spt, df, window="10s", max_missing=0.3, **FAST)
    assert clf.data_summary_.windows_dropped == n
    assert clf.data_summary_.to_dict()["samples_dropped"] == 200 * n


def test_a_channel_missing_throughout_within_max_missing_is_kept_and_named():
    clean = cohort()
    df = lose_last_third(clean, "S03", "emg")
    kept = clean_windows_after(clean, "S03", 40.0)
    ws, texts = caught(make_windows, df, window="10s")  # max_missing=0.5: 1/3 missing passes
    assert len(ws) == len(make_windows(clean, window="10s"))
    assert texts == [
        f"{kept} window(s) ({10 * kept} s) were kept although a channel is missing throughout "
        "them (within max_missing=0.5 of all their values; the model treats it as hidden "
        f"there): subject 'S03' {kept} window(s) ({10 * kept} s; channel(s) 'emg'); "
        "max_missing=0.33 or lower leaves them out, and channels=[...] naming the others "
        "leaves the channel out"
    ]
    assert ws.dropped["windows_channel_missing"] == kept and ws.dropped["windows"] == 0
    emg = ws.channels.index("emg")
    assert np.isnan(ws.X[:, emg]).all(axis=1).sum() == kept  # nothing filled in
    # the suggested threshold leaves them out
    fewer, _ = caught(make_windows, df, window="10s", max_missing=0.33)
    assert len(fewer) == len(ws) - kept


def test_isolated_missing_samples_pass_silently():
    df = cohort()
    rng = np.random.default_rng(0)
    df.loc[rng.choice(len(df), 40, replace=False), "acc_x"] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning fails the test
        ws = make_windows(df, window="10s")
    assert len(ws) == len(make_windows(cohort(), window="10s"))
    clean = make_windows(cohort(), window="10s").X
    hidden = np.isnan(ws.X)  # still missing (the model masks them), nothing else changed
    assert 0 < hidden.sum() <= 40 and np.array_equal(ws.X[~hidden], clean[~hidden])
    assert ws.dropped["windows"] == ws.dropped["windows_channel_missing"] == 0
    assert "dropouts" not in str(DataSummary.of(ws))


def test_the_cli_words_the_warning_with_options():
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    fit = sub.choices["fit"]
    text = cli_hints(
        "4 window(s) (40 s) with more than max_missing=0.3 of their values missing were left "
        "out: ...; raise max_missing to keep them. Pass strict=True to stop with an error",
        fit,
    )
    assert "more than --max-missing 0.3 of their" in text
    assert "raise --max-missing to keep" in text and "Pass --strict to stop" in text


# -------------------------------------------------------------------------- gaps


def jumping(seconds_missing: float) -> pd.DataFrame:
    """Subject S02's recording R1 (one label throughout) loses its rows from t=15 s for
    ``seconds_missing``."""
    df = cohort()
    gone = (df["subject"] == "S02") & (df["recording"] == "R1")
    gone &= (df["time"] >= 15.0) & (df["time"] < 15.0 + seconds_missing - 1e-9)
    return df[~gone].reset_index(drop=True)


def test_a_time_jump_of_a_window_splits_the_recording_with_one_warning():
    df = jumping(15.0)
    ws, texts = caught(make_windows, df, window="10s")
    assert texts == [
        "1 recording(s) split at gaps of at least a window (200 samples = 10 s) without any "
        "value, 15 s in all; windows are cut on either side of a gap, never across it, and "
        "nothing is filled in: subject 'S02', recording 'R1' has a gap of 300 samples = 15 s "
        "with no value in any channel (from t=15 s to t=30 s): rows are missing there (the "
        "time column 'time' jumps from t=14.95 s to t=30 s). Pass strict=True to stop with "
        "an error at such a gap instead"
    ]
    assert ws.dropped["recordings_split"] == 1 and ws.dropped["gap_samples"] == 300
    meta = ws.meta[(ws.meta["subject"] == "S02") & (ws.meta["recording"] == "R1")]
    # one window before the gap (0-10 s; 10-20 s would cross it), a grid of its own after
    np.testing.assert_allclose(meta["start_time"], [0.0, 30.0, 40.0, 50.0], atol=1e-9)
    assert meta["start"].tolist() == [0, 600, 800, 1000]  # samples from the recording's start
    # the recorded values, not resampled ones: the window after the gap is the rows as given
    rows = df[(df["subject"] == "S02") & (df["recording"] == "R1") & (df["time"] >= 30.0 - 1e-9)]
    np.testing.assert_array_equal(
        ws.X[meta.index[1]], rows[ws.channels].to_numpy(np.float32)[:200].T
    )
    assert str(DataSummary.of(ws)).splitlines()[-2] == (
        "dropouts: 1 recording(s) split at gaps (15 s without any value)"
    )


def test_a_time_jump_refused_with_strict():
    with pytest.raises(InputError) as e:
        make_windows(jumping(15.0), window="10s", strict=True)
    assert str(e.value) == (
        "subject 'S02', recording 'R1' has a gap of 300 samples = 15 s with no value in any "
        "channel (from t=15 s to t=30 s): rows are missing there (the time column 'time' "
        "jumps from t=14.95 s to t=30 s). That is at least a whole window (200 samples). To "
        "fix it, split the recording at the gap: give the rows from t=30 s on a recording "
        "id of their own in column 'recording', so that windows are cut on either side of it"
    )


def test_a_shorter_time_jump_leaves_its_samples_missing_never_interpolated():
    df = jumping(0.25)  # 5 rows
    ws, texts = caught(make_windows, df, window="10s")
    assert texts == []  # within max_missing: silent, as isolated missing samples are
    meta = ws.meta[(ws.meta["subject"] == "S02") & (ws.meta["recording"] == "R1")]
    assert meta["start"].tolist() == [0, 200, 400, 600, 800, 1000]  # one grid, as without
    x = ws.X[meta.index[1]]  # (C, 200): the window from t=10 s, over the hole at 15 s
    assert np.isnan(x[:, 100:105]).all()
    assert not np.isnan(np.delete(x, range(100, 105), axis=1)).any()


def test_every_channel_missing_for_a_window_splits_the_recording():
    df = cohort()
    sel = (df["subject"] == "S04") & (df["recording"] == "R2") & df["time"].between(20, 32.45)
    df.loc[sel, ["acc_x", "acc_y", "emg"]] = np.nan  # 250 samples
    ws, texts = caught(make_windows, df, window="10s")
    assert len(texts) == 1 and texts[0].startswith(
        "1 recording(s) split at gaps of at least a window (200 samples = 10 s) without any "
        "value, 12.5 s in all"
    )
    assert (
        "subject 'S04', recording 'R2' has a gap of 250 samples = 12.5 s with no value in any "
        "channel (from t=20 s to t=32.5 s): every channel is NaN there" in texts[0]
    )
    meta = ws.meta[(ws.meta["subject"] == "S04") & (ws.meta["recording"] == "R2")]
    assert not np.isnan(ws.X[meta.index]).any()  # the gap is in no window
    assert (meta["start"] - 650).isin(range(0, 1200, 200)).any()  # new grid at its end
    with pytest.raises(InputError, match="has a gap of 250 samples = 12.5 s with no value"):
        make_windows(df, window="10s", strict=True)


# ------------------------------------------------------------------------ subjects


def test_a_subject_left_without_any_window_is_dropped_with_a_warning():
    df = cohort()
    df.loc[df["subject"] == "S05", ["acc_x", "acc_y"]] = np.nan  # 2 of 3 channels, always
    ws, texts = caught(make_windows, df, window="10s")
    n = clean_windows_after(cohort(), "S05", 0.0)
    assert texts == [
        f"{n} window(s) ({10 * n} s) with more than max_missing=0.5 of their values missing "
        f"were left out: subject 'S05' {n} window(s) ({10 * n} s; missing: 'acc_x' "
        f"{10 * n} s, 'acc_y' {10 * n} s); raise max_missing to keep them (missing values "
        "are never filled in)",
        f"1 subject(s) have no window of 200 samples left and are dropped: 'S05' (its {n} "
        "window(s) had more than max_missing=0.5 of their values missing); to keep them, "
        "raise max_missing; strict=True stops with an error instead",
    ]
    assert "S05" not in set(ws.groups) and ws.dropped["subjects"] == ["S05"]
    assert "1 subject(s) dropped without any window: 'S05'" in str(DataSummary.of(ws))
    # strict: refused; strict with drop_short: dropped
    with pytest.raises(InputError, match=r"in channel\(s\) \['acc_x', 'acc_y'\]"):
        make_windows(df, window="10s", strict=True)


def test_a_short_subject_is_dropped_or_refused_when_strict():
    df = cohort()
    df = df[~((df["subject"] == "S06") & (df["time"] >= 8.0))]  # 8 s: no 10-s window
    ws, texts = caught(make_windows, df, window="10s")
    assert texts == [
        "1 subject(s) have no window of 200 samples left and are dropped: 'S06' (longest "
        "usable part 160 samples); to keep them, use a shorter window; strict=True stops "
        "with an error instead"
    ]
    with pytest.raises(InputError, match=r"use a shorter window or drop_short=True$"):
        make_windows(df, window="10s", strict=True)
    ws, texts = caught(make_windows, df, window="10s", strict=True, drop_short=True)
    assert "S06" not in set(ws.groups) and texts[0].endswith("drop_short=True — dropped")
    with pytest.raises(InputError, match="no complete window of 1400 samples within one label"):
        make_windows(df, window="70s")  # no subject has one: nothing is left


# --------------------------------------------------------------- rounded clocks


def rounded_clock(rate: float = 64.0, seconds: float = 50.0, decimals: int = 3) -> pd.DataFrame:
    n = int(rate * seconds)
    t = np.round(np.arange(n) / rate, decimals)  # 15 or 16 ms steps at 64 Hz
    return pd.DataFrame(
        {"subject": np.repeat(["a", "b"], n), "time": np.tile(t, 2), "x": np.sin(np.arange(2 * n)),
         "label": np.repeat(["u", "v"], n)}
    )  # fmt: skip


def test_a_clock_rounded_to_milliseconds_keeps_its_rate():
    df = rounded_clock()
    assert set(np.round(np.diff(df["time"][:200]), 6)) == {0.015, 0.016}
    report = check_timing(df)
    assert report.regular and report.median_fs == 64.0
    assert report.rounded_to == pytest.approx(0.001)
    assert str(report) == (
        "regular: 2 recording(s) at 64 Hz (time steps rounded to 0.001 s; the rate is "
        "1 / mean step)"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # not resampled, no warning
        ws = make_windows(df, window="2s")
    assert ws.fs == 64.0 and ws.X.shape[2] == 128
    assert ws.fs_source == (
        "time column 'time', mean step 0.015625 s (its times are rounded to 0.001 s)"
    )
    np.testing.assert_array_equal(ws.X[0, 0], np.sin(np.arange(128)).astype(np.float32))
    kept = make_windows(df, window="2s", regularize=False)  # rows as they are, same rate
    assert kept.fs == 64.0 and kept.X.shape == ws.X.shape


def test_true_jitter_on_a_rounded_clock_is_still_irregular():
    rng = np.random.default_rng(0)
    t = np.round(np.cumsum(rng.uniform(0.013, 0.019, 3000)), 3)  # steps of 13 to 19 ms
    report = check_timing(pd.DataFrame({"subject": "a", "time": t, "x": 0.0}))
    assert not report.regular and report.jittery and report.rounded_to == 0.0
    # three step values one unit apart are not rounding alone either
    t = np.cumsum(np.tile([0.015, 0.016, 0.017], 1000))
    assert check_timing(pd.DataFrame({"subject": "a", "time": t, "x": 0.0})).jittery
