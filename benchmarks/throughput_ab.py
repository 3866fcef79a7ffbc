"""Training steps per second and host syncs per step: this checkout against an earlier
commit, interleaved in one process.

``throughput.py`` run twice (once per checkout) compares two runs taken minutes apart on a
shared machine, and CPU speed drifts more than the effect we look for. Here the whole
``medspt`` package of both revisions is loaded side by side in one interpreter, and rounds
of training alternate between them, so both sides see the same machine state; the median
over rounds is reported.

The step is the training loop's own: each round calls ``medspt.nn.training.pretrain`` or
``finetune`` of each revision for one epoch of ``--steps`` batches, on CPU, so what is timed
is everything a step of the loop does: indexing the batch, drawing the mask inside the step
(step-level span masks at 0.15, mean span 3: the reference recipe), forward, masked MSE or
cross-entropy, backward, clipping at 1.0, AdamW, the learning-rate schedule and the loss
bookkeeping, plus the loop's once-a-call set-up (optimizer, generator) and its one read of
the epoch's loss. GPD-1 window shape (18 channels x 200 steps), batch 64, patch 8, one
thread.

Host syncs per step are counted with :func:`medspt.core.host_syncs.count_host_syncs` (of
this checkout, for both sides) on calls of 1 and of 3 steps: their difference over 2 is
what one step adds, the set-up and the per-epoch reads cancel. torch's AdamW step and
gradient clipping are not counted: on a CPU run their reads of host-side step counters
and their same-device moves look like syncs, and they are the same code on both sides.

Example::

    python benchmarks/throughput_ab.py --ref e620978 --depths 1 2 4 --d-models 64 \\
        --out benchmarks/results/throughput_gpu_resident.md
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import importlib
import importlib.abc
import importlib.machinery
import io
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import torch
from _common import REPO_ROOT, RESULTS, git_revision, machine

import medspt.nn.model
import medspt.nn.training
from medspt.core.host_syncs import HostSyncCounter, count_host_syncs

N_CHANNELS, N_STEPS, BATCH, PATCH = 18, 200, 64, 8
HEAD_DIM = 16  # n_heads = d_model // 16, as in throughput.py
KINDS = ("cls", "pretrain")


class _From(importlib.abc.MetaPathFinder):
    """Finds ``medspt`` and its submodules under ``root`` ahead of every other finder
    (the editable install's finder would answer with this checkout)."""

    def __init__(self, root: Path):
        self.root = str(root)

    def find_spec(self, name, path=None, target=None):
        if name != "medspt" and not name.startswith("medspt."):
            return None
        return importlib.machinery.PathFinder.find_spec(name, path or [self.root])


def export_revision(ref: str, folder: Path) -> Path:
    """The ``medspt`` package of commit ``ref``, written under ``folder`` by ``git archive``
    (reads the repository, changes nothing in it); returns the folder holding it."""
    archive = subprocess.run(
        ["git", "-C", str(REPO_ROOT), "archive", "--format=tar", ref, "medspt"],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    return folder


def load_revision(root: Path) -> dict[str, ModuleType]:
    """``model`` and ``training`` of the whole ``medspt`` package at ``root``.

    This checkout's modules are set aside while the other revision imports (its own
    imports then resolve to its own files) and put back afterwards; the other revision's
    modules keep working through the references they hold (library modules import at
    the top, never inside functions)."""
    ours = {k: sys.modules.pop(k) for k in list(sys.modules) if k.split(".")[0] == "medspt"}
    finder = _From(root)
    sys.meta_path.insert(0, finder)
    try:
        mods = {name: importlib.import_module(f"medspt.{name}") for name in ("model", "training")}
    finally:
        sys.meta_path.remove(finder)
        for k in [k for k in sys.modules if k.split(".")[0] == "medspt"]:
            del sys.modules[k]
        sys.modules.update(ours)
    assert Path(mods["training"].__file__).resolve().is_relative_to(root.resolve())
    return mods


def make_run(
    side: dict[str, ModuleType], kind: str, depth: int, d_model: int
) -> Callable[[int, int], None]:
    """``run(n_steps, seed)``: one epoch of ``n_steps`` batches of ``kind`` ("cls" or
    "pretrain") through the training loop of ``side``, on a model that keeps training."""
    torch.manual_seed(0)
    config = side["model"].ModelConfig(
        n_channels=N_CHANNELS,
        n_steps=N_STEPS,
        n_classes=2,
        depth=depth,
        d_model=d_model,
        n_heads=d_model // HEAD_DIM,
        patch_len=PATCH,
        dropout=0.1,
        mlp_ratio=4,
    )
    model = side["model"].SPTTransformer(config)
    g = torch.Generator().manual_seed(1)
    X = torch.randn(8 * BATCH, N_CHANNELS, N_STEPS, generator=g)  # (N, C, T)
    y = torch.randint(0, 2, (8 * BATCH,), generator=g)
    training = side["training"]

    def run(n_steps: int, seed: int) -> None:
        n = n_steps * BATCH
        cfg = training.TrainConfig(
            epochs=1, batch_size=BATCH, patience=None, verbose=False, device="cpu", seed=seed
        )
        if kind == "cls":
            training.finetune(model, X[:n], y[:n], config=cfg, monitor="val_loss")
        else:
            training.pretrain(model, X[:n], masking="span", mask_ratio=0.15, config=cfg)

    return run


def compare(sides: dict, kind: str, depth: int, d_model: int, rounds: int, steps: int) -> dict:
    """Median seconds per step of each side over ``rounds`` alternating rounds."""
    runs = {tag: make_run(mods, kind, depth, d_model) for tag, mods in sides.items()}
    for run in runs.values():  # warm-up: allocator, kernels
        run(2, 0)
    times: dict[str, list[float]] = {tag: [] for tag in runs}
    for r in range(rounds):
        order = list(runs) if r % 2 == 0 else list(runs)[::-1]  # neither side always first
        for tag in order:
            t0 = time.perf_counter()
            runs[tag](steps, r)
            times[tag].append((time.perf_counter() - t0) / steps)
    return {tag: statistics.median(t) for tag, t in times.items()}


@contextlib.contextmanager
def _optimizer_not_counted(syncs: HostSyncCounter) -> Iterator[None]:
    """AdamW steps and gradient clipping run with ``syncs`` paused."""

    def paused(f):
        def run(*args, **kwargs):
            with syncs.paused():
                return f(*args, **kwargs)

        return run

    step, clip = torch.optim.AdamW.step, torch.nn.utils.clip_grad_norm_
    torch.optim.AdamW.step, torch.nn.utils.clip_grad_norm_ = paused(step), paused(clip)
    try:
        yield
    finally:
        torch.optim.AdamW.step, torch.nn.utils.clip_grad_norm_ = step, clip


def syncs_per_step(side: dict[str, ModuleType], kind: str) -> dict[str, float]:
    """Host syncs one step of ``kind`` adds, by call name (see the module docstring)."""
    counts = []
    for n_steps in (1, 3):
        run = make_run(side, kind, depth=1, d_model=64)  # fresh: the same set-up both times
        with count_host_syncs() as syncs, _optimizer_not_counted(syncs):
            run(n_steps, 0)
        counts.append(Counter(syncs.calls))
    added = counts[1] - counts[0]  # Counter subtraction keeps positive counts
    return {name: n / 2 for name, n in sorted(added.items())}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ref", default="e620978", help="commit to compare with (default: e620978)")
    ap.add_argument("--depths", type=int, nargs="+", default=[1, 2, 4, 8])
    ap.add_argument("--d-models", type=int, nargs="+", default=[64, 128])
    ap.add_argument("--rounds", type=int, default=10, help="alternating rounds per cell")
    ap.add_argument("--steps", type=int, default=5, help="steps per side and round")
    ap.add_argument("--out", type=Path, default=RESULTS / "throughput_ab.md")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    args.load = [os.getloadavg()[0]]  # other processes slow both sides: stated in the report

    with tempfile.TemporaryDirectory() as tmp:
        ref_root = export_revision(args.ref, Path(tmp))
        new = {"model": medspt.nn.model, "training": medspt.nn.training}
        sides = {"ref": load_revision(ref_root), "new": new}
        syncs = {tag: {k: syncs_per_step(mods, k) for k in KINDS} for tag, mods in sides.items()}
        for tag, by_kind in syncs.items():
            print(f"{tag} host syncs per step: {by_kind}", flush=True)
        rows = []
        for d_model in args.d_models:
            for depth in args.depths:
                for kind in KINDS:
                    med = compare(sides, kind, depth, d_model, args.rounds, args.steps)
                    ref, new_ = 1 / med["ref"], 1 / med["new"]
                    rows.append((depth, d_model, kind, ref, new_, new_ / ref))
                    print(
                        f"depth {depth} d_model {d_model} {kind:8s} ref {ref:6.2f}"
                        f" new {new_:6.2f} steps/s  new/ref {new_ / ref:.2f}",
                        flush=True,
                    )
    args.load.append(os.getloadavg()[0])
    write_report(args, rows, syncs)


def _calls(by_name: dict[str, float]) -> str:
    return ", ".join(f"`{k}` {v:g}" for k, v in by_name.items()) or "none"


def write_report(args: argparse.Namespace, rows: list[tuple], syncs: dict) -> None:
    """The tables as markdown at ``args.out``."""
    ratios = [r[5] for r in rows]
    total = {tag: {k: sum(v.values()) for k, v in by.items()} for tag, by in syncs.items()}
    m = machine()
    lines = [
        f"# Training steps per second and host syncs per step: {args.ref} against this"
        " checkout, interleaved",
        "",
        "`benchmarks/throughput_ab.py`: both revisions' whole `medspt` package in one process;"
        f" each round calls the training loop of each side (`pretrain` / `finetune`, one epoch"
        f" of {args.steps} steps), {args.rounds} alternating rounds per cell, median per side;"
        f" batch {BATCH}, {N_STEPS} steps x {N_CHANNELS} channels, patch {PATCH}, CPU, one"
        " thread, step-level span masks at 0.15 for pretraining (the reference recipe on both"
        " sides). Host syncs: calls that make the host wait for the device, counted by"
        " `medspt.core.host_syncs` (what one more step adds; AdamW and clipping not counted).",
        "",
        "| depth | d_model | step | reference (steps/s) | this checkout (steps/s) | new / ref"
        " | syncs/step reference | syncs/step this checkout |",
        "|---:|---:|---|---:|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {d} | {w} | {k} | {a:.2f} | {b:.2f} | {r:.2f} | {total['ref'][k]:g}"
        f" | {total['new'][k]:g} |"
        for d, w, k, a, b, r in rows
    ]
    lines += [
        "",
        f"new / ref: median {statistics.median(ratios):.2f},"
        f" range {min(ratios):.2f}-{max(ratios):.2f}"
        f" ({sum(r >= 0.9 for r in ratios)} of {len(ratios)} cells within 10 % or faster).",
        "",
        "Host syncs per step by call (the same at every depth):",
        "",
        "| step | reference | this checkout |",
        "|---|---|---|",
    ]
    lines += [f"| {k} | {_calls(syncs['ref'][k])} | {_calls(syncs['new'][k])} |" for k in KINDS]
    lines += [
        "",
        f"- date: {dt.datetime.now():%Y-%m-%d %H:%M}; this checkout: {git_revision()};"
        f" torch {torch.__version__}; {m['cpu']}, {m['cores']} cores; load average (1 min)"
        f" before / after: {args.load[0]:.2f} / {args.load[1]:.2f}",
        f"- command: `python benchmarks/throughput_ab.py --ref {args.ref} --depths"
        f" {' '.join(map(str, args.depths))} --d-models {' '.join(map(str, args.d_models))}"
        f" --rounds {args.rounds} --steps {args.steps} --out {_shown(args.out)}`",
    ]
    args.out.write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}")


def _shown(path: Path) -> str:
    """``path`` relative to the checkout when inside it (no machine paths in reports)."""
    try:
        return str(path.resolve().relative_to(REPO_ROOT))
    except ValueError:
        return path.name


if __name__ == "__main__":
    main()
