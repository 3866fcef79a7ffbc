"""What the benchmark scripts share: machine and version facts, memory readings."""

from __future__ import annotations

import os
import platform
import resource
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS = REPO_ROOT / "benchmarks" / "results"

from medspt.estimator.classifier import PAPER_RECIPE  # noqa: E402,F401  (re-exported for the scripts)


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


def git_revision() -> str:
    """Short commit of this checkout, noting uncommitted changes under ``medspt/``."""
    try:
        rev = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "status", "--porcelain", "--", "medspt"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        return rev + (" + uncommitted medspt/ changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


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
    JSON: what a benchmark row records, so that a row under other defaults is never taken
    for the same run."""
    import json

    from medspt import SPTClassifier

    params = SPTClassifier(**(overrides or {})).get_params()
    return json.dumps(params, sort_keys=True, default=str)


def params_hash(overrides: dict | None = None) -> str:
    """A short hash of :func:`resolved_params_json` (run keys and file-name suffixes)."""
    import hashlib

    return hashlib.sha1(resolved_params_json(overrides).encode()).hexdigest()[:8]
