"""Which medspt configuration a user gets, chosen by validation subjects only.

:func:`nested_best` makes the choice inside every outer fold (an honest estimate of
"pick the best, then fit"), :func:`choose_configuration` once over all folds (what a
refit uses), and :func:`chosen_rows` is the medspt side of every comparison with a
baseline. Test folds are never looked at. No torch here: tables and reports import it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from medspt.baselines import BASELINES, NAMES
from medspt.core.errors import InputError
from medspt.core.warn import warn
from medspt.evaluation.results import Results, config_predictions, config_rows

__all__ = [
    "MIN_CHOICE_SUBJECTS",
    "NESTED",
    "SELECTION_RULE",
    "baseline_configs",
    "choose_configuration",
    "chosen_rows",
    "display_name",
    "nested_best",
    "versus_frame",
]

NESTED = "nested-best"

#: Fewer validation subjects than this in a fold, and a choice between configurations a
#: few points apart is mostly chance (one subject moves a balanced accuracy by 5-25 points).
MIN_CHOICE_SUBJECTS = 6


def validation_subjects_per_fold(results: pd.DataFrame) -> pd.Series:
    """How many validation subjects each fold's fits held out (the most over its rows),
    from the ``val_subjects`` column; empty when the rows do not say."""
    if "val_subjects" not in results.columns:
        return pd.Series(dtype=int)
    counts = results["val_subjects"].fillna("").astype(str).str.split().str.len()
    return counts.groupby(results["fold"]).max().astype(int)


def warn_few_validation_subjects(results: pd.DataFrame, what: str) -> None:
    """Warn when ``what`` (a choice between configurations) rests on fewer than
    :data:`MIN_CHOICE_SUBJECTS` validation subjects in some fold."""
    per_fold = validation_subjects_per_fold(results)
    per_fold = per_fold[per_fold > 0]
    n_configs = len(results[["config", "depth"]].drop_duplicates())
    if n_configs < 2 or per_fold.empty or per_fold.min() >= MIN_CHOICE_SUBJECTS:
        return
    warn(
        f"{what} rests on {per_fold.min()} validation subject{'s' if per_fold.min() != 1 else ''} "
        f"in fold {per_fold.idxmin()} "
        f"(fewer than {MIN_CHOICE_SUBJECTS}): configurations a few points apart are not "
        "told apart by so few subjects. Read the choice as tentative, or give it more "
        "subjects (more data, or a larger val_size)"
    )


def nested_best(results: pd.DataFrame, name: str = NESTED) -> Results:
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
    warn_few_validation_subjects(results, "the nested choice")
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
    if len(scores) > 1:
        warn_few_validation_subjects(results, "the choice of a configuration")
    config, depth = scores.idxmax()  # first maximum: ties go to the earlier configuration
    return {
        "config": str(config),
        "depth": int(depth),
        "val_score": float(scores.max()),
        "candidates": {f"{c} (depth {int(d)})": float(v) for (c, d), v in scores.items()},
    }


def baseline_configs(results: pd.DataFrame) -> list[str]:
    """The baselines (:data:`medspt.baselines.BASELINES`) with rows in ``results``, in
    row order."""
    return [c for c in pd.unique(results["config"]) if c in BASELINES]


def chosen_rows(results: pd.DataFrame) -> tuple[Results, tuple[str, float], str]:
    """The medspt side of a comparison with a baseline, chosen without the test folds.

    Returns the rows (with predictions) of :func:`nested_best` when the fits have
    validation scores; else of the grid's first SPT configuration (the first
    configuration when none is SPT), declared before any score is seen. Also the
    ``(config, depth)`` key of those rows and how they were chosen, in words.
    """
    own = results[~results["config"].isin(list(BASELINES))]
    if not len(own):
        raise InputError("no medspt configuration in the results to set against a baseline")
    keys = own[["config", "depth"]].drop_duplicates()
    if len(keys) == 1:  # nothing to choose between
        config, depth = keys.iloc[0]
        only = "the only medspt configuration fitted"
        return _rows_of(results, config, depth), (str(config), depth), only
    if "val_score" in own.columns and own["val_score"].notna().any():
        sub = Results(own)
        sub.predictions = _own_predictions(results)
        sub.classes = getattr(results, "classes", None)
        try:
            nested = nested_best(sub)
            return nested, (NESTED, np.nan), "chosen in each fold by its validation subjects"
        except InputError:  # a fold without validation scores
            pass
    spt = keys[keys["config"].astype(str).str.startswith("spt-")]
    config, depth = (spt if len(spt) else keys).iloc[0]
    rows = Results(config_rows(results, config, depth))
    rows.predictions = config_predictions(results, config, depth)
    rows.classes = getattr(results, "classes", None)
    why = "no validation scores to choose by, so the grid's first " + (
        "SPT configuration" if len(spt) else "configuration"
    )
    return rows, (str(config), depth), why


def _rows_of(results: pd.DataFrame, config: str, depth) -> Results:
    rows = Results(config_rows(results, config, depth))
    rows.predictions = config_predictions(results, config, depth)
    rows.classes = getattr(results, "classes", None)
    return rows


def _own_predictions(results: pd.DataFrame) -> pd.DataFrame | None:
    pred = getattr(results, "predictions", None)
    if pred is None or not len(pred):
        return None
    return pred[~pred["config"].isin(list(BASELINES))]


def display_name(config: str) -> str:
    """A baseline's name as people write it (``MiniRocket``); other names unchanged."""
    return NAMES.get(config, config)


def versus_frame(results: pd.DataFrame) -> tuple[Results, tuple[str, float], str]:
    """``results`` with the medspt side's rows added when they are not rows of it already
    (the ``nested-best`` rows), its ``(config, depth)`` key and how it was chosen."""
    side, key, why = chosen_rows(results)
    if key[0] != NESTED:
        return results, key, why
    both = Results(pd.concat([results, side], ignore_index=True))
    pred = getattr(results, "predictions", None)
    both.predictions = (
        pd.concat([pred, side.predictions], ignore_index=True)
        if pred is not None and side.predictions is not None
        else None
    )
    both.classes = getattr(results, "classes", None)
    return both, key, why
