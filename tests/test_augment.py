"""Augmentation of fine-tuning batches, label smoothing and the step floor."""

import numpy as np
import pytest
import torch
from conftest import FAST

import medspt.nn.training as training
from medspt import SPTClassifier
from medspt.core.errors import InputError
from medspt.nn.augment import AUGMENTATIONS, MAX_SHIFT, _beta, augment, check_augment, mixup


def test_check_augment_accepts_names_lists_and_strings():
    assert check_augment(None) == ()
    assert check_augment("jitter, scale") == ("jitter", "scale")
    assert check_augment(["scale", "scale", "channel_dropout"]) == ("scale", "channel_dropout")
    assert check_augment("shift,mixup") == ("shift", "mixup")
    with pytest.raises(InputError, match=r"unknown augmentation\(s\) \['cutout'\]"):
        check_augment(["jitter", "cutout"])
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


def test_shift_moves_whole_windows_and_marks_the_vacated_part_missing():
    T = 50
    x = torch.arange(T, dtype=torch.float32).repeat(300, 2, 1)  # (300, 2, 50): value = time
    out = augment(x, ["shift"], torch.Generator().manual_seed(0))
    offsets = set()
    for w in out:
        seen = ~torch.isnan(w[0])
        # one offset per window, the same for both channels; kept values are x moved by it
        d = (torch.arange(T)[seen] - w[0][seen]).unique()
        assert len(d) == 1
        torch.testing.assert_close(w[0], w[1], equal_nan=True)
        offsets.add(int(d))
        assert int((~seen).sum()) == abs(int(d))  # exactly the vacated samples are missing
    k = int(MAX_SHIFT * T)
    assert offsets == set(range(-k, k + 1))  # every offset within 10 % of the length
    short = torch.ones(3, 1, 9)  # 10 % of 9 samples rounds to no shift at all
    assert augment(short, ["shift"], torch.Generator().manual_seed(0)) is short


def test_mixup_blends_pairs_and_their_targets():
    g = torch.Generator().manual_seed(0)
    lam = _beta(20000, torch.Generator().manual_seed(1))
    # Beta(0.4, 0.4): mean 1/2, variance 1 / (4 * (2 * 0.4 + 1)) = 0.139
    assert float(lam.mean()) == pytest.approx(0.5, abs=0.01)
    assert float(lam.var()) == pytest.approx(1 / 7.2, rel=0.05)
    x = torch.randn(64, 3, 16, generator=g)
    y = torch.arange(64) % 4
    mixed, ya, yb, w = mixup(x, y, torch.Generator().manual_seed(2))
    assert bool((w >= 0.5).all()) and bool((w <= 1).all())
    torch.testing.assert_close(ya, y)
    # each window is its own share plus its partner's, and the partner carries label yb
    partner = (mixed - w[:, None, None] * x) / (1 - w[:, None, None]).clamp_min(1e-6)
    for i in torch.nonzero(w < 0.99).flatten().tolist():
        j = int(torch.nonzero((x - partner[i]).abs().amax(dim=(1, 2)) < 1e-3).flatten()[0])
        assert int(yb[i]) == int(y[j])
    assert sorted(yb.tolist()) == sorted(y.tolist())  # a permutation of the batch


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
    floor = SPTClassifier(**dict(params, min_steps=50), val_size=0).fit(X, y, groups)
    assert sum(r["steps"] for r in floor.history_["finetune"]) >= 50
    assert sum(r["steps"] for r in floor.history_["pretrain"]) >= 50
    assert len(floor.history_["finetune"]) == 25  # ceil(50 / 2) epochs
    with pytest.raises(InputError, match="min_steps must be an integer >= 0"):
        SPTClassifier(**dict(FAST, min_steps=-1)).fit(X, y, groups)


def test_label_smoothing_is_checked_and_softens_the_training_loss(arrays):
    X, y, groups = arrays
    with pytest.raises(InputError, match=r"label_smoothing must lie in \[0, 1\)"):
        SPTClassifier(**FAST, label_smoothing=1.0).fit(X, y, groups)
    params = dict(FAST, pretrain=False, epochs=6, normalize=True, augment=None)
    hard = SPTClassifier(**params, label_smoothing=0.0).fit(X, y, groups)
    soft = SPTClassifier(**params, label_smoothing=0.3).fit(X, y, groups)
    # a smoothed target keeps the training loss away from 0
    assert soft.history_["finetune"][-1]["train_loss"] > hard.history_["finetune"][-1]["train_loss"]


def test_mixup_and_shift_train_reproducibly_and_change_the_fit(arrays):
    X, y, groups = arrays
    params = dict(FAST, pretrain=False, epochs=3)
    a = SPTClassifier(**params, augment="shift,mixup").fit(X, y, groups)
    b = SPTClassifier(**params, augment="shift,mixup").fit(X, y, groups)
    plain = SPTClassifier(**params).fit(X, y, groups)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    losses = [r["train_loss"] for r in a.history_["finetune"]]
    assert np.isfinite(losses).all()
    assert losses != [r["train_loss"] for r in plain.history_["finetune"]]


def test_mixup_draws_come_from_the_generator():
    x, y = torch.randn(32, 2, 8), torch.arange(32) % 2
    a = mixup(x, y, torch.Generator().manual_seed(3))
    b = mixup(x, y, torch.Generator().manual_seed(3))
    c = mixup(x, y, torch.Generator().manual_seed(4))
    for u, v in zip(a, b):
        torch.testing.assert_close(u, v)
    assert not torch.equal(a[3], c[3]) and not torch.equal(a[2], c[2])
    one = [float(_beta(1, torch.Generator().manual_seed(s))[0]) for s in range(20)]
    # Beta(0.4, 0.4) piles up at both ends: a float32 draw may round to exactly 0 or 1
    assert all(0 <= v <= 1 for v in one) and len(set(one)) == 20
