"""One split, one function: outer folds, validation subjects, and the same subjects in
medspt's fits and the tsai baselines."""

import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import real_dataset

from medspt import InputError, SPTClassifier, evaluate
from medspt.core.splits import check_folds, fold_split, subject_folds, validation_split

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import baselines as bl  # noqa: E402

TINY = dict(
    d_model=8,
    n_heads=2,
    epochs=1,
    pretrain_epochs=1,
    patch_len=8,
    batch_size=256,
    min_steps=0,
    n_estimators=1,
)


def _labels(n_sub=12, per=5):
    # label names whose sorted order differs from the order they first appear in
    names = np.array(["zeta", "alpha", "mid"])
    y = np.repeat(names[np.arange(n_sub) % 3], per)
    groups = np.repeat([f"s{i:02d}" for i in range(n_sub)], per)
    return y, groups


def test_validation_split_holds_out_whole_training_subjects():
    y, groups = _labels()
    fit, val = validation_split(y, groups, val_size=0.25, random_state=0)
    assert len(fit) + len(val) == len(y)
    assert not set(groups[fit]) & set(groups[val])
    assert set(y[fit]) == set(y)  # no class lost from training
    assert len(np.unique(groups[val])) == 3  # a quarter of 12 subjects
    again = validation_split(y, groups, val_size=0.25, random_state=0)
    np.testing.assert_array_equal(val, again[1])
    other = validation_split(y, groups, val_size=0.25, random_state=1)
    assert not np.array_equal(val, other[1])
    fit0, val0 = validation_split(y, groups, val_size=0.0)
    assert len(val0) == 0 and len(fit0) == len(y)
    few = validation_split(y[:15], groups[:15], val_size=0.5)  # 3 subjects: too few
    assert len(few[1]) == 0
    four = validation_split(y[:20], groups[:20], val_size=0.5)  # 4 subjects: enough
    assert len(np.unique(groups[:20][four[1]])) == 2


@pytest.mark.parametrize("val_size,seed", [(0.2, 0), (0.25, 3), (0.5, 1)])
def test_validation_split_is_one_seeded_stratified_group_fold(val_size, seed):
    from sklearn.model_selection import StratifiedGroupKFold

    y, groups = _labels(n_sub=15)
    _, codes = np.unique(y, return_inverse=True)
    sgkf = StratifiedGroupKFold(round(1 / val_size), shuffle=True, random_state=seed)
    fit, val = next(sgkf.split(np.zeros(len(y)), codes, groups))
    got = validation_split(y, groups, val_size, seed)
    np.testing.assert_array_equal(got[0], fit)
    np.testing.assert_array_equal(got[1], val)


def test_validation_split_keeps_every_class_in_training():
    from sklearn.model_selection import GroupShuffleSplit

    # one subject holds the only windows of a class: whenever the stratified fold would
    # hold that subject out, the split falls back to GroupShuffleSplit
    y, groups = _labels(n_sub=8)
    y = np.where(groups == "s03", "rare", np.where(y == "alpha", "alpha", "zeta"))
    fell_back = 0
    for seed in range(12):
        fit, val = validation_split(y, groups, 0.25, seed)
        if "s03" in set(groups[val]):
            continue  # the fallback itself may still hold it out; nothing to ask of it
        assert "rare" in set(y[fit])
        gss = next(GroupShuffleSplit(1, test_size=0.25, random_state=seed).split(y, y, groups))
        fell_back += np.array_equal(val, gss[1])
    assert fell_back >= 1


def test_check_folds_bounds():
    y, groups = _labels()
    n = len(y)
    ok = check_folds([(np.arange(5, n), np.array([0]))], groups, n)  # one test window
    assert len(ok) == 1
    with pytest.raises(InputError, match="beyond the 60 windows"):
        check_folds([(np.arange(5, n + 1), np.arange(5))], groups, n)
    with pytest.raises(InputError, match="beyond the 60 windows"):
        check_folds([(np.arange(5, n), np.array([0, n]))], groups, n)
    assert check_folds([(np.array([n - 1]), np.arange(5))], groups, n)[0][0][0] == n - 1


def test_the_estimator_holds_out_exactly_the_split_subjects():
    y, groups = _labels()
    X = np.random.default_rng(0).standard_normal((len(y), 2, 16)).astype(np.float32)
    for seed in (0, 1, 2):
        clf = SPTClassifier(**TINY, pretrain=False, random_state=seed).fit(X, y, groups)
        _, val = validation_split(y, groups, 0.2, seed)
        assert set(clf.validation_subjects_) == set(groups[val])
    none = SPTClassifier(**TINY, pretrain=False, val_size=0).fit(X, y, groups)
    assert len(none.validation_subjects_) == 0
    assert none.best_epoch_["finetune"] == 1  # the kept (last) epoch


def test_fold_split_parts_are_disjoint_and_named_by_fold():
    y, groups = _labels()
    folds = subject_folds(y, groups, 3)
    for k, fold in enumerate(folds):
        split = fold_split(y, groups, fold, fold_index=k, seed=0)
        parts = split.subjects()
        assert not parts["fit"] & parts["val"]
        assert not (parts["fit"] | parts["val"]) & parts["test"]
        assert parts["fit"] | parts["val"] | parts["test"] == set(groups)
    tr, te = folds[0]
    with pytest.raises(InputError, match="fold 4 puts subject"):
        fold_split(y, groups, (tr, np.append(te, tr[0])), fold_index=4)
    with pytest.raises(InputError, match="fold 1 has an empty"):
        check_folds([(tr, te), (tr, np.array([], dtype=int))], groups, len(y))


@pytest.mark.parametrize("name,folder", [("GPD-1", "gaitpdb"), ("NE-1", "noneeg")])
def test_baselines_and_evaluate_use_identical_subjects(name, folder):
    from medspt.datasets import protocol

    p = protocol(name, real_dataset(folder))
    ws, folds = p.windows, p.folds
    labels = ws.classes[ws.y]
    for k, fold in enumerate(folds):
        for seed in (0, 1, 2):
            plan = bl.plan_fold(labels, ws.groups, *fold, k, seed, 0.2)
            split = fold_split(labels, ws.groups, fold, fold_index=k, seed=seed).subjects()
            assert set(ws.groups[plan.val]) == split["val"]
            assert set(ws.groups[plan.fit]) == split["fit"]
            assert set(ws.groups[plan.test]) == split["test"]
    # and what a real fit holds out (fold 0, every seed) is that same set
    res = evaluate(
        ws, cv=[folds[0]], depths=(1,), maskings=(), seeds=(0, 1, 2), baselines=(), **TINY
    )
    for seed, row in res.set_index("seed").iterrows():
        plan = bl.plan_fold(labels, ws.groups, *folds[0], 0, seed, 0.2)
        assert set(row["val_subjects"].split()) == set(ws.groups[plan.val])


def test_subject_folds_are_sklearns_stratified_group_folds():
    from sklearn.model_selection import StratifiedGroupKFold

    y, groups = _labels(n_sub=15)
    got = subject_folds(y, groups, 5)
    want = StratifiedGroupKFold(5, shuffle=True, random_state=0).split(y, y, groups)
    for (tr, te), (tr2, te2) in zip(got, want):
        np.testing.assert_array_equal(te, te2)
        np.testing.assert_array_equal(tr, tr2)
    other = subject_folds(y, groups, 5, random_state=3)
    assert any(not np.array_equal(a[1], b[1]) for a, b in zip(got, other))
    assert len(subject_folds(y, groups, 15)) == 15  # leave one subject out
    for bad in (1, 16):
        with pytest.raises(InputError, match="between 2 and the number of subjects"):
            subject_folds(y, groups, bad)


@pytest.mark.parametrize("seed,val_size", [(0, 0.2), (2, 0.5)])
def test_fold_split_holds_out_the_validation_split_of_the_training_part(seed, val_size):
    y, groups = _labels(n_sub=15)
    assert len(subject_folds(y, groups, 2)) == 2  # two folds are allowed
    tr, te = subject_folds(y, groups, 3)[1]
    split = fold_split(y, groups, (tr, te), fold_index=1, seed=seed, val_size=val_size)
    fit, val = validation_split(y[tr], groups[tr], val_size, seed)
    np.testing.assert_array_equal(split.val, tr[val])
    np.testing.assert_array_equal(split.fit, tr[fit])
    np.testing.assert_array_equal(split.test, te)
    assert (split.fold, split.seed) == (1, seed)
