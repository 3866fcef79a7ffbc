import numpy as np
import pytest
from conftest import FAST
from sklearn.model_selection import StratifiedGroupKFold, cross_val_score
from sklearn.utils.estimator_checks import parametrize_with_checks

from medspt import SPTClassifier
from medspt.core.splits import validation_split
from medspt.data.windowset import from_arrays


def test_fit_predict_shapes_and_classes(arrays):
    X, y, groups = arrays
    clf = SPTClassifier(**FAST).fit(X, y, groups=groups)
    assert list(clf.classes_) == ["control", "pd"]
    proba = clf.predict_proba(X)
    assert proba.shape == (len(X), 2)
    np.testing.assert_allclose(proba.sum(1), 1.0, atol=1e-6)
    assert set(clf.predict(X)) <= {"control", "pd"}
    assert clf.n_features_in_ == 3 and clf.n_steps_ == 32
    assert len(clf.history_["pretrain"]) >= 1 and len(clf.history_["finetune"]) >= 1
    assert clf.mean_.shape == (3,) and clf.std_.shape == (3,)


def test_same_seed_same_predictions_other_seed_differs(arrays):
    X, y, groups = arrays
    p1 = SPTClassifier(**FAST, random_state=3).fit(X, y, groups=groups).predict_proba(X)
    p2 = SPTClassifier(**FAST, random_state=3).fit(X, y, groups=groups).predict_proba(X)
    p3 = SPTClassifier(**FAST, random_state=4).fit(X, y, groups=groups).predict_proba(X)
    np.testing.assert_array_equal(p1, p2)
    assert not np.allclose(p1, p3)


def test_validation_split_holds_out_whole_subjects(arrays):
    X, y, groups = arrays
    clf = SPTClassifier(**FAST).fit(X, y, groups)
    tr, va = validation_split(y, groups, clf.val_size, clf.random_state)
    assert set(clf.validation_subjects_) == set(groups[va])
    assert len(va) > 0 and not set(groups[tr]) & set(groups[va])
    assert set(y[tr]) == {"control", "pd"}  # both classes left for training


def test_normalization_uses_training_data_only(arrays):
    X, y, groups = arrays
    X = X.copy()
    X[:, 1] = X[:, 1] * 5 + 7
    clf = SPTClassifier(**FAST).fit(X[:40], y[:40], groups=groups[:40])
    np.testing.assert_allclose(clf.mean_[1], np.nanmean(X[:40, 1]), rtol=1e-5)
    np.testing.assert_allclose(clf.std_[1], np.nanstd(X[:40, 1]), rtol=1e-5)


def test_window_normalization_removes_each_windows_offsets(arrays, tmp_path):
    from medspt.estimator.persistence import load, save_model

    X, y, groups = arrays
    X = X.copy()
    X[::4, 2, 3:9] = np.nan  # a gap: its mean comes from the observed steps only
    offsets = np.random.default_rng(0).normal(0, 50, (len(X), 3, 1)).astype(np.float32)
    clf = SPTClassifier(**FAST, normalize="window").fit(X[:40], y[:40], groups=groups[:40])
    centred = X[:40] - np.nanmean(X[:40], axis=2, keepdims=True)
    np.testing.assert_allclose(clf.mean_, 0.0, atol=1e-5)
    np.testing.assert_allclose(clf.std_, np.nanstd(centred, axis=(0, 2)), rtol=1e-5)
    # a per-window, per-channel offset (a subject's baseline) cannot change a prediction
    p = clf.predict_proba(X)
    np.testing.assert_allclose(clf.predict_proba(X + offsets), p, atol=1e-4)
    Xn = clf._normalize(X)
    assert np.array_equal(np.isnan(Xn), np.isnan(X))
    np.testing.assert_allclose(np.nanmean(Xn, axis=2), 0.0, atol=1e-5)
    # channel scaling keeps the levels, so the same offsets do change its predictions
    plain = SPTClassifier(**FAST, normalize=True).fit(X[:40], y[:40], groups=groups[:40])
    assert np.abs(plain.predict_proba(X + offsets) - plain.predict_proba(X)).max() > 0.01
    save_model(clf, tmp_path / "m.safetensors")
    back = load(tmp_path / "m.safetensors")
    assert back.normalize == "window"
    np.testing.assert_array_equal(back.predict_proba(X + offsets), clf.predict_proba(X + offsets))


@pytest.mark.parametrize("bad", ["revin", 1, None])
def test_bad_normalize_is_named(arrays, bad):
    from medspt.core.errors import InputError

    X, y, groups = arrays
    with pytest.raises(
        InputError, match=r"normalize must be True, 'channel', 'window', 'instance' or False"
    ):
        SPTClassifier(**FAST, normalize=bad).fit(X, y, groups=groups)


def test_nan_in_inputs_is_allowed(arrays):
    X, y, groups = arrays
    X = X.copy()
    X[::3, 0, 5:12] = np.nan
    clf = SPTClassifier(**FAST).fit(X, y, groups=groups)
    assert np.isfinite(clf.predict_proba(X)).all()
    assert all(np.isfinite(h["train_loss"]) for h in clf.history_["pretrain"])


def test_cross_val_score_with_groups(arrays):
    X, y, groups = arrays
    scores = cross_val_score(SPTClassifier(**FAST), X, y, groups=groups, cv=StratifiedGroupKFold(2))
    assert scores.shape == (2,) and ((scores >= 0) & (scores <= 1)).all()


def test_learns_a_simple_pattern(arrays):
    X, y, groups = arrays
    # the default recipe with its step floor (FAST turns the floor off)
    clf = SPTClassifier(**(FAST | dict(epochs=20, d_model=32, val_size=0, lr=3e-3, min_steps=300)))
    clf.fit(X[groups != "s7"], y[groups != "s7"], groups=groups[groups != "s7"])
    assert clf.score(X, y) > 0.9


def test_accepts_windowset(arrays):
    X, y, groups = arrays
    ws = from_arrays(X, y, groups, channels=["a", "b", "c"])
    clf = SPTClassifier(**FAST).fit(ws)
    assert clf.channels_ == ["a", "b", "c"]
    assert clf.predict(ws).shape == (len(X),)


def test_linear_probe_after_pretraining_keeps_encoder(arrays):
    X, y, groups = arrays
    clf = SPTClassifier(**FAST, linear_probe=True).fit(X, y, groups=groups)
    assert clf.best_epoch_["finetune"] >= 1


# scikit-learn's estimator checks, on tiny settings. The checks feed 2-D data, which
# SPTClassifier reads as (N, T) single-channel windows.
# No check is skipped. (fit takes no sample_weight, so the sample-weight checks do not
# apply and scikit-learn does not run them.)
_SKIPPED: dict[str, str] = {
    # a 2-D X is (N, T): one feature is a window of 1 step, shorter than the pinned patch
    # of 2, which fit refuses by name (patch_len='auto' would fit it)
    "check_fit2d_1feature": "a window of 1 step is shorter than patch_len=2",
}


@parametrize_with_checks(
    [
        SPTClassifier(
            d_model=8,
            n_heads=2,
            depth=1,
            # sklearn's tabular checks have 2-10 "steps": patch 2 makes the few tokens an
            # MLP-like model fits in 2 epochs
            patch_len=2,
            pretrain_epochs=1,
            epochs=2,
            batch_size=16,
            min_steps=0,
            n_estimators=1,
            # sklearn's checks separate classes by feature levels, which a per-window
            # (instance) normalization removes by design, and expect a few epochs to
            # fit: the plain recipe (no augmentation or smoothing) does
            normalize=True,
            window_stats=False,  # each window's mean and log-std: a second path to fit
            augment=None,
            label_smoothing=0.0,
            encoder_lr_scale=1.0,
            no_decay_norms=False,
            mask_unit="step",
            mask_ratio=0.15,
            verbose=False,
            device="cpu",
        )
    ],
    expected_failed_checks=lambda est: _SKIPPED,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_predict_checks_channels_and_takes_other_lengths(arrays):
    X, y, groups = arrays
    clf = SPTClassifier(**FAST).fit(X, y, groups=groups)
    with pytest.raises(ValueError, match="X has 2 features, but SPTClassifier is expecting 3"):
        clf.predict(X[:, :2])
    # other lengths are padded or cut into sliding windows, with a warning (tests/test_auto.py)
    with pytest.warns(UserWarning, match=r"shorter than any the model was trained on \(16 < 32"):
        assert clf.predict(X[:, :, :16]).shape == (len(X),)


def test_token_masks_in_pretraining_and_their_errors(arrays, tmp_path):
    X, y, groups = arrays
    clf = SPTClassifier(**FAST, mask_unit="token", masking="block", mask_ratio=0.4)
    clf.fit(X, y, groups)
    assert clf.history_["pretrain"][-1]["val_loss"] > 0
    path = tmp_path / "m.safetensors"
    clf.save(path)
    from medspt import load
    from medspt.core.errors import InputError

    assert load(path).get_params()["mask_unit"] == "token"
    with pytest.raises(InputError, match="mask_unit must be 'step' or 'token'"):
        SPTClassifier(**FAST, mask_unit="patch").fit(X, y, groups)
    with pytest.raises(InputError, match="needs a named masking strategy"):
        SPTClassifier(**FAST, mask_unit="token", masking=lambda s, g: None).fit(X, y, groups)


def test_instance_normalization_fits_and_is_stored(arrays, tmp_path):
    from medspt import load

    X, y, groups = arrays
    clf = SPTClassifier(**FAST, normalize="instance", window_stats=False)
    clf.fit(X * 10 + 3, y, groups)
    assert clf.model_.config.instance_norm
    path = tmp_path / "i.safetensors"
    clf.save(path)
    again = load(path)
    assert again.model_.config.instance_norm
    np.testing.assert_allclose(again.predict_proba(X * 10 + 3), clf.predict_proba(X * 10 + 3))
    # a window's level and scale do not matter to the model any more (up to the instance
    # floor, which adds 0.01 to a window's variance in units of the training channel's)
    np.testing.assert_allclose(
        clf.predict_proba(X * 10 + 3), clf.predict_proba(X * 20 + 50), atol=1e-3
    )
    # the default hands each window's level and spread back to the classifier
    stats = SPTClassifier(**FAST, normalize="instance").fit(X * 10 + 3, y, groups)
    assert stats.model_.config.window_stats and stats.model_.stats_head is not None
    shifted = np.abs(stats.predict_proba(X * 10 + 3) - stats.predict_proba(X * 20 + 50))
    assert shifted.max() > 1e-3
