"""Training-step speed of this checkout against an earlier commit, interleaved in one process.

``throughput.py`` run twice (once per checkout) compares two runs taken minutes apart on a
shared machine, and CPU speed drifts more than the effect we look for. Here the model and
masking modules of both revisions are loaded side by side in one interpreter, and rounds of
training steps alternate between them, so both sides see the same machine state; the median
over rounds is reported.

The step is the one ``throughput.py`` times: forward, loss, backward, gradient clipping at
1.0, AdamW; classification (cross-entropy) and pretraining (step-level span mask at 0.15,
the reference recipe, drawn inside the step; reconstruction MSE), GPD-1 window shape
(18 channels x 200 steps), batch 64, patch 8, one thread.

Example::

    python benchmarks/throughput_ab.py --ref 43fce89 --depths 1 2 4 8 --d-models 64 128
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import torch
import torch.nn.functional as F
from _common import REPO_ROOT, RESULTS, git_revision, machine

N_CHANNELS, N_STEPS, BATCH, PATCH = 18, 200, 64, 8
HEAD_DIM = 16  # n_heads = d_model // 16, as in throughput.py


def load_revision(root: Path, tag: str) -> tuple[ModuleType, ModuleType]:
    """``model`` and ``masking`` modules of the checkout at ``root``, under private names.

    Both import only ``medspt.errors`` (exception classes) from the package, which comes from
    the installed checkout for either side."""
    mods = []
    for name in ("model", "masking"):
        spec = importlib.util.spec_from_file_location(
            f"_ab_{tag}_{name}", root / "medspt" / f"{name}.py"
        )
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod  # dataclasses look their module up here
        spec.loader.exec_module(mod)
        mods.append(mod)
    return mods[0], mods[1]


def make_step(
    model_mod: ModuleType, masking_mod: ModuleType, kind: str, depth: int, d_model: int
) -> Callable[[], None]:
    """One training step of ``kind`` ("cls" or "pretrain") on fixed synthetic windows."""
    torch.manual_seed(0)
    config = model_mod.ModelConfig(
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
    model = model_mod.SPTTransformer(config).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(BATCH, N_CHANNELS, N_STEPS)  # (B, C, T)
    y = torch.randint(0, 2, (BATCH,))

    def loss() -> torch.Tensor:
        if kind == "cls":
            return F.cross_entropy(model(x), y)
        hidden = masking_mod.make_mask(
            tuple(x.shape), "span", ratio=0.15, mean_span=3.0, valid=~torch.isnan(x), generator=gen
        )
        sel = hidden & ~torch.isnan(x)  # what medspt.training.masked_mse scores
        return F.mse_loss(model.reconstruct(x, hidden)[sel], x[sel])

    def step() -> None:
        opt.zero_grad(set_to_none=True)
        loss().backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    return step


def compare(sides: dict, kind: str, depth: int, d_model: int, rounds: int, steps: int) -> dict:
    """Median seconds per step of each side over ``rounds`` alternating rounds."""
    fns = {tag: make_step(*mods, kind, depth, d_model) for tag, mods in sides.items()}
    for fn in fns.values():  # warm-up: allocator, kernels, AdamW state
        for _ in range(3):
            fn()
    times: dict[str, list[float]] = {tag: [] for tag in fns}
    for r in range(rounds):
        order = list(fns) if r % 2 == 0 else list(fns)[::-1]  # neither side always goes first
        for tag in order:
            t0 = time.perf_counter()
            for _ in range(steps):
                fns[tag]()
            times[tag].append((time.perf_counter() - t0) / steps)
    return {tag: statistics.median(t) for tag, t in times.items()}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ref", default="43fce89", help="commit to compare with (default: 43fce89)")
    ap.add_argument("--depths", type=int, nargs="+", default=[1, 2, 4, 8])
    ap.add_argument("--d-models", type=int, nargs="+", default=[64, 128])
    ap.add_argument("--rounds", type=int, default=10, help="alternating rounds per cell")
    ap.add_argument("--steps", type=int, default=5, help="steps per side and round")
    ap.add_argument("--out", type=Path, default=RESULTS / "throughput_ab.md")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)

    with tempfile.TemporaryDirectory() as tmp:
        ref_root = Path(tmp) / "ref"
        subprocess.run(
            ["git", "-C", str(REPO_ROOT), "worktree", "add", "--detach", str(ref_root), args.ref],
            check=True,
            capture_output=True,
        )
        try:
            sides = {"ref": load_revision(ref_root, "ref"), "new": load_revision(REPO_ROOT, "new")}
            rows = []
            for d_model in args.d_models:
                for depth in args.depths:
                    for kind in ("cls", "pretrain"):
                        med = compare(sides, kind, depth, d_model, args.rounds, args.steps)
                        ratio = med["ref"] / med["new"]
                        rows.append(
                            (depth, d_model, kind, BATCH / med["ref"], BATCH / med["new"], ratio)
                        )
                        print(
                            f"depth {depth} d_model {d_model} {kind:8s}"
                            f" ref {BATCH / med['ref']:7.0f}"
                            f" new {BATCH / med['new']:7.0f} windows/s  new/ref {ratio:.2f}",
                            flush=True,
                        )
        finally:
            subprocess.run(
                ["git", "-C", str(REPO_ROOT), "worktree", "remove", "--force", str(ref_root)],
                capture_output=True,
            )
    write_report(args, rows)


def write_report(args: argparse.Namespace, rows: list[tuple]) -> None:
    """The table as markdown at ``args.out``."""
    ratios = [r[5] for r in rows]
    m = machine()
    lines = [
        f"# Training-step throughput: {args.ref} against this checkout, interleaved",
        "",
        f"`benchmarks/throughput_ab.py`: both revisions' model and masking code in one process,"
        f" {args.rounds} alternating rounds of {args.steps} steps per side and cell, median per"
        f" side; batch {BATCH}, {N_STEPS} steps x {N_CHANNELS} channels, patch {PATCH}, one thread,"
        " step-level span masks at 0.15 for pretraining (the reference's recipe on both sides).",
        "",
        "| depth | d_model | step | reference (windows/s) | this checkout (windows/s)"
        " | new / ref |",
        "|---:|---:|---|---:|---:|---:|",
    ]
    lines += [f"| {d} | {w} | {k} | {a:,.0f} | {b:,.0f} | {r:.2f} |" for d, w, k, a, b, r in rows]
    lines += [
        "",
        f"new / ref: median {statistics.median(ratios):.2f},"
        f" range {min(ratios):.2f}-{max(ratios):.2f}"
        f" ({sum(r >= 0.9 for r in ratios)} of {len(ratios)} cells within 10 %).",
        "",
        f"- date: {dt.datetime.now():%Y-%m-%d %H:%M}; this checkout: {git_revision()};"
        f" torch {torch.__version__}; {m['cpu']}, {m['cores']} cores",
        f"- command: `python benchmarks/throughput_ab.py --ref {args.ref} --depths"
        f" {' '.join(map(str, args.depths))} --d-models {' '.join(map(str, args.d_models))}`",
    ]
    args.out.write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
