"""How long medspt takes to start, against the packages it cannot do without.

Each row is the median wall time of ``--repeats`` fresh interpreters running one line. The
targets (issue: a newcomer's first ten minutes): ``medspt --help`` under 1 s, and
``import medspt`` no slower than ``import torch, sklearn``.

    python benchmarks/startup.py            # prints the table, writes results/startup.md
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _common import git_revision, machine

RESULTS = Path(__file__).parent / "results" / "startup.md"
CASES = {
    "python (nothing)": "pass",
    "import torch, sklearn": "import torch, sklearn",
    "import medspt": "import medspt",
    "import medspt; medspt.SPTClassifier": "import medspt; medspt.SPTClassifier",
    "medspt --help": "from medspt.cli import main\ntry: main(['--help'])\nexcept SystemExit: pass",
    "medspt datasets list": "from medspt.cli import main; main(['datasets', 'list'])",
    "medspt fit --help": "from medspt.cli import main\ntry: main(['fit', '--help'])\n"
    "except SystemExit: pass",
}


def seconds(code: str, repeats: int) -> float:
    """Median wall seconds of a fresh interpreter running ``code`` (output discarded)."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="runs per row (default: 5)")
    args = parser.parse_args()
    rows = [(name, seconds(code, args.repeats)) for name, code in CASES.items()]
    info = machine()
    lines = [
        "# Start-up time",
        "",
        f"Median of {args.repeats} fresh interpreters per row; revision {git_revision()}; "
        + ", ".join(f"{k} {v}" for k, v in info.items())
        + ". Written by `python benchmarks/startup.py`.",
        "",
        "| what runs | seconds |",
        "|---|---:|",
        *[f"| `{name}` | {s:.2f} |" for name, s in rows],
        "",
    ]
    text = "\n".join(lines)
    print(text)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(text)


if __name__ == "__main__":
    main()
