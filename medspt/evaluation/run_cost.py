"""What an evaluation will cost, said before its first fit: :func:`evaluation_estimate`.

Each configuration is planned once on the first fold's training windows
(:func:`medspt.estimator.cost.estimate_fit`: its budget and a few timed steps of its
model on this machine) and multiplied by its folds and seeds. Baselines are counted,
not timed (MiniRocket takes seconds to a minute per fold).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from medspt.baselines import BASELINES
from medspt.data.windowset import WindowSet
from medspt.estimator.classifier import SPTClassifier
from medspt.estimator.cost import CostEstimate, duration_text, estimate_fit
from medspt.evaluation.configs import config_params

__all__ = ["evaluation_estimate"]


def evaluation_estimate(
    ws: WindowSet,
    folds: list,
    configs: list[dict],
    seeds: Sequence[int],
    params: dict,
    n_unlabelled: int = 0,
) -> str:
    """One paragraph: fits per configuration, their planned optimizer steps, the time per
    step measured here and the expected total, before anything is trained."""
    train = np.asarray(folds[0][0])
    X, y = ws.X[train], ws.classes[ws.y[train]]
    n_runs = len(folds) * len(seeds)
    parts, total, n_baselines = [], 0.0, 0
    probed: dict[tuple, CostEstimate] = {}
    for c in configs:
        if c["config"] in BASELINES:
            n_baselines += n_runs
            continue
        shared = dict(params) if c["masking"] is None else dict(params, masking=c["masking"])
        est_params = config_params(c["config"], c["depth"], int(seeds[0]), shared)
        est_params.pop("verbose", None)
        clf = SPTClassifier(**est_params)
        uses = est_params.get("pretrain", True) or est_params.get("steps_like_spt")
        # the step costs depend on the model's shape only: time each shape once
        shape = (c["depth"], est_params.get("d_model"), est_params.get("attention"))
        cost = estimate_fit(clf, X, y, n_unlabelled if uses else 0, probe=shape not in probed)
        if shape in probed:
            cost.pretrain_step_s = probed[shape].pretrain_step_s
            cost.finetune_step_s = probed[shape].finetune_step_s
        else:
            probed[shape] = cost
        total += n_runs * cost.seconds
        members = f" × {cost.members} members" if cost.members > 1 else ""
        depths = {k["depth"] for k in configs if k["config"] not in BASELINES}
        depth = f" (depth {c['depth']})" if len(depths) > 1 else ""
        parts.append(f"{c['config']}{depth}: {n_runs} fits of up to {cost.steps:,} steps{members}")
    steps = [max(p.pretrain_step_s, p.finetune_step_s) for p in probed.values()]
    step_ms = 1000 * max(steps, default=0.0)
    baselines = ""
    if n_baselines:
        baselines = f", plus {n_baselines} baseline fits (seconds to a minute each)"
    return (
        f"Plan: {len(folds)} folds × {len(seeds)} seed(s), {len(train):,} training windows in "
        f"fold 1. " + "; ".join(parts) + f". About {step_ms:.0f} ms per optimizer step on "
        f"this machine (timed just now): at most about {duration_text(total)} of training"
        f"{baselines}. Early stopping often ends a stage sooner."
    )
