import numpy as np
import pandas as pd
import pytest
from conftest import FAST, subject_frame

import medspt
from medspt import FramePredictions, evaluate, fit_spt, subject_folds, summarize
from medspt.api import config_params
from medspt.core.errors import InputError


def test_fit_spt_learns_above_chance_on_held_out_subjects():
    train = subject_frame(n_per_class=3, seed=0)  # 3 subjects per class
    test = subject_frame(n_per_class=3, seed=1)
    test["subject"] = "new-" + test["subject"]
    clf = fit_spt(
        train,
        window="2s",
        stride="1s",
        depth=2,
        d_model=32,
        n_heads=4,
        pretrain_epochs=5,
        min_steps=0,
        n_estimators=1,
        epochs=25,
        patience=None,
        lr=2e-3,
        verbose=False,
    )
    assert clf.pretrain and len(clf.history_["pretrain"]) == 5
    pred = clf.predict(test)
    assert isinstance(pred, FramePredictions)
    acc = (pred.windows["predicted"] == pred.windows["label"]).mean()
    assert acc > 0.8, acc
    rec = pred.recordings
    assert len(rec) == 6 and (rec["predicted"] == rec["label"]).mean() >= 5 / 6


def test_predict_frame_per_window_and_per_recording(frame):
    clf = fit_spt(frame, window=40, stride=20, **FAST)
    test = frame.drop(columns="label")
    pred = clf.predict(test)
    n_per_rec = (600 - 40) // 20 + 1
    assert len(pred.windows) == 6 * n_per_rec
    probs = pred.windows[["proba_fast", "proba_slow"]].to_numpy()
    np.testing.assert_allclose(probs.sum(1), 1.0, atol=1e-6)
    assert "label" not in pred.windows
    # per-recording probabilities are the mean of the windows' probabilities
    one = pred.windows[pred.windows["subject"] == "fast0"]
    r = pred.recordings.set_index("subject").loc["fast0"]
    assert r["proba_fast"] == pytest.approx(one["proba_fast"].mean())
    assert r["n_windows"] == n_per_rec
    assert r["predicted"] == ("fast" if r["proba_fast"] > 0.5 else "slow")
    # same windows as an array gives the same probabilities
    proba = clf.predict_proba(test)
    np.testing.assert_allclose(proba[:, 0], pred.windows["proba_fast"])


def test_time_column_is_not_a_feature(frame):
    clf = fit_spt(frame, window=40, **FAST)
    assert clf.channels_ == ["a", "b"]
    assert clf.frame_spec_.channels == ("a", "b")


def test_predict_frame_missing_channel(frame):
    clf = fit_spt(frame, window=40, **FAST)
    with pytest.raises(InputError, match=r"lacks channel column\(s\) \['b'\]"):
        clf.predict(frame.drop(columns="b"))


def test_evaluate_runs_scratch_and_spt_on_identical_subject_folds(frame):
    res = evaluate(
        frame,
        window=40,
        stride=40,
        cv=3,
        depths=(1, 2),
        maskings=("span", "block"),
        verbose=False,
        **{k: v for k, v in FAST.items() if k != "depth"},
    )
    # folds x (depths x (scratch, scratch-long, 2 maskings) + MiniRocket, which has no depth)
    assert len(res) == 3 * (2 * 4 + 1)
    assert set(res["config"]) == {"scratch", "scratch-long", "spt-span", "spt-block", "minirocket"}
    assert res.loc[res["config"] == "minirocket", "depth"].isna().all()
    # identical folds: same test size per fold for every configuration
    per_fold = res.groupby("fold")["n_test"].nunique()
    assert (per_fold == 1).all()
    own = res[res["config"] != "minirocket"]  # the grid's own models
    label_only = own.config.str.startswith("scratch")
    assert (own.loc[label_only, "pretrain_epochs"] == 0).all()
    assert (own.loc[~label_only, "pretrain_epochs"] > 0).all()
    # scratch-long gets SPT's whole budget: as many optimizer steps as pretraining +
    # fine-tuning when nothing stops early (FAST has no validation patience to hit)
    steps = own.groupby(["config", "fold", "depth"])["optimizer_steps"].first().unstack(0)
    budget = FAST["epochs"] + FAST["pretrain_epochs"]
    assert (steps["scratch-long"] * FAST["epochs"] == steps["scratch"] * budget).all()
    # the control counts from SPT's own resolved budget, with SPT's own settings
    long = config_params("scratch-long", 2, 0, {"min_steps": 300})
    assert long["steps_like_spt"] is True and long["min_steps"] == 300
    # scratch's early stopping (no patience of its own) and no epoch kept from warm-up
    assert "patience" not in long and "epochs" not in long
    assert config_params("spt-span", 2, 0, {"min_steps": 300})["min_steps"] == 300
    # out-of-fold predictions: every test window once per fit, subjects never in training
    pred = res.predictions
    assert len(pred) == res["n_test"].sum()
    assert list(pred.columns[:10]) == [
        "config",
        "depth",
        "seed",
        "fold",
        "window",
        "subject",
        "label",
        "predicted",
        "label_code",
        "predicted_code",
    ]
    one = pred[(pred.config == "spt-span") & (pred.depth == 2)]
    assert sorted(one["window"]) == list(range(one["window"].max() + 1))
    for _, row in res.iterrows():
        depth = pred.depth.isna() if pd.isna(row.depth) else pred.depth == row.depth
        sub = pred[(pred.config == row.config) & depth]
        sub = sub[sub.fold == row.fold]
        proba = sub.filter(like="proba_").to_numpy()
        np.testing.assert_allclose(proba.sum(1), 1, atol=1e-5)
        acc = (sub["predicted_code"] == sub["label_code"]).mean()
        assert acc == pytest.approx(row["accuracy"])
        assert not set(sub["subject"]) & set(row["val_subjects"].split())
    for col in ("accuracy", "balanced_accuracy", "macro_f1", "subject_accuracy", "roc_auc"):
        assert res[col].between(0, 1).all(), col
    assert (res["wall_time_s"] > 0).all() and (res["windows_per_s"] > 0).all()
    table = summarize(res)
    assert len(table) == 10 and table["baseline"].sum() == 1  # + MiniRocket, nested-best
    assert table["config"].iloc[-2:].tolist() == ["minirocket", "nested-best"]
    s = table.set_index(["depth", "config"])
    manual = res[(res.depth == 1) & (res.config == "spt-span")]["balanced_accuracy"].mean()
    assert s.loc[(1, "spt-span"), "mean"] == pytest.approx(manual)
    assert s.loc[(1, "spt-span"), "gain_vs_scratch"] == pytest.approx(
        manual - s.loc[(1, "scratch"), "mean"]
    )
    assert s.loc[(1, "spt-span"), "test"] == "subjects"
    assert s.loc[(1, "spt-span"), "n_pairs"] == frame["subject"].nunique()


def test_subject_folds_never_split_a_subject():
    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(20), rng.integers(3, 9, 20))
    y = (groups % 2).astype(int)
    folds = subject_folds(y, groups, 5)
    seen = []
    for tr, te in folds:
        assert not set(groups[tr]) & set(groups[te])
        assert set(y[te]) == {0, 1}
        seen.extend(te)
    assert sorted(seen) == list(range(len(groups)))  # every window tested once


def test_evaluate_rejects_leaky_folds(arrays):
    X, y, groups = arrays
    bad = [(np.arange(0, 45), np.arange(40, 80))]  # windows 40-44 (subject s4) on both sides
    with pytest.raises(InputError, match="both train and test"):
        evaluate(X, y, groups, cv=bad, verbose=False, **FAST)


def test_subject_accuracy_uses_mean_window_probability():
    proba = np.array([[0.9, 0.1], [0.2, 0.8], [0.3, 0.7], [0.6, 0.4]])
    groups = np.array(["a", "a", "b", "b"])
    y = np.array([0, 0, 1, 1])
    m = medspt.estimator.metrics.classification_metrics(y, proba, groups)
    # subject a: mean (0.55, 0.45) -> 0 correct; b: (0.45, 0.55) -> 1 correct
    assert m["subject_accuracy"] == 1.0 and m["accuracy"] == 0.5


def test_evaluate_accepts_arrays_and_windowset(arrays):
    X, y, groups = arrays
    res = evaluate(X, y, groups, cv=2, maskings=(), baselines=(), verbose=False, **FAST)
    assert list(res["config"]) == ["scratch", "scratch"]
    ws = medspt.from_arrays(X, y, groups)
    res2 = evaluate(ws, cv=2, maskings=(), baselines=(), verbose=False, **FAST)
    pd.testing.assert_frame_equal(
        res.drop(columns=["wall_time_s", "windows_per_s"]),
        res2.drop(columns=["wall_time_s", "windows_per_s"]),
    )


def test_fit_fold_scores_with_classes_in_any_order():
    # protocols fix their class order (GPD-1: control, PD), which need not be sorted
    from medspt.api import fit_fold, subject_folds

    ws = medspt.make_windows(subject_frame(), window=40, classes=["slow", "fast"])
    assert list(ws.classes) == ["slow", "fast"]
    tr, te = subject_folds(ws.y, ws.groups, 3)[0]
    row, clf, _ = fit_fold(ws, tr, te, dict(FAST, pretrain=False))
    truth = ws.classes[ws.y[te]]
    assert row["accuracy"] == pytest.approx(np.mean(clf.predict(ws.X[te]) == truth))
