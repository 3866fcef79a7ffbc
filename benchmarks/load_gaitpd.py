"""Time and memory of loading the whole gaitpdb walk-01 set with ``load_gaitpd``.

Target: all 165 walk-01 recordings (about 1.85 million rows) in under 20 s and 2 GB on a
2-core machine. The script loads them ``--repeat`` times in one process and reports, per
run, the wall time, the process's peak resident memory (``resource.getrusage``; it
includes the interpreter, numpy, pandas and torch, which ``import medspt`` pulls in),
the growth of the peak over the memory held before the first load, the frame's own size,
rows and subjects. ``--tracemalloc`` adds one more run under :mod:`tracemalloc` (Python
and numpy allocations only; slower).

    python benchmarks/load_gaitpd.py                    # writes results/load_gaitpd.md
    python benchmarks/load_gaitpd.py --root PATH --repeat 3 --tracemalloc --no-write
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import os
import platform
import sys
import time
import tracemalloc
from pathlib import Path

from _common import current_rss_mb, peak_rss_mb

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO_ROOT / "benchmarks" / "results" / "load_gaitpd.md"
TARGET_S, TARGET_GB = 20.0, 2.0


def _command(argv) -> str:
    """The command line, with the data folder (a local path) left out."""
    args = list(sys.argv[1:] if argv is None else argv)
    for i, a in enumerate(args):
        if a == "--root" and i + 1 < len(args):
            args[i + 1] = "<gaitpdb folder>"
        elif a.startswith("--root="):
            args[i] = "--root=<gaitpdb folder>"
    return " ".join(["python benchmarks/load_gaitpd.py", *args])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=None, help="gaitpdb folder (default: local copy)")
    ap.add_argument("--walk", default="01")
    ap.add_argument("--repeat", type=int, default=2, help="timed loads (default 2)")
    ap.add_argument("--tracemalloc", action="store_true", help="one extra traced run")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--no-write", action="store_true", help="print only")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    import pandas as pd

    from medspt.datasets.gaitpd import load_gaitpd

    import_s = time.perf_counter() - t0
    baseline = current_rss_mb()

    rows = []
    for i in range(args.repeat):
        gc.collect()
        t = time.perf_counter()
        df = load_gaitpd(args.root, walks=(args.walk,))
        secs = time.perf_counter() - t
        rows.append(
            {
                "run": str(i + 1),
                "seconds": secs,
                "peak_rss_mb": peak_rss_mb(),
                "peak_over_baseline_mb": peak_rss_mb() - baseline,
                "frame_mb": df.memory_usage(deep=True).sum() / 2**20,
                "rows": len(df),
                "subjects": df["subject"].nunique(),
            }
        )
        del df
    if args.tracemalloc:
        gc.collect()
        tracemalloc.start()
        t = time.perf_counter()
        df = load_gaitpd(args.root, walks=(args.walk,))
        secs = time.perf_counter() - t
        _, traced_peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        rows.append(
            {
                "run": "traced",
                "seconds": secs,
                "peak_rss_mb": peak_rss_mb(),
                "peak_over_baseline_mb": traced_peak / 2**20,
                "frame_mb": df.memory_usage(deep=True).sum() / 2**20,
                "rows": len(df),
                "subjects": df["subject"].nunique(),
            }
        )
        del df

    table = pd.DataFrame(rows)
    best = table[table["run"] != "traced"]
    ok_time = best["seconds"].max() < TARGET_S
    ok_mem = best["peak_rss_mb"].max() < TARGET_GB * 1024
    head = [
        "# load_gaitpd: time and memory",
        "",
        f"- date: {dt.datetime.now().isoformat(timespec='seconds')}",
        f"- command: `{_command(argv)}`",
        f"- machine: {platform.machine()}, {os.cpu_count()} logical CPUs, "
        f"load average before {os.getloadavg()[0]:.2f}",
        f"- python {platform.python_version()}, pandas {pd.__version__}",
        f"- walk {args.walk}; import of medspt (with torch) took {import_s:.1f} s and left "
        f"the process at {baseline:.0f} MiB resident before the first load",
        "",
    ]
    lines = [
        "| run | seconds | peak RSS (MiB) | peak over baseline (MiB) | frame (MiB) | rows | "
        "subjects |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['run']} | {r['seconds']:.2f} | {r['peak_rss_mb']:.0f} | "
            f"{r['peak_over_baseline_mb']:.0f} | {r['frame_mb']:.0f} | {r['rows']:,} | "
            f"{r['subjects']} |"
        )
    notes = [
        "",
        f"Target: < {TARGET_S:.0f} s and < {TARGET_GB:.0f} GB per load: "
        f"time {'met' if ok_time else 'NOT met'}, memory {'met' if ok_mem else 'NOT met'}.",
        "Peak RSS is the whole process (interpreter, numpy, pandas, torch); "
        "'peak over baseline' is what loading added on top of the memory held before the "
        "first load (for the traced run: the tracemalloc peak of that load).",
    ]
    text = "\n".join(head + lines + notes) + "\n"
    print(text)
    if not args.no_write:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
        print(f"wrote {args.out}")
    return 0 if (ok_time and ok_mem) else 1


if __name__ == "__main__":
    raise SystemExit(main())
