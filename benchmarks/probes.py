"""How far do trivial confounds predict the label? Confound probes on the protocols' folds.

Runs ``medspt.evaluation.probes.confound_probes`` on the subject-wise folds of GPD-1 and NE-1: a
classifier that sees only the window's start position in its recording, and one that
sees only each channel's mean level. A model's score on a protocol must be read next to
these: what a probe reaches, a model can reach through the same shortcut.

    MEDSPT_DATA=/path/to/data python benchmarks/probes.py
    python benchmarks/probes.py --protocols NE-1 --no-write

Writes ``benchmarks/results/probes.md`` and ``probes.csv`` (one row per protocol and
probe). A protocol whose data is absent is skipped, and the report says why. It takes
seconds: every probe is a logistic regression on one or a few features.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import time
from pathlib import Path

import pandas as pd
from _common import RESULTS, git_revision, machine, without_paths

PROTOCOLS = ("GPD-1", "NE-1")


def run_protocol(name: str, root: str | None) -> dict:
    """Probe one protocol: its summary rows, warnings and a description, or why not."""
    from medspt.core.errors import InputError
    from medspt.datasets import protocol
    from medspt.evaluation.probes import confound_probes, probe_summary, probe_warnings

    try:
        p = protocol(name, root)
    except InputError as e:
        # the report is committed: name the data folder, not where it lies on this machine
        reason = without_paths(str(e))
        return {"name": name, "skipped": reason}
    t0 = time.perf_counter()
    ws = p.windows
    pred = confound_probes(ws, p.folds)
    summary = probe_summary(pred, ws.classes)
    # each fold's balanced accuracy, so the spread behind mean ± std is visible
    folds = {
        config: " ".join(
            f"{probe_summary(f, ws.classes).loc[0, 'balanced_accuracy']:.3f}"
            for _, f in g.groupby("fold", sort=True)
        )
        for config, g in pred.groupby("config", sort=False)
    }
    summary["balanced_accuracy_folds"] = summary["config"].map(folds)
    summary["wall_time_s"] = time.perf_counter() - t0
    summary.insert(0, "protocol", p.name)
    data = (
        f"{len(ws):,} windows of ({ws.X.shape[1]}, {ws.X.shape[2]}) from "
        f"{len(set(ws.groups))} subjects, classes {', '.join(map(str, ws.classes))}; "
        f"the protocol's {len(p.folds)} subject-wise folds"
    )
    return {
        "name": p.name,
        "summary": summary,
        "warnings": probe_warnings(summary),
        "data": data,
    }


def table(res: dict) -> list[str]:
    """Markdown lines for one protocol."""
    lines = [f"## {res['name']}", ""]
    if "skipped" in res:
        return lines + [f"Skipped: {res['skipped']}", ""]
    lines += [
        res["data"] + ".",
        "",
        "| probe | balanced accuracy (pooled) | fold mean ± std | per fold | accuracy "
        "(pooled) | chance (1/K) | majority-class accuracy | leak |",
        "|---|---:|---:|---|---:|---:|---:|---|",
    ]
    for r in res["summary"].itertuples(index=False):
        lines.append(
            f"| {r.probe} | {r.balanced_accuracy:.3f} | {r.balanced_accuracy_fold_mean:.3f} ± "
            f"{r.balanced_accuracy_fold_std:.3f} | {r.balanced_accuracy_folds} | "
            f"{r.accuracy:.3f} | {r.chance:.3f} | {r.majority_accuracy:.3f} | "
            f"{'**yes**' if r.leak else 'no'} |"
        )
    lines.append("")
    if res["warnings"]:
        lines += ["Warnings:", ""] + [f"- {w}" for w in res["warnings"]]
    else:
        lines.append("No probe beats chance by more than 0.10.")
    return lines + [""]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--protocols", nargs="+", default=list(PROTOCOLS), metavar="P")
    ap.add_argument("--root", help="data folder (default: $MEDSPT_DATA or the local copy)")
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--no-write", action="store_true", help="print the report only")
    args = ap.parse_args(argv)

    import numpy as np
    import sklearn

    import medspt
    from medspt.evaluation.probes import LEAK_MARGIN, POSITION_KNOTS

    t0 = time.perf_counter()
    results = [run_protocol(name, args.root) for name in args.protocols]
    mach = machine()
    cmd = " ".join(["python benchmarks/probes.py", *argv])
    lines = [
        "# Confound probes",
        "",
        f"- command: `{cmd}`",
        f"- date: {dt.datetime.now().strftime('%Y-%m-%d %H:%M')}, wall time "
        f"{time.perf_counter() - t0:.1f} s",
        f"- machine: {mach['cpu']}, {mach['cores']} logical cores, {mach['os']}",
        f"- versions: medspt {medspt.__version__} ({git_revision()}), scikit-learn "
        f"{sklearn.__version__}, numpy {np.__version__}, pandas {pd.__version__}, "
        f"python {sys.version.split()[0]}",
        "",
        "What a classifier reaches on each protocol's subject-wise folds when it sees "
        "nothing but a confound (`medspt.evaluation.probes.confound_probes`), fitted on each "
        "fold's "
        "training windows and scored on its test windows:",
        "",
        "- **position**: the window's start in its recording (seconds); cubic B-splines on "
        f'{POSITION_KNOTS} uniform knots + `LogisticRegression(class_weight="balanced")`.',
        "- **channel-means**: each channel's mean over the window; `StandardScaler` + "
        '`LogisticRegression(class_weight="balanced")`.',
        "",
        "Balanced accuracy is pooled over all out-of-fold windows; fold mean ± std (ddof 1) "
        "over the folds. Chance is 1/K for balanced accuracy (uniform guessing and always "
        "predicting the majority class both give it); the majority-class accuracy is the "
        f"accuracy of always predicting the commonest class. **leak**: pooled balanced "
        f"accuracy above chance + {LEAK_MARGIN:.2f}. A model's score must be read next to "
        "these numbers: whatever a probe reaches, a model can reach through the same "
        "shortcut.",
        "",
    ]
    for res in results:
        lines += table(res)
    text = "\n".join(lines)
    print(text)
    frames = [r["summary"] for r in results if "summary" in r]
    if not args.no_write:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "probes.md").write_text(text)
        if frames:
            pd.concat(frames, ignore_index=True).to_csv(args.out / "probes.csv", index=False)
        print(f"written to {args.out / 'probes.md'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
