"""Do seed ensembles (``n_estimators``) help the default, and where? Development data only.

Issue 28 asks for seed ensembles "where they measurably help". This script fits the
default ``SPTClassifier(n_estimators=N)`` once per item and scores, on the item's held-out
part, every member alone and the ensembles of its first 1..N members (the mean of their
probabilities, what ``predict`` does). All members share one split and differ only in
seed (weights, masks, batch order), so "ensemble - mean single member" is a paired gain at
N times the fit cost. Items are development data, never a test split:

- ``public``: the six univariate public sets, the inner hold-out (25 %) of each TRAIN
  part, once per ``--split-seeds`` value (split seed 0 is the selection rounds' split);
- ``GPD-1`` / ``NE-1``: the inner split (whole subjects) of outer fold 0's training part.

Nothing here changes the default: a default with ``n_estimators > 1`` would have to win a
declared selection round. Rows are appended to ``ensemble_check.csv`` per item and skipped
when present, so the script resumes.

    python benchmarks/ensemble_check.py                       # public, split seeds 0 1 2
    MEDSPT_DATA=... python benchmarks/ensemble_check.py --parts GPD-1 NE-1
    python benchmarks/ensemble_check.py --report-only
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np
import pandas as pd
from _common import (
    RESULTS,
    append_csv,
    fmt_p,
    git_revision,
    params_hash,
    parser,
    write_report_with_run,
)

CSV = RESULTS / "ensemble_check.csv"
MD = RESULTS / "ensemble_check.md"
PARTS = ("public", "GPD-1", "NE-1")
KEY = ["part", "item", "split_seed", "n_members", "defaults"]


def base_hash() -> str:
    """The rows' key: the defaults with one member (``n_estimators`` is what this script
    varies), so the rows stay keyed when only the default member count changes."""
    return params_hash({"n_estimators": 1})


def member_probas(clf, X) -> list[np.ndarray]:
    """Each member's class probabilities on ``X`` alone (the fitted ensemble is left as
    it was)."""
    members = clf.members_
    try:
        out = []
        for model in members:
            clf.members_ = [model]
            out.append(clf.predict_proba(X))
        return out
    finally:
        clf.members_ = members


def ensemble_scores(probas: list[np.ndarray], classes: np.ndarray, y) -> dict:
    """Balanced accuracy of each member alone and of the first-k ensembles, k = 1..N."""
    from sklearn.metrics import balanced_accuracy_score

    def score(p: np.ndarray) -> float:
        return float(balanced_accuracy_score(y, classes[p.argmax(1)]))

    single = [score(p) for p in probas]
    running = np.cumsum(probas, axis=0)  # (N, M, K): sums of the first k members
    out = {f"ensemble_{k + 1}": score(running[k] / (k + 1)) for k in range(len(probas))}
    return {
        "single_mean": float(np.mean(single)),
        "single_min": min(single),
        "single_max": max(single),
        **out,
    }


def fit_item(X_fit, y_fit, g_fit, X_val, y_val, n_members: int) -> dict:
    """One default fit with ``n_members`` seeds on the item's fit part, scored on its
    held-out part."""
    from medspt import SPTClassifier

    start = time.time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = SPTClassifier(n_estimators=n_members, random_state=0)
        clf.fit(X_fit, y_fit, groups=g_fit)
        probas = member_probas(clf, X_val)
    scores = ensemble_scores(probas, clf.classes_, np.asarray(y_val))
    return {**scores, "fit_s": round(time.time() - start, 1), "n_val": len(y_val)}


def public_items(split_seeds):
    """(item, split seed, data) for the univariate public sets' inner hold-outs."""
    from export_public_sets import UNIVARIATE, inner_split
    from select_model import PUBLIC_CACHE

    for seed in split_seeds:
        for name in UNIVARIATE:
            path = PUBLIC_CACHE / f"{name}.npz"
            if not path.is_file():
                raise SystemExit(
                    f"{path} is missing; run `python benchmarks/export_public_sets.py` first"
                )
            d = np.load(path, allow_pickle=False)
            X, y = d["X_train"], d["y_train"].astype(str)
            fit, val = inner_split(y, seed=seed)
            yield name, seed, (X[fit], y[fit], None, X[val], y[val])


def protocol_items(name: str, root):
    """(item, split seed, data) for the inner split of outer fold 0 of a protocol."""
    from select_model import protocol_items as inner

    for item, data in inner(name, root, (0,)):
        yield item, 0, data


def run(parts, split_seeds, n_members: int, root) -> None:
    """Fit and append every item of ``parts`` not yet in the CSV."""
    done = pd.read_csv(CSV) if CSV.is_file() else pd.DataFrame(columns=KEY)
    have = set(map(tuple, done[KEY].astype(str).to_numpy()))
    defaults = base_hash()
    for part in parts:
        items = public_items(split_seeds) if part == "public" else protocol_items(part, root)
        for item, seed, data in items:
            key = tuple(map(str, (part, item, seed, n_members, defaults)))
            if key in have:
                continue
            row = {"part": part, "item": item, "split_seed": seed, "n_members": n_members}
            row |= fit_item(*data, n_members)
            row |= {"defaults": defaults, "revision": git_revision()}
            print(
                f"{part:<7} {item:<22} split {seed}: single {row['single_mean']:.3f}, "
                f"ensemble {row[f'ensemble_{n_members}']:.3f} ({row['fit_s']:.0f} s)",
                flush=True,
            )
            append_csv(CSV, pd.DataFrame([row]))


def gains(rows: pd.DataFrame, n: int) -> pd.DataFrame:
    """Per part and item (split seeds averaged: they share the item's data), the mean
    single member, the ensembles of 3 and ``n`` and the gain of ``n`` over one member."""
    cols = list(dict.fromkeys(["single_mean", f"ensemble_{min(3, n)}", f"ensemble_{n}"]))
    out = rows.groupby(["part", "item"], sort=False)[cols].mean()
    out["gain"] = out[f"ensemble_{n}"] - out["single_mean"]
    out["splits"] = rows.groupby(["part", "item"], sort=False)["split_seed"].nunique()
    return out.reset_index()


def summary(per_item: pd.DataFrame) -> list[dict]:
    """Per part: mean gain over its items with a bootstrap interval and a sign-flip p
    (items are the units; one item gives the gain alone)."""
    from medspt.evaluation.statistics import bootstrap_ci, sign_flip_test

    out = []
    for part, g in per_item.groupby("part", sort=False):
        d = g["gain"].to_numpy()
        lo, hi = bootstrap_ci(d)
        n = len(d)
        out.append(
            {
                "part": part,
                "n": n,
                "gain": d.mean(),
                "lo": lo / n,
                "hi": hi / n,
                "p": sign_flip_test(d),
            }  # fmt: skip
        )
    return out


def report(rows: pd.DataFrame, defaults: str) -> str:
    """Tables of the per-item scores and the per-part gains under ``defaults``."""
    rows = rows[rows["defaults"] == defaults]
    if rows.empty:
        return f"# Seed ensembles of the default\n\nNo rows for defaults `{defaults}` yet.\n"
    n = int(rows["n_members"].max())
    rows = rows[rows["n_members"] == n]
    per_item = gains(rows, n)
    k3 = f"ensemble_{min(3, n)}"
    lines = [
        "# Seed ensembles of the default (issue 28, development data only)",
        "",
        f"`SPTClassifier(n_estimators={n})` with today's defaults, fitted once per item; "
        "each member scored alone and the ensembles of its first members scored on the "
        "item's held-out part (balanced accuracy). Public items: inner hold-outs of the "
        "TRAIN parts (split seeds averaged); GPD-1 / NE-1: inner split of outer fold 0 "
        "(windows). No test split is read. Round 7 of `select_model.py` read the public "
        'rows (declared when 3 of them had run) and made `n_estimators="auto"` (five '
        "members below 300 labelled windows) the default.",
        "",
        f"| part | item | splits | one member (mean) | {min(3, n)} members | {n} members | "
        f"gain of {n} |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in per_item.itertuples():
        lines.append(
            f"| {r.part} | {r.item} | {r.splits} | {r.single_mean:.3f} | "
            f"{getattr(r, k3):.3f} | {getattr(r, f'ensemble_{n}'):.3f} | {r.gain:+.3f} |"
        )
    lines += [
        "",
        f"Gain of {n} members over one, per part (items are the units; 95 % bootstrap "
        "interval of the mean; two-sided sign-flip p):",
        "",
        "| part | items | mean gain | 95 % CI | p |",
        "|---|---:|---:|---:|---:|",
    ]
    for s in summary(per_item):
        ci = "–" if s["n"] < 2 else f"[{s['lo']:+.3f}, {s['hi']:+.3f}]"
        lines.append(f"| {s['part']} | {s['n']} | {s['gain']:+.3f} | {ci} | {fmt_p(s['p'])} |")
    fit = rows.groupby("part", sort=False)["fit_s"].mean()
    lines += [
        "",
        f"Cost: an ensemble of {n} trains {n} models, so a fit takes about {n} times as "
        "long; mean fit of the whole ensemble here: "
        + ", ".join(f"{p} {s:.0f} s" for p, s in fit.items())
        + ".",
        "",
        f"Defaults `{defaults}`; code revisions: "
        + ", ".join(sorted(rows["revision"].astype(str).unique()))
        + ".",
        "",
    ]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = parser(__doc__, "data", "threads")
    ap.add_argument("--parts", nargs="+", default=["public"], help=f"of {list(PARTS)}")
    ap.add_argument("--split-seeds", type=int, nargs="+", default=[0, 1, 2],
                    help="inner-split seeds of the public sets (default 0 1 2)")  # fmt: skip
    ap.add_argument("--members", type=int, default=5, help="n_estimators (default 5)")
    ap.add_argument("--report-only", action="store_true", help="rewrite the report, fit nothing")
    args = ap.parse_args(argv)
    unknown = sorted(set(args.parts) - set(PARTS))
    if unknown:
        ap.error(f"--parts: unknown {unknown}; choose from {list(PARTS)}")
    if args.members < 2:
        ap.error(f"--members must be at least 2 to compare an ensemble, got {args.members}")
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    start = time.time()
    if not args.report_only:
        git_revision()  # refuse before fitting on uncommitted changes
        run(args.parts, args.split_seeds, args.members, args.data)
    if not CSV.is_file():
        ap.error(f"{CSV.name} holds no rows yet; run without --report-only first")
    text = report(pd.read_csv(CSV), base_hash())
    wall = time.time() - start
    write_report_with_run(MD, text, "ensemble_check.py", argv or sys.argv[1:], wall, args.threads)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
