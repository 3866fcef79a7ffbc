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
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _common import (
    RESULTS,
    current_rss_mb,
    git_revision,
    high_water_rss_mb,
    machine,
    reset_peak_rss,
)

HEADS, HEAD_DIM = 4, 32
MARK = "@@ATTENTION-JSON@@"
TARGET_N, TARGET_SPEED, TARGET_MEM, TARGET_INDEX = 16384, 5.0, 0.25, 2.0


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


def _run_cell(kind, n, b, args) -> dict:
    """Run one cell in a fresh interpreter, so memory readings do not mix."""
    spec = json.dumps(
        {
            "kind": kind,
            "n": n,
            "b": b,
            "device": args.device,
            "repeats": args.repeats,
            "threads": args.threads,
        }
    )
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(RESULTS.parents[1]), env.get("PYTHONPATH")])
    )
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--cell", spec],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(MARK)]
    if proc.returncode != 0 or not lines:
        err = (proc.stderr.strip().splitlines() or ["killed (out of memory?)"])[-1]
        return {"kind": kind, "N": n, "B": b, "skipped": f"failed: {err[:80]}"}
    return json.loads(lines[-1][len(MARK) :])


# --------------------------------------------------------------------------- speed grid


def _kinds(device: str) -> list[str]:
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
    return 3 * b * HEADS * n * n * 4  # scores, probabilities and their gradient, float32


def _total_memory_bytes() -> float:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return float("inf")


def run_speed(args) -> list[dict]:
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


def _fmt_s(row: dict | None) -> str:
    if row is None:
        return "–"
    if "skipped" in row:
        return f"skipped ({row['skipped']})"
    s = row["seconds"]
    return f"{s * 1000:,.1f} ms" if s < 1 else f"{s:,.2f} s"


def _fmt_mib(row: dict | None) -> str:
    if row is None or "peak_mib" not in row:
        return "–"
    return f"{row['peak_mib']:,.1f}"


def _ratio(a: dict | None, b: dict | None, key: str) -> float | None:
    if not a or not b or key not in a or key not in b or b[key] <= 0:
        return None
    return a[key] / b[key]


def render_speed(rows: list[dict], args, wall: float) -> str:
    import numba
    import torch

    import medspt

    hier = "hier-cuda" if args.device.startswith("cuda") else "hier-numba"
    index = "index-cuda" if args.device.startswith("cuda") else "index-numba"
    get = {(r["kind"], r["N"], r["B"]): r for r in rows}
    m = machine()
    lines = [
        "# Full vs hierarchical attention: time and peak memory",
        "",
        f"Forward + backward of one attention call, q, k, v of shape (B, {HEADS}, N, "
        f"{HEAD_DIM}), float32, on `{args.device}`; median of up to {args.repeats} runs. "
        "Peak memory: growth of resident memory during the first run (GPU: "
        "`max_memory_allocated`). Hierarchical: levels 3, pool 4, topk 4, tile 32 "
        "(the defaults); *entries* is the length of the gathered sequence it attends over.",
        "",
        "| B | N | sdpa | sdpa MiB | sdpa-math | math MiB | hier-torch | "
        f"{hier} | {hier} MiB | entries | speed-up vs sdpa | memory vs sdpa | "
        f"index torch | {index} | index speed-up |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    verdicts = []
    for b in args.batches:
        for n in args.sizes:
            sd, mt = get.get(("sdpa", n, b)), get.get(("sdpa-math", n, b))
            ht, hn = get.get(("hier-torch", n, b)), get.get((hier, n, b))
            it, ik = get.get(("index-torch", n, b)), get.get((index, n, b))
            speed = _ratio(sd, hn, "seconds")
            mem = _ratio(hn, sd, "peak_mib")
            idx = _ratio(it, ik, "seconds")
            ent = hn.get("entries") if hn else None
            lines.append(
                f"| {b} | {n:,} | {_fmt_s(sd)} | {_fmt_mib(sd)} | {_fmt_s(mt)} | {_fmt_mib(mt)} "
                f"| {_fmt_s(ht)} | {_fmt_s(hn)} | {_fmt_mib(hn)} | {ent if ent else '–'} "
                f"| {f'{speed:,.1f}×' if speed else '–'} | {f'{mem:.2f}' if mem else '–'} "
                f"| {_fmt_s(it)} | {_fmt_s(ik)} | {f'{idx:.1f}×' if idx else '–'} |"
            )
            if n == TARGET_N:
                mem_math = _ratio(hn, mt, "peak_mib")
                verdicts.append(
                    f"- B = {b}, N = {n:,}: hierarchical {_ok(speed, TARGET_SPEED, True)} "
                    f"faster than sdpa (target ≥ {TARGET_SPEED:g}×); peak memory "
                    f"{_ok(mem, TARGET_MEM, False, '')} of sdpa's (target ≤ {TARGET_MEM:g})"
                    + (f", {mem_math:.3f} of the explicit kernel's" if mem_math else "")
                    + f"; Numba index build {_ok(idx, TARGET_INDEX, True)} faster than the "
                    f"torch reference (target ≥ {TARGET_INDEX:g}×)."
                )
    lines += [
        "",
        "## Targets (N = 16,384)",
        "",
        *(verdicts or ["- N = 16,384 was not in this run."]),
        "",
        "Memory: on CPU, torch's default SDPA is a fused kernel whose memory already grows "
        "linearly with N, and so does hierarchical attention's; both then hold about the "
        "same, dominated by the output and the gradients of q, k and v (4 × B·4·N·32 "
        "floats), which every attention needs. The ≤ ¼ target holds against the explicit "
        "N × N kernel (`sdpa-math`), where that fits in memory.",
        "",
        "Cells are single processes on a machine other work may share; a cell that stands "
        "out against its neighbours (a hierarchical cell slower than the torch reference, "
        "say) was most likely disturbed.",
        "",
        "## Run",
        "",
        f"- command: `python benchmarks/attention.py {' '.join(args.argv)}`",
        f"- date: {dt.datetime.now().strftime('%Y-%m-%d %H:%M')}, wall time {wall / 60:.1f} min",
        f"- machine: {m['cpu']}, {m['cores']} logical cores, {m['os']}; torch threads "
        f"{args.threads}",
        f"- versions: medspt {medspt.__version__} ({git_revision()}), torch "
        f"{torch.__version__}, numba {numba.__version__}, python {sys.version.split()[0]}",
        "",
    ]
    return "\n".join(lines)


def _ok(x: float | None, target: float, at_least: bool, unit: str = "×") -> str:
    if x is None:
        return "not measured"
    met = x >= target if at_least else x <= target
    return f"{x:,.2f}{unit} ({'met' if met else 'NOT met'})"


# --------------------------------------------------------------------------- accuracy


def run_accuracy(args) -> str:
    """Train on GPD-1's subjects at 100 Hz with full and hierarchical attention."""
    import numpy as np
    import torch

    import medspt
    from medspt.api import fit_fold, subject_folds
    from medspt.data.windowset import make_windows
    from medspt.datasets.gaitpd import load_gaitpd

    torch.set_num_threads(args.threads)
    t_all = time.perf_counter()
    rev = git_revision()  # the code this run uses, read before it starts
    df = load_gaitpd(args.root)
    ws = make_windows(df, window=1000, stride=500, classes=["control", "PD"])
    folds = subject_folds(ws.y, ws.groups, n_splits=args.folds, random_state=0)
    base = dict(
        depth=2,
        d_model=32,
        n_heads=4,
        patch_len=2,
        pretrain=False,
        epochs=args.epochs,
        batch_size=32,
        lr=1e-3,
        attn_dropout=0.0,
        random_state=0,
    )
    configs = {
        "full": dict(attention="full"),
        "hierarchical": dict(attention="hierarchical"),
        "hierarchical + 2 full": dict(attention="hierarchical", recover_epochs=2),
    }
    rows = []
    for name, extra in configs.items():
        for k, (tr, te) in enumerate(folds):
            print(f"  {name}: fold {k + 1}/{len(folds)}", file=sys.stderr, flush=True)
            row, clf, _ = fit_fold(ws, tr, te, {**base, **extra})
            n_ep = sum(len(h) for h in clf.history_.values())
            rows.append(
                {
                    "config": name,
                    "fold": k,
                    "wall_s": row["wall_time_s"],
                    "epochs": n_ep,
                    **{
                        m: row[m]
                        for m in (
                            "accuracy",
                            "balanced_accuracy",
                            "macro_f1",
                            "roc_auc",
                            "subject_accuracy",
                        )
                    },
                }
            )
    import pandas as pd

    res = pd.DataFrame(rows)
    if not args.no_write:
        args.out_dir.mkdir(parents=True, exist_ok=True)
        res.to_csv(args.out_dir / "attention_gpd.csv", index=False)
    metrics = ["balanced_accuracy", "accuracy", "subject_accuracy", "roc_auc"]
    lines = [
        "# What hierarchical attention costs on GPD-1 at 100 Hz",
        "",
        f"gaitpdb walk 01, all {len(np.unique(ws.groups))} subjects, at the full 100 Hz (no "
        f"block averaging): {len(ws.X):,} windows of 1,000 steps (10 s, stride 5 s) × 18 "
        f"channels; {args.folds} subject-wise folds (`subject_folds`, seed 0); trained from "
        f"scratch, depth 2, d_model 32, 4 heads, patches of 2 steps = 500 tokens per window, "
        f"{args.epochs} epochs max with early stopping on held-out training subjects, "
        "attention-weight dropout 0 for both (other dropout 0.1).",
        "",
        "| configuration | "
        + " | ".join(f"{m} (mean ± std)" for m in metrics)
        + " | fit time per fold | epochs run |",
        "|---|" + "---:|" * (len(metrics) + 2),
    ]
    for name in configs:
        r = res[res.config == name]
        cells = [f"{r[m].mean():.3f} ± {r[m].std(ddof=1):.3f}" for m in metrics]
        lines.append(
            f"| {name} | " + " | ".join(cells) + f" | {r.wall_s.mean():,.0f} s | "
            f"{r.epochs.mean():.1f} |"
        )
    m = machine()
    lines += [
        "",
        "Per fold: `attention_gpd.csv`. With 3 folds and one seed, differences of a few "
        "points are within noise.",
        "",
        "## Run",
        "",
        f"- command: `python benchmarks/attention.py {' '.join(args.argv)}`",
        f"- date: {dt.datetime.now().strftime('%Y-%m-%d %H:%M')}, wall time "
        f"{(time.perf_counter() - t_all) / 60:.1f} min",
        f"- machine: {m['cpu']}, {m['cores']} logical cores; torch threads {args.threads}",
        f"- versions: medspt {medspt.__version__} ({rev}), torch {torch.__version__}",
        "",
    ]
    return "\n".join(lines)


# --------------------------------------------------------------------------- main


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
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
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.cell:
        spec = json.loads(args.cell)
        print(MARK + json.dumps(_cell(**spec)))
        return 0
    t0 = time.perf_counter()
    if args.what == "accuracy":
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
        args.out_dir.mkdir(parents=True, exist_ok=True)
        (args.out_dir / name).write_text(text)
        print(f"written to {args.out_dir / name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
