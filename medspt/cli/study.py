"""``medspt study run | worker | dashboard | report | refit | compact``.

The sub-commands import the study's modules (and optuna, pandas) when they run, not when
the parser is built, and only the named sub-command's options are built (``run``'s options
need the model's, which load PyTorch), so that ``medspt study report`` and ``--help`` start
at once.
"""

from __future__ import annotations

import argparse
import warnings
from collections.abc import Collection
from pathlib import Path

from medspt.core.errors import InputError
from medspt.core.urls import redact

DEFAULT_STORAGE = "sqlite:///medspt.db"

# each sub-command with its line in `medspt study --help`
STUDY_HELP = {
    "run": "create (or resume) a study and run its cells",
    "worker": "join an existing study as one more worker",
    "dashboard": "serve optuna-dashboard for a storage on 127.0.0.1",
    "report": "Markdown/CSV table and figures of a study",
    "refit": "fit the study's best configuration on all subjects and save it",
    "compact": "copy a storage's studies into a small journal file to commit or move",
}
_STORAGE_HELP = (
    "Optuna storage URL: sqlite:///file.db, postgresql+psycopg://user@host/db (workers on "
    f"many machines), or journal:file.log (default: {DEFAULT_STORAGE})"
)
_HEARTBEAT_HELP = (
    "database storages: seconds between a running cell's heartbeats; a cell silent for four "
    "is rerun by another worker (default: 30)"
)


def _quiet_optuna(verbose: bool) -> None:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)


def cmd_run(a) -> int:
    from medspt.cli.args import data_kwargs, model_params
    from medspt.study.runner import run_study

    _quiet_optuna(not a.quiet)
    study = run_study(
        a.data,
        protocol=a.protocol,
        depths=a.depths,
        maskings=a.maskings,
        scratch=not a.no_scratch,
        alibi=a.alibi,
        scratch_long=not a.no_scratch_long,
        baselines=tuple(a.baselines),
        seeds=a.seeds,
        storage=a.storage,
        study_name=a.study,
        n_trials=a.n_trials,
        tune=a.tune,
        cv=a.cv,
        metric=a.metric,
        params=model_params(a),  # only the options given: a study resumes unchanged
        diagnostics=not a.no_diagnostics,
        heartbeat=a.heartbeat,
        verbose=not a.quiet,
        **data_kwargs(a),
    )
    url = redact(a.storage)
    print(
        f"study {study.study_name!r}: report with `medspt study report --storage {url} "
        f"--study {study.study_name} --out DIR`; watch it with `medspt study dashboard "
        f"--storage {url}`"
    )
    return 0


def cmd_worker(a) -> int:
    from medspt.study.runner import run_worker

    _quiet_optuna(not a.quiet)
    run_worker(a.storage, a.study, verbose=not a.quiet, heartbeat=a.heartbeat, device=a.device)
    return 0


def cmd_dashboard(a) -> int:
    from medspt.study.dashboard import serve

    _quiet_optuna(False)
    serve(a.storage, host=a.host, port=a.port)
    return 0


def cmd_report(a) -> int:
    import pandas as pd

    from medspt.study.report import write_report

    _quiet_optuna(False)
    study = _load(a.storage, a.study)
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


def cmd_refit(a) -> int:
    from medspt.evaluation.plots import plot_history
    from medspt.study.refit import refit_study

    _quiet_optuna(False)
    clf = refit_study(_load(a.storage, a.study), metric=a.metric, verbose=not a.quiet)
    out = Path(a.out)
    clf.save(out)
    plot_history(clf, out.with_suffix(".history.png"))
    ev = clf.evaluation_
    print("validation score of each configuration (validation subjects only):")
    for name, score in ev["candidates"].items():
        print(f"  {name:<28} {score:.3f}")
    nested = ev.get("nested_mean")
    print(
        f"chosen: {ev['chosen']['config']} at depth {ev['chosen']['depth']}; its "
        f"cross-validated {ev['metric']}: {ev['cv_mean']:.3f}"
        + (f"; nested estimate of choosing then fitting: {nested:.3f}" if nested else "")
        + f"; chance: {ev['chance']['majority']:.3f} (majority class)"
    )
    print(f"refitted on all subjects -> {out} (training curves: {out.with_suffix('.history.png')})")
    return 0


def cmd_compact(a) -> int:
    from medspt.study.compaction import compact_storage
    from medspt.study.storage import is_journal, journal_path

    source = journal_path(a.storage) if is_journal(a.storage) else None
    before = source.stat().st_size if source is not None and source.is_file() else None
    counts = compact_storage(a.storage, a.out)
    target = Path(a.out) if a.out else source
    for name, n in counts.items():
        print(f"  {name:<40} {n:>5} trials")
    size = target.stat().st_size
    was = f" (was {before / 1e6:.2f} MB)" if before is not None else ""
    print(f"{len(counts)} studies -> {target}: {size / 1e6:.2f} MB{was}")
    return 0


def _load(storage: str, name: str):
    """A study by name, or an error listing the studies the storage holds."""
    import optuna

    from medspt.study.storage import make_storage

    st = make_storage(storage, heartbeat=None)
    try:
        return optuna.load_study(study_name=name, storage=st)
    except KeyError:
        names = [s.study_name for s in optuna.get_all_study_summaries(st)]
        where = redact(storage)
        raise InputError(f"no study {name!r} in {where}; studies there: {names}") from None


def add_study_parser(subparsers, only: Collection[str] | None = None) -> argparse.ArgumentParser:
    """Add ``study`` with sub-commands ``run``, ``worker``, ``dashboard``, ``report``,
    ``refit``; with ``only``, the other sub-commands are listed with their help line alone
    (their options, and the libraries behind them, are not loaded)."""
    p = subparsers.add_parser(
        "study",
        help="the capacity-versus-pretraining study (Optuna): run, join, watch, report",
        description="Depth x {scratch, SPT with each masking} x seeds on the same "
        "subject-wise folds, stored in an Optuna study (resumable; many workers).",
    )
    sub = p.add_subparsers(dest="study_command", required=True, metavar="COMMAND")
    for name, add in STUDY_COMMANDS.items():
        if only is None or name in only:
            add(sub)
        else:
            sub.add_parser(name, help=STUDY_HELP[name])
    return p


def _add_run(sub) -> None:
    """``study run``: create or resume a study and run its cells."""
    from medspt.cli.args import add_baseline_args, add_data_args, add_grid_args, add_model_args
    from medspt.nn.masking import STRATEGIES

    q = sub.add_parser(
        "run",
        help=STUDY_HELP["run"],
        description="run_study(...) from the command line: the grid is --depths, "
        "--maskings and --seeds (lists; --depth, --masking and --seed are their aliases); "
        "the data options (--subject, --window, ...) are stored with the study, so "
        "workers that join it cut the same windows; model options shared by every cell "
        "are stored only when given (the estimator's defaults otherwise).",
    )
    src = q.add_mutually_exclusive_group(required=True)
    src.add_argument(
        "--protocol",
        help="GPD-1, GPD-2 (whole walks; GPD-2@100 at 100 Hz), NE-1 or CAM-1: a dataset "
        "protocol's windows and folds (real data via MEDSPT_DATA); no data options with it "
        "(default: none, give --protocol or --data)",
    )
    src.add_argument(
        "--data",
        metavar="FILE",
        help="long-format .csv, .tsv or .parquet file, or demo (built-in synthetic data) "
        "(default: none, give --protocol or --data)",
    )
    add_data_args(q, data=False)
    q.add_argument("--storage", default=DEFAULT_STORAGE, help=_STORAGE_HELP)
    q.add_argument(
        "--study", default=None, help="study name (default: medspt-<protocol or file stem>)"
    )
    add_grid_args(q, depths=[1, 2, 4, 8], maskings=list(STRATEGIES), seeds=[0])
    add_baseline_args(q)
    q.add_argument(
        "--alibi",
        action="store_true",
        help="add scratch-alibi: label-only training with ALiBi's proximity bias (default: off)",
    )
    q.add_argument(
        "--no-diagnostics",
        action="store_true",
        help="skip the attention distance / locality of each fold's model (default: measured)",
    )
    _add_run_schedule(q)
    q.add_argument("--heartbeat", type=_seconds, default=30.0, help=_HEARTBEAT_HELP)
    add_model_args(q, grid=True, given_only=True)
    q.add_argument("--quiet", action="store_true", help="no progress bar (default: shown)")
    q.set_defaults(func=cmd_run)


def _add_run_schedule(q: argparse.ArgumentParser) -> None:
    """``study run``'s folds, tuning, trials and metric."""
    q.add_argument(
        "--cv", type=int, default=5, help="subject-wise folds, data files only (default: 5)"
    )
    q.add_argument(
        "--tune",
        action="store_true",
        help="tune lr, d_model, mask ratio per cell and fold (nested) (default: off)",
    )
    q.add_argument(
        "--n-trials",
        type=int,
        default=None,
        help="tuning trials per cell with --tune (default: 20), else the most cells to run "
        "now (default: all)",
    )
    q.add_argument(
        "--metric",
        default="balanced_accuracy",
        help="the trial value: mean over folds of this metric (default: balanced_accuracy)",
    )


def _add_worker(sub) -> None:
    """``study worker``: join an existing study."""
    q = sub.add_parser(
        "worker",
        help=STUDY_HELP["worker"],
        description="The data options, grid and model settings are the study's own, as "
        "stored by medspt study run.",
    )
    q.add_argument("--storage", required=True, help="Optuna storage URL of the study (required)")
    q.add_argument("--study", required=True, help="study name (required)")
    q.add_argument(
        "--device",
        default=None,
        help="this worker's device: cpu, cuda, cuda:1, auto; one GPU per worker "
        "(default: the study's, else auto)",
    )
    q.add_argument("--heartbeat", type=_seconds, default=30.0, help=_HEARTBEAT_HELP)
    q.add_argument("--quiet", action="store_true", help="no progress bar (default: shown)")
    q.set_defaults(func=cmd_worker)


def _seconds(text: str) -> float:
    """``--heartbeat``: a positive number of seconds."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


def _add_dashboard(sub) -> None:
    """``study dashboard``: serve optuna-dashboard for a storage."""
    q = sub.add_parser("dashboard", help=STUDY_HELP["dashboard"])
    q.add_argument("--storage", default=DEFAULT_STORAGE, help=_STORAGE_HELP)
    q.add_argument("--host", default="127.0.0.1", help="address to serve on (default: 127.0.0.1)")
    q.add_argument(
        "--port", type=int, default=8080, help="port; 0 picks a free one (default: 8080)"
    )
    q.set_defaults(func=cmd_dashboard)


def _add_report(sub) -> None:
    """``study report``: tables and figures of a study."""
    q = sub.add_parser("report", help=STUDY_HELP["report"])
    q.add_argument("--storage", default=DEFAULT_STORAGE, help=_STORAGE_HELP)
    q.add_argument("--study", required=True, help="study name (required)")
    q.add_argument("--out", default="medspt-report", help="output folder (default: medspt-report)")
    q.add_argument(
        "--metric",
        default="balanced_accuracy",
        help="metric of the tables and figures (default: balanced_accuracy)",
    )
    q.add_argument(
        "--baselines",
        default=None,
        help="CSV of baseline rows on the same folds (default: none)",
    )
    q.set_defaults(func=cmd_report)


def _add_refit(sub) -> None:
    """``study refit``: fit the configuration chosen on validation subjects."""
    q = sub.add_parser(
        "refit",
        help=STUDY_HELP["refit"],
        description="Chooses the configuration with the best validation score (validation "
        "subjects inside each fold's training part; the test folds are never looked at), "
        "fits it on all of the study's subjects and saves it with the study's numbers in "
        "its metadata (medspt.load(path).evaluation_).",
    )
    q.add_argument("--storage", default=DEFAULT_STORAGE, help=_STORAGE_HELP)
    q.add_argument("--study", required=True, help="study name (required)")
    q.add_argument(
        "--out",
        default="model.safetensors",
        help="model file to write (default: model.safetensors)",
    )
    q.add_argument(
        "--metric",
        default=None,
        help="metric recorded with the model (default: the study's own)",
    )
    q.add_argument("--quiet", action="store_true", help="no progress bars (default: shown)")
    q.set_defaults(func=cmd_refit)


def _add_compact(sub) -> None:
    """``study compact``: a storage's studies in one small journal file."""
    q = sub.add_parser(
        "compact",
        help=STUDY_HELP["compact"],
        description="Copies every study of --storage into one journal file, keeping what "
        "reports and resumed runs read (each trial in its final state, stopped cells' "
        "finished folds) and leaving out what only running workers need (every "
        "heartbeat but the last, the per-fold copies of completed cells' rows). Stop "
        "the study's workers first: what they write later goes to the source, not to "
        "the copy.",
    )
    q.add_argument(
        "--storage", required=True, help=_STORAGE_HELP.split(" (default")[0] + " (required)"
    )
    q.add_argument(
        "--out",
        default=None,
        help="journal file to write, which must not exist (default: replace the --storage "
        "journal file with its copy; required for a database storage)",
    )
    q.set_defaults(func=cmd_compact)


STUDY_COMMANDS = {
    "run": _add_run,
    "worker": _add_worker,
    "dashboard": _add_dashboard,
    "report": _add_report,
    "refit": _add_refit,
    "compact": _add_compact,
}
