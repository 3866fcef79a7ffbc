"""Command line: ``medspt demo | fit | predict | evaluate | diagnose``."""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections.abc import Collection
from pathlib import Path

from medspt.cli.messages import cli_hints, command_parser, show_warnings_as
from medspt.core.errors import InputError, ModelFileError

__all__ = ["COMMANDS", "build_parser", "main"]

# every command with its line in `medspt --help`; a command's options (and the library
# behind them: PyTorch, pandas) load only when that command runs, so --help starts at once
COMMANDS = {
    "demo": "the default model against scratch training and MiniRocket on built-in synthetic data",
    "fit": "fit_spt on a long-format table and save the model",
    "predict": "per-window and per-recording predictions; scores when the data has labels",
    "evaluate": "subject-wise CV of scratch vs SPT",
    "diagnose": "attention-proximity diagnostics of fitted models (scratch vs SPT)",
    "datasets": "list, describe, download and verify the public datasets",
    "study": "the capacity-versus-pretraining study (Optuna): run, join, watch, report",
}


def _write_results(results, out: Path, metric: str, title: str | None):
    from medspt.evaluation.report_folder import write_results

    return write_results(results, out, metric, title)


def _markdown(table, metric: str, explain: bool = False) -> str:
    from medspt.evaluation.report_folder import summary_markdown

    return summary_markdown(table, metric, explain)


# where the demo's reader finds results on data that is not synthetic; a synthetic task
# answers nothing about real recordings, so this is said before and after the table
PUBLIC_RESULTS = "benchmarks/results/public_sets.md"
PROTOCOL_REPORTS = "benchmarks/results/default_model.md and paper_table.md"
# 16 subjects in 2 folds: each fit trains on 8 subjects, as 3 folds of 12 would, with a
# third fewer fits (the step floor, not the data size, sets a fit's cost) and no fold
# short of the 300 windows under which the default model averages five seeds
DEMO_SUBJECTS = 16
_DEMO_ELSEWHERE = (
    "A synthetic task is no evidence about real recordings. Results on public sets: "
    f"{PUBLIC_RESULTS}; on real cohorts: the protocol reports {PROTOCOL_REPORTS}. "
    "On them MiniRocket leads or ties."
)


def _demo_banner(a, maskings: tuple[str, ...]) -> str:
    """What the demo's data is, the question its table answers, and where results on
    public and real data are (the synthetic task says nothing about those)."""
    import textwrap

    spt = ", ".join(f"spt-{m}" for m in maskings)
    budget = "short training (--quick: --min-steps 0)" if a.quick else "its default training"
    paragraphs = [
        f"{DEMO_SUBJECTS} subjects, 3 sensors (acc_x, acc_y, emg), labels changing every "
        "20-40 s. "
        "The class is the shape of each movement cycle in acc_x and acc_y: rise (slow "
        "rise, fast drop), fall (fast rise, slow fall) or even (both at one pace). The "
        "classes share one distribution of values, so only the temporal shape separates "
        "them; a convolution sees it, so medspt and MiniRocket can both solve this task "
        "in principle. Subjects differ in rhythm, amplitude and sensor offsets.",
        "The question the table answers: on subjects the model never saw, does medspt's "
        f"default model ({budget}) gain from self-pretraining ({spt}) over training from "
        "scratch, also when scratch gets SPT's optimizer steps (scratch-long), and how "
        f"does it compare with MiniRocket on the same folds? Subject-wise {a.folds}-fold "
        f"CV at depth(s) {' '.join(map(str, a.depths))}; 4-s windows; every other "
        "setting is the package default.",
        _DEMO_ELSEWHERE,
    ]
    rule = "=" * 78
    title = "medspt demo - SYNTHETIC DATA (built in, deterministic; not real recordings)"
    body = "\n\n".join(textwrap.fill(p, 78, break_on_hyphens=False) for p in paragraphs)
    return "\n".join([rule, title, body, rule])


def cmd_demo(a) -> int:
    import textwrap

    from medspt.api import comparison_table
    from medspt.data.synthetic import make_demo_frame
    from medspt.evaluation.comparisons import spt_answer
    from medspt.evaluation.versus import versus_markdown
    from medspt.nn.masking import STRATEGIES

    t0 = time.perf_counter()
    maskings = tuple(STRATEGIES) if "all" in a.maskings else tuple(a.maskings)
    print(_demo_banner(a, maskings))
    options = dict(
        depths=tuple(a.depths),
        maskings=maskings,
        seeds=(a.seed,),
        baselines=("minirocket",),
        **({"min_steps": 0} if a.quick else {}),  # the package's default recipe otherwise
    )
    df = make_demo_frame(n_subjects=DEMO_SUBJECTS, seed=a.seed)
    results = _demo_evaluate(df, a.folds, options, verbose=not a.quiet)
    out = Path(a.out)
    metric = "balanced_accuracy"
    table = _write_results(results, out, metric, "SYNTHETIC demo data: balanced accuracy vs depth")
    # the answers as summary.md states them: one table of declared comparisons feeds both
    comparisons = comparison_table(results, metric=metric)
    print()
    print(_markdown(table, metric))
    print(spt_answer(results, metric, comparisons))
    print(versus_markdown(results, metric, comparisons))
    print(textwrap.fill(_DEMO_ELSEWHERE, 78, break_on_hyphens=False))
    print()
    print(f"(synthetic data) per-fold rows: {out / 'results.csv'}")
    print(f"plot: {out / 'accuracy_vs_depth.png'}   table: {out / 'summary.md'}")
    print(f"finished in {time.perf_counter() - t0:.0f} s")
    return 0


def _demo_evaluate(df, folds: int, options: dict, verbose: bool = True):
    """:func:`medspt.evaluate` of the demo frame in 4-s windows on ``folds`` subject-wise
    folds, each fold fitted in a process of its own with one PyTorch thread.

    The demo's model is small: a step on two threads takes about three quarters of its
    time on one, so one process leaves half of two cores' work undone, while folds side
    by side use both (two folds on two cores: about two thirds of the time of one
    process with two threads). Every fit runs on one thread whatever the machine, so a
    seed gives the same numbers on any number of cores (one core: the folds one after
    another, in this process).

    Parameters
    ----------
    df : DataFrame
        The demo frame (:func:`medspt.data.synthetic.make_demo_frame`).
    folds : int
        Number of subject-wise folds, as ``evaluate(cv=folds)`` makes them.
    options : dict
        Further :func:`medspt.evaluate` arguments (grid, seeds, baselines, model
        parameters); ``probes`` and ``verbose`` are set here.
    verbose : bool
        Print a line as each fold is done.

    Returns
    -------
    Results
        What ``evaluate(df, window="4s", cv=folds, **options)`` returns with one
        PyTorch thread: the same rows in the same order, out-of-fold predictions, classes
        and confound probes.
    """
    import os

    import pandas as pd

    from medspt.api import windows_from
    from medspt.core.splits import subject_folds
    from medspt.evaluation.probes import probe_table
    from medspt.evaluation.results import Results

    ws, _ = windows_from(df, window="4s")
    splits = subject_folds(ws.y, ws.groups, folds)  # what evaluate(cv=folds) makes
    options = {**options, "probes": False, "verbose": False}  # probes: once, on all folds
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    # up to two processes per core: three folds on two cores end together, at 1.5 times a
    # fold's time, where two processes would leave the third fold to run alone
    workers = 1 if (cores or 1) < 2 else min(len(splits), 2 * cores)
    t0 = time.perf_counter()
    if verbose:
        at_once = "one after another" if workers == 1 else f"{workers} at a time"
        print(f"fitting {len(splits)} folds, {at_once} ...", flush=True)
    if workers == 1:
        parts = {}
        for k, fold in enumerate(splits):
            parts[k] = _demo_fold(ws, fold, options)
            _fold_done(k, len(splits), t0, verbose)
    else:
        parts = _demo_folds_apart(ws, splits, options, workers, t0, verbose)
    # fold k's evaluate numbered its only fold 0
    rows = [parts[k][0].assign(fold=k) for k in range(len(splits))]
    results = Results(pd.concat(rows, ignore_index=True))
    results.predictions = pd.concat(
        [parts[k][1].assign(fold=k) for k in range(len(splits))], ignore_index=True
    )
    results.classes = parts[0][2]
    results.best_estimator_ = results.chosen_ = None
    results.probes = probe_table(ws, splits)
    seen = set()
    for k in range(len(splits)):  # the folds' warnings, once each, as the CLI shows them
        for category, message in parts[k][3]:
            if (category, message) not in seen:
                seen.add((category, message))
                warnings.warn(message, category, stacklevel=2)
    return results


def _demo_fold(ws, fold, options: dict) -> tuple:
    """``evaluate`` on one fold with one PyTorch thread: its rows (a DataFrame), its
    out-of-fold predictions, the classes, and the warnings it raised as (category,
    message) pairs for the calling process to show."""
    import pandas as pd
    import torch

    from medspt.api import evaluate

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = evaluate(ws, cv=[fold], **options)
    finally:
        torch.set_num_threads(threads)
    said = [(w.category, str(w.message)) for w in caught]
    return pd.DataFrame(res), res.predictions, res.classes, said


def _demo_folds_apart(ws, splits: list, options: dict, workers: int, t0: float, verbose: bool):
    """:func:`_demo_fold` for every fold, each in a fresh Python process (``workers`` at a
    time), and their results by fold number.

    Plain child processes that import medspt themselves, not :mod:`multiprocessing`: its
    spawned workers import the caller's main module again, which fails for a script read
    from stdin and re-runs an unguarded script, and forking a process whose PyTorch
    threads have started can hang. Inputs and results pass through files in a private
    temporary folder; a fold's error is raised here."""
    import os
    import pickle
    import subprocess
    import tempfile

    entry = "from medspt.cli.commands import _demo_worker; _demo_worker()"
    # one thread per process, also for libraries that read these before PyTorch starts
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    parts: dict[int, tuple] = {}
    with tempfile.TemporaryDirectory(prefix="medspt-demo-") as tmp:
        folder = Path(tmp)
        waiting, running = list(range(len(splits))), {}
        try:
            while waiting or running:
                while waiting and len(running) < workers:
                    k = waiting.pop(0)
                    (folder / f"{k}.in").write_bytes(pickle.dumps((ws, splits[k], options)))
                    with open(folder / f"{k}.err", "wb") as err:
                        args = [sys.executable, "-c", entry, str(folder / f"{k}.in")]
                        args.append(str(folder / f"{k}.out"))
                        running[k] = subprocess.Popen(args, env=env, stderr=err)
                for k, proc in list(running.items()):
                    if proc.poll() is None:
                        continue
                    del running[k]
                    parts[k] = _demo_result(folder, k, proc.returncode)
                    _fold_done(k, len(splits), t0, verbose)
                time.sleep(0.1)
        finally:
            for proc in running.values():  # an error or Ctrl-C: stop the other folds
                proc.kill()
                proc.wait()
    return parts


def _demo_result(folder: Path, k: int, returncode: int) -> tuple:
    """Fold ``k``'s result from its process, or the error it raised (raised here)."""
    import pickle

    out = folder / f"{k}.out"
    if returncode != 0 or not out.exists():
        tail = (folder / f"{k}.err").read_text(errors="replace")[-2000:]
        raise RuntimeError(f"demo fold {k + 1} stopped (exit code {returncode}):\n{tail}")
    status, value = pickle.loads(out.read_bytes())
    if status == "error":
        raise value
    return value


def _demo_worker() -> None:
    """Entry point of one demo fold's process: :func:`_demo_fold` on the pickled inputs
    in ``sys.argv[1]``, its result (or the error it raised) pickled to ``sys.argv[2]``."""
    import pickle

    ws, fold, options = pickle.loads(Path(sys.argv[1]).read_bytes())
    try:
        result = ("ok", _demo_fold(ws, fold, options))
    except Exception as e:  # raised again by the calling process
        result = ("error", e)
    try:
        data = pickle.dumps(result)
    except Exception:  # an error that cannot be pickled: its text
        data = pickle.dumps(("error", RuntimeError(f"{type(result[1]).__name__}: {result[1]}")))
    Path(sys.argv[2]).write_bytes(data)


def _fold_done(k: int, n: int, t0: float, verbose: bool) -> None:
    if verbose:
        print(f"fold {k + 1} of {n} fitted ({time.perf_counter() - t0:.0f} s)", flush=True)


def cmd_fit(a) -> int:
    from medspt.api import fit_spt
    from medspt.cli.args import data_kwargs, model_params
    from medspt.core.tables import read_table
    from medspt.evaluation.plots import plot_history

    df = read_table(a.data)
    unlabelled = read_table(a.unlabelled, "--unlabelled") if a.unlabelled else None
    clf = fit_spt(
        df, **data_kwargs(a), unlabelled=unlabelled, **model_params(a), verbose=not a.quiet
    )
    if a.quiet:  # a verbose fit printed it before training
        print(clf.data_summary_)
    out = Path(a.out)
    clf.save(out)
    plot_history(clf, out.with_suffix(".history.png"))
    print(f"saved model to {out}; training curves: {out.with_suffix('.history.png')}")
    print(
        f"chosen epochs: {clf.best_epoch_}; for an honest accuracy estimate run "
        "`medspt evaluate` (subject-wise cross-validation)"
    )
    return 0


def cmd_predict(a) -> int:
    from medspt.core.tables import read_table
    from medspt.estimator.metrics import recording_level
    from medspt.estimator.persistence import load

    clf = load(a.model)
    if clf.frame_spec_ is None:
        raise InputError(
            f"model {a.model!r} was fitted on arrays, not a DataFrame; "
            "use the Python API to predict"
        )
    pred = clf.predict(read_table(a.data))
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    pred.windows.to_csv(out, index=False)
    # no recording-level truth when labels change inside recordings: left out everywhere
    recordings, scores, note = recording_level(pred.windows, pred.recordings, pred.scores)
    rec = out.with_name(out.stem + ".recordings.csv")
    recordings.to_csv(rec, index=False)
    print(f"{len(pred.windows)} window predictions -> {out}; per recording -> {rec}")
    if scores is None:  # unlabelled data: nothing to score
        return 0
    K = len(clf.classes_)
    print()
    print(
        f"scores on the labels of {a.data} (chance_*: the accuracy of always predicting "
        f"the most frequent true class / of guessing among the {K} classes; balanced "
        f"accuracy's chance is 1/{K} = {1 / K:.3f}):"
    )
    print(scores.to_string(float_format=lambda x: f"{x:.3f}"))
    if note:
        print(note)
    print()
    print("confusion matrix (rows: true class, columns: predicted class, windows):")
    print(pred.confusion.to_string())
    print()
    tables = {
        "scores": (scores, True),
        "confusion": (pred.confusion, True),
        "per_class": (pred.per_class, True),
        "subjects": (pred.subjects, False),
    }
    for name, (table, index) in tables.items():
        path = out.with_name(f"{out.stem}.{name}.csv")
        table.to_csv(path, index=index)
        print(f"{name.replace('_', ' ')} -> {path}")
    from medspt.evaluation.plots import plot_confusion

    long = pred.confusion.stack().rename("count").reset_index()  # label, predicted, count
    figure = plot_confusion(
        long, out.with_name(f"{out.stem}.confusion.png"), title=f"{Path(a.data).name}: windows"
    )
    print(f"confusion figure -> {figure}")
    return 0


def _validation_per_fold(ws, folds, a) -> list[int]:
    """Training subjects each fold's fits hold out for early stopping (the estimator's own
    split; its size does not depend on the seed)."""
    import numpy as np

    from medspt.cli.args import DEFAULTS, model_params
    from medspt.core.splits import validation_split

    val_size = float(model_params(a).get("val_size", DEFAULTS["val_size"]))
    counts = []
    for train, _ in folds:
        y, groups = ws.y[train], ws.groups[train]
        _, val = validation_split(y, groups, val_size, int(a.seeds[0]))
        counts.append(len(np.unique(groups[val])))
    return counts


def cmd_evaluate(a) -> int:
    from medspt.api import comparison_table, evaluate, unlabelled_windows, windows_from
    from medspt.cli.args import data_kwargs, model_params, read_kwargs
    from medspt.core.splits import subject_folds
    from medspt.core.tables import read_table
    from medspt.data.summary import DataSummary
    from medspt.evaluation.comparisons import spt_answer
    from medspt.evaluation.probes import probe_table_markdown
    from medspt.evaluation.versus import versus_markdown

    ws, spec = windows_from(read_table(a.data), **data_kwargs(a))  # cut once, for both
    if ws.y is None:
        raise InputError(f"--data file {a.data!r} has no labels (--label {a.label})")
    uws = None
    if a.unlabelled:
        other = read_table(a.unlabelled, "--unlabelled")
        uws = unlabelled_windows(other, ws, spec, **read_kwargs(a))
        print(f"unlabelled: {len(uws)} windows of {len(set(uws.groups))} subjects for pretraining")
    folds = subject_folds(ws.y, ws.groups, a.cv)
    summary = DataSummary.of(ws)
    summary.validation_per_fold = _validation_per_fold(ws, folds, a)
    print(summary)
    print(f"{len(folds)} subject-wise folds; every configuration is fitted on each")
    results = evaluate(
        ws,
        cv=folds,
        depths=tuple(a.depths),
        maskings=tuple(a.maskings),
        seeds=tuple(a.seeds),
        scratch=not a.no_scratch,
        scratch_long=not a.no_scratch_long,
        baselines=tuple(a.baselines),
        unlabelled=uws,
        refit=a.refit,
        metric=a.metric,
        probes=not a.no_probes,
        verbose=not a.quiet,
        **model_params(a),
    )
    table = _write_results(results, Path(a.out), a.metric, None)
    if a.refit:  # evaluate saw windows: the model learns how the table was cut here
        results.best_estimator_.frame_spec_ = spec
        _save_refit(results.best_estimator_, Path(a.out) / "model.safetensors")
    print(_markdown(table, a.metric))
    comparisons = comparison_table(results, metric=a.metric)  # as summary.md states them
    print(spt_answer(results, a.metric, comparisons))
    if a.baselines:
        print(versus_markdown(results, a.metric, comparisons))
    # the confound probes evaluate ran on the same folds (_write_results wrote probes.md)
    if getattr(results, "probes", None) is not None:
        print(probe_table_markdown(results.probes))
    print(f"per-fold rows, out-of-fold predictions, paired comparisons and plot in {a.out}")
    return 0


def _save_refit(clf, path: Path) -> None:
    """Save a refitted model with its training curves and say what was chosen."""
    from medspt.evaluation.plots import plot_history

    clf.save(path)
    plot_history(clf, path.with_suffix(".history.png"))
    ev = clf.evaluation_
    nested = ev.get("nested_mean")
    print(
        f"refitted on all subjects: {ev['chosen']['config']} at depth {ev['chosen']['depth']} "
        f"(best validation score {ev['val_score']:.3f}; its cross-validated {ev['metric']} "
        f"{ev['cv_mean']:.3f}"
        + (f", nested estimate of choosing then fitting {nested:.3f}" if nested else "")
        + f") -> {path}"
    )


def cmd_diagnose(a) -> int:
    from medspt.core.tables import read_table
    from medspt.estimator.persistence import load
    from medspt.evaluation.diagnostics import write_diagnostics

    names = a.names or [Path(m).name.split(".")[0] for m in a.models]
    if len(names) != len(a.models):
        raise InputError(f"--names gives {len(names)} names for {len(a.models)} models")
    if len(set(names)) != len(names):
        raise InputError(f"model names must differ, got {names}; pass --names")
    models = {n: load(m) for n, m in zip(names, a.models)}
    if a.data == "demo":
        from medspt.data.synthetic import make_demo_frame

        df = make_demo_frame()
    else:
        df = read_table(a.data)
    for n, m in zip(names, a.models):
        if models[n].frame_spec_ is None:
            raise InputError(
                f"model {m!r} was fitted on arrays, not a DataFrame; use "
                "medspt.evaluation.diagnostics.write_diagnostics with its windows"
            )
    table = write_diagnostics(models, df, a.out, w=a.w, max_windows=a.max_windows)
    cols = ["model", "depth", "attention_distance", "uniform_distance", "locality_ratio"]
    cols += [c for c in ("positional_spearman",) if c in table]
    print(table[cols].to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    print(f"tables and figures in {a.out} (summary.md, distance_profiles.png, positional_*.png)")
    return 0


def _out(p: argparse.ArgumentParser, default: str, what: str) -> None:
    p.add_argument("--out", default=default, help=f"{what} (default: {default})")


def _add_demo(sub) -> None:
    from medspt.nn.masking import STRATEGIES

    p = sub.add_parser(
        "demo",
        help=COMMANDS["demo"],
        description="evaluate() on built-in synthetic data with the package's default "
        "model: scratch, scratch-long, SPT and MiniRocket on the same subject-wise folds "
        "(the folds fitted side by side, one process each, on machines with 2 or more "
        "cores).",
    )
    _out(p, "medspt-demo", "output folder")
    p.add_argument(
        "--folds",
        type=int,
        default=2,
        help="subject-wise cross-validation folds (default: 2: each model trains on 8 "
        "subjects and is tested on the other 8)",
    )
    p.add_argument(
        "--depths", type=int, nargs="+", default=[2], help="Transformer depths (default: 2)"
    )
    p.add_argument(
        "--maskings",
        nargs="+",
        default=["span"],
        choices=[*STRATEGIES, "all"],
        help="SPT masking strategies; all: the four (default: span, the package default)",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the data and of every model (random_state in the API) (default: 0)",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="short training (min_steps=0): a first look in about a third of the time "
        "(default: the package's training budget)",
    )
    p.add_argument(
        "--quiet", action="store_true", help="no line as each fold is done (default: shown)"
    )
    p.set_defaults(func=cmd_demo)


def _add_fit(sub) -> None:
    from medspt.cli.args import add_data_args, add_model_args, add_unlabelled_arg

    p = sub.add_parser(
        "fit",
        help=COMMANDS["fit"],
        description="fit_spt(df, ...) from the command line: every option is the argument "
        "of the same name (--d-model is d_model; --seed is random_state).",
    )
    add_data_args(p)
    add_unlabelled_arg(p)
    add_model_args(p)
    p.add_argument("--quiet", action="store_true", help="no progress bars (default: shown)")
    _out(p, "model.safetensors", "model file to write")
    p.set_defaults(func=cmd_fit)


def _add_predict(sub) -> None:
    p = sub.add_parser(
        "predict",
        help=COMMANDS["predict"],
        description="Predict every window and recording of --data. When --data has the "
        "label column, also print the scores per level (window, recording, subject) with "
        "their chance levels and the window confusion matrix, and write them beside --out "
        "with per-class and per-subject tables (<stem>.scores.csv, <stem>.confusion.csv, "
        "<stem>.per_class.csv, <stem>.subjects.csv).",
    )
    p.add_argument("--model", required=True, help="model file from medspt fit (required)")
    p.add_argument(
        "--data", required=True, help="long-format .csv, .tsv or .parquet file (required)"
    )
    _out(
        p,
        "predictions.csv",
        "window predictions; per recording and, with labels, scores, confusion matrix, "
        "per class and per subject beside it",
    )
    p.set_defaults(func=cmd_predict)


def _add_evaluate(sub) -> None:
    from medspt.cli.args import (
        add_baseline_args,
        add_data_args,
        add_grid_args,
        add_model_args,
        add_unlabelled_arg,
    )

    p = sub.add_parser(
        "evaluate",
        help=COMMANDS["evaluate"],
        description="evaluate(df, ...) from the command line: the grid is --depths, "
        "--maskings and --seeds (lists; --depth, --masking and --seed are their aliases); "
        "every other option is the argument of the same name, shared by all models.",
    )
    add_data_args(p)
    add_unlabelled_arg(p)
    add_grid_args(p, depths=[2], maskings=["span"], seeds=[0])
    add_baseline_args(p)
    p.add_argument(
        "--no-probes", action="store_true",
        help="leave out the confound probes (position, channel means, window levels) "
        "(default: off: probes run on the same folds)",
    )  # fmt: skip
    add_model_args(p, grid=True)
    p.add_argument(
        "--cv", type=int, default=5, help="subject-wise cross-validation folds (default: 5)"
    )
    p.add_argument(
        "--metric",
        default="balanced_accuracy",
        help="metric of the tables and plot (default: balanced_accuracy)",
    )
    p.add_argument(
        "--refit",
        action="store_true",
        help="also fit the configuration with the best validation score (never the test "
        "folds) on all subjects and save it as model.safetensors in --out (default: off)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar (default: shown)")
    _out(p, "medspt-evaluation", "output folder")
    p.set_defaults(func=cmd_evaluate)


def _add_diagnose(sub) -> None:
    p = sub.add_parser("diagnose", help=COMMANDS["diagnose"])
    p.add_argument("models", nargs="+", help="model files, e.g. a scratch and an SPT model")
    p.add_argument(
        "--data",
        required=True,
        help="long-format .csv/.parquet file (cut as in training) or demo (required)",
    )
    p.add_argument("--names", nargs="+", help="a name per model (default: the file names)")
    _out(p, "medspt-diagnostics", "output folder")
    p.add_argument("--w", type=int, default=1, help="locality radius in tokens (default: 1)")
    p.add_argument(
        "--max-windows", type=int, default=512, help="windows to average over (default: 512)"
    )
    p.set_defaults(func=cmd_diagnose)


def _add_datasets(sub) -> None:
    from medspt.cli.datasets import add_datasets_parser

    add_datasets_parser(sub)


def _add_study(sub, only: Collection[str] | None = None) -> None:
    from medspt.cli.study import add_study_parser

    add_study_parser(sub, only)


_ADD = {
    "demo": _add_demo,
    "fit": _add_fit,
    "predict": _add_predict,
    "evaluate": _add_evaluate,
    "diagnose": _add_diagnose,
    "datasets": _add_datasets,
    "study": _add_study,
}


def build_parser(commands: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The ``medspt`` parser. ``fit``, ``evaluate`` and ``study run`` share their data and
    model options (:mod:`medspt.cli.args`): the arguments of ``fit_spt`` / ``evaluate`` /
    ``run_study`` and of ``SPTClassifier`` in kebab case, with the estimator's defaults.

    ``commands``: the commands whose options are built (None: all); the others are listed
    with their help line only, so that a command loads only its own options and library.
    ``"study report"`` in ``commands`` builds ``study`` with that sub-command's options only."""
    from medspt._version import __version__

    parser = argparse.ArgumentParser(
        prog="medspt", description="Self-pretrained Transformers for medical time series."
    )
    parser.add_argument("--version", action="version", version=f"medspt {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    study_only = {c.split()[1] for c in commands or () if c.startswith("study ")}
    for name, help_line in COMMANDS.items():
        if name == "study" and commands is not None and name in commands:
            _add_study(sub, study_only)  # none named (study --help): their help lines only
        elif commands is None or name in commands:
            _ADD[name](sub)
        else:
            sub.add_parser(name, help=help_line)
    return parser


def _named_command(argv: list[str]) -> tuple[str, ...]:
    """The command ``argv`` names (its first word that is not an option), if it is one;
    for ``study``, also its sub-command (``("study", "study report")``)."""
    words = [w for w in argv if not w.startswith("-")]
    if not words or words[0] not in COMMANDS:
        return ()
    if words[0] == "study" and len(words) > 1:
        return ("study", f"study {words[1]}")
    return (words[0],)


def main(argv: list[str] | None = None) -> int:
    """Run one command; user mistakes end as one line ``medspt <command>: error: ...``
    (exit code 2) and warnings print as ``medspt <command>: warning: ...``, both with
    the library's Python-style hints (``channels=[...]``) in command-line form.

    Output piped into a reader that stops early (``medspt datasets info gaitpd | head``)
    ends the command quietly with exit code 1, the convention of the Python
    documentation for a closed pipe, instead of a ``BrokenPipeError`` traceback.
    """
    import os

    try:
        argv = sys.argv[1:] if argv is None else list(argv)
        parser = build_parser(_named_command(argv))
        args = parser.parse_args(argv)
        command = command_parser(parser, args)
        with warnings.catch_warnings():  # restores the filters and showwarning afterwards
            warnings.showwarning = show_warnings_as(command.prog, command)
            try:
                code = args.func(args)
            except (InputError, ModelFileError, FileNotFoundError) as e:
                print(f"{command.prog}: error: {cli_hints(str(e), command)}", file=sys.stderr)
                code = 2
        sys.stdout.flush()  # a closed pipe raises here, not in the interpreter's flush at exit
        return code
    except BrokenPipeError:
        # the reader is gone: send what is still buffered to devnull, so that the flush at
        # exit does not raise again, and stop without a message
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):  # stdout is not a file (captured)
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - must outlive this call
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
