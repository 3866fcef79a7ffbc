"""Does MiniRocket inside medspt (aeon, ``medspt.baselines``) reproduce the stored tsai
MiniRocket fold scores on GPD-1 and NE-1?

Reads two runs of ``benchmarks/baselines.py`` on the same protocol, folds and seeds 0-2:
the stored tsai run (``baselines_<protocol>_minirocket-oof``) and the run through
``medspt.baselines`` (``--models minirocket --tag aeon-minirocket``). It checks that each
fold holds the same test subjects in both, then prints per fold the mean over seeds of
each, their difference and the spread over seeds (the noise a difference is measured
against), and the paired comparison over subjects (seeds averaged within subjects).

    MEDSPT_DATA=... python benchmarks/baselines.py --protocol GPD-1 --models minirocket \\
        --seeds 0 1 2 --threads 1 --tag aeon-minirocket
    python benchmarks/minirocket_check.py            # writes results/minirocket_check.md
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd
from _common import RESULTS

from medspt.estimator.metrics import read_predictions
from medspt.evaluation.statistics import compare_subjects

OLD, NEW = "minirocket-oof", "aeon-minirocket"
MD = RESULTS / "minirocket_check.md"
METRICS = ("balanced_accuracy", "subject_accuracy")


def load(protocol: str, tag: str) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """Rows and out-of-fold predictions of one stored run (None when absent)."""
    csv = RESULTS / f"baselines_{protocol}_{tag}.csv"
    pred = RESULTS / f"baselines_{protocol}_{tag}_predictions.csv.gz"
    if not (csv.is_file() and pred.is_file()):
        return None
    return pd.read_csv(csv), read_predictions(pred)


def fold_subjects(pred: pd.DataFrame) -> dict[int, frozenset]:
    """Test subjects of each fold (seed 0's, which every seed shares)."""
    first = pred[pred["seed"] == pred["seed"].min()]
    return {int(k): frozenset(g["subject"].astype(str)) for k, g in first.groupby("fold")}


def fold_table(old: pd.DataFrame, new: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Per fold: mean and std over seeds of each run, and the difference of the means."""
    a = old.groupby("fold")[metric].agg(["mean", "std"])
    b = new.groupby("fold")[metric].agg(["mean", "std"])
    out = pd.DataFrame(
        {"tsai": a["mean"], "tsai_sd": a["std"], "aeon": b["mean"], "aeon_sd": b["std"]}
    )
    out["diff"] = out["aeon"] - out["tsai"]
    return out


def report_protocol(protocol: str) -> list[str]:
    old, new = load(protocol, OLD), load(protocol, NEW)
    if old is None or new is None:
        return [f"## {protocol}", "", "Not run yet (one of the two runs is missing).", ""]
    (old_rows, old_pred), (new_rows, new_pred) = old, new
    same = fold_subjects(old_pred) == fold_subjects(new_pred)
    lines = [f"## {protocol}", "",
             f"Test subjects per fold identical in both runs: **{'yes' if same else 'NO'}** "
             f"({len(fold_subjects(new_pred))} folds, "
             f"{sum(map(len, fold_subjects(new_pred).values()))} subjects); seeds "
             f"{sorted(new_rows['seed'].unique().tolist())} in each run.", ""]  # fmt: skip
    for metric in METRICS:
        if new_rows[metric].isna().all():
            continue
        t = fold_table(old_rows, new_rows, metric)
        lines += [f"{metric.replace('_', ' ')} (mean ± sd over seeds):", "",
                  "| fold | tsai MiniRocket | medspt.baselines (aeon) | difference |",
                  "|---:|---:|---:|---:|"]  # fmt: skip
        for k, r in t.iterrows():
            lines.append(f"| {k} | {r.tsai:.3f} ± {r.tsai_sd:.3f} | {r.aeon:.3f} ± "
                         f"{r.aeon_sd:.3f} | {r['diff']:+.3f} |")  # fmt: skip
        lines.append(f"| mean | {t.tsai.mean():.3f} | {t.aeon.mean():.3f} | "
                     f"{t['diff'].mean():+.3f} |")  # fmt: skip
        lines += ["", f"Typical seed sd within a fold: tsai {t.tsai_sd.mean():.3f}, aeon "
                  f"{t.aeon_sd.mean():.3f}; largest fold difference "
                  f"{t['diff'].abs().max():.3f}.", ""]  # fmt: skip
    c = compare_subjects(
        new_pred.assign(config="aeon"), old_pred.assign(config="tsai"), "balanced_accuracy"
    )
    ci = f"[{c['ci_low']:+.3f}, {c['ci_high']:+.3f}]"
    lines += [f"Paired over {c['n_subjects']} subjects (seeds averaged within subjects; "
              f"balanced accuracy): aeon − tsai = {c['diff']:+.3f} {ci}, "
              f"p = {c['p_value']:.3f}.", ""]  # fmt: skip
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--protocol", nargs="+", default=["GPD-1", "NE-1"])
    args = ap.parse_args(argv)
    lines = ["# MiniRocket inside medspt against the stored tsai runs", "",
             "Written by `benchmarks/minirocket_check.py` from the stored runs of "
             "`benchmarks/baselines.py`: tsai 1.0.1's MiniRocket (`baselines_<protocol>_"
             f"{OLD}`, its own environment) and aeon 1.6's through `medspt.baselines` "
             f"(`baselines_<protocol>_{NEW}`, medspt's environment), on the protocol's 5 "
             "subject-wise folds with seeds 0, 1, 2. The two differ by design in small "
             "ways: tsai fills missing values with 0 after standardizing, medspt.baselines "
             "interpolates; the kernels' random biases differ by library.", ""]  # fmt: skip
    for p in args.protocol:
        lines += report_protocol(p)
    MD.write_text("\n".join(lines))
    print(MD.read_text())
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())
