"""Refitting the configuration chosen by validation subjects only.

The choice itself (:func:`nested_best`, :func:`choose_configuration`) lives in
:mod:`medspt.evaluation.choice`; :func:`refit_best` fits it on all subjects, keeping the numbers
behind it in the model's ``evaluation_``. Test folds are never looked at.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from medspt.core.errors import InputError
from medspt.data.windowset import WindowSet, WindowSpec
from medspt.estimator.classifier import SPTClassifier
from medspt.evaluation.choice import SELECTION_RULE, choose_configuration, nested_best
from medspt.evaluation.configs import config_params
from medspt.evaluation.results import chance_of, config_rows

__all__ = ["SELECTION_RULE", "choose_configuration", "nested_best", "refit_best"]


def _selection_record(
    results: pd.DataFrame, chosen: dict, metric: str, source: str, params: dict
) -> dict:
    """What a refitted model keeps of the evaluation it came from (saved in its file)."""
    rows = config_rows(results, chosen["config"], chosen["depth"])
    per_fold = rows.groupby("fold")[metric].mean()  # seeds of a fold averaged
    record = {
        "source": source,
        "rule": SELECTION_RULE,
        "chosen": {**{k: chosen[k] for k in ("config", "depth")}, "params": params},
        "val_score": chosen["val_score"],
        "candidates": chosen["candidates"],
        "metric": metric,
        "cv_mean": float(per_fold.mean()),
        "cv_std": float(per_fold.std(ddof=1)) if len(per_fold) > 1 else None,
        "n_folds": int(len(per_fold)),
        "n_seeds": int(rows["seed"].nunique()),
        "chance": chance_of(results, metric),
    }
    try:  # the honest estimate of "choose, then fit": the choice made inside each fold
        nested = nested_best(results)
        fold_means = nested.groupby("fold")[metric].mean()
        record["nested_mean"] = float(fold_means.mean())
        record["nested_chosen"] = nested.groupby("fold")["chosen"].first().tolist()
    except InputError:
        record["nested_mean"] = None
    return record


def refit_best(
    ws: WindowSet,
    results: pd.DataFrame,
    params: dict | None = None,
    *,
    spec: WindowSpec | None = None,
    metric: str = "balanced_accuracy",
    source: str = "evaluate",
    maskings: Mapping | None = None,
    verbose: bool = False,
    unlabelled: WindowSet | None = None,
) -> SPTClassifier:
    """Fit the configuration chosen by :func:`choose_configuration` on all of ``ws``.

    ``params`` are the settings every configuration shared; the seed is the smallest of
    the evaluation; ``maskings`` maps ``spt-<name>`` to a custom masking callable;
    ``unlabelled`` windows join the pretraining of a self-pretrained choice. The
    model keeps in ``evaluation_`` (and in its file) the choice, the rule, every
    candidate's validation score, the chosen configuration's cross-validated ``metric``
    (``cv_mean``, seeds averaged within folds), the nested estimate of choosing then
    fitting (``nested_mean``, :func:`nested_best`) and the chance levels.
    """
    chosen = choose_configuration(results)
    shared = dict(params or {})
    if chosen["config"].startswith("spt-") and maskings and chosen["config"] in maskings:
        shared["masking"] = maskings[chosen["config"]]
    seed = int(results["seed"].min())
    est_params = config_params(chosen["config"], chosen["depth"], seed, shared)
    clf = SPTClassifier(**{**est_params, "verbose": verbose})
    uses = est_params["pretrain"] or est_params.get("steps_like_spt")
    Xu, gu = (unlabelled.X, unlabelled.groups) if unlabelled is not None and uses else (None, None)
    clf.fit(ws, groups=ws.groups, X_unlabelled=Xu, groups_unlabelled=gu)
    clf.frame_spec_ = spec
    saved = {k: v for k, v in est_params.items() if not callable(v)}
    clf.evaluation_ = _selection_record(results, chosen, metric, source, saved)
    return clf
