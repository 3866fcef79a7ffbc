"""Label efficiency: does SPT help when labels, not signals, are scarce?

In every outer fold of a protocol, the labels of 10 %, 25 %, 50 % and 100 % of the training
subjects are kept (``medspt.core.splits.labelled_subjects``: stratified by each subject's
classes, seeded by the run's seed and the fold); the other training subjects' windows go to
pretraining as unlabelled recordings (``SPTClassifier.fit(X_unlabelled=...)``). ``scratch``,
the compute-matched ``scratch-long`` (its budget counts SPT's pretraining steps on the
unlabelled windows) and the default SPT model are fitted on the same labelled subjects with
``medspt.evaluate`` and scored on the fold's test subjects, who are never among the
unlabelled windows.

Each (fraction, seed, fold) cell is appended to ``results/label_efficiency/<protocol>.csv``
as soon as it is done, with the code revision (a commit) and a hash of the estimator's
resolved settings (a cell under other settings never counts as done), its predictions
beside it; a rerun resumes. ``results/label_efficiency.md`` holds, per protocol and
fraction, the mean balanced accuracy and the subject-level paired comparisons of SPT with
scratch and scratch-long (seeds averaged within subjects; Holm over each protocol's table),
and ``label_efficiency.png`` the curve.

    MEDSPT_DATA=/path/to/data python benchmarks/label_efficiency.py --protocol GPD-1
    python benchmarks/label_efficiency.py --report-only
"""

from __future__ import annotations

import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from _baselines_folds import load_windows
from _common import RESULTS, git_revision, params_hash, parser, write_report

FRACTIONS = (0.1, 0.25, 0.5, 1.0)
CONFIGS = ("scratch", "scratch-long")  # and spt-<default masking>
SEEDS = (0, 1, 2)
KEY = ["fraction", "seed", "fold"]


def _spt(params: dict) -> str:
    from medspt import SPTClassifier

    return f"spt-{SPTClassifier(**params).masking}"


def cell_split(ws, fold: tuple, fraction: float, seed: int, k: int):
    """The labelled training windows, the unlabelled ones (a WindowSet, None when every
    subject keeps its labels) and the labelled subjects of one cell."""
    from medspt.core.splits import labelled_subjects

    tr = np.asarray(fold[0])
    keep = labelled_subjects(ws.labels[tr], ws.groups[tr], fraction, seed * 1000 + k)
    kept = np.isin(ws.groups[tr], keep)
    rest = tr[~kept]
    return tr[kept], (ws.subset(rest) if len(rest) else None), keep


def run_cell(name: str, ws, folds, fraction: float, seed: int, k: int, params: dict):
    """Fit scratch, scratch-long and SPT on one cell: rows and predictions, numbered ``k``."""
    from medspt import evaluate

    labelled, unlabelled, keep = cell_split(ws, folds[k], fraction, seed, k)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # few validation subjects at small fractions: known
        res = evaluate(
            ws, cv=[(labelled, folds[k][1])], seeds=(seed,), baselines=(), unlabelled=unlabelled,
            verbose=False, **params,
        )  # fmt: skip
    rows = pd.DataFrame(res).assign(
        fold=k, n_folds=len(folds), fraction=fraction, n_labelled_subjects=len(keep),
        protocol=name,
    )  # fmt: skip
    return rows, res.predictions.assign(fold=k, fraction=fraction)


def _paths(out: Path, name: str):
    return out / "label_efficiency" / f"{name}.csv", out / "label_efficiency" / name


def _done(csv: Path, defaults: str) -> set[tuple]:
    if not csv.exists():
        return set()
    rows = pd.read_csv(csv, dtype={"defaults": str})
    rows = rows[rows["defaults"] == defaults]
    return {(float(f), int(s), int(k)) for f, s, k in rows[KEY].drop_duplicates().to_numpy()}


def run(name: str, root, fractions, seeds, params: dict, out: Path) -> None:
    """Every missing (fraction, seed, fold) cell of protocol ``name``, appended as done."""
    from _common import append_csv

    name, ws, folds, _ = load_windows(name, root)
    csv, pred_dir = _paths(out, name)
    defaults = params_hash(params)
    revision = git_revision()  # refuses uncommitted code
    done = _done(csv, defaults)
    for seed in seeds:
        for fraction in fractions:
            for k in range(len(folds)):
                if (float(fraction), seed, k) in done:
                    continue
                t0 = time.time()
                rows, pred = run_cell(name, ws, folds, fraction, seed, k, params)
                pred_dir.mkdir(parents=True, exist_ok=True)
                stem = f"f{round(fraction * 100)}_seed{seed}_fold{k}_{defaults}"
                pred.to_csv(pred_dir / f"{stem}.csv.gz", index=False, float_format="%.4g")
                append_csv(csv, rows.assign(defaults=defaults, revision=revision))
                print(
                    f"{name} {fraction:.0%} labelled, seed {seed}, fold {k}: "
                    f"{(time.time() - t0) / 60:.1f} min",
                    flush=True,
                )


def load(out: Path, name: str, defaults: str):
    """The finished cells of protocol ``name`` under ``defaults``, one configuration per
    (config, fraction) named ``<config> @ <pct> %``, with their predictions."""
    from medspt.api import Results
    from medspt.estimator.metrics import read_predictions

    csv, pred_dir = _paths(out, name)
    if not csv.exists():
        return None
    rows = pd.read_csv(csv, dtype={"defaults": str})
    rows = rows[rows["defaults"] == defaults]
    if rows.empty:
        return None
    preds = [read_predictions(f) for f in sorted(pred_dir.glob(f"*_{defaults}.csv.gz"))]
    pred = pd.concat(preds, ignore_index=True)
    for frame in (rows, pred):
        frame["config"] = [f"{c} @ {f:.0%}" for c, f in zip(frame["config"], frame["fraction"])]
    res = Results(rows.reset_index(drop=True))
    res.predictions = pred
    return res


def _curve(res, spt: str) -> pd.DataFrame:
    """Balanced accuracy per (fraction, configuration): seeds averaged within folds, then
    mean and std over folds; with the mean number of labelled subjects."""
    base = res["config"].str.rsplit(" @ ", n=1).str[0]
    frame = res.assign(base=base)
    per_fold = frame.groupby(["fraction", "base", "fold"])["balanced_accuracy"].mean()
    stats = per_fold.groupby(["fraction", "base"]).agg(["mean", "std", "count"])
    subjects = frame.groupby("fraction")["n_labelled_subjects"].mean()
    stats = stats.reset_index().rename(columns={"base": "config"})
    stats["labelled_subjects"] = stats["fraction"].map(subjects)
    order = {c: i for i, c in enumerate([*CONFIGS, spt])}
    return stats.sort_values(["fraction", "config"], key=lambda s: s.map(order) if s.name ==
                             "config" else s)  # fmt: skip


def section(name: str, res, spt: str) -> list[str]:
    """One protocol's table of means and its declared comparisons, as Markdown lines."""
    from medspt.api import comparison_table, markdown_comparisons

    curve = _curve(res, spt)
    depth = float(res["depth"].dropna().iloc[0])
    lines = [f"## {name}", "", "| labelled | subjects | " + " | ".join([*CONFIGS, spt]) + " |",
             "|---:|---:|" + "---:|" * (len(CONFIGS) + 1)]  # fmt: skip
    pairs = []
    for fraction, part in curve.groupby("fraction", sort=True):
        cells = part.set_index("config")
        shown = [_mean_std(cells.loc[c]) if c in cells.index else "–" for c in (*CONFIGS, spt)]
        n = cells["labelled_subjects"].iloc[0]
        n = f"{n:.0f}" if float(n).is_integer() else f"{n:.1f}"  # a fold mean: 13, or 13.4
        lines.append(f"| {fraction:.0%} | {n} | " + " | ".join(shown) + " |")
        tag = f" @ {fraction:.0%}"
        pairs += [((spt + tag, depth), (c + tag, depth)) for c in CONFIGS]
    seeds = sorted(res["seed"].unique().tolist())
    table = comparison_table(res, pairs)
    cells = len(res[KEY].drop_duplicates())
    n_folds = int(res["n_folds"].max())  # the protocol's folds, as each cell recorded them
    planned = len(FRACTIONS) * len(SEEDS) * n_folds
    lines += [
        "",
        *(
            [
                f"**Partial: {cells} of {planned} cells** ({len(FRACTIONS)} shares × "
                f"{len(SEEDS)} seeds × {n_folds} folds) so far; rerun with `--protocol {name}` "
                "to resume.",
                "",
            ]
            if cells < planned
            else []
        ),  # fmt: skip
        answer(name, table, spt, res),
        "",
        f"Balanced accuracy on the test subjects, mean ± std over {res['fold'].nunique()} "
        f"folds (seeds {seeds} averaged within each fold). Declared comparisons (seeds "
        "averaged within subjects; subject-level sign-flip test and bootstrap interval; "
        "Holm over this table):",
        "",
        markdown_comparisons(table).rstrip(),
        "",
    ]
    return lines


def _mean_std(cell: pd.Series) -> str:
    """``mean ± std`` over folds, or the mean and "(1 fold)" while only one is done."""
    if cell["count"] < 2:
        return f"{cell['mean']:.3f} (1 fold)"
    return f"{cell['mean']:.3f} ± {cell['std']:.3f}"


def answer(name: str, table: pd.DataFrame, spt: str, res: pd.DataFrame | None = None) -> str:
    """One paragraph a clinician can read: at each share of labelled subjects, SPT against
    the compute-matched label-only control, where it helped (95 % interval above 0 and
    Holm p below 0.05) or did worse, and (given the cells ``res``) what it cost in time."""
    from medspt.evaluation.comparisons import primary_estimates

    rows = table[table["versus"].str.startswith("scratch-long @ ")]
    if rows.empty:
        return ""
    subj = rows["n_subjects"] > 0
    rows = primary_estimates(rows)
    diff, low, high = rows["diff"], rows["low"], rows["high"]
    share = rows["config"].str.rsplit(" @ ", n=1).str[1]
    parts, helped, hurt = [], [], []
    unit = "test subjects" if subj.all() else "folds"
    count = rows["n_subjects"].where(subj, rows["n_folds"]).astype(int)
    for s_, d, lo, hi, p, n_ in zip(share, diff, low, high, rows["p_holm"], count):
        shown = "<0.001" if p < 0.001 else f"{p:.3f}"
        parts.append(
            f"{s_}: {d:+.3f} (95 % CI {lo:+.3f} to {hi:+.3f}, Holm p {shown}, {n_} {unit})"
        )
        if lo > 0 and p < 0.05:
            helped.append(s_)
        elif hi < 0 and p < 0.05:
            hurt.append(s_)
    verdict = (
        f"SPT helped with labels from {', '.join(helped)} of the training subjects"
        if helped
        else "SPT did not demonstrably help at any share of labelled subjects"
    )
    if hurt:
        verdict += f"; it was worse at {', '.join(hurt)}"
    return (
        f"**{name}: did pretraining on the unlabelled subjects help?** Balanced accuracy of "
        f"{spt} minus the compute-matched label-only control (scratch-long), paired over "
        f"{unit}, by share of training subjects with labels: "
        + "; ".join(parts)
        + f". {verdict}."
        + (_cost(res) if res is not None else "")
    )


def _cost(res: pd.DataFrame) -> str:
    """`` Mean fitting time per fold, SPT against scratch-long: 10%: 596 s vs 708 s
    (0.8×); ...`` from the cells' wall times, one entry per share that has both."""
    from medspt.evaluation.comparisons import fit_times

    base = res["config"].str.rsplit(" @ ", n=1).str[0]
    parts = []
    for fraction, part in res.assign(config=base).groupby("fraction", sort=True):
        times = fit_times(part, "scratch-long")
        if times is not None:
            spt, long = times
            parts.append(f"{fraction:.0%}: {spt:.0f} s vs {long:.0f} s ({spt / long:.1f}×)")
    if not parts:
        return ""
    return " Mean fitting time per fold, SPT against scratch-long: " + "; ".join(parts) + "."


def plot(curves: dict[str, pd.DataFrame], path: Path, spt: str) -> None:
    """Balanced accuracy against labelled subjects, one panel per protocol."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(curves), figsize=(5 * len(curves), 3.8), squeeze=False)
    for ax, (name, curve) in zip(axes[0], curves.items()):
        for i, config in enumerate((*CONFIGS, spt)):
            c = curve[curve["config"] == config]
            dodge = 1 + 0.03 * (i - 1)  # side by side, so the error bars stay readable
            ax.errorbar(c["labelled_subjects"] * dodge, c["mean"], yerr=c["std"], marker="o",
                        capsize=3, label=config)  # fmt: skip
        ax.set_xscale("log")
        ticks = sorted(curve["labelled_subjects"].unique())
        ax.set_xticks(ticks, [f"{t:.0f}" for t in ticks])
        ax.minorticks_off()
        ax.set_xlabel("labelled training subjects (log scale)")
        ax.set_ylabel("balanced accuracy (test subjects)")
        ax.set_title(name)
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def report(out: Path, params: dict, command: str) -> str:
    spt = _spt(params)
    defaults = params_hash(params)
    lines = [
        "# Label efficiency: SPT when labels are scarce",
        "",
        "In each outer fold, the labels of a share of the training subjects are kept "
        "(stratified by each subject's classes, seeded); the other training subjects' "
        "windows are pretraining's unlabelled recordings; test subjects are never among "
        f"them. Settings: the package defaults{' with ' + json.dumps(params) if params else ''}"
        f" (defaults hash {defaults}). Nothing here was chosen on these test folds.",
        "",
    ]
    curves = {}
    for name in ("GPD-1", "NE-1", "demo"):
        res = load(out, name, defaults)
        if res is None:
            continue
        lines += section(name, res, spt)
        curves[name] = _curve(res, spt)
    if not curves:
        return "\n".join([*lines, "No cell has run yet.", ""])
    plot(curves, out / "label_efficiency.png", spt)
    lines += ["![balanced accuracy against labelled subjects](label_efficiency.png)", ""]
    lines += [f"- command: `{command}`", f"- code: {git_revision(strict=False)}", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = parser(__doc__, "data")
    ap.add_argument("--protocol", nargs="+", default=[], help="GPD-1, NE-1 or demo")
    ap.add_argument("--fractions", type=float, nargs="+", default=list(FRACTIONS),
                    help="shares of training subjects that keep their labels (default: "
                    "0.1 0.25 0.5 1)")  # fmt: skip
    ap.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS), help="(default: 0 1 2)")
    ap.add_argument("--params", default="{}", help="JSON of SPTClassifier settings (default: {})")
    ap.add_argument("--out", type=Path, default=RESULTS, help="results folder (default: results/)")
    ap.add_argument("--report-only", action="store_true", help="rewrite the report only")
    args = ap.parse_args(argv)
    params = json.loads(args.params)
    if not isinstance(params, dict):
        ap.error("--params must be a JSON object")
    if not args.report_only:
        import torch

        torch.set_num_threads(1)  # one process per protocol on a small machine
        for name in args.protocol:
            run(name, args.data, args.fractions, args.seeds, params, args.out)
    command = "python benchmarks/label_efficiency.py " + " ".join(argv or sys.argv[1:])
    write_report(args.out / "label_efficiency.md", report(args.out, params, command))
    return 0


if __name__ == "__main__":
    sys.exit(main())
