"""Training throughput of medspt's Transformer versus tsai's TSTPlus on CPU.

Measures windows per second of one full training step (forward, loss, backward, gradient
clipping at 1.0, AdamW step), the way the training loop of :mod:`medspt.nn.training` runs it, on
synthetic float32 windows of 200 steps x 18 channels (the GPD-1 gait shape):

* medspt classification step (cross-entropy; what fine-tuning and scratch training do),
* medspt pretraining step (span mask from :func:`medspt.nn.masking.make_mask`, reconstruction,
  :func:`medspt.nn.training.masked_mse`; the mask is drawn inside the timed step, as in training),
* tsai ``TSTPlus`` classification step with the same depth, width, heads, feed-forward width
  (4 x d_model), dropout, window shape and batch size.

tsai needs torchvision and usually lives in its own environment. The TSTPlus half then runs in
a subprocess with that interpreter (``--tsai-python`` or ``$MEDSPT_TSAI_PYTHON``); the medspt
cells of the comparison run in the same subprocess, so both sides share one torch build, and
medspt is measured once more in the current interpreter for reference.

``--device cuda`` measures medspt alone on the GPU, through the training loop itself
(:func:`medspt.nn.training.finetune` / :func:`~medspt.nn.training.pretrain`, windows already on the
device), in float32 and with bf16 autocast (``amp``), and counts the host-device
synchronizations one step adds with ``torch.cuda.set_sync_debug_mode("warn")``. It stops with
a message when CUDA is not available.

Run ``python benchmarks/throughput.py --help`` for the options.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import sys
import time
from dataclasses import asdict
from pathlib import Path

import torch
from _common import RESULTS, cpu_seconds, emit_result, parser, run_script
from _throughput_cells import (
    HEAD_DIM,
    KINDS_MEDSPT,
    KINDS_SAME_TORCH,
    N_STEPS,
    Cell,
    Settings,
    foreign_seconds,
    import_medspt,
    run_cells,
    tsai_in_process,
    versions,
)
from _throughput_cuda import main_cuda
from _throughput_report import header_lines, load_notes, render, write_outputs

RESULT_MARKER = "@@THROUGHPUT-JSON@@"  # prefixes the worker's result line on stdout


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options (see ``--help``)."""
    p = parser(__doc__)
    p.add_argument("--depths", type=int, nargs="+", help="default: 1 2 4 8 (quick: 1 2)")
    p.add_argument("--d-models", type=int, nargs="+", help="default: 64 128 (quick: 64)")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument(
        "--patch-len", type=int, help="medspt steps per token (default 8; conv: its auto stride)"
    )
    p.add_argument(
        "--embedding",
        choices=("patch", "conv"),
        default="patch",
        help="medspt tokenizer; conv writes throughput_conv.md / .csv",
    )
    p.add_argument("--positional", default="learned", help="medspt positions (e.g. relative)")
    p.add_argument(
        "--attn-dropout", type=float, help="medspt dropout on attention weights (default: as 0.1)"
    )
    p.add_argument("--seconds", type=float, help="minimum timed seconds per cell (default 2)")
    p.add_argument("--min-steps", type=int, help="minimum timed steps per cell (default 20)")
    p.add_argument("--warmup", type=int, help="untimed warm-up steps per cell (default 3)")
    p.add_argument(
        "--max-seconds",
        type=float,
        help="cap on the timed seconds of a slow or disturbed cell (default 30; quick: 5)",
    )
    p.add_argument("--threads", type=int, default=os.cpu_count(), help="torch threads")
    p.add_argument(
        "--tsai-python",
        default=os.environ.get("MEDSPT_TSAI_PYTHON"),
        help="interpreter with tsai installed, for the TSTPlus columns "
        "(default: $MEDSPT_TSAI_PYTHON, else tsai in this interpreter, else skipped)",
    )
    p.add_argument(
        "--tstplus-attn-dropout",
        type=float,
        help="TSTPlus dropout on attention weights (default: the shared dropout 0.1, as "
        "medspt applies it; tsai's own default is 0)",
    )
    p.add_argument(
        "--device",
        choices=("cpu", "cuda"),
        default="cpu",
        help="cpu: medspt vs TSTPlus (default); cuda: medspt on the GPU in float32 and with "
        "bf16 autocast, with host syncs per step (throughput_cuda.md / .csv)",
    )
    p.add_argument("--quick", action="store_true", help="smoke run: tiny grid, short timing")
    p.add_argument(
        "--out",
        type=Path,
        help="folder for throughput.md / throughput.csv (default: benchmarks/results; "
        "--quick writes nothing unless --out is given)",
    )
    p.add_argument("--worker", help=argparse.SUPPRESS)  # internal: JSON spec of a sub-run
    return p.parse_args(argv)


def _settings(args: argparse.Namespace) -> Settings:
    """Settings from the command line; ``--quick`` shortens the defaults."""
    q = args.quick
    if args.patch_len is not None:
        patch_len = args.patch_len
    elif args.embedding == "conv":
        import_medspt()
        patch_len = importlib.import_module("medspt.estimator.auto").token_stride_for(N_STEPS)
    else:
        patch_len = 8
    return Settings(
        batch_size=args.batch_size,
        patch_len=patch_len,
        embedding=args.embedding,
        positional=args.positional,
        attn_dropout=args.attn_dropout,
        threads=args.threads,
        seconds=args.seconds if args.seconds is not None else (0.2 if q else 2.0),
        min_steps=args.min_steps if args.min_steps is not None else (2 if q else 20),
        warmup=args.warmup if args.warmup is not None else (1 if q else 3),
        max_seconds=args.max_seconds if args.max_seconds is not None else (5.0 if q else 30.0),
        tstplus_attn_dropout=args.tstplus_attn_dropout,
    )


# --------------------------------------------------------------------------- interpreters


def run_worker(
    python: str, grid: list[tuple[int, int, int]], kinds: tuple[str, ...], s: Settings
) -> tuple[dict[str, str], list[Cell]]:
    """Run :func:`run_cells` in another interpreter (this checkout first on its path)."""
    spec = {"grid": grid, "kinds": kinds, "settings": asdict(s)}
    # stderr passes through: progress lines
    payload, error, _ = run_script(
        Path(__file__), ["--worker", json.dumps(spec)], RESULT_MARKER, python, stderr_shown=True
    )
    if payload is None:
        # run_script says "killed (status N)" when stderr went to the console
        m = re.fullmatch(r"killed \(status (-?\d+)\)", error)
        raise RuntimeError(f"worker exited with status {m.group(1)}" if m else error)
    return payload["versions"], [Cell(**c) for c in payload["cells"]]


def _worker_main(spec_json: str) -> None:
    """Entry point of a sub-run: measure the cells of ``spec_json``, print them as JSON."""
    spec = json.loads(spec_json)
    s = Settings(**spec["settings"])
    grid = [tuple(g) for g in spec["grid"]]
    kinds = tuple(spec["kinds"])
    v = versions()
    if "tstplus_cls" not in kinds or v["medspt"] != "-":
        cells = run_cells(grid, kinds, s)
    else:  # medspt not importable here: TSTPlus only, medspt runs in the parent
        cells = run_cells(grid, ("tstplus_cls",), s)
    emit_result(RESULT_MARKER, {"versions": v, "cells": [asdict(c) for c in cells]})


def run_all(
    tsai_python: str | None, grid: list[tuple[int, int, int]], s: Settings
) -> tuple[list[Cell], list[Cell], dict[str, str] | None, list[str]]:
    """Run the comparison (and, with a separate tsai interpreter, the reference) cells.

    Returns
    -------
    main_cells : list of Cell
        medspt and TSTPlus measured under one torch build (where possible).
    ref_cells : list of Cell
        medspt under this interpreter's torch; empty unless TSTPlus ran elsewhere.
    tsai_versions : dict or None
        Versions of the interpreter that ran TSTPlus; None when TSTPlus did not run.
    notes : list of str
    """
    notes: list[str] = []
    # No symlink resolution: venv interpreters link to the same base binary.
    external = bool(tsai_python) and os.path.abspath(tsai_python) != os.path.abspath(sys.executable)
    if external:
        print(f"comparison (interpreter {tsai_python}):", file=sys.stderr)
        tsai_v, main_cells = None, []
        try:
            tsai_v, main_cells = run_worker(tsai_python, grid, KINDS_SAME_TORCH, s)
        except (OSError, RuntimeError) as err:
            notes.append(f"TSTPlus sub-run failed ({err}); TSTPlus columns are missing.")
        if tsai_v is not None and tsai_v["medspt"] == "-":
            notes.append(
                "medspt did not import in the tsai interpreter (install its dependencies "
                "there, e.g. safetensors): medspt columns come from this interpreter, so the "
                "two sides use different torch builds."
            )
        print(f"reference (torch {torch.__version__}, this interpreter):", file=sys.stderr)
        ref_cells = run_cells(grid, KINDS_MEDSPT, s)
        if not any(c.kind == "medspt_cls" for c in main_cells):
            main_cells, ref_cells = main_cells + ref_cells, []
        return main_cells, ref_cells, tsai_v, notes
    if tsai_python or tsai_in_process():
        return run_cells(grid, KINDS_SAME_TORCH, s), [], versions(), notes
    notes.append(
        "tsai is not importable here and no tsai interpreter was given: TSTPlus columns "
        "skipped. Create the tsai environment (see benchmarks/README.md) and rerun with "
        "--tsai-python path/to/tsai-venv/bin/python (or set MEDSPT_TSAI_PYTHON)."
    )
    print(f"NOTE: {notes[-1]}", file=sys.stderr)
    return run_cells(grid, KINDS_MEDSPT, s), [], None, notes


def _busy_share() -> float | None:
    """Share of the CPU other processes use, over one second of waiting (None where
    ``/proc/stat`` is unavailable); warns when it is above 10 %."""
    c0 = cpu_seconds()
    time.sleep(1.0)
    busy = foreign_seconds(c0, cpu_seconds())  # others' CPU seconds in that second
    busy = None if busy is None else busy / (os.cpu_count() or 1)
    if busy is not None and busy > 0.1:
        print(
            f"WARNING: other processes use {busy:.0%} of the CPU: with one thread per "
            "core, timings degrade badly under contention (disturbed steps are discarded).",
            file=sys.stderr,
        )
    return busy


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print the Markdown report and write it (and the CSV) to ``--out``."""
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.worker:
        _worker_main(args.worker)
        return 0
    s = _settings(args)
    depths = args.depths or ([1, 2] if args.quick else [1, 2, 4, 8])
    d_models = args.d_models or ([64] if args.quick else [64, 128])
    grid = [(depth, d, max(1, d // HEAD_DIM)) for d in d_models for depth in depths]
    if args.device == "cuda":
        return main_cuda(args, argv, s, grid)
    out_dir = args.out if args.out is not None else (None if args.quick else RESULTS)

    torch.set_num_threads(s.threads)
    load_before = os.getloadavg()[0]
    busy_before = _busy_share()
    started, cpu_before = time.perf_counter(), cpu_seconds()
    main_cells, ref_cells, tsai_v, notes = run_all(args.tsai_python, grid, s)
    elapsed, cpu_after = time.perf_counter() - started, cpu_seconds()
    load_after = os.getloadavg()[0]
    foreign = None  # share of the machine's CPU time used by other processes during the run
    if cpu_before and cpu_after:
        other = (cpu_after[0] - cpu_before[0]) - (cpu_after[1] - cpu_before[1])
        foreign = max(0.0, other) / (elapsed * (os.cpu_count() or 1))

    run = dict(
        load_before=load_before,
        load_after=load_after,
        busy_before=busy_before,
        foreign=foreign,
        elapsed=elapsed,
    )
    header = header_lines(argv, s, main_cells, tsai_v, versions(), run)
    notes += load_notes(s, main_cells, ref_cells, busy_before, foreign)
    key = lambda c: (c.depth, c.d_model, c.kind)  # noqa: E731
    report = render(
        header,
        grid,
        {key(c): c for c in main_cells},
        {key(c): c for c in ref_cells},
        ref_cells[0].torch_version if ref_cells else None,
        notes,
    )
    print(report)
    if out_dir is not None:
        write_outputs(out_dir, s, report, main_cells, ref_cells)
    return 0


if __name__ == "__main__":
    sys.exit(main())
