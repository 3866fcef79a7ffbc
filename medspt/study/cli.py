"""``medspt study run | worker | dashboard | report``."""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

from medspt.masking import STRATEGIES

DEFAULT_STORAGE = "sqlite:///medspt.db"


def _quiet_optuna(verbose: bool) -> None:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)


def _model_params(a) -> dict:
    params = {}
    for name in (
        "d_model",
        "n_heads",
        "patch_len",
        "epochs",
        "pretrain_epochs",
        "batch_size",
        "lr",
        "mask_ratio",
        "mean_span",
        "mask_unit",
        "label_smoothing",
        "min_steps",
        "n_estimators",
        "device",
    ):
        v = getattr(a, name)
        if v is not None:
            params[name] = v
    if a.normalize is not None:  # absent unless given, so older studies resume unchanged
        from medspt.cli import normalize_value

        params["normalize"] = normalize_value(a.normalize)
    return params


def cmd_run(a) -> int:
    from medspt.study.runner import run_study

    _quiet_optuna(not a.quiet)
    window = a.window if a.window in (None, "auto") or not a.window.isdigit() else int(a.window)
    study = run_study(
        a.data,
        protocol=a.protocol,
        depths=a.depths,
        maskings=a.maskings,
        scratch=not a.no_scratch,
        alibi=a.alibi,
        scratch_long=not a.no_scratch_long,
        seeds=a.seeds,
        storage=a.storage,
        study_name=a.study,
        n_trials=a.n_trials,
        tune=a.tune,
        cv=a.cv,
        window=window,
        metric=a.metric,
        params=_model_params(a),
        diagnostics=not a.no_diagnostics,
        verbose=not a.quiet,
    )
    print(
        f"study {study.study_name!r}: report with `medspt study report --storage {a.storage} "
        f"--study {study.study_name} --out DIR`; watch it with `medspt study dashboard "
        f"--storage {a.storage}`"
    )
    return 0


def cmd_worker(a) -> int:
    from medspt.study.runner import run_worker

    _quiet_optuna(not a.quiet)
    run_worker(a.storage, a.study, verbose=not a.quiet)
    return 0


def cmd_dashboard(a) -> int:
    from medspt.study.dashboard import serve

    _quiet_optuna(False)
    serve(a.storage, host=a.host, port=a.port)
    return 0


def cmd_report(a) -> int:
    import optuna
    import pandas as pd

    from medspt.errors import InputError
    from medspt.study.report import write_report
    from medspt.study.storage import make_storage

    _quiet_optuna(False)
    st = make_storage(a.storage, heartbeat=None)
    try:
        study = optuna.load_study(study_name=a.study, storage=st)
    except KeyError:
        names = [s.study_name for s in optuna.get_all_study_summaries(st)]
        raise InputError(f"no study {a.study!r} in {a.storage}; studies there: {names}") from None
    baselines = None
    if a.baselines:
        p = Path(a.baselines)
        if not p.is_file():
            raise InputError(f"--baselines file {a.baselines!r} does not exist")
        baselines = pd.read_csv(p)
    paths = write_report(study, a.out, metric=a.metric, baselines=baselines)
    print(Path(paths["report"]).read_text())
    print(f"written: {', '.join(str(p) for p in paths.values())}")
    return 0


def add_study_parser(subparsers) -> argparse.ArgumentParser:
    """Add ``study`` with sub-commands ``run``, ``worker``, ``dashboard``, ``report``."""
    p = subparsers.add_parser(
        "study",
        help="the capacity-versus-pretraining study (Optuna): run, join, watch, report",
        description="Depth x {scratch, SPT with each masking} x seeds on the same "
        "subject-wise folds, stored in an Optuna study (resumable; many workers).",
    )
    sub = p.add_subparsers(dest="study_command", required=True, metavar="COMMAND")

    q = sub.add_parser("run", help="create (or resume) a study and run its cells")
    src = q.add_mutually_exclusive_group(required=True)
    src.add_argument("--protocol", help="GPD-1, NE-1 or CAM-1 (real data via MEDSPT_DATA)")
    src.add_argument("--data", help="long-format .csv/.parquet file, or 'demo'")
    q.add_argument("--storage", default=DEFAULT_STORAGE, help=f"URL (default {DEFAULT_STORAGE})")
    q.add_argument("--study", default=None, help="study name (default medspt-<data>)")
    q.add_argument("--depths", type=int, nargs="+", default=[1, 2, 4, 8])
    q.add_argument("--maskings", nargs="+", default=list(STRATEGIES), choices=STRATEGIES)
    q.add_argument("--no-scratch", action="store_true", help="leave out scratch models")
    q.add_argument(
        "--no-scratch-long",
        action="store_true",
        help="leave out scratch-long, the compute-matched control (label-only training for "
        "SPT's whole budget of optimizer steps)",
    )
    q.add_argument(
        "--alibi",
        action="store_true",
        help="add scratch-alibi: label-only training with ALiBi's proximity bias",
    )
    q.add_argument(
        "--no-diagnostics",
        action="store_true",
        help="skip the attention distance / locality of each fold's model",
    )
    q.add_argument("--seeds", type=int, nargs="+", default=[0])
    q.add_argument("--cv", type=int, default=5, help="subject-wise folds (data files only)")
    q.add_argument("--window", default="auto", help="samples (200) or seconds (10s)")
    q.add_argument("--tune", action="store_true", help="tune lr, d_model, mask ratio per cell")
    q.add_argument(
        "--n-trials",
        type=int,
        default=None,
        help="tuning trials per cell (with --tune), else the most cells to run now",
    )
    q.add_argument("--metric", default="balanced_accuracy")
    for name, typ in (
        ("d-model", int),
        ("n-heads", int),
        ("patch-len", int),
        ("epochs", int),
        ("pretrain-epochs", int),
        ("batch-size", int),
        ("lr", float),
        ("mask-ratio", float),
        ("mean-span", float),
        ("mask-unit", str),
        ("label-smoothing", float),
        ("min-steps", int),
        ("n-estimators", int),
        ("device", str),
    ):
        q.add_argument(
            f"--{name}", type=typ, default=None, help="model setting (default: SPTClassifier's)"
        )
    q.add_argument(
        "--normalize",
        default=None,
        choices=("channel", "window", "instance", "none"),
        help="per-channel standardization (default), also per-window centring, or none",
    )
    q.add_argument("--quiet", action="store_true")
    q.set_defaults(func=cmd_run)

    q = sub.add_parser("worker", help="join an existing study as one more worker")
    q.add_argument("--storage", required=True)
    q.add_argument("--study", required=True)
    q.add_argument("--quiet", action="store_true")
    q.set_defaults(func=cmd_worker)

    q = sub.add_parser("dashboard", help="serve optuna-dashboard for a storage on 127.0.0.1")
    q.add_argument("--storage", default=DEFAULT_STORAGE)
    q.add_argument("--host", default="127.0.0.1")
    q.add_argument("--port", type=int, default=8080, help="0 picks a free port")
    q.set_defaults(func=cmd_dashboard)

    q = sub.add_parser("report", help="Markdown/CSV table and figures of a study")
    q.add_argument("--storage", default=DEFAULT_STORAGE)
    q.add_argument("--study", required=True)
    q.add_argument("--out", default="medspt-report")
    q.add_argument("--metric", default="balanced_accuracy")
    q.add_argument("--baselines", default=None, help="CSV of baseline rows on the same folds")
    q.set_defaults(func=cmd_report)
    return p
