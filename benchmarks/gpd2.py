"""GPD-2, whole walks: what full and hierarchical attention cost on them, and what a
model trained on whole recordings scores per subject.

``cost`` (the default): per configuration (attention ``full`` / ``hierarchical``; GPD-2
at 20 Hz and at 100 Hz, i.e. whole walks padded to the longest, 5,273 / 26,366 steps;
``--depth`` 2, ``--d-model`` 64, 4 heads and ``--patch-len`` 8, so 660 / 3,296 tokens;
the estimator's other defaults), in a fresh process each:

* the training cases of fold ``--fold`` (0) are split into fit and validation subjects
  as the estimator splits them (``medspt.core.splits.validation_split``, 0.2, seed 0),
  and the batch size is the one ``batch_size="auto"`` gives for the fit cases;
* one warm-up fit of one step per stage (Numba compilation, allocator), then one timed
  ``SPTClassifier.fit`` with ``min_steps=0, val_size=0`` and ``--repeats`` (3) epochs
  per stage of ``--steps`` (4) batches of fit cases (``--epoch``: all of them, real
  epochs), once with SPT (masked pretraining, whole-token masks, then fine-tuning) and
  once from scratch (fine-tuning only). Seconds per optimizer step per stage are the
  fastest timed epoch's, from the training loop's own history (the least disturbed by
  other work; the share of CPU other processes took is recorded); a configuration whose
  warm-up step takes over ``--slow-step-s`` (10 s) is timed on 2 epochs of 2 steps. One
  validation pass is timed with ``predict_proba`` on the validation cases;
* an epoch over the training fold = steps per epoch × seconds per step + one validation
  pass; a default fit (``min_steps=600``, 10 / 15 epochs at least) is estimated from it
  as an upper bound (early stopping can end a stage sooner);
* peak memory: the process's resident-set high-water mark (Linux ``VmHWM``, reset with
  ``clear_refs`` after the data are loaded and the warm-up ran) over the timed fit and
  the validation pass; what it grew by over the resident memory before them is the
  training's own share (tracemalloc does not see torch's allocations).

``accuracy``: ``--folds`` × ``--seeds`` of SPT and scratch on GPD-2 (``--rate`` 20)
with hierarchical attention (``--configs``; ``spt-full``, ``scratch-full`` where time
allows), whole-token masks and the estimator's default recipe otherwise (patch length
``--patch-len``), each fit through ``medspt.api.fit_fold`` on the protocol's folds. A
row per fit and the out-of-fold predictions go to ``results/gpd2_accuracy[_TAG].csv``
and ``..._predictions.csv`` as they finish (an interrupted run resumes). The summary:
mean ± std per configuration over folds (seeds averaged within folds first), SPT
against scratch paired over subjects (``medspt.evaluation.statistics.compare_subjects``:
sign-flip test,
bootstrap interval) and over folds, and GPD-1's windowed models on the same folds with
their windows aggregated per subject (mean PD probability; from the stored out-of-fold
predictions of ``default_model.py`` and the MiniRocket baseline, or fitted here with
``--fit-gpd1``). ``--minirocket`` adds aeon's MiniRocket on the whole walks
(:mod:`medspt.baselines`: standardized with training-fold statistics, each walk held at
its last value over its padding) in this interpreter; stored runs before it used tsai's
(``tsai-minirocket``, padding set to 0).

    python benchmarks/gpd2.py cost                        # results/gpd2_cost.{md,csv}
    python benchmarks/gpd2.py cost --rates 20 --steps 2 --no-write
    python benchmarks/gpd2.py cost --attn-dropout 0 --tag attn-dropout0
    python benchmarks/gpd2.py accuracy --folds 0 --seeds 0 --epochs 2 --pretrain-epochs 2 \\
        --min-steps 0 --tag short                         # a short end-to-end run
    python benchmarks/gpd2.py accuracy                    # 5 folds × 3 seeds
    python benchmarks/gpd2.py report                      # tables from the stored rows
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from _common import COMMON_OPTIONS, RESULTS, emit_result, parser
from _gpd2_accuracy import CONFIGS, run_accuracy
from _gpd2_cost import MARK, cost_cell, render_cost, run_cost
from _gpd2_report import paths, render_accuracy


def _cost_options(ap: argparse.ArgumentParser) -> None:
    c = ap.add_argument_group("cost")
    c.add_argument("--rates", type=float, nargs="+", default=[20.0, 100.0])
    c.add_argument(
        "--attentions",
        nargs="+",
        default=["full", "hierarchical"],
        choices=("full", "hierarchical"),
    )
    c.add_argument("--steps", type=int, default=4, help="optimizer steps per timed epoch")
    c.add_argument("--epoch", action="store_true", help="time whole epochs")
    c.add_argument(
        "--repeats", type=int, default=3, help="timed epochs per stage; the fastest counts"
    )
    c.add_argument(
        "--slow-step-s",
        type=float,
        default=10.0,
        help="a configuration whose warm-up step takes longer is timed on 2 epochs of 2 steps",
    )
    c.add_argument("--fold", type=int, default=0, help="the fold whose training cases are used")
    c.add_argument("--depth", type=int, default=2)
    c.add_argument("--d-model", type=int, default=64)


def _accuracy_options(ap: argparse.ArgumentParser) -> None:
    a = ap.add_argument_group("accuracy")
    a.add_argument("--rate", type=float, default=20.0, help="GPD-2's rate in Hz (20 or 100)")
    a.add_argument("--folds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    flags, kwargs = COMMON_OPTIONS["seeds"]  # the same --seeds as every script's
    a.add_argument(*flags, **kwargs)
    a.add_argument(
        "--configs",
        nargs="*",
        default=["spt-hierarchical", "scratch-hierarchical"],
        choices=list(CONFIGS),
    )
    a.add_argument(
        "--epochs", type=int, default=None, help="fine-tuning epochs (default: the estimator's)"
    )
    a.add_argument(
        "--pretrain-epochs",
        type=int,
        default=None,
        help="pretraining epochs (default: the estimator's)",
    )
    a.add_argument(
        "--min-steps",
        type=int,
        default=None,
        help="optimizer steps per stage at least (default: the estimator's 600; "
        "a short run needs 0)",
    )
    a.add_argument(
        "--fit-gpd1",
        action="store_true",
        help="also fit GPD-1's windowed default SPT and scratch models on the same folds and seeds",
    )
    a.add_argument(
        "--gpd1-predictions",
        nargs="*",
        default=None,
        help="GPD-1 out-of-fold prediction files to aggregate per subject (default: the "
        "stored default_model.py and MiniRocket ones; the flag alone: none)",
    )
    a.add_argument(
        "--minirocket", action="store_true", help="add aeon's MiniRocket on the whole walks"
    )


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The script's options, with ``argv`` kept (as ``args.argv``) for the reports.

    Parameters
    ----------
    argv : list of str
        The command line after the script's name.

    Returns
    -------
    argparse.Namespace
        The options; exits with a usage message on a bad one.
    """
    ap = parser(__doc__)
    ap.add_argument("what", nargs="?", default="cost", choices=("cost", "accuracy", "report"))
    ap.add_argument(
        "--root", default=None, help="gaitpdb folder (default: $MEDSPT_DATA or the local copy)"
    )
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="torch threads")
    ap.add_argument("--patch-len", type=int, default=8, help="steps per token (default 8)")
    ap.add_argument(
        "--attn-dropout",
        type=float,
        default=None,
        help="attention-weight dropout (default: the estimator's, = dropout 0.1)",
    )
    ap.add_argument("--out-dir", type=Path, default=RESULTS)
    ap.add_argument("--no-write", action="store_true", help="print only")
    ap.add_argument("--tag", default=None, help="write gpd2_<cost|accuracy>_<tag>.*")
    _cost_options(ap)
    _accuracy_options(ap)
    ap.add_argument("--cell", help=argparse.SUPPRESS)  # one cost cell, run by run_cost
    args = ap.parse_args(argv)
    args.argv = list(argv)
    if args.rate <= 0 or 100 % args.rate:
        ap.error("--rate must split 100 Hz into whole blocks (100, 50, 25, 20, 10, ...)")
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the mode asked for, print its report and write it unless ``--no-write``."""
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.cell:
        emit_result(MARK, cost_cell(json.loads(args.cell)))
        return 0
    t0 = time.perf_counter()
    if args.what == "cost":
        df = run_cost(args)
        text = render_cost(df, args, time.perf_counter() - t0)
        print(text)
        if not args.no_write:
            args.out_dir.mkdir(parents=True, exist_ok=True)
            stem = "gpd2_cost" + (f"_{args.tag}" if args.tag else "")
            df.to_csv(args.out_dir / f"{stem}.csv", index=False)
            (args.out_dir / f"{stem}.md").write_text(text)
            print(f"written to {args.out_dir / stem}.md", file=sys.stderr)
        return 0
    if args.no_write:
        args.out_dir = Path(os.environ.get("TMPDIR", "/tmp")) / "medspt-gpd2"
    notes = run_accuracy(args) if args.what == "accuracy" else []
    text = render_accuracy(args, notes, time.perf_counter() - t0)
    print(text)
    if not args.no_write:
        _, _, md = paths(args)
        md.write_text(text)
        print(f"written to {md}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
