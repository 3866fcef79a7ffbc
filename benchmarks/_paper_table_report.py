"""The report sections of ``paper_table.py``: the protocol's studies read from their
storage, the tsai baselines and confound probes stored beside them, and per protocol the
nested choice, the subject-level and fold-level tables and the summary lines."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
from _common import RESULTS, fmt_series_pm
from control_replay import with_refits

from medspt.estimator.metrics import read_predictions


def _is_default(study_name: str, name: str | None = None) -> bool:
    """Whether a study holds the package's default model: ``paper_table.py --model
    default`` names it ``paper-<protocol>-default`` (``name``: only that protocol's)."""
    protocol = re.escape(name) if name else ".+?"
    return re.fullmatch(rf"paper-{protocol}-default(-.*)?", study_name) is not None


def _variant(study_name: str, params: dict) -> str:
    """A variant's name in the report: the model, then its settings that differ from the
    first study (the default model pins its own lr and validation share: not a variant)."""
    if _is_default(study_name):
        return "default model"
    parts = ["per-window centring" if params.get("normalize") == "window" else "channel scaling"]
    if params.get("pooling", "mean") != "mean":
        parts.append(f"{params['pooling']} pooling")
    if "lr" in params:
        parts.append(f"lr {params['lr']:g}")
    if "val_size" in params:
        v = params["val_size"]
        parts.append("no validation split" if v == 0 else f"validation share {v:g}")
    return ", ".join(parts)


def _groups(name: str, studies: list, results: dict) -> dict[str, list]:
    """The protocol's studies by the nested choice they take part in: the package's default
    model (``paper-<name>-default``), the paper recipe's studies that kept out-of-fold
    predictions (``-subjects``) and the earlier grids. A nested choice never mixes models."""
    default = [s for s in studies if _is_default(s.study_name, name)]
    rest = [s for s in studies if s not in default]
    return {
        "default": [s for s in default if len(results[s.study_name])],
        "recipe": [
            s for s in rest if s.study_name.endswith("-subjects") and len(results[s.study_name])
        ],
        "earlier": [s for s in rest if not s.study_name.endswith("-subjects")],
    }


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


def _progress(study) -> str:
    """How much of the grid is complete, and what is missing."""
    from optuna.trial import TrialState

    from medspt.study.grid import study_cells
    from medspt.study.trials import cell_of

    cells = study_cells(study.user_attrs["medspt"])
    done = {cell_of(t) for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))}
    missing = [c for c in cells if c not in done]
    if not missing:
        return f"All {len(cells)} cells of the grid are complete."
    by_seed = pd.Series([c.seed for c in missing]).value_counts().sort_index()
    return (
        f"**Partial: {len(cells) - len(missing)} of {len(cells)} cells complete**; missing "
        + ", ".join(f"{n} cells of seed {s}" for s, n in by_seed.items())
        + f" (next: {missing[0].key}). Rerun the same command"
        + _resume_hint(study.study_name)
        + " to resume the study."
    )


def _resume_hint(study_name: str) -> str:
    """What a resumed run must repeat beside the command: the model and variant options."""
    if _is_default(study_name):
        return " (with `--model default`)"
    return " (with the same variant options)" if study_name.count("-") > 2 else ""


def _baseline_predictions(name: str) -> pd.DataFrame | None:
    """Out-of-fold predictions of the baseline runs that kept them."""
    files = sorted(RESULTS.glob(f"baselines_{name}*_predictions.csv.gz"))
    if not files:
        return None
    pred = pd.concat([read_predictions(f) for f in files], ignore_index=True)
    return pred.drop_duplicates(["config", "seed", "fold", "window"], keep="last")


def _with_baselines(res, baselines: pd.DataFrame, predictions: pd.DataFrame | None):
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
        label = _variant(study.study_name, study.user_attrs["medspt"].get("params", {}))
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
    variant = _variant(study.study_name, attrs.get("params", {}))
    return [
        f"### {name}, {variant}: tested over subjects",
        "",
        f"Study `{study.study_name}`: depths {attrs['grid']['depths']}, model settings "
        f"{attrs.get('params', {})}; {len(res)} fits, "
        f"{res['wall_time_s'].sum() / 60:,.0f} min of training. {_progress(study)}",
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
    variant = _variant(study.study_name, attrs.get("params", {}))
    lines = [
        f"### {name}, {variant}: fold level (earlier grid)",
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
    """The confound probes of the protocol (``benchmarks/probes.py``) and their warnings."""
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


def _answer(name: str, study, res, metric: str) -> str:
    """The default model's answer to "did SPT help?" on one protocol, one paragraph
    (:func:`medspt.evaluation.comparisons.spt_answer`), marked when the grid is partial."""
    from medspt.evaluation.comparisons import spt_answer
    from medspt.study.grid import study_cells

    text = spt_answer(res, metric).strip()
    if not text:
        return ""
    cells = len(study_cells(study.user_attrs["medspt"]))
    done = len(res[["depth", "config", "seed"]].drop_duplicates())
    state = "" if done >= cells else f" (partial: {done} of {cells} cells so far)"
    return f"- **{name}**{state}: {text}"


CONTROL_ARMS = ("scratch", "scratch-long")
DEPTH_CONTRAST = (8, 1)  # declared in issue 59: SPT's gain at depth 8 minus at depth 1


def _better_control(res, depth, metric: str) -> str | None:
    """The label-only control (scratch or scratch-long) with the higher mean ``metric``
    over its fits at ``depth``."""
    from medspt.evaluation.results import config_rows

    means = {c: config_rows(res, c, depth)[metric].mean() for c in CONTROL_ARMS}
    means = {c: m for c, m in means.items() if pd.notna(m)}
    return max(sorted(means), key=means.get) if means else None


def depth_contrasts(name: str, res, metric: str) -> pd.DataFrame:
    """The declared depth contrast of one protocol's default grid: for every masking,
    SPT's gain over the better label-only control at depth 8 minus its gain at depth 1,
    per subject (seeds averaged within subjects;
    :func:`medspt.evaluation.statistics.compare_gains`). One row per masking; Holm is set
    over both protocols by the caller."""
    from medspt.evaluation.results import config_predictions
    from medspt.evaluation.statistics import compare_gains

    hi, lo = DEPTH_CONTRAST
    rows = []
    controls = {d: _better_control(res, d, metric) for d in (hi, lo)}
    if None in controls.values():
        return pd.DataFrame()
    for config in sorted(c for c in res["config"].unique() if c.startswith("spt-")):
        frames = [config_predictions(res, c, d) for c, d in
                  ((config, hi), (controls[hi], hi), (config, lo), (controls[lo], lo))]  # fmt: skip
        if any(f is None for f in frames):
            continue
        out = compare_gains(*frames, metric=metric)
        rows.append({"protocol": name, "masking": config.removeprefix("spt-"),
                     "control_hi": controls[hi], "control_lo": controls[lo], **out})  # fmt: skip
    return pd.DataFrame(rows)


def headline_rows(name: str, res, metric: str, masking: str = "span") -> pd.DataFrame:
    """The capacity grid's answer at each depth for the default masking, as rows for the
    clinician's figure (``benchmarks/answer_figure.py``): SPT minus the better label-only
    control and SPT minus MiniRocket (same folds), paired over subjects (seeds averaged
    within subjects), each with its 95 % interval and sign-flip p."""
    from medspt.evaluation.comparisons import compare, primary_estimates

    spt = f"spt-{masking}"
    nan = float("nan")
    rows = []
    for depth in sorted(res.loc[res["config"] == spt, "depth"].dropna().unique()):
        control = _better_control(res, depth, metric)
        pairs = [("control", control, depth), ("minirocket", "minirocket", nan)]
        for role, other, other_depth in pairs:
            if other is None or not (res["config"] == other).any():
                continue
            r = compare(res, (spt, depth), (other, other_depth), metric)
            rows.append({"protocol": name, "axis": "depth", "x": float(depth), "spt": spt,
                         "role": role, **r})  # fmt: skip
    if not rows:
        return pd.DataFrame()
    table = pd.DataFrame(rows)
    table["p"] = table["subject_p"].where(table["n_subjects"] > 0, table["fold_p"])
    return primary_estimates(table)


def depth_contrast_lines(tables: list[pd.DataFrame]) -> list[str]:
    """The depth contrasts of both protocols (:func:`depth_contrasts`), Holm over all of
    them, as Markdown: one sentence that follows the table, then the table."""
    from medspt.evaluation.markdown_tables import format_interval, format_p, format_signed
    from medspt.evaluation.statistics import holm

    tables = [t for t in tables if len(t)]
    if not tables:
        return []
    table = pd.concat(tables, ignore_index=True)
    hi, lo = DEPTH_CONTRAST
    table = table.assign(p_holm=holm(table["p_value"].to_numpy(dtype=float)))
    grew = table[(table["ci_low"] > 0) & (table["p_holm"] < 0.05)]
    shrank = table[(table["ci_high"] < 0) & (table["p_holm"] < 0.05)]
    verdict = (
        "The gain grew with depth for " + ", ".join(grew["protocol"] + " " + grew["masking"])
        if len(grew)
        else f"For no protocol and masking was SPT's gain shown to grow from depth {lo} to "
        f"depth {hi}"
    )
    if len(shrank):
        verdict += "; it shrank for " + ", ".join(shrank["protocol"] + " " + shrank["masking"])
    lines = [
        "## Does the gain grow with depth? (declared contrast)",
        "",
        f"Declared in issue 59, after the grid had been read: for each masking, SPT's gain "
        f"over the better label-only control at depth {hi} minus its gain at depth {lo}, "
        "per subject (seeds averaged within subjects; sign-flip test and subject bootstrap "
        f"interval; Holm over the {len(table)} contrasts of both protocols). "
        f"{verdict}.",
        "",
        f"| protocol | masking | control (depth {lo} / {hi}) | gain at depth {lo} | gain at "
        f"depth {hi} | difference [95 % CI] | p | p (Holm) | subjects |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in table.itertuples():
        lines.append(
            f"| {r.protocol} | {r.masking} | {r.control_lo} / {r.control_hi} | "
            f"{format_signed(r.gain_ref)} | {format_signed(r.gain)} | "
            f"{format_signed(r.diff)} {format_interval(r.ci_low, r.ci_high)} | "
            f"{format_p(r.p_value)} | {format_p(r.p_holm)} | {r.n_subjects} |"
        )
    return [*lines, ""]


def _control_line(name: str, pending: int) -> str:
    """How far the default grid's scratch-long follows the new control rule."""
    marks = RESULTS / "control_replay.csv"
    if not marks.exists():
        return ""
    todo = pd.read_csv(marks)
    todo = todo[todo["protocol"] == name]
    n, refit = len(todo), int(todo["refit"].sum())
    state = (
        "all refitted" if pending == 0 else f"**{pending} not yet refitted** (still the old rule's)"
    )
    return (
        f"*scratch-long* follows the control rule of issue 59 (scratch's early stopping, no "
        f"epoch kept from inside warm-up): of its {n} fold fits, {n - refit} keep the same "
        f"epoch under the new rule and stand as stored; {refit} keep another and are "
        f"refitted: {state} (`control_replay.md`).\n"
    )


def _protocol_report(
    name: str, studies: list, metric: str
) -> tuple[list[str], list[str], list[str], dict[str, pd.DataFrame]]:
    """The sections of one protocol, its summary lines, the default model's answer, and its
    depth contrasts (:func:`depth_contrasts`) and headline rows (:func:`headline_rows`)."""
    from medspt.study import results_frame

    baselines = _read_baselines(name)
    base_pred = _baseline_predictions(name)
    results = {s.study_name: results_frame(s) for s in studies}  # read each study once
    control = []
    for s in studies:  # the default grid's scratch-long under the new rule (issue 59)
        if _is_default(s.study_name, name) and len(results[s.study_name]):
            results[s.study_name], pending = with_refits(name, results[s.study_name])
            control.append(_control_line(name, pending))
    groups = _groups(name, studies, results)
    earlier = groups["earlier"]
    lines, summary = [f"## {name}", "", *control], []
    answers = [_answer(name, s, results[s.study_name], metric) for s in groups["default"][:1]]
    defaults = groups["default"][:1]
    contrasts = [depth_contrasts(name, results[s.study_name], metric) for s in defaults]
    headlines = [headline_rows(name, results[s.study_name], metric) for s in defaults]
    for key, title in (("default", "the default model"), ("recipe", "the paper recipe")):
        if not groups[key]:
            continue
        candidates = _combined(groups[key], results)
        lines += [f"### Nested choice against the baselines: {title}", ""]
        lines += _nested_section(name, candidates, baselines, base_pred, metric)
        for study in groups[key]:
            lines += _subjects_section(name, study, results[study.study_name], metric)
        summary += _summary_lines(name, candidates, baselines, base_pred, metric, title)
    if earlier:
        lines += [
            "### Nested choice among the earlier grids (fold level)",
            "",
            "The same rule over every configuration of the earlier studies of the paper "
            "recipe that held out validation subjects (their validation scores come from the "
            "stored learning curves); they kept no per-window predictions, so only fold-level "
            "tests.",
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
            lines.append(f"| {config} | {fmt_series_pm(g[metric])} | {len(g)} |")
        lines += [""]
    lines += _probe_lines(name)
    extra = {
        "contrast": pd.concat(contrasts, ignore_index=True) if contrasts else pd.DataFrame(),
        "headline": pd.concat(headlines, ignore_index=True) if headlines else pd.DataFrame(),
    }
    return lines, summary, [a for a in answers if a], extra


def _summary_lines(
    name: str, candidates, baselines: pd.DataFrame | None, base_pred, metric: str, title: str
) -> list[str]:
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
        what = f"nested best of {title}"
        out.append(_summary_row(name, what, "tsai-minirocket", mr.iloc[0]))
    return out


def _summary_row(name: str, what: str, versus: str, r) -> str:
    """A summary table row of one comparison ``r`` (a row of ``comparison_table``)."""
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
