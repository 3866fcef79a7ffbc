"""The compute-matched control (scratch-long) stops like scratch and never keeps a
checkpoint from inside its warm-up (issue 59)."""

import numpy as np
import pytest

from medspt import SPTClassifier
from medspt.evaluation.configs import config_params
from medspt.nn.training import warmup_steps


def _data(seed=0, n_subjects=12, per=8, T=32):
    rng = np.random.default_rng(seed)
    groups = np.repeat([f"s{i}" for i in range(n_subjects)], per)
    y = np.tile(np.arange(per) % 2, n_subjects)
    t = np.arange(T)
    X = rng.normal(size=(len(y), 2, T)).astype("float32")
    X[:, 0] += np.where(y[:, None] == 1, np.sin(t / 2), np.cos(t / 2))  # a learnable cue
    return X, np.array(["a", "b"])[y], groups


def test_scratch_long_keeps_scratch_early_stopping():
    params = config_params("scratch-long", depth=1, seed=0, params={"patience": 3})
    assert params["steps_like_spt"] is True and params["pretrain"] is False
    assert params["patience"] == 3  # scratch's rule, not patience=None
    assert "patience" not in config_params("scratch-long", 1, 0)  # the default, as scratch


@pytest.mark.parametrize("seed", [0, 1])
def test_scratch_long_never_keeps_a_warm_up_epoch(seed):
    X, y, groups = _data(seed)
    clf = SPTClassifier(
        **config_params("scratch-long", depth=1, seed=seed),
        d_model=16, n_heads=2, epochs=2, pretrain_epochs=6, min_steps=0, batch_size=16,
        warmup=0.4, val_size=0.34, n_estimators=1,
    )  # fmt: skip
    clf.fit(X, y, groups)
    history = clf.history_["finetune"]
    steps = np.cumsum([r["steps"] for r in history])
    total = steps[-1] if len(history) == clf.best_epoch_["finetune"] else None
    kept = clf.best_epoch_["finetune"]
    # the schedule's warm-up counts the planned steps of every epoch
    planned = (clf.epochs + clf.pretrain_epochs) * history[0]["steps"]
    assert total is None or total <= planned
    n_warm = warmup_steps(planned, clf.warmup)
    assert n_warm > history[0]["steps"]  # warm-up spans several epochs here
    assert steps[kept - 1] >= n_warm, (kept, steps.tolist(), n_warm)


def test_plain_scratch_may_still_keep_an_early_epoch():
    """The rule is the control's only: scratch (the frozen default) is unchanged."""
    X, y, groups = _data(0)
    kw = dict(d_model=16, n_heads=2, epochs=8, min_steps=0, batch_size=16, warmup=0.4,
              val_size=0.34, n_estimators=1, depth=1)  # fmt: skip
    clf = SPTClassifier(pretrain=False, **kw).fit(X, y, groups)
    assert clf._train_config(0, 8).keep_after_warmup is False
    long = SPTClassifier(pretrain=False, steps_like_spt=True, **kw).fit(X, y, groups)
    assert long._train_config(0, 8).keep_after_warmup is True


def _scripted_loop(scores, keep_after_warmup, steps_per_epoch=4, warmup=0.1, patience=None):
    """The training loop on a one-parameter model whose validation scores are ``scores``
    (one per epoch): returns the epoch it keeps."""
    import torch

    from medspt.nn.training import TrainConfig, _fit_loop

    model = torch.nn.Linear(1, 1)
    params = list(model.parameters())
    rows = iter(scores)

    def step(idx, gen):
        return (model.weight**2).sum()

    def evaluate():
        return {"val_loss": 1.0, "val_balanced_accuracy": next(rows)}

    cfg = TrainConfig(epochs=len(scores), batch_size=1, warmup=warmup, patience=patience,
                      keep_after_warmup=keep_after_warmup, verbose=False)  # fmt: skip
    _, kept = _fit_loop(model, params, step, evaluate, steps_per_epoch, cfg, "t",
                        monitor="val_balanced_accuracy")  # fmt: skip
    return kept


def test_an_epoch_that_ends_exactly_when_warm_up_ends_may_be_kept():
    # 10 epochs of 4 steps: warm-up is the first 4 steps, so epoch 1 ends as it ends
    scores = [0.9, 0.5, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6]
    assert _scripted_loop(scores, keep_after_warmup=True) == 1
    # with a warm-up of 8 steps, epoch 1 ends inside it and is skipped
    assert _scripted_loop(scores, keep_after_warmup=True, warmup=0.2) == 3
    assert _scripted_loop(scores, keep_after_warmup=False, warmup=0.2) == 1
