"""GPD-2, whole walks: what full and hierarchical attention cost on them, and what a
model trained on whole recordings scores per subject.

``cost`` (the default): per configuration (attention ``full`` / ``hierarchical``; GPD-2
at 20 Hz and at 100 Hz, i.e. whole walks padded to the longest, 5,273 / 26,366 steps;
``--depth`` 2, ``--d-model`` 64, 4 heads and ``--patch-len`` 8, so 660 / 3,296 tokens;
the estimator's other defaults), in a fresh process each:

* the training cases of fold ``--fold`` (0) are split into fit and validation subjects
  as the estimator splits them (``medspt.core.splits.validation_split``, 0.2, seed 0),
  and the batch size is the one ``batch_size="auto"`` gives for the fit cases;
* one warm-up fit of one step per stage (Numba compilation, allocator), then one timed
  ``SPTClassifier.fit`` with ``min_steps=0, val_size=0`` and ``--repeats`` (3) epochs
  per stage of ``--steps`` (4) batches of fit cases (``--epoch``: all of them, real
  epochs), once with SPT (masked pretraining, whole-token masks, then fine-tuning) and
  once from scratch (fine-tuning only). Seconds per optimizer step per stage are the
  fastest timed epoch's, from the training loop's own history (the least disturbed by
  other work; the share of CPU other processes took is recorded); a configuration whose
  warm-up step takes over ``--slow-step-s`` (10 s) is timed on 2 epochs of 2 steps. One
  validation pass is timed with ``predict_proba`` on the validation cases;
* an epoch over the training fold = steps per epoch × seconds per step + one validation
  pass; a default fit (``min_steps=600``, 10 / 15 epochs at least) is estimated from it
  as an upper bound (early stopping can end a stage sooner);
* peak memory: the process's resident-set high-water mark (Linux ``VmHWM``, reset with
  ``clear_refs`` after the data are loaded and the warm-up ran) over the timed fit and
  the validation pass; what it grew by over the resident memory before them is the
  training's own share (tracemalloc does not see torch's allocations).

``accuracy``: ``--folds`` × ``--seeds`` of SPT and scratch on GPD-2 (``--rate`` 20)
with hierarchical attention (``--configs``; ``spt-full``, ``scratch-full`` where time
allows), whole-token masks and the estimator's default recipe otherwise (patch length
``--patch-len``), each fit through ``medspt.api.fit_fold`` on the protocol's folds. A
row per fit and the out-of-fold predictions go to ``results/gpd2_accuracy[_TAG].csv``
and ``..._predictions.csv`` as they finish (an interrupted run resumes). The summary:
mean ± std per configuration over folds (seeds averaged within folds first), SPT
against scratch paired over subjects (``medspt.evaluation.statistics.compare_subjects``:
sign-flip test,
bootstrap interval) and over folds, and GPD-1's windowed models on the same folds with
their windows aggregated per subject (mean PD probability; from the stored out-of-fold
predictions of ``default_model.py`` and the MiniRocket baseline, or fitted here with
``--fit-gpd1``). ``--minirocket`` adds aeon's MiniRocket on the whole walks
(:mod:`medspt.baselines`: standardized with training-fold statistics, each walk held at
its last value over its padding) in this interpreter; stored runs before it used tsai's
(``tsai-minirocket``, padding set to 0).

    python benchmarks/gpd2.py cost                        # results/gpd2_cost.{md,csv}
    python benchmarks/gpd2.py cost --rates 20 --steps 2 --no-write
    python benchmarks/gpd2.py cost --attn-dropout 0 --tag attn-dropout0
    python benchmarks/gpd2.py accuracy --folds 0 --seeds 0 --epochs 2 --pretrain-epochs 2 \\
        --min-steps 0 --tag short                         # a short end-to-end run
    python benchmarks/gpd2.py accuracy                    # 5 folds × 3 seeds
    python benchmarks/gpd2.py report                      # tables from the stored rows
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from _common import (
    RESULTS,
    current_rss_mb,
    git_revision,
    high_water_rss_mb,
    machine,
    peak_rss_mb,
    reset_peak_rss,
    without_paths,
)

from medspt.estimator.metrics import read_predictions

MARK = "@@GPD2-JSON@@"
CONFIGS = {
    "spt-hierarchical": dict(attention="hierarchical"),
    "scratch-hierarchical": dict(attention="hierarchical", pretrain=False),
    "spt-full": dict(attention="full"),
    "scratch-full": dict(attention="full", pretrain=False),
}
GPD1_CONFIGS = {"gpd1-spt": {}, "gpd1-scratch": dict(pretrain=False)}
METRICS = ("balanced_accuracy", "accuracy", "roc_auc")
DEFAULT_EPOCHS = {"pretrain": 10, "finetune": 15}  # SPTClassifier's, with min_steps 600
MIN_STEPS = 600


def _versions() -> str:
    import numba
    import torch

    import medspt

    return (
        f"medspt {medspt.__version__} ({git_revision()}), torch {torch.__version__}, "
        f"numba {numba.__version__}, numpy {np.__version__}, python {sys.version.split()[0]}"
    )


def _run_lines(args, wall: float) -> list[str]:
    m = machine()
    load = os.getloadavg()
    return [
        "## Run",
        "",
        f"- command: `python benchmarks/gpd2.py {without_paths(' '.join(args.argv))}`",
        f"- date: {dt.datetime.now().strftime('%Y-%m-%d %H:%M')}, wall time {wall / 60:.1f} min",
        f"- machine: {m['cpu']}, {m['cores']} logical cores, {m['os']}; torch threads "
        f"{args.threads}; load average (1/5/15 min) at the end {load[0]:.2f} / "
        f"{load[1]:.2f} / {load[2]:.2f}",
        f"- versions: {_versions()}",
        "",
    ]


# --------------------------------------------------------------------------- cost


def _cpu_seconds() -> tuple[float, float] | None:
    """Busy CPU seconds of the whole machine and of this process so far (None off Linux):
    their difference over a stretch is what other processes took."""
    try:
        vals = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    except (OSError, ValueError):
        return None
    t = os.times()
    return (sum(vals) - vals[3] - vals[4]) / os.sysconf("SC_CLK_TCK"), t.user + t.system


def _per_step(history: list[dict]) -> tuple[float, float]:
    """Fastest and median seconds per optimizer step over a stage's timed epochs (the
    fastest is the one least disturbed by other work on the machine)."""
    per = [r["seconds"] / r["steps"] for r in history if r.get("steps")]
    return (min(per), float(np.median(per))) if per else (float("nan"), float("nan"))


def _cost_params(spec: dict, batch: int, epochs: int) -> dict:
    params = dict(
        depth=spec["depth"],
        d_model=spec["d_model"],
        n_heads=4,
        patch_len=spec["patch_len"],
        attention=spec["attention"],
        pretrain=spec["recipe"] == "spt",
        pretrain_epochs=epochs,
        epochs=epochs,
        min_steps=0,
        val_size=0.0,
        batch_size=batch,
        patience=None,
        random_state=0,
    )
    if spec["attn_dropout"] is not None:
        params["attn_dropout"] = spec["attn_dropout"]
    return params


def _cost_cell(spec: dict) -> dict:
    """One configuration in this (fresh) process; returns a JSON-able dict."""
    import torch

    from medspt import SPTClassifier
    from medspt.core.splits import validation_split
    from medspt.datasets import protocol
    from medspt.estimator.auto import batch_size_for

    torch.set_num_threads(spec["threads"])
    p = protocol(f"GPD-2@{spec['rate']:g}", spec["root"])
    ws = p.windows
    tr, _ = p.folds[spec["fold"]]
    labels = ws.classes[ws.y]
    fit, val = validation_split(labels[tr], ws.groups[tr], 0.2, 0)
    fit, val = tr[fit], tr[val]
    batch = batch_size_for(len(fit))
    per_epoch = math.ceil(len(fit) / batch)
    order = np.random.default_rng(0).permutation(fit)
    # warm-up, one step per stage: Numba's index build compiles, the allocator grows
    warm = SPTClassifier(**_cost_params(spec, batch, 1)).fit(
        ws.X[order[:batch]], labels[order[:batch]]
    )
    steps, repeats = spec["steps"] or per_epoch, spec["repeats"]
    if _per_step(warm.history_["finetune"])[0] > spec["slow_step_s"]:
        steps, repeats = min(steps, 2), min(repeats, 2)  # slow: a few steps only
    steps = min(steps, per_epoch)
    chosen = order[: steps * batch]
    rss_before = current_rss_mb()
    reset_peak_rss()
    c0, t0 = _cpu_seconds(), time.perf_counter()
    clf = SPTClassifier(**_cost_params(spec, batch, repeats)).fit(ws.X[chosen], labels[chosen])
    t1 = time.perf_counter()
    clf.predict_proba(ws.X[val])
    val_s = time.perf_counter() - t1
    peak, wall, c1 = high_water_rss_mb(), time.perf_counter() - t0, _cpu_seconds()
    other = None
    if c0 is not None and c1 is not None:
        other = max(0.0, (c1[0] - c0[0]) - (c1[1] - c0[1])) / (wall * (os.cpu_count() or 1))
    out = {
        "rate": spec["rate"],
        "attention": spec["attention"],
        "recipe": spec["recipe"],
        "T": int(ws.X.shape[2]),
        "tokens": math.ceil(ws.X.shape[2] / spec["patch_len"]),
        "real_tokens_median": int(np.median(np.ceil(ws.meta["length"] / spec["patch_len"]))),
        "n_fit": len(fit),
        "n_val": len(val),
        "batch": batch,
        "steps_per_epoch": per_epoch,
        "steps_timed": steps,
        "repeats": repeats,
        "val_pass_s": val_s,
        "rss_before_mib": rss_before,
        "peak_rss_mib": peak,
        "peak_growth_mib": peak - rss_before,
        "process_peak_mib": peak_rss_mb(),
        "other_cpu": other,
        "threads": spec["threads"],
    }
    for stage in ("pretrain", "finetune"):
        out[f"{stage}_s_per_step"], out[f"{stage}_median_s_per_step"] = _per_step(
            clf.history_[stage]
        )
    return out


def _run_cost_cell(spec: dict) -> dict:
    """:func:`_cost_cell` in a fresh interpreter, so memory readings do not mix."""
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(RESULTS.parents[1]), env.get("PYTHONPATH")])
    )
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--cell", json.dumps(spec)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(MARK)]
    keys = {k: spec[k] for k in ("rate", "attention", "recipe")}
    if proc.returncode != 0 or not lines:
        err = (proc.stderr.strip().splitlines() or [f"killed (status {proc.returncode})"])[-1]
        return {**keys, "skipped": f"failed: {err[:120]}"}
    return {**json.loads(lines[-1][len(MARK) :]), "cell_wall_s": time.perf_counter() - t0}


def _estimates(row: dict) -> dict:
    """Epoch seconds per stage and the default recipe's fit time (an upper bound)."""
    per_epoch, val = row["steps_per_epoch"], row["val_pass_s"]
    out = {}
    for stage in ("pretrain", "finetune"):
        s = row.get(f"{stage}_s_per_step", float("nan"))
        out[f"{stage}_epoch_s"] = per_epoch * s + val if np.isfinite(s) else float("nan")
    epochs = {k: max(v, math.ceil(MIN_STEPS / per_epoch)) for k, v in DEFAULT_EPOCHS.items()}
    fit = epochs["finetune"] * out["finetune_epoch_s"]
    if row["recipe"] == "spt":
        fit += epochs["pretrain"] * out["pretrain_epoch_s"]
    out["default_fit_s"] = fit
    out["default_epochs"] = epochs["pretrain"] if row["recipe"] == "spt" else 0
    out["default_epochs_ft"] = epochs["finetune"]
    return out


def run_cost(args) -> pd.DataFrame:
    rows = []
    for rate in args.rates:
        for attention in args.attentions:
            for recipe in ("spt", "scratch"):
                spec = dict(
                    rate=rate,
                    attention=attention,
                    recipe=recipe,
                    root=args.root,
                    fold=args.fold,
                    steps=None if args.epoch else args.steps,
                    repeats=args.repeats,
                    slow_step_s=args.slow_step_s,
                    depth=args.depth,
                    d_model=args.d_model,
                    patch_len=args.patch_len,
                    attn_dropout=args.attn_dropout,
                    threads=args.threads,
                )
                print(f"  {rate:g} Hz {attention:<12} {recipe:<7} …", file=sys.stderr, flush=True)
                row = _run_cost_cell(spec)
                if "skipped" not in row:
                    row.update(_estimates(row))
                    msg = (
                        f"pretrain {row['pretrain_s_per_step']:.2f} s/step, finetune "
                        f"{row['finetune_s_per_step']:.2f} s/step, peak +"
                        f"{row['peak_growth_mib']:,.0f} MiB"
                    )
                else:
                    msg = row["skipped"]
                print(f"    {msg}", file=sys.stderr, flush=True)
                rows.append(row)
    return pd.DataFrame(rows)


def _s(x: float) -> str:
    if not np.isfinite(x):
        return "–"
    if x >= 600:
        return f"{x / 60:,.0f} min"
    return f"{x:,.1f} s" if x >= 1 else f"{x * 1000:,.0f} ms"


def render_cost(df: pd.DataFrame, args, wall: float) -> str:
    drop = "estimator default (= dropout 0.1)" if args.attn_dropout is None else args.attn_dropout
    per = "whole epochs" if args.epoch else f"epochs of {args.steps} optimizer steps"
    lines = [
        "# GPD-2 whole walks: full vs hierarchical attention, time and memory per epoch",
        "",
        f"GPD-2 (one case per walk, padded with NaN to the longest walk), training cases of "
        f"fold {args.fold}, split into fit and validation subjects as the estimator splits "
        f"them; `SPTClassifier(depth={args.depth}, d_model={args.d_model}, n_heads=4, "
        f"patch_len={args.patch_len})`, attention dropout {drop}, whole-token masks, other "
        f"settings the estimator's defaults; batch size as `batch_size='auto'` gives for "
        f"the fit cases. After a warm-up fit, each stage runs {args.repeats} timed {per} "
        f"(*steps × repeats*; a configuration whose warm-up step took over "
        f"{args.slow_step_s:g} s: 2 × 2), in a fresh process per row; seconds per step are "
        "the fastest epoch's, from the training loop's own history (the fastest is the "
        "least disturbed by other work on the machine; *other CPU* is the share of the "
        "machine's CPU other processes used meanwhile). Epoch = steps per epoch × seconds "
        "per step + one validation pass (`predict_proba` on the validation cases). Default "
        "fit = the default recipe's epochs (at least 600 optimizer steps per stage: 10 "
        "pretraining and 15 fine-tuning epochs, raised to reach 600 steps) without early "
        "stopping: an upper bound. Peak memory: resident-set high-water mark of the "
        "process during the timed fit and the validation pass (Linux `VmHWM` after "
        "`clear_refs`), and its growth over the resident memory before them (data already "
        "loaded).",
        "",
        "| rate | tokens (padded / median real) | attention | recipe | batch × steps/epoch "
        "| timed (steps × repeats) | pretrain s/step | fine-tune s/step | validation pass "
        "| pretrain epoch | fine-tune epoch | default fit (upper bound) | peak RSS "
        "| peak growth | other CPU |",
        "|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in df.to_dict("records"):
        if isinstance(r.get("skipped"), str):
            lines.append(
                f"| {r['rate']:g} Hz | | {r['attention']} | {r['recipe']} | "
                f"{r['skipped']} |" + " |" * 10
            )
            continue
        other = r.get("other_cpu")
        other = "–" if other is None or not np.isfinite(other) else f"{other:.0%}"
        lines.append(
            f"| {r['rate']:g} Hz | {r['tokens']:,} / {r['real_tokens_median']:,} "
            f"| {r['attention']} | {r['recipe']} | {r['batch']} × {r['steps_per_epoch']} "
            f"| {r['steps_timed']} × {r['repeats']} "
            f"| {_s(r['pretrain_s_per_step'])} | {_s(r['finetune_s_per_step'])} "
            f"| {_s(r['val_pass_s'])} | {_s(r['pretrain_epoch_s'])} "
            f"| {_s(r['finetune_epoch_s'])} | {_s(r['default_fit_s'])} "
            f"| {r['peak_rss_mib']:,.0f} MiB | {r['peak_growth_mib']:,.0f} MiB | {other} |"
        )
    lines += ["", *_speedups(df), "", *_run_lines(args, wall)]
    return "\n".join(lines)


def _speedups(df: pd.DataFrame) -> list[str]:
    if "pretrain_s_per_step" not in df.columns:
        return []
    out = []
    ok = df[df["pretrain_s_per_step"].notna() | df["finetune_s_per_step"].notna()]
    for (rate, recipe), g in ok.groupby(["rate", "recipe"], sort=False):
        by = g.set_index("attention")
        if not {"full", "hierarchical"} <= set(by.index):
            continue
        f, h = by.loc["full"], by.loc["hierarchical"]
        parts = []
        for stage in ("pretrain", "finetune"):
            a, b = f[f"{stage}_s_per_step"], h[f"{stage}_s_per_step"]
            if np.isfinite(a) and np.isfinite(b) and b > 0:
                parts.append(f"{stage} step {a / b:.1f}× faster")
        parts.append(f"peak growth {h['peak_growth_mib']:,.0f} vs {f['peak_growth_mib']:,.0f} MiB")
        out.append(f"- {rate:g} Hz, {recipe}: " + ", ".join(parts))
    return ["Hierarchical against full attention, same rate and recipe:", "", *out] if out else []


# --------------------------------------------------------------------------- accuracy


def _paths(args) -> tuple[Path, Path, Path]:
    stem = "gpd2_accuracy" + (f"_{args.tag}" if args.tag else "")
    return (
        args.out_dir / f"{stem}.csv",
        args.out_dir / f"{stem}_predictions.csv",
        args.out_dir / f"{stem}.md",
    )


def _recipe(args) -> dict:
    """Settings every fit shares beyond the estimator's defaults (only those given)."""
    base: dict = {"mask_unit": "token", "patch_len": args.patch_len}
    for key in ("epochs", "pretrain_epochs", "min_steps", "attn_dropout"):
        if getattr(args, key) is not None:
            base[key] = getattr(args, key)
    return base


def _done(csv: Path) -> set:
    if not csv.is_file():
        return set()
    df = pd.read_csv(csv)
    return set(zip(df["config"], df["protocol"], df["fold"], df["seed"], df["settings"]))


def _append(path: Path, frame: pd.DataFrame) -> None:
    """Append rows under the file's header; a row with new columns rewrites the file with
    them (MiniRocket's rows and medspt's have different extra columns)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.is_file():
        frame.to_csv(path, index=False)
        return
    header = pd.read_csv(path, nrows=0).columns.tolist()
    if set(frame.columns) <= set(header):
        frame.reindex(columns=header).to_csv(path, mode="a", header=False, index=False)
    else:
        pd.concat([pd.read_csv(path), frame], ignore_index=True).to_csv(path, index=False)


def _fit_all(p, configs: dict, args, csv: Path, pred: Path) -> None:
    """Fit every (fold, seed, config) not yet stored; store each as it finishes."""
    from medspt.api import fit_fold, oof_frame

    shared = _recipe(args)
    if p.name == "GPD-1":  # GPD-1's 10-s windows: the estimator's own patch length
        shared.pop("patch_len")
    settings = json.dumps(shared, sort_keys=True)
    done = _done(csv)
    for k in args.folds:
        tr, te = p.folds[k]
        for seed in args.seeds:
            for name, extra in configs.items():
                if (name, p.name, k, seed, settings) in done:
                    continue
                params = {**shared, **extra, "random_state": seed}
                print(f"  {p.name} fold {k} seed {seed} {name} …", file=sys.stderr, flush=True)
                row, clf, proba = fit_fold(p.windows, tr, te, params)
                print(
                    f"    balanced accuracy {row['balanced_accuracy']:.3f}, "
                    f"{row['wall_time_s']:.0f} s, {row['optimizer_steps']} steps",
                    file=sys.stderr,
                    flush=True,
                )
                keys = dict(config=name, depth=clf.depth, seed=seed)
                row = {**keys, "protocol": p.name, "fold": k, **row, "settings": settings}
                row["patch_len"], row["n_steps"] = clf.patch_len_, clf.n_steps_
                row["batch_size"] = clf.batch_size_
                _append(csv, pd.DataFrame([row]))
                frame = oof_frame(p.windows, te, proba, **keys, fold=k)
                _append(pred, frame.assign(protocol=p.name).round(5))


def _minirocket(p, args, csv: Path, pred: Path) -> str | None:
    """aeon's MiniRocket (:mod:`medspt.baselines`) on the whole walks, in this
    interpreter; returns nothing to report (kept for the caller's notes)."""
    import baselines as bl

    from medspt.api import oof_frame

    s = bl.Settings(threads=args.threads)
    ws = p.windows
    labels = ws.classes[ws.y]
    plans = [
        bl.plan_fold(labels, ws.groups, *p.folds[k], k, seed, s.val_size)
        for k in args.folds
        for seed in args.seeds
    ]
    results = {}

    def emit(i, model, proba, info):
        results[(i, model)] = (proba, info)

    bl.run_minirocket_jobs(ws.X, ws.y.astype(np.int64), len(ws.classes), plans, emit)
    settings = json.dumps({"model": "minirocket", "padding": "last value"}, sort_keys=True)
    for i, plan in enumerate(plans):
        proba, info = results[(i, "minirocket")]
        row = bl.make_row("minirocket", s, plan, ws.y, ws.groups, proba, info, p.name)
        row["settings"] = settings
        _append(csv, pd.DataFrame([row]))
        keys = dict(config="minirocket", depth=np.nan, seed=plan.seed)
        _append(
            pred, oof_frame(ws, plan.test, proba, **keys, fold=plan.fold).assign(protocol=p.name)
        )
    return None


def run_accuracy(args) -> list[str]:
    """Fit what is asked for; returns notes for the report."""
    import torch

    from medspt.datasets import protocol

    torch.set_num_threads(args.threads)
    csv, pred, _ = _paths(args)
    name = "GPD-2" if args.rate == 20 else f"GPD-2@{args.rate:g}"
    p = protocol(name, args.root)
    print(f"{p!r}", file=sys.stderr)
    notes = []
    configs = {c: CONFIGS[c] for c in args.configs}
    if configs:
        _fit_all(p, configs, args, csv, pred)
    if args.minirocket:
        reason = _minirocket(p, args, csv, pred)
        if reason:
            print(reason, file=sys.stderr)
            notes.append(reason)
    if args.fit_gpd1:
        g1 = protocol("GPD-1", args.root)
        _fit_all(g1, GPD1_CONFIGS, args, csv, pred)
    return notes


# --------------------------------------------------------------------------- report


def _gpd1_sources(args) -> list[Path]:
    """GPD-1 out-of-fold window predictions to aggregate per subject: those given with
    ``--gpd1-predictions``, else the stored ones of ``default_model.py`` (default SPT,
    scratch, scratch-long; seeds 0-2) and of the MiniRocket baseline, where present."""
    if args.gpd1_predictions is not None:
        return [Path(p) for p in args.gpd1_predictions]
    # the GPD-2 runs used the patch default: compare with its GPD-1 runs (archived)
    stored = sorted(
        (RESULTS / "default_model_P" / "GPD-1").glob("default_seed*_predictions.csv.gz")
    )
    minirocket = RESULTS / "baselines_GPD-1_minirocket-oof_predictions.csv.gz"
    return stored + ([minirocket] if minirocket.is_file() else [])


def _shown(path: Path) -> str:
    root, path = RESULTS.parents[1].resolve(), path.resolve()
    return str(path.relative_to(root)) if path.is_relative_to(root) else path.name


def per_subject(windows: pd.DataFrame) -> pd.DataFrame:
    """Window predictions aggregated per (config, seed, fold, subject): mean probability
    of each class over the subject's windows, the class with the highest mean predicted
    (for two classes: mean PD probability above 0.5)."""
    cols = [c for c in windows.columns if str(c).startswith("proba_")]
    keys = ["config", "depth", "seed", "fold", "subject"]
    g = windows.groupby(keys, dropna=False, sort=False)
    out = g[cols].mean()
    out["label_code"] = g["label_code"].first()
    out = out.reset_index()
    out["predicted_code"] = out[cols].to_numpy().argmax(1)
    out["window"] = np.arange(len(out))
    return out


def _gpd1_subjects(
    args, gpd2_folds: dict[int, set], own: pd.DataFrame
) -> tuple[pd.DataFrame, list[str]]:
    """GPD-1 windowed models' predictions aggregated per subject, on the folds of the
    GPD-2 run, with notes (sources read, folds that do not match)."""
    frames, notes = [], []
    for path in _gpd1_sources(args):
        frames.append(read_predictions(path))
        notes.append(f"GPD-1 out-of-fold predictions read from `{_shown(path)}`")
    if len(own):
        frames.append(own.drop(columns=["protocol"]))
    if not frames:
        return pd.DataFrame(), notes + ["no GPD-1 out-of-fold predictions found (use --fit-gpd1)"]
    subj = per_subject(pd.concat(frames, ignore_index=True))
    subj = subj[subj["fold"].isin(gpd2_folds)]
    for (config, fold), g in subj.groupby(["config", "fold"]):
        if set(g["subject"]) != gpd2_folds[fold]:
            notes.append(f"{config}: fold {fold}'s subjects differ from GPD-2's; dropped")
            subj = subj[~((subj["config"] == config) & (subj["fold"] == fold))]
    return subj, notes


def _fold_scores(pred: pd.DataFrame) -> pd.DataFrame:
    """Per (config, seed, fold): balanced accuracy, accuracy and ROC AUC over the fold's
    subjects (each row of ``pred`` one subject)."""
    from sklearn.metrics import accuracy_score, balanced_accuracy_score, roc_auc_score

    rows = []
    for (config, seed, fold), g in pred.groupby(["config", "seed", "fold"], sort=False):
        y, yhat = g["label_code"].to_numpy(), g["predicted_code"].to_numpy()
        auc = roc_auc_score(y, g["proba_PD"]) if len(np.unique(y)) == 2 else np.nan
        rows.append(
            dict(
                config=config,
                seed=seed,
                fold=fold,
                balanced_accuracy=balanced_accuracy_score(y, yhat),
                accuracy=accuracy_score(y, yhat),
                roc_auc=auc,
            )
        )
    return pd.DataFrame(rows)


def _pm(x: pd.Series) -> str:
    x = x.dropna()
    if not len(x):
        return "–"
    return f"{x.mean():.3f}" + (f" ± {x.std(ddof=1):.3f}" if len(x) > 1 else "")


def _summary_table(
    scores: pd.DataFrame, pred: pd.DataFrame, rows: pd.DataFrame | None
) -> list[str]:
    """Mean ± std over folds (seeds averaged within folds first), pooled metric."""
    from sklearn.metrics import balanced_accuracy_score

    lines = [
        "| configuration | folds × seeds | balanced accuracy | accuracy | ROC AUC "
        "| pooled balanced accuracy | time per fit | optimizer steps |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for config, g in scores.groupby("config", sort=False):
        folds = g.groupby("fold")[list(METRICS)].mean()
        pooled = [
            balanced_accuracy_score(s["label_code"], s["predicted_code"])
            for _, s in pred[pred["config"] == config].groupby("seed")
        ]
        fit = steps = "–"
        if rows is not None and config in set(rows["config"]):
            r = rows[rows["config"] == config]
            fit = _s(r["wall_time_s"].mean())
            if r["optimizer_steps"].notna().any():
                steps = f"{r['optimizer_steps'].mean():,.0f}"
        lines.append(
            f"| {config} | {g['fold'].nunique()} × {g['seed'].nunique()} "
            f"| {_pm(folds['balanced_accuracy'])} | {_pm(folds['accuracy'])} "
            f"| {_pm(folds['roc_auc'])} | {np.mean(pooled):.3f} | {fit} | {steps} |"
        )
    return lines


def _paired(pairs, scores: pd.DataFrame, pred: pd.DataFrame, metric: str) -> list[str]:
    """Paired comparisons over subjects (and folds), Holm over the table."""
    from medspt.evaluation.statistics import compare_folds, compare_subjects, holm

    out = []
    for a, b in pairs:
        pa, pb = pred[pred["config"] == a], pred[pred["config"] == b]
        both = set(pa["subject"]) & set(pb["subject"])
        if not both:
            continue
        pa, pb = pa[pa["subject"].isin(both)], pb[pb["subject"].isin(both)]
        subj = compare_subjects(pa, pb, metric)
        folds = set(pa["fold"]) & set(pb["fold"])
        sa, sb = (scores[(scores["config"] == c) & scores["fold"].isin(folds)] for c in (a, b))
        fold = compare_folds(sa, sb, metric)
        out.append((a, b, subj, fold))
    if not out:
        return []
    p_holm = holm([s["p_value"] for _, _, s, _ in out])
    lines = [
        f"| configuration | versus | {metric} (pooled) | versus | difference, subjects "
        "| 95 % CI (subjects) | p (subjects) | p (Holm) | difference, folds | p (folds) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for (a, b, s, f), ph in zip(out, p_holm):
        lines.append(
            f"| {a} | {b} | {s['metric_a']:.3f} | {s['metric_b']:.3f} | {s['diff']:+.3f} "
            f"| [{s['ci_low']:+.3f}, {s['ci_high']:+.3f}] | {_p(s['p_value'])} "
            f"(n={s['n_subjects']}) | {_p(ph)} | {f['diff']:+.3f} | {_p(f['p_value'])} "
            f"(n={f['n_folds']}) |"
        )
    return lines


def _gpd1_pairs(mine: list[str], theirs: list[str]) -> list[tuple[str, str]]:
    """Like against like: each GPD-2 SPT configuration against GPD-1's SPT models, each
    scratch one against GPD-1's scratch models, MiniRocket against MiniRocket."""

    def kind(config: str) -> str:
        base = config.split(": ")[-1].removeprefix("gpd1-")
        if base.startswith("spt"):
            return "spt"
        return "scratch" if base == "scratch" or base.startswith("scratch-") else base

    wanted = [b for b in theirs if not b.endswith("scratch-long")]
    return [(a, b) for a in mine for b in wanted if kind(a) == kind(b)]


def _gain_lines(p2: pd.DataFrame, g1: pd.DataFrame) -> list[str]:
    """SPT's gain over scratch on whole walks against its gain on GPD-1's windows
    (aggregated per subject), over the subjects both scored (``compare_gains``)."""
    from medspt.evaluation.statistics import compare_gains

    ref = [c for c in dict.fromkeys(g1["config"]) if c.split(": ")[-1].startswith("spt")]
    ref_scratch = "GPD-1 → subject: scratch"
    if not ref or ref_scratch not in set(g1["config"]):
        return []
    lines = [
        "| whole walks | windows | metric | gain, whole walks | gain, windows | difference "
        "| 95 % CI | p |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for spt in [c for c in dict.fromkeys(p2["config"]) if c.startswith("spt-")]:
        scratch = spt.replace("spt-", "scratch-", 1)
        if scratch not in set(p2["config"]):
            continue
        for r in ref:
            for metric in ("balanced_accuracy", "accuracy"):
                g = compare_gains(
                    p2[p2["config"] == spt],
                    p2[p2["config"] == scratch],
                    g1[g1["config"] == r],
                    g1[g1["config"] == ref_scratch],
                    metric,
                )
                lines.append(
                    f"| {spt} − {scratch} | {r.split(': ')[-1]} − scratch "
                    f"| {metric.replace('_', ' ')} | {g['gain']:+.3f} | {g['gain_ref']:+.3f} "
                    f"| {g['diff']:+.3f} | [{g['ci_low']:+.3f}, {g['ci_high']:+.3f}] "
                    f"| {_p(g['p_value'])} (n={g['n_subjects']}) |"
                )
    return lines if len(lines) > 2 else []


def _p(p: float) -> str:
    return "–" if not np.isfinite(p) else ("<0.001" if p < 0.001 else f"{p:.3f}")


def _fold_table(scores: pd.DataFrame) -> list[str]:
    """Balanced accuracy per fold (seeds averaged), configurations side by side."""
    wide = scores.groupby(["fold", "config"], sort=False)["balanced_accuracy"].mean().unstack()
    configs = list(dict.fromkeys(scores["config"]))
    wide = wide[configs]
    lines = [
        "| fold | " + " | ".join(configs) + " |",
        "|---:|" + "---:|" * len(configs),
    ]
    for fold, r in wide.sort_index().iterrows():
        cells = ["–" if not np.isfinite(v) else f"{v:.3f}" for v in r]
        lines.append(f"| {fold} | " + " | ".join(cells) + " |")
    return lines


def _timing_lines(rows: pd.DataFrame) -> list[str]:
    """Time per fit and the estimate of a 5-fold × 3-seed run, per configuration."""
    lines = []
    for (config, protocol), r in rows.groupby(["config", "protocol"], sort=False):
        t = r["wall_time_s"].mean()
        lines.append(
            f"- {config} ({protocol}): {len(r)} fit(s), {_s(t)} per fit on average "
            f"(range {_s(r['wall_time_s'].min())}–{_s(r['wall_time_s'].max())}); 5 folds × 3 "
            f"seeds at this rate ≈ {t * 15 / 3600:.1f} h"
        )
    return lines


def _settings_text(rows: pd.DataFrame) -> str:
    """The fits' shared settings, per configuration when they differ."""
    by = rows.groupby("settings", sort=False)["config"].unique()
    if len(by) == 1:
        return f"`{by.index[0]}`"
    return "; ".join(f"`{k}` ({', '.join(v)})" for k, v in by.items())


def render_accuracy(args, notes: list[str], wall: float) -> str:
    csv, pred_path, _ = _paths(args)
    if not csv.is_file():
        return "no accuracy rows yet\n"
    rows = pd.read_csv(csv)
    pred = read_predictions(pred_path)
    gpd2 = rows["protocol"].str.startswith("GPD-2")
    p2 = pred[pred["protocol"].str.startswith("GPD-2")]
    own_gpd1 = pred[pred["protocol"] == "GPD-1"]
    scores = _fold_scores(p2)
    folds = {k: set(g["subject"]) for k, g in p2.groupby("fold")}
    g1, g1_notes = _gpd1_subjects(args, folds, own_gpd1)
    g1 = g1.assign(config="GPD-1 → subject: " + g1["config"].astype(str)) if len(g1) else g1
    g1_scores = _fold_scores(g1) if len(g1) else pd.DataFrame()
    protocols = ", ".join(sorted(set(rows.loc[gpd2, "protocol"])))
    settings = _settings_text(rows[gpd2])
    lines = [
        "# GPD-2: whole walks, one prediction per subject",
        "",
        f"{protocols}: one case per gaitpdb walk (165 subjects), padded with NaN to the "
        "longest walk; the subjects of GPD-1's five folds, fold by fold. medspt fits "
        "through `medspt.api.fit_fold` with `SPTClassifier`'s defaults except: "
        + settings
        + " (plus each configuration's attention and, for scratch, `pretrain=False`). "
        "Accuracy and balanced accuracy are subject-level (one case per subject).",
        "",
        "## Per configuration",
        "",
        "Mean ± std over folds (seeds averaged within each fold first); pooled = the "
        "metric over all test subjects of the run's folds, mean over seeds.",
        "",
        *_summary_table(scores, p2, rows),
        "",
        "Balanced accuracy per fold (seeds averaged):",
        "",
        *_fold_table(pd.concat([scores, g1_scores], ignore_index=True)),
        "",
    ]
    spt = [c for c in dict.fromkeys(p2["config"]) if c.startswith("spt-")]
    pairs = [(c, c.replace("spt-", "scratch-", 1)) for c in spt]
    present = set(p2["config"])
    attention = [
        (c, c.replace("-full", "-hierarchical"))
        for c in dict.fromkeys(p2["config"])
        if c.endswith("-full") and c.replace("-full", "-hierarchical") in present
    ]
    for metric in ("balanced_accuracy", "accuracy"):
        table = _paired(pairs, scores, p2, metric)
        if table:
            lines += [
                f"## SPT against scratch ({metric.replace('_', ' ')})",
                "",
                "Paired over subjects: seeds averaged within each subject, sign-flip "
                "permutation test and 95 % bootstrap interval of the pooled difference "
                "(`medspt.evaluation.statistics.compare_subjects`); over folds: seeds averaged "
                "within "
                "folds, exact sign-flip test (`compare_folds`; 5 folds cannot give p "
                "below 0.0625).",
                "",
                *table,
                "",
            ]
    # aeon's MiniRocket (medspt.baselines) where it ran, else the stored tsai runs
    mr = "minirocket" if "minirocket" in present else "tsai-minirocket"
    rocket = [
        (c, mr) for c in dict.fromkeys(p2["config"]) if c not in ("minirocket", "tsai-minirocket")
    ]
    table = _paired(rocket if mr in present else [], scores, p2, "balanced_accuracy")
    if table:
        lines += [
            "## Against MiniRocket on the same whole walks (balanced accuracy)",
            "",
            "The same tests over the subjects both scored, each model's seeds averaged within "
            "each subject (MiniRocket may have fewer seeds).",
            "",
            *table,
            "",
        ]
    table = _paired(attention, scores, p2, "balanced_accuracy")
    if table:
        lines += [
            "## Full against hierarchical attention (balanced accuracy)",
            "",
            "The same tests, on the subjects and seeds both configurations ran; where the "
            "two ran with different settings (see above) the difference is not the "
            "attention's alone.",
            "",
            *table,
            "",
        ]
    if len(g1):
        mine = list(dict.fromkeys(p2["config"]))
        theirs = list(dict.fromkeys(g1["config"]))
        lines += [
            "## GPD-1's windowed models, aggregated per subject, on the same folds",
            "",
            "Each subject's 10-s windows (GPD-1) averaged into one PD probability "
            "(mean over the windows, PD above 0.5), so that both protocols predict one "
            "label per subject; only the folds of this GPD-2 run.",
            "",
            *_summary_table(g1_scores, g1, None),
            "",
            *_paired(
                _gpd1_pairs(mine, theirs),
                pd.concat([scores, g1_scores]),
                pd.concat([p2, g1], ignore_index=True),
                "balanced_accuracy",
            ),
            "",
            *[f"- {n}" for n in g1_notes],
            "",
        ]
        gains = _gain_lines(p2, g1)
        if gains:
            lines += [
                "## Does SPT help more on whole walks than on windows?",
                "",
                "SPT's gain over scratch on GPD-2 against its gain on GPD-1 (windows "
                "aggregated per subject), per subject: (SPT − scratch, whole walks) − "
                "(SPT − scratch, windows), seeds averaged within each subject and model, "
                "summed over the subjects all four scored; sign-flip test and 95 % subject "
                "bootstrap interval (`medspt.evaluation.statistics.compare_gains`).",
                "",
                *gains,
                "",
            ]
    lines += ["## Time", "", *_timing_lines(rows), ""]
    if notes:
        lines += ["## Notes", "", *[f"- {n}" for n in notes], ""]
    lines += _run_lines(args, wall)
    return "\n".join(lines)


# --------------------------------------------------------------------------- main


def parse_args(argv):
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("what", nargs="?", default="cost", choices=("cost", "accuracy", "report"))
    ap.add_argument(
        "--root", default=None, help="gaitpdb folder (default: $MEDSPT_DATA or the local copy)"
    )
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="torch threads")
    ap.add_argument("--patch-len", type=int, default=8, help="steps per token (default 8)")
    ap.add_argument(
        "--attn-dropout",
        type=float,
        default=None,
        help="attention-weight dropout (default: the estimator's, = dropout 0.1)",
    )
    ap.add_argument("--out-dir", type=Path, default=RESULTS)
    ap.add_argument("--no-write", action="store_true", help="print only")
    ap.add_argument("--tag", default=None, help="write gpd2_<cost|accuracy>_<tag>.*")
    c = ap.add_argument_group("cost")
    c.add_argument("--rates", type=float, nargs="+", default=[20.0, 100.0])
    c.add_argument(
        "--attentions",
        nargs="+",
        default=["full", "hierarchical"],
        choices=("full", "hierarchical"),
    )
    c.add_argument("--steps", type=int, default=4, help="optimizer steps per timed epoch")
    c.add_argument("--epoch", action="store_true", help="time whole epochs")
    c.add_argument(
        "--repeats", type=int, default=3, help="timed epochs per stage; the fastest counts"
    )
    c.add_argument(
        "--slow-step-s",
        type=float,
        default=10.0,
        help="a configuration whose warm-up step takes longer is timed on 2 epochs of 2 steps",
    )
    c.add_argument("--fold", type=int, default=0, help="the fold whose training cases are used")
    c.add_argument("--depth", type=int, default=2)
    c.add_argument("--d-model", type=int, default=64)
    a = ap.add_argument_group("accuracy")
    a.add_argument("--rate", type=float, default=20.0, help="GPD-2's rate in Hz (20 or 100)")
    a.add_argument("--folds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    a.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    a.add_argument(
        "--configs",
        nargs="*",
        default=["spt-hierarchical", "scratch-hierarchical"],
        choices=list(CONFIGS),
    )
    a.add_argument(
        "--epochs", type=int, default=None, help="fine-tuning epochs (default: the estimator's)"
    )
    a.add_argument(
        "--pretrain-epochs",
        type=int,
        default=None,
        help="pretraining epochs (default: the estimator's)",
    )
    a.add_argument(
        "--min-steps",
        type=int,
        default=None,
        help="optimizer steps per stage at least (default: the estimator's 600; "
        "a short run needs 0)",
    )
    a.add_argument(
        "--fit-gpd1",
        action="store_true",
        help="also fit GPD-1's windowed default SPT and scratch models on the same folds and seeds",
    )
    a.add_argument(
        "--gpd1-predictions",
        nargs="*",
        default=None,
        help="GPD-1 out-of-fold prediction files to aggregate per subject (default: the "
        "stored default_model.py and MiniRocket ones; the flag alone: none)",
    )
    a.add_argument(
        "--minirocket", action="store_true", help="add aeon's MiniRocket on the whole walks"
    )
    ap.add_argument("--cell", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.argv = list(argv)
    if args.rate <= 0 or 100 % args.rate:
        ap.error("--rate must split 100 Hz into whole blocks (100, 50, 25, 20, 10, ...)")
    return args


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.cell:
        print(MARK + json.dumps(_cost_cell(json.loads(args.cell))))
        return 0
    t0 = time.perf_counter()
    if args.what == "cost":
        df = run_cost(args)
        text = render_cost(df, args, time.perf_counter() - t0)
        print(text)
        if not args.no_write:
            args.out_dir.mkdir(parents=True, exist_ok=True)
            stem = "gpd2_cost" + (f"_{args.tag}" if args.tag else "")
            df.to_csv(args.out_dir / f"{stem}.csv", index=False)
            (args.out_dir / f"{stem}.md").write_text(text)
            print(f"written to {args.out_dir / stem}.md", file=sys.stderr)
        return 0
    if args.no_write:
        args.out_dir = Path(os.environ.get("TMPDIR", "/tmp")) / "medspt-gpd2"
    notes = run_accuracy(args) if args.what == "accuracy" else []
    text = render_accuracy(args, notes, time.perf_counter() - t0)
    print(text)
    if not args.no_write:
        _, _, md = _paths(args)
        md.write_text(text)
        print(f"written to {md}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
