"""The default model on the real protocols: what a user gets with no settings at all.

"The default" is ``medspt.evaluate(protocol.windows, cv=protocol.folds)`` with no model
settings: SPT with the estimator's defaults, its label-only ``scratch`` model and the
compute-matched ``scratch-long`` control, on the protocol's 5 subject-wise folds, seeds
0, 1, 2. The defaults were fixed beforehand by inner validation on training subjects and
development data (``benchmarks/select_defaults.py``, ``benchmarks/select_model.py``); this
script scores each default after the round that chose it. Those scores were read before
later rounds were declared (round 6 was designed after them), so the protocols' test
folds are development data now (``docs/concepts.md``, "How the defaults were chosen").

Beside it, on the same folds:

- tsai MiniRocket's out-of-fold predictions (``baselines_<protocol>_minirocket-oof``), the
  baseline to beat, compared subject-wise (paired, issue-8 statistics);
- an ablation: the default with one of its levers removed at a time. Today's default
  is round 5's (hash ``ABLATION_BASE``) with window statistics added, and nothing else
  changed (checked from the settings both runs recorded). So the window-statistics lever
  is round 5's runs against today's, every seed, and the other levers (tokenizer,
  positions, budget) are removed from round 5's default in its own seed-0 runs.
  ``--ablation`` runs the four levers on today's default instead (seed 0, about 4
  core-hours per protocol); the report prefers those runs where they are complete.
  Ablation rows are scored on the test folds, so they explain the default; they choose
  nothing. Whether SPT helps a deeper model is the capacity study's question
  (``paper_table.py --model default``).

Targets (issue 28): GPD-1 balanced accuracy >= 0.80 and subject accuracy >= 0.85; NE-1
balanced accuracy >= 0.65 (MiniRocket's level); neither below the previous default
(``default_model_P.md``: 0.766 / 0.542).

    MEDSPT_DATA=/path/to/data python benchmarks/default_model.py --protocol NE-1
    python benchmarks/default_model.py --report-only

Each (variant, seed) run is kept in ``benchmarks/results/default_model/`` (rows as CSV,
out-of-fold predictions as compressed CSV), each of its folds as soon as it is done, so an
interrupted run resumes at its next fold; ``default_model.md`` holds the tables. File
names end in a hash of the estimator's defaults and rows record them with the code
revision: a run under other defaults never counts as done, and nothing runs on
uncommitted changes under ``medspt/``.
Earlier defaults are archived: issue 15's (recipe R, with augmentation) in
``default_model_R/``, issue 16's patch default in ``default_model_P/`` (with their
``.md``); round 5's conv default (without window statistics) keeps its files here under
its hash, reported by ``--report-only --defaults 0d8dc206`` in
``default_model_0d8dc206.md``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
import warnings

import numpy as np
import pandas as pd
from _common import (
    RESULTS,
    git_revision,
    machine,
    probe_line,
    resolved_hash,
    resolved_params_json,
)

from medspt.estimator.auto import SMALL_SET
from medspt.estimator.metrics import read_predictions

OUT = RESULTS / "default_model"
MD = RESULTS / "default_model.md"
TARGETS = {  # issue 28
    "GPD-1": {"balanced_accuracy": 0.80, "subject_accuracy": 0.85},
    "NE-1": {"balanced_accuracy": 0.65},
}
# lever -> the settings that remove it from the default (rounds 4 and 6, select_model.md);
# the previous (patch) default's own runs are archived in default_model_P/
ABLATION: dict[str, dict] = {
    "patch tokens": {"embedding": "patch", "positional": "learned"},
    "learned positions": {"positional": "learned"},
    "600-step floor": {"min_steps": 600},
    "no window stats": {"window_stats": False},  # round 6's choice
}
SEEDS = (0, 1, 2)
# round 5's default: today's without window statistics. Its stored runs (this hash) give
# the ablation of window statistics (every seed) and of the other levers (its seed-0 runs)
ABLATION_BASE = "0d8dc206"
BASE_LEVER = "no window stats"


def _plan(ablation: bool = False) -> list[tuple[str, int]]:
    """(variant, seed) runs in order: the default with every seed (the numbers the targets
    are about), then, with ``ablation``, each lever removed from it with seed 0."""
    runs = [("default", s) for s in SEEDS]
    return runs + ([(name, 0) for name in ABLATION] if ablation else [])


def _default_masking() -> str:
    from medspt import SPTClassifier

    return SPTClassifier().masking


def _default_depth() -> int:
    from medspt import SPTClassifier

    return SPTClassifier().depth


def _at_depth(res, depth: float):
    """Rows (and predictions) at one depth, with the baselines (no depth)."""
    keep = res["depth"].isna() | (res["depth"] == depth)
    out = res[keep]
    pred = res.predictions
    out.predictions = pred[pred["depth"].isna() | (pred["depth"] == depth)]
    return out


def params_hash() -> str:
    """The key of today's default on the protocols: its settings as their folds resolve
    them. Every fold trains on thousands of windows, where ``n_estimators="auto"`` trains
    one member, the same fit as ``n_estimators=1`` (:func:`run_one` checks the sizes)."""
    return resolved_hash(SMALL_SET)


def _paths(protocol: str, variant: str, seed: int):
    stem = OUT / protocol / f"{variant.replace(' ', '-')}_seed{seed}_{params_hash()}"
    return stem.with_suffix(".csv"), stem.parent / (stem.name + "_predictions.csv.gz")


def run_one(p, variant: str, seed: int) -> None:
    """One (variant, seed) run over the protocol's folds; rows and predictions to files.

    Each fold is kept as soon as it is done (``<run>_fold<k>`` files), so an interrupted
    run resumes at its next fold; the run's files are written when every fold is done.
    MiniRocket is not fitted here (``baselines=()``): its stored runs are read instead.
    """
    rows_csv, pred_csv = _paths(p.name, variant, seed)
    if rows_csv.exists():
        return
    if min(len(train) for train, _ in p.folds) < SMALL_SET:
        raise SystemExit(
            f"{p.name}: a fold trains on fewer than {SMALL_SET} windows, where the default "
            "trains five members: its runs would not be keyed as one-member fits"
        )
    start = time.time()
    rows, preds = [], []
    for k in range(len(p.folds)):
        fold_rows, fold_pred = _fold_paths(rows_csv, k)
        if not fold_rows.exists():
            res = _evaluate_fold(p, variant, seed, k)
            fold_rows.parent.mkdir(parents=True, exist_ok=True)
            res.predictions.to_csv(fold_pred, index=False, float_format="%.4g")
            table = pd.DataFrame(res).assign(protocol=p.name, defaults=resolved_params_json())
            table.assign(revision=git_revision()).to_csv(fold_rows, index=False)
            print(f"{p.name} {variant} seed {seed} fold {k}: done", flush=True)
        rows.append(pd.read_csv(fold_rows))
        preds.append(read_predictions(fold_pred))
    pd.concat(preds, ignore_index=True).to_csv(pred_csv, index=False, float_format="%.4g")
    pd.concat(rows, ignore_index=True).to_csv(rows_csv, index=False)
    for k in range(len(p.folds)):
        for f in _fold_paths(rows_csv, k):
            f.unlink()
    print(f"{p.name} {variant} seed {seed}: {(time.time() - start) / 60:.1f} min", flush=True)


def _fold_paths(rows_csv, k: int):
    stem = rows_csv.with_suffix("").name + f"_fold{k}"
    return rows_csv.parent / f"{stem}.csv", rows_csv.parent / f"{stem}_predictions.csv.gz"


def _evaluate_fold(p, variant: str, seed: int, k: int):
    """The run's evaluate call on fold ``k`` alone, its rows and predictions numbered ``k``."""
    from medspt import evaluate

    kw = dict(cv=[p.folds[k]], seeds=(seed,), baselines=(), verbose=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if variant == "default":
            res = evaluate(p.windows, **kw)
        else:
            masking = _default_masking()
            res = evaluate(p.windows, scratch=False, maskings=(masking,), **kw, **ABLATION[variant])
            res["config"] = res.predictions["config"] = f"spt-{masking} - {variant}"
    res["fold"] = k
    res.predictions["fold"] = k
    return res


def load(protocol: str, defaults: str | None = None):
    """All finished runs of a protocol under ``defaults`` (a hash of the estimator's
    resolved settings; today's when None) with MiniRocket's rows and predictions, as one
    :class:`medspt.api.Results`."""
    files = sorted((OUT / protocol).glob(f"*_seed*_{defaults or params_hash()}.csv"))
    base = RESULTS / f"baselines_{protocol}_minirocket-oof.csv"
    return _read_runs(files + ([base] if base.exists() else []))


def _read_runs(files):
    """Stored runs as one Results: each file's rows and the out-of-fold predictions
    beside it (``<stem>_predictions.csv.gz``)."""
    from medspt.api import Results

    out = Results(pd.concat([pd.read_csv(f) for f in files], ignore_index=True))
    out.predictions = pd.concat(
        [read_predictions(f.with_name(f.stem + "_predictions.csv.gz")) for f in files],
        ignore_index=True,
    )
    return out


def _cell(value: float, bold: bool = False) -> str:
    """A score to 3 decimals; "–" where it does not exist (e.g. subject accuracy when
    every subject has windows of every class)."""
    if pd.isna(value):
        return "–"
    return f"**{value:.3f}**" if bold else f"{value:.3f}"


def fold_table(res, protocol: str, spt: str) -> str:
    """The default SPT model against MiniRocket, fold by fold (seeds averaged)."""
    metrics = ["balanced_accuracy", "subject_accuracy"]
    per = res.groupby(["config", "fold"])[metrics].mean()
    lines = [
        "| fold | SPT default: balanced acc. | subject acc. | MiniRocket: balanced acc. "
        "| subject acc. |",
        "|---:|---:|---:|---:|---:|",
    ]
    for fold in sorted(res["fold"].unique()):
        a = per.loc[(spt, fold)] if (spt, fold) in per.index else None
        b = per.loc[("tsai-minirocket", fold)] if ("tsai-minirocket", fold) in per.index else None
        cells = [_cell(v[m] if v is not None else np.nan) for v in (a, b) for m in metrics]
        lines.append(f"| {fold} | " + " | ".join(cells) + " |")
    mean = res.groupby("config")[metrics].mean()
    cells = [
        _cell(mean.loc[c, m] if c in mean.index else np.nan, bold=True)
        for c in (spt, "tsai-minirocket")
        for m in metrics
    ]
    lines.append("| mean | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def target_lines(res, protocol: str, spt: str) -> list[str]:
    mean = res.groupby("config")[["balanced_accuracy", "subject_accuracy"]].mean()
    out = []
    for metric, goal in TARGETS.get(protocol, {}).items():
        got = mean.loc[spt, metric] if spt in mean.index else float("nan")
        if pd.isna(got):
            out.append(f"- {metric.replace('_', ' ')} target {goal:.2f}: not scored")
            continue
        out.append(
            f"- {metric.replace('_', ' ')} target {goal:.2f}: {got:.3f} "
            + ("(met)" if got >= goal else f"(**not met**, short by {goal - got:.3f})")
        )
    if "tsai-minirocket" in mean.index and spt in mean.index:
        a, b = mean.loc[spt, "balanced_accuracy"], mean.loc["tsai-minirocket", "balanced_accuracy"]
        out.append(
            f"- above MiniRocket's mean balanced accuracy ({b:.3f}): {a:.3f} "
            + ("(met)" if a > b else "(**not met**)")
        )
    return out


def control_lines(res, spt: str) -> list[str]:
    """The code revisions the rows ran on, and how often scratch-long made fewer optimizer
    steps than SPT in the same fit (fold, seed): never, since it counts SPT's budget."""
    pair = res[res["config"].isin([spt, "scratch-long"])]
    steps = pair.pivot_table(index=["fold", "seed"], columns="config", values="optimizer_steps")
    own = res[res["config"].isin([spt, "scratch", "scratch-long"])]
    lines = []
    if "revision" in own.columns:
        revisions = sorted(map(str, set(own["revision"].dropna())))
        lines.append(f"- code revisions of these fits: {', '.join(revisions)}")
    if {spt, "scratch-long"} <= set(steps.columns):
        short = int((steps["scratch-long"] < steps[spt]).sum())
        lines.append(
            f"- scratch-long made fewer optimizer steps than SPT in {short} of {len(steps)} "
            "fits" + (" (rows from before scratch-long counted SPT's own resolved budget; "
                      "its comparisons favour SPT slightly there)" if short else "")
        )  # fmt: skip
    return lines


def in_progress(protocol: str, defaults: str | None = None, variants=None) -> str:
    """Which runs (of ``variants``; all when None) have finished folds but are not
    complete, as a sentence (or "")."""
    import re

    # file stems spell a variant's spaces as hyphens; known names are shown as written
    known = {v.replace(" ", "-"): v for v in ["default", *ABLATION]}
    wanted = None if variants is None else {v.replace(" ", "-") for v in variants}
    done: dict[str, list[int]] = {}
    for f in (OUT / protocol).glob(f"*_seed*_{defaults or params_hash()}_fold*.csv"):
        m = re.fullmatch(r"(.+)_seed(\d+)_\w+_fold(\d+)\.csv", f.name)
        if m and (wanted is None or m[1] in wanted):
            name = known.get(m[1], m[1].replace("-", " "))
            done.setdefault(f"{name}, seed {m[2]}", []).append(int(m[3]))
    if not done:
        return ""
    runs = "; ".join(f"{run}: folds {sorted(k)}" for run, k in sorted(done.items()))
    return f" Folds done so far (scores shown once a run is complete): {runs}."


def section(protocol: str, defaults: str | None = None) -> list[str]:
    from medspt.api import comparison_table, markdown_comparisons

    everything = load(protocol, defaults)
    spt = f"spt-{_default_masking()}"
    depth = float(_default_depth())
    res = _at_depth(everything, depth)
    if spt not in set(res["config"]):
        return [f"## {protocol}", "", "No complete run yet." + in_progress(protocol, defaults), ""]
    nan = float("nan")
    pairs = [((spt, depth), ("scratch", depth)), ((spt, depth), ("scratch-long", depth))]
    if "tsai-minirocket" in set(res["config"]):
        pairs += [((spt, depth), ("tsai-minirocket", nan))]
        pairs += [(("scratch-long", depth), ("tsai-minirocket", nan))]
    declared = comparison_table(res, [p for p in pairs if p[1][0] in set(res["config"])])
    seeds = sorted(res.loc[res["config"] == spt, "seed"].unique().tolist())
    main = (spt, "scratch", "scratch-long")
    steps = res.groupby("config")["optimizer_steps"].mean()
    wall = res.groupby("config")["wall_time_s"].mean()
    lines = [
        f"## {protocol}",
        "",
        f"Default SPT model ({spt}, depth {depth:g}), seeds {seeds}, "
        f"{res['fold'].nunique()} subject-wise folds. "
        "Mean optimizer steps per fit: "
        + ", ".join(f"{c} {steps[c]:.0f}" for c in main if c in steps.index)
        + "; mean fit time: "
        + ", ".join(f"{c} {wall[c]:.0f} s" for c in main if c in wall.index)
        + "."
        + in_progress(protocol, defaults),
        "",
        *target_lines(res, protocol, spt),
        *headline_without_window_stats(protocol, res, spt, depth, defaults),
        *control_lines(res, spt),
        "",
        *([probe_line(protocol), ""] if probe_line(protocol) else []),
        fold_table(res, protocol, spt),
        "",
        "Declared comparisons (seeds averaged within folds and subjects; subject-level "
        "sign-flip test and bootstrap interval; Holm over this table):",
        "",
        markdown_comparisons(declared).rstrip(),
        "",
    ]
    return (
        lines
        + previous_lines(protocol, res, spt, depth)
        + ablation_lines(protocol, res, spt, depth, defaults)
    )


def headline_without_window_stats(
    protocol: str, res, spt: str, depth: float, defaults: str | None = None
) -> list[str]:
    """The headline with ``window_stats=False``: round 5's default (``ABLATION_BASE``),
    whose recorded settings differ from today's in window statistics alone, on the same
    folds and seeds; [] when its runs are missing or differ in more."""
    if defaults not in (None, params_hash()) or base_differences(protocol) != {
        "window_stats": (False, True)
    }:
        return []
    base = _at_depth(load(protocol, ABLATION_BASE), depth)
    both, seeds = _beside(res, base, spt, f"{spt} - {BASE_LEVER}")
    mean = both.groupby("config")["balanced_accuracy"].mean()
    name = f"{spt} - {BASE_LEVER}"
    if name not in mean.index:
        return []
    return [
        f"- the same headline with `window_stats=False` (round 5's runs, seeds {seeds}, same "
        f"folds): balanced accuracy {mean[name]:.3f}, against {mean[spt]:.3f} with window "
        "statistics"
    ]


PREVIOUS = "P"  # the patch default the model issue started from (default_model_P/)


def previous_lines(protocol: str, res, spt: str, depth: float) -> list[str]:
    """Today's default against the previous (patch) default's archived runs on the same
    folds and seeds, paired over subjects: the target "not below the previous default"."""
    from medspt.api import comparison_table, markdown_comparisons

    files = sorted((RESULTS / f"default_model_{PREVIOUS}" / protocol).glob("default_seed*.csv"))
    if not files:
        return []
    name = f"{spt} (patch default)"
    both, seeds = _beside(res, _at_depth(_read_runs(files), depth), spt, name)
    if not seeds:
        return []
    table = comparison_table(both, [((spt, depth), (name, depth))])
    return [
        f"Against the previous default (`default_model_{PREVIOUS}.md`: patch tokens, learned "
        "positions, a 600-step floor, attention dropout 0.1), its runs of seeds "
        f"{seeds} on the same folds (target: not below it):",
        "",
        markdown_comparisons(table).rstrip(),
        "",
    ]


def _rows(res, keep):
    """A copy of the rows of ``res`` where ``keep(frame)`` holds, with their predictions."""
    out = res[keep(res)].copy()
    out.predictions = res.predictions[keep(res.predictions)].copy()
    return out


def _beside(res, other, spt: str, name: str):
    """The SPT rows of ``res`` and of ``other`` (renamed ``name``) over the seeds both
    ran, as one Results for a paired comparison, and those seeds."""
    from medspt.api import Results

    seeds = sorted(
        set(res.loc[res["config"] == spt, "seed"]) & set(other.loc[other["config"] == spt, "seed"])
    )
    on = _rows(res, lambda f: (f["config"] == spt) & f["seed"].isin(seeds))
    off = _rows(other, lambda f: (f["config"] == spt) & f["seed"].isin(seeds))
    off["config"] = off.predictions["config"] = name
    out = Results(pd.concat([pd.DataFrame(on), pd.DataFrame(off)], ignore_index=True))
    out.predictions = pd.concat([on.predictions, off.predictions], ignore_index=True)
    return out, seeds


def base_differences(protocol: str, defaults: str | None = None) -> dict[str, tuple] | None:
    """Settings that the runs of ``ABLATION_BASE`` and of ``defaults`` (today's when None)
    both recorded and that differ, as ``{name: (base value, today's value)}``; None when
    either has no stored run."""
    import json

    recorded = []
    for key in (ABLATION_BASE, defaults or params_hash()):
        files = sorted((OUT / protocol).glob(f"default_seed*_{key}.csv"))
        if not files:
            return None
        recorded.append(json.loads(pd.read_csv(files[0], usecols=["defaults"])["defaults"][0]))
    base, today = recorded
    return {k: (base[k], today[k]) for k in sorted(set(base) & set(today)) if base[k] != today[k]}


def ablation_lines(protocol: str, res, spt: str, depth: float, defaults=None) -> list[str]:
    """The ablation: each lever removed from the default on the same folds (negative: the
    lever helped). Runs of today's default with a lever removed where they are complete;
    otherwise the chain through ``ABLATION_BASE`` (today's default less window
    statistics): its default against today's over their common seeds, and its own seed-0
    ablation for the other levers."""
    from medspt.api import comparison_table, markdown_comparisons

    lines = []
    own = sorted(c for c in set(res["config"]) if c.startswith(spt + " - "))
    if own:
        seed0 = _rows(res, lambda f: f["seed"] == 0)
        table = comparison_table(seed0, [((c, depth), (spt, depth)) for c in own])
        lines += [
            "Ablation of this default, seed 0: each row removes one lever and is compared "
            "with the default's seed-0 run on the same folds (negative: the lever helped).",
            "",
            markdown_comparisons(table).rstrip(),
            "",
        ]
    if defaults not in (None, params_hash()) or f"{spt} - {BASE_LEVER}" in own:
        return lines
    differ = base_differences(protocol, defaults)
    if differ is None:
        return lines
    if set(differ) != {"window_stats"}:
        return lines + [
            f"Round 5's runs ({ABLATION_BASE}) differ from today's default in "
            f"{', '.join(differ)}, not in window statistics alone: no chained ablation.",
            "",
        ]
    base = _at_depth(load(protocol, ABLATION_BASE), depth)
    both, seeds = _beside(res, base, spt, f"{spt} - {BASE_LEVER}")
    pair = [((f"{spt} - {BASE_LEVER}", depth), (spt, depth))]
    lines += [
        f"Ablation of window statistics, seeds {seeds}: round 5's default ({ABLATION_BASE}), "
        "whose recorded settings differ from today's in `window_stats` alone, against "
        "today's default on the same folds and seeds (seeds averaged within folds and "
        "subjects; negative: the lever helped).",
        "",
        markdown_comparisons(comparison_table(both, pair)).rstrip(),
        "",
    ]
    levers = sorted(c for c in set(base["config"]) if c.startswith(spt + " - "))
    if levers:
        seed0 = _rows(base, lambda f: f["seed"] == 0)
        table = comparison_table(seed0, [((c, depth), (spt, depth)) for c in levers])
        lines += [
            "Ablation of the other levers, seed 0, each removed from round 5's default "
            f"(without window statistics; `default_model_{ABLATION_BASE}.md`) and compared "
            "with its seed-0 run on the same folds (negative: the lever helped)."
            + in_progress(protocol, ABLATION_BASE, ABLATION).replace(" Folds", " Its folds"),
            "",
            markdown_comparisons(table).rstrip(),
            "",
        ]
    return lines


def stored_defaults(protocols: list[str], defaults_hash: str | None = None) -> dict:
    """The estimator settings the runs of ``defaults_hash`` recorded (today's defaults when
    None or when no run of it is stored)."""
    import json

    from medspt import SPTClassifier

    for name in protocols:
        for csv in sorted((OUT / name).glob(f"*_seed*_{defaults_hash or params_hash()}*.csv")):
            recorded = pd.read_csv(csv, usecols=["defaults"])["defaults"].dropna()
            if len(recorded):
                return json.loads(recorded.iloc[0])
    return SPTClassifier().get_params()


def report(protocols: list[str], command: str, defaults_hash: str | None = None) -> str:
    defaults = stored_defaults(protocols, defaults_hash)
    keys = [
        "depth", "d_model", "embedding", "positional", "patch_len", "masking", "mask_unit",
        "mask_ratio", "normalize", "window_stats",
        "augment", "label_smoothing", "no_decay_norms", "encoder_lr_scale", "pretrain_epochs",
        "epochs", "min_steps", "batch_size", "lr",
    ]  # fmt: skip
    lines = [
        "# The default model against MiniRocket",
        "",
        "What `evaluate(protocol.windows, cv=protocol.folds)` gives with no settings. The "
        "defaults were chosen by inner validation on training subjects and development "
        "data (`select_defaults.md`, `select_model.md`), but not blind to these test folds: "
        "earlier defaults had been scored on them before later rounds were declared, and "
        "round 6 was designed after they showed NE-1 short of MiniRocket (`docs/concepts.md`"
        ', "How the defaults were chosen"). These test folds are development data now.',
        "",
        "Defaults: " + ", ".join(f"`{k}={defaults.get(k)!r}`" for k in keys) + ".",
        "",
    ]
    for name in protocols:
        lines += section(name, defaults_hash)
    lines += [
        "Ablation names: *patch tokens* = the SPT paper's linear patch embedding with "
        "learned absolute positions instead of convolutional tokens with relative "
        "positions; *learned positions* = learned absolute positions instead of relative "
        "ones; *600-step floor* = the previous budget floor instead of 1,500 steps per "
        "stage; *no window stats* = the classifier without each window's per-channel mean "
        'and log-std. The small-set ensemble (`n_estimators="auto"`, round 7) is no lever '
        "here: with thousands of training windows per fold the default trains one member, "
        "the same fit as before it, so these runs stand for it (the file key is the "
        "default as the folds resolve it). Its own ablation is on the public sets "
        "(`public_sets.md`). Earlier defaults' own runs: `default_model_0d8dc206.md` (round 5's "
        "conv default, without window statistics), `default_model_P.md` (patch tokens). "
        "Whether SPT helps a deeper model is the capacity study's question (`paper_table.md`).",
        "",
        f"- command: `{command}`",
        f"- date: {dt.datetime.now():%Y-%m-%d %H:%M}; code {git_revision()}",
        "- machine: {cpu}, {cores} logical cores, {os}; torch threads 1".format(**machine()),
    ]
    return "\n".join(lines) + "\n"


# what produced the stored rows (the table itself is rebuilt with --report-only)
RUN_COMMAND = (
    "MEDSPT_DATA=... python benchmarks/default_model.py --protocol GPD-1 "
    "(and --protocol NE-1 in a second process)"
)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--protocol", nargs="+", default=["GPD-1", "NE-1"])
    ap.add_argument("--root", default=os.environ.get("MEDSPT_DATA"))
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument(
        "--ablation", action="store_true",
        help="after the default's seeds, remove each lever from today's default (seed 0); "
        "without it the report takes the ablation from round 5's stored runs",
    )  # fmt: skip
    ap.add_argument(
        "--defaults", default=None,
        help="with --report-only: report the runs of these estimator defaults (the hash in "
        "their file names; default: today's) in default_model_<HASH>.md",
    )  # fmt: skip
    args = ap.parse_args(argv)
    if not args.report_only:
        import torch

        from medspt.datasets.protocols import protocol

        torch.set_num_threads(1)  # one process per protocol on a small machine
        git_revision()  # refuses uncommitted code: rows record the revision they ran on
        for name in args.protocol:
            p = protocol(name, root=args.root)
            for variant, seed in _plan(args.ablation):
                run_one(p, variant, seed)
    present = [n for n in ("GPD-1", "NE-1") if (OUT / n).exists()]
    # an earlier default's report goes beside today's, never over it
    md = (
        MD if args.defaults in (None, params_hash()) else MD.with_stem(f"{MD.stem}_{args.defaults}")
    )
    md.write_text(report(present, RUN_COMMAND, args.defaults))
    print(md.read_text())
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())
