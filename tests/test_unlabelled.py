"""Unlabelled recordings: pretraining reconstructs them beside the training windows,
fine-tuning never sees them, a fold's test subjects and the validation subjects never
appear among them, and the compute-matched control counts them in its budget."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import FAST, subject_frame

import medspt
from medspt import SPTClassifier
from medspt.api import unlabelled_windows, windows_from
from medspt.cli import main
from medspt.evaluation.configs import config_params


def _arrays(seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(40, 2, 32)).astype(np.float32)
    y = np.repeat(["a", "b"], 20)
    g = np.repeat(np.arange(8), 5)
    Xu = rng.normal(size=(24, 2, 32)).astype(np.float32)
    gu = np.concatenate([np.arange(8), np.repeat(np.arange(100, 104), 4)])  # 8 labelled
    return X, y, g, Xu, gu


KW = dict(depth=1, d_model=16, n_heads=2, epochs=2, pretrain_epochs=2, min_steps=0, n_estimators=1,
          batch_size=8, device="cpu", val_size=0.25, patch_len=8)  # fmt: skip


def test_pretraining_sees_unlabelled_windows_and_fine_tuning_never_does():
    X, y, g, Xu, gu = _arrays()
    clf = SPTClassifier(**KW).fit(X, y, g, X_unlabelled=Xu, groups_unlabelled=gu)
    n_val = np.isin(g, clf.validation_subjects_).sum()
    kept = int((~np.isin(gu, clf.validation_subjects_)).sum())
    assert len(clf.validation_subjects_) == 2 and kept == 22  # one window each left out
    assert clf.n_unlabelled_windows_ == kept
    n_train = len(X) - n_val
    for row in clf.history_["pretrain"]:
        assert row["windows"] == n_train + kept
        assert row["steps"] == math.ceil((n_train + kept) / 8)
    for row in clf.history_["finetune"]:
        assert row["windows"] == n_train and row["steps"] == math.ceil(n_train / 8)
    # without subjects nothing is left out
    clf = SPTClassifier(**KW).fit(X, y, g, X_unlabelled=Xu)
    assert clf.n_unlabelled_windows_ == 24
    assert clf.history_["pretrain"][0]["windows"] == n_train + 24


def test_the_unlabelled_windows_change_the_pretrained_model():
    X, y, g, Xu, gu = _arrays()
    base = SPTClassifier(**KW).fit(X, y, g)
    more = SPTClassifier(**KW).fit(X, y, g, X_unlabelled=Xu, groups_unlabelled=gu)
    again = SPTClassifier(**KW).fit(X, y, g, X_unlabelled=Xu, groups_unlabelled=gu)
    assert base.n_unlabelled_windows_ == 0
    assert not np.allclose(base.predict_proba(X), more.predict_proba(X))
    np.testing.assert_allclose(more.predict_proba(X), again.predict_proba(X))  # seeded


@pytest.mark.parametrize("n_unlabelled", [0, 7, 50, 333])
def test_scratch_long_counts_the_unlabelled_windows_in_its_budget(n_unlabelled):
    shared = {"min_steps": 100, "batch_size": 8}
    spt = SPTClassifier(**config_params("spt-span", 2, 0, shared))
    long = SPTClassifier(**config_params("scratch-long", 2, 0, shared))
    for n in range(1, 120):
        spt.batch_size_ = long.batch_size_ = 8
        m = n + n_unlabelled
        spt_steps = spt._stage_epochs(spt.pretrain_epochs, m) * math.ceil(m / 8)
        spt_steps += spt._finetune_epochs(n, m) * math.ceil(n / 8)
        long_steps = long._finetune_epochs(n, m) * math.ceil(n / 8)
        assert spt_steps <= long_steps < spt_steps + math.ceil(n / 8), n


def test_bad_unlabelled_windows_are_refused_by_name():
    X, y, g, Xu, gu = _arrays()
    with pytest.raises(medspt.InputError, match=r"shape \(M, 2, 32\).*got \(24, 1, 32\)"):
        SPTClassifier(**KW).fit(X, y, g, X_unlabelled=Xu[:, :1])
    with pytest.raises(medspt.InputError, match=r"shape \(M, 2, 32\).*got \(24, 2, 16\)"):
        SPTClassifier(**KW).fit(X, y, g, X_unlabelled=Xu[:, :, :16])
    bad = Xu.copy()
    bad[3] = np.nan
    with pytest.raises(medspt.InputError, match="no observed value"):
        SPTClassifier(**KW).fit(X, y, g, X_unlabelled=bad)
    with pytest.raises(medspt.InputError, match=r"one subject per unlabelled window \(24\)"):
        SPTClassifier(**KW).fit(X, y, g, X_unlabelled=Xu, groups_unlabelled=gu[:3])
    with pytest.warns(UserWarning, match="does not pretrain"):
        SPTClassifier(**KW, pretrain=False).fit(X, y, g, X_unlabelled=Xu)


def _unlabelled_frame() -> pd.DataFrame:
    """Recordings of two labelled subjects (slow0, fast1) and of two new ones, no labels."""
    other = subject_frame(n_per_class=2, seed=7).drop(columns="label")
    other["subject"] = other["subject"].map(
        {"slow0": "slow0", "slow1": "new0", "fast0": "new1", "fast1": "fast1"}
    )
    return other


def test_fit_spt_cuts_unlabelled_recordings_like_the_labelled_ones():
    df = subject_frame()
    clf = medspt.fit_spt(df, window="5s", unlabelled=_unlabelled_frame(), **FAST)
    ws, spec = windows_from(df, window="5s")
    uws = unlabelled_windows(_unlabelled_frame(), ws, spec)
    assert uws.X.shape[1:] == ws.X.shape[1:] and list(uws.channels) == ["a", "b"]
    assert len(uws) == 4 * 6  # 30 s recordings, 5 s windows
    kept = int((~np.isin(uws.groups, clf.validation_subjects_)).sum())
    assert clf.n_unlabelled_windows_ == kept
    with pytest.raises(medspt.InputError, match="window="):
        medspt.fit_spt(df, window=None, unlabelled=_unlabelled_frame(), **FAST)
    with pytest.raises(medspt.InputError, match="'b'"):
        medspt.fit_spt(df, window="5s", unlabelled=_unlabelled_frame().drop(columns="b"), **FAST)
    with pytest.raises(medspt.InputError, match="long DataFrame or a WindowSet, got ndarray"):
        medspt.fit_spt(df, window="5s", unlabelled=np.zeros((3, 2, 100)), **FAST)


def test_evaluate_never_pretrains_on_a_test_subjects_unlabelled_windows():
    df = subject_frame()
    ws, spec = windows_from(df, window="5s")
    uws = unlabelled_windows(_unlabelled_frame(), ws, spec)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = medspt.evaluate(
            df, window="5s", cv=3, depths=(1,), seeds=(0,), baselines=(),
            unlabelled=_unlabelled_frame(), verbose=False, **FAST,
        )  # fmt: skip
    notes = [str(w.message) for w in caught if "unlabelled windows of test" in str(w.message)]
    assert len(notes) == 2  # slow0 and fast1 are each tested in one fold
    assert any("slow0" in n for n in notes) and any("fast1" in n for n in notes)
    folds = res.predictions.groupby("fold")["subject"].unique()
    for _, row in res.iterrows():
        if row["config"] == "scratch":
            assert row["n_unlabelled"] == 0  # plain scratch ignores them
            continue
        unseen = set(folds[row["fold"]]) | set(str(row["val_subjects"]).split())
        assert row["n_unlabelled"] == int((~np.isin(uws.groups, list(unseen))).sum())
        assert row["n_unlabelled"] > 0
    spt = res[res["config"] == "spt-span"].set_index("fold")["optimizer_steps"]
    long = res[res["config"] == "scratch-long"].set_index("fold")["optimizer_steps"]
    assert (long >= spt).all()


def test_the_command_line_names_the_unlabelled_file(tmp_path, capsys):
    data = tmp_path / "d.csv"
    subject_frame().to_csv(data, index=False)
    code = main(["evaluate", "--data", str(data), "--unlabelled", str(tmp_path / "no.csv")])
    assert code == 2
    err = capsys.readouterr().err
    assert "medspt evaluate: error: --unlabelled file" in err and "no.csv" in err
    assert "does not exist" in err


def test_medspt_fit_pretrains_on_the_unlabelled_file(tmp_path, capsys):
    data, other = tmp_path / "d.csv", tmp_path / "u.csv"
    subject_frame().to_csv(data, index=False)
    _unlabelled_frame().to_csv(other, index=False)
    small = ["--d-model", "16", "--n-heads", "2", "--depth", "1", "--patch-len", "8",
             "--pretrain-epochs", "1", "--epochs", "1", "--min-steps", "0", "--quiet"]  # fmt: skip
    out = tmp_path / "m.safetensors"
    argv = ["fit", "--data", str(data), "--window", "5s", "--out", str(out), *small]
    assert main([*argv, "--unlabelled", str(other)]) == 0
    assert "saved model" in capsys.readouterr().out
    with_u = medspt.load(out)
    assert main(argv) == 0
    without = medspt.load(out)
    assert with_u.history_["pretrain"][0]["windows"] > without.history_["pretrain"][0]["windows"]
