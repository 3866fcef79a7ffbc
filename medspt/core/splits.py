"""Subject-wise splits: outer folds, the validation subjects inside a training fold, and
the check that no subject sits on both sides.

Every part of medspt that splits data takes its subjects from here: ``evaluate``, the
estimator's early stopping, studies, tuning and the tsai baselines, so that a comparison
between any two of them runs on identical train, validation and test subjects.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.model_selection import GroupShuffleSplit, StratifiedGroupKFold, train_test_split

from medspt.core.errors import InputError
from medspt.core.warn import warn

__all__ = [
    "FoldSplit",
    "subject_folds",
    "check_folds",
    "validation_split",
    "fold_split",
    "labelled_subjects",
]

Fold = tuple[np.ndarray, np.ndarray]

MIN_VALIDATION_SUBJECTS = 4
"""Fewest training subjects from which :func:`validation_split` holds some out."""


def subject_folds(
    y: np.ndarray, groups: np.ndarray, n_splits: int = 5, random_state: int = 0
) -> list[Fold]:
    """Subject-wise folds: ``StratifiedGroupKFold`` (shuffled, seeded); stratification is
    approximate where a class has fewer subjects than folds."""
    n_groups = len(np.unique(groups))
    if isinstance(n_splits, (bool, np.bool_)) or not isinstance(n_splits, (int, np.integer)):
        raise InputError(f"cv must be a whole number of folds (e.g. cv=5), got {n_splits!r}")
    if n_groups < 2:
        raise InputError(
            f"cv={n_splits}: subject-wise cross-validation needs at least 2 subjects, but the "
            f"data has {n_groups}; give more subjects (a test fold never shares a subject "
            "with training)"
        )
    if n_splits < 2 or n_splits > n_groups:
        fix = (
            f"pass cv={n_groups} or fewer (cv={n_groups} leaves one subject out per fold), "
            "or give more subjects"
            if n_splits > n_groups
            else "pass cv=2 or more"
        )
        raise InputError(
            f"cv={n_splits} folds need between 2 and the number of subjects ({n_groups}), "
            f"as every test fold holds at least one subject of its own: {fix}"
        )
    with warnings.catch_warnings():
        # a class with fewer subjects than folds only makes stratification approximate
        warnings.simplefilter("ignore", UserWarning)
        sgkf = StratifiedGroupKFold(n_splits, shuffle=True, random_state=random_state)
        return list(sgkf.split(np.zeros(len(y)), y, groups))


def check_folds(folds, groups: np.ndarray, n: int, first: int = 0) -> list[Fold]:
    """Folds as index arrays, each checked: non-empty, within ``n`` windows, and no
    subject on both sides (``first``: the number of the first fold, for messages)."""
    out = []
    for k, (tr, te) in enumerate(folds, start=first):
        tr, te = np.asarray(tr), np.asarray(te)
        if len(tr) == 0 or len(te) == 0:
            raise InputError(f"fold {k} has an empty train or test part")
        if tr.max(initial=0) >= n or te.max(initial=0) >= n:
            raise InputError(f"fold {k} has indices beyond the {n} windows")
        shared = np.intersect1d(groups[tr], groups[te])
        if len(shared):
            raise InputError(
                f"fold {k} puts subject(s) {shared[:5].tolist()} in both train and test; "
                "folds must be subject-wise"
            )
        out.append((tr, te))
    return out


def validation_split(
    labels: np.ndarray, groups: np.ndarray, val_size: float = 0.2, random_state: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Hold out whole subjects of a training part for early stopping and model selection.

    ``labels`` are class *labels* (names or values, not codes of some other encoding):
    they are encoded here in sorted order, so any caller that passes the same labels gets
    the same subjects. One fold of ``StratifiedGroupKFold(round(1 / val_size))`` (seeded)
    is held out; a split that would lose a class from training falls back to
    ``GroupShuffleSplit``. ``val_size=0``: no validation. Fewer than 4 subjects: no
    validation either, with a ``UserWarning`` that says so (pass ``val_size=0`` to train
    without validation on purpose).

    Returns
    -------
    fit, val : ndarray of int
        Positions into ``labels``.
    """
    labels, groups = np.asarray(labels), np.asarray(groups)
    n = len(labels)
    all_idx = np.arange(n)
    uniq = np.unique(groups)
    if val_size == 0:
        return all_idx, np.array([], dtype=int)
    if len(uniq) < MIN_VALIDATION_SUBJECTS:
        warn(
            f"only {len(uniq)} training subject{'s' if len(uniq) != 1 else ''}: no "
            "subject-wise validation is possible (needs at least "
            f"{MIN_VALIDATION_SUBJECTS}); training runs every epoch and keeps the final "
            "weights. Give more subjects, or set val_size=0 to do this without the warning."
        )
        return all_idx, np.array([], dtype=int)
    _, y = np.unique(labels, return_inverse=True)
    n_splits = int(min(max(2, round(1 / val_size)), len(uniq)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            sgkf = StratifiedGroupKFold(n_splits, shuffle=True, random_state=random_state)
            fit, val = next(sgkf.split(np.zeros(n), y, groups))
        except ValueError:
            fit, val = None, None
    if fit is None or len(np.unique(y[fit])) < len(np.unique(y)):
        gss = GroupShuffleSplit(1, test_size=val_size, random_state=random_state)
        fit, val = next(gss.split(np.zeros(n), y, groups))
    return fit, val


@dataclass(frozen=True)
class FoldSplit:
    """Window indices of one outer fold and seed: ``fit`` (training windows the model
    learns from), ``val`` (held-out training subjects), ``test`` (the fold's test part)."""

    fold: int
    seed: int
    fit: np.ndarray
    val: np.ndarray
    test: np.ndarray
    groups: np.ndarray

    def subjects(self) -> dict[str, set]:
        """The subjects of each part: ``{"fit": ..., "val": ..., "test": ...}``."""
        return {
            part: set(np.unique(self.groups[getattr(self, part)]).tolist())
            for part in ("fit", "val", "test")
        }


def fold_split(
    labels: np.ndarray,
    groups: np.ndarray,
    fold: Fold,
    *,
    fold_index: int = 0,
    seed: int = 0,
    val_size: float = 0.2,
) -> FoldSplit:
    """Train, validation and test windows of one outer fold, as every medspt fit uses them.

    Parameters
    ----------
    labels : ndarray (N,)
        Class labels of all windows (``ws.classes[ws.y]`` for a WindowSet).
    groups : ndarray (N,)
        Subject of each window.
    fold : (train_idx, test_idx)
        One outer fold; training windows are kept in this order (the split depends on it).
    seed, val_size
        The estimator's ``random_state`` and ``val_size``.
    """
    labels, groups = np.asarray(labels), np.asarray(groups)
    tr, te = (np.asarray(i) for i in fold)
    check_folds([(tr, te)], groups, len(groups), first=fold_index)
    fit, val = validation_split(labels[tr], groups[tr], val_size, seed)
    return FoldSplit(fold_index, seed, tr[fit], tr[val], te, groups)


def labelled_subjects(
    labels: np.ndarray, groups: np.ndarray, fraction: float, random_state: int = 0
) -> np.ndarray:
    """The subjects whose labels a label-efficiency run keeps: ``fraction`` of the subjects
    of ``groups`` (rounded, at least one per class), drawn with ``random_state`` and
    stratified by each subject's set of classes (a subject of one class, as in case-control
    data, counts in its class; subjects that hold every class are drawn plainly).

    Returns
    -------
    ndarray
        The chosen subjects, sorted; all of them for ``fraction=1``.
    """
    labels, groups = np.asarray(labels), np.asarray(groups)
    if not 0 < fraction <= 1:
        raise InputError(f"fraction={fraction!r}: give the share of subjects in (0, 1]")
    subjects = np.unique(groups)
    if fraction == 1:
        return subjects
    strata = np.array([",".join(map(str, np.unique(labels[groups == s]))) for s in subjects])
    kinds, counts = np.unique(strata, return_counts=True)
    n = int(min(len(subjects), max(round(fraction * len(subjects)), len(kinds))))
    stratify = strata if counts.min() >= 2 and len(kinds) < n < len(subjects) else None
    if n == len(subjects):
        return subjects
    chosen, _ = train_test_split(
        subjects, train_size=n, stratify=stratify, random_state=random_state
    )
    missing = np.setdiff1d(np.unique(labels), labels[np.isin(groups, chosen)])
    rng = np.random.default_rng(random_state)
    for cls in missing:  # an unlucky plain draw: add a subject of each class it lost
        holders = np.setdiff1d(np.unique(groups[labels == cls]), chosen)
        chosen = np.append(chosen, rng.choice(holders))
    return np.sort(chosen)
