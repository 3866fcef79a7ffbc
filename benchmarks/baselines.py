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
import json
import os
import re
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from _baselines_folds import (
    CONFIG_NAMES,
    EVALUATE_COLUMNS,
    EVALUATE_METRICS,
    EXTRA_COLUMNS,
    METRICS,
    MODELS,
    TSAI_MODELS,
    FoldPlan,
    Settings,
    fold_arrays,
    load_windows,
    plan_fold,
    run_minirocket,
    run_minirocket_jobs,
)
from _baselines_report import collect, header_lines, make_row, render, show_and_write, summarize
from _baselines_tsai import (
    WORKER_MARK,
    run_jobs,
    run_network,
    set_threads,
    tsai_importable,
    tsai_versions,
    worker_main,
)
from _common import RESULTS, parser, run_script

from medspt.core.stats import balanced_class_weights

if TYPE_CHECKING:
    from medspt import WindowSet

# What other scripts and the tests use from here; the code lives in the _baselines_* modules.
__all__ = [
    "CONFIG_NAMES",
    "EVALUATE_COLUMNS",
    "EVALUATE_METRICS",
    "EXTRA_COLUMNS",
    "METRICS",
    "MODELS",
    "TSAI_MODELS",
    "FoldPlan",
    "Settings",
    "balanced_class_weights",
    "fold_arrays",
    "load_windows",
    "main",
    "make_row",
    "plan_fold",
    "render",
    "run_jobs",
    "run_minirocket",
    "run_minirocket_jobs",
    "run_network",
    "summarize",
    "tsai_importable",
    "tsai_versions",
]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options (see ``--help``)."""
    d = Settings()
    p = parser(__doc__)
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


def _settings(args: argparse.Namespace) -> Settings:
    """Settings from the command line."""
    return Settings(
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


def run_all(
    tsai_python: str | None, ws: WindowSet, plans: list[FoldPlan], models: list[str], s: Settings
) -> tuple[dict, dict | None, list[str]] | None:
    """MiniRocket here, the tsai networks in tsai's interpreter (or here, where tsai
    imports).

    Returns
    -------
    results : dict
        ``(job, model) -> (proba, info)`` of every finished run.
    versions : dict or None
        Versions of the interpreter that trained the networks.
    notes : list of str
    None
        Instead, when networks were asked for and no interpreter here imports tsai.
    """
    # No symlink resolution: venv interpreters link to the same base binary.
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
        script = Path(__file__)
        done, versions, error = run_worker(script, tsai_python, ws, plans, networks, s)
        results.update(done)
        if error:
            notes.append(f"the tsai sub-run failed ({error}); its finished runs are kept")
    elif tsai_importable():
        set_threads(s)
        versions = tsai_versions(s)
        run_jobs(ws.X, ws.y.astype(np.int64), len(ws.classes), plans, networks, s, emit)
    else:
        print(
            "error: tsai does not import in this interpreter; create the tsai environment "
            "(benchmarks/README.md) and pass --tsai-python path/to/tsai-venv/bin/python "
            "(or set MEDSPT_TSAI_PYTHON)",
            file=sys.stderr,
        )
        return None
    return results, versions, notes


def run_worker(
    script: Path,
    python: str,
    ws: WindowSet,
    plans: list[FoldPlan],
    models: list[str],
    s: Settings,
) -> tuple[dict, dict | None, str | None]:
    """Run :func:`run_jobs` under another interpreter through ``script --worker``.

    The windows and fold indices go over as ``.npz`` files in a temporary folder and each
    finished run comes back as one file, so the runs a crashed worker finished are kept.

    Returns
    -------
    results : dict
        ``(job, model) -> (proba, info)`` of every run the worker finished.
    versions : dict or None
        :func:`tsai_versions` of the worker's interpreter (None if it never got there).
    error : str or None
        Why the worker failed; None when it ran to the end.
    """
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
        args = ["--worker", str(tmp / "spec.json")]
        done, error, _ = run_script(script, args, WORKER_MARK, python=python, stderr_shown=True)
        error = None if done is not None else _exit_status(error)
        for f in sorted(tmp.glob("result_*.npz")):
            with np.load(f) as z:
                info = json.loads(str(z["info"]))
                proba = z["proba"] if z["proba"].ndim == 2 else None
            results[(info.pop("_job"), info.pop("_model"))] = (proba, info)
        vfile = tmp / "versions.json"
        versions = json.loads(vfile.read_text()) if vfile.exists() else None
    return results, versions, error


def _exit_status(error: str) -> str:
    """The report's wording of a failed worker (``run_script`` says ``killed (status N)``
    when the worker's stderr went to the console)."""
    m = re.fullmatch(r"killed \(status (-?\d+)\)", error)
    return f"worker exited with status {m.group(1)}" if m else error


def main(argv: list[str] | None = None) -> int:
    """Run the baselines, print the table and write the CSV and Markdown report."""
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.worker:
        return worker_main(args.worker)
    s = _settings(args)
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
    ran = run_all(args.tsai_python, ws, plans, models, s)
    if ran is None:
        return 2
    results, versions, notes = ran
    elapsed = time.perf_counter() - started

    df, predictions, failed = collect(ws, plans, models, s, results, name)
    if failed:
        notes.append("runs without results: " + "; ".join(failed))
    run = dict(
        name=name,
        description=description,
        fold_ids=fold_ids,
        seeds=args.seeds,
        load_before=load_before,
        elapsed=elapsed,
    )
    header = header_lines(argv, s, versions, run)
    report = (
        render(summarize(df), header, notes, f"tsai baselines on {name}")
        if len(df)
        else "no results\n"
    )
    stem = f"baselines_{name}" + (f"_{args.tag}" if args.tag else "")
    show_and_write(df, report, predictions, None if args.no_write else args.out, stem)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
