"""The configuration a study found best, refitted on all of its subjects."""

from __future__ import annotations

import optuna
import pandas as pd

from medspt.core.errors import InputError
from medspt.estimator.classifier import SPTClassifier
from medspt.evaluation.selection import choose_configuration, refit_best
from medspt.study.data import load_study_data
from medspt.study.report import results_frame

__all__ = ["refit_study"]


def _tuned_params(results: pd.DataFrame, chosen: dict) -> dict:
    """For a tuned study: the parameters tuned in the chosen configuration's fold with the
    best validation score (every fold tunes its own; validation subjects decide)."""
    cols = [c for c in results.columns if c.startswith("tuned_")]
    if not cols:
        return {}
    rows = results[(results["config"] == chosen["config"]) & (results["depth"] == chosen["depth"])]
    best = rows.loc[rows["val_score"].idxmax(), cols].dropna()
    return {
        c.removeprefix("tuned_"): v.item() if hasattr(v, "item") else v for c, v in best.items()
    }


def refit_study(
    study: optuna.Study, metric: str | None = None, verbose: bool = False
) -> SPTClassifier:
    """Fit the configuration of ``study`` with the best validation score on all subjects.

    The choice uses only the validation subjects held out inside each fold's training
    part (:func:`medspt.evaluation.selection.choose_configuration`); the study's data are
    loaded as its
    workers load them. The model's ``evaluation_`` (saved in its file) records the
    choice, every candidate's validation score, the chosen configuration's
    cross-validated score, the nested estimate and the chance levels.
    """
    attrs = study.user_attrs.get("medspt")
    if not attrs:
        raise InputError(f"study {study.study_name!r} was not created by medspt study run")
    results = results_frame(study)
    if results.empty:
        raise InputError(f"study {study.study_name!r} has no completed cells yet")
    ws, _, spec = load_study_data(attrs["data"], with_spec=True)
    params = dict(attrs.get("params") or {})
    params.update(_tuned_params(results, choose_configuration(results)))
    return refit_best(
        ws,
        results,
        params,
        spec=spec,
        metric=metric or attrs.get("metric", "balanced_accuracy"),
        source=f"study {study.study_name}",
        verbose=verbose,
    )
