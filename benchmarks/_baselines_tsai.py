"""The tsai side of ``baselines.py``: building, training and testing tsai's networks
(InceptionTimePlus, TSTPlus, TSTPlus with MVP pretraining) on fold plans, and the worker
that runs them in tsai's own interpreter.

tsai usually lives in a second environment that imports this checkout through
``PYTHONPATH``; tsai, fastai and torch are imported inside the functions that need them,
so that medspt's interpreter, without tsai, imports this module as well.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import platform
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path

import numpy as np
from _baselines_folds import CONFIG_NAMES, Emit, FoldPlan, Settings, fold_arrays
from _common import emit_result

from medspt.core.stats import balanced_class_weights

WORKER_MARK = "@@BASELINES-JSON@@"  # prefixes the worker's closing line on stdout


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
    """The torch device of ``settings.device`` (``auto``: CUDA when available)."""
    import torch

    if settings.device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(settings.device)


def set_threads(settings: Settings) -> None:
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


def run_jobs(
    X: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    plans: list[FoldPlan],
    models: list[str],
    s: Settings,
    emit: Emit,
) -> None:
    """Train and test every tsai network on every plan; ``emit(i, model, proba, info)``
    per run (``proba`` None and ``info["error"]`` set when a run fails)."""
    from sklearn.metrics import balanced_accuracy_score

    set_threads(s)
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


# --------------------------------------------------------------------------- the tsai worker


def worker_main(spec_path: str) -> int:
    """Entry point of a sub-run (``baselines.py --worker``): read the spec and data that
    ``baselines.run_worker`` wrote, write one file per result, then one closing line."""
    # stdout carries only the closing line; whatever else the run prints goes to stderr
    with contextlib.redirect_stdout(sys.stderr):
        runs = _worker_jobs(json.loads(Path(spec_path).read_text()))
    emit_result(WORKER_MARK, {"runs": runs})
    return 0


def _worker_jobs(spec: dict) -> int:
    """Run the jobs of a worker's ``spec``; the number of result files written."""
    tmp = Path(spec["dir"])
    settings = Settings(**spec["settings"])
    set_threads(settings)
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
    written = []

    def emit(i: int, model: str, proba, info: dict) -> None:
        info = {**info, "_job": i, "_model": model}
        np.savez(
            tmp / f"result_{i}_{model}.npz",
            proba=np.zeros(0) if proba is None else proba,
            info=np.asarray(json.dumps(info)),
        )
        written.append((i, model))

    run_jobs(X, y, spec["n_classes"], plans, spec["models"], settings, emit)
    return len(written)
