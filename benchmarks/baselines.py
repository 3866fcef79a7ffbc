"""Baselines on medspt's evaluation protocols: the numbers medspt has to beat.

Four baselines, each trained and tested on exactly the subject-wise folds of a protocol
(:func:`medspt.datasets.protocol`), one row per fold × model × seed in the row format of
:func:`medspt.evaluate`:

* ``minirocket``: aeon's ``MiniRocketClassifier`` through :mod:`medspt.baselines` (the
  same code as ``evaluate``'s baseline rows; its own input rules and training-fold
  standardization, class-balanced ridge, softmax of the ridge decision values), run in
  this interpreter; earlier runs used tsai's MiniRocket (``tsai-minirocket`` in stored
  results);
* ``tsai-inceptiontimeplus``: ``InceptionTimePlus`` with tsai's defaults;
* ``tsai-tstplus``: ``TSTPlus`` from scratch, ``n_layers`` ``--tst-depth`` (2), d_model 64,
  4 heads, d_ff 4 × d_model, dropout 0.1 (also on attention weights and head), like
  medspt's default model;
* ``tsai-tstplus-mvp``: the same ``TSTPlus`` pretrained with tsai's MVP callback (masked
  value prediction: subsequence masks, r 0.15, mean length 3, the ratio and span of
  medspt's default span masking) on the training windows of the fold only, then the
  weights of the best pretraining epoch (lowest reconstruction loss on the validation
  subjects) fine-tuned with a new head.

Honest evaluation, as in medspt:

* folds, validation split and metrics are computed by medspt in the interpreter that runs
  this script, so they are identical to medspt's even when tsai runs under another
  scikit-learn;
* each channel is standardized with the mean and std of the fold's training windows
  (never test data; NaN ignored, then NaN set to 0);
* model selection uses held-out *training* subjects only: ``--val-size`` (0.2) of them
  are held out with medspt's own split (``SPTClassifier`` with ``random_state=seed``, so
  the same subjects as medspt's early stopping); the neural nets train for a fixed
  budget (``fit_one_cycle``, ``--epochs`` / ``--pretrain-epochs``, Adam, lr 1e-3,
  batch 64, class-weighted cross-entropy like medspt's ``class_weight="balanced"``) and
  keep the weights of the epoch with the best validation balanced accuracy (ties: lower
  validation loss); MiniRocket has no epochs and fits its ridge on all training windows
  (alpha chosen by the ridge's own leave-one-out over training windows, class weights
  balanced);
* the test windows are only predicted, once, after training.

tsai (the three networks) usually lives in its own environment (see
``benchmarks/README.md``): give its interpreter with ``--tsai-python`` (or
``$MEDSPT_TSAI_PYTHON``) and the script hands the windows and fold indices to a copy of
itself running there (``.npz`` files in a temporary folder), which returns the test
probabilities; if tsai imports in the current interpreter everything runs in-process.

Run ``python benchmarks/baselines.py --help`` for the options.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import importlib
import io
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from _common import RESULTS, git_revision, machine

REPO_ROOT = Path(__file__).resolve().parents[1]
try:  # medspt from this checkout when it is not installed (the tsai interpreter)
    import medspt  # noqa: F401
except ImportError:
    sys.path.insert(0, str(REPO_ROOT))
# the same training statistics as medspt's estimator (one implementation, medspt.core)
from medspt.core.stats import balanced_class_weights, channel_stats  # noqa: E402

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
    "wall_time_s",
    "windows_per_s",
)
EVALUATE_METRICS = EVALUATE_COLUMNS[9:14]  # accuracy … subject_accuracy
EXTRA_COLUMNS = ("protocol", "n_val", "n_params")
METRICS = ("balanced_accuracy", "accuracy", "macro_f1", "roc_auc", "subject_accuracy")
TSAI_MODELS = ("inceptiontime", "tstplus", "tstplus-mvp")


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


# --------------------------------------------------------------------------- data and folds


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


def load_windows(name: str, root: str | None = None):
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


# --------------------------------------------------------------------------- rows and report


def make_row(
    model: str,
    settings: Settings,
    plan: FoldPlan,
    y: np.ndarray,
    groups: np.ndarray,
    proba: np.ndarray,
    info: dict,
    protocol: str,
) -> dict:
    """One result row in :func:`medspt.evaluate`'s column order, then the extra columns.

    ``y`` are the class codes of all windows and ``proba`` the test probabilities
    ``(len(plan.test), n_classes)`` in the order of ``ws.classes``; ``info`` holds what
    the run measured (``wall_time_s``, ``pretrain_epochs``, ``finetune_epoch``,
    ``windows_per_s``, ``n_params``; missing ones become NaN).
    """
    from medspt.estimator.metrics import classification_metrics

    if model not in CONFIG_NAMES:
        raise ValueError(f"unknown model {model!r}; choose from {list(MODELS)}")
    te = plan.test
    if proba.shape[0] != len(te):
        raise ValueError(f"{proba.shape[0]} probability rows for {len(te)} test windows")
    metrics = classification_metrics(y[te], proba, groups[te])
    tst = model.startswith("tstplus")
    row = {
        "config": CONFIG_NAMES[model],
        "depth": settings.tst_depth if tst else np.nan,
        "masking": "mvp" if model == "tstplus-mvp" else np.nan,
        "pretrain": model == "tstplus-mvp",
        "seed": plan.seed,
        "fold": plan.fold,
        "n_train": len(plan.train),
        "n_test": len(te),
        "n_test_subjects": len(np.unique(groups[te])),
        **{k: metrics[k] for k in EVALUATE_METRICS},
        "pretrain_epochs": info.get("pretrain_epochs", np.nan),
        "finetune_epoch": info.get("finetune_epoch", np.nan),
        "optimizer_steps": info.get("optimizer_steps", np.nan),
        "val_subjects": " ".join(map(str, np.unique(groups[plan.val]))),
        "val_score": info.get("val_score", np.nan),  # validation subjects' score, if kept
        "wall_time_s": info.get("wall_time_s", np.nan),
        "windows_per_s": info.get("windows_per_s", np.nan),
        "protocol": protocol,
        "n_val": len(plan.val),
        "n_params": info.get("n_params", np.nan),
    }
    return row


def summarize(results: pd.DataFrame) -> pd.DataFrame:
    """Mean and std over folds × seeds of each metric and of the wall time, per config
    (and depth), in the order of :data:`MODELS`."""
    cols = [*METRICS, "wall_time_s"]
    df = results.assign(depth=results["depth"].fillna(-1))
    g = df.groupby(["config", "depth"], sort=False)
    out = g[cols].agg(["mean", "std"])
    out.columns = [f"{c}_{s}" for c, s in out.columns]
    out.insert(0, "runs", g.size())
    out = out.reset_index()
    out["depth"] = out["depth"].where(out["depth"] >= 0, np.nan)
    order = {CONFIG_NAMES[m]: i for i, m in enumerate(MODELS)}
    return out.sort_values("config", key=lambda s: s.map(order)).reset_index(drop=True)


def _pm(mean: float, std: float, digits: int = 3) -> str:
    """``mean ± std`` (std omitted for a single run, ``n/a`` when undefined)."""
    if not np.isfinite(mean):
        return "n/a"
    if not np.isfinite(std):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {std:.{digits}f}"


def render(summary: pd.DataFrame, header: list[str], notes: list[str], title: str) -> str:
    """Markdown report: header lines, the table of mean ± std, notes."""
    out = [f"# {title}", ""] + [f"- {h}" for h in header] + [""]
    out += [
        "| config | depth | runs | " + " | ".join(METRICS) + " | wall time (s) |",
        "|---|---:|---:|" + "---:|" * len(METRICS) + "---:|",
    ]
    for _, r in summary.iterrows():
        depth = "" if not np.isfinite(r["depth"]) else f"{int(r['depth'])}"
        cells = [_pm(r[f"{m}_mean"], r[f"{m}_std"]) for m in METRICS]
        wall = _pm(r["wall_time_s_mean"], r["wall_time_s_std"], 1)
        out.append(
            f"| {r['config']} | {depth} | {int(r['runs'])} | " + " | ".join(cells) + f" | {wall} |"
        )
    out += [
        "",
        "Mean ± std over folds × seeds; wall time = fitting (pretraining included), "
        "without predicting the test windows.",
    ]
    if notes:
        out += ["", "Notes:", ""] + [f"- {n}" for n in notes]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- tsai models


def tsai_versions(settings: Settings | None = None) -> dict[str, str]:
    """Versions of the interpreter that trains the baselines (and its threads, device)."""
    out = {"python": platform.python_version()}
    for name in ("tsai", "fastai", "torch", "sklearn", "numpy"):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out[name] = importlib.import_module(name).__version__
        except Exception:  # missing or broken install: reported as "-"
            out[name] = "-"
    if out["torch"] != "-":
        import torch

        out["threads"] = str(torch.get_num_threads())
        if settings is not None:
            out["device"] = str(_device(settings))
    return out


def _aeon_version() -> str:
    import aeon

    return aeon.__version__


def tsai_importable() -> bool:
    """Whether the tsai models used here import in this interpreter."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for mod in ("tsai.basics", "tsai.models.TSTPlus", "tsai.callback.MVP"):
                importlib.import_module(mod)
        return True
    except Exception:
        return False


def _device(settings: Settings):
    import torch

    if settings.device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(settings.device)


def _set_threads(settings: Settings) -> None:
    """Use ``settings.threads`` torch threads (if set)."""
    if settings.threads:
        import torch

        torch.set_num_threads(settings.threads)


def _seed_everything(seed: int) -> None:
    """Seed ``random``, numpy and torch (tsai's ``set_seed``, deterministic cuDNN)."""
    from tsai.basics import set_seed

    set_seed(seed, reproducible=True)


def _predict(model, X: np.ndarray, device, batch_size: int = 256) -> np.ndarray:
    """Softmax probabilities of ``model`` on ``X`` (eval mode, no gradients)."""
    import torch

    model.eval()
    out = []
    with torch.no_grad():
        for i in range(0, len(X), batch_size):
            logits = model(torch.from_numpy(X[i : i + batch_size]).to(device))
            out.append(torch.softmax(logits.float(), dim=-1).cpu().numpy())
    return np.concatenate(out).astype(np.float64)


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


def run_minirocket_jobs(X: np.ndarray, y: np.ndarray, n_classes: int, plans, emit) -> None:
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


def _build(model: str, n_channels: int, n_steps: int, n_classes: int, s: Settings):
    """A fresh tsai network with a classification head."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from tsai.models.InceptionTimePlus import InceptionTimePlus
        from tsai.models.TSTPlus import TSTPlus
    if model == "inceptiontime":
        return InceptionTimePlus(n_channels, n_classes, n_steps)
    # Matched to medspt's default model: depth, width, heads, d_ff = 4 x d_model, dropout
    # (residual, attention weights and head); otherwise tsai's defaults (post-norm
    # BatchNorm, residual attention, flatten head).
    return TSTPlus(
        n_channels,
        n_classes,
        n_steps,
        n_layers=s.tst_depth,
        d_model=s.d_model,
        n_heads=s.n_heads,
        d_ff=4 * s.d_model,
        dropout=s.dropout,
        attn_dropout=s.dropout,
        fc_dropout=s.dropout,
    )


def _make_callbacks():
    """The fastai callback that times training and keeps the best validation epoch."""
    import copy

    from fastai.callback.core import Callback

    class TrackBest(Callback):
        """Counts training windows and seconds; with ``select``, keeps the weights of the
        epoch with the best validation balanced accuracy (ties: lower validation loss)
        and loads them after fitting."""

        order = 70  # after the Recorder has the epoch's values

        def __init__(self, select: bool):
            self.select = select

        def before_fit(self):
            self.best, self.best_epoch, self.state = None, 0, None
            self.train_seconds, self.windows, self.epochs_run = 0.0, 0, 0

        def before_train(self):
            self._t0 = time.perf_counter()

        def before_validate(self):
            self.val_windows = 0

        def after_batch(self):
            if self.training:
                self.windows += len(self.learn.xb[0])
            else:
                self.val_windows += len(self.learn.xb[0])

        def after_train(self):
            self.train_seconds += time.perf_counter() - self._t0

        def after_epoch(self):
            self.epochs_run += 1
            n_valid = len(self.dls.valid.dataset)
            if self.val_windows != n_valid:
                raise RuntimeError(f"validated {self.val_windows} of {n_valid} windows")
            if not self.select:
                return
            names = [n for n in self.recorder.metric_names if n not in ("epoch", "time")]
            vals = dict(zip(names, self.recorder.values[-1]))
            score = (round(float(vals["balanced_accuracy_score"]), 6), -float(vals["valid_loss"]))
            if self.best is None or score > self.best:
                self.best, self.best_epoch = score, self.epoch + 1
                self.state = copy.deepcopy(self.learn.model.state_dict())

        def after_fit(self):
            if self.state is not None:
                self.learn.model.load_state_dict(self.state)

    return TrackBest


def run_network(
    model: str,
    arrs: dict,
    y_fit: np.ndarray,
    y_val: np.ndarray,
    n_classes: int,
    seed: int,
    s: Settings,
    tmp: Path,
) -> tuple[np.ndarray, dict]:
    """Train one tsai network (with MVP pretraining for ``tstplus-mvp``); test proba."""
    import torch
    from fastai.learner import Learner
    from fastai.losses import CrossEntropyLossFlat
    from fastai.metrics import BalancedAccuracy, accuracy

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from tsai.callback.MVP import MVP
        from tsai.data.core import TSClassification, get_ts_dls
        from tsai.models.utils import transfer_weights

    TrackBest = _make_callbacks()
    device = _device(s)
    n_fit, n_val = len(arrs["fit"]), len(arrs["val"])
    n_channels, n_steps = arrs["fit"].shape[1:]
    select = n_val > 0
    X = np.concatenate([arrs["fit"], arrs["val"]])
    y = np.concatenate([y_fit, y_val]).astype(np.int64)
    # fastai needs a validation set: without held-out subjects a few training windows
    # stand in, and the last epoch's weights are kept.
    val_idx = list(range(n_fit, n_fit + n_val)) if select else list(range(min(n_fit, 64)))
    bs = min(s.batch_size, n_fit)
    weight = torch.from_numpy(balanced_class_weights(y_fit, n_classes)).to(device)

    def dls():
        loaders = get_ts_dls(
            X,
            y,
            splits=(list(range(n_fit)), val_idx),
            tfms=[None, [TSClassification(vocab=list(range(n_classes)), sort=False)]],
            bs=bs,
            device=device,
            path=tmp,
        )
        # tsai 1.0.1 slices unshuffled batches with indices of the smallest integer type
        # that holds len(dataset); start + bs can overflow it (int8 below 128 windows), and
        # batches come out empty. Shuffled loaders index with lists: the order of the
        # validation windows does not matter, TrackBest checks that all of them are seen.
        loaders.valid.shuffle = True
        return loaders

    _seed_everything(seed)
    t0 = time.perf_counter()
    info: dict = {"pretrain_epochs": 0}
    pre_seconds, pre_windows = 0.0, 0
    net = _build(model, n_channels, n_steps, n_classes, s)
    if model == "tstplus-mvp" and s.pretrain_epochs > 0:
        track = TrackBest(select=False)
        mvp = MVP(r=0.15, lm=3.0, target_dir=str(tmp), fname="mvp", verbose=False)
        learn = Learner(dls(), net, cbs=[mvp, track], path=tmp)
        with learn.no_bar(), learn.no_logging(), contextlib.redirect_stdout(io.StringIO()):
            learn.fit_one_cycle(s.pretrain_epochs, lr_max=s.lr)
        info.update(pretrain_epochs=track.epochs_run, pretrain_best_epoch=mvp.best_epoch + 1)
        pre_seconds, pre_windows = track.train_seconds, track.windows
        net = _build(model, n_channels, n_steps, n_classes, s)
        msg = io.StringIO()
        with contextlib.redirect_stdout(msg):
            transfer_weights(net, tmp / "mvp.pth", device=device, exclude_head=True)
        if "successfully transferred" not in msg.getvalue():  # tsai's only signal
            raise RuntimeError(f"MVP weights did not transfer: {msg.getvalue().strip()}")
    track = TrackBest(select=select)
    learn = Learner(
        dls(),
        net.to(device),
        loss_func=CrossEntropyLossFlat(weight=weight),
        metrics=[accuracy, BalancedAccuracy()] if select else [],
        cbs=[track],
        path=tmp,
    )
    with learn.no_bar(), learn.no_logging(), contextlib.redirect_stdout(io.StringIO()):
        learn.fit_one_cycle(s.epochs, lr_max=s.lr)
    wall = time.perf_counter() - t0
    seconds = pre_seconds + track.train_seconds
    info.update(
        wall_time_s=wall,
        finetune_epoch=track.best_epoch if select else track.epochs_run,
        windows_per_s=(pre_windows + track.windows) / seconds if seconds > 0 else np.nan,
        n_params=int(sum(p.numel() for p in net.parameters())),
    )
    return _predict(learn.model, arrs["test"], device), info


def run_jobs(X: np.ndarray, y: np.ndarray, n_classes: int, plans, models, s: Settings, emit):
    """Train and test every tsai network on every plan; ``emit(i, model, proba, info)``
    per run (``proba`` None and ``info["error"]`` set when a run fails)."""
    from sklearn.metrics import balanced_accuracy_score

    _set_threads(s)
    for i, plan in enumerate(plans):
        arrs = fold_arrays(X, plan)
        y_fit, y_val, y_test = y[plan.fit], y[plan.val], y[plan.test]
        for model in models:
            with tempfile.TemporaryDirectory(prefix="medspt-baselines-") as tmp:
                try:
                    proba, info = run_network(
                        model, arrs, y_fit, y_val, n_classes, plan.seed, s, Path(tmp)
                    )
                except Exception as err:  # reported, and the other runs go on
                    traceback.print_exc(limit=-4, file=sys.stderr)
                    proba, info = None, {"error": f"{type(err).__name__}: {err}"}
            if proba is not None:
                bal = balanced_accuracy_score(y_test, proba.argmax(1))
                msg = f"balanced accuracy {bal:.3f}, {info['wall_time_s']:.1f} s"
            else:
                msg = f"FAILED ({info['error']})"
            print(
                f"  fold {plan.fold} seed {plan.seed} {CONFIG_NAMES[model]:<24} {msg}",
                file=sys.stderr,
                flush=True,
            )
            emit(i, model, proba, info)


# --------------------------------------------------------------------------- environments


def run_worker(python: str, ws, plans: list[FoldPlan], models, s: Settings):
    """Run :func:`run_jobs` under another interpreter; returns (results, versions, error)."""
    results: dict = {}
    with tempfile.TemporaryDirectory(prefix="medspt-baselines-") as tmp:
        tmp = Path(tmp)
        arrays = {"X": ws.X, "y": ws.y.astype(np.int64)}
        for i, plan in enumerate(plans):
            for part in ("train", "fit", "val", "test"):
                arrays[f"{part}_{i}"] = getattr(plan, part)
        np.savez(tmp / "data.npz", **arrays)
        spec = {
            "dir": str(tmp),
            "n_classes": len(ws.classes),
            "plans": [{"fold": p.fold, "seed": p.seed} for p in plans],
            "models": list(models),
            "settings": asdict(s),
        }
        (tmp / "spec.json").write_text(json.dumps(spec))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
        env["PYTHONWARNINGS"] = "ignore"
        proc = subprocess.run(
            [python, str(Path(__file__).resolve()), "--worker", str(tmp / "spec.json")],
            stdout=sys.stderr,
            env=env,
            check=False,
        )
        error = None if proc.returncode == 0 else f"worker exited with status {proc.returncode}"
        for f in sorted(tmp.glob("result_*.npz")):
            with np.load(f) as z:
                info = json.loads(str(z["info"]))
                proba = z["proba"] if z["proba"].ndim == 2 else None
            results[(info.pop("_job"), info.pop("_model"))] = (proba, info)
        vfile = tmp / "versions.json"
        versions = json.loads(vfile.read_text()) if vfile.exists() else None
    return results, versions, error


def _worker_main(spec_path: str) -> int:
    """Entry point of a sub-run: read the spec and data, write one file per result."""
    spec = json.loads(Path(spec_path).read_text())
    tmp = Path(spec["dir"])
    settings = Settings(**spec["settings"])
    _set_threads(settings)
    (tmp / "versions.json").write_text(json.dumps(tsai_versions(settings)))
    with np.load(tmp / "data.npz") as z:
        X, y = z["X"], z["y"]
        plans = [
            FoldPlan(
                fold=p["fold"],
                seed=p["seed"],
                **{part: z[f"{part}_{i}"] for part in ("train", "fit", "val", "test")},
            )
            for i, p in enumerate(spec["plans"])
        ]

    def emit(i: int, model: str, proba, info: dict) -> None:
        info = {**info, "_job": i, "_model": model}
        np.savez(
            tmp / f"result_{i}_{model}.npz",
            proba=np.zeros(0) if proba is None else proba,
            info=np.asarray(json.dumps(info)),
        )

    run_jobs(X, y, spec["n_classes"], plans, spec["models"], settings, emit)
    return 0


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options (see ``--help``)."""
    d = Settings()
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--protocol", default="GPD-1", help="GPD-1, GPD-2, NE-1, CAM-1 or demo (default GPD-1)"
    )
    p.add_argument("--root", help="dataset folder (default: $MEDSPT_DATA or the local copy)")
    p.add_argument("--folds", type=int, nargs="+", help="fold numbers to run (default: all)")
    p.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    p.add_argument("--seeds", type=int, nargs="+", default=[0])
    p.add_argument("--epochs", type=int, default=d.epochs, help="training epochs")
    p.add_argument("--pretrain-epochs", type=int, default=d.pretrain_epochs, help="MVP epochs")
    p.add_argument("--batch-size", type=int, default=d.batch_size)
    p.add_argument("--lr", type=float, default=d.lr, help="fit_one_cycle's lr_max")
    p.add_argument(
        "--val-size",
        type=float,
        default=d.val_size,
        help="fraction of training subjects held out for model selection (0: none)",
    )
    p.add_argument("--tst-depth", type=int, default=d.tst_depth, help="TSTPlus n_layers")
    p.add_argument("--d-model", type=int, default=d.d_model, help="TSTPlus d_model")
    p.add_argument("--n-heads", type=int, default=d.n_heads, help="TSTPlus heads")
    p.add_argument(
        "--max-train-windows",
        type=int,
        help="use a seeded random subset of this many training windows per fold",
    )
    p.add_argument("--threads", type=int, help="torch threads (default: torch's choice)")
    p.add_argument("--device", default=d.device, help="auto, cpu or cuda (default auto)")
    p.add_argument(
        "--tsai-python",
        default=os.environ.get("MEDSPT_TSAI_PYTHON"),
        help="interpreter with tsai installed (default: $MEDSPT_TSAI_PYTHON, else this one)",
    )
    p.add_argument("--out", type=Path, default=RESULTS, help="folder for the results")
    p.add_argument(
        "--tag",
        default=None,
        help="write baselines_<protocol>_<tag>.{csv,md}, e.g. to keep runs with other budgets",
    )
    p.add_argument("--no-write", action="store_true", help="print only, write no files")
    p.add_argument("--worker", help=argparse.SUPPRESS)  # internal: spec file of a sub-run
    args = p.parse_args(argv)
    if args.epochs < 1 or args.pretrain_epochs < 0:
        p.error("--epochs must be >= 1 and --pretrain-epochs >= 0")
    if not 0 <= args.val_size < 1:
        p.error("--val-size must be in [0, 1)")
    return args


def _command_line(argv: list[str]) -> str:
    """The command as run, with machine-specific paths replaced by placeholders."""
    shown, hide_next = [], False
    for a in argv:
        shown.append("PATH" if hide_next and os.path.isabs(a) else a)
        hide_next = a in ("--tsai-python", "--out", "--root")
    return " ".join(["python benchmarks/baselines.py", *shown])


def main(argv: list[str] | None = None) -> int:
    """Run the baselines, print the table and write the CSV and Markdown report."""
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.worker:
        return _worker_main(args.worker)
    s = Settings(
        epochs=args.epochs,
        pretrain_epochs=args.pretrain_epochs,
        batch_size=args.batch_size,
        lr=args.lr,
        val_size=args.val_size,
        tst_depth=args.tst_depth,
        d_model=args.d_model,
        n_heads=args.n_heads,
        max_train_windows=args.max_train_windows,
        threads=args.threads,
        device=args.device,
    )
    models = [m for m in MODELS if m in args.models]
    started, load_before = time.perf_counter(), os.getloadavg()[0]
    name, ws, folds, description = load_windows(args.protocol, args.root)
    fold_ids = list(range(len(folds))) if args.folds is None else args.folds
    bad = [k for k in fold_ids if not 0 <= k < len(folds)]
    if bad:
        print(f"error: {name} has folds 0-{len(folds) - 1}, not {bad}", file=sys.stderr)
        return 2
    plans = [
        plan_fold(ws.classes[ws.y], ws.groups, *folds[k], k, seed, s.val_size, s.max_train_windows)
        for k in fold_ids
        for seed in args.seeds
    ]
    print(
        f"{name}: {len(ws)} windows {ws.X.shape[1:]}, folds {fold_ids}, seeds {args.seeds}, "
        f"models {models}",
        file=sys.stderr,
    )

    tsai_python = args.tsai_python
    external = bool(tsai_python) and os.path.abspath(tsai_python) != os.path.abspath(sys.executable)
    notes: list[str] = []
    results, versions = {}, None
    networks = [m for m in models if m in TSAI_MODELS]

    def emit(i, model, proba, info):
        results[(i, model)] = (proba, info)

    if "minirocket" in models:  # aeon, in medspt's own interpreter
        run_minirocket_jobs(ws.X, ws.y.astype(np.int64), len(ws.classes), plans, emit)
    if not networks:
        pass
    elif external:
        done, versions, error = run_worker(tsai_python, ws, plans, networks, s)
        results.update(done)
        if error:
            notes.append(f"the tsai sub-run failed ({error}); its finished runs are kept")
    elif tsai_importable():
        _set_threads(s)
        versions = tsai_versions(s)
        run_jobs(ws.X, ws.y.astype(np.int64), len(ws.classes), plans, networks, s, emit)
    else:
        print(
            "error: tsai does not import in this interpreter; create the tsai environment "
            "(benchmarks/README.md) and pass --tsai-python path/to/tsai-venv/bin/python "
            "(or set MEDSPT_TSAI_PYTHON)",
            file=sys.stderr,
        )
        return 2
    elapsed = time.perf_counter() - started

    from medspt.api import oof_frame

    rows, failed, predictions = [], [], []
    for i, plan in enumerate(plans):
        for model in models:
            proba, info = results.get((i, model), (None, {"error": "not run"}))
            if proba is None:
                failed.append(f"fold {plan.fold} seed {plan.seed} {model}: {info['error']}")
                continue
            rows.append(make_row(model, s, plan, ws.y, ws.groups, proba, info, name))
            keys = dict(config=CONFIG_NAMES[model], depth=rows[-1]["depth"], seed=plan.seed)
            predictions.append(oof_frame(ws, plan.test, proba, **keys, fold=plan.fold))
    if failed:
        notes.append("runs without results: " + "; ".join(failed))
    df = pd.DataFrame(rows, columns=[*EVALUATE_COLUMNS, *EXTRA_COLUMNS])

    m = machine()
    v = versions or {}
    header = [
        f"Date: {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC; command: "
        f"`{_command_line(argv)}`"
        + (" with MEDSPT_TSAI_PYTHON set" if os.environ.get("MEDSPT_TSAI_PYTHON") else ""),
        f"Machine: {m['cpu']}, {m['cores']} logical cores, {m['os']}; device "
        f"{v.get('device', s.device)}, "
        f"torch threads {v.get('threads', '-')}; load average (1 min) before / after "
        f"{load_before:.2f} / {os.getloadavg()[0]:.2f}; total wall time {elapsed:.0f} s",
        f"Baselines: tsai {v.get('tsai', '-')}, fastai {v.get('fastai', '-')}, torch "
        f"{v.get('torch', '-')}, scikit-learn {v.get('sklearn', '-')}, Python "
        f"{v.get('python', '-')}; folds, validation split and metrics: medspt "
        f"(checkout {git_revision()})",
        f"Protocol {name}: {description}",
        f"Folds {fold_ids}, seeds {args.seeds}; per fold {s.val_size:g} of the training "
        "subjects held out for model selection (medspt's split); channels standardized "
        "with training-fold statistics",
        f"Networks: fit_one_cycle, {s.epochs} epochs (MVP pretraining {s.pretrain_epochs}), "
        f"lr_max {s.lr:g}, batch {s.batch_size}, class-weighted cross-entropy, best "
        f"validation balanced accuracy epoch kept; TSTPlus n_layers {s.tst_depth}, d_model "
        f"{s.d_model}, {s.n_heads} heads, d_ff {4 * s.d_model}, dropout {s.dropout}; "
        f"MiniRocket: aeon {_aeon_version()} MiniRocketClassifier via medspt.baselines"
        + (
            f"; at most {s.max_train_windows} training windows per fold"
            if s.max_train_windows
            else ""
        ),
    ]
    report = (
        render(summarize(df), header, notes, f"tsai baselines on {name}")
        if len(df)
        else "no results\n"
    )
    shown = ["config", "fold", "seed", *METRICS, "finetune_epoch", "wall_time_s", "windows_per_s"]
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(df[shown].to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    print()
    print(report)
    if not args.no_write and len(df):
        args.out.mkdir(parents=True, exist_ok=True)
        stem = f"baselines_{name}" + (f"_{args.tag}" if args.tag else "")
        csv_path, md_path = args.out / f"{stem}.csv", args.out / f"{stem}.md"
        df.to_csv(csv_path, index=False)
        md_path.write_text(report)
        # out-of-fold predictions of every test window, for paired tests over subjects
        pred_path = args.out / f"{stem}_predictions.csv.gz"
        pd.concat(predictions, ignore_index=True).round(4).to_csv(pred_path, index=False)
        print(f"wrote {csv_path}, {md_path} and {pred_path}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
