"""The capacity-versus-pretraining table on the real datasets, next to the tsai baselines.

For each protocol (GPD-1 and NE-1; CAM-1 when its signals are present) this runs the grid
depth × {scratch, label-only with ALiBi positions, SPT with each masking} × seeds as a
medspt study, then writes ``benchmarks/results/paper_table.md`` with one table per
protocol: accuracy mean ± std over folds × seeds, the gain of each masking over scratch
with its paired Wilcoxon p-value, and the tsai baselines scored on the same folds when
``benchmarks/results/baselines_<protocol>.csv`` exists (``benchmarks/baselines.py``).

    python benchmarks/paper_table.py                                # the full grid (hours)
    python benchmarks/paper_table.py --depths 1 2 --maskings span block \\
        --pretrain-epochs 10 --epochs 15                            # a reduced grid
    python benchmarks/paper_table.py --report-only                  # tables from the studies

The studies live in ``--storage``, by default the Optuna journal file
``benchmarks/results/studies/paper_table.log``, which is committed: the grid takes many
hours on a small CPU, so any machine with the data can resume it where the last run
stopped (and several processes can share it: run one per protocol). Cells run seed by
seed, so a partial study has covered every depth and configuration once before it repeats.

Real data is found through ``MEDSPT_DATA`` or ``--root`` (a folder holding ``gaitpdb/``
and ``noneeg/``); protocols whose data is missing are reported as skipped.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import sys
import time
import warnings
from pathlib import Path

import pandas as pd
from _common import RESULTS, git_revision, machine

PROTOCOLS = ("GPD-1", "NE-1", "CAM-1")


def _available(name: str, root) -> str | None:
    """None when the protocol's data loads, else why not."""
    from medspt.datasets.protocols import protocol

    try:
        protocol(name, root=root)
    except Exception as e:  # missing folder or files: reported, not fatal
        return f"{type(e).__name__}: {str(e)[:160]}"
    return None


def _params(args) -> dict:
    params = {
        "d_model": args.d_model,
        "n_heads": args.n_heads,
        "epochs": args.epochs,
        "pretrain_epochs": args.pretrain_epochs,
        "batch_size": args.batch_size,
    }
    # variant settings only when they differ from the defaults, so the first studies
    # resume as they were
    if args.normalize == "window":
        params["normalize"] = "window"
    if args.pooling != "mean":
        params["pooling"] = args.pooling
    if args.lr is not None:
        params["lr"] = args.lr
    if args.val_size is not None:
        params["val_size"] = args.val_size
    return params


def _suffix(params: dict) -> str:
    """A variant's study name suffix: paper-<protocol><suffix>."""
    out = "-window" if params.get("normalize") == "window" else ""
    out += f"-{params['pooling']}" if params.get("pooling", "mean") != "mean" else ""
    out += f"-lr{params['lr']:g}" if "lr" in params else ""
    out += f"-val{params['val_size']:g}" if "val_size" in params else ""
    return out


def _variant(params: dict) -> str:
    """A variant's name in the report: its settings that differ from the first study."""
    parts = ["per-window centring" if params.get("normalize") == "window" else "channel scaling"]
    if params.get("pooling", "mean") != "mean":
        parts.append(f"{params['pooling']} pooling")
    if "lr" in params:
        parts.append(f"lr {params['lr']:g}")
    if "val_size" in params:
        v = params["val_size"]
        parts.append("no validation split" if v == 0 else f"validation share {v:g}")
    return ", ".join(parts)


def _studies(name: str, storage: str) -> list:
    """The protocol's studies in the storage: paper-<name>, then its variants by name."""
    import optuna

    from medspt.study import make_storage

    st = make_storage(storage, heartbeat=None)  # one read of the journal for all studies
    names = {
        s.study_name
        for s in optuna.get_all_study_summaries(st)
        if s.study_name == f"paper-{name}" or s.study_name.startswith(f"paper-{name}-")
    }
    return [
        optuna.load_study(study_name=n, storage=st)
        for n in sorted(names, key=lambda n: (len(n), n))
    ]


def _baseline_files(name: str) -> list[Path]:
    """baselines_<protocol>.csv plus tagged runs (baselines_<protocol>_<tag>.csv)."""
    return sorted(RESULTS.glob(f"baselines_{name}.csv")) + sorted(
        RESULTS.glob(f"baselines_{name}_*.csv")
    )


def _read_baselines(name: str) -> pd.DataFrame | None:
    """All baseline rows of a protocol; a network's name carries its training budget
    (read from the run's Markdown header), since runs with other budgets sit side by side."""
    frames = []
    for csv in _baseline_files(name):
        df = pd.read_csv(csv)
        md = csv.with_suffix(".md")
        budget = re.search(
            r"fit_one_cycle, (\d+) epochs \(MVP pretraining (\d+)\)",
            md.read_text() if md.exists() else "",
        )
        if budget:
            epochs, mvp = budget.groups()
            net = df["config"] != "tsai-minirocket"  # MiniRocket has no epochs
            mvp_run = df["config"].str.endswith("-mvp")
            df.loc[net & ~mvp_run, "config"] += f" ({epochs} epochs)"
            df.loc[net & mvp_run, "config"] += f" ({epochs} epochs, MVP {mvp})"
        frames.append(df)
    return pd.concat(frames, ignore_index=True) if frames else None


def _progress(study, res: pd.DataFrame) -> str:
    """How much of the grid is complete, and what is missing."""
    from medspt.study.runner import _cells

    cells = _cells(study.user_attrs["medspt"])
    done = set(zip(res["depth"], res["config"], res["seed"]))
    missing = [c for c in cells if (c.depth, c.config, c.seed) not in done]
    if not missing:
        return f"All {len(cells)} cells of the grid are complete."
    by_seed = pd.Series([c.seed for c in missing]).value_counts().sort_index()
    return (
        f"**Partial: {len(cells) - len(missing)} of {len(cells)} cells complete**; missing "
        + ", ".join(f"{n} cells of seed {s}" for s, n in by_seed.items())
        + f" (next: {missing[0].key}). Rerun the same command"
        + (" (with the same variant options)" if study.study_name.count("-") > 2 else "")
        + " to resume the study."
    )


def _summary_rows(name: str, studies: list, baselines, metric: str) -> list[str]:
    """The summary lines of a protocol: the best row of each study, the best baseline."""
    from medspt.study import capacity_table, results_frame

    if baselines is not None and len(baselines):
        means = baselines.groupby("config", sort=False)[metric].mean()
        base = f"{means.max():.3f} ({means.idxmax()})"
    else:
        base = "–"
    rows = []
    for study in studies:
        res = results_frame(study)
        variant = _variant(study.user_attrs["medspt"].get("params", {}))
        if res.empty:
            rows.append(f"| {name} | {variant} | – | – | {base} |")
            continue
        t = capacity_table(res, metric)
        b = t.loc[t["mean"].idxmax()]
        best = f"{b['config']}, depth {int(b['depth'])} (of {len(t)} rows)"
        rows.append(f"| {name} | {variant} | {best} | {b['mean']:.3f} | {base} |")
    return rows


def _section(
    name: str, study, baselines: pd.DataFrame | None, metric: str, title: str = ""
) -> list[str]:
    from medspt.api import markdown_table
    from medspt.study import capacity_table, results_frame

    res = results_frame(study)
    if res.empty:
        return [f"## {name}{title}", "", "No completed cells yet.", ""]
    table = capacity_table(res, metric)
    attrs = study.user_attrs.get("medspt", {})
    lines = [
        f"## {name}{title}",
        "",
        f"Study `{study.study_name}`: depths {attrs['grid']['depths']}, model settings "
        f"{attrs.get('params', {})}.",
        "",
        f"{attrs.get('n_folds')} subject-wise folds (the protocol's), seeds "
        f"{attrs['grid']['seeds']}; {metric.replace('_', ' ')} on held-out subjects, mean ± "
        "std over folds × seeds; gain = mean paired difference to scratch (same depth, "
        "fold, seed), p = two-sided Wilcoxon signed-rank over those pairs.",
        "",
        markdown_table(table, metric).rstrip(),
        "",
    ]
    lines.append(
        f"{len(res)} fits, {res['wall_time_s'].sum() / 60:,.0f} min of training in total "
        f"(median {res['wall_time_s'].median():,.0f} s per fit)."
    )
    lines += ["", _progress(study, res)]
    lines.append("")
    best = table.loc[table["mean"].idxmax()]
    lines.append(
        f"Best medspt configuration: **{best['config']} at depth {int(best['depth'])}**, "
        f"{best['mean']:.3f} ± {best['std']:.3f} (the best of {len(table)} rows on the "
        "test folds themselves, so an optimistic estimate)."
    )
    if baselines is not None and len(baselines):
        lines += [
            "",
            f"| tsai baseline (same folds) | {metric} (mean ± std) | runs |",
            "|---|---:|---:|",
        ]
        means = {}
        for config, g in baselines.groupby("config", sort=False):
            means[config] = g[metric].mean()
            lines.append(
                f"| {config} | {g[metric].mean():.3f} ± {g[metric].std(ddof=1):.3f} | {len(g)} |"
            )
        budgets = sorted(p.with_suffix(".md").name for p in _baseline_files(name))
        lines += [
            "",
            "Baseline settings differ by run: see " + ", ".join(f"`{b}`" for b in budgets) + ".",
        ]
        top = max(means, key=means.get)
        verdict = "matches or beats" if best["mean"] >= means[top] else "falls short of"
        lines += [
            "",
            f"Best medspt ({best['mean']:.3f}) {verdict} the best baseline, {top} "
            f"({means[top]:.3f}).",
        ]
    else:
        lines += ["", "Baselines: not run for this protocol (`benchmarks/baselines.py`)."]
    lines.append("")
    return lines


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--protocols", nargs="+", default=list(PROTOCOLS))
    ap.add_argument("--depths", type=int, nargs="+", default=[1, 2, 4, 8])
    ap.add_argument("--maskings", nargs="+", default=["random", "span", "channel", "block"])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--d-model", type=int, default=64)
    ap.add_argument("--n-heads", type=int, default=4)
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--pretrain-epochs", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--metric", default="balanced_accuracy")
    ap.add_argument("--root", default=None, help="data root (default: MEDSPT_DATA)")
    ap.add_argument(
        "--no-alibi", action="store_true", help="leave out the scratch-alibi configuration"
    )
    ap.add_argument("--storage", default=f"journal:{RESULTS / 'studies' / 'paper_table.log'}")
    ap.add_argument(
        "--normalize",
        default="channel",
        choices=("channel", "window"),
        help="window: run the grid with per-window centring; like --pooling and --lr, a "
        "variant runs as its own study (paper-<protocol>-window...), and the report "
        "shows every study of the protocol",
    )
    ap.add_argument("--pooling", default="mean", choices=("mean", "cls"))
    ap.add_argument("--lr", type=float, help="learning rate (default: medspt's)")
    ap.add_argument(
        "--val-size",
        type=float,
        help="share of training subjects held out for early stopping (default: medspt's "
        "0.2; 0 trains on all of them for the fixed epochs)",
    )
    ap.add_argument("--report-only", action="store_true", help="tables from existing studies")
    ap.add_argument("--out", type=Path, default=RESULTS / "paper_table.md")
    args = ap.parse_args(argv)

    import optuna
    import torch

    import medspt
    from medspt.study import run_study

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    t0 = time.perf_counter()
    sections, skipped, summary = [], [], []
    for name in args.protocols:
        why = _available(name, args.root)
        if why:
            skipped.append(f"- {name}: skipped, data not available ({why})")
            continue
        if not args.report_only:
            print(f"{name}: running the grid", file=sys.stderr, flush=True)
            run_study(
                args.root,
                protocol=name,
                depths=args.depths,
                maskings=args.maskings,
                alibi=not args.no_alibi,
                seeds=args.seeds,
                storage=args.storage,
                study_name=f"paper-{name}{_suffix(_params(args))}",
                metric=args.metric,
                params=_params(args),
            )
        baselines = _read_baselines(name)
        studies = _studies(name, args.storage)
        for study in studies:
            params = study.user_attrs["medspt"].get("params", {})
            title = "" if study.study_name == f"paper-{name}" else f", {_variant(params)}"
            sections += _section(name, study, baselines, args.metric, title)
        summary += _summary_rows(name, studies, baselines, args.metric)
    m = machine()
    cmd = " ".join(["python benchmarks/paper_table.py", *argv])
    lines = [
        "# Capacity versus pretraining on the real datasets",
        "",
        "Does self-pretraining help, with which masking, and how does the gain change with "
        "depth? Subject-wise evaluation on the dataset protocols (see "
        "`medspt.datasets.protocols`).",
        "",
        "## Summary",
        "",
        f"Best {args.metric.replace('_', ' ')} of each study (the best row chosen on the test "
        "folds, so optimistic) next to the best tsai baseline on the same folds; the "
        "sections below have every row, its spread and the p-values.",
        "",
        f"| protocol | medspt study | its best row | {args.metric} | best tsai baseline |",
        "|---|---|---|---:|---|",
        *summary,
        "",
        *sections,
        *skipped,
        "",
        "## Run",
        "",
        f"- command: `{cmd}`",
        f"- model settings: {_params(args)}; grid depths {args.depths}, maskings "
        f"{args.maskings}, seeds {args.seeds}",
        f"- date: {dt.datetime.now().strftime('%Y-%m-%d %H:%M')}, wall time of this run "
        f"{(time.perf_counter() - t0) / 60:.1f} min"
        + (" (tables only; the studies ran earlier)" if args.report_only else ""),
        f"- machine: {m['cpu']}, {m['cores']} logical cores, {m['os']}; torch threads "
        f"{torch.get_num_threads()}",
        f"- versions: medspt {medspt.__version__} ({git_revision()}), torch {torch.__version__}, "
        f"optuna {optuna.__version__}, python {sys.version.split()[0]}",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(f"written to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    raise SystemExit(main())
