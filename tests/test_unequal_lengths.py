"""Cases of different lengths: padding that the model, the masks and the loss ignore,
and ``window=None`` (one case per recording) through fit_spt and predict."""

import numpy as np
import pandas as pd
import pytest
import torch
from model_pairs import same_weights

from medspt import fit_spt, load
from medspt.core.errors import InputError
from medspt.nn.masking import make_mask
from medspt.nn.training import masked_mse


def _pair(attention, options, pooling, positional, short=40, long=96):
    """Two models with the same weights for windows of `short` and `long` steps."""
    return same_weights(
        short,
        long,
        n_channels=3,
        n_classes=3,
        patch_len=4,
        depth=2,
        dropout=0.0,
        attention=attention,
        attention_options=options,
        pooling=pooling,
        positional=positional,
    )


@pytest.mark.parametrize("pooling", ["mean", "cls"])
@pytest.mark.parametrize("positional", ["learned", "sinusoidal", "alibi"])
@pytest.mark.parametrize(
    "attention,options", [("full", None), ("hierarchical", {"topk": 2, "tile": 4})]
)
def test_padding_leaves_outputs_unchanged(attention, options, pooling, positional):
    if attention == "hierarchical" and positional == "alibi":
        pytest.skip("ALiBi needs full attention")
    short, long = _pair(attention, options, pooling, positional)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(5, 3, 40, generator=g)
    x[1, :, 29:] = float("nan")  # a shorter case inside the batch (partial last patch)
    x[2, :, 7:] = float("nan")
    x[3, 0, 10:20] = float("nan")  # a gap in one channel is missing data, not padding
    padded = torch.full((5, 3, 96), float("nan"))
    padded[:, :, :40] = x
    assert (short(x) - long(padded)).abs().max() < 1e-5
    # token states of the real tokens do not change either
    h_short = short.encode(x)
    h_long, pad = long.encode(padded, return_padding=True)
    n = h_short.shape[1]
    keep = ~pad[:, :n]
    assert (h_short - h_long[:, :n])[keep].abs().max() < 1e-5
    off = int(pooling == "cls")
    assert pad[2, off + 2 :].all() and not pad[2, : off + 2].any()  # 7 steps -> 2 tokens
    assert not pad[3, : off + 10].any() and pad[3, off + 10 :].all()


def test_padding_is_never_masked_or_scored():
    x = torch.randn(8, 2, 60)
    x[:4, :, 25:] = float("nan")
    valid = ~torch.isnan(x)
    for strategy in ("random", "span", "block", "channel"):
        m = make_mask(tuple(x.shape), strategy, ratio=0.4, valid=valid)
        assert not (m & ~valid).any(), strategy
        assert m[valid].float().mean() > 0.05
    hidden = make_mask(tuple(x.shape), "random", ratio=0.5, valid=valid)
    pred = torch.randn_like(x)
    garbage = pred.clone()
    garbage[~valid] = 1e6  # whatever the model predicts on padding is not scored
    assert masked_mse(pred, x, hidden) == masked_mse(garbage, x, hidden)


def vowels_frame(n_speakers=9, cases=12, seed=0, lo=7, hi=29):
    """UEA JapaneseVowels-shaped data: 12 channels, one case per recording, lengths lo-hi;
    the class sets the frequency of a pattern shared by all channels."""
    rng = np.random.default_rng(seed)
    frames = []
    for spk in range(n_speakers):
        for case in range(cases):
            k = case % 3
            n = int(rng.integers(lo, hi + 1))
            t = np.arange(n)[:, None]
            x = np.sin(t * (0.35 + 0.45 * k) + np.arange(12)) + 0.2 * rng.normal(size=(n, 12))
            d = pd.DataFrame(x, columns=[f"ch{i}" for i in range(12)])
            d["subject"], d["recording"], d["label"] = f"s{spk}", f"s{spk}-{case}", f"c{k}"
            frames.append(d)
    return pd.concat(frames, ignore_index=True)


# the floor of the previous default: enough to learn these cases, quick with 1,500
FAST = dict(
    patch_len=2, d_model=16, n_heads=2, depth=1, epochs=25, pretrain_epochs=3, min_steps=600
)


@pytest.fixture(scope="module")
def vowels_model():
    df = vowels_frame()
    return fit_spt(df, window=None, random_state=0, verbose=False, **FAST), df


def test_unequal_length_cases_fit_and_predict_with_window_none(vowels_model, tmp_path):
    clf, df = vowels_model
    lengths = df.groupby("recording").size()
    assert lengths.min() >= 7 and lengths.max() <= 29
    assert clf.n_steps_ == lengths.max()
    assert clf.frame_spec_.window is None and clf.frame_spec_.length == lengths.max()
    test = vowels_frame(n_speakers=3, seed=1)
    pred = clf.predict(test)
    rec = pred.recordings
    assert len(rec) == test["recording"].nunique() and (rec["n_windows"] == 1).all()
    assert (rec["predicted"] == rec["label"]).mean() > 0.6  # chance is 1/3
    # normalization ignores padding and missing values
    ws = clf.frame_windows(df)
    np.testing.assert_allclose(clf.mean_, np.nanmean(ws.X, axis=(0, 2)), rtol=1e-5, atol=1e-6)
    # the model file keeps the rule; a longer case is predicted from sliding windows
    clf.save(tmp_path / "v.safetensors")
    back = load(tmp_path / "v.safetensors")
    np.testing.assert_allclose(
        back.predict(test).recordings.filter(like="proba_").to_numpy(),
        rec.filter(like="proba_").to_numpy(),
        atol=1e-6,
    )
    longer = vowels_frame(n_speakers=1, seed=2, lo=40, hi=40)
    with pytest.warns(UserWarning, match=r"longer than the 29 steps .*\(stride 14\)"):
        got = back.predict(longer).recordings
    assert len(got) == longer["recording"].nunique()
    # 40 steps -> windows at 0 and 11 (flush with the end): their mean probability
    ws = back.frame_windows(longer)
    assert ws.X.shape[2] == 40
    for i in range(2):
        X = ws.X[i : i + 1]
        parts = np.concatenate([X[:, :, s : s + 29] for s in (0, 11)])
        want = back.predict_proba(parts).mean(0)
        np.testing.assert_allclose(got.filter(like="proba_").to_numpy()[i], want, atol=1e-6)


def test_window_none_refuses_label_changes_inside_a_recording():
    df = vowels_frame(n_speakers=2, cases=3)
    first = df.index[df["recording"] == "s0-0"]
    df.loc[first[:3], "label"] = "c2"
    with pytest.raises(InputError, match="label changes inside subject 's0', recording 's0-0'"):
        fit_spt(df, window=None, **FAST)


def test_case_with_too_many_missing_values_is_dropped_with_a_warning():
    df = vowels_frame(n_speakers=3, cases=3)
    chans = [f"ch{i}" for i in range(12)]
    df.loc[df["recording"] == "s1-1", chans[:8]] = np.nan
    from medspt.data.windowset import make_windows

    with pytest.warns(UserWarning, match="recording 's1-1': 67% of its values are missing"):
        ws = make_windows(df, window=None, max_missing=0.5)
    assert "s1-1" not in set(ws.meta["recording"]) and len(ws) == 8


def test_cli_fits_whole_recordings_with_window_none(tmp_path, capsys):
    from medspt.cli.commands import main

    data = tmp_path / "vowels.csv"
    vowels_frame(n_speakers=4, cases=6).to_csv(data, index=False)
    model = tmp_path / "m.safetensors"
    args = ["fit", "--data", str(data), "--window", "none", "--patch-len", "2", "--d-model", "16"]
    args += ["--epochs", "2", "--pretrain-epochs", "1", "--min-steps", "0"]
    assert main(args + ["--out", str(model)]) == 0
    clf = load(model)
    assert clf.frame_spec_.window is None and clf.n_steps_ == clf.frame_spec_.length
    out = tmp_path / "pred.csv"
    assert main(["predict", "--model", str(model), "--data", str(data), "--out", str(out)]) == 0
    rec = pd.read_csv(tmp_path / "pred.recordings.csv")
    assert len(rec) == 24 and (rec["n_windows"] == 1).all()
