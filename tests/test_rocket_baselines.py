"""medspt.baselines: aeon's MiniRocket and MultiRocket-Hydra on medspt windows."""

import numpy as np
import pytest
from scipy.special import expit

from medspt import InputError
from medspt.baselines import (
    BASELINES,
    MiniRocket,
    MultiRocketHydra,
    check_baselines,
    make_baseline,
)
from medspt.baselines._base import fill_missing, scores_to_proba


def _separable(n=40, C=2, T=48, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, C, T)).astype(np.float32)
    y = np.array(["control", "pd"] * (n // 2))
    X[y == "pd", 0] += 2 * np.sin(np.arange(T) / 2)
    return X, y


def test_fill_missing_holds_padding_interpolates_gaps_and_uses_training_means():
    X = np.arange(2 * 2 * 6, dtype=float).reshape(2, 2, 6)
    X[0, :, 4:] = np.nan  # trailing padding of case 0 (all channels)
    X[1, 0, 2:4] = np.nan  # a gap inside case 1, channel 0: 12, 13, [14, 15], 16, 17
    X[1, 1] = np.nan  # channel 1 never observed in case 1
    X[0, 1, 0] = np.nan  # a gap at the start of case 0, channel 1
    out = fill_missing(X, channel_fill=np.array([-1.0, -7.5]))
    assert not np.isnan(out).any()
    np.testing.assert_array_equal(out[0, 0], [0, 1, 2, 3, 3, 3])  # last value held
    np.testing.assert_array_equal(out[0, 1], [7, 7, 8, 9, 9, 9])  # first value held
    np.testing.assert_allclose(out[1, 0], [12, 13, 14, 15, 16, 17])  # linear inside
    np.testing.assert_array_equal(out[1, 1], [-7.5] * 6)  # the training mean of channel 1
    observed = ~np.isnan(X)
    np.testing.assert_array_equal(out[observed], X[observed])  # observed values untouched


def test_scores_to_proba_is_softmax_of_decision_values():
    s = np.array([-2.0, 0.0, 0.5])
    p = scores_to_proba(s)  # two classes: the score of the second
    np.testing.assert_allclose(p[:, 1], expit(2 * s))
    np.testing.assert_allclose(p.sum(1), 1.0)
    m = scores_to_proba(np.array([[1.0, 2.0, 3.0]]))
    np.testing.assert_allclose(m[0], np.exp([1, 2, 3]) / np.exp([1, 2, 3]).sum())


@pytest.mark.parametrize("cls", [MiniRocket, MultiRocketHydra])
def test_baseline_learns_and_agrees_with_aeon(cls):
    X, y = _separable(n=60)
    clf = cls(random_state=0).fit(X[:40], y[:40])
    assert list(clf.classes_) == ["control", "pd"]
    proba = clf.predict_proba(X[40:])
    assert proba.shape == (20, 2)
    np.testing.assert_allclose(proba.sum(1), 1.0)
    assert (clf.predict(X[40:]) == y[40:]).mean() >= 0.9
    assert clf.n_steps_ == 48 and clf.filled_fraction_ == 0.0
    np.testing.assert_allclose(clf.channel_mean_, X[:40].mean(axis=(0, 2)), rtol=1e-5)
    np.testing.assert_allclose(clf.channel_std_, X[:40].std(axis=(0, 2)), rtol=1e-5)
    # aeon gets the training-standardized windows
    Z = (X[40:] - clf.channel_mean_[:, None]) / clf.channel_std_[:, None]
    np.testing.assert_array_equal(clf.predict(X[40:]), clf.estimator_.predict(Z))
    assert clf.estimator_.class_weight == "balanced"


def test_same_seed_same_scores_other_seed_other_kernels():
    X, y = _separable()
    new = _separable(n=10, seed=1)[0]  # training windows are fitted exactly: score others
    a = MiniRocket(random_state=3).fit(X, y).predict_proba(new)
    b = MiniRocket(random_state=3).fit(X, y).predict_proba(new)
    c = MiniRocket(random_state=4).fit(X, y).predict_proba(new)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)


def test_missing_values_and_unequal_lengths_are_filled_not_refused():
    X, y = _separable(n=40)
    X[::3, :, 40:] = np.nan  # shorter cases (trailing padding)
    X[2, :, 4:] = np.nan  # a case of 4 steps, shorter than aeon's shortest input: held
    X[5, 1] = np.nan  # a channel this case never observed: the training mean
    X[1::4, 1, 10:14] = np.nan  # gaps
    clf = MiniRocket().fit(X, y)
    assert clf.filled_fraction_ == pytest.approx(np.isnan(X).mean())
    assert not np.isnan(clf.predict_proba(X)).any()
    assert (clf.predict(X) == y).mean() >= 0.9
    # aeon gets each training channel standardized by the training windows' statistics
    Z = clf._prepare(X)
    assert not np.isnan(Z).any()
    observed = ~np.isnan(X)
    for c in range(2):
        vals = Z[:, c][observed[:, c]]
        assert abs(vals.mean()) < 1e-6 and vals.std() == pytest.approx(1.0, rel=1e-5)
    np.testing.assert_allclose(Z[5, 1], 0.0, atol=1e-6)  # the mean, standardized


def test_refusals_name_the_problem_and_the_fix():
    X, y = _separable(n=20, T=8)
    with pytest.raises(
        InputError,
        match=r"minirocket needs windows of at least 9 steps .* have 8\. .*\(baselines=\(\)\)$",
    ):
        MiniRocket().fit(X, y)
    X, y = _separable(n=20, T=9)
    with pytest.raises(InputError, match="multirocket-hydra needs windows of at least 10"):
        MultiRocketHydra().fit(X, y)
    X, y = _separable(n=20)
    X[0, 0, 0] = np.inf
    with pytest.raises(InputError, match="infinite values in the training windows"):
        MiniRocket().fit(X, y)
    X, y = _separable(n=20)
    X[:, 1] = np.nan
    with pytest.raises(InputError, match=r"channel\(s\) \[1\] have no observed .*channels=\["):
        MiniRocket().fit(X, y)
    with pytest.raises(InputError, match="at least 2 classes"):
        MiniRocket().fit(*_separable(n=20)[:1], np.array(["pd"] * 20))
    with pytest.raises(InputError, match=r"shape \(N, channels, steps\)"):
        MiniRocket().fit(np.zeros((20, 48)), y)
    clf = MiniRocket().fit(*_separable(n=20))
    with pytest.raises(InputError, match="fitted on windows of 48 steps; got 40"):
        clf.predict_proba(_separable(n=4, T=40)[0])


def test_parameters_round_trip_and_the_shortest_window_is_accepted():
    from sklearn.base import clone

    clf = MiniRocket(random_state=7, n_jobs=2, class_weight=None)
    assert clone(clf).get_params() == {"random_state": 7, "n_jobs": 2, "class_weight": None}
    assert MiniRocket().get_params() == {"random_state": 0, "n_jobs": 1, "class_weight": "balanced"}
    X, y = _separable(n=20, T=9)  # exactly aeon's shortest input
    assert MiniRocket().fit(X, y).predict_proba(X).shape == (20, 2)


def test_names_are_checked():
    assert check_baselines("minirocket") == ("minirocket",)
    assert check_baselines(["minirocket", "minirocket", "multirocket-hydra"]) == (
        "minirocket",
        "multirocket-hydra",
    )
    assert check_baselines(None) == () and check_baselines(()) == ()
    with pytest.raises(InputError, match=r"unknown baseline\(s\) \['rocket'\].*=\(\)\)$"):
        check_baselines(("rocket",))
    clf = make_baseline("multirocket-hydra", random_state=5)
    assert isinstance(clf, BASELINES["multirocket-hydra"]) and clf.random_state == 5


@pytest.mark.parametrize("cls", [MiniRocket, MultiRocketHydra])
def test_fit_and_predict_leave_torch_thread_count_alone(cls):
    # aeon's Numba kernels share PyTorch's libgomp: unguarded, a fit on a 2-core machine
    # turns a one-thread PyTorch into a two-thread one and later model fits crawl
    import torch

    X, y = _separable()
    before = torch.get_num_threads()
    try:
        for threads in (1, 3):
            torch.set_num_threads(threads)
            clf = cls(random_state=0).fit(X, y)
            assert torch.get_num_threads() == threads
            clf.predict_proba(X)
            assert torch.get_num_threads() == threads
    finally:
        torch.set_num_threads(before)
