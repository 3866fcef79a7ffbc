"""Evaluation results: the rows of every fit with their out-of-fold predictions.

:class:`Results` is what :func:`medspt.evaluate` returns and what a study's
``results_frame`` rebuilds; the helpers select one configuration's rows and
predictions and read the chance levels of a metric, for the comparisons, the choice of
a configuration and the tables built on top.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from medspt.estimator.metrics import (
    CHANCE_METRICS,
    chance_table,
    class_report,
    confusion_frame,
    subject_table,
)

__all__ = ["Results", "chance_of", "config_predictions", "config_rows"]


class Results(pd.DataFrame):
    """:func:`medspt.evaluate`'s result rows (one per fold × configuration × seed), a DataFrame
    that also carries the window-level out-of-fold predictions as ``.predictions``
    (columns ``config, depth, seed, fold, window, subject, y, pred, proba_<class>``;
    ``y``/``pred`` are codes into ``.classes``). :func:`medspt.summarize` tests over subjects
    when they are there.

    Views of the out-of-fold predictions (None without them): ``.subjects`` (one row per
    configuration, depth, seed and subject: label, predicted class, its mean probability,
    windows), ``.confusion`` (confusion matrices in long form: true, predicted, count of
    windows) and ``.per_class`` (precision, recall, F1, support per class);
    :meth:`chance` gives the chance levels of a metric. With ``evaluate(refit=True)``,
    ``.best_estimator_`` is the chosen configuration refitted on all subjects and
    ``.chosen_`` says how it was chosen. :func:`medspt.compare` adds ``.versus``, its
    paired answer (:func:`medspt.evaluation.versus.versus_baseline`). ``.probes``: the
    confound probes on the same folds (:func:`medspt.evaluation.probes.probe_table`: what
    a model that sees only a window's position, its channel means, or its channel means
    and log standard deviations scores; None when not computed), which
    :func:`medspt.summarize` shows beside the chance levels. ``.dropped``: what cutting the
    table into windows left out or split (``WindowSet.dropped``; absent when not known)."""

    _metadata = [
        "predictions", "classes", "best_estimator_", "chosen_", "versus", "probes", "dropped"
    ]  # fmt: skip

    @property
    def _constructor(self):
        return Results

    @property
    def subjects(self) -> pd.DataFrame | None:
        pred = getattr(self, "predictions", None)
        return None if pred is None else subject_table(pred)

    @property
    def confusion(self) -> pd.DataFrame | None:
        pred = getattr(self, "predictions", None)
        return None if pred is None else confusion_frame(pred, self._class_names(pred))

    @property
    def per_class(self) -> pd.DataFrame | None:
        pred = getattr(self, "predictions", None)
        return None if pred is None else class_report(pred, self._class_names(pred))

    @staticmethod
    def _class_names(pred: pd.DataFrame) -> list[str]:
        return [str(c).removeprefix("proba_") for c in pred.columns if str(c).startswith("proba_")]

    def chance(self, metric: str = "balanced_accuracy") -> dict:
        """Chance levels of ``metric`` on the evaluated windows (subjects for
        ``subject_accuracy``): ``{"majority": ..., "uniform": ...}``
        (:func:`medspt.estimator.metrics.chance_levels`); NaN without out-of-fold predictions or
        for a metric without a chance level."""
        pred = getattr(self, "predictions", None)
        if pred is None or not len(pred) or metric not in CHANCE_METRICS:
            return {"majority": np.nan, "uniform": np.nan}  # e.g. wall_time_s has none
        return chance_table(pred, len(self._class_names(pred)), metric)


def config_rows(results: pd.DataFrame, config: str, depth) -> pd.DataFrame:
    """The rows of one configuration at one depth (a NaN depth matches NaN depths)."""
    same_depth = results["depth"].isna() if pd.isna(depth) else results["depth"] == depth
    return results[same_depth & (results["config"] == config)]


def config_predictions(results: pd.DataFrame, config: str, depth) -> pd.DataFrame | None:
    """The out-of-fold predictions of one configuration at one depth (None without)."""
    pred = getattr(results, "predictions", None)
    if pred is None or not len(pred):
        return None
    same_depth = pred["depth"].isna() if pd.isna(depth) else pred["depth"] == depth
    sel = pred[same_depth & (pred["config"] == config)]
    return sel if len(sel) else None


def chance_of(results: pd.DataFrame, metric: str) -> dict:
    """Chance levels of ``metric`` from a results frame's out-of-fold predictions."""
    if isinstance(results, Results) and metric in CHANCE_METRICS:
        return results.chance(metric)
    pred = getattr(results, "predictions", None)
    if pred is None or not len(pred) or metric not in CHANCE_METRICS:
        return {"majority": np.nan, "uniform": np.nan}
    return chance_table(pred, len(Results._class_names(pred)), metric)
