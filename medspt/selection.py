"""Choosing a configuration by validation subjects only, and refitting it.

:func:`nested_best` makes the choice inside every outer fold (an honest estimate of
"pick the best, then fit"); :func:`choose_configuration` makes it once over all folds,
and :func:`refit_best` fits that choice on all subjects, keeping the numbers behind it
in the model's ``evaluation_``. Test folds are never looked at.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from medspt.configs import config_params
from medspt.data import WindowSet, WindowSpec
from medspt.errors import InputError
from medspt.estimator import SPTClassifier
from medspt.results import Results, chance_of, config_predictions, config_rows

__all__ = ["SELECTION_RULE", "choose_configuration", "nested_best", "refit_best"]


def nested_best(results: pd.DataFrame, name: str = "nested-best") -> Results:
    """The configuration chosen inside each outer fold by its validation subjects only.

    For every fold, each configuration (config × depth) is scored by ``val_score`` (the
    balanced accuracy of its kept epoch on the validation subjects held out of that fold's
    training part), averaged over seeds; the highest wins (ties: the first in the rows'
    order). Test scores are never looked at, so the returned rows — the winner's rows of
    each fold, renamed ``name`` with the winner in ``chosen`` — are an honest estimate of
    "pick the best configuration", to be compared with baselines on the same folds.
    Configurations without validation scores (``val_size=0``) cannot take part.
    """
    if "val_score" not in results.columns:
        raise InputError(
            "nested selection needs validation scores (a val_score column): fit with val_size > 0"
        )
    rows, preds = [], []
    for k, g in results.groupby("fold", sort=True):
        scores = (
            g.groupby(["config", "depth"], sort=False, dropna=False)["val_score"].mean().dropna()
        )
        if scores.empty:
            raise InputError(f"fold {k} has no configuration with a validation score")
        config, depth = scores.idxmax()
        win = config_rows(g, config, depth)
        rows.append(win.assign(config=name, depth=np.nan, chosen=f"{config} (depth {depth})"))
        sel = config_predictions(results, config, depth)
        if sel is not None:
            preds.append(sel[sel["fold"] == k].assign(config=name, depth=np.nan))
    out = Results(pd.concat(rows, ignore_index=True))
    out.predictions = pd.concat(preds, ignore_index=True) if preds else None
    out.classes = getattr(results, "classes", None)
    return out


SELECTION_RULE = (
    "the configuration (config × depth) with the highest validation score (balanced "
    "accuracy of its kept epoch on the validation subjects held out of each training "
    "part), averaged over folds and seeds; test folds are never looked at; ties go to "
    "the first configuration in the grid's order"
)


def choose_configuration(results: pd.DataFrame) -> dict:
    """The configuration a refit uses, chosen by validation subjects only
    (:data:`SELECTION_RULE`).

    Returns ``{"config", "depth", "val_score", "candidates"}`` (``candidates``: every
    configuration's mean validation score, in the grid's order).
    """
    if "val_score" not in results.columns or results["val_score"].notna().sum() == 0:
        raise InputError(
            "choosing a configuration needs validation scores (val_score): fit with "
            "val_size > 0 and at least 4 training subjects per fold"
        )
    scores = results.groupby(["config", "depth"], sort=False, dropna=False)["val_score"]
    scores = scores.mean().dropna()
    config, depth = scores.idxmax()  # first maximum: ties go to the earlier configuration
    return {
        "config": str(config),
        "depth": int(depth),
        "val_score": float(scores.max()),
        "candidates": {f"{c} (depth {int(d)})": float(v) for (c, d), v in scores.items()},
    }


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
) -> SPTClassifier:
    """Fit the configuration chosen by :func:`choose_configuration` on all of ``ws``.

    ``params`` are the settings every configuration shared; the seed is the smallest of
    the evaluation; ``maskings`` maps ``spt-<name>`` to a custom masking callable. The
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
    clf.fit(ws, groups=ws.groups)
    clf.frame_spec_ = spec
    saved = {k: v for k, v in est_params.items() if not callable(v)}
    clf.evaluation_ = _selection_record(results, chosen, metric, source, saved)
    return clf
