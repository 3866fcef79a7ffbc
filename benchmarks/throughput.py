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
import csv
import datetime as dt
import importlib
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from types import ModuleType

import torch
import torch.nn.functional as F
from _common import git_revision, machine

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO_ROOT / "benchmarks" / "results"
N_CHANNELS, N_STEPS = 18, 200  # GPD-1 gait windows
HEAD_DIM = 16  # n_heads = d_model // 16: 4 heads at d_model 64, 8 at 128
MIN_SLOW_STEPS = 3  # fewest timed steps of a cell stopped by Settings.max_seconds
RESULT_MARKER = "@@THROUGHPUT-JSON@@"  # prefixes the worker's result line on stdout
KINDS_SAME_TORCH = ("medspt_cls", "medspt_pretrain", "tstplus_cls")
KINDS_MEDSPT = ("medspt_cls", "medspt_pretrain")
CUDA_STEPS_PER_CALL = 20  # steps per timed call of the training loop on CUDA


@dataclass
class Settings:
    """What every cell shares."""

    batch_size: int = 64
    patch_len: int = 8
    embedding: str = "patch"  # medspt's tokenizer: "patch" or "conv"
    positional: str = "learned"
    attn_dropout: float | None = None  # medspt's; None: same as dropout
    dropout: float = 0.1
    n_classes: int = 2
    tstplus_attn_dropout: float | None = None  # None: same as dropout (like medspt)
    threads: int = 1
    seconds: float = 2.0  # minimum timed seconds per cell
    min_steps: int = 20  # minimum timed steps per cell
    warmup: int = 3  # untimed steps before timing (fewer if they take > max_seconds / 4)
    max_seconds: float = 30.0  # slow / disturbed cells stop here (after MIN_SLOW_STEPS steps)
    seed: int = 0


@dataclass
class Cell:
    """One measured (configuration, model, step) combination."""

    depth: int
    d_model: int
    n_heads: int
    kind: str  # one of KINDS_SAME_TORCH
    torch_version: str
    n_params: int
    steps: int  # timed steps
    clean_steps: int  # undisturbed ones among them: those counted, unless there are none
    seconds: float
    windows_per_s: float
    median_step_ms: float
    min_step_ms: float
    max_step_ms: float
    other_cpu: float | None  # share of the machine's CPU other processes used while timing


# --------------------------------------------------------------------------- models and steps


def _import_medspt() -> tuple[ModuleType, ModuleType, ModuleType]:
    """``medspt.nn.masking``, ``.model``, ``.training`` (from this checkout if not installed)."""
    try:
        import medspt  # noqa: F401
    except ImportError:
        sys.path.insert(0, str(REPO_ROOT))
    masking = importlib.import_module("medspt.nn.masking")
    model = importlib.import_module("medspt.nn.model")
    training = importlib.import_module("medspt.nn.training")
    return masking, model, training


def _build(
    kind: str, depth: int, d_model: int, n_heads: int, s: Settings
) -> tuple[torch.nn.Module, list[torch.nn.Parameter], Callable]:
    """Model, trained parameters and ``loss(x, y)`` of one kind of training step."""
    if kind == "tstplus_cls":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from tsai.models.TSTPlus import TSTPlus
        # Matched: depth, width, heads, d_ff, dropout (residual, attention weights and head,
        # like medspt). Everything else is TSTPlus's default (post-norm BatchNorm, residual
        # attention, flatten head).
        model = TSTPlus(
            N_CHANNELS,
            s.n_classes,
            N_STEPS,
            n_layers=depth,
            d_model=d_model,
            n_heads=n_heads,
            d_ff=4 * d_model,
            dropout=s.dropout,
            attn_dropout=s.dropout if s.tstplus_attn_dropout is None else s.tstplus_attn_dropout,
            fc_dropout=s.dropout,
        )
        return model, list(model.parameters()), lambda x, y: F.cross_entropy(model(x), y)

    masking, medspt_model, training = _import_medspt()
    config = medspt_model.ModelConfig(
        n_channels=N_CHANNELS,
        n_steps=N_STEPS,
        n_classes=s.n_classes,
        depth=depth,
        d_model=d_model,
        n_heads=n_heads,
        patch_len=s.patch_len,
        embedding=s.embedding,
        positional=s.positional,
        dropout=s.dropout,
        attn_dropout=s.attn_dropout,
        mlp_ratio=4,
    )
    model = medspt_model.SPTTransformer(config)
    if kind == "medspt_cls":
        return model, list(model.parameters()), lambda x, y: F.cross_entropy(model(x), y)
    if kind == "medspt_pretrain":
        gen = torch.Generator().manual_seed(s.seed)

        def loss(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            # Same call as medspt.nn.training.pretrain with its defaults.
            hidden = masking.make_mask(
                tuple(x.shape),
                "span",
                ratio=0.15,
                mean_span=3.0,
                valid=~torch.isnan(x),
                generator=gen,
            )
            return training.masked_mse(model.reconstruct(x, hidden), x, hidden)

        return model, model.encoder_parameters(), loss
    raise ValueError(f"unknown kind {kind!r}")


def _foreign_seconds(
    before: tuple[float, float] | None, after: tuple[float, float] | None
) -> float | None:
    """CPU seconds other processes used between two :func:`cpu_seconds` readings (or None)."""
    if before is None or after is None:
        return None
    return max(0.0, (after[0] - before[0]) - (after[1] - before[1]))


def measure(kind: str, depth: int, d_model: int, n_heads: int, s: Settings) -> Cell:
    """Time training steps of one kind until ``s.seconds`` and ``s.min_steps`` are both reached.

    Only undisturbed steps count: a step during which other processes used more than 1.5
    clock ticks and more than 5 % of the machine's CPU time is discarded, since with one
    thread per core any foreign load slows a step down many times over. A cell whose steps
    are so slow (or so often disturbed) that the targets are not met stops after
    ``s.max_seconds`` (and ``MIN_SLOW_STEPS`` timed steps); if it then has no undisturbed
    step at all, every step counts (the cell is flagged through ``clean_steps``).

    Parameters
    ----------
    kind : {"medspt_cls", "medspt_pretrain", "tstplus_cls"}
    depth, d_model, n_heads : int
        Architecture of the cell.
    s : Settings

    Returns
    -------
    Cell
        Throughput over the undisturbed timed steps (warm-up excluded) and step statistics.
    """
    torch.manual_seed(s.seed)
    model, params, loss_fn = _build(kind, depth, d_model, n_heads, s)
    model.train()
    opt = torch.optim.AdamW(params, lr=1e-3, weight_decay=0.01)
    # A few fixed synthetic batches, cycled (data loading is not part of the benchmark).
    xs = [torch.randn(s.batch_size, N_CHANNELS, N_STEPS) for _ in range(4)]
    ys = [torch.randint(0, s.n_classes, (s.batch_size,)) for _ in range(4)]

    def step(i: int) -> None:
        x, y = xs[i % len(xs)], ys[i % len(ys)]
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        float(loss.detach())

    start = time.perf_counter()
    for i in range(s.warmup):
        if i and time.perf_counter() - start > s.max_seconds / 4:
            break
        step(i)
    cores, tick = os.cpu_count() or 1, 1.0 / os.sysconf("SC_CLK_TCK")
    times: list[float] = []  # every timed step
    clean: list[float] = []  # undisturbed steps
    foreign_total = 0.0
    start = time.perf_counter()
    while len(clean) < s.min_steps or sum(clean) < s.seconds:
        if len(times) >= MIN_SLOW_STEPS and time.perf_counter() - start >= s.max_seconds:
            break
        c0, t0 = cpu_seconds(), time.perf_counter()
        step(len(times))
        dt_step, foreign = time.perf_counter() - t0, _foreign_seconds(c0, cpu_seconds())
        times.append(dt_step)
        foreign_total += foreign or 0.0
        if foreign is None or foreign <= max(1.5 * tick, 0.05 * dt_step * cores):
            clean.append(dt_step)
    used = clean or times
    wall = time.perf_counter() - start
    return Cell(
        depth=depth,
        d_model=d_model,
        n_heads=n_heads,
        kind=kind,
        torch_version=torch.__version__,
        n_params=sum(p.numel() for p in model.parameters()),
        steps=len(times),
        clean_steps=len(clean),
        seconds=round(sum(used), 3),
        windows_per_s=len(used) * s.batch_size / sum(used),
        median_step_ms=1e3 * statistics.median(used),
        min_step_ms=1e3 * min(used),
        max_step_ms=1e3 * max(used),
        other_cpu=None if c0 is None else round(foreign_total / (wall * cores), 3),
    )


def run_cells(grid: list[tuple[int, int, int]], kinds: tuple[str, ...], s: Settings) -> list[Cell]:
    """Measure every kind for every ``(depth, d_model, n_heads)``, kinds of a config together."""
    torch.set_num_threads(s.threads)
    cells = []
    for depth, d_model, n_heads in grid:
        for kind in kinds:
            cell = measure(kind, depth, d_model, n_heads, s)
            print(
                f"  torch {cell.torch_version:<14} depth {depth} d_model {d_model:<4} "
                f"{kind:<16} {cell.windows_per_s:8.1f} windows/s "
                f"({cell.clean_steps}/{cell.steps} undisturbed steps, {cell.seconds:.1f} s)",
                file=sys.stderr,
                flush=True,
            )
            cells.append(cell)
    return cells


# --------------------------------------------------------------------------- CUDA


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
    _, medspt_model, training = _import_medspt()
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


def main_cuda(args: argparse.Namespace, argv: list[str], s: Settings, grid) -> int:
    """``--device cuda``: measure, print and write ``throughput_cuda.md`` / ``.csv``."""
    check_cuda()
    out_dir = args.out if args.out is not None else (None if args.quick else DEFAULT_OUT)
    started = time.perf_counter()
    rows = run_cuda(grid, s)
    here = versions()
    header = [
        f"Date: {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC; "
        f"command: `{_command_line(argv)}`",
        f"GPU: {torch.cuda.get_device_name()}; torch {torch.__version__} (CUDA "
        f"{torch.version.cuda}); medspt {here['medspt']} (checkout {git_revision()})",
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


# --------------------------------------------------------------------------- environments


def versions() -> dict[str, str]:
    """torch / tsai / medspt versions of this interpreter ("-" when not importable)."""
    out = {"python": platform.python_version(), "torch": torch.__version__}
    for name in ("tsai", "medspt"):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if name == "medspt":
                    _import_medspt()
                out[name] = importlib.import_module(name).__version__
        except Exception:  # missing or broken install: reported as "-"
            out[name] = "-"
    return out


def _tsai_in_process() -> bool:
    """Whether TSTPlus imports in this interpreter."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            importlib.import_module("tsai.models.TSTPlus")
        return True
    except Exception:
        return False


def run_worker(
    python: str, grid: list[tuple[int, int, int]], kinds: tuple[str, ...], s: Settings
) -> tuple[dict[str, str], list[Cell]]:
    """Run :func:`run_cells` in another interpreter (this checkout first on its path)."""
    spec = {"grid": grid, "kinds": kinds, "settings": asdict(s)}
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    env["PYTHONWARNINGS"] = "ignore"
    proc = subprocess.run(
        [python, str(Path(__file__).resolve()), "--worker", json.dumps(spec)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        check=False,
    )  # stderr passes through: progress lines
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(RESULT_MARKER)]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"worker exited with status {proc.returncode}")
    payload = json.loads(lines[-1][len(RESULT_MARKER) :])
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
    print(RESULT_MARKER + json.dumps({"versions": v, "cells": [asdict(c) for c in cells]}))


def cpu_seconds() -> tuple[float, float] | None:
    """CPU seconds used so far by the whole machine and by this process (children included).

    Their difference over a run is the CPU time other processes took from the benchmark.
    None where ``/proc/stat`` is unavailable.
    """
    try:
        vals = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    except (OSError, ValueError):
        return None
    busy = sum(vals) - vals[3] - vals[4]  # all but idle and iowait
    t = os.times()
    return busy / os.sysconf("SC_CLK_TCK"), t.user + t.system + t.children_user + t.children_system


# --------------------------------------------------------------------------- report


def _fmt(x: float | None) -> str:
    """Windows/s for the table (``n/a`` when not measured)."""
    return "n/a" if x is None else f"{x:,.0f}"


def render(
    header: list[str],
    grid: list[tuple[int, int, int]],
    main: dict[tuple[int, int, str], Cell],
    ref: dict[tuple[int, int, str], Cell],
    ref_torch: str | None,
    notes: list[str],
) -> str:
    """Markdown report: header lines, the comparison table, the reference table, notes."""

    def wps(table: dict, depth: int, d: int, kind: str) -> float | None:
        cell = table.get((depth, d, kind))
        return None if cell is None else cell.windows_per_s

    out = ["# Training throughput: medspt vs TSTPlus", ""] + [f"- {h}" for h in header] + [""]
    out += [
        "| depth | d_model | n_heads | medspt cls (windows/s) | medspt pretrain (windows/s) "
        "| TSTPlus cls (windows/s) | ratio medspt/TSTPlus (cls) | ≥ 2× |",
        "|---:|---:|---:|---:|---:|---:|---:|:---:|",
    ]
    ratios = []
    for depth, d, h in grid:
        cls, pre = wps(main, depth, d, "medspt_cls"), wps(main, depth, d, "medspt_pretrain")
        tst = wps(main, depth, d, "tstplus_cls")
        ratio = cls / tst if cls and tst else None
        if ratio is not None:
            ratios.append(ratio)
        r_txt = "n/a" if ratio is None else f"{ratio:.2f}×"
        ok = "" if ratio is None else ("yes" if ratio >= 2.0 else "**no**")
        out.append(
            f"| {depth} | {d} | {h} | {_fmt(cls)} | {_fmt(pre)} | {_fmt(tst)} | {r_txt} | {ok} |"
        )
    if ratios:
        out += [
            "",
            f"Ratio medspt/TSTPlus (classification step): min {min(ratios):.2f}×, "
            f"median {statistics.median(ratios):.2f}×, max {max(ratios):.2f}×; "
            f"target ≥ 2× met in {sum(r >= 2.0 for r in ratios)}/{len(ratios)} cells.",
        ]
    if ref:
        out += [
            "",
            f"## medspt under torch {ref_torch} (this interpreter; reference)",
            "",
            "| depth | d_model | medspt cls (windows/s) | medspt pretrain (windows/s) "
            "| cls vs comparison column |",
            "|---:|---:|---:|---:|---:|",
        ]
        for depth, d, _ in grid:
            cls, pre = wps(ref, depth, d, "medspt_cls"), wps(ref, depth, d, "medspt_pretrain")
            other = wps(main, depth, d, "medspt_cls")
            rel = f"{cls / other:.2f}×" if cls and other else "n/a"
            out.append(f"| {depth} | {d} | {_fmt(cls)} | {_fmt(pre)} | {rel} |")
    if notes:
        out += ["", "Notes:", ""] + [f"- {n}" for n in notes]
    return "\n".join(out) + "\n"


def write_csv(path: Path, rows: list[tuple[str, Cell]], s: Settings) -> None:
    """One row per measured cell (long format)."""
    fields = ["role", *Cell.__dataclass_fields__, "batch_size", "patch_len", "threads"]
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for role, cell in rows:
            row = {"role": role, **asdict(cell)}
            for k in ("windows_per_s", "median_step_ms", "min_step_ms", "max_step_ms"):
                row[k] = round(row[k], 2)
            w.writerow(
                {**row, "batch_size": s.batch_size, "patch_len": s.patch_len, "threads": s.threads}
            )


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options (see ``--help``)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
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
        _import_medspt()
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


def _command_line(argv: list[str]) -> str:
    """The command as run, with machine-specific paths replaced by placeholders."""
    shown, hide_next = [], False
    for a in argv:
        shown.append("PATH" if hide_next and os.path.isabs(a) else a)
        hide_next = a in ("--tsai-python", "--out")
    return " ".join(["python benchmarks/throughput.py", *shown])


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
    if tsai_python or _tsai_in_process():
        return run_cells(grid, KINDS_SAME_TORCH, s), [], versions(), notes
    notes.append(
        "tsai is not importable here and no tsai interpreter was given: TSTPlus columns "
        "skipped. Create the tsai environment (see benchmarks/README.md) and rerun with "
        "--tsai-python path/to/tsai-venv/bin/python (or set MEDSPT_TSAI_PYTHON)."
    )
    print(f"NOTE: {notes[-1]}", file=sys.stderr)
    return run_cells(grid, KINDS_MEDSPT, s), [], None, notes


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
    out_dir = args.out if args.out is not None else (None if args.quick else DEFAULT_OUT)

    torch.set_num_threads(s.threads)
    load_before = os.getloadavg()[0]
    c0 = cpu_seconds()
    time.sleep(1.0)
    busy_before = _foreign_seconds(c0, cpu_seconds())  # others' CPU seconds in that second
    busy_before = None if busy_before is None else busy_before / (os.cpu_count() or 1)
    if busy_before is not None and busy_before > 0.1:
        print(
            f"WARNING: other processes use {busy_before:.0%} of the CPU: with one thread per "
            "core, timings degrade badly under contention (disturbed steps are discarded).",
            file=sys.stderr,
        )
    started, cpu_before = time.perf_counter(), cpu_seconds()
    main_cells, ref_cells, tsai_v, notes = run_all(args.tsai_python, grid, s)
    elapsed, cpu_after = time.perf_counter() - started, cpu_seconds()
    load_after = os.getloadavg()[0]
    foreign = None  # share of the machine's CPU time used by other processes during the run
    if cpu_before and cpu_after:
        other = (cpu_after[0] - cpu_before[0]) - (cpu_after[1] - cpu_before[1])
        foreign = max(0.0, other) / (elapsed * (os.cpu_count() or 1))

    here, m = versions(), machine()
    main_torch = next((c.torch_version for c in main_cells if c.kind == "medspt_cls"), "-")
    has_tst = any(c.kind == "tstplus_cls" for c in main_cells)
    attn_drop = s.dropout if s.tstplus_attn_dropout is None else s.tstplus_attn_dropout
    header = [
        f"Date: {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC; "
        f"command: `{_command_line(argv)}`"
        + (" with MEDSPT_TSAI_PYTHON set" if os.environ.get("MEDSPT_TSAI_PYTHON") else ""),
        f"Machine: {m['cpu']}, {m['cores']} logical cores, {m['os']}; torch threads: "
        f"{s.threads}; load average (1 min) before / after: {load_before:.2f} / "
        f"{load_after:.2f}"
        + (
            ""
            if foreign is None or busy_before is None
            else f"; CPU used by other processes: {busy_before:.0%} in the second before, "
            f"{foreign:.0%} during the run"
        ),
        f"Comparison columns: torch {main_torch}"
        + (f", tsai {tsai_v['tsai']}" if tsai_v and has_tst else ", tsai not available")
        + f"; medspt {here['medspt']} (checkout {git_revision()}), Python {here['python']}",
        f"Windows {N_STEPS} steps × {N_CHANNELS} channels, float32, CPU, batch {s.batch_size}, "
        f"{s.n_classes} classes, dropout {s.dropout}; n_heads = d_model / {HEAD_DIM}; "
        f"d_ff = 4 × d_model; medspt {s.embedding} tokens, positions {s.positional}, "
        f"attention dropout {s.dropout if s.attn_dropout is None else s.attn_dropout}, "
        f"patch_len {s.patch_len} → "
        f"{-(-N_STEPS // s.patch_len)} tokens, TSTPlus {N_STEPS} tokens",
        "Step = forward + loss + backward + clip_grad_norm(1.0) + AdamW (lr 1e-3, wd 0.01); "
        f"{s.warmup} warm-up steps excluded; timed ≥ {s.seconds:g} s and ≥ {s.min_steps} "
        f"undisturbed steps per cell (slow cells: stopped after {s.max_seconds:g} s); "
        "steps during which other processes took CPU time are discarded; "
        "windows/s = counted windows / counted seconds",
        "medspt pretrain = span mask (ratio 0.15, mean span 3, drawn inside the step) + "
        "reconstruction + masked MSE. TSTPlus: tsai defaults otherwise (post-norm BatchNorm, "
        f"residual attention, flatten head), dropout {s.dropout} also on the head, "
        f"attn_dropout {attn_drop}"
        + (" (medspt also drops attention weights)" if attn_drop == s.dropout else ""),
        f"Total benchmark time: {elapsed:.0f} s",
    ]
    disturbed = [
        f"{role} {c.kind} depth {c.depth} d_model {c.d_model} ({c.clean_steps}/{c.steps} "
        f"undisturbed steps, max/median step {c.max_step_ms / c.median_step_ms:.1f})"
        for role, cells in (("comparison", main_cells), ("reference", ref_cells))
        for c in cells
        if c.clean_steps < min(s.min_steps, MIN_SLOW_STEPS)
        or c.max_step_ms > 2.0 * c.median_step_ms
    ]
    if disturbed:
        notes.append(
            "possibly disturbed cells (too few undisturbed steps, or max step time > 2 × "
            "median): " + "; ".join(disturbed)
        )
    if busy_before is not None and busy_before > 0.1:
        notes.append(f"the machine was not idle at the start ({busy_before:.0%} CPU busy).")
    if foreign is not None and foreign > 0.05:
        notes.append(
            f"other processes used {foreign:.0%} of the CPU during the run; steps they "
            "disturbed were discarded (CSV: clean_steps vs steps), but an idle machine is safer."
        )
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
        out_dir.mkdir(parents=True, exist_ok=True)
        stem = "throughput" if s.embedding == "patch" else f"throughput_{s.embedding}"
        (out_dir / f"{stem}.md").write_text(report)
        rows = [("comparison", c) for c in main_cells] + [("reference", c) for c in ref_cells]
        write_csv(out_dir / f"{stem}.csv", rows, s)
        print(f"wrote {out_dir / (stem + '.md')} and {out_dir / (stem + '.csv')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
