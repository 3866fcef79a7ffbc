"""Augmentation of fine-tuning batches, label smoothing and the step floor."""

import numpy as np
import pytest
import torch
from conftest import FAST

import medspt.training as training
from medspt import SPTClassifier
from medspt.augment import AUGMENTATIONS, augment, check_augment
from medspt.errors import InputError


def test_check_augment_accepts_names_lists_and_strings():
    assert check_augment(None) == ()
    assert check_augment("jitter, scale") == ("jitter", "scale")
    assert check_augment(["scale", "scale", "channel_dropout"]) == ("scale", "channel_dropout")
    with pytest.raises(InputError, match=r"unknown augmentation\(s\) \['mixup'\]"):
        check_augment(["jitter", "mixup"])
    with pytest.raises(InputError, match="augment must be None"):
        check_augment(3)


def test_augmentations_perturb_values_and_keep_missing_ones():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(256, 4, 32, generator=g)
    x[0, 1, :5] = float("nan")
    scaled = augment(x, ["scale"], torch.Generator().manual_seed(1))
    ratio = scaled / x  # one factor per window and channel
    spread = ratio[1:].std(dim=2)  # window 0 has missing values
    assert float(spread.max()) < 1e-4
    assert float(ratio[:, :, 10].std()) == pytest.approx(0.1, rel=0.2)
    jit = augment(x, ["jitter"], torch.Generator().manual_seed(1)) - x
    assert float(jit[~torch.isnan(jit)].std()) == pytest.approx(0.03, rel=0.1)
    assert torch.isnan(augment(x, AUGMENTATIONS, g)[0, 1, :5]).all()
    again = augment(x, AUGMENTATIONS, torch.Generator().manual_seed(5))
    torch.testing.assert_close(
        again, augment(x, AUGMENTATIONS, torch.Generator().manual_seed(5)), equal_nan=True
    )
    assert augment(x, (), g) is x


def test_channel_dropout_hides_whole_channels_but_never_all():
    x = torch.ones(4000, 3, 8)
    out = augment(x, ["channel_dropout"], torch.Generator().manual_seed(0))
    gone = torch.isnan(out).all(dim=2)  # (B, C)
    assert bool((torch.isnan(out).any(dim=2) == gone).all())
    assert not bool(gone.all(dim=1).any())
    assert float(gone.float().mean()) == pytest.approx(0.1, abs=0.02)
    one = augment(torch.ones(50, 1, 8), ["channel_dropout"], torch.Generator().manual_seed(0))
    assert not bool(torch.isnan(one).any())  # a single channel is never dropped


def test_augmentation_never_reaches_validation_or_prediction(arrays, monkeypatch):
    X, y, groups = arrays
    seen = []

    def spy(xb, kinds, gen):
        seen.append(len(xb))
        return augment(xb, kinds, gen)

    monkeypatch.setattr(training, "augment", spy)
    clf = SPTClassifier(**FAST, pretrain=False, augment="jitter,scale").fit(X, y, groups)
    n_fit = clf.n_train_windows_
    # every fine-tuning batch, and nothing else: the validation windows are never augmented
    assert sum(seen) == n_fit * len(clf.history_["finetune"])
    seen.clear()
    p1, p2 = clf.predict_proba(X), clf.predict_proba(X)
    assert not seen
    np.testing.assert_array_equal(p1, p2)


def test_a_small_dataset_gets_the_step_floor(arrays):
    X, y, groups = arrays  # 80 windows: 64 for training, one batch of 64 per epoch
    params = dict(FAST, batch_size=64, epochs=3, pretrain_epochs=2)
    base = SPTClassifier(**params, val_size=0).fit(X, y, groups)
    assert sum(r["steps"] for r in base.history_["finetune"]) == 2 * 3  # 80 windows, 2/epoch
    floor = SPTClassifier(**params, val_size=0, min_steps=50).fit(X, y, groups)
    assert sum(r["steps"] for r in floor.history_["finetune"]) >= 50
    assert sum(r["steps"] for r in floor.history_["pretrain"]) >= 50
    assert len(floor.history_["finetune"]) == 25  # ceil(50 / 2) epochs
    with pytest.raises(InputError, match="min_steps must be an integer >= 0"):
        SPTClassifier(**FAST, min_steps=-1).fit(X, y, groups)


def test_label_smoothing_is_checked_and_softens_the_training_loss(arrays):
    X, y, groups = arrays
    with pytest.raises(InputError, match=r"label_smoothing must lie in \[0, 1\)"):
        SPTClassifier(**FAST, label_smoothing=1.0).fit(X, y, groups)
    params = dict(FAST, pretrain=False, epochs=6)
    hard = SPTClassifier(**params).fit(X, y, groups)
    soft = SPTClassifier(**params, label_smoothing=0.3).fit(X, y, groups)
    # a smoothed target keeps the training loss away from 0
    assert soft.history_["finetune"][-1]["train_loss"] > hard.history_["finetune"][-1]["train_loss"]
