"""Window- and subject-level metrics for subject-wise evaluation."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.metrics import (
    accuracy_score,
    balanced_accuracy_score,
    confusion_matrix,
    f1_score,
    precision_recall_fscore_support,
    roc_auc_score,
)

__all__ = [
    "RECORDING_LEVEL_NA",
    "chance_levels",
    "chance_table",
    "changing_recordings",
    "class_report",
    "classification_metrics",
    "confusion_frame",
    "predictions_frame",
    "read_predictions",
    "recording_level",
    "subject_predictions",
    "subject_table",
]

# what stands in for the recording level when a recording has no single label
RECORDING_LEVEL_NA = "n/a: labels change inside recordings"


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
    ``label`` and ``predicted`` (class names; ``predicted`` is the argmax of ``proba``
    unless ``pred`` codes are given), their class codes ``label_code`` and
    ``predicted_code`` (positions in ``classes``), and one ``proba_<class>`` column per
    class."""
    proba = np.asarray(proba, dtype=float)
    n = len(proba)
    codes = np.asarray(y).astype(np.int64)
    pred_codes = (proba.argmax(1) if pred is None else np.asarray(pred)).astype(np.int64)
    names = np.asarray([str(c) for c in classes], dtype=object)
    frame = pd.DataFrame(
        {
            **{k: [v] * n for k, v in keys.items()},
            "window": np.asarray(window),
            "subject": np.asarray(subject).astype(str),
            "label": names[codes] if n else np.asarray([], dtype=object),
            "predicted": names[pred_codes] if n else np.asarray([], dtype=object),
            "label_code": codes,
            "predicted_code": pred_codes,
        }
    )
    probs = pd.DataFrame(proba, columns=[f"proba_{c}" for c in classes])
    return pd.concat([frame, probs], axis=1)


def read_predictions(source) -> pd.DataFrame:
    """A predictions table from a file (``.csv``, ``.csv.gz``) or frame, in today's layout.

    Files written before class names joined the codes hold ``y`` and ``pred`` (codes);
    they are renamed ``label_code`` and ``predicted_code`` and get ``label`` and
    ``predicted`` (class names, in the order of the ``proba_<class>`` columns), so stored
    results read like new ones.
    """
    frame = source.copy() if isinstance(source, pd.DataFrame) else pd.read_csv(source)
    if "y" not in frame.columns:
        return frame
    old_label, old_pred = frame.pop("y"), frame.pop("pred")
    if "label_code" in frame.columns:  # old rows and new ones in one file
        old_label = frame.pop("label_code").fillna(old_label)
        old_pred = frame.pop("predicted_code").fillna(old_pred)
    names = np.asarray(
        [str(c).removeprefix("proba_") for c in frame.columns if str(c).startswith("proba_")],
        dtype=object,
    )
    label, pred = old_label.to_numpy(dtype=np.int64), old_pred.to_numpy(dtype=np.int64)
    new = {"label": names[label], "predicted": names[pred]}
    new |= {"label_code": label, "predicted_code": pred}
    frame = frame.drop(columns=[c for c in new if c in frame.columns])
    at = frame.columns.get_loc("subject") + 1 if "subject" in frame.columns else 0
    for offset, (name, values) in enumerate(new.items()):
        frame.insert(at + offset, name, values)
    return frame


def subject_table(predictions: pd.DataFrame) -> pd.DataFrame:
    """Per-subject view of window-level out-of-fold predictions.

    One row per configuration, depth, seed and subject: its fold, number of windows,
    windows right, window accuracy, the subject's ``label`` (class name; empty when its
    windows carry several labels), the class with the highest mean probability
    (``predicted``), that mean probability (``probability``), ``correct`` (predicted equals
    label; empty without a subject label) and the mean probability of each class. Class
    names come from the ``proba_<class>`` columns, in code order.
    """
    keys = _keys(predictions)
    cols = [c for c in predictions.columns if str(c).startswith("proba_")]
    names = np.asarray([str(c).removeprefix("proba_") for c in cols], dtype=object)
    frame = predictions.assign(right=predictions["predicted_code"] == predictions["label_code"])
    g = frame.groupby([*keys, "subject"], sort=True, dropna=False)
    out = g.agg(
        fold=("fold", "first"),
        n_windows=("window", "size"),
        n_right=("right", "sum"),
        labels=("label_code", "nunique"),
        code=("label_code", "first"),
    )
    out["accuracy"] = out["n_right"] / out["n_windows"]
    mean = g[cols].mean()  # (subjects, K)
    top = mean.to_numpy().argmax(1)
    single = (out["labels"] == 1).to_numpy()
    out["label"] = np.where(single, names[out["code"].to_numpy(dtype=int)], None)
    out["predicted"] = names[top]
    out["probability"] = mean.to_numpy()[np.arange(len(mean)), top]
    out["correct"] = np.where(single, out["code"].to_numpy(dtype=int) == top, None)
    out = out.drop(columns=["labels", "code"]).join(mean)
    return out.reset_index()


# ---------------------------------------------------------------- chance, confusion, classes

CHANCE_METRICS = ("accuracy", "balanced_accuracy", "macro_f1", "roc_auc", "subject_accuracy")


def chance_levels(y: np.ndarray, n_classes: int, metric: str = "balanced_accuracy") -> dict:
    """What ``metric`` scores without looking at the signals, for true class codes ``y``.

    ``majority``: always predicting the most frequent class of ``y``; ``uniform``: guessing
    each of the ``n_classes`` classes with equal probability (expected value). For
    balanced accuracy both are ``1/K``; for accuracy the majority level is the largest
    class share (0.75 on a 3:1 problem), the uniform one ``1/K``; ROC AUC is 0.5 for both.
    For ``subject_accuracy`` pass one code per subject.
    """
    y = np.asarray(y).astype(int)
    if metric not in CHANCE_METRICS:
        raise ValueError(f"no chance level for metric {metric!r}; one of {CHANCE_METRICS}")
    if n_classes < 2 or not len(y):
        return {"majority": np.nan, "uniform": np.nan}
    share = np.bincount(y, minlength=n_classes)[:n_classes] / len(y)  # (K,)
    K = n_classes
    if metric == "balanced_accuracy":
        return {"majority": 1.0 / K, "uniform": 1.0 / K}
    if metric == "roc_auc":
        return {"majority": 0.5, "uniform": 0.5}
    if metric == "macro_f1":
        p = share.max()
        majority = (2 * p / (1 + p)) / K  # the majority class's F1; the others score 0
        # guessing 1/K each: precision of class k = its share, recall = 1/K
        present = share > 0
        f1 = np.where(present, 2 * share * (1 / K) / np.where(present, share + 1 / K, 1), 0.0)
        return {"majority": float(majority), "uniform": float(f1.mean())}
    return {"majority": float(share.max()), "uniform": 1.0 / K}


def subject_codes(predictions: pd.DataFrame) -> np.ndarray:
    """One true class code per subject of a predictions frame (subjects whose windows
    carry several labels are left out)."""
    first = predictions.drop_duplicates(["subject", "window"])
    per = first.groupby("subject")["label_code"].agg(["nunique", "first"])
    return per.loc[per["nunique"] == 1, "first"].to_numpy(dtype=int)


def chance_table(
    predictions: pd.DataFrame, n_classes: int, metric: str = "balanced_accuracy"
) -> dict:
    """:func:`chance_levels` of a window-level predictions frame (each window counted once
    however many configurations and seeds predicted it; subjects for
    ``subject_accuracy``)."""
    if metric == "subject_accuracy":
        return chance_levels(subject_codes(predictions), n_classes, metric)
    y = predictions.drop_duplicates(["subject", "window"])["label_code"].to_numpy()
    return chance_levels(y, n_classes, metric)


def _keys(predictions: pd.DataFrame) -> list[str]:
    return [k for k in ("config", "depth", "seed") if k in predictions.columns]


def _fits(predictions: pd.DataFrame, keys: list[str]):
    """``(key values, rows)`` of each fit (configuration, depth, seed); rows without a
    depth (nested-best) kept."""
    if not keys:
        yield (), predictions
        return
    for key, g in predictions.groupby(keys, sort=False, dropna=False):
        yield (key if isinstance(key, tuple) else (key,)), g


def confusion_frame(predictions: pd.DataFrame, classes) -> pd.DataFrame:
    """Confusion matrices of window-level predictions, one per configuration, depth and
    seed, in long form: ``label`` (the true class), ``predicted`` (class names) and
    ``count`` of windows
    (sklearn's :func:`~sklearn.metrics.confusion_matrix`, every class pair listed, zeros
    included)."""
    classes = list(classes)
    labels = np.arange(len(classes))
    keys, rows = _keys(predictions), []
    for key, g in _fits(predictions, keys):
        cm = confusion_matrix(g["label_code"], g["predicted_code"], labels=labels)  # (K, K)
        for i, t in enumerate(classes):
            for j, p in enumerate(classes):
                rows.append(
                    {**dict(zip(keys, key)), "label": t, "predicted": p, "count": int(cm[i, j])}
                )
    return pd.DataFrame(rows, columns=[*keys, "label", "predicted", "count"])


def class_report(predictions: pd.DataFrame, classes) -> pd.DataFrame:
    """Per-class precision, recall, F1 and support (windows) of window-level predictions,
    one row per configuration, depth, seed and class
    (sklearn's :func:`~sklearn.metrics.precision_recall_fscore_support`)."""
    classes = list(classes)
    labels = np.arange(len(classes))
    keys, rows = _keys(predictions), []
    for key, g in _fits(predictions, keys):
        p, r, f, s = precision_recall_fscore_support(
            g["label_code"], g["predicted_code"], labels=labels, zero_division=0
        )
        for k, c in enumerate(classes):
            rows.append(
                {**dict(zip(keys, key)), "class": c, "precision": float(p[k]),
                 "recall": float(r[k]), "f1": float(f[k]), "support": int(s[k])}
            )  # fmt: skip
    return pd.DataFrame(rows, columns=[*keys, "class", "precision", "recall", "f1", "support"])


# ---------------------------------------------------------------- recording level


def changing_recordings(
    windows: pd.DataFrame, keys: tuple[str, ...] = ("subject", "recording"), label: str = "label"
) -> pd.DataFrame:
    """The recordings whose windows carry more than one label (stress phases, activities):
    their ``keys`` and ``n_labels``; empty when every recording keeps one label or the
    windows have no ``label`` column."""
    keys = [k for k in keys if k in windows.columns]
    if label not in windows.columns or not keys:
        return pd.DataFrame(columns=[*keys, "n_labels"])
    n = windows.groupby(keys, sort=False, dropna=False)[label].nunique().rename("n_labels")
    return n[n > 1].reset_index()


def recording_level(
    windows: pd.DataFrame, recordings: pd.DataFrame, scores: pd.DataFrame | None
) -> tuple[pd.DataFrame, pd.DataFrame | None, str]:
    """The recordings table and level scores of frame predictions, without a recording
    level that does not exist.

    A recording's label is its windows' majority label; when the label changes inside a
    recording, that majority is no truth to score against (a recording of two phases is
    "right" or "wrong" by whichever phase is longer, hence 1.000 or 0.000). So when any
    recording's label changes inside it, the recording level is left out everywhere: the
    ``recording`` row of ``scores`` and the ``label`` column of ``recordings`` (replaced by
    ``n_labels``, the number of labels inside each recording).

    Parameters
    ----------
    windows, recordings, scores : DataFrame
        ``FramePredictions.windows``, ``.recordings`` and ``.scores`` (None without
        labels).

    Returns
    -------
    recordings, scores, note
        The tables to show, and ``note``: empty when the recording level stands, else
        :data:`RECORDING_LEVEL_NA` with how many recordings change label.
    """
    changing = changing_recordings(windows)
    if changing.empty:
        return recordings, scores, ""
    keys = [k for k in ("subject", "recording") if k in windows.columns and k in recordings]
    n_labels = windows.groupby(keys, sort=False, dropna=False)["label"].nunique()
    # dropping n_labels too keeps a second call (tables already without the level) a no-op
    recordings = recordings.drop(columns=["label", "n_labels"], errors="ignore").merge(
        n_labels.rename("n_labels").reset_index(), on=keys, how="left"
    )
    if scores is not None:
        scores = scores.drop(index="recording", errors="ignore")
    note = (
        f"recording level: {RECORDING_LEVEL_NA} ({len(changing)} of {len(recordings)} "
        "recordings), so recordings are not scored"
    )
    return recordings, scores, note
