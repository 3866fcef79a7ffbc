"""Markdown report and CSV of ``throughput.py``'s CPU comparison: header lines, the
medspt vs TSTPlus table, the reference table and the notes on disturbed cells."""

from __future__ import annotations

import csv
import datetime as dt
import os
import statistics
from dataclasses import asdict
from pathlib import Path

from _common import command_line, fmt_num, git_revision, machine
from _throughput_cells import HEAD_DIM, MIN_SLOW_STEPS, N_CHANNELS, N_STEPS, Cell, Settings

PATH_FLAGS = ("--tsai-python", "--out")  # their values are this machine's paths


def command(argv: list[str]) -> str:
    """The command as run, for a report (this machine's paths left out)."""
    return command_line("throughput.py", argv, PATH_FLAGS)


def header_lines(
    argv: list[str],
    s: Settings,
    main_cells: list[Cell],
    tsai_v: dict[str, str] | None,
    here: dict[str, str],
    run: dict,
) -> list[str]:
    """The report's header: date and command, machine and its load, versions, settings.

    ``here`` are :func:`versions` of this interpreter; ``run`` holds what the run saw:
    ``load_before``, ``load_after``, ``busy_before`` and ``foreign`` (shares of the CPU
    other processes used in the second before and during the run, or None) and
    ``elapsed``.
    """
    m = machine()
    main_torch = next((c.torch_version for c in main_cells if c.kind == "medspt_cls"), "-")
    has_tst = any(c.kind == "tstplus_cls" for c in main_cells)
    attn_drop = s.dropout if s.tstplus_attn_dropout is None else s.tstplus_attn_dropout
    busy_before, foreign = run["busy_before"], run["foreign"]
    return [
        f"Date: {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC; "
        f"command: `{command(argv)}`"
        + (" with MEDSPT_TSAI_PYTHON set" if os.environ.get("MEDSPT_TSAI_PYTHON") else ""),
        f"Machine: {m['cpu']}, {m['cores']} logical cores, {m['os']}; torch threads: "
        f"{s.threads}; load average (1 min) before / after: {run['load_before']:.2f} / "
        f"{run['load_after']:.2f}"
        + (
            ""
            if foreign is None or busy_before is None
            else f"; CPU used by other processes: {busy_before:.0%} in the second before, "
            f"{foreign:.0%} during the run"
        ),
        f"Comparison columns: torch {main_torch}"
        + (f", tsai {tsai_v['tsai']}" if tsai_v and has_tst else ", tsai not available")
        + f"; medspt {here['medspt']} (checkout {git_revision(strict=False)}), Python "
        f"{here['python']}",
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
        f"Total benchmark time: {run['elapsed']:.0f} s",
    ]


def load_notes(
    s: Settings,
    main_cells: list[Cell],
    ref_cells: list[Cell],
    busy_before: float | None,
    foreign: float | None,
) -> list[str]:
    """Notes on cells that look disturbed and on a machine that was not idle."""
    notes = []
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
    return notes


def _fmt(x: float | None) -> str:
    """Windows/s for the table (``n/a`` when not measured)."""
    return fmt_num(x, ",.0f", missing="n/a")


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


def write_outputs(
    out_dir: Path, s: Settings, report: str, main_cells: list[Cell], ref_cells: list[Cell]
) -> None:
    """Write ``throughput.md`` / ``.csv`` (``throughput_conv.*`` for conv tokens)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = "throughput" if s.embedding == "patch" else f"throughput_{s.embedding}"
    (out_dir / f"{stem}.md").write_text(report)
    rows = [("comparison", c) for c in main_cells] + [("reference", c) for c in ref_cells]
    write_csv(out_dir / f"{stem}.csv", rows, s)
    print(f"wrote {out_dir / (stem + '.md')} and {out_dir / (stem + '.csv')}")
