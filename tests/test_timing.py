"""Irregular timestamps: detection, the report, resampling to a regular grid, and what
make_windows does with them."""

import numpy as np
import pandas as pd
import pytest

from medspt.core.errors import InputError
from medspt.data.timing import check_timing, regularize
from medspt.data.windowset import make_windows


def _signal(t):
    return np.sin(2 * np.pi * 1.5 * t)


def jittered(seed=0, n=3000, gap=(10.0, 11.0), rate=100.0, jitter=0.3, subject="a"):
    rng = np.random.default_rng(seed)
    step = 1.0 / rate
    t = np.cumsum(rng.uniform(step * (1 - jitter), step * (1 + jitter), n))
    if gap is not None:
        t = t[(t < gap[0]) | (t > gap[1])]
    return pd.DataFrame(
        {"subject": subject, "time": t, "x": _signal(t), "y": np.cos(t), "label": "l"}
    )


def regular(rate=50.0, seconds=20.0, subject="b"):
    t = np.arange(int(rate * seconds)) / rate
    return pd.DataFrame(
        {"subject": subject, "time": t, "x": _signal(t), "y": np.cos(t), "label": "l"}
    )


def test_regular_frames_are_reported_regular():
    r = check_timing(pd.concat([regular(subject="a"), regular(subject="b")]))
    assert r.regular and r.median_fs == pytest.approx(50.0)
    assert str(r) == "regular: 2 recording(s) at 50 Hz"
    # a drifting clock (one step in 143 is 1 % short, as in gaitpdb) is still regular
    t = np.arange(5000) * 0.01
    t -= 0.0001 * (np.arange(5000) // 143)
    assert check_timing(pd.DataFrame({"subject": "a", "time": t, "x": 0.0})).regular


def test_jitter_gaps_and_mixed_rates_are_detected_and_named():
    r = check_timing(jittered())
    assert not r.regular and r.jittery and r.has_gaps
    row = r.recordings.iloc[0]
    assert row["gaps"] == 1 and row["longest_gap_s"] == pytest.approx(1.0, abs=0.05)
    assert row["fs"] == pytest.approx(100.0, rel=0.05)
    text = str(r)
    assert "jittered time steps in 1 recording(s)" in text and "1 gap(s)" in text
    mixed = check_timing(pd.concat([regular(50.0, subject="a"), regular(20.0, subject="b")]))
    assert mixed.rates_differ and not mixed.jittery and "rates differ" in str(mixed)
    assert "20–50 Hz" in str(mixed)


def test_regularize_resamples_accurately_and_leaves_gaps_missing():
    df = jittered()
    out = regularize(df, 50.0)
    assert np.allclose(np.diff(out["time"]), 0.02)
    assert out["time"].iloc[0] == df["time"].min()
    gap = out["x"].isna()
    # the 1-s gap (plus the samples next to it) is missing, nothing else
    assert gap.any() and out.loc[gap, "time"].between(9.98, 11.02).all()
    assert 45 <= gap.sum() <= 52
    err = np.abs(out["x"] - _signal(out["time"]))[~gap]
    assert err.max() < 0.02  # linear interpolation of a 1.5 Hz sine at ~100 Hz
    assert (out["label"] == "l").all() and (out["subject"] == "a").all()
    assert list(out.columns) == list(df.columns)


def test_regularize_anti_aliases_when_downsampling():
    t = np.arange(4000) / 200.0
    df = pd.DataFrame(
        {"subject": "a", "time": t, "x": np.sin(2 * np.pi * 2 * t) + np.sin(2 * np.pi * 45 * t)}
    )
    out = regularize(df, 20.0)  # 45 Hz would alias to 5 Hz without the low-pass
    resid = out["x"] - np.sin(2 * np.pi * 2 * out["time"])
    assert np.abs(resid[20:-20]).max() < 0.05


def test_missing_samples_stay_missing_after_regularizing():
    df = regular(rate=40.0)
    df["time"] += np.random.default_rng(1).uniform(-0.004, 0.004, len(df))
    df.loc[100:110, "x"] = np.nan
    out = regularize(df, 40.0)
    lost = out.loc[out["x"].isna(), "time"]
    assert len(lost) >= 9 and lost.between(2.4, 2.8).all()
    assert out["y"].notna().all()  # the other channel is complete


def test_make_windows_warns_and_regularizes_irregular_time():
    df = pd.concat([jittered(subject="a"), jittered(seed=1, subject="b", gap=None)])
    with pytest.warns(UserWarning, match="time column 'time' is irregular.*Resampled every"):
        ws = make_windows(df, window="2s", fs=50.0)
    assert ws.fs == 50.0 and ws.X.shape[1:] == (2, 100)
    assert ws.channels == ["x", "y"]  # time is never a channel
    # windows over the gap carry it as missing values
    assert np.isnan(ws.X).any()
    # regularize=False keeps the rows as they are
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        raw = make_windows(regular(), window=100)
        assert raw.X.shape == (10, 2, 100)


def test_unsorted_time_is_sorted_with_a_warning():
    df = regular()
    shuffled = df.sample(frac=1.0, random_state=0)
    with pytest.warns(UserWarning, match="not in 'time' order; they are sorted by time"):
        ws = make_windows(shuffled, window=100)
    np.testing.assert_allclose(ws.X, make_windows(df, window=100).X)


def test_bad_timing_arguments_are_named():
    with pytest.raises(InputError, match="fs must be a positive sampling rate"):
        regularize(regular(), 0)
    with pytest.raises(InputError, match="fs must be a positive sampling rate"):
        regularize(regular(), -5.0)
    with pytest.raises(InputError, match="max_gap must be a positive"):
        regularize(regular(), 10.0, max_gap=0)
    with pytest.raises(InputError, match="time column 'time' must hold numeric seconds"):
        check_timing(regular().assign(time="0.1"))
    with pytest.raises(InputError, match="no recording has two distinct times"):
        check_timing(regular().iloc[:1])


def test_a_given_rate_the_time_column_contradicts_is_resampled_or_refused():
    slow, fast = regular(50.0), regular(100.0)
    ref = make_windows(slow, window="2s", fs=50.0)
    # new data at 100 Hz cut for a 50 Hz model: resampled to 50 Hz, with a warning
    with pytest.warns(UserWarning, match=r"recorded at 100 Hz \(time column 'time'\), not at "):
        got = make_windows(fast, window="2s", fs=50.0)
    assert got.X.shape == ref.X.shape and got.fs == 50.0
    np.testing.assert_allclose(got.X, ref.X, atol=0.02)
    # upsampling slower data interpolates; no step of a 25 Hz grid counts as a gap
    with pytest.warns(UserWarning, match="recorded at 25 Hz"):
        up = make_windows(regular(25.0), window="2s", fs=100.0)
    full = make_windows(fast, window="2s", fs=100.0)
    assert not np.isnan(up.X).any() and len(up) >= len(full) - 1
    np.testing.assert_allclose(up.X, full.X[: len(up)], atol=0.03)
    # milliseconds given for seconds are refused by name
    ms = slow.assign(time=slow["time"] * 1000)
    with pytest.raises(InputError, match=r"time column 'time' implies 0.05 Hz but fs is 50 Hz"):
        make_windows(ms, window=100, fs=50.0)


def test_predict_resamples_a_frame_recorded_at_another_rate():
    from conftest import FAST

    from medspt.api import fit_spt

    def frame(rate):
        parts = []
        for s, lab in enumerate(["a", "b", "a", "b", "a", "b"]):
            d = regular(rate, seconds=8.0, subject=f"s{s}")
            d["x"] = d["x"] * (1 + s % 2) + 0.1 * s
            parts.append(d.assign(label=lab))
        return pd.concat(parts, ignore_index=True)

    clf = fit_spt(frame(50.0), window="2s", **FAST)
    want = clf.predict_proba(clf.frame_windows(frame(50.0)).X)
    with pytest.warns(UserWarning, match="recorded at 100 Hz .*not at fs=50 Hz"):
        ws = clf.frame_windows(frame(100.0))
    assert ws.X.shape == (len(want), 2, 100)
    np.testing.assert_allclose(clf.predict_proba(ws.X), want, atol=0.05)
