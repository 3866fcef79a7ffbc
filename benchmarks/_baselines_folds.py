"""What every baseline of ``baselines.py`` shares: model names, result columns, settings,
fold plans with their validation subjects, training-fold standardization, and aeon's
MiniRocket, which runs in medspt's own interpreter.

The tsai worker imports this module too: its top-level imports stay at numpy and
``medspt.core``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from _common import REPO_ROOT

try:  # medspt from this checkout when it is not installed (the tsai interpreter)
    import medspt  # noqa: F401
except ImportError:
    sys.path.insert(0, str(REPO_ROOT))
# the same training statistics as medspt's estimator (one implementation, medspt.core)
from medspt.core.stats import channel_stats  # noqa: E402

if TYPE_CHECKING:
    from medspt import WindowSet

MODELS = ("minirocket", "inceptiontime", "tstplus", "tstplus-mvp")
CONFIG_NAMES = {
    "minirocket": "minirocket",  # aeon's, via medspt.baselines (was tsai-minirocket)
    "inceptiontime": "tsai-inceptiontimeplus",
    "tstplus": "tsai-tstplus",
    "tstplus-mvp": "tsai-tstplus-mvp",
}
# Columns of medspt.evaluate, in its order; baselines fill those that apply (NaN otherwise).
EVALUATE_COLUMNS = (
    "config",
    "depth",
    "masking",
    "pretrain",
    "seed",
    "fold",
    "n_train",
    "n_test",
    "n_test_subjects",
    "accuracy",
    "balanced_accuracy",
    "macro_f1",
    "roc_auc",
    "subject_accuracy",
    "pretrain_epochs",
    "finetune_epoch",
    "optimizer_steps",
    "val_subjects",
    "val_score",
    "n_unlabelled",
    "pretrain_relative",
    "not_learned",
    "wall_time_s",
    "windows_per_s",
)
EVALUATE_METRICS = EVALUATE_COLUMNS[9:14]  # accuracy … subject_accuracy
EXTRA_COLUMNS = ("protocol", "n_val", "n_params")
METRICS = ("balanced_accuracy", "accuracy", "macro_f1", "roc_auc", "subject_accuracy")
TSAI_MODELS = ("inceptiontime", "tstplus", "tstplus-mvp")

# ``emit(job, model, proba, info)``: how every runner hands back one finished run.
Emit = Callable[[int, str, "np.ndarray | None", dict], None]


@dataclass
class Settings:
    """What every fold, model and seed shares."""

    epochs: int = 30
    pretrain_epochs: int = 20
    batch_size: int = 64
    lr: float = 1e-3
    val_size: float = 0.2
    tst_depth: int = 2
    d_model: int = 64
    n_heads: int = 4
    dropout: float = 0.1
    max_train_windows: int | None = None
    threads: int | None = None
    device: str = "auto"


@dataclass
class FoldPlan:
    """Window indices of one fold and seed (into the protocol's windows).

    ``train`` is the fold's training part (after optional subsampling); ``fit`` and
    ``val`` split it by subject (``val`` may be empty); ``test`` is the fold's test part.
    """

    fold: int
    seed: int
    train: np.ndarray
    fit: np.ndarray
    val: np.ndarray
    test: np.ndarray


def load_windows(name: str, root: str | None = None) -> tuple[str, WindowSet, list, str]:
    """Windows, folds and description of a protocol (``"demo"``: the synthetic demo).

    Returns
    -------
    name : str
        Canonical protocol name.
    ws : WindowSet
    folds : list of (train_idx, test_idx)
    description : str
    """
    if name.lower() == "demo":
        from medspt import make_windows
        from medspt.api import subject_folds
        from medspt.data.synthetic import make_demo_frame

        ws = make_windows(make_demo_frame(), window="4s")
        folds = subject_folds(ws.y, ws.groups, n_splits=3)
        desc = (
            "synthetic demo frame (medspt.data.synthetic.make_demo_frame) cut into 4 s windows; "
            "3 subject-wise folds from medspt.api.subject_folds"
        )
        return "demo", ws, folds, desc
    from medspt.datasets import protocol

    p = protocol(name, root)
    return p.name, p.windows, p.folds, p.description


def plan_fold(
    labels: np.ndarray,
    groups: np.ndarray,
    train_idx: np.ndarray,
    test_idx: np.ndarray,
    fold: int,
    seed: int,
    val_size: float = 0.2,
    max_train_windows: int | None = None,
) -> FoldPlan:
    """Split a fold's training windows into fit and validation subjects.

    ``labels`` are class *labels* (``ws.classes[ws.y]``), never codes of the protocol's
    own order: the validation subjects come from :func:`medspt.core.splits.fold_split`, the
    function every medspt fit uses, so on the full training part they are exactly the
    subjects medspt's early stopping holds out with ``random_state=seed``. With
    ``max_train_windows``, a seeded random subset of that many training windows is used.
    Test windows are never looked at, beyond checking that no subject is on both sides.
    """
    from medspt.core.splits import fold_split

    train_idx, test_idx = np.asarray(train_idx), np.asarray(test_idx)
    shared = np.intersect1d(groups[train_idx], groups[test_idx])
    if len(shared):
        raise ValueError(f"fold {fold} has subject(s) {shared[:5].tolist()} on both sides")
    if max_train_windows is not None and len(train_idx) > max_train_windows:
        rng = np.random.default_rng(seed)
        train_idx = np.sort(rng.choice(train_idx, max_train_windows, replace=False))
    split = fold_split(
        labels, groups, (train_idx, test_idx), fold_index=fold, seed=seed, val_size=val_size
    )
    return FoldPlan(
        fold=fold, seed=seed, train=train_idx, fit=split.fit, val=split.val, test=test_idx
    )


def fold_arrays(X: np.ndarray, plan: FoldPlan) -> dict[str, np.ndarray]:
    """Standardized float32 arrays of a fold: ``fit``, ``val``, ``test`` and the
    statistics ``mean``, ``std``, computed from the training windows (``plan.train``)
    only. NaN (missing values) become 0, the channel mean."""
    mean, std = channel_stats(X[plan.train])

    def norm(idx: np.ndarray) -> np.ndarray:
        Z = (X[idx] - mean[None, :, None]) / std[None, :, None]
        return np.ascontiguousarray(np.nan_to_num(Z, nan=0.0), dtype=np.float32)

    return {
        "fit": norm(plan.fit),
        "val": norm(plan.val),
        "test": norm(plan.test),
        "mean": mean,
        "std": std,
    }


# --------------------------------------------------------------------------- MiniRocket


def run_minirocket(
    X: np.ndarray, y: np.ndarray, n_classes: int, plan: FoldPlan
) -> tuple[np.ndarray, dict]:
    """aeon's MiniRocket through :mod:`medspt.baselines` in this interpreter: fitted on the
    fold's training windows (``plan.train``, raw: the baseline fills and standardizes with
    their statistics), test probabilities over all ``n_classes`` codes."""
    from medspt.baselines import MiniRocket

    t0 = time.perf_counter()
    clf = MiniRocket(random_state=plan.seed).fit(X[plan.train], y[plan.train])
    wall = time.perf_counter() - t0
    proba = np.zeros((len(plan.test), n_classes))
    proba[:, clf.classes_.astype(int)] = clf.predict_proba(X[plan.test])
    info = {"wall_time_s": wall, "filled_fraction": clf.filled_fraction_}
    return proba, info


def run_minirocket_jobs(
    X: np.ndarray, y: np.ndarray, n_classes: int, plans: list[FoldPlan], emit: Emit
) -> None:
    """MiniRocket on every plan, ``emit(i, "minirocket", proba, info)`` per run."""
    from sklearn.metrics import balanced_accuracy_score

    for i, plan in enumerate(plans):
        proba, info = run_minirocket(X, y, n_classes, plan)
        bal = balanced_accuracy_score(y[plan.test], proba.argmax(1))
        print(
            f"  fold {plan.fold} seed {plan.seed} {'minirocket':<24} balanced accuracy "
            f"{bal:.3f}, {info['wall_time_s']:.1f} s",
            file=sys.stderr,
            flush=True,
        )
        emit(i, "minirocket", proba, info)
