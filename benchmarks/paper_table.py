"""The capacity-versus-pretraining table on the real datasets, next to the tsai baselines.

For each protocol (GPD-1 and NE-1; CAM-1 when its signals are present) this runs the grid
depth × {scratch, label-only with ALiBi positions, SPT with each masking} × seeds as a
medspt study, then writes ``benchmarks/results/paper_table.md`` with one table per
protocol: accuracy mean ± std over folds × seeds, the gain of each masking over scratch
with its paired Wilcoxon p-value, and the tsai baselines scored on the same folds when
``benchmarks/results/baselines_<protocol>.csv`` exists (``benchmarks/baselines.py``).

    python benchmarks/paper_table.py                                # the full grid (hours)
    python benchmarks/paper_table.py --depths 1 2 --maskings span block \\
        --pretrain-epochs 10 --epochs 15                            # a reduced grid
    python benchmarks/paper_table.py --report-only                  # tables from the studies

The studies live in ``--storage``, by default one Optuna journal file per protocol,
``benchmarks/results/studies/paper_table_<protocol>.log``, which is committed: the grid
takes many hours on a small CPU, so any machine with the data can resume it where the last
run stopped (run one process per protocol; several may share a file). Cells run seed by
seed, so a partial study has covered every depth and configuration once before it repeats.

Real data is found through ``MEDSPT_DATA`` or ``--root`` (a folder holding ``gaitpdb/``
and ``noneeg/``); protocols whose data is missing are reported as skipped.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
import warnings
from pathlib import Path

from _common import (
    RESULTS,
    command_line,
    git_revision,
    machine,
    parser,
    study_storage,
    without_paths,
    write_report,
)
from _paper_table_report import _protocol_report, _studies, depth_contrast_lines

from medspt.estimator.classifier import PAPER_RECIPE

PROTOCOLS = ("GPD-1", "NE-1", "CAM-1")
PATH_FLAGS = ("--root", "--out", "--storage")  # shown as PATH in the report's command


def _available(name: str, root) -> str | None:
    """None when the protocol's data loads, else why not."""
    from medspt.datasets.protocols import protocol

    try:
        protocol(name, root=root)
    except Exception as e:  # missing folder or files: reported, not fatal
        return f"{type(e).__name__}: {without_paths(str(e))[:160]}"
    return None


# set by the grid for each cell, never pinned with the model
GRID_OWNED = ("depth", "masking", "pretrain", "random_state", "verbose", "device")


def default_model_params() -> dict:
    """The package's default model, every setting pinned (its resolved defaults today), so
    that a later change of the defaults never changes a resumed grid."""
    from medspt import SPTClassifier

    params = SPTClassifier().get_params()
    return {k: v for k, v in params.items() if k not in GRID_OWNED}


def _params(args: argparse.Namespace) -> dict:
    """The model settings of the studies this command runs: the SPT paper's recipe
    (``--model paper``) or the package's default model (``--model default``)."""
    if args.model == "default":
        params = {**default_model_params(), "model": "default"}
    else:
        params = {
            "d_model": args.d_model,
            "n_heads": args.n_heads,
            "epochs": args.epochs,
            "pretrain_epochs": args.pretrain_epochs,
            "batch_size": args.batch_size,
            # the recipe these studies were built with, pinned: later estimator defaults
            # (benchmarks/select_defaults.py) must not change a resumed grid
            **PAPER_RECIPE,
        }
    # variant settings only when they differ from the defaults, so the first studies
    # resume as they were
    if args.normalize == "window":
        params["normalize"] = "window"
    if args.pooling != "mean":
        params["pooling"] = args.pooling
    if args.lr is not None:
        params["lr"] = args.lr
    if args.val_size is not None:
        params["val_size"] = args.val_size
    if args.device is not None:
        params["device"] = args.device  # this process's only, not part of the study
    return params


def _study_params(params: dict) -> dict:
    """What the study's cells get: the settings without the ``model`` tag."""
    return {k: v for k, v in params.items() if k != "model"}


def _suffix(params: dict) -> str:
    """A variant's study name suffix: paper-<protocol><suffix>; the settings that differ
    from the model's own (the default model pins its lr and val_size: not a variant)."""
    base = default_model_params() if params.get("model") == "default" else {}
    out = "-default" if params.get("model") == "default" else ""
    out += "-window" if params.get("normalize") == "window" else ""
    out += f"-{params['pooling']}" if params.get("pooling", "mean") != "mean" else ""
    for key, tag in (("lr", "lr"), ("val_size", "val")):
        if key in params and params[key] != base.get(key):
            out += f"-{tag}{params[key]:g}"
    return out


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The grid, model settings, variant and report options of the command line."""
    ap = parser(__doc__, "seeds")
    ap.add_argument("--protocols", nargs="+", default=list(PROTOCOLS))
    ap.add_argument("--depths", type=int, nargs="+", default=[1, 2, 4, 8])
    ap.add_argument("--maskings", nargs="+", default=["random", "span", "channel", "block"])
    ap.add_argument(
        "--model",
        default="paper",
        choices=("paper", "default"),
        help="paper: the SPT paper's recipe with the sizes below (the recorded grid); "
        "default: the package's default model, pinned, in studies paper-<protocol>-default "
        "(--d-model ... --batch-size are then not used) (default: paper)",
    )
    ap.add_argument(
        "--device", default=None, help="cpu, cuda, cuda:1 ... for this process's cells "
        "(default: the study's, else auto)",
    )  # fmt: skip
    ap.add_argument("--d-model", type=int, default=64)
    ap.add_argument("--n-heads", type=int, default=4)
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--pretrain-epochs", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--metric", default="balanced_accuracy")
    ap.add_argument("--root", default=None, help="data root (default: MEDSPT_DATA)")
    ap.add_argument(
        "--no-alibi", action="store_true", help="leave out the scratch-alibi configuration"
    )
    ap.add_argument(
        "--storage",
        default=None,
        help="Optuna storage URL (default: the protocol's journal "
        "results/studies/paper_table_<protocol>.log)",
    )
    ap.add_argument(
        "--normalize",
        default="channel",
        choices=("channel", "window"),
        help="window: run the grid with per-window centring; like --pooling and --lr, a "
        "variant runs as its own study (paper-<protocol>-window...), and the report "
        "shows every study of the protocol",
    )
    ap.add_argument("--pooling", default="mean", choices=("mean", "cls"))
    ap.add_argument("--lr", type=float, help="learning rate (default: medspt's)")
    ap.add_argument(
        "--val-size",
        type=float,
        help="share of training subjects held out for early stopping (default: medspt's "
        "0.2; 0 trains on all of them for the fixed epochs)",
    )
    ap.add_argument(
        "--no-scratch-long",
        action="store_true",
        help="leave out scratch-long (label-only for SPT's whole budget of optimizer steps)",
    )
    ap.add_argument(
        "--tag", default="", help="suffix of the study names (paper-<protocol>...-<tag>)"
    )
    ap.add_argument("--report-only", action="store_true", help="tables from existing studies")
    ap.add_argument("--out", type=Path, default=RESULTS / "paper_table.md")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run (or resume) each protocol's grid, then write the report from its studies."""
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)

    import optuna

    from medspt.study import run_study

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    t0 = time.perf_counter()
    sections, skipped, summary, answers, contrasts, headlines = [], [], [], [], [], []
    for name in args.protocols:
        why = _available(name, args.root)
        if why:
            skipped.append(f"- {name}: skipped, data not available ({why})")
            continue
        if not args.report_only:
            print(f"{name}: running the grid", file=sys.stderr, flush=True)
            run_study(
                args.root,
                protocol=name,
                depths=args.depths,
                maskings=args.maskings,
                alibi=not args.no_alibi,
                seeds=args.seeds,
                storage=study_storage(name, args.storage),
                study_name=f"paper-{name}{_suffix(_params(args))}"
                + (f"-{args.tag}" if args.tag else ""),
                scratch_long=not args.no_scratch_long,
                metric=args.metric,
                params=_study_params(_params(args)),
            )
        sec, summ, answer, extra = _protocol_report(
            name, _studies(name, study_storage(name, args.storage)), args.metric
        )
        sections += sec
        summary += summ
        answers += answer
        contrasts.append(extra["contrast"])
        headlines.append(extra["headline"])
    depth = depth_contrast_lines(contrasts)
    headlines = [h for h in headlines if len(h)]
    if headlines:  # the clinician figure's depth axis, beside the report
        import pandas as pd

        pd.concat(headlines, ignore_index=True).to_csv(
            args.out.with_name(args.out.stem + "_headline.csv"), index=False, float_format="%.6g"
        )
    text = _document(
        args, argv, summary, depth + sections + skipped, time.perf_counter() - t0, answers
    )
    print(text)
    write_report(args.out, text)
    return 0


def _control_state(protocols: list[str]) -> str:
    """Which of the grid's scratch-long fits follow issue 59's control rule, per protocol
    (:func:`control_replay.refit_progress`)."""
    from control_replay import refit_progress

    parts = []
    for name in protocols:
        need, done = refit_progress(name)
        if need:
            rest = "all refitted" if done == need else f"{need - done} still under the old rule"
            parts.append(f"{name}: {need} fits changed by the new rule, {done} refitted ({rest})")
    if not parts:
        return "This grid's scratch-long follows the control rule of issue 59:"
    return (
        "This grid's scratch-long ran before issue 59's control rule (scratch's early "
        "stopping, no epoch kept from inside warm-up); the fits that rule changes are "
        "refitted and replace the stored ones (" + "; ".join(parts) + "; "
        "`control_replay.md`). Rows not yet refitted are the older control's:"
    )


def _document(
    args: argparse.Namespace,
    argv: list[str],
    summary: list[str],
    body: list[str],
    wall: float,
    answers: list[str] = (),
) -> str:
    """The whole report: the default model's answer per protocol, the summary of declared
    comparisons, the protocols' sections (``body``) and the run."""
    import optuna
    import torch

    import medspt

    m = machine()
    lines = [
        "# Capacity versus pretraining on the real datasets",
        "",
        "Does self-pretraining help, with which masking, and how does the gain change with "
        "depth? Subject-wise evaluation on the dataset protocols (see "
        "`medspt.datasets.protocols`).",
        "",
        *(
            [
                "## The answer, on the package's default model",
                "",
                "SPT against the better of the two label-only controls (scratch, or the "
                "compute-matched scratch-long) at each depth and masking, paired over "
                "subjects. " + _control_state(args.protocols),
                "",
                *answers,
                "",
            ]
            if answers
            else []
        ),
        "## Summary",
        "",
        "Declared comparisons only: no comparison chooses anything on these test folds (the "
        "default model itself was chosen after them had been read: docs/concepts.md). "
        "Seeds of one fold "
        "share its subjects, so they are averaged first; subject-level tests use the pooled "
        "out-of-fold balanced accuracy (each subject's additive share, two-sided sign-flip "
        "permutation test over subjects, 95 % subject bootstrap interval); fold-level "
        "columns use the 5 seed-averaged folds (t interval, exact sign-flip test: 5 folds "
        "cannot give p below 0.0625). *scratch-long* is label-only training for SPT's whole "
        "budget of optimizer steps; *nested best* is the configuration each outer fold "
        "chose by its own validation subjects. Holm-adjusted p-values are in each section's "
        "comparison table.",
        "",
        f"| protocol | model | versus | pooled {args.metric} | difference (subjects) "
        "[95 % CI] | p (subjects) | difference (folds) [95 % CI], p |",
        "|---|---|---|---:|---:|---:|---:|",
        *summary,
        "",
        *body,
        "",
        "## Run",
        "",
        f"- command: `{command_line('paper_table.py', argv, PATH_FLAGS)}`",
        f"- model settings: {_params(args)}; grid depths {args.depths}, maskings "
        f"{args.maskings}, seeds {args.seeds}",
        f"- date: {dt.datetime.now().strftime('%Y-%m-%d %H:%M')}, wall time of this run "
        f"{wall / 60:.1f} min"
        + (" (tables only; the studies ran earlier)" if args.report_only else ""),
        f"- machine: {m['cpu']}, {m['cores']} logical cores, {m['os']}; torch threads "
        f"{torch.get_num_threads()}",
        f"- versions: medspt {medspt.__version__} ({git_revision()}), torch {torch.__version__}, "
        f"optuna {optuna.__version__}, python {sys.version.split()[0]}",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    raise SystemExit(main())
