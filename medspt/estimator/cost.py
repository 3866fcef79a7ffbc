"""What a fit will cost, said before it starts: :func:`estimate_fit`.

A default fit's length is set by its budget (epochs raised to ``min_steps`` optimizer
steps per stage, ensemble members on small sets), not only by the data, so a user cannot
guess it from the number of windows. The estimate plans the stages as
:class:`~medspt.estimator.classifier.SPTClassifier` will (same budget rules, same sizes)
and times a few optimizer steps of the very model on a batch of the data, on this
machine, before any training. Early stopping can end a stage sooner, so the estimate is
an upper bound of the training steps; validation passes add a little.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.base import clone

from medspt.nn.model import SPTTransformer
from medspt.nn.training import masked_mse, resolve_device

__all__ = ["CostEstimate", "duration_text", "estimate_fit"]

PROBE_STEPS = 3  # timed optimizer steps per stage, after one untimed (first-call costs)


@dataclass
class CostEstimate:
    """Planned optimizer steps of one fit and their measured cost on this machine.

    Attributes
    ----------
    n_windows, n_train : int
        Windows given, and those that train (the rest are validation subjects').
    members : int
        Models trained (``n_estimators``).
    pretrain_steps, finetune_steps : int
        Optimizer steps per member (at most: early stopping may end a stage sooner).
    pretrain_step_s, finetune_step_s : float
        Seconds per step, timed on a batch of the data.
    """

    n_windows: int
    n_train: int
    members: int
    pretrain_steps: int
    finetune_steps: int
    pretrain_step_s: float
    finetune_step_s: float

    @property
    def steps(self) -> int:
        """Optimizer steps of the whole fit (every member, both stages)."""
        return self.members * (self.pretrain_steps + self.finetune_steps)

    @property
    def seconds(self) -> float:
        """Expected seconds of the whole fit, at most."""
        per_member = (
            self.pretrain_steps * self.pretrain_step_s + self.finetune_steps * self.finetune_step_s
        )
        return self.members * per_member

    def __str__(self) -> str:
        stages = (
            f"{self.pretrain_steps:,} pretraining + {self.finetune_steps:,} fine-tuning"
            if self.pretrain_steps
            else f"{self.finetune_steps:,} training"
        )
        members = f" × {self.members} members" if self.members > 1 else ""
        step_ms = 1000 * max(self.pretrain_step_s, self.finetune_step_s)
        return (
            f"cost: {self.n_train:,} training windows, {stages} optimizer steps{members} "
            f"(at most; early stopping may end sooner), about {step_ms:.0f} ms per step "
            f"here: about {duration_text(self.seconds)} per fit"
        )


def duration_text(seconds: float) -> str:
    """``seconds`` in the unit a person reads: ``"42 s"``, ``"7 min"``, ``"1.5 h"``."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def estimate_fit(
    clf, X: np.ndarray, y: np.ndarray, n_unlabelled: int = 0, probe: bool = True
) -> CostEstimate:
    """Plan a fit of ``clf`` on windows ``X (N, C, T)`` with labels ``y`` and time it.

    Parameters
    ----------
    clf : SPTClassifier
        Unfitted settings (not changed: a clone is sized).
    X : ndarray of shape (N, C, T)
    y : array-like of shape (N,)
    n_unlabelled : int, default=0
        Unlabelled windows pretraining reconstructs as well.
    probe : bool, default=True
        Time a few steps of the model on ``X``; False gives steps only (0 s per step).

    Returns
    -------
    CostEstimate
    """
    est = clone(clf)
    X = np.asarray(X, dtype=np.float32)
    n = len(X)
    # the validation subjects' share of windows, as fit holds them out (whole subjects)
    n_train = max(1, int(round(n * (1.0 - float(est.val_size))))) if est.val_size else n
    n_pretrain = n_train + int(n_unlabelled)
    est.classes_ = np.unique(np.asarray(y))
    est._resolve_sizes(X, n_train=n_train)
    spe = -(-n_pretrain // est.batch_size_)
    pre = est._stage_epochs(est.pretrain_epochs, n_pretrain) * spe if est._pretrains() else 0
    fine = est._finetune_epochs(n_train, n_pretrain) * -(-n_train // est.batch_size_)
    pre_s = fine_s = 0.0
    if probe:
        pre_s, fine_s = _time_steps(est, X, len(est.classes_))
    return CostEstimate(
        n_windows=n,
        n_train=n_train,
        members=int(est.n_estimators_),
        pretrain_steps=int(pre),
        finetune_steps=int(fine),
        pretrain_step_s=pre_s,
        finetune_step_s=fine_s,
    )


def _time_steps(est, X: np.ndarray, n_classes: int) -> tuple[float, float]:
    """Seconds per pretraining and per fine-tuning step of ``est``'s model on a batch
    of ``X`` (standardized per channel), on the device the fit will use."""
    config = est._model_config(n_channels=X.shape[1], n_steps=X.shape[2])
    gen = torch.Generator().manual_seed(0)
    rng = np.random.default_rng(0)
    batch = X[rng.choice(len(X), size=min(len(X), est.batch_size_), replace=len(X) < 2)]
    with np.errstate(all="ignore"):
        mean = np.nanmean(batch, axis=(0, 2), keepdims=True)
        std = np.nanstd(batch, axis=(0, 2), keepdims=True)
    xb = torch.from_numpy(np.nan_to_num((batch - mean) / np.where(std > 0, std, 1.0)))
    yb = torch.randint(0, n_classes, (len(xb),), generator=gen)
    dev = resolve_device(est.device)
    xb, yb = xb.to(dev), yb.to(dev)
    model = SPTTransformer(config).to(dev)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def pretrain_step():
        hidden = (torch.rand(xb.shape, generator=gen) < float(est.mask_ratio)).to(dev)
        target = model.instance_normalize(xb, hidden)
        return masked_mse(model.reconstruct(xb, hidden), target, hidden)

    def finetune_step():
        return F.cross_entropy(model(xb), yb)

    def seconds(step) -> float:
        for i in range(PROBE_STEPS + 1):
            if i == 1:  # the first step pays one-off costs (allocation, kernel choice)
                t0 = time.perf_counter()
            opt.zero_grad(set_to_none=True)
            step().backward()
            opt.step()
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)  # the steps were queued, not yet run
        return (time.perf_counter() - t0) / PROBE_STEPS

    return seconds(pretrain_step), seconds(finetune_step)
