"""The ``accuracy`` mode of ``gpd2.py``: SPT and scratch fits on GPD-2's whole walks (and,
if asked, GPD-1's windows and aeon's MiniRocket) on the protocol's folds, each row and its
out-of-fold predictions stored as soon as it finishes, so an interrupted run resumes."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from _common import append_csv, git_revision, params_hash
from _gpd2_report import paths

CONFIGS = {
    "spt-hierarchical": dict(attention="hierarchical"),
    "scratch-hierarchical": dict(attention="hierarchical", pretrain=False),
    "spt-full": dict(attention="full"),
    "scratch-full": dict(attention="full", pretrain=False),
}
GPD1_CONFIGS = {"gpd1-spt": {}, "gpd1-scratch": dict(pretrain=False)}


def _recipe(args: argparse.Namespace) -> dict:
    """Settings every fit shares beyond the estimator's defaults (only those given)."""
    base: dict = {"mask_unit": "token", "patch_len": args.patch_len}
    for key in ("epochs", "pretrain_epochs", "min_steps", "attn_dropout"):
        if getattr(args, key) is not None:
            base[key] = getattr(args, key)
    return base


def _done(csv: Path) -> set:
    """(config, protocol, fold, seed, settings, defaults) of the fits already stored: a fit
    under other estimator defaults (another ``defaults`` hash, or none recorded) is not."""
    if not csv.is_file():
        return set()
    df = pd.read_csv(csv, dtype={"defaults": str})
    defaults = df["defaults"] if "defaults" in df.columns else pd.Series("", index=df.index)
    keys = zip(df["config"], df["protocol"], df["fold"], df["seed"], df["settings"], defaults)
    return set(keys)


def _fit_all(p, configs: dict, args: argparse.Namespace, csv: Path, pred: Path) -> None:
    """Fit every (fold, seed, config) not yet stored; store each as it finishes."""
    from medspt.api import fit_fold, oof_frame

    shared = _recipe(args)
    if p.name == "GPD-1":  # GPD-1's 10-s windows: the estimator's own patch length
        shared.pop("patch_len")
    settings = json.dumps(shared, sort_keys=True)
    done, revision = _done(csv), git_revision()  # refuses uncommitted code
    defaults = {name: params_hash({**shared, **extra}) for name, extra in configs.items()}
    for k in args.folds:
        tr, te = p.folds[k]
        for seed in args.seeds:
            for name, extra in configs.items():
                if (name, p.name, k, seed, settings, defaults[name]) in done:
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
                row = {**keys, "protocol": p.name, "fold": k, **row, "settings": settings,
                       "defaults": defaults[name], "revision": revision}  # fmt: skip
                row["patch_len"], row["n_steps"] = clf.patch_len_, clf.n_steps_
                row["batch_size"] = clf.batch_size_
                append_csv(csv, pd.DataFrame([row]))
                frame = oof_frame(p.windows, te, proba, **keys, fold=k)
                append_csv(pred, frame.assign(protocol=p.name).round(5))


def _minirocket(p, args: argparse.Namespace, csv: Path, pred: Path) -> str | None:
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
        append_csv(csv, pd.DataFrame([row]))
        keys = dict(config="minirocket", depth=np.nan, seed=plan.seed)
        append_csv(
            pred, oof_frame(ws, plan.test, proba, **keys, fold=plan.fold).assign(protocol=p.name)
        )
    return None


def run_accuracy(args: argparse.Namespace) -> list[str]:
    """Fit what is asked for, skipping fits already stored.

    Parameters
    ----------
    args : argparse.Namespace
        ``gpd2.py``'s options (``--configs``, ``--folds``, ``--seeds``, ``--minirocket``,
        ``--fit-gpd1``, ...).

    Returns
    -------
    list of str
        Notes for the report.
    """
    import torch

    from medspt.datasets import protocol

    torch.set_num_threads(args.threads)
    csv, pred, _ = paths(args)
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
