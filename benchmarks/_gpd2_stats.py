"""Subject-level comparisons for ``gpd2.py``'s accuracy report: GPD-1's windows
aggregated per subject, scores per fold, paired tests over subjects and folds, and SPT's
gain on whole walks against its gain on windows."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from _common import REPO_ROOT, RESULTS, fmt_p

from medspt.estimator.metrics import read_predictions

GPD1_PREFIX = "GPD-1 → subject: "  # names GPD-1's models once aggregated per subject
GPD1_SCRATCH = GPD1_PREFIX + "scratch"  # the reference scratch model of the gain table


def _gpd1_sources(args: argparse.Namespace) -> list[Path]:
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
    """``path`` relative to the repository, else its name (no machine's folders)."""
    root, path = REPO_ROOT.resolve(), path.resolve()
    return str(path.relative_to(root)) if path.is_relative_to(root) else path.name


def per_subject(windows: pd.DataFrame) -> pd.DataFrame:
    """Window predictions aggregated per (config, seed, fold, subject).

    Parameters
    ----------
    windows : pandas.DataFrame
        Out-of-fold predictions, one row per window, with ``proba_*`` columns and
        ``label_code``.

    Returns
    -------
    pandas.DataFrame
        One row per subject: the mean probability of each class over its windows and the
        class with the highest mean predicted (for two classes: mean PD probability above
        0.5).
    """
    cols = [c for c in windows.columns if str(c).startswith("proba_")]
    keys = ["config", "depth", "seed", "fold", "subject"]
    g = windows.groupby(keys, dropna=False, sort=False)
    out = g[cols].mean()
    out["label_code"] = g["label_code"].first()
    out = out.reset_index()
    out["predicted_code"] = out[cols].to_numpy().argmax(1)
    out["window"] = np.arange(len(out))
    return out


def gpd1_subjects(
    args: argparse.Namespace, gpd2_folds: dict[int, set], own: pd.DataFrame
) -> tuple[pd.DataFrame, list[str]]:
    """GPD-1 windowed models' predictions aggregated per subject, on the GPD-2 run's folds.

    Parameters
    ----------
    args : argparse.Namespace
        ``gpd2.py``'s options (``--gpd1-predictions``).
    gpd2_folds : dict of int to set
        The subjects of each fold the GPD-2 run scored.
    own : pandas.DataFrame
        GPD-1 window predictions this run fitted (``--fit-gpd1``), possibly empty.

    Returns
    -------
    pandas.DataFrame
        :func:`per_subject` rows of the folds whose subjects match GPD-2's.
    list of str
        Notes for the report: sources read, folds dropped because their subjects differ.
    """
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


def fold_scores(pred: pd.DataFrame) -> pd.DataFrame:
    """Per (config, seed, fold): balanced accuracy, accuracy and ROC AUC.

    Parameters
    ----------
    pred : pandas.DataFrame
        Subject-level predictions, one row per subject.

    Returns
    -------
    pandas.DataFrame
        One row per (config, seed, fold); ROC AUC is NaN where a fold has one class.
    """
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


def paired_table(
    pairs: list[tuple[str, str]], scores: pd.DataFrame, pred: pd.DataFrame, metric: str
) -> list[str]:
    """Paired comparisons over subjects (and folds), Holm's correction over the table.

    Parameters
    ----------
    pairs : list of (str, str)
        Configurations to compare, each against the one after it.
    scores : pandas.DataFrame
        :func:`fold_scores` of all configurations.
    pred : pandas.DataFrame
        Subject-level predictions of all configurations.
    metric : str
        ``"balanced_accuracy"`` or ``"accuracy"``.

    Returns
    -------
    list of str
        Markdown table lines; empty when no pair shares a subject.
    """
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
            f"| [{s['ci_low']:+.3f}, {s['ci_high']:+.3f}] | {fmt_p(s['p_value'])} "
            f"(n={s['n_subjects']}) | {fmt_p(ph)} | {f['diff']:+.3f} | {fmt_p(f['p_value'])} "
            f"(n={f['n_folds']}) |"
        )
    return lines


def gpd1_pairs(mine: list[str], theirs: list[str]) -> list[tuple[str, str]]:
    """Like against like: each GPD-2 SPT configuration against GPD-1's SPT models, each
    scratch one against GPD-1's scratch models, MiniRocket against MiniRocket.

    Parameters
    ----------
    mine : list of str
        The GPD-2 run's configurations.
    theirs : list of str
        GPD-1's aggregated models (``GPD-1 → subject: ...``); scratch-long is left out.

    Returns
    -------
    list of (str, str)
        The pairs, GPD-2's first.
    """

    def kind(config: str) -> str:
        base = config.split(": ")[-1].removeprefix("gpd1-")
        if base.startswith("spt"):
            return "spt"
        return "scratch" if base == "scratch" or base.startswith("scratch-") else base

    wanted = [b for b in theirs if not b.endswith("scratch-long")]
    return [(a, b) for a in mine for b in wanted if kind(a) == kind(b)]


def gain_lines(p2: pd.DataFrame, g1: pd.DataFrame) -> list[str]:
    """SPT's gain over scratch on whole walks against its gain on GPD-1's windows.

    Parameters
    ----------
    p2 : pandas.DataFrame
        GPD-2's subject-level predictions.
    g1 : pandas.DataFrame
        GPD-1's predictions aggregated per subject (:func:`gpd1_subjects`), configurations
        named ``GPD-1 → subject: ...``.

    Returns
    -------
    list of str
        Markdown table lines over the subjects all four models scored
        (``compare_gains``); empty without a GPD-1 SPT and scratch pair or a GPD-2 one.
    """
    from medspt.evaluation.statistics import compare_gains

    ref = [c for c in dict.fromkeys(g1["config"]) if c.split(": ")[-1].startswith("spt")]
    if not ref or GPD1_SCRATCH not in set(g1["config"]):
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
                    g1[g1["config"] == GPD1_SCRATCH],
                    metric,
                )
                lines.append(
                    f"| {spt} − {scratch} | {r.split(': ')[-1]} − scratch "
                    f"| {metric.replace('_', ' ')} | {g['gain']:+.3f} | {g['gain_ref']:+.3f} "
                    f"| {g['diff']:+.3f} | [{g['ci_low']:+.3f}, {g['ci_high']:+.3f}] "
                    f"| {fmt_p(g['p_value'])} (n={g['n_subjects']}) |"
                )
    return lines if len(lines) > 2 else []
