"""Window- and subject-level metrics for subject-wise evaluation."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.metrics import accuracy_score, balanced_accuracy_score, f1_score, roc_auc_score

__all__ = [
    "classification_metrics",
    "predictions_frame",
    "subject_predictions",
    "subject_table",
]


def subject_predictions(proba: np.ndarray, groups: np.ndarray, y: np.ndarray) -> pd.DataFrame:
    """Aggregate window probabilities per subject (mean probability, then argmax).

    Returns one row per subject with the predicted class code and the subject's true
    class code, or an empty frame when some subject has windows of several classes
    (then a subject-level label does not exist, as in stress-phase data).
    """
    df = pd.DataFrame(proba)
    df["group"], df["y"] = groups, y
    if (df.groupby("group")["y"].nunique() > 1).any():
        return pd.DataFrame(columns=["group", "y", "pred"])
    agg = df.groupby("group").mean(numeric_only=True)
    k = proba.shape[1]
    return pd.DataFrame(
        {
            "group": agg.index,
            "y": agg["y"].astype(int).to_numpy(),
            "pred": agg[list(range(k))].to_numpy().argmax(1),
        }
    )


def classification_metrics(
    y: np.ndarray, proba: np.ndarray, groups: np.ndarray | None = None
) -> dict[str, float]:
    """Window accuracy, balanced accuracy, macro F1, ROC AUC (binary) and, when each
    subject has one label, subject accuracy from mean window probabilities."""
    pred = proba.argmax(1)
    labels = np.arange(proba.shape[1])
    out = {
        "accuracy": accuracy_score(y, pred),
        "balanced_accuracy": balanced_accuracy_score(y, pred),
        "macro_f1": f1_score(y, pred, labels=labels, average="macro", zero_division=0),
    }
    if proba.shape[1] == 2 and len(np.unique(y)) == 2:
        out["roc_auc"] = roc_auc_score(y, proba[:, 1])
    else:
        out["roc_auc"] = np.nan
    out["subject_accuracy"] = np.nan
    if groups is not None:
        subj = subject_predictions(proba, groups, y)
        if len(subj):
            out["subject_accuracy"] = float((subj["y"] == subj["pred"]).mean())
    return {k: float(v) for k, v in out.items()}


def predictions_frame(
    window: np.ndarray,
    subject: np.ndarray,
    y: np.ndarray,
    proba: np.ndarray,
    classes,
    pred: np.ndarray | None = None,
    **keys,
) -> pd.DataFrame:
    """Window-level out-of-fold predictions of one fit, the layout every medspt table of
    predictions shares: ``keys`` (config, depth, seed, fold), ``window``, ``subject``,
    ``y``, ``pred`` (argmax of ``proba`` unless given) and one ``proba_<class>`` column
    per class."""
    proba = np.asarray(proba, dtype=float)
    n = len(proba)
    frame = pd.DataFrame(
        {
            **{k: [v] * n for k, v in keys.items()},
            "window": np.asarray(window),
            "subject": np.asarray(subject).astype(str),
            "y": np.asarray(y),
            "pred": proba.argmax(1) if pred is None else np.asarray(pred),
        }
    )
    probs = pd.DataFrame(proba, columns=[f"proba_{c}" for c in classes])
    return pd.concat([frame, probs], axis=1)


def subject_table(predictions: pd.DataFrame) -> pd.DataFrame:
    """Per-subject view of window-level out-of-fold predictions.

    One row per configuration, depth, seed and subject: its fold, number of windows,
    windows right, window accuracy, the subject's label (when all its windows share one,
    else NaN), the class with the highest mean probability (``predicted``) and the mean
    probability of each class.
    """
    keys = [k for k in ("config", "depth", "seed") if k in predictions.columns]
    cols = [c for c in predictions.columns if str(c).startswith("proba_")]
    frame = predictions.assign(right=predictions["pred"] == predictions["y"])
    g = frame.groupby([*keys, "subject"], sort=True, dropna=False)
    out = g.agg(
        fold=("fold", "first"),
        n_windows=("window", "size"),
        n_right=("right", "sum"),
        labels=("y", "nunique"),
        label=("y", "first"),
    )
    out["accuracy"] = out["n_right"] / out["n_windows"]
    out["label"] = out["label"].where(out["labels"] == 1)
    mean = g[cols].mean()
    out["predicted"] = mean.to_numpy().argmax(1)
    out = out.drop(columns="labels").join(mean)
    return out.reset_index()
