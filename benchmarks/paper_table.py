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

The studies live in ``--storage``, by default one Optuna journal file per protocol,
``benchmarks/results/studies/paper_table_<protocol>.log``, which is committed: the grid
takes many hours on a small CPU, so any machine with the data can resume it where the last
run stopped (run one process per protocol; several may share a file). Cells run seed by
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
from _common import PAPER_RECIPE, RESULTS, git_revision, machine, study_storage, without_paths

from medspt.estimator.metrics import read_predictions

PROTOCOLS = ("GPD-1", "NE-1", "CAM-1")


def _available(name: str, root) -> str | None:
    """None when the protocol's data loads, else why not."""
    from medspt.datasets.protocols import protocol

    try:
        protocol(name, root=root)
    except Exception as e:  # missing folder or files: reported, not fatal
        return f"{type(e).__name__}: {without_paths(str(e))[:160]}"
    return None


def _params(args) -> dict:
    params = {
        "d_model": args.d_model,
        "n_heads": args.n_heads,
        "epochs": args.epochs,
        "pretrain_epochs": args.pretrain_epochs,
        "batch_size": args.batch_size,
        # the recipe these studies were built with, pinned: later estimator defaults
        # (benchmarks/select_defaults.py) must not change a resumed grid
        **PAPER_RECIPE,
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
    if not frames:
        return None
    # a later tagged run of the same network, fold and seed (e.g. one that also kept its
    # predictions) replaces the earlier row instead of counting twice
    rows = pd.concat(frames, ignore_index=True)
    keys = [k for k in ("config", "fold", "seed") if k in rows.columns]
    return rows.drop_duplicates(keys, keep="last").reset_index(drop=True)


def _progress(study, res: pd.DataFrame) -> str:
    """How much of the grid is complete, and what is missing."""
    from medspt.study.grid import study_cells

    cells = study_cells(study.user_attrs["medspt"])
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


def _baseline_predictions(name: str) -> pd.DataFrame | None:
    """Out-of-fold predictions of the baseline runs that kept them."""
    files = sorted(RESULTS.glob(f"baselines_{name}*_predictions.csv.gz"))
    if not files:
        return None
    pred = pd.concat([read_predictions(f) for f in files], ignore_index=True)
    return pred.drop_duplicates(["config", "seed", "fold", "window"], keep="last")


def _with_baselines(res, baselines, predictions):
    """A study's (or a selection's) results with the baseline rows and predictions."""
    from medspt.api import Results

    out = Results(pd.concat([pd.DataFrame(res), baselines], ignore_index=True))
    preds = [p for p in (res.predictions, predictions) if p is not None]
    out.predictions = pd.concat(preds, ignore_index=True) if preds else None
    return out


def _combined(studies: list, results: dict):
    """The results of several studies as one, configurations named ``<variant>: <config>``
    so that a nested choice can pick among all of them (``results``: each study's
    :func:`medspt.study.results_frame` by name)."""
    from medspt.api import Results

    frames, preds = [], []
    for study in studies:
        res = results[study.study_name]
        if res.empty:
            continue
        label = _variant(study.user_attrs["medspt"].get("params", {}))
        frames.append(pd.DataFrame(res).assign(config=label + ": " + res["config"]))
        if res.predictions is not None:
            preds.append(res.predictions.assign(config=label + ": " + res.predictions["config"]))
    out = Results(pd.concat(frames, ignore_index=True))
    out.predictions = pd.concat(preds, ignore_index=True) if preds else None
    return out


def _subjects_section(name: str, study, res, metric: str) -> list[str]:
    """A study that kept out-of-fold predictions (its results ``res``): the capacity table
    tested over subjects and its declared comparisons (against scratch and the
    compute-matched scratch-long)."""
    from medspt.api import comparison_table, markdown_comparisons, markdown_table
    from medspt.study import capacity_table

    attrs = study.user_attrs["medspt"]
    return [
        f"### {name}, {_variant(attrs.get('params', {}))}: tested over subjects",
        "",
        f"Study `{study.study_name}`: depths {attrs['grid']['depths']}, model settings "
        f"{attrs.get('params', {})}; {len(res)} fits, "
        f"{res['wall_time_s'].sum() / 60:,.0f} min of training. {_progress(study, res)}",
        "",
        markdown_table(capacity_table(res, metric), metric).rstrip(),
        "",
        markdown_comparisons(comparison_table(res, metric=metric), metric).rstrip(),
        "",
    ]


def _nested_section(name: str, candidates, baselines, base_pred, metric: str) -> list[str]:
    """The configuration chosen in each outer fold by its validation subjects, scored once
    and compared with each baseline on the same folds (and subjects, where both kept
    predictions)."""
    from medspt.api import comparison_table, markdown_comparisons, nested_best

    nested = nested_best(candidates)
    chosen = nested.groupby("fold")["chosen"].first()
    lines = [
        f"Candidates: {sorted(set(candidates['config']))}. In each outer fold the candidate "
        "with the highest validation balanced accuracy (kept epoch, validation subjects "
        "held out of that fold's training part, mean over seeds) is chosen; its test "
        "score is read once.",
        "",
        "| fold | chosen |",
        "|---:|---|",
        *[f"| {k} | {c} |" for k, c in chosen.items()],
        "",
    ]
    if baselines is None or not len(baselines):
        return [*lines, "No baseline runs on these folds.", ""]
    both = _with_baselines(nested, baselines, base_pred)
    nan = float("nan")
    pairs = [
        (("nested-best", nan), (c, nan)) for c in sorted(set(baselines["config"])) if "(" not in c
    ]
    table = comparison_table(both, pairs, metric)
    return [*lines, markdown_comparisons(table, metric).rstrip(), ""]


def _reanalysis_section(name: str, study, res, metric: str) -> list[str]:
    """An earlier grid without out-of-fold predictions (its results ``res``), re-tested
    with seeds averaged within folds (5 folds: p cannot go below 0.0625) and Holm's
    correction."""
    from medspt.api import markdown_table
    from medspt.study import capacity_table

    attrs = study.user_attrs["medspt"]
    old = _old_p_values(res, metric)
    table = capacity_table(res, metric)
    table["old_p"] = [old.get((d, c), float("nan")) for d, c in zip(table.depth, table.config)]
    extra = table.dropna(subset=["old_p"])
    lines = [
        f"### {name}, {_variant(attrs.get('params', {}))}: fold level (earlier grid)",
        "",
        f"Study `{study.study_name}`: depths {attrs['grid']['depths']}, model settings "
        f"{attrs.get('params', {})}; {len(res)} fits. It kept no per-window predictions, "
        "so its tests run over the 5 folds (seeds averaged within each fold).",
        "",
        markdown_table(table, metric).rstrip(),
        "",
    ]
    low = extra[extra["old_p"] < 0.05]
    if len(low):
        lines += [
            "Rows the earlier report called significant (Wilcoxon over 15 fold × seed "
            "pairs, which counted seeds as independent): "
            + "; ".join(
                f"depth {int(r.depth)} {r.config}: p {r.old_p:.3f} then, "
                f"{r.p_value:.3f} over folds now (Holm {r.p_holm:.2f})"
                for r in low.itertuples()
            )
            + ".",
            "",
        ]
    return lines


def _old_p_values(res, metric: str) -> dict:
    """The earlier report's p-values: Wilcoxon over (fold, seed) pairs."""
    from scipy.stats import wilcoxon

    out = {}
    for (d, c), g in res.groupby(["depth", "config"]):
        base = res[(res.depth == d) & (res.config == "scratch")].set_index(["fold", "seed"])
        if c == "scratch" or base.empty:
            continue
        diff = (g.set_index(["fold", "seed"])[metric] - base[metric]).dropna().to_numpy()
        out[(d, c)] = 1.0 if (diff == 0).all() else float(wilcoxon(diff).pvalue)
    return out


def _probe_lines(name: str) -> list[str]:
    path = RESULTS / "probes.csv"
    if not path.exists():
        return ["Confound probes: not run (`benchmarks/probes.py`).", ""]
    probes = pd.read_csv(path)
    probes = probes[probes["protocol"] == name] if "protocol" in probes else probes
    if probes.empty:
        return ["Confound probes: not run for this protocol.", ""]
    lines = [
        "Confound probes on the same folds (`benchmarks/results/probes.md`): models that see "
        "only the window's position in its recording, or only its per-channel means.",
        "",
        "| probe | balanced accuracy (pooled) | chance | far above chance |",
        "|---|---:|---:|---|",
    ]
    for r in probes.itertuples():
        lines.append(
            f"| {r.config} | {r.balanced_accuracy:.3f} | {r.chance:.3f} | "
            f"{'**yes**' if r.leak else 'no'} |"
        )
    from medspt.evaluation.probes import probe_warnings

    return [*lines, "", *[f"**Warning:** {w}" for w in probe_warnings(probes)], ""]


def _protocol_report(name: str, studies: list, metric: str) -> tuple[list[str], list[str]]:
    """The sections of one protocol and its summary lines."""
    from medspt.study import results_frame

    baselines = _read_baselines(name)
    base_pred = _baseline_predictions(name)
    results = {s.study_name: results_frame(s) for s in studies}  # read each study once
    fresh = [
        s for s in studies if s.study_name.endswith("-subjects") and len(results[s.study_name])
    ]
    earlier = [s for s in studies if not s.study_name.endswith("-subjects")]
    lines, summary = [f"## {name}", ""], []
    if fresh:
        candidates = _combined(fresh, results)
        lines += ["### Nested choice against the baselines", ""]
        lines += _nested_section(name, candidates, baselines, base_pred, metric)
        for study in fresh:
            lines += _subjects_section(name, study, results[study.study_name], metric)
        summary += _summary_lines(name, candidates, baselines, base_pred, metric)
    if earlier:
        lines += [
            "### Nested choice among the earlier grids (fold level)",
            "",
            "The same rule over every configuration of the earlier studies that held out "
            "validation subjects (their validation scores come from the stored learning "
            "curves); they kept no per-window predictions, so only fold-level tests.",
            "",
        ]
        lines += _nested_section(name, _combined(earlier, results), baselines, None, metric)
    for study in earlier:
        lines += _reanalysis_section(name, study, results[study.study_name], metric)
    if baselines is not None and len(baselines):
        lines += [
            f"### {name}: tsai baselines on the same folds",
            "",
            f"| baseline | {metric} (mean ± std over folds × seeds) | runs |",
            "|---|---:|---:|",
        ]
        for config, g in baselines.groupby("config", sort=False):
            lines.append(
                f"| {config} | {g[metric].mean():.3f} ± {g[metric].std(ddof=1):.3f} | {len(g)} |"
            )
        lines += [""]
    lines += _probe_lines(name)
    return lines, summary


def _summary_lines(name, candidates, baselines, base_pred, metric) -> list[str]:
    """One line per declared comparison of the protocol's subject-level studies."""
    from medspt.api import comparison_table, nested_best

    out = []
    spt = comparison_table(candidates, metric=metric)
    spt = spt[spt["config"].str.contains("spt-")]
    for r in spt.itertuples():
        out.append(_summary_row(name, f"{r.config} (depth {int(r.depth)})", r.versus, r))
    if baselines is not None and len(baselines):
        nan = float("nan")
        both = _with_baselines(nested_best(candidates), baselines, base_pred)
        mr = comparison_table(both, [(("nested-best", nan), ("tsai-minirocket", nan))], metric)
        out.append(_summary_row(name, "nested best", "tsai-minirocket", mr.iloc[0]))
    return out


def _summary_row(name, what, versus, r) -> str:
    from medspt.evaluation.markdown_tables import format_interval as _ci
    from medspt.evaluation.markdown_tables import format_p as _p
    from medspt.evaluation.markdown_tables import format_signed as _signed

    subj = r.n_subjects > 0
    return (
        f"| {name} | {what} | {versus} | "
        + (f"{r.pooled:.3f} vs {r.versus_pooled:.3f} | " if subj else "– | ")
        + (
            f"{_signed(r.subject_diff)} {_ci(r.subject_ci_low, r.subject_ci_high)} | "
            f"{_p(r.subject_p)} (n={r.n_subjects}) | "
            if subj
            else "– | – | "
        )
        + f"{_signed(r.fold_diff)} {_ci(r.fold_ci_low, r.fold_ci_high)}, p {_p(r.fold_p)} |"
    )


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
    ap.add_argument(
        "--storage",
        default=None,
        help="Optuna storage URL (default: the protocol's journal "
        "results/studies/paper_table_<protocol>.log)",
    )
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
    ap.add_argument(
        "--no-scratch-long",
        action="store_true",
        help="leave out scratch-long (label-only for SPT's whole budget of optimizer steps)",
    )
    ap.add_argument(
        "--tag", default="", help="suffix of the study names (paper-<protocol>...-<tag>)"
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
                storage=study_storage(name, args.storage),
                study_name=f"paper-{name}{_suffix(_params(args))}"
                + (f"-{args.tag}" if args.tag else ""),
                scratch_long=not args.no_scratch_long,
                metric=args.metric,
                params=_params(args),
            )
        sec, summ = _protocol_report(
            name, _studies(name, study_storage(name, args.storage)), args.metric
        )
        sections += sec
        summary += summ
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
        "Declared comparisons only: nothing here is chosen on test folds. Seeds of one fold "
        "share its subjects, so they are averaged first; subject-level tests use the pooled "
        "out-of-fold balanced accuracy (each subject's additive share, two-sided sign-flip "
        "permutation test over subjects, 95 % subject bootstrap interval); fold-level "
        "columns use the 5 seed-averaged folds (t interval, exact sign-flip test: 5 folds "
        "cannot give p below 0.0625). *scratch-long* is label-only training for SPT's whole "
        "budget of optimizer steps; *nested best* is the configuration each outer fold "
        "chose by its own validation subjects. Holm-adjusted p-values are in each section's "
        "comparison table.",
        "",
        f"| protocol | model | versus | pooled {args.metric} | difference (subjects) "
        "[95 % CI] | p (subjects) | difference (folds) [95 % CI], p |",
        "|---|---|---|---:|---:|---:|---:|",
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
