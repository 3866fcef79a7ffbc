"""How long the default takes to fit one fold of a protocol, on this machine's cores.

Issue 28's speed check: a default fit of one GPD-1 fold in at most 60 s on 2 cores. This
fits ``SPTClassifier()`` (every default, SPT included) on the training subjects of
``--fold`` exactly as ``medspt.evaluate`` does, with ``--threads`` torch threads, and
reports the wall time, the optimizer steps of each stage from the fit's own history, the
time per step, and how much of the machine other processes used meanwhile (a busy
machine makes the time an upper bound). Rows are appended to ``fold_fit_time.csv``.

    MEDSPT_DATA=/path/to/data python benchmarks/fold_fit_time.py --protocol GPD-1 --threads 2
"""

from __future__ import annotations

import os
import sys
import time
import warnings

import pandas as pd
from _common import (
    RESULTS,
    append_csv,
    cpu_seconds,
    git_revision,
    parser,
    resolved_hash,
    write_report_with_run,
)

CSV = RESULTS / "fold_fit_time.csv"
MD = RESULTS / "fold_fit_time.md"
TARGET_S = {"GPD-1": 60.0}  # issue 28, on 2 cores


def time_fit(name: str, fold: int, seed: int, root=None) -> dict:
    """One default fit on ``fold``'s training subjects of protocol ``name``: a row."""
    import torch

    from medspt import SPTClassifier
    from medspt.datasets.protocols import protocol

    p = protocol(name, root=root)
    ws = p.windows
    train = p.folds[fold][0]
    X, y, g = ws.X[train], ws.classes[ws.y[train]], ws.groups[train]
    before = cpu_seconds(children=False)  # (machine busy, this process) CPU seconds
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = SPTClassifier(random_state=seed).fit(X, y, groups=g)
    wall = time.perf_counter() - start
    after = cpu_seconds(children=False)
    other = float("nan")
    if before and after:
        busy, own = after[0] - before[0], after[1] - before[1]
        other = max(0.0, busy - own) / (wall * (os.cpu_count() or 1))
    steps = {k: int(sum(r["steps"] for r in h)) for k, h in clf.history_.items()}
    n_steps = sum(steps.values())
    return {
        "protocol": name,
        "fold": fold,
        "seed": seed,
        "threads": torch.get_num_threads(),
        "windows": len(X),
        "batch_size": clf.batch_size_,
        "pretrain_steps": steps.get("pretrain", 0),
        "finetune_steps": steps.get("finetune", 0),
        "fit_s": round(wall, 1),
        "ms_per_step": round(1000 * wall / max(n_steps, 1), 1),
        "other_cpu": round(other, 3),
        "defaults": resolved_hash(len(X)),  # as this fit resolves "auto" settings
        "revision": git_revision(),
    }


def report(rows: pd.DataFrame) -> str:
    """The rows as a table, with each protocol's target where there is one."""
    lines = [
        "# Fitting the default on one fold",
        "",
        "`SPTClassifier()` with every default (SPT: pretraining, then fine-tuning with "
        "early stopping on validation subjects) on one outer fold's training subjects, as "
        "`medspt.evaluate` fits it. *other CPU*: the share of the machine other processes "
        "used during the fit (above 0, the time is an upper bound).",
        "",
        "| protocol | fold | threads | windows | batch | steps (pretrain + fine-tune) | "
        "ms/step | fit s | target s | other CPU | defaults | revision |",
        "|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---|---|",
    ]
    for r in rows.itertuples():
        target = TARGET_S.get(r.protocol)
        shown = (
            "–"
            if target is None
            else f"{target:.0f}" + ("" if r.fit_s <= target else " (**not met**)")
        )
        lines.append(
            f"| {r.protocol} | {r.fold} | {r.threads} | {r.windows:,} | {r.batch_size} | "
            f"{r.pretrain_steps} + {r.finetune_steps} | {r.ms_per_step:.0f} | {r.fit_s:.0f} | "
            f"{shown} | {r.other_cpu:.0%} | {r.defaults} | {r.revision} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = parser(__doc__, "data", "threads")
    ap.add_argument("--protocol", default="GPD-1", help="protocol name (default GPD-1)")
    ap.add_argument("--fold", type=int, default=0, help="outer fold (default 0)")
    ap.add_argument("--seed", type=int, default=0, help="random_state (default 0)")
    args = ap.parse_args(argv)
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    start = time.time()
    row = time_fit(args.protocol, args.fold, args.seed, root=args.data)
    print(row, flush=True)
    append_csv(CSV, pd.DataFrame([row]))
    text = report(pd.read_csv(CSV))
    wall = time.time() - start
    write_report_with_run(MD, text, "fold_fit_time.py", argv or sys.argv[1:], wall, args.threads)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
