"""Label efficiency: does SPT help when labels, not signals, are scarce?

In every outer fold of a protocol, the labels of 10 %, 25 %, 50 % and 100 % of the training
subjects are kept (``medspt.core.splits.labelled_subjects``: stratified by each subject's
classes, seeded by the run's seed and the fold); the other training subjects' windows go to
pretraining as unlabelled recordings (``SPTClassifier.fit(X_unlabelled=...)``). Five arms
are fitted on the same labelled subjects and scored on the fold's test subjects, who are
never among the unlabelled windows:

- ``scratch``: the default model without pretraining;
- ``scratch-long``: the compute-matched control (its schedule counts SPT's pretraining
  steps on the unlabelled windows), with scratch's early stopping, never keeping a
  checkpoint from inside its warm-up (issue 59);
- the default SPT model (``spt-span``);
- ``minirocket`` and ``multirocket-hydra`` (aeon): the labelled windows only; they have
  no use for unlabelled ones.

Below 300 labelled windows the default model is a five-member ensemble
(``n_estimators="auto"``); the report says at which shares that happened.

``scratch-long-v1`` are the rows of the control before issue 59 (``patience=None``: every
epoch run, the best validation epoch kept, often one inside warm-up); they are kept, shown
and never compared.

Each (arm, fraction, seed, fold) is appended to ``results/label_efficiency/<protocol>.csv``
as soon as it is done, with the code revision (a commit) and a hash of the estimator's
resolved settings (a row under other settings never counts as done), its predictions
beside it; a rerun resumes. ``results/label_efficiency.md`` holds, per protocol and
fraction, the mean balanced accuracy and the declared subject-level comparisons (seeds
averaged within subjects; one Holm family over both protocols): SPT against scratch,
scratch-long, MiniRocket and MultiRocket-Hydra. "SPT helped" needs SPT above the *better*
of scratch and scratch-long (95 % interval above 0, Holm p below 0.05).

    MEDSPT_DATA=/path/to/data python benchmarks/label_efficiency.py --protocol GPD-1
    MEDSPT_DATA=... python benchmarks/label_efficiency.py --protocol NE-1 --arms minirocket
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
from _common import RESULTS, git_revision, params_hash, parser, probe_line, write_report

from medspt.estimator.defaults import ISSUE_59_HASH

FRACTIONS = (0.1, 0.25, 0.5, 1.0)
CONTROLS = ("scratch", "scratch-long")
BASELINE_ARMS = ("minirocket", "multirocket-hydra")
RETIRED = "scratch-long-v1"  # the control before issue 59: shown, never compared
SEEDS = (0, 1, 2)
KEY = ["fraction", "seed", "fold"]


def _spt(params: dict) -> str:
    from medspt import SPTClassifier

    return f"spt-{SPTClassifier(**params).masking}"


def arms(params: dict) -> tuple[str, ...]:
    """Every arm of a cell, in the order they run: controls, SPT, then the baselines."""
    return (*CONTROLS, _spt(params), *BASELINE_ARMS)


def cell_split(ws, fold: tuple, fraction: float, seed: int, k: int):
    """The labelled training windows, the unlabelled ones (a WindowSet, None when every
    subject keeps its labels) and the labelled subjects of one cell."""
    from medspt.core.splits import labelled_subjects

    tr = np.asarray(fold[0])
    keep = labelled_subjects(ws.labels[tr], ws.groups[tr], fraction, seed * 1000 + k)
    kept = np.isin(ws.groups[tr], keep)
    rest = tr[~kept]
    return tr[kept], (ws.subset(rest) if len(rest) else None), keep


def run_arm(name: str, ws, folds, fraction: float, seed: int, k: int, params: dict, arm: str):
    """Fit one arm on one cell (fold ``k``): its row and its predictions."""
    # the fold-fitting step of medspt.evaluate, one configuration at a time, so that each
    # arm of a cell is appended (and resumed) on its own
    from medspt.api import _fit_job

    labelled, unlabelled, keep = cell_split(ws, folds[k], fraction, seed, k)
    depth = int(params.get("depth", 2))
    if arm in BASELINE_ARMS:
        config = dict(config=arm, depth=np.nan, masking=None, pretrain=False)
    elif arm in CONTROLS:
        config = dict(config=arm, depth=depth, masking=None, pretrain=False)
    else:
        config = dict(config=arm, depth=depth, masking=arm.removeprefix("spt-"), pretrain=True)
    extra = None if unlabelled is None else (unlabelled.X, unlabelled.groups)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # few validation subjects at small fractions: known
        row, pred = _fit_job(ws, (labelled, folds[k][1]), k, config, seed, params, extra)
    rows = pd.DataFrame([row]).assign(
        n_folds=len(folds), fraction=fraction, n_labelled_subjects=len(keep), protocol=name
    )
    return rows, pred.assign(fraction=fraction)


def _paths(out: Path, name: str):
    return out / "label_efficiency" / f"{name}.csv", out / "label_efficiency" / name


def _done(csv: Path, defaults: str) -> set[tuple]:
    """The (arm, fraction, seed, fold) rows already appended under ``defaults``."""
    if not csv.exists():
        return set()
    rows = pd.read_csv(csv, dtype={"defaults": str})
    rows = rows[rows["defaults"] == defaults]
    keys = rows[["config", *KEY]].drop_duplicates().to_numpy()
    return {(str(c), float(f), int(s), int(k)) for c, f, s, k in keys}


def run(name: str, root, fractions, seeds, params: dict, out: Path, only=None) -> None:
    """Every missing (arm, fraction, seed, fold) of protocol ``name`` (the arms ``only``
    when given), each appended as soon as it is done."""
    from _common import append_csv

    name, ws, folds, _ = load_windows(name, root)
    csv, pred_dir = _paths(out, name)
    defaults = params_hash(params)
    revision = git_revision()  # refuses uncommitted code
    done = _done(csv, defaults)
    wanted = [a for a in arms(params) if only is None or a in only]
    for seed in seeds:
        for fraction in fractions:
            for k in range(len(folds)):
                for arm in wanted:
                    if (arm, float(fraction), seed, k) in done:
                        continue
                    t0 = time.time()
                    rows, pred = run_arm(name, ws, folds, fraction, seed, k, params, arm)
                    pred_dir.mkdir(parents=True, exist_ok=True)
                    stem = f"f{round(fraction * 100)}_seed{seed}_fold{k}_{defaults}_{arm}"
                    pred.to_csv(pred_dir / f"{stem}.csv.gz", index=False, float_format="%.4g")
                    append_csv(csv, rows.assign(defaults=defaults, revision=revision))
                    print(
                        f"{name} {fraction:.0%} labelled, seed {seed}, fold {k}, {arm}: "
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
    preds = [read_predictions(f) for f in sorted(pred_dir.glob(f"*_{defaults}*.csv.gz"))]
    pred = pd.concat(preds, ignore_index=True)
    for frame in (rows, pred):
        frame["config"] = [f"{c} @ {f:.0%}" for c, f in zip(frame["config"], frame["fraction"])]
    res = Results(rows.reset_index(drop=True))
    res.predictions = pred
    return res


def _curve(res, spt: str) -> pd.DataFrame:
    """Balanced accuracy per (fraction, arm): seeds averaged within folds, then mean and
    std over folds; with the mean number of labelled subjects."""
    base = res["config"].str.rsplit(" @ ", n=1).str[0]
    frame = res.assign(base=base)
    per_fold = frame.groupby(["fraction", "base", "fold"])["balanced_accuracy"].mean()
    stats = per_fold.groupby(["fraction", "base"]).agg(["mean", "std", "count"])
    subjects = frame.groupby("fraction")["n_labelled_subjects"].mean()
    stats = stats.reset_index().rename(columns={"base": "config"})
    stats["labelled_subjects"] = stats["fraction"].map(subjects)
    return stats


def _common_cells(res, a: str, b: str):
    """``res`` (and its predictions) cut to the (seed, fold) cells both configurations
    ``a`` and ``b`` have, so that a comparison never pairs unequal sets of seeds."""
    from medspt.api import Results

    cells = [set(map(tuple, res.loc[res["config"] == c, ["seed", "fold"]].to_numpy()))
             for c in (a, b)]  # fmt: skip
    both = cells[0] & cells[1]
    keep = [tuple(x) in both for x in res[["seed", "fold"]].to_numpy()]
    out = Results(res[keep].reset_index(drop=True))
    pred = res.predictions
    out.predictions = pred[[tuple(x) in both for x in pred[["seed", "fold"]].to_numpy()]]
    return out, len(both)


def better_control(curve: pd.DataFrame, fraction: float) -> str | None:
    """The label-only control (scratch or scratch-long) with the higher mean balanced
    accuracy at ``fraction``, None while neither has a row."""
    part = curve[(curve["fraction"] == fraction) & curve["config"].isin(CONTROLS)]
    if part.empty:
        return None
    return str(part.sort_values(["mean", "config"], ascending=[False, True])["config"].iloc[0])


def comparisons(res, spt: str, name: str) -> pd.DataFrame:
    """The declared comparisons of one protocol: at every share, SPT against each control
    and each baseline (on the cells both arms have), one row each, with ``protocol``,
    ``fraction`` and ``cells``; ``p_holm`` is set over both protocols by :func:`family`."""
    from medspt.evaluation.comparisons import COMPARISON_COLUMNS, compare

    depth = float(res["depth"].dropna().iloc[0])
    rows = []
    for fraction in sorted(res["fraction"].unique()):
        tag = f" @ {fraction:.0%}"
        for other in (*CONTROLS, *BASELINE_ARMS):
            a, b = spt + tag, other + tag
            if not ((res["config"] == a).any() and (res["config"] == b).any()):
                continue
            sub, n = _common_cells(res, a, b)
            row = compare(sub, (a, depth), (b, np.nan if other in BASELINE_ARMS else depth))
            rows.append({**row, "protocol": name, "fraction": fraction, "cells": n})
    return pd.DataFrame(rows, columns=[*COMPARISON_COLUMNS, "protocol", "fraction", "cells"])


def family(tables: list[pd.DataFrame]) -> pd.DataFrame:
    """Every protocol's comparisons as one Holm family (subject-level p where there are
    predictions, fold-level otherwise)."""
    from medspt.evaluation.statistics import holm

    table = pd.concat(tables, ignore_index=True)
    primary = table["subject_p"].where(table["n_subjects"] > 0, table["fold_p"])
    table["test"] = np.where(table["n_subjects"] > 0, "subjects", "folds")
    table["p_holm"] = holm(primary.to_numpy(dtype=float))
    return table


def _members(res) -> dict[float, str]:
    """Per share, whether the default model's fits there were five-member ensembles
    (``n_estimators="auto"`` below 300 labelled windows)."""
    from medspt.estimator.auto import n_estimators_for

    out = {}
    for fraction, part in res.groupby("fraction"):
        n = sorted({n_estimators_for(int(x)) for x in part["n_train"]})
        out[fraction] = " / ".join(map(str, n))
    return out


def section(name: str, res, spt: str, table: pd.DataFrame, n_family: int) -> list[str]:
    """One protocol's table of means and its declared comparisons, as Markdown lines."""
    from medspt.api import markdown_comparisons
    from medspt.baselines import NAMES

    curve = _curve(res, spt)
    shown_arms = [*CONTROLS, spt, *BASELINE_ARMS, RETIRED]
    heads = [NAMES.get(a, a) for a in shown_arms[:-1]] + [f"{RETIRED} (retired)"]
    lines = [f"## {name}", "", "| labelled | subjects | members | " + " | ".join(heads) + " |",
             "|---:|---:|---:|" + "---:|" * len(shown_arms)]  # fmt: skip
    members = _members(res[~res["config"].str.startswith(tuple(BASELINE_ARMS))])
    for fraction, part in curve.groupby("fraction", sort=True):
        cells = part.set_index("config")
        shown = [_mean_std(cells.loc[c]) if c in cells.index else "–" for c in shown_arms]
        n = cells["labelled_subjects"].iloc[0]
        n = f"{n:.0f}" if float(n).is_integer() else f"{n:.1f}"  # a fold mean: 13, or 13.4
        lines.append(f"| {fraction:.0%} | {n} | {members.get(fraction, '–')} | "
                     + " | ".join(shown) + " |")  # fmt: skip
    n_folds = int(res["n_folds"].max())  # the protocol's folds, as each cell recorded them
    planned = len(FRACTIONS) * len(SEEDS) * n_folds
    base = res["config"].str.rsplit(" @ ", n=1).str[0]
    counts = res.assign(base=base).groupby("base")[KEY].apply(lambda f: len(f.drop_duplicates()))
    partial = [f"{a} {int(counts.get(a, 0))}" for a in shown_arms[:-1]
               if counts.get(a, 0) < planned]  # fmt: skip
    seeds = sorted(res["seed"].unique().tolist())
    lines += [
        "",
        "*members*: the default model's fits at this share were five-member ensembles "
        '(`n_estimators="auto"`, fewer than 300 labelled windows: 5) or one model (1); '
        "the baselines are single models. "
        f"*{RETIRED}*: the control before issue 59 (every epoch run, the best validation "
        "epoch kept, often one inside warm-up), shown for the record, never compared.",
        "",
        *(
            [
                f"**Partial**: of {planned} cells per arm ({len(FRACTIONS)} shares × "
                f"{len(SEEDS)} seeds × {n_folds} folds), done so far: {', '.join(partial)}; "
                f"rerun with `--protocol {name}` to resume. Each comparison uses only the "
                "cells both arms have (column *cells* below).",
                "",
            ]
            if partial
            else []
        ),  # fmt: skip
        answer(name, table, curve, spt, res),
        "",
        *([probe_line(name), ""] if probe_line(name) else []),
        f"Balanced accuracy on the test subjects, mean ± std over {res['fold'].nunique()} "
        f"folds (seeds {seeds} averaged within each fold). Declared comparisons (seeds "
        "averaged within subjects; subject-level sign-flip test and bootstrap interval; "
        "Holm over both protocols' comparisons):",
        "",
    ]
    text = markdown_comparisons(table).rstrip()
    text = text.replace(
        f"Holm's correction over the {table['p_holm'].notna().sum()} comparisons of this table",
        f"Holm's correction over the {n_family} comparisons of both protocols",
    )
    cells = ", ".join(f"{c} {n}" for c, n in zip(table["config"] + " vs " + table["versus"],
                                                 table["cells"]))  # fmt: skip
    lines += [text, "", f"Cells (seed × fold) in each comparison: {cells}.", ""]
    return lines


def _mean_std(cell: pd.Series) -> str:
    """``mean ± std`` over folds, or the mean and "(1 fold)" while only one is done."""
    if cell["count"] < 2:
        return f"{cell['mean']:.3f} (1 fold)"
    return f"{cell['mean']:.3f} ± {cell['std']:.3f}"


def _estimate(row) -> str:
    shown = "<0.001" if row.p_holm < 0.001 else f"{row.p_holm:.3f}"
    unit = f"{row.n_subjects} test subjects" if row.n_subjects > 0 else f"{row.n_folds} folds"
    return f"{row.diff:+.3f} (95 % CI {row.low:+.3f} to {row.high:+.3f}, Holm p {shown}, {unit})"


def answer(
    name: str, table: pd.DataFrame, curve: pd.DataFrame, spt: str, res: pd.DataFrame | None = None
) -> str:
    """One paragraph a clinician can read: at each share of labelled subjects, SPT against
    the better of the two label-only controls (where it helped: 95 % interval above 0 and
    Holm p below 0.05), and against MiniRocket fitted on the same labelled subjects; with
    the cells ``res``, what each arm cost in fitting time."""
    from medspt.evaluation.comparisons import primary_estimates

    if table.empty:
        return ""
    rows = primary_estimates(table)
    rows = rows.assign(versus_arm=rows["versus"].str.rsplit(" @ ", n=1).str[0])
    parts, rocket, helped, behind = [], [], [], []
    for fraction, part in rows.groupby("fraction", sort=True):
        share = f"{fraction:.0%}"
        control = better_control(curve, fraction)
        r = part[part["versus_arm"] == control]
        if control is not None and len(r):
            r = next(r.itertuples())
            pending = not (part["versus_arm"] == "scratch-long").any()
            named = f"{control}; scratch-long not run yet" if pending else control
            parts.append(f"{share} ({named}): {_estimate(r)}")
            if r.low > 0 and r.p_holm < 0.05:
                helped.append(share)
        m = part[part["versus_arm"] == "minirocket"]
        if len(m):
            m = next(m.itertuples())
            rocket.append(f"{share}: {_estimate(m)}")
            if m.high < 0 and m.p_holm < 0.05:
                behind.append(share)
    verdict = (
        f"SPT beat the better label-only control with labels from {', '.join(helped)} of "
        "the training subjects"
        if helped
        else "SPT did not demonstrably beat the better label-only control at any share"
    )
    text = (
        f"**{name}: did pretraining on the unlabelled subjects help?** Balanced accuracy of "
        f"{spt} minus the better of scratch and scratch-long at each share (named), paired "
        "over test subjects: " + "; ".join(parts) + f". {verdict}."
    )
    if rocket:
        text += (
            f" Against MiniRocket fitted on the same labelled subjects (no unlabelled "
            f"windows), {spt} minus MiniRocket: " + "; ".join(rocket) + ". "
            + (f"MiniRocket was ahead at {', '.join(behind)}." if behind else
               "At no share was either demonstrably ahead of the other."
               if not any(r.startswith(h) for h in helped for r in rocket) else "")
        )  # fmt: skip
    return text.rstrip() + (_cost(res) if res is not None else "")


def _cost(res: pd.DataFrame) -> str:
    """`` Mean fitting time per fold: 10%: spt-span 596 s, scratch-long 708 s, MiniRocket
    21 s; ...`` from the rows' wall times, each arm with a row at that share."""
    base = res["config"].str.rsplit(" @ ", n=1).str[0]
    frame = res.assign(arm=base)
    parts = []
    for fraction, part in frame.groupby("fraction", sort=True):
        # seeds and folds averaged alike: the mean of each arm's rows
        times = part.groupby("arm", sort=False)["wall_time_s"].mean()
        arms_ = [a for a in (*[a for a in times.index if a.startswith("spt-")], *CONTROLS,
                             *BASELINE_ARMS) if a in times.index]  # fmt: skip
        if len(arms_) > 1:
            shown = ", ".join(f"{_name(a)} {times[a]:.0f} s" for a in arms_)
            parts.append(f"{fraction:.0%}: {shown}")
    if not parts:
        return ""
    return " Mean fitting time per fold: " + "; ".join(parts) + "."


def _name(arm: str) -> str:
    from medspt.baselines import NAMES

    return NAMES.get(arm, arm)


def plot(curves: dict[str, pd.DataFrame], path: Path, spt: str) -> None:
    """Balanced accuracy against labelled subjects, one panel per protocol."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from medspt.baselines import NAMES

    shown = [*CONTROLS, spt, *BASELINE_ARMS]
    fig, axes = plt.subplots(1, len(curves), figsize=(5.5 * len(curves), 4), squeeze=False)
    for ax, (name, curve) in zip(axes[0], curves.items()):
        for i, config in enumerate(shown):
            c = curve[curve["config"] == config]
            if c.empty:
                continue
            dodge = 1 + 0.03 * (i - 2)  # side by side, so the error bars stay readable
            ax.errorbar(c["labelled_subjects"] * dodge, c["mean"], yerr=c["std"], marker="o",
                        capsize=3, label=NAMES.get(config, config),
                        linestyle="--" if config in BASELINE_ARMS else "-")  # fmt: skip
        ax.set_xscale("log")
        ticks = sorted(curve["labelled_subjects"].unique())
        ax.set_xticks(ticks, [f"{t:.0f}" for t in ticks])
        ax.minorticks_off()
        ax.set_xlabel("labelled training subjects (log scale)")
        ax.set_ylabel("balanced accuracy (test subjects, mean ± std over folds)")
        ax.set_title(name)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def report(out: Path, params: dict, command: str, defaults: str | None = None) -> str:
    spt = _spt(params)
    defaults = defaults or params_hash(params)
    lines = [
        "# Label efficiency: SPT when labels are scarce",
        "",
        "In each outer fold, the labels of a share of the training subjects are kept "
        "(stratified by each subject's classes, seeded); the other training subjects' "
        "windows are pretraining's unlabelled recordings; test subjects are never among "
        f"them. Settings: the package defaults{' with ' + json.dumps(params) if params else ''}"
        f" (defaults hash {defaults}, frozen). No setting was chosen on these cells; the "
        "protocols' test folds had been read before (see docs/concepts.md).",
        "",
    ]
    loaded = {}
    for name in ("GPD-1", "NE-1", "demo"):
        res = load(out, name, defaults)
        if res is not None:
            loaded[name] = res
    if not loaded:
        return "\n".join([*lines, "No cell has run yet.", ""])
    compared = [comparisons(res, spt, name) for name, res in loaded.items()]
    table = family(compared)
    curves = {}
    for name, res in loaded.items():
        part = table[table["protocol"] == name].reset_index(drop=True)
        lines += section(name, res, spt, part, len(table))
        curves[name] = _curve(res, spt)
    plot(curves, out / "label_efficiency.png", spt)
    # which control is the better one at each share: the clinician's figure reads it here
    arm = table["versus"].str.rsplit(" @ ", n=1).str[0]
    best = [better_control(curves[p], f) for p, f in zip(table["protocol"], table["fraction"])]
    table["better_control"] = arm == pd.Series(best, index=table.index)
    table.to_csv(out / "label_efficiency_comparisons.csv", index=False, float_format="%.6g")
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
    ap.add_argument("--arms", nargs="+", default=None,
                    help="run only these arms (default: every arm: scratch, scratch-long, "
                    "spt-span, minirocket, multirocket-hydra)")  # fmt: skip
    ap.add_argument("--params", default="{}", help="JSON of SPTClassifier settings (default: {})")
    ap.add_argument("--out", type=Path, default=RESULTS, help="results folder (default: results/)")
    ap.add_argument("--report-only", action="store_true", help="rewrite the report only")
    ap.add_argument("--defaults", default=None,
                    help="run and report the cells of this defaults hash (default: with no "
                    f"--params, {ISSUE_59_HASH}, the default frozen in issue 59, before issue "
                    "60's instance floor, whose cells run from a checkout of that code; with "
                    "--params, the hash they give)")  # fmt: skip
    args = ap.parse_args(argv)
    params = json.loads(args.params)
    if not isinstance(params, dict):
        ap.error("--params must be a JSON object")
    unknown = set(args.arms or ()) - set(arms(params))
    if unknown:
        ap.error(f"--arms: unknown {sorted(unknown)}; choose from {list(arms(params))}")
    target = args.defaults or (ISSUE_59_HASH if not params else params_hash(params))
    if not args.report_only and args.protocol and params_hash(params) != target:
        ap.error(
            f"this code's defaults hash is {params_hash(params)}, but the cells reported are "
            f"those of {target}: resume them from a checkout of that code (for "
            f"{ISSUE_59_HASH}: `git worktree add ../le 5202d67`, run there with "
            f"PYTHONPATH=../le), or start a set of cells under today's defaults with "
            f"--defaults {params_hash(params)}"
        )
    if not args.report_only:
        import torch

        torch.set_num_threads(1)  # one process per protocol on a small machine
        for name in args.protocol:
            run(name, args.data, args.fractions, args.seeds, params, args.out, args.arms)
    command = "python benchmarks/label_efficiency.py " + " ".join(argv or sys.argv[1:])
    write_report(args.out / "label_efficiency.md", report(args.out, params, command, target))
    return 0


if __name__ == "__main__":
    sys.exit(main())
