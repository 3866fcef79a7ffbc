"""Filtering, resampling and EMG envelopes (medspt.data.preprocess)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from medspt.core.errors import InputError
from medspt.data.preprocess import (
    DEFAULTS,
    emg_envelope,
    filter_array,
    filter_frame,
    resample_array,
    resample_frame,
)


def amplitude(y: np.ndarray, t: np.ndarray, f: float) -> float:
    """Amplitude of the f-Hz component of y (least-squares projection)."""
    s, c = np.sin(2 * np.pi * f * t), np.cos(2 * np.pi * f * t)
    return 2 * float(np.hypot(np.mean(y * s), np.mean(y * c)))


def frame(t: np.ndarray, subject="s1", recording="r1", **channels) -> pd.DataFrame:
    return pd.DataFrame(
        {"subject": subject, "recording": recording, "time": t, "label": "a", **channels}
    )


FS = 200.0
T = np.arange(int(30 * FS)) / FS  # 30 s
INNER = slice(400, -400)  # 2 s away from the edges


# ------------------------------------------------------------------------------ filters


def test_lowpass_removes_high_and_keeps_low():
    x = np.sin(2 * np.pi * 2 * T) + np.sin(2 * np.pi * 40 * T)
    out = filter_frame(frame(T, x=x), ["x"], FS, h_freq=10.0)
    y = out["x"].to_numpy()
    assert amplitude(y[INNER], T[INNER], 2.0) == pytest.approx(1.0, abs=0.01)
    assert amplitude(y[INNER], T[INNER], 40.0) < 0.005
    # zero phase: the 2 Hz sine comes out where it went in
    assert np.max(np.abs(y[INNER] - np.sin(2 * np.pi * 2 * T[INNER]))) < 0.02


def test_highpass_bandpass_and_notch():
    x = 3.0 + np.sin(2 * np.pi * 0.05 * T) + np.sin(2 * np.pi * 10 * T)
    y = filter_array(x, FS, l_freq=1.0)
    assert abs(np.mean(y[INNER])) < 0.02
    assert amplitude(y[INNER], T[INNER], 10.0) == pytest.approx(1.0, abs=0.01)
    assert amplitude(y[INNER], T[INNER], 0.05) < 0.05

    z = x + np.sin(2 * np.pi * 60 * T)
    y = filter_array(z, FS, l_freq=5.0, h_freq=20.0)
    assert amplitude(y[INNER], T[INNER], 10.0) == pytest.approx(1.0, abs=0.01)
    assert amplitude(y[INNER], T[INNER], 60.0) < 0.005
    assert abs(np.mean(y[INNER])) < 0.02

    fs, t = 500.0, np.arange(10_000) / 500.0
    mains = np.sin(2 * np.pi * 10 * t) + np.sin(2 * np.pi * 50 * t)
    mains = mains + 0.5 * np.sin(2 * np.pi * 100 * t)
    for method in ("fir", "iir"):
        y = filter_array(mains, fs, notch=[50.0, 100.0], method=method)
        assert amplitude(y[1000:-1000], t[1000:-1000], 50.0) < 0.02
        assert amplitude(y[1000:-1000], t[1000:-1000], 100.0) < 0.02
        assert amplitude(y[1000:-1000], t[1000:-1000], 10.0) == pytest.approx(1.0, abs=0.01)


def test_filter_array_axis_and_dtype():
    x = np.stack([np.sin(2 * np.pi * 40 * T), np.sin(2 * np.pi * 2 * T)]).astype(np.float32)
    y = filter_array(x.T, FS, h_freq=10.0, axis=0)
    assert y.shape == x.T.shape and y.dtype == np.float32
    assert np.abs(y[INNER, 0]).max() < 0.01
    assert np.abs(y[INNER, 1]).max() == pytest.approx(1.0, abs=0.01)
    assert filter_array(np.arange(500), FS, h_freq=10.0).dtype == np.float64


def test_nyquist_is_checked():
    df = frame(T, x=np.sin(T))
    with pytest.raises(InputError, match=r"h_freq=100 Hz.*Nyquist.*fs=200 Hz"):
        filter_frame(df, ["x"], FS, h_freq=100.0)
    with pytest.raises(InputError, match=r"h_freq=4 Hz.*fs/2 = 4 Hz.*fs=8 Hz"):
        filter_frame(df, ["x"], 8.0, h_freq=4.0)
    with pytest.raises(InputError, match=r"l_freq=150 Hz.*fs=200 Hz"):
        filter_frame(df, ["x"], FS, l_freq=150.0)
    with pytest.raises(InputError, match=r"notch frequency 120 Hz.*fs=200 Hz"):
        filter_frame(df, ["x"], FS, notch=120.0)
    with pytest.raises(InputError, match="l_freq=20 Hz must be below h_freq=10 Hz"):
        filter_frame(df, ["x"], FS, l_freq=20.0, h_freq=10.0)
    with pytest.raises(InputError, match="fs must be a positive"):
        filter_frame(df, ["x"], -1.0, h_freq=1.0)


def test_nan_gaps_are_preserved():
    x = np.sin(2 * np.pi * 2 * T) + np.sin(2 * np.pi * 40 * T)
    clean = filter_frame(frame(T, x=x), ["x"], FS, h_freq=10.0)["x"].to_numpy()
    gappy = x.copy()
    gappy[3000:3020] = np.nan  # a 0.1 s gap
    gappy[10] = np.nan
    df = pd.concat(
        [
            frame(T, recording="r1", x=gappy, y=np.full(len(T), np.nan)),
            frame(T, recording="r2", x=x, y=x),
        ],
        ignore_index=True,
    )
    out = filter_frame(df, ["x", "y"], FS, h_freq=10.0)
    r1, r2 = out[out["recording"] == "r1"], out[out["recording"] == "r2"]
    y = r1["x"].to_numpy()
    assert np.array_equal(np.isnan(y), np.isnan(gappy))  # NaN exactly where it was
    assert r1["y"].isna().all()  # a channel missing in a whole recording stays missing
    assert np.allclose(r2["y"], clean) and np.allclose(r2["x"], clean)
    far = np.r_[400:2700, 3400:5600]  # more than a filter length away from the gaps
    assert np.max(np.abs(y[far] - clean[far])) < 1e-3
    near = np.r_[2950:3000, 3020:3070]
    assert np.isfinite(y[near]).all() and np.max(np.abs(y[near])) < 1.5


def test_no_bleed_across_recordings():
    b = np.sin(2 * np.pi * 1.5 * T)
    step = np.where(T < 15, 0.0, 10.0)  # a big step in the middle of recording A
    a1 = frame(T, recording="A", x=step)
    a2 = frame(T, recording="A", x=np.zeros_like(T))
    rec_b = frame(T, recording="B", x=b)
    with_step = filter_frame(pd.concat([a1, rec_b], ignore_index=True), ["x"], FS, h_freq=5.0)
    without = filter_frame(pd.concat([a2, rec_b], ignore_index=True), ["x"], FS, h_freq=5.0)
    alone = filter_frame(rec_b, ["x"], FS, h_freq=5.0)["x"].to_numpy()
    got_b = with_step.loc[with_step["recording"] == "B", "x"].to_numpy()
    assert np.array_equal(got_b, alone)
    assert np.array_equal(got_b, without.loc[without["recording"] == "B", "x"].to_numpy())
    # and the step was really filtered (smoothed) inside A
    got_a = with_step.loc[with_step["recording"] == "A", "x"].to_numpy()
    assert 0 < got_a[3000] < 10 and got_a[0] == pytest.approx(0, abs=1e-6)


def test_rows_in_any_order_keep_index_and_columns():
    x = np.sin(2 * np.pi * 2 * T) + np.sin(2 * np.pi * 40 * T)
    df = frame(T, x=x.astype(np.float32), n=np.arange(len(T)))
    ref = filter_frame(df, ["x"], None, h_freq=10.0)  # fs inferred from time
    shuffled = df.sample(frac=1.0, random_state=0)
    out = filter_frame(shuffled, ["x"], FS, h_freq=10.0)
    assert list(out.columns) == list(df.columns)
    assert out.index.equals(shuffled.index)
    assert out["x"].dtype == np.float32
    assert np.allclose(out.sort_index()["x"], ref["x"], atol=1e-6)
    assert np.array_equal(out["n"], shuffled["n"])  # untouched columns stay as they were


def test_short_recordings_fall_back_to_iir():
    t = np.arange(60) / FS  # 0.3 s, far shorter than the FIR low-pass (~0.5 s)
    x = np.sin(2 * np.pi * 2 * t) + np.sin(2 * np.pi * 60 * t)
    df = frame(t, x=x)
    with pytest.warns(UserWarning, match="shorter than the FIR filter.*IIR"):
        out = filter_frame(df, ["x"], FS, h_freq=10.0)
    y = out["x"].to_numpy()
    assert amplitude(x, t, 60.0) > 0.9 and amplitude(y, t, 60.0) < 0.05  # 60 Hz is gone
    assert np.max(np.abs(y - np.sin(2 * np.pi * 2 * t))[15:-15]) < 0.1
    with pytest.raises(InputError, match=r"recording subject='s1', recording='r1' has 60 samples"):
        filter_frame(df, ["x"], FS, h_freq=10.0, short="raise")
    long = frame(T, x=np.sin(T))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        filter_frame(long, ["x"], FS, h_freq=10.0)  # no warning when long enough


def test_bad_columns():
    df = frame(T, x=np.sin(T))
    with pytest.raises(InputError, match="'visit'"):
        filter_frame(df, ["x"], FS, h_freq=10.0, by=("subject", "visit"))
    with pytest.raises(InputError, match="'nope'"):
        filter_frame(df, ["nope"], FS, h_freq=10.0)
    out = filter_frame(df.drop(columns="recording"), None, FS, h_freq=10.0)
    assert list(out.columns) == ["subject", "time", "label", "x"]


# ----------------------------------------------------------------------------- resample


def test_resample_frame_anti_aliased_with_labels():
    fs = 1000.0
    t = np.arange(10_000) / fs
    x = np.sin(2 * np.pi * 3 * t) + 0.5 * np.sin(2 * np.pi * 150 * t)
    df = pd.concat(
        [
            frame(t, recording="r1", x=x).assign(label=np.where(t < 5.0, "walk", "stand")),
            frame(t[:5000] + 100.0, recording="r2", x=x[:5000]),
        ],
        ignore_index=True,
    )
    df.attrs["note"] = "kept"
    out = resample_frame(df, ["x"], fs, 200.0)
    r1, r2 = out[out["recording"] == "r1"], out[out["recording"] == "r2"]
    assert (len(r1), len(r2)) == (2000, 1000)
    assert np.allclose(np.diff(r1["time"]), 0.005) and r2["time"].iloc[0] == 100.0
    t1, y1 = r1["time"].to_numpy(), r1["x"].to_numpy()
    inner = slice(20, -20)
    assert np.max(np.abs(y1[inner] - np.sin(2 * np.pi * 3 * t1[inner]))) < 0.01
    assert amplitude(y1[inner], t1[inner], 50.0) < 0.005  # 150 Hz did not alias to 50 Hz
    assert r1["label"].value_counts().to_dict() == {"walk": 1000, "stand": 1000}
    assert r1.loc[r1["time"] < 5.0, "label"].eq("walk").all()
    assert list(out.columns) == list(df.columns)
    assert out.attrs == {"note": "kept"}


def test_resample_keeps_nan_gaps_and_upsamples():
    fs = 100.0
    t = np.arange(2000) / fs
    x = np.sin(2 * np.pi * 1 * t)
    x[500:520] = np.nan  # 0.2 s gap at 5.0-5.2 s
    y = resample_array(x, fs, 200.0)
    t2 = np.arange(len(y)) / 200.0
    assert len(y) == 4000
    gap = np.isnan(y)
    assert gap.any() and np.all((t2[gap] > 4.99) & (t2[gap] < 5.21))
    ok = (np.abs(t2 - 5.1) > 0.3) & (t2 > 0.1) & (t2 < 19.9)  # away from gap and edges
    assert np.max(np.abs(y[ok] - np.sin(2 * np.pi * t2[ok]))) < 0.005
    assert np.array_equal(resample_array(x, fs, fs), x, equal_nan=True)


# ----------------------------------------------------------------------------- envelope


def test_emg_envelope_follows_bursts():
    rng = np.random.default_rng(0)
    fs = 1000.0
    t = np.arange(20_000) / fs
    activation = 0.05 + ((t % 2.0) < 0.8)  # 0.8 s bursts every 2 s
    emg = rng.standard_normal(len(t)) * activation
    env = emg_envelope(emg, fs)
    assert env.shape == emg.shape and env.min() >= 0
    assert np.corrcoef(env, activation)[0, 1] > 0.8
    on, off = env[(t % 2.0 > 0.2) & (t % 2.0 < 0.6)], env[(t % 2.0 > 1.2) & (t % 2.0 < 1.8)]
    assert on.mean() > 10 * off.mean()
    # several channels at once, time on axis 0, and a rate whose Nyquist is below 450 Hz
    two = emg_envelope(np.stack([emg, 2 * emg], axis=1), fs, axis=0)
    assert np.allclose(two[:, 1], 2 * two[:, 0])
    assert np.isfinite(emg_envelope(emg[::2], 500.0)).all()


# ----------------------------------------------------------------------------- defaults


@pytest.mark.parametrize("name", ["gaitpd", "noneeg", "camargo"])
def test_defaults_respect_nyquist_and_run(name):
    d = DEFAULTS[name]
    fs = d["fs"]
    assert d["filter"]["h_freq"] < fs / 2
    t = np.arange(int(120 * fs)) / fs
    out = filter_frame(frame(t, x=np.sin(2 * np.pi * 0.5 * t)), ["x"], fs, **d["filter"])
    assert np.isfinite(out["x"]).all()


def test_camargo_defaults():
    d = DEFAULTS["camargo"]
    assert d["fs"] == 200.0 and d["filter"]["h_freq"] == 25.0
    assert d["emg_envelope"]["band"][1] < d["emg_fs"] / 2
    assert d["emg_envelope"]["lowpass"] < d["fs"] / 2
    assert DEFAULTS["noneeg"]["filter"]["h_freq"] < 4.0
