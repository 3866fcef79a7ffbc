"""Ensembles of seeds: averaged probabilities, one model file."""

import numpy as np
import pytest
import torch
from conftest import FAST

from medspt import SPTClassifier, load
from medspt.core.errors import InputError


def test_an_ensemble_of_one_is_its_single_model(arrays):
    X, y, groups = arrays
    single = SPTClassifier(**FAST, random_state=3).fit(X, y, groups)
    one = SPTClassifier(**{**FAST, "n_estimators": 1}, random_state=3).fit(X, y, groups)
    np.testing.assert_array_equal(single.predict_proba(X), one.predict_proba(X))
    assert len(one.members_) == 1


def test_an_ensemble_averages_its_members(arrays, tmp_path):
    X, y, groups = arrays
    ens = SPTClassifier(**{**FAST, "n_estimators": 3}, random_state=3).fit(X, y, groups)
    assert len(ens.members_) == 3 and ens.model_ is ens.members_[0]
    # member 0 is the single model with the same seed; the others use the next seeds
    single = SPTClassifier(**FAST, random_state=3).fit(X, y, groups)
    for a, b in zip(ens.members_[0].parameters(), single.model_.parameters()):
        torch.testing.assert_close(a, b)
    assert not torch.equal(ens.members_[1].embed.mix.weight, ens.members_[0].embed.mix.weight)
    Xn = torch.from_numpy(ens._normalize(X))
    with torch.no_grad():
        each = [torch.softmax(m(Xn), dim=1).numpy() for m in ens.members_]
    np.testing.assert_allclose(ens.predict_proba(X), np.mean(each, axis=0), atol=1e-6)
    # one file holds every member
    path = tmp_path / "ens.safetensors"
    ens.save(path)
    back = load(path)
    assert len(back.members_) == 3
    np.testing.assert_allclose(back.predict_proba(X), ens.predict_proba(X), atol=1e-6)
    assert len(ens.member_histories_) == 3
    with pytest.raises(InputError, match="n_estimators must be 'auto' or an integer >= 1"):
        SPTClassifier(**{**FAST, "n_estimators": 0}).fit(X, y, groups)


def test_fold_rows_count_the_steps_of_every_member(arrays):
    from medspt.api import fit_fold
    from medspt.data.windowset import from_arrays

    X, y, groups = arrays
    ws = from_arrays(X, y, groups)
    tr = np.flatnonzero(~np.isin(groups, ["s0", "s1"]))
    te = np.flatnonzero(np.isin(groups, ["s0", "s1"]))
    one, _, _ = fit_fold(ws, tr, te, dict(FAST, pretrain=False))
    two, _, _ = fit_fold(ws, tr, te, {**FAST, "pretrain": False, "n_estimators": 2})
    assert two["optimizer_steps"] == 2 * one["optimizer_steps"]


def test_auto_trains_five_seeds_below_300_windows_and_one_from_300(arrays, tmp_path):
    X, y, groups = arrays  # 80 windows: a small set
    auto = {**FAST, "n_estimators": "auto"}
    small = SPTClassifier(**auto, random_state=3).fit(X, y, groups)
    assert small.n_estimators_ == 5 and len(small.members_) == 5
    assert small.auto_params_["n_estimators"] == 5
    single = SPTClassifier(**FAST, random_state=3).fit(X, y, groups)
    for a, b in zip(small.members_[0].parameters(), single.model_.parameters()):
        torch.testing.assert_close(a, b)  # member 0 is the one-seed model
    path = tmp_path / "auto.safetensors"
    small.save(path)
    assert load(path).n_estimators_ == 5
    # 300 windows: one member, the very model n_estimators=1 fits (the protocols' case)
    X3, y3, g3 = (np.concatenate([a] * 4)[:300] for a in (X, y, groups))
    X3 = X3 + np.random.default_rng(0).normal(0, 0.1, X3.shape).astype(np.float32)
    big = SPTClassifier(**auto, random_state=3).fit(X3, y3, g3)
    one = SPTClassifier(**FAST, random_state=3).fit(X3, y3, g3)
    assert big.n_estimators_ == 1 and len(big.members_) == 1
    np.testing.assert_array_equal(big.predict_proba(X), one.predict_proba(X))
    assert "n_estimators" not in SPTClassifier(**FAST).fit(X, y, groups).auto_params_
