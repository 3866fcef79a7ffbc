"""Full attention versus hierarchical attention: time, peak memory, and what it costs in
accuracy.

``speed`` (the default): forward + backward of one attention call on ``q, k, v`` of shape
``(B, 4, N, 32)`` (4 heads, head width 32, float32) for N in 1k, 4k, 16k, 64k and B in 1,
8, each cell in a fresh process:

* ``sdpa``: ``scaled_dot_product_attention`` as the model's full attention calls it (torch
  picks its kernel: on CPU a fused flash kernel whose memory grows linearly with N);
* ``sdpa-math``: the same with torch's explicit kernel (the N × N matrix in memory), where
  it fits in memory;
* ``hier-torch``, ``hier-numba`` (and ``hier-cuda`` on a GPU):
  :class:`medspt.nn.attention.HierarchicalAttention` with default settings (levels 3, pool 4,
  topk 4, tile 32) and each index-build implementation;
* ``index-*``: the index build alone (:func:`medspt.nn.attention.select_partition` on
  precomputed token scores).

Peak memory is the growth of the process's resident memory during the call (Linux
``VmHWM`` after ``clear_refs``; on a GPU ``torch.cuda.max_memory_allocated``). Cells whose
estimated time exceeds ``--max-cell-seconds`` are skipped and say so.

``accuracy``: GPD-1's subjects at the full 100 Hz (no block averaging), whole 10-s windows
of 1,000 steps (stride 5 s), patches of 2 steps (500 tokens), trained from scratch with
full attention, hierarchical attention, and hierarchical attention with 2 recovery epochs
of full attention, on the same subject-wise folds. Needs the gaitpdb data
(``MEDSPT_DATA`` or ``--root``).

    python benchmarks/attention.py                   # speed table -> results/attention.md
    python benchmarks/attention.py --quick           # 1k and 4k only, prints only
    python benchmarks/attention.py accuracy          # -> results/attention_gpd.md
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

from _attention_report import HEAD_DIM, HEADS, render_speed
from _common import (
    RESULTS,
    current_rss_mb,
    emit_result,
    high_water_rss_mb,
    parser,
    reset_peak_rss,
    run_script,
    write_report,
)

MARK = "@@ATTENTION-JSON@@"


# --------------------------------------------------------------------------- one cell


def _cell(kind: str, n: int, b: int, device: str, repeats: int, threads: int) -> dict:
    """Measure one (kind, N, B) cell in this process; returns a JSON-able dict."""
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from medspt.nn.attention import HierarchicalAttention, select_partition, token_scores

    torch.set_num_threads(threads)
    dev = torch.device(device)
    gen = torch.Generator(device="cpu").manual_seed(0)

    scores_of = {}  # the index build's input, computed outside the timed step

    def inputs(nn_: int, grad: bool = True):
        qkv = [
            torch.randn(b, HEADS, nn_, HEAD_DIM, generator=gen).to(dev).requires_grad_(grad)
            for _ in range(3)
        ]
        scores_of[id(qkv[0])] = token_scores(qkv[0], qkv[1])
        return qkv

    family, impl = kind.split("-", 1) if "-" in kind else (kind, "")
    if family == "sdpa":
        backend = SDPBackend.MATH if impl == "math" else None

        def step(q, k, v):
            if backend is None:
                out = F.scaled_dot_product_attention(q, k, v)
            else:
                with sdpa_kernel(backend):
                    out = F.scaled_dot_product_attention(q, k, v)
            out.backward(torch.ones_like(out))

    elif family == "hier":
        attn = HierarchicalAttention(impl=impl)

        def step(q, k, v):
            out = attn(q, k, v)
            out.backward(torch.ones_like(out))

    else:  # index build only, from precomputed token scores

        def step(q, k, v):
            select_partition(scores_of[id(q)], None, 3, 4, 4, 32, impl)

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)

    step(*inputs(min(n, 1024)))  # warm-up: kernel compile / cache load, allocator
    sync()
    q, k, v = inputs(n, grad=family != "index")
    if dev.type == "cuda":
        torch.cuda.reset_peak_memory_stats(dev)
        base = torch.cuda.memory_allocated(dev)
    else:
        reset_peak_rss()
        base = current_rss_mb()
    t0 = time.perf_counter()
    step(q, k, v)
    sync()
    times = [time.perf_counter() - t0]
    if dev.type == "cuda":
        peak = (torch.cuda.max_memory_allocated(dev) - base) / 2**20
    else:
        peak = high_water_rss_mb() - base
    while len(times) < repeats and sum(times) < 10.0:
        for t in (q, k, v):
            t.grad = None
        t0 = time.perf_counter()
        step(q, k, v)
        sync()
        times.append(time.perf_counter() - t0)
    entries = None
    if family == "hier":
        part = select_partition(token_scores(q, k), None, 3, 4, 4, 32, impl)
        entries = int(part.counts.max())
    return {
        "kind": kind,
        "N": n,
        "B": b,
        "seconds": statistics.median(times),
        "runs": len(times),
        "peak_mib": peak,
        "entries": entries,
    }


def _run_cell(kind: str, n: int, b: int, args: argparse.Namespace) -> dict:
    """Run one cell in a fresh interpreter, so memory readings do not mix."""
    spec = {
        "kind": kind,
        "n": n,
        "b": b,
        "device": args.device,
        "repeats": args.repeats,
        "threads": args.threads,
    }
    payload, error, _ = run_script(Path(__file__), ["--cell", json.dumps(spec)], MARK)
    if payload is None:
        # a cell that died without a word on stderr was, in practice, killed for memory
        if error.startswith("killed (status "):
            error = "killed (out of memory?)"
        return {"kind": kind, "N": n, "B": b, "skipped": f"failed: {error[:80]}"}
    return payload


# --------------------------------------------------------------------------- speed grid


def _kinds(device: str) -> list[str]:
    """The columns measured on ``device``: the fast index build is Numba's on CPU."""
    if device.startswith("cuda"):
        return ["sdpa", "sdpa-math", "hier-torch", "hier-cuda", "index-torch", "index-cuda"]
    return ["sdpa", "sdpa-math", "hier-torch", "hier-numba", "index-torch", "index-numba"]


def _estimate(prev: dict | None, n: int, b: int, quadratic: bool) -> float | None:
    """Seconds predicted from the previous N of the same kind and batch."""
    if not prev or "seconds" not in prev:
        return None
    scale = (n / prev["N"]) ** (2 if quadratic else 1)
    return prev["seconds"] * scale * b / prev["B"]


def _math_bytes(n: int, b: int) -> float:
    """What the explicit kernel holds at once."""
    return 3 * b * HEADS * n * n * 4  # scores, probabilities and their gradient, float32


def _total_memory_bytes() -> float:
    """Physical memory of the machine (infinite where unknown)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return float("inf")


def run_speed(args: argparse.Namespace) -> list[dict]:
    """Every (B, N, kind) cell of the grid, each measured in a fresh interpreter or skipped
    with the reason (too slow by the previous N's estimate, or the N × N matrix too big)."""
    rows = []
    for b in args.batches:
        last: dict[str, dict] = {}
        for n in args.sizes:
            for kind in _kinds(args.device):
                if args.kinds and kind not in args.kinds:
                    continue
                quadratic = kind.startswith("sdpa")
                est = _estimate(last.get(kind), n, b, quadratic)
                if kind == "sdpa-math" and _math_bytes(n, b) > 0.4 * _total_memory_bytes():
                    row = {"kind": kind, "N": n, "B": b, "skipped": "N×N matrix exceeds memory"}
                elif est is not None and est > args.max_cell_seconds:
                    row = {"kind": kind, "N": n, "B": b, "skipped": f"est. {est:,.0f} s"}
                else:
                    row = _run_cell(kind, n, b, args)
                if "seconds" in row:
                    last[kind] = row
                rows.append(row)
                msg = row.get("skipped") or f"{row['seconds']:.4f} s, {row['peak_mib']:.1f} MiB"
                print(f"  B={b:<2} N={n:<6} {kind:<12} {msg}", file=sys.stderr, flush=True)
    return rows


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The options of both modes; ``--quick`` shrinks the speed grid and writes nothing."""
    ap = parser(__doc__)
    ap.add_argument("what", nargs="?", default="speed", choices=("speed", "accuracy"))
    ap.add_argument("--sizes", type=int, nargs="+", default=[1024, 4096, 16384, 65536])
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 8])
    ap.add_argument("--device", default="cpu", help="cpu or cuda")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--max-cell-seconds", type=float, default=150.0)
    ap.add_argument("--quick", action="store_true", help="N 1k and 4k, B 1; prints only")
    ap.add_argument("--root", default=None, help="gaitpdb folder (accuracy)")
    ap.add_argument("--folds", type=int, default=3, help="subject-wise folds (accuracy)")
    ap.add_argument("--epochs", type=int, default=8, help="training epochs (accuracy)")
    ap.add_argument("--out-dir", type=Path, default=RESULTS)
    ap.add_argument("--no-write", action="store_true", help="print only")
    ap.add_argument("--kinds", nargs="+", default=None, help="measure only these columns")
    ap.add_argument(
        "--merge",
        action="store_true",
        help="keep the other cells of the last run's JSON (rerun some columns only)",
    )
    ap.add_argument("--cell", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.argv = list(argv)
    if args.quick:
        args.sizes, args.batches, args.no_write = [1024, 4096], [1], True
    return args


def main(argv: list[str] | None = None) -> int:
    """Measure one cell (``--cell``, a sub-run), the speed grid or the accuracy runs."""
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.cell:
        emit_result(MARK, _cell(**json.loads(args.cell)))
        return 0
    t0 = time.perf_counter()
    if args.what == "accuracy":
        from _attention_accuracy import run_accuracy  # pandas and the data: this mode only

        text = run_accuracy(args)
        name = "attention_gpd.md"
    else:
        name = "attention.md" if args.device == "cpu" else "attention_gpu.md"
        rows = run_speed(args)
        old = args.out_dir / name.replace(".md", ".json")
        if args.merge and old.is_file():
            fresh = {(r["kind"], r["N"], r["B"]) for r in rows}
            kept = [
                r for r in json.loads(old.read_text()) if (r["kind"], r["N"], r["B"]) not in fresh
            ]
            rows = kept + rows
        text = render_speed(rows, args, time.perf_counter() - t0)
        if not args.no_write:
            args.out_dir.mkdir(parents=True, exist_ok=True)
            (args.out_dir / name.replace(".md", ".json")).write_text(json.dumps(rows, indent=1))
    print(text)
    if not args.no_write:
        write_report(args.out_dir / name, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
