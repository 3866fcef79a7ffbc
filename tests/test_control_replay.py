"""The replay of the control's epoch rule from stored curves equals what training keeps."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import control_replay as cr  # noqa: E402
from test_controls import _data  # noqa: E402

from medspt import SPTClassifier  # noqa: E402
from medspt.evaluation.configs import config_params  # noqa: E402

SMALL = dict(d_model=16, n_heads=2, min_steps=0, batch_size=16, val_size=0.34,
             n_estimators=1)  # fmt: skip


def _curves(clf):
    h = clf.history_["finetune"]
    return ([r["val_balanced_accuracy"] for r in h], [r["val_loss"] for r in h],
            sum(r["steps"] for r in h))  # fmt: skip


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_new_rule_replayed_is_the_epoch_training_keeps(seed):
    X, y, groups = _data(seed)
    params = config_params("scratch-long", depth=1, seed=seed, params={"patience": 3})
    clf = SPTClassifier(**params, **SMALL, epochs=3, pretrain_epochs=12, warmup=0.3)
    clf.fit(X, y, groups)
    acc, loss, steps = _curves(clf)
    # the run may have stopped early: replay on the epochs it ran, with the planned total
    planned = (clf.epochs + clf.pretrain_epochs) * clf.history_["finetune"][0]["steps"]
    full = acc + [0.0] * (clf.epochs + clf.pretrain_epochs - len(acc))  # never better
    full_loss = loss + [9.0] * (len(full) - len(loss))
    kept = cr.kept_epoch(full, full_loss, planned, patience=3, warmup=0.3)
    assert kept == clf.best_epoch_["finetune"]


@pytest.mark.parametrize("seed", [0, 1])
def test_the_old_rule_replayed_is_the_best_epoch_of_every_epoch(seed):
    X, y, groups = _data(seed)
    clf = SPTClassifier(pretrain=False, patience=None, depth=1, epochs=8, warmup=0.3,
                        random_state=seed, **SMALL).fit(X, y, groups)  # fmt: skip
    acc, loss, steps = _curves(clf)
    old = cr.kept_epoch(acc, loss, steps, patience=None, after_warmup=False)
    assert old == clf.best_epoch_["finetune"]


def test_warm_up_epochs_are_skipped_and_the_early_stop_bounds_the_choice():
    acc = [0.9, 0.5, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.85]  # best: epoch 1, then 10
    loss = [1.0] * 10
    assert cr.kept_epoch(acc, loss, 100, patience=None, after_warmup=False) == 1
    # warm-up is 30 of 100 steps: epochs 1-2 end inside it
    assert cr.kept_epoch(acc, loss, 100, patience=None, warmup=0.3) == 10
    # patience 3 stops at epoch 6 (> 10 // 3 and 3 epochs without improvement)
    assert cr.kept_epoch(acc, loss, 100, patience=3, warmup=0.3) == 3
    assert cr.kept_epoch([0.5, 0.5], [2.0, 1.0], 20, patience=None, after_warmup=False) == 2
    # the run stops once `patience` epochs in a row bring nothing, not one epoch later
    assert cr.kept_epoch([0.6, 0.5, 0.5, 0.5, 0.9], [1.0] * 5, 50, patience=3,
                         after_warmup=False) == 1  # fmt: skip
    # ... and never within the first third of its epochs (epoch 2 of 6 is still inside)
    assert cr.kept_epoch([0.6, 0.5, 0.9, 0.5, 0.5, 0.5], [1.0] * 6, 60, patience=1,
                         after_warmup=False) == 3  # fmt: skip


def _frame(config, fold, value):
    return dict(config=config, depth=1, seed=0, fold=fold, balanced_accuracy=value)


def test_refitted_control_fits_replace_the_stored_ones(tmp_path, monkeypatch):
    import pandas as pd

    from medspt.api import Results

    monkeypatch.setattr(cr, "RESULTS", tmp_path)
    res = Results([_frame("scratch-long", 0, 0.6), _frame("scratch-long", 1, 0.5),
                   _frame("scratch", 1, 0.55)])  # fmt: skip
    res.predictions = pd.DataFrame(
        [dict(config=c, depth=1, seed=0, fold=k, window=k, subject=f"S{k}", label_code=0,
              predicted_code=0) for c, k in (("scratch-long", 0), ("scratch-long", 1),
                                             ("scratch", 1))]
    )  # fmt: skip
    marks = [dict(protocol="X", study="paper-X-default", depth=1, seed=0, fold=1, stored=3,
                  refit=True),
             dict(protocol="X", study="paper-X-default", depth=1, seed=0, fold=0, stored=20,
                  refit=False)]  # fmt: skip
    pd.DataFrame(marks).to_csv(tmp_path / "control_replay.csv")
    same, pending = cr.with_refits("X", res)
    assert pending == 1 and same is res  # nothing refitted yet: the stored rows stand
    csv, pred_dir = cr.refit_paths("X")
    pred_dir.mkdir(parents=True)
    pd.DataFrame([dict(_frame("scratch-long", 1, 0.7), study="paper-X-default", revision="abc",
                       replaced_epoch=3)]).to_csv(csv, index=False)  # fmt: skip
    new = res.predictions.iloc[[1]].assign(predicted_code=1)
    new.to_csv(pred_dir / "depth1_seed0_fold1.csv.gz", index=False)
    out, pending = cr.with_refits("X", res)
    assert pending == 0
    long = out[out["config"] == "scratch-long"].set_index("fold")["balanced_accuracy"]
    assert long.to_dict() == {0: 0.6, 1: 0.7}  # fold 1 refitted, fold 0 as stored
    assert len(out) == 3 and (out["config"] == "scratch").sum() == 1
    p = out.predictions
    assert len(p) == 3
    assert p.loc[(p["config"] == "scratch-long") & (p["fold"] == 1), "predicted_code"].item() == 1
