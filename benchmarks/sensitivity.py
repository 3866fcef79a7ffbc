"""How much do single settings move a protocol's score? A one-change-at-a-time sweep.

The capacity table (``paper_table.py``) varies depth and pretraining; this sweep varies
everything else, one setting at a time, for one depth and configuration, on the
protocol's subject-wise folds: normalization, learning rate, width, dropout, weight
decay, pooling, positions, patch length, epochs, batch size, pretraining. It answers
"is the gap to a baseline a matter of tuning?" and shows how large seed-to-seed noise is
next to each change.

Every row is scored on the test folds, so the best row is an optimistic estimate: use
the sweep to see which settings matter, and choose settings on validation subjects
(``medspt study run --tune``), not from this table.

    MEDSPT_DATA=/path/to/data python benchmarks/sensitivity.py --protocol NE-1 --seeds 0 1
    python benchmarks/sensitivity.py --protocol NE-1 --variants base window window+cls

Writes ``benchmarks/results/sensitivity_<protocol>.md`` and ``.csv`` (one row per variant,
seed and fold); with ``--tag T``, ``sensitivity_<protocol>_T.md`` and ``.csv``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
import warnings
from pathlib import Path

import pandas as pd
from _common import RESULTS, git_revision, machine
from baselines import load_windows

from medspt.estimator.classifier import PAPER_RECIPE

# The model of paper_table.py's recorded grid, label-only (scratch), depth 2.
BASE = dict(
    depth=2, d_model=32, n_heads=4, epochs=15, pretrain_epochs=10, batch_size=64, pretrain=False,
    **PAPER_RECIPE,
)  # fmt: skip
W = {"normalize": "window"}
# name -> settings changed from BASE; most change one thing on top of per-window centring
VARIANTS: dict[str, dict] = {
    "base": {},
    "window": W,
    "window+dropout0.3": {**W, "dropout": 0.3},
    "window+lr3e-4": {**W, "lr": 3e-4},
    "window+lr3e-3": {**W, "lr": 3e-3},
    "window+lr1e-2": {**W, "lr": 1e-2},
    "window+d_model16": {**W, "d_model": 16},
    "window+d_model64": {**W, "d_model": 64},
    "window+depth1": {**W, "depth": 1},
    "window+depth4": {**W, "depth": 4},
    "window+weight_decay0.1": {**W, "weight_decay": 0.1},
    "window+cls": {**W, "pooling": "cls"},
    "window+alibi": {**W, "positional": "alibi"},
    "window+patch4": {**W, "patch_len": 4},
    "window+patch16": {**W, "patch_len": 16},
    "window+epochs30": {**W, "epochs": 30},
    "window+batch32": {**W, "batch_size": 32},
    "window+no_validation": {**W, "val_size": 0.0},
    "window+spt-span": {**W, "pretrain": True, "masking": "span"},
    "window+spt-channel": {**W, "pretrain": True, "masking": "channel"},
}
# the same question once more on top of centring without a validation split (NE-1's best)
W0 = {**W, "val_size": 0.0}
VARIANTS |= {
    "window+no_validation+d_model64": {**W0, "d_model": 64},
    "window+no_validation+lr3e-3": {**W0, "lr": 3e-3},
    "window+no_validation+dropout0.3+epochs30": {**W0, "dropout": 0.3, "epochs": 30},
    "window+no_validation+spt-span0.4": {
        **W0,
        "pretrain": True,
        "masking": "span",
        "mask_ratio": 0.4,
        "pretrain_epochs": 20,
    },
    "window+no_validation+spt-channel": {**W0, "pretrain": True, "masking": "channel"},
}


def _describe(over: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in over.items()) or "(none)"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--protocol", default="NE-1", help="GPD-1, NE-1, CAM-1 or demo")
    ap.add_argument("--root", help="data folder (default: $MEDSPT_DATA)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument(
        "--variants", nargs="+", choices=tuple(VARIANTS), default=list(VARIANTS), metavar="V"
    )
    ap.add_argument(
        "--reference",
        help="variant the others are compared with (default: window if run, else the first)",
    )
    ap.add_argument("--metric", default="balanced_accuracy")
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--tag", help="suffix of the result files: sensitivity_<protocol>_<tag>")
    args = ap.parse_args(argv)
    if args.reference is not None and args.reference not in args.variants:
        ap.error(f"--reference {args.reference!r} is not among --variants")

    import torch
    from tqdm.auto import tqdm

    import medspt
    from medspt.api import fit_fold

    name, ws, folds, _ = load_windows(args.protocol, args.root)
    t0 = time.perf_counter()
    rows = []
    runs = [(v, s, k) for v in args.variants for s in args.seeds for k in range(len(folds))]
    for variant, seed, k in tqdm(runs, desc=f"{name} sweep"):
        params = {**BASE, **VARIANTS[variant], "random_state": seed}
        row, _, _ = fit_fold(ws, *folds[k], params)
        rows.append({"variant": variant, "seed": seed, "fold": k, **row})
    df = pd.DataFrame(rows)

    m = args.metric
    per_seed = df.groupby(["variant", "seed"], sort=False)[m].mean().unstack("seed")
    base_name = args.reference or ("window" if "window" in args.variants else args.variants[0])
    lines = [
        f"# Setting sensitivity on {name}",
        "",
        f"One change at a time from the model of the paper table's grid, label-only "
        f"(scratch), depth {BASE['depth']}: {_describe(BASE)}. {len(folds)} subject-wise "
        f"folds (the protocol's), seeds {args.seeds}; {m.replace('_', ' ')} on held-out "
        "subjects. Rows are scored on the test folds, so the best row is optimistic; "
        "the spread between seeds shows the noise a change must clear.",
        "",
        f"| variant | changed settings | {m} (mean ± std over folds × seeds) | "
        + " | ".join(f"seed {s}" for s in per_seed.columns)
        + f" | vs {base_name} | fit time (s) |",
        "|---|---|---:|" + "---:|" * len(per_seed.columns) + "---:|---:|",
    ]
    ref = df.loc[df["variant"] == base_name].set_index(["seed", "fold"])[m]
    for variant, g in df.groupby("variant", sort=False):
        diff = g.set_index(["seed", "fold"])[m] - ref
        seeds = " | ".join(f"{per_seed.loc[variant, s]:.3f}" for s in per_seed.columns)
        vs = "" if variant == base_name else f"{diff.mean():+.3f}"
        lines.append(
            f"| {variant} | {_describe(VARIANTS[variant])} | {g[m].mean():.3f} ± "
            f"{g[m].std(ddof=1):.3f} | {seeds} | {vs} | {g['wall_time_s'].mean():.0f} |"
        )
    mach = machine()
    cmd = " ".join(["python benchmarks/sensitivity.py", *argv])
    lines += [
        "",
        f"- command: `{cmd}`",
        f"- date: {dt.datetime.now().strftime('%Y-%m-%d %H:%M')}, wall time "
        f"{(time.perf_counter() - t0) / 60:.1f} min",
        f"- machine: {mach['cpu']}, {mach['cores']} logical cores, {mach['os']}; torch "
        f"threads {torch.get_num_threads()}",
        f"- versions: medspt {medspt.__version__} ({git_revision()}), torch "
        f"{torch.__version__}, python {sys.version.split()[0]}",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    stem = f"sensitivity_{name}" + (f"_{args.tag}" if args.tag else "")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{stem}.md").write_text(text)
    df.to_csv(args.out / f"{stem}.csv", index=False)
    print(f"written to {args.out / f'{stem}.md'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    warnings.filterwarnings("ignore")
    raise SystemExit(main())
