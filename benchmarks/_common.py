"""What the benchmark scripts share: their common options, machine and version facts, the
code revision their rows record, result writing, sub-interpreter cells, number formats and
memory readings. A script keeps only what it measures and how its table reads."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS = REPO_ROOT / "benchmarks" / "results"


def machine() -> dict[str, str]:
    """CPU model, logical cores and OS of this machine."""
    model = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": model, "cores": str(os.cpu_count()), "os": platform.platform(terse=True)}


class UncommittedCode(SystemExit):
    """Raised when a result would record code that no commit holds."""


def git_revision(strict: bool = True, root: Path = REPO_ROOT) -> str:
    """Short commit of the checkout at ``root``: the code revision a benchmark row records.

    A row must name code anyone can check out, so with ``strict`` (the default) uncommitted
    changes under ``medspt/`` or in the benchmark scripts stop the run with the fix (commit
    first, or run from a clean worktree). ``strict=False`` (report headers of pure timing
    runs only) notes the changes instead, as does the environment variable
    ``MEDSPT_BENCH_UNCOMMITTED=1`` (the test suite's: its rows are never results).
    ``"unknown"`` outside a git checkout.
    """
    try:
        rev = _git(root, "rev-parse", "--short", "HEAD")
        dirty = _git(root, "status", "--porcelain", "--", "medspt", "benchmarks/*.py")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    if not dirty:
        return rev
    if strict and os.environ.get("MEDSPT_BENCH_UNCOMMITTED") != "1":
        files = ", ".join(ln.split(maxsplit=1)[-1] for ln in dirty.splitlines()[:5])
        raise UncommittedCode(
            f"benchmark rows record the code revision, but this checkout has uncommitted "
            f"changes ({files}). Commit them first, or run from a clean checkout "
            f"(git worktree add ../medspt-clean HEAD)."
        )
    return rev + " + uncommitted changes"


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


# --------------------------------------------------------------------------- options


def parser(doc: str | None, *common: str) -> argparse.ArgumentParser:
    """An argument parser described by the first paragraph of ``doc`` (a script's
    docstring), with the ``common`` options named from :data:`COMMON_OPTIONS`, so the same
    flag reads the same in every script."""
    first = " ".join((doc or "").split("\n\n")[0].split())
    ap = argparse.ArgumentParser(description=first)
    for name in common:
        flags, kwargs = COMMON_OPTIONS[name]
        ap.add_argument(*flags, **kwargs)
    return ap


COMMON_OPTIONS: dict[str, tuple[tuple[str, ...], dict]] = {
    "data": (
        ("--data",),
        dict(
            default=None,
            help="folder that holds the datasets (default: $MEDSPT_DATA, else ../shared/data)",
        ),
    ),
    "seeds": (
        ("--seeds",),
        dict(type=int, nargs="+", default=[0, 1, 2], help="random seeds (default 0 1 2)"),
    ),
    "out": (
        ("--out",),
        dict(type=Path, default=None, help="folder for the report and CSV (default results/)"),
    ),
    "threads": (
        ("--threads",),
        dict(type=int, default=None, help="torch threads (default: torch's own choice)"),
    ),
    "quick": (
        ("--quick",),
        dict(action="store_true", help="a short smoke run; prints, writes nothing"),
    ),
}


def command_line(script: str, argv: list[str], path_flags: tuple[str, ...] = ()) -> str:
    """The command as run, for a report: absolute paths after ``path_flags`` become
    ``PATH`` and other absolute paths their last component (no machine's folders)."""
    shown, hide_next = [], False
    for a in argv:
        shown.append("PATH" if hide_next and os.path.isabs(a) else without_paths(" " + a)[1:])
        hide_next = a in path_flags
    return " ".join([f"python benchmarks/{script}", *shown])


def run_lines(script: str, argv: list[str], wall_s: float, threads: int | None = None) -> list[str]:
    """The ``## Run`` section every report ends with: command, date, wall time, machine,
    load and versions."""
    m = machine()
    load = os.getloadavg()
    return [
        "## Run",
        "",
        f"- command: `{command_line(script, argv)}`",
        f"- date: {dt.datetime.now().strftime('%Y-%m-%d %H:%M')}, wall time {wall_s / 60:.1f} min",
        f"- machine: {m['cpu']}, {m['cores']} logical cores, {m['os']}; torch threads "
        f"{threads if threads is not None else 'default'}; load average (1/5/15 min) at the "
        f"end {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}",
        f"- versions: {versions_line()}",
        "",
    ]


def versions_line() -> str:
    """medspt (with its revision), torch, numba, numpy and Python versions in one line."""
    import numba
    import numpy as np
    import torch

    import medspt

    return (
        f"medspt {medspt.__version__} ({git_revision(strict=False)}), torch "
        f"{torch.__version__}, numba {numba.__version__}, numpy {np.__version__}, python "
        f"{sys.version.split()[0]}"
    )


# --------------------------------------------------------------------------- results


def write_report(path: Path, text: str) -> Path:
    """Write a Markdown report (folders made as needed) and say where it went."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text if text.endswith("\n") else text + "\n")
    print(f"wrote {path.relative_to(REPO_ROOT) if path.is_relative_to(REPO_ROOT) else path}")
    return path


def write_report_with_run(
    path: Path, text: str, script: str, argv: list[str], wall_s: float, threads: int | None
) -> Path:
    """:func:`write_report` of ``text`` followed by its ``## Run`` section
    (:func:`run_lines`)."""
    return write_report(
        path, text.rstrip("\n") + "\n\n" + "\n".join(run_lines(script, argv, wall_s, threads))
    )


def append_csv(path: Path, frame) -> None:
    """Append rows under the file's header, never overwriting a row; rows with new columns
    rewrite the file with the union of columns (old rows keep empty cells there)."""
    import pandas as pd

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.is_file():
        frame.to_csv(path, index=False)
        return
    header = pd.read_csv(path, nrows=0).columns.tolist()
    if set(frame.columns) <= set(header):
        frame.reindex(columns=header).to_csv(path, mode="a", header=False, index=False)
    else:
        pd.concat([pd.read_csv(path), frame], ignore_index=True).to_csv(path, index=False)


# --------------------------------------------------------------------------- sub-interpreters


def emit_result(mark: str, payload) -> None:
    """Print a sub-run's result as one JSON line after ``mark`` (see :func:`run_script`)."""
    print(mark + json.dumps(payload), flush=True)


def run_script(
    script: Path, args: list[str], mark: str, python: str | None = None, stderr_shown: bool = False
) -> tuple[object | None, str, float]:
    """Run a benchmark ``script`` in a fresh interpreter (this checkout first on its path)
    and read the JSON it printed after ``mark``: ``(payload, error, wall seconds)``, the
    payload None with the last error line when it failed (out of memory, a crash).

    A fresh interpreter per cell keeps memory readings and thread pools from mixing; a
    different ``python`` runs cells in a second environment (tsai's).
    """
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    t0 = time.perf_counter()
    proc = subprocess.run(
        [python or sys.executable, str(Path(script).resolve()), *args],
        stdout=subprocess.PIPE,
        stderr=None if stderr_shown else subprocess.PIPE,
        text=True,
        env=env,
        check=False,
    )
    wall = time.perf_counter() - t0
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(mark)]
    if proc.returncode == 0 and lines:
        return json.loads(lines[-1][len(mark) :]), "", wall
    tail = (proc.stderr or "").strip().splitlines()
    return None, (tail[-1] if tail else f"killed (status {proc.returncode})")[:120], wall


def cpu_seconds(children: bool = True) -> tuple[float, float] | None:
    """Busy CPU seconds of the whole machine and of this process so far (children included
    unless ``children=False``); their difference over a stretch is what other processes
    took. None where ``/proc/stat`` is unavailable."""
    try:
        vals = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    except (OSError, ValueError):
        return None
    busy = sum(vals) - vals[3] - vals[4]  # all but idle and iowait
    t = os.times()
    own = t.user + t.system + ((t.children_user + t.children_system) if children else 0.0)
    return busy / os.sysconf("SC_CLK_TCK"), own


# --------------------------------------------------------------------------- numbers


def fmt_pm(mean: float, std: float = float("nan"), digits: int = 3) -> str:
    """``mean ± std`` for a table (std left out when undefined, ``–`` without a mean)."""
    import math

    if mean is None or not math.isfinite(mean):
        return "–"
    if std is None or not math.isfinite(std):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {std:.{digits}f}"


def fmt_series_pm(values, digits: int = 3) -> str:
    """:func:`fmt_pm` of a series' mean and sample std (NaNs dropped; one value: no std)."""
    import pandas as pd

    x = pd.Series(values, dtype=float).dropna()
    if not len(x):
        return "–"
    return fmt_pm(x.mean(), x.std(ddof=1) if len(x) > 1 else float("nan"), digits)


def fmt_p(p: float) -> str:
    """A p-value for a table: ``<0.001`` below a thousandth, ``–`` when undefined."""
    import math

    if p is None or not math.isfinite(p):
        return "–"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def fmt_num(x, spec: str = ".3f", missing: str = "–") -> str:
    """``x`` formatted with ``spec``; ``missing`` for None or NaN."""
    import math

    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return missing
    return format(x, spec)


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, in MiB (Linux reports KiB)."""
    ru = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return ru / 1024 if sys.platform != "darwin" else ru / 2**20


def current_rss_mb() -> float:
    """Resident set size now, in MiB (NaN off Linux)."""
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        return float("nan")


def reset_peak_rss() -> bool:
    """Restart the peak-RSS high-water mark at the current RSS (Linux ``clear_refs``)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def high_water_rss_mb() -> float:
    """Peak RSS since the last :func:`reset_peak_rss` (``VmHWM``), in MiB."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return peak_rss_mb()


def without_paths(text: str) -> str:
    """``text`` with absolute paths cut to their last component, so that reports name the
    dataset folder, not where it lies on the machine that wrote them."""
    import re

    return re.sub(r"(?<=[\s'\"(])/[^\s'\")]+", lambda m: Path(m.group()).name, str(text))


def study_storage(protocol: str, storage: str | None = None) -> str:
    """Where a protocol's capacity studies live: ``storage`` when given, else the
    protocol's committed journal ``results/studies/paper_table_<protocol>.log`` (one file
    per protocol, so the processes of two protocols never share a file)."""
    return storage or f"journal:{RESULTS / 'studies' / f'paper_table_{protocol}.log'}"


def resolved_params_json(overrides: dict | None = None) -> str:
    """Every :class:`medspt.SPTClassifier` parameter with ``overrides`` applied, as sorted
    JSON (:func:`medspt.estimator.defaults.params_json`)."""
    from medspt.estimator.defaults import params_json

    return params_json(overrides)


def params_hash(overrides: dict | None = None) -> str:
    """A short hash of :func:`resolved_params_json` (run keys and file-name suffixes)."""
    from medspt.estimator.defaults import defaults_hash

    return defaults_hash(overrides)


def resolved_hash(n_windows: int) -> str:
    """:func:`params_hash` of the defaults as a fit on ``n_windows`` labelled windows
    resolves them: ``n_estimators="auto"`` becomes the number of members it trains there,
    so the runs of an earlier default that fit identically keep their key (from 300
    windows on, one member: the same fit as ``n_estimators=1``)."""
    from medspt import SPTClassifier
    from medspt.estimator.auto import n_estimators_for

    if SPTClassifier().n_estimators != "auto":
        return params_hash()
    return params_hash({"n_estimators": n_estimators_for(n_windows)})


def probe_line(protocol: str, probe: str = "window-levels") -> str:
    """One sentence: what the confound probe ``probe`` (``benchmarks/probes.py``, stored
    in ``results/probes.csv``) scores on ``protocol``'s folds, to read every result of the
    protocol beside; "" when it has not run."""
    import pandas as pd

    path = RESULTS / "probes.csv"
    if not path.exists():
        return ""
    rows = pd.read_csv(path)
    rows = rows[(rows["protocol"] == protocol) & (rows["probe"] == probe)]
    if rows.empty:
        return f"Confound probe `{probe}`: not run yet (`python benchmarks/probes.py`)."
    r = rows.iloc[0]
    what = {
        "window-levels": "only each window's per-channel mean and log standard deviation (the "
        "features `window_stats=True` hands the classifier)",
        "channel-means": "only each window's per-channel means",
        "position": "only the window's position in its recording",
    }.get(probe, probe)
    return (
        f"Confound probe `{probe}` on the same folds: a linear classifier that sees {what} "
        f"scores {r['balanced_accuracy']:.3f} balanced accuracy (chance {r['chance']:.3f}; "
        "`probes.md`). Read the scores here beside it."
    )
