"""Pretraining shows whether it learned (issue 60, item 1).

Real recordings hold channels that barely move inside a window: values held over from a
slower rate (SpO2 in whole percent, once a second), levels that step now and then, sensors
stuck at one value. Instance normalization must not blow a step inside such a window up
to hundreds; the reconstruction loss is reported relative to predicting each window's
visible mean (1.0 = nothing learned), per channel, in the history, the data summary and
the history figure; and ``fit`` warns, naming the channels, when pretraining ends near 1.0.
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from safetensors import safe_open
from safetensors.torch import save_file

import medspt
from medspt import SPTClassifier
from medspt.core.stats import channel_stats
from medspt.evaluation.plots import figure_history
from medspt.nn.masking import make_mask
from medspt.nn.model import INSTANCE_FLOOR, ModelConfig, SPTTransformer
from medspt.nn.training import TrainConfig, pretrain, reconstruction_sums, relative_loss

FS, T = 8, 80  # 8 Hz, windows of 10 s

# small and quick: step masks are learnable within a few epochs on smooth signals
QUICK = dict(
    d_model=16, n_heads=2, depth=1, patch_len=8, epochs=1, batch_size=16, lr=3e-3,
    min_steps=0, n_estimators=1, mask_unit="step", mean_span=3, random_state=0,
)  # fmt: skip


def held_over(rng: np.random.Generator, seconds: int) -> np.ndarray:
    """SpO2-like: a slow walk in whole percent, recorded once a second and held over each
    second at 8 Hz (constant inside about half of the 10-s windows)."""
    return np.repeat(np.round(97 + np.cumsum(rng.normal(0, 0.15, seconds))), FS)


def step_like(rng: np.random.Generator, n: int) -> np.ndarray:
    """A level that jumps at random times, about every 20 s."""
    out = np.zeros(n)
    for j in np.cumsum(rng.exponential(20 * FS, n // (20 * FS) + 10)).astype(int):
        out[j:] += rng.normal()
    return out


def recordings(n_subjects: int = 8, seconds: int = 160, noise: bool = True, seed: int = 0):
    """One recording per subject at 8 Hz: two smooth sines, a constant, a held-over and
    (with ``noise``) a white-noise channel; two classes of subjects."""
    rng = np.random.default_rng(seed)
    n = seconds * FS
    t = np.arange(n) / FS
    frames = []
    for s in range(n_subjects):
        f = rng.uniform(0.2, 0.5)
        cols = {
            "subject": f"S{s}",
            "time": t,
            "label": "a" if s % 2 else "b",
            "sine": np.sin(2 * np.pi * f * t + rng.uniform(0, 6)),
            "sine2": np.cos(2 * np.pi * 0.7 * f * t + rng.uniform(0, 6)),
            "constant": np.full(n, 37.0),
            "held": held_over(rng, seconds),
        }
        if noise:
            cols["noise"] = rng.normal(size=n)
        frames.append(pd.DataFrame(cols))
    return pd.concat(frames, ignore_index=True)


def windows(**kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "constant ... carries no information"
        return medspt.make_windows(recordings(**kw), window="10s")


def fit_recording(ws, **kw) -> tuple[SPTClassifier, list[str]]:
    """Fit and return the messages of the pretraining warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf = SPTClassifier(**{**QUICK, **kw}).fit(ws)
    return clf, [str(w.message) for w in caught if "pretraining did not learn" in str(w.message)]


def _model(floor: float | None = None, **kw) -> SPTTransformer:
    torch.manual_seed(0)
    cfg = dict(n_channels=3, n_steps=T, n_classes=2, d_model=16, n_heads=2, instance_norm=True)
    if floor is not None:
        cfg["instance_floor"] = floor
    return SPTTransformer(ModelConfig(**{**cfg, **kw})).eval()


# ------------------------------------------------------------------ (a) bounded values


def test_instance_normalization_stays_bounded_on_constant_step_and_held_over_windows():
    rng = np.random.default_rng(0)
    seconds = 600
    raw = np.stack(
        [held_over(rng, seconds), step_like(rng, seconds * FS), np.full(seconds * FS, 37.0)]
    )
    X = raw.reshape(3, -1, T).transpose(1, 0, 2).astype(np.float32)
    mean, std = channel_stats(X)  # the model's input: standardized by the training channels
    X = torch.from_numpy((X - mean[:, None]) / std[:, None])
    flat = (X.std(-1) == 0).float().mean(0)
    assert 0.3 < flat[0] < 0.7 and 0.3 < flat[1] < 0.9 and flat[2] == 1  # the hard case
    hidden = make_mask(
        tuple(X.shape), "span", ratio=0.4, mean_span=3, token_len=8,
        generator=torch.Generator().manual_seed(0),
    )  # fmt: skip
    assert _model().config.instance_floor == INSTANCE_FLOOR == 0.1  # the default
    out = _model().instance_normalize(X, hidden)
    assert torch.isfinite(out).all()
    assert float(out.abs().max()) < 50
    assert float(out[:, 2].abs().max()) == 0.0  # a constant stays 0, whatever the floor
    # without the floor a hidden step inside a flat window becomes a value of hundreds
    old = _model(floor=0.0).instance_normalize(X, hidden)
    assert float(old[:, :2].abs().max()) > 100
    # windows that move as much as the channel does keep their scale: the floor adds 0.01
    # to a variance of about 1
    moving = torch.randn(16, 3, T, generator=torch.Generator().manual_seed(1))
    floored, plain = _model().instance_normalize(moving), _model(0.0).instance_normalize(moving)
    ratio = floored.std(-1) / plain.std(-1)
    assert 0.99 < float(ratio.min()) <= float(ratio.max()) < 1


def test_the_floor_is_a_checked_model_setting_and_the_stats_head_ignores_it():
    with pytest.raises(ValueError, match="instance_floor"):
        ModelConfig(n_channels=1, n_steps=8, n_classes=2, instance_floor=-0.1).validate()
    x = torch.full((2, 3, T), 2.0)
    x[:, 0] += torch.randn(2, T)
    # the window-statistics head's log-std feature is the same with and without the floor
    _, std = SPTTransformer.visible_stats(x)
    assert float(std[0, 1, 0]) == pytest.approx(1e-5**0.5)


# ------------------------------------------------------------------ (b) relative to 1.0


def test_predicting_the_visible_mean_scores_exactly_one():
    torch.manual_seed(0)
    target = torch.randn(6, 3, 40) * torch.tensor([1.0, 5.0, 0.0])[:, None] + 3.0  # ch 2 flat
    target[0, 0, :4] = float("nan")  # missing values never count
    hidden = torch.rand(6, 3, 40) < 0.4
    mean, _ = SPTTransformer.visible_stats(target, hidden)
    sums = reconstruction_sums(mean.expand_as(target), target, hidden)
    pooled, channels = relative_loss(sums)
    assert channels[:2] == [1.0, 1.0] and pooled == 1.0
    assert np.isnan(channels[2])  # constant wherever hidden: no baseline to beat
    perfect, per = relative_loss(reconstruction_sums(target.nan_to_num(), target, hidden))
    assert perfect == 0.0 and per[:2] == [0.0, 0.0]
    # twice the visible mean's error on one channel: 4 times its baseline
    worse = mean.expand_as(target) + 2 * (mean.expand_as(target) - target.nan_to_num())
    assert relative_loss(reconstruction_sums(worse, target, hidden))[1][1] == pytest.approx(9.0)


def test_pretrain_reports_the_loss_relative_to_the_visible_mean():
    ws = windows()
    X = torch.from_numpy(np.nan_to_num(ws.X))
    X = (X - X.mean((0, 2), keepdim=True)) / X.std((0, 2), keepdim=True).clamp_min(1e-6)
    model = _model(n_channels=5)
    with torch.no_grad():  # a model that predicts 0, the visible mean after normalization
        model.recon_head.weight.zero_()
        model.recon_head.bias.zero_()
    cfg = TrainConfig(epochs=2, batch_size=32, lr=0.0, verbose=False)
    hist, _ = pretrain(model, X[:96], X_val=X[96:], masking="span", mask_ratio=0.4, config=cfg)
    for row in hist:
        assert row["val_relative"] == pytest.approx(1.0, abs=1e-5)
        assert row["train_relative"] == pytest.approx(1.0, abs=1e-5)
        assert len(row["val_relative_channels"]) == 5
        assert np.isnan(row["val_relative_channels"][2])  # the constant channel
        others = [v for i, v in enumerate(row["val_relative_channels"]) if i != 2]
        assert others == pytest.approx([1.0] * 4, abs=1e-5)
        assert row["val_loss"] > 0  # the masked MSE is still there, as it was


# ------------------------------------------------------------------ (c) the warning


def test_fit_warns_naming_the_channel_that_did_not_learn():
    ws = windows(noise=True)
    clf, messages = fit_recording(ws, pretrain_epochs=8)
    assert len(messages) == 1
    (message,) = messages
    assert re.match(
        r"pretraining did not learn to reconstruct noise: its loss is (0\.9[6-9]|1\.\d\d) ", message
    )
    assert "of predicting each window's visible mean" in message
    assert "held over from a slower sampling rate" in message
    assert 'masking="channel"' in message and "channels=[...]" in message
    for learned in ("sine", "sine2", "held", "constant"):
        assert f"reconstruct {learned}" not in message and f" {learned} and" not in message
    assert list(clf.pretrain_relative_) == list(ws.channels)
    rel = clf.pretrain_relative_
    assert rel["noise"] > 0.95 and rel["sine2"] < 0.95 and np.isnan(rel["constant"])
    kept = clf.history_["pretrain"][clf.best_epoch_["pretrain"] - 1]
    assert kept["val_relative_channels"][-1] == rel["noise"]
    assert f"noise {rel['noise']:.2f} ← did not learn" in str(clf.data_summary_)
    assert "pretraining: reconstruction loss" in str(clf.data_summary_)
    assert "constant –" in str(clf.data_summary_)


def test_no_warning_when_every_channel_learned():
    ws = windows(noise=False)
    clf, messages = fit_recording(ws, pretrain_epochs=20)
    assert messages == []
    values = [v for v in clf.pretrain_relative_.values() if not np.isnan(v)]
    assert len(values) == 3 and max(values) < 0.9
    line = str(clf.data_summary_).splitlines()[-1]
    assert line.startswith("pretraining: reconstruction loss 0.") and "did not learn" not in line


def test_an_ensemble_warns_once_with_the_mean_of_its_members():
    ws = windows(noise=True)
    clf, messages = fit_recording(ws, pretrain_epochs=3, n_estimators=3)
    assert len(messages) == 1 and "the mean of 3 ensemble members" in messages[0]
    assert "mean of 3 members" in str(clf.data_summary_)
    # each member pretrained on its own and reports its own relative losses
    assert len({h["pretrain"][0]["val_relative"] for h in clf.member_histories_}) == 3


def test_without_validation_subjects_the_training_batches_tell():
    ws = windows(noise=True)
    clf, messages = fit_recording(ws, pretrain_epochs=4, val_size=0)
    assert len(messages) == 1 and "on the training windows" in messages[0]
    assert "val_relative" not in clf.history_["pretrain"][0]
    assert clf.pretrain_relative_["noise"] > 0.95


def test_no_pretraining_no_line_and_no_value():
    ws = windows(noise=True)
    clf, messages = fit_recording(ws, pretrain=False)
    assert messages == [] and clf.pretrain_relative_ is None
    assert "pretraining:" not in str(clf.data_summary_)


# ------------------------------------------------------------------ figure and file


def test_history_figure_shows_the_reference_line_and_loads_back(tmp_path):
    ws = windows(noise=True)
    clf, _ = fit_recording(ws, pretrain_epochs=3)
    ax = figure_history(clf).axes[0]
    labels = {line.get_label(): line for line in ax.get_lines()}
    assert set(ws.channels) - {"constant"} <= set(labels)
    assert "constant (nothing to predict)" in labels
    reference = labels["visible mean (no learning)"]
    assert list(reference.get_ydata()) == [1.0, 1.0] and reference.get_linestyle() == "--"
    assert ax.get_ylabel() == "loss / visible-mean baseline"
    clf.save(tmp_path / "m.safetensors")
    back = medspt.load(tmp_path / "m.safetensors")
    assert np.isnan(back.pretrain_relative_["constant"])
    assert back.pretrain_relative_["noise"] == clf.pretrain_relative_["noise"]
    assert str(back.data_summary_) == str(clf.data_summary_)
    figure_history(back)  # None in place of NaN after JSON


def test_history_figure_of_a_model_saved_before_relative_losses():
    old = medspt.load(Path(__file__).parent / "data" / "fixture_model.safetensors")
    ax = figure_history(old).axes[0]
    assert ax.get_ylabel() == "masked MSE"
    assert "visible mean (no learning)" not in {ln.get_label() for ln in ax.get_lines()}
    assert old.pretrain_relative_ is None


# ------------------------------------------------------------------ (d) old model files


def _without_floor(src, dst) -> None:
    """Rewrite model file ``src`` as a file from before the floor: no ``instance_floor``."""
    with safe_open(str(src), framework="pt") as f:
        meta = json.loads(f.metadata()["medspt"])
        state = {k: f.get_tensor(k) for k in f.keys()}
    del meta["model_config"]["instance_floor"]
    save_file(state, str(dst), metadata={"medspt": json.dumps(meta)})


def test_a_config_without_the_floor_loads_with_floor_zero_and_predicts_as_before(tmp_path):
    cfg = _model().config.to_dict()
    del cfg["instance_floor"]
    assert ModelConfig.from_dict(cfg).instance_floor == 0.0
    assert ModelConfig.from_dict(_model().config.to_dict()).instance_floor == 0.1

    ws = windows(noise=False)
    clf, _ = fit_recording(ws, pretrain_epochs=2)
    clf.save(tmp_path / "new.safetensors")
    _without_floor(tmp_path / "new.safetensors", tmp_path / "old.safetensors")
    old = medspt.load(tmp_path / "old.safetensors")
    assert old.model_.config.instance_floor == 0.0
    # the old file's model is the same weights without the floor, as it was trained
    clf.model_.config.instance_floor = 0.0
    np.testing.assert_array_equal(old.predict_proba(ws.X), clf.predict_proba(ws.X))
    clf.model_.config.instance_floor = 0.1
    assert np.abs(old.predict_proba(ws.X) - clf.predict_proba(ws.X)).max() > 1e-4
    # and the old code's arithmetic: sqrt(var + 1e-5)
    x = torch.from_numpy(np.nan_to_num(ws.X[:4, :3]))
    hidden = torch.zeros_like(x, dtype=torch.bool)
    m = x.mean(-1, keepdim=True)
    expected = (x - m) / torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + 1e-5)
    got = _model(floor=0.0).instance_normalize(x, hidden)
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-4)


def test_evaluate_rows_say_whether_pretraining_learned():
    import medspt
    from medspt.data.synthetic import make_demo_frame

    res = medspt.evaluate(
        make_demo_frame(n_subjects=6), window="4s", cv=2, depths=(1,), scratch_long=False,
        baselines=(), probes=False, verbose=False, d_model=8, n_heads=2, epochs=1,
        pretrain_epochs=2, min_steps=0, n_estimators=1,
    )  # fmt: skip
    spt, scratch = res[res["config"] == "spt-span"], res[res["config"] == "scratch"]
    assert spt["pretrain_relative"].between(0.0, 2.0).all()
    assert scratch["pretrain_relative"].isna().all() and (scratch["not_learned"] == "").all()
    # a channel is listed exactly when its kept-epoch loss is above 0.95 of the baseline
    for names in spt["not_learned"]:
        assert set(names.split()) <= {"acc_x", "acc_y", "emg"}
