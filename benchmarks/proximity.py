"""Attention-proximity diagnostics of scratch vs SPT models on the real datasets.

Does self-pretraining teach proximity (attention to nearby tokens, positions acting as a
proximity bias) where label-only training does not? For each protocol and depth this
fits scratch, SPT (span masking) and label-only ALiBi models on one subject-wise fold,
runs :mod:`medspt.evaluation.diagnostics` on the fold's *test* windows and writes
``benchmarks/results/proximity.md`` with the figures under
``benchmarks/results/proximity/``. When the capacity study of ``paper_table.py`` exists
in ``--storage``, its per-fold diagnostics (every fold and seed the study has finished)
are tabulated too: they cover many more models than the figures.

    python benchmarks/proximity.py                           # GPD-1 and NE-1, depths 2 and 8
    python benchmarks/proximity.py --protocols GPD-1 --depths 2 --epochs 5   # quicker

Real data: ``MEDSPT_DATA`` or ``--root``. The outcome is written whatever it is.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from _common import RESULTS, git_revision, machine, study_storage

CONFIGS = {
    "scratch": {"pretrain": False},
    "spt-span": {"pretrain": True, "masking": "span"},
    "scratch-alibi": {"pretrain": False, "positional": "alibi"},
}


def _fit_models(p, depth: int, configs, fold: int, seed: int, params: dict):
    from medspt.api import fit_fold

    tr, te = p.folds[fold]
    models, rows = {}, []
    for config in configs:
        t0 = time.perf_counter()
        kw = {**params, **CONFIGS[config], "depth": depth, "random_state": seed}
        row, clf, _ = fit_fold(p.windows, tr, te, kw)
        models[config] = clf
        rows.append(
            {
                "config": config,
                "balanced_accuracy": row["balanced_accuracy"],
                "finetune_epoch": row["finetune_epoch"],
                "fit_s": time.perf_counter() - t0,
            }
        )
        print(f"  depth {depth} {config}: BA {row['balanced_accuracy']:.3f}", file=sys.stderr)
    return models, pd.DataFrame(rows), p.windows.X[te]


def _layer_lines(models: dict, X) -> list[str]:
    """Locality ratio per layer (mean over heads) and positional ρ per layer."""
    from medspt.evaluation.diagnostics import attention_profile, positional_score

    depth = next(iter(models.values())).model_.config.depth
    head = "| model | " + " | ".join(f"L{i + 1}" for i in range(depth)) + " |"
    lines = [
        "Locality ratio per layer (mean over heads; uniform attention ≈ 1):",
        "",
        head,
        "|---|" + "---:|" * depth,
    ]
    rho_lines = [
        "",
        "Positional-score Spearman ρ with −|i−j| per layer (mean over heads):",
        "",
        head,
        "|---|" + "---:|" * depth,
    ]
    for name, clf in models.items():
        prof = attention_profile(clf, X, max_windows=512)
        loc = prof.locality_ratio.mean(1)
        lines.append(f"| {name} | " + " | ".join(f"{v:.2f}" for v in loc) + " |")
        rho = positional_score(clf).spearman.mean(1)
        rho_lines.append(f"| {name} | " + " | ".join(f"{v:.2f}" for v in rho) + " |")
    return lines + rho_lines


def _study_table(storage: str, name: str) -> list[str]:
    """Per-fold diagnostics the capacity study recorded, averaged per depth × config."""
    import optuna

    from medspt.study import make_storage, results_frame

    try:
        study = optuna.load_study(study_name=f"paper-{name}", storage=make_storage(storage))
    except (KeyError, Exception) as e:  # no study yet: say so
        return ["", f"No capacity study `paper-{name}` in the storage ({type(e).__name__})."]
    res = results_frame(study)
    if res.empty or "locality_ratio" not in res:
        return ["", f"The capacity study `paper-{name}` has no diagnostics yet."]
    cols = ["balanced_accuracy", "attention_distance", "locality_ratio"]
    cols += [c for c in ("positional_spearman",) if c in res]
    g = res.groupby(["depth", "config"])
    table = g[cols].mean().join(g.size().rename("fits")).reset_index()
    uni = res["uniform_distance"].iloc[0]
    lines = [
        "",
        f"From the capacity study `paper-{name}` (every finished fold × seed; mean over "
        f"them; uniform attention distance {uni:.2f}):",
        "",
        "| depth | config | balanced accuracy | attention distance | locality | positional ρ "
        "| fits |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    for r in table.to_dict("records"):
        rho = r.get("positional_spearman", np.nan)
        lines.append(
            f"| {r['depth']} | {r['config']} | {r['balanced_accuracy']:.3f} | "
            f"{r['attention_distance']:.2f} | {r['locality_ratio']:.2f} | "
            f"{'–' if pd.isna(rho) else f'{rho:.2f}'} | {r['fits']} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--protocols", nargs="+", default=["GPD-1", "NE-1"])
    ap.add_argument("--depths", type=int, nargs="+", default=[2, 8])
    ap.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    ap.add_argument("--fold", type=int, default=0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--d-model", type=int, default=32)
    ap.add_argument("--n-heads", type=int, default=4)
    ap.add_argument("--epochs", type=int, default=15)
    ap.add_argument("--pretrain-epochs", type=int, default=10)
    ap.add_argument("--root", default=None, help="data root (default: MEDSPT_DATA)")
    ap.add_argument("--storage", default=None, help="default: the protocol's paper_table journal")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)

    import torch

    import medspt
    from medspt.datasets.protocols import protocol
    from medspt.evaluation.diagnostics import write_diagnostics

    warnings.filterwarnings("ignore")
    t0 = time.perf_counter()
    params = dict(
        d_model=args.d_model,
        n_heads=args.n_heads,
        epochs=args.epochs,
        pretrain_epochs=args.pretrain_epochs,
        batch_size=64,
    )
    figs = args.out / "proximity"
    sections = []
    for name in args.protocols:
        try:
            p = protocol(name, root=args.root)
        except Exception as e:
            sections += [f"## {name}", "", f"Skipped: data not available ({e}).", ""]
            continue
        print(f"{name}: fold {args.fold}, seed {args.seed}", file=sys.stderr)
        sections += [
            f"## {name}",
            "",
            f"Models fitted on the training subjects of fold {args.fold} (seed {args.seed}); "
            f"diagnostics on the fold's {len(p.folds[args.fold][1])} test windows (up to "
            "512). Tokens per window: "
            f"{-(-p.windows.X.shape[2] // 8)} (patches of 8 samples).",
        ]
        for depth in args.depths:
            models, acc, X = _fit_models(p, depth, args.configs, args.fold, args.seed, params)
            sub = f"{name}_depth{depth}"
            table = write_diagnostics(models, X, figs / sub, title=f"{name}, depth {depth}")
            table = table.merge(acc, left_on="model", right_on="config")
            sections += [
                "",
                f"### depth {depth}",
                "",
                "| model | balanced accuracy (this fold) | attention distance | uniform | "
                "locality | positional ρ | positional slope |",
                "|---|---:|---:|---:|---:|---:|---:|",
            ]
            for r in table.to_dict("records"):
                sections.append(
                    f"| {r['model']} | {r['balanced_accuracy']:.3f} | "
                    f"{r['attention_distance']:.2f} | {r['uniform_distance']:.2f} | "
                    f"{r['locality_ratio']:.2f} | {r['positional_spearman']:.2f} | "
                    f"{r['positional_slope']:.4f} |"
                )
            sections += ["", *_layer_lines(models, X), ""]
            sections.append(
                f"![distance profiles](proximity/{sub}/distance_profiles.png)"
                + "".join(
                    f" ![{m} positional score](proximity/{sub}/positional_{m}.png)" for m in models
                )
            )
            sections.append("")
        sections += _study_table(study_storage(name, args.storage), name)
        sections.append("")
    m = machine()
    lines = [
        "# Attention proximity: scratch vs SPT vs ALiBi",
        "",
        "Does masked reconstruction teach the model to attend to nearby tokens, where "
        "label-only training does not? *attention distance*: mean |i−j| in tokens under "
        "the model's attention on test windows (uniform attention: (N²−1)/(3N)); "
        "*locality*: attention mass within one token divided by its uniform share (1 = no "
        "preference); *positional ρ*: Spearman correlation of the input-free positional "
        "score S(i, j) = (W_Q·LN(p_i))·(W_K·LN(p_j))/√d with −|i−j| (1 = positions act as a "
        "proximity bias; ALiBi's is 1 by construction). Means over heads (and layers where "
        "not split). See `docs/diagnostics.md`.",
        "",
        *sections,
        "## Run",
        "",
        f"- command: `python benchmarks/proximity.py {' '.join(argv)}`",
        f"- model settings: {params}",
        f"- date: {dt.datetime.now().strftime('%Y-%m-%d %H:%M')}, wall time "
        f"{(time.perf_counter() - t0) / 60:.1f} min",
        f"- machine: {m['cpu']}, {m['cores']} logical cores, {m['os']}; torch threads "
        f"{torch.get_num_threads()}",
        f"- versions: medspt {medspt.__version__} ({git_revision()}), torch {torch.__version__}",
        "",
    ]
    text = "\n".join(lines)
    (args.out / "proximity.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    raise SystemExit(main())
