"""benchmarks/baselines.py: fold plans, normalization, rows; the tsai runs where tsai imports."""

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import FAST
from sklearn.utils.class_weight import compute_class_weight

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import baselines as bl  # noqa: E402

from medspt import evaluate  # noqa: E402
from medspt.estimator.metrics import classification_metrics  # noqa: E402


def _windows(n_sub=10, per=6, C=3, T=24, seed=0):
    """Windows (N, C, T), binary class per subject, subject per window."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_sub * per, C, T)).astype(np.float32)
    y = np.repeat(np.arange(n_sub) % 2, per)
    groups = np.repeat([f"s{i}" for i in range(n_sub)], per).astype(object)
    return X, y, groups


def _split(groups, test_subjects):
    test = np.isin(groups, test_subjects)
    return np.flatnonzero(~test), np.flatnonzero(test)


def test_plan_fold_splits_training_subjects_only():
    X, y, groups = _windows()
    tr, te = _split(groups, ["s0", "s1"])
    plan = bl.plan_fold(y, groups, tr, te, fold=3, seed=0, val_size=0.25)
    assert (plan.fold, plan.seed) == (3, 0)
    np.testing.assert_array_equal(plan.train, tr)
    np.testing.assert_array_equal(plan.test, te)
    np.testing.assert_array_equal(np.sort(np.concatenate([plan.fit, plan.val])), tr)
    fit_subj, val_subj = set(groups[plan.fit]), set(groups[plan.val])
    assert val_subj and not fit_subj & val_subj  # whole subjects held out
    assert not (fit_subj | val_subj) & {"s0", "s1"}  # never a test subject
    assert set(y[plan.fit]) == {0, 1}
    # Same seed, same split; the split is medspt's early-stopping split.
    again = bl.plan_fold(y, groups, tr, te, fold=3, seed=0, val_size=0.25)
    np.testing.assert_array_equal(again.val, plan.val)
    none = bl.plan_fold(y, groups, tr, te, fold=3, seed=0, val_size=0.0)
    assert len(none.val) == 0 and len(none.fit) == len(tr)


def test_plan_fold_subsamples_and_rejects_shared_subjects():
    X, y, groups = _windows()
    tr, te = _split(groups, ["s0", "s1"])
    plan = bl.plan_fold(y, groups, tr, te, fold=0, seed=1, max_train_windows=20)
    assert len(plan.train) == 20 and set(plan.train) <= set(tr)
    assert len(plan.fit) + len(plan.val) == 20
    other = bl.plan_fold(y, groups, tr, te, fold=0, seed=2, max_train_windows=20)
    assert not np.array_equal(plan.train, other.train)
    with pytest.raises(ValueError, match="both sides"):
        bl.plan_fold(y, groups, tr, np.append(te, tr[0]), fold=0, seed=0)


def test_fold_arrays_normalize_with_training_windows_only():
    X, y, groups = _windows()
    X[:, 1] = X[:, 1] * 5.0 + 3.0
    X[:, 2] = 7.0  # flat channel: centred only
    tr, te = _split(groups, ["s0", "s1"])
    X[tr[0], 0, :4] = np.nan  # missing values: ignored by the statistics, then 0
    X[np.ix_(te, [0])] += 100.0  # test windows far off: must not move the statistics
    plan = bl.plan_fold(y, groups, tr, te, fold=0, seed=0, val_size=0.25)
    arrs = bl.fold_arrays(X, plan)

    train = X[tr].astype(np.float64)
    np.testing.assert_allclose(arrs["mean"], np.nanmean(train, axis=(0, 2)), rtol=1e-5)
    np.testing.assert_allclose(arrs["std"][:2], np.nanstd(train, axis=(0, 2))[:2], rtol=1e-5)
    assert arrs["std"][2] == 1.0
    both = np.concatenate([arrs["fit"], arrs["val"]])
    np.testing.assert_allclose(both[:, :2].mean(axis=(0, 2)), 0.0, atol=0.02)
    np.testing.assert_allclose(both[:, 1].std(), 1.0, rtol=1e-4)
    assert np.all(arrs["test"][:, 0].mean(axis=1) > 50)  # test shift kept, not absorbed
    expected = (X[plan.test] - arrs["mean"][:, None]) / arrs["std"][:, None]
    np.testing.assert_allclose(arrs["test"], expected, rtol=1e-5, atol=1e-5)
    assert arrs["fit"].dtype == np.float32 and not np.isnan(both).any()
    first = arrs["fit"][0] if plan.fit[0] == tr[0] else arrs["val"][0]
    assert np.all(first[0, :4] == 0.0) and np.all(first[0, 4:] != 0.0)

    X2 = X.copy()
    X2[te] = -1e6  # anything in the test windows: training arrays unchanged
    arrs2 = bl.fold_arrays(X2, plan)
    np.testing.assert_array_equal(arrs2["fit"], arrs["fit"])
    np.testing.assert_array_equal(arrs2["val"], arrs["val"])


def test_class_weights():
    y = np.array([0, 0, 0, 1, 2, 2])
    w = bl.balanced_class_weights(y, 4)
    np.testing.assert_allclose(w[:3], compute_class_weight("balanced", classes=np.arange(3), y=y))
    assert w[3] == 1.0


def test_rows_have_evaluate_columns_and_metrics():
    X, y, groups = _windows(n_sub=8, per=4, T=16)
    tr, te = _split(groups, ["s0", "s1", "s2", "s3"])
    ref = evaluate(
        X,
        np.where(y == 1, "b", "a"),
        groups,
        cv=[(tr, te)],
        maskings=(),
        verbose=False,
        **{**FAST, "epochs": 1},
    )
    assert tuple(ref.columns) == bl.EVALUATE_COLUMNS

    plan = bl.plan_fold(y, groups, tr, te, fold=0, seed=2)
    rng = np.random.default_rng(0)
    proba = rng.dirichlet([1, 1], size=len(te))
    s = bl.Settings(tst_depth=3)
    info = {"wall_time_s": 1.5, "finetune_epoch": 4, "pretrain_epochs": 2, "n_params": 10}
    rows = {m: bl.make_row(m, s, plan, y, groups, proba, info, "demo") for m in bl.MODELS}
    df = pd.DataFrame(list(rows.values()))
    assert list(df.columns) == [*bl.EVALUATE_COLUMNS, *bl.EXTRA_COLUMNS]
    assert df["config"].tolist() == [
        "minirocket",
        "tsai-inceptiontimeplus",
        "tsai-tstplus",
        "tsai-tstplus-mvp",
    ]
    assert df["depth"].isna().tolist() == [True, True, False, False]
    assert df["depth"].iloc[2] == 3
    assert df["masking"].tolist()[3] == "mvp" and df["masking"].iloc[:3].isna().all()
    assert df["pretrain"].tolist() == [False, False, False, True]
    row = rows["tstplus-mvp"]
    expected = classification_metrics(y[te], proba, groups[te])
    for k, v in expected.items():
        assert row[k] == pytest.approx(v, nan_ok=True)
    assert row["subject_accuracy"] == pytest.approx(expected["subject_accuracy"])
    assert (row["n_train"], row["n_test"], row["n_test_subjects"]) == (len(tr), len(te), 4)
    assert row["n_val"] == len(plan.val) and row["seed"] == 2 and row["fold"] == 0
    assert np.isnan(rows["minirocket"]["windows_per_s"])
    with pytest.raises(ValueError, match="probability rows"):
        bl.make_row("tstplus", s, plan, y, groups, proba[:-1], info, "demo")


def test_summarize_mean_and_std_per_config():
    base = {c: np.nan for c in bl.EVALUATE_COLUMNS}
    rows = [
        {**base, "config": "tsai-tstplus", "depth": 2, "balanced_accuracy": 0.6},
        {**base, "config": "tsai-tstplus", "depth": 2, "balanced_accuracy": 0.8},
        {**base, "config": "minirocket", "balanced_accuracy": 0.9, "wall_time_s": 3.0},
    ]
    out = bl.summarize(pd.DataFrame(rows))
    assert out["config"].tolist() == ["minirocket", "tsai-tstplus"]
    assert out["runs"].tolist() == [1, 2]
    assert out["balanced_accuracy_mean"].tolist() == pytest.approx([0.9, 0.7])
    assert out["balanced_accuracy_std"].iloc[1] == pytest.approx(np.std([0.6, 0.8], ddof=1))
    assert np.isnan(out["depth"].iloc[0]) and out["depth"].iloc[1] == 2
    text = bl.render(out, ["h"], [], "t")
    assert "| tsai-tstplus | 2 | 2 | 0.700 ± 0.141 |" in text


def test_tsai_runs_are_seeded_and_give_probabilities(tmp_path):
    pytest.importorskip("tsai")
    X, y, groups = _windows(n_sub=8, per=8, C=2, T=32)
    X[y == 1, 0] += np.sin(np.linspace(0, 4 * np.pi, 32)).astype(np.float32)
    tr, te = _split(groups, ["s0", "s1"])
    plan = bl.plan_fold(y, groups, tr, te, fold=0, seed=0, val_size=0.25)
    arrs = bl.fold_arrays(X, plan)
    s = bl.Settings(
        epochs=2, pretrain_epochs=1, batch_size=16, d_model=16, n_heads=2, tst_depth=1,
        threads=1, device="cpu",
    )  # fmt: skip
    args = (arrs, y[plan.fit], y[plan.val], 2, 0, s)
    p1, info = bl.run_network("tstplus-mvp", *args, tmp_path)
    p2, _ = bl.run_network("tstplus-mvp", *args, tmp_path)
    np.testing.assert_array_equal(p1, p2)
    assert p1.shape == (len(te), 2)
    np.testing.assert_allclose(p1.sum(1), 1.0, rtol=1e-6)
    assert info["pretrain_epochs"] == 1 and info["finetune_epoch"] in (1, 2)


def test_minirocket_runs_here_on_the_raw_training_windows():
    """aeon's MiniRocket via medspt.baselines, in medspt's interpreter, on the fold's
    training part only (fit + validation subjects), probabilities over all class codes."""
    from medspt.baselines import MiniRocket

    X, y, groups = _windows(n_sub=8, per=8, C=2, T=32)
    X[y == 1, 0] += np.sin(np.linspace(0, 4 * np.pi, 32)).astype(np.float32)
    X[3, 1, 5:9] = np.nan  # raw: the baseline fills it by its own rules
    tr, te = _split(groups, ["s0", "s1"])
    plan = bl.plan_fold(y, groups, tr, te, fold=0, seed=4, val_size=0.25)
    proba, info = bl.run_minirocket(X, y, 3, plan)
    assert proba.shape == (len(te), 3) and (proba[:, 2] == 0).all()
    np.testing.assert_allclose(proba.sum(1), 1.0)
    direct = MiniRocket(random_state=4).fit(X[tr], y[tr]).predict_proba(X[te])
    np.testing.assert_allclose(proba[:, :2], direct)
    assert info["filled_fraction"] == pytest.approx(np.isnan(X[tr]).mean())
    got = []
    bl.run_minirocket_jobs(X, y, 2, [plan], lambda i, m, p, info: got.append((i, m, p)))
    assert [(i, m) for i, m, _ in got] == [(0, "minirocket")]
    np.testing.assert_allclose(got[0][2], proba[:, :2])
