"""The speed report of ``attention.py``: the table of time and peak memory per (B, N), and
the verdicts against the targets at N = 16,384."""

from __future__ import annotations

import argparse
import datetime as dt
import sys

from _common import command_line, git_revision, machine

HEADS, HEAD_DIM = 4, 32  # the q, k, v shape (B, HEADS, N, HEAD_DIM) every cell measures
TARGET_N, TARGET_SPEED, TARGET_MEM, TARGET_INDEX = 16384, 5.0, 0.25, 2.0
PATH_FLAGS = ("--root", "--out-dir")  # shown as PATH in the report's command


def _fmt_s(row: dict | None) -> str:
    """A cell's median time, or why it was skipped."""
    if row is None:
        return "–"
    if "skipped" in row:
        return f"skipped ({row['skipped']})"
    s = row["seconds"]
    return f"{s * 1000:,.1f} ms" if s < 1 else f"{s:,.2f} s"


def _fmt_mib(row: dict | None) -> str:
    """A cell's peak memory in MiB."""
    if row is None or "peak_mib" not in row:
        return "–"
    return f"{row['peak_mib']:,.1f}"


def _ratio(a: dict | None, b: dict | None, key: str) -> float | None:
    """``a[key] / b[key]`` where both cells measured it."""
    if not a or not b or key not in a or key not in b or b[key] <= 0:
        return None
    return a[key] / b[key]


def _ok(x: float | None, target: float, at_least: bool, unit: str = "×") -> str:
    """A measured ratio and whether it meets ``target`` (at least, or at most)."""
    if x is None:
        return "not measured"
    met = x >= target if at_least else x <= target
    return f"{x:,.2f}{unit} ({'met' if met else 'NOT met'})"


def render_speed(rows: list[dict], args: argparse.Namespace, wall: float) -> str:
    """The Markdown report of the speed grid's ``rows`` (``wall``: seconds of the run).

    Parameters
    ----------
    rows : list of dict
        One per (kind, N, B) cell: measured (``seconds``, ``peak_mib``, ``entries``) or
        ``skipped`` with the reason.
    args : argparse.Namespace
        The command's options (device, sizes, batches, repeats, threads, argv).
    wall : float
        Wall seconds of the run.
    """
    hier = "hier-cuda" if args.device.startswith("cuda") else "hier-numba"
    index = "index-cuda" if args.device.startswith("cuda") else "index-numba"
    get = {(r["kind"], r["N"], r["B"]): r for r in rows}
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
                verdicts.append(_verdict(b, n, speed, mem, _ratio(hn, mt, "peak_mib"), idx))
    return "\n".join([*lines, *_closing_lines(verdicts), *_run_lines(args, wall)])


def _verdict(
    b: int, n: int, speed: float | None, mem: float | None, mem_math: float | None, idx
) -> str:
    """The targets' line of one batch size at N = 16,384."""
    return (
        f"- B = {b}, N = {n:,}: hierarchical {_ok(speed, TARGET_SPEED, True)} "
        f"faster than sdpa (target ≥ {TARGET_SPEED:g}×); peak memory "
        f"{_ok(mem, TARGET_MEM, False, '')} of sdpa's (target ≤ {TARGET_MEM:g})"
        + (f", {mem_math:.3f} of the explicit kernel's" if mem_math else "")
        + f"; Numba index build {_ok(idx, TARGET_INDEX, True)} faster than the "
        f"torch reference (target ≥ {TARGET_INDEX:g}×)."
    )


def _closing_lines(verdicts: list[str]) -> list[str]:
    """The targets and how to read the memory and the cells."""
    return [
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
    ]


def _run_lines(args: argparse.Namespace, wall: float) -> list[str]:
    """The ``## Run`` section. Its own wording, not ``_common.run_lines``: the reports
    written so far name numba, not numpy, and no load average."""
    import numba
    import torch

    import medspt

    m = machine()
    return [
        "## Run",
        "",
        f"- command: `{command_line('attention.py', args.argv, PATH_FLAGS)}`",
        f"- date: {dt.datetime.now().strftime('%Y-%m-%d %H:%M')}, wall time {wall / 60:.1f} min",
        f"- machine: {m['cpu']}, {m['cores']} logical cores, {m['os']}; torch threads "
        f"{args.threads}",
        # a pure timing run: no row records the revision, so uncommitted code is noted
        f"- versions: medspt {medspt.__version__} ({git_revision(strict=False)}), torch "
        f"{torch.__version__}, numba {numba.__version__}, python {sys.version.split()[0]}",
        "",
    ]
