"""Property-based tests of the DataFrame -> windows path: random lengths, rates, NaN
patterns and label changes never give a window that straddles a label change, crosses
subjects or recordings, or counts padding as data."""

import warnings

import numpy as np
import pandas as pd
import torch
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from medspt.core.errors import InputError
from medspt.data.timing import regularize
from medspt.data.windowset import make_windows
from medspt.nn.model import ModelConfig, SPTTransformer

SETTINGS = settings(
    max_examples=60, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@st.composite
def long_frames(draw):
    """A long frame: 1-3 subjects x 1-2 recordings of 1-60 samples, 1-3 channels, a
    rate, label runs of random lengths and random NaNs."""
    fs = draw(st.sampled_from([1.0, 8.0, 20.0, 100.0]))
    n_ch = draw(st.integers(1, 3))
    nan_p = draw(st.sampled_from([0.0, 0.05, 0.3]))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    frames = []
    for s in range(draw(st.integers(1, 3))):
        for r in range(draw(st.integers(1, 2))):
            n = draw(st.integers(1, 60))
            # label runs: change points anywhere
            cuts = (
                sorted(
                    rng.choice(np.arange(1, n), size=min(n - 1, rng.integers(0, 4)), replace=False)
                )
                if n > 1
                else []
            )
            labels = np.zeros(n, dtype=int)
            for c in cuts:
                labels[c:] = rng.integers(0, 3)
            vals = rng.normal(size=(n, n_ch))
            vals[rng.random((n, n_ch)) < nan_p] = np.nan
            d = pd.DataFrame(vals, columns=[f"c{i}" for i in range(n_ch)])
            d["subject"], d["recording"] = f"s{s}", f"r{r}"
            d["time"] = np.arange(n) / fs
            d["label"] = np.array(["x", "y", "z"])[labels]
            frames.append(d)
    df = pd.concat(frames, ignore_index=True)
    # shuffle the rows of the whole frame: order must come from subject/recording/time
    return df.sample(frac=1.0, random_state=seed).reset_index(drop=True), fs


def _recordings(df):
    return {
        k: g.sort_values("time").reset_index(drop=True)
        for k, g in df.groupby(["subject", "recording"])
    }


def _pieces(empty: np.ndarray, win: int) -> list[tuple[int, int]]:
    """(start, stop) of the stretches between runs of at least ``win`` rows without any
    value, where a recording is split (each stretch gets its own window grid)."""
    pieces, start, k = [], 0, 0
    while k < len(empty):
        if empty[k]:
            stop = k
            while stop < len(empty) and empty[stop]:
                stop += 1
            if stop - k >= win:
                pieces.append((start, k))
                start = stop
            k = stop
        else:
            k += 1
    return pieces + [(start, len(empty))]


@SETTINGS
@given(long_frames(), st.integers(1, 20), st.integers(1, 20), st.sampled_from([0.0, 0.5, 1.0]))
def test_windows_never_straddle_labels_subjects_or_recordings(data, win, step, max_missing):
    df, fs = data
    chans = [c for c in df.columns if c.startswith("c")]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ws = make_windows(df, window=win, stride=step, drop_short=True, max_missing=max_missing)
    except InputError as e:  # refusals must be for a reason the data really has
        msg = str(e)
        if "entirely missing" in msg:
            assert df[chans].isna().all().any()
        else:
            assert "no complete window" in msg, msg
        return
    recs = _recordings(df)
    expected = 0
    for g in recs.values():
        vals, lab = g[chans].to_numpy(np.float32), g["label"].to_numpy()
        for a, b in _pieces(np.isnan(vals).all(axis=1), win):
            for start in range(a, b - win + 1, step):
                part = vals[start : start + win]
                pure = len(set(lab[start : start + win])) == 1
                if pure and np.isnan(part).mean() <= max_missing:
                    expected += 1
    assert len(ws) == expected  # every eligible window, nothing else
    for i, m in ws.meta.iterrows():
        g = recs[(m["subject"], m["recording"])]
        assert 0 <= m["start"] and m["stop"] == m["start"] + win and m["stop"] <= len(g)
        seg = g.iloc[m["start"] : m["stop"]]
        assert seg["label"].nunique() == 1  # never straddles a label change
        assert ws.labels[i] == seg["label"].iloc[0]
        assert ws.groups[i] == m["subject"]  # never crosses subjects
        # exactly the recording's samples (NaN where they were NaN): nothing from another
        # recording, no zero-filling
        np.testing.assert_array_equal(ws.X[i], seg[chans].to_numpy(np.float32).T)
        assert np.isnan(ws.X[i]).mean() <= max_missing


@SETTINGS
@given(long_frames(), st.sampled_from([1, 2, 4]))
def test_whole_cases_are_padded_and_padding_is_never_data(data, patch_len):
    df, fs = data
    df = df.drop(columns="label")  # one case per recording needs a constant label
    df["label"] = df["subject"]
    chans = [c for c in df.columns if c.startswith("c")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ws = make_windows(df, window=None, max_missing=1.0)
        except InputError as e:
            if "entirely missing" in str(e):
                assert df[chans].isna().all().any()
            else:
                assert "no recording is left" in str(e)
            return
    recs = _recordings(df)
    lengths = {k: len(g) for k, g in recs.items()}
    T = max(lengths.values())
    assert ws.X.shape[2] == T
    model = SPTTransformer(
        ModelConfig(n_channels=len(chans), n_steps=T, n_classes=2, patch_len=patch_len)
    )
    pad = model.token_padding(torch.from_numpy(ws.X)).numpy()
    for i, m in ws.meta.iterrows():
        g = recs[(m["subject"], m["recording"])]
        n = len(g)
        assert m["stop"] == n
        np.testing.assert_array_equal(ws.X[i, :, :n], g[chans].to_numpy(np.float32).T)
        assert np.isnan(ws.X[i, :, n:]).all()  # padding holds no values
        # a token is padding iff all its steps lie past the last observed step
        observed = np.flatnonzero(~np.isnan(ws.X[i]).all(0))
        if len(observed) == 0:
            assert not pad[i].any()
            continue
        last = observed[-1]
        tokens_needed = last // patch_len + 1
        assert not pad[i, :tokens_needed].any() and pad[i, tokens_needed:].all()
        assert tokens_needed >= -(-n // patch_len) or np.isnan(ws.X[i, :, last + 1 : n]).all()


@SETTINGS
@given(
    st.integers(0, 2**16),
    st.sampled_from([10.0, 50.0]),
    st.floats(0.0, 0.4),
    st.integers(0, 3),
)
def test_regularize_never_interpolates_across_a_gap(seed, rate, jitter, n_gaps):
    rng = np.random.default_rng(seed)
    step = 1.0 / rate
    t = np.cumsum(rng.uniform(step * (1 - jitter), step * (1 + jitter), 200))
    for _ in range(n_gaps):  # holes of 5-20 steps
        at = rng.integers(20, 180)
        t[at:] += rng.integers(5, 20) * step
    df = pd.DataFrame({"subject": "a", "time": t, "x": np.sin(t)})
    fs = rate
    out = regularize(df, fs)
    grid = out["time"].to_numpy()
    assert np.allclose(np.diff(grid), 1.0 / fs)
    max_gap = 3.0 / fs
    for g, v in zip(grid, out["x"]):
        if np.isnan(v):
            continue
        after = np.searchsorted(t, g)
        if after < len(t) and np.isclose(t[after], g):
            continue
        if after > 0 and np.isclose(t[after - 1], g):  # on a sample, up to rounding
            continue
        assume(0 < after < len(t))
        assert t[after] - t[after - 1] <= max_gap + 1e-9  # filled only between close samples
