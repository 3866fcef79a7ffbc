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
    one = SPTClassifier(**FAST, random_state=3, n_estimators=1).fit(X, y, groups)
    np.testing.assert_array_equal(single.predict_proba(X), one.predict_proba(X))
    assert len(one.members_) == 1


def test_an_ensemble_averages_its_members(arrays, tmp_path):
    X, y, groups = arrays
    ens = SPTClassifier(**FAST, random_state=3, n_estimators=3).fit(X, y, groups)
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
    with pytest.raises(InputError, match="n_estimators must be an integer >= 1"):
        SPTClassifier(**FAST, n_estimators=0).fit(X, y, groups)


def test_fold_rows_count_the_steps_of_every_member(arrays):
    from medspt.api import fit_fold
    from medspt.data.windowset import from_arrays

    X, y, groups = arrays
    ws = from_arrays(X, y, groups)
    tr = np.flatnonzero(~np.isin(groups, ["s0", "s1"]))
    te = np.flatnonzero(np.isin(groups, ["s0", "s1"]))
    one, _, _ = fit_fold(ws, tr, te, dict(FAST, pretrain=False))
    two, _, _ = fit_fold(ws, tr, te, dict(FAST, pretrain=False, n_estimators=2))
    assert two["optimizer_steps"] == 2 * one["optimizer_steps"]
