"""``throughput.py --device cuda``: medspt alone on the GPU, through its training loop,
in float32 and with bf16 autocast, with the host-device synchronizations one step adds."""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import statistics
import sys
import time
import warnings
from collections.abc import Callable

import torch
from _common import RESULTS, git_revision
from _throughput_cells import (
    HEAD_DIM,
    KINDS_MEDSPT,
    N_CHANNELS,
    N_STEPS,
    Settings,
    import_medspt,
    versions,
)
from _throughput_report import command

CUDA_STEPS_PER_CALL = 20  # steps per timed call of the training loop on CUDA


def check_cuda() -> None:
    """Exit with a message unless CUDA is available (``--device cuda``)."""
    if torch.cuda.is_available():
        return
    why = "torch was built without CUDA" if torch.version.cuda is None else "no GPU is visible"
    sys.exit(
        f"throughput.py: --device cuda was requested, but CUDA is not available here ({why}; "
        f"torch {torch.__version__}). Run it on a machine with a GPU, or drop --device cuda "
        "for the CPU benchmark."
    )


def _cuda_run(
    kind: str, depth: int, d_model: int, n_heads: int, s: Settings, amp: bool
) -> Callable[[int, int], None]:
    """``run(n_steps, seed)``: one epoch of ``n_steps`` batches of ``kind`` through medspt's
    training loop on CUDA, on a model that keeps training; windows on the device once."""
    _, medspt_model, training = import_medspt()
    torch.manual_seed(s.seed)
    config = medspt_model.ModelConfig(
        n_channels=N_CHANNELS, n_steps=N_STEPS, n_classes=s.n_classes, depth=depth,
        d_model=d_model, n_heads=n_heads, patch_len=s.patch_len, dropout=s.dropout, mlp_ratio=4,
    )  # fmt: skip
    model = medspt_model.SPTTransformer(config).cuda()
    n_max = CUDA_STEPS_PER_CALL * s.batch_size
    X = torch.randn(n_max, N_CHANNELS, N_STEPS, device="cuda")  # (N, C, T)
    y = torch.randint(0, s.n_classes, (n_max,), device="cuda")

    def run(n_steps: int, seed: int) -> None:
        n = n_steps * s.batch_size
        cfg = training.TrainConfig(
            epochs=1, batch_size=s.batch_size, patience=None, verbose=False, device="cuda",
            seed=seed, amp=amp,
        )  # fmt: skip
        if kind == "medspt_cls":
            training.finetune(model, X[:n], y[:n], config=cfg, monitor="val_loss")
        else:  # the same call as SPTClassifier's pretraining with the paper recipe
            training.pretrain(model, X[:n], masking="span", mask_ratio=0.15, config=cfg)

    return run


def cuda_syncs_per_step(
    kind: str, depth: int, d_model: int, n_heads: int, s: Settings, amp: bool
) -> float:
    """Synchronizations one training step adds, as ``torch.cuda.set_sync_debug_mode``
    reports them: warnings of a call of 3 steps minus those of a call of 1 step, over 2
    (the call's set-up and its one read of the epoch's loss cancel)."""
    counts = []
    for n_steps in (1, 3):
        run = _cuda_run(kind, depth, d_model, n_heads, s, amp)  # fresh: the same set-up
        torch.cuda.synchronize()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            torch.cuda.set_sync_debug_mode("warn")
            try:
                run(n_steps, 0)
            finally:
                torch.cuda.set_sync_debug_mode("default")
        counts.append(sum("synchroniz" in str(w.message) for w in caught))
    return (counts[1] - counts[0]) / 2


def measure_cuda(
    kind: str, depth: int, d_model: int, n_heads: int, s: Settings, amp: bool
) -> tuple[float, float]:
    """Windows per second (median over calls of ``CUDA_STEPS_PER_CALL`` steps, after one
    untimed call) and syncs per step of one medspt training step on CUDA."""
    run = _cuda_run(kind, depth, d_model, n_heads, s, amp)
    run(2, 0)  # warm-up: kernels, allocator, autotuning
    rates, start, calls = [], time.perf_counter(), 0
    while calls < 3 or time.perf_counter() - start < s.seconds:
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        run(CUDA_STEPS_PER_CALL, calls)  # ends by reading the epoch's loss: all work done
        rates.append(CUDA_STEPS_PER_CALL * s.batch_size / (time.perf_counter() - t0))
        calls += 1
    return statistics.median(rates), cuda_syncs_per_step(kind, depth, d_model, n_heads, s, amp)


def run_cuda(grid: list[tuple[int, int, int]], s: Settings) -> list[dict]:
    """Every medspt kind with and without amp on CUDA, one row per cell."""
    rows = []
    for depth, d_model, n_heads in grid:
        for kind in KINDS_MEDSPT:
            for amp in (False, True):
                wps, syncs = measure_cuda(kind, depth, d_model, n_heads, s, amp)
                rows.append(
                    dict(depth=depth, d_model=d_model, n_heads=n_heads, kind=kind, amp=amp,
                         windows_per_s=round(wps, 1), syncs_per_step=syncs)
                )  # fmt: skip
                print(
                    f"  cuda depth {depth} d_model {d_model:<4} {kind:<16} amp {amp!s:<5} "
                    f"{wps:9.1f} windows/s, {syncs:g} syncs/step",
                    file=sys.stderr,
                    flush=True,
                )
    return rows


def render_cuda(header: list[str], rows: list[dict]) -> str:
    """Markdown report of the CUDA cells: fp32 and bf16 autocast side by side."""
    cell = {(r["depth"], r["d_model"], r["kind"], r["amp"]): r for r in rows}
    out = ["# Training throughput of medspt on CUDA: float32 and bf16 autocast", ""]
    out += [f"- {h}" for h in header] + [""]
    out += [
        "| depth | d_model | n_heads | step | float32 (windows/s) | bf16 amp (windows/s) "
        "| amp / float32 | syncs/step float32 | syncs/step amp |",
        "|---:|---:|---:|---|---:|---:|---:|---:|---:|",
    ]
    for depth, d_model, n_heads in dict.fromkeys(
        (r["depth"], r["d_model"], r["n_heads"]) for r in rows
    ):
        for kind in KINDS_MEDSPT:
            a, b = cell[depth, d_model, kind, False], cell[depth, d_model, kind, True]
            out.append(
                f"| {depth} | {d_model} | {n_heads} | {kind.removeprefix('medspt_')} "
                f"| {a['windows_per_s']:,.0f} | {b['windows_per_s']:,.0f} "
                f"| {b['windows_per_s'] / a['windows_per_s']:.2f} "
                f"| {a['syncs_per_step']:g} | {b['syncs_per_step']:g} |"
            )
    return "\n".join(out) + "\n"


def main_cuda(
    args: argparse.Namespace, argv: list[str], s: Settings, grid: list[tuple[int, int, int]]
) -> int:
    """``--device cuda``: measure, print and write ``throughput_cuda.md`` / ``.csv``."""
    check_cuda()
    out_dir = args.out if args.out is not None else (None if args.quick else RESULTS)
    started = time.perf_counter()
    rows = run_cuda(grid, s)
    here = versions()
    header = [
        f"Date: {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC; command: `{command(argv)}`",
        f"GPU: {torch.cuda.get_device_name()}; torch {torch.__version__} (CUDA "
        f"{torch.version.cuda}); medspt {here['medspt']} (checkout {git_revision(strict=False)})",
        f"Windows {N_STEPS} steps × {N_CHANNELS} channels, batch {s.batch_size}, patch_len "
        f"{s.patch_len}, dropout {s.dropout}; n_heads = d_model / {HEAD_DIM}; d_ff = 4 × d_model",
        "Step = medspt's training loop (finetune / pretrain, windows on the device): batch, "
        "mask (span, 0.15, drawn inside the step), forward and loss (under bf16 autocast "
        "with amp), backward, clip_grad_norm(1.0), AdamW, schedule; windows/s = median over "
        f"calls of {CUDA_STEPS_PER_CALL} steps, each ended by the loop's read of the loss",
        "syncs/step: host-device synchronizations one step adds, counted by "
        "torch.cuda.set_sync_debug_mode('warn') (calls of 3 steps minus calls of 1, over 2)",
        f"Total benchmark time: {time.perf_counter() - started:.0f} s",
    ]
    report = render_cuda(header, rows)
    print(report)
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "throughput_cuda.md").write_text(report)
        with (out_dir / "throughput_cuda.csv").open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        print(f"wrote {out_dir / 'throughput_cuda.md'} and {out_dir / 'throughput_cuda.csv'}")
    return 0
