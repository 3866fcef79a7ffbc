"""Choose ``SPTClassifier``'s defaults by inner subject-wise validation, never by test folds.

The rule, declared before any run (also in ``docs/concepts.md``):

- Data: for each protocol (GPD-1, NE-1) and each of the outer folds ``--folds`` (by
  default 0, 1, 2), only that fold's *training* subjects are read. They are split once,
  subject-wise and stratified (:func:`medspt.splits.validation_split`, 25 %, seed = fold)
  into inner-train and inner-validation subjects. The outer test subjects of the fold are
  never loaded into a fit or a score.
- Each candidate below is fitted on the inner-train windows (seed 0; the estimator holds
  out its own validation subjects for early stopping inside them) and scored once on the
  inner-validation windows: balanced accuracy of windows, the protocols' headline metric.
- A candidate's score is the mean over folds, per protocol; the two protocols count
  equally. The highest score wins; a candidate within 0.005 of the best that comes earlier
  in the list wins instead (cheaper and simpler candidates come first).
- Caveat, stated rather than hidden: a subject that is in fold k's test part sits in other
  folds' inner data, so the chosen default has seen every subject's *training* role once.
  It never saw a test score: the outer test folds are scored once, afterwards, by
  ``benchmarks/paper_table.py --defaults``.

Candidates: ``R`` is the recipe built for issue 15: whole-token masks at 0.4,
per-window instance normalization (statistics from visible values in pretraining), jitter
+ scaling + time-shift augmentation, label smoothing 0.1, no weight decay on norms, biases
and positions, the pretrained encoder at half the head's learning rate, and a budget of
10 + 15 epochs with a floor of 600 optimizer steps per stage. The others change one thing
of ``R``. The previous default (step masks at 0.15, global channel scaling, 20 + 30
epochs) is not a candidate here, to fit the compute; the ablation in
``paper_table.py --defaults`` compares it on the test folds after the choice is fixed.

    MEDSPT_DATA=/path/to/data python benchmarks/select_defaults.py --protocol NE-1
    python benchmarks/select_defaults.py --report-only

Rows are appended to ``benchmarks/results/select_defaults_<protocol>.csv`` as they finish (a rerun
skips what is there); ``select_defaults.md`` holds the table and the choice.
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
from _common import RESULTS, git_revision, machine

RECIPE = dict(
    mask_unit="token",
    mask_ratio=0.4,
    normalize="instance",
    augment="jitter,scale,shift",
    label_smoothing=0.1,
    no_decay_norms=True,
    encoder_lr_scale=0.5,
    pretrain_epochs=10,
    epochs=15,
    min_steps=600,
)
CANDIDATES: dict[str, dict] = {
    "R": RECIPE,
    "R, ratio 0.3": {**RECIPE, "mask_ratio": 0.3},
    "R, ratio 0.6": {**RECIPE, "mask_ratio": 0.6},
    "R + mixup": {**RECIPE, "augment": "jitter,scale,shift,mixup"},
    "R, window centring": {**RECIPE, "normalize": "window"},
}
TIE = 0.005
MD = RESULTS / "select_defaults.md"


def inner_split(ws, train: np.ndarray, fold: int) -> tuple[np.ndarray, np.ndarray]:
    """Inner-train and inner-validation windows (indices into ``ws``) of an outer
    fold's training part; whole subjects, stratified by label."""
    from medspt.splits import validation_split

    labels = ws.classes[ws.y[train]]
    fit, val = validation_split(labels, ws.groups[train], val_size=0.25, random_state=fold)
    return train[fit], train[val]


def score_candidate(ws, fit: np.ndarray, val: np.ndarray, params: dict) -> dict:
    """Fit on ``fit`` windows, score balanced accuracy on ``val`` windows."""
    from sklearn.metrics import balanced_accuracy_score

    from medspt import SPTClassifier

    start = time.time()
    clf = SPTClassifier(**params, random_state=0).fit(ws.subset(fit))
    pred = clf.predict(ws.X[val])
    return {
        "balanced_accuracy": balanced_accuracy_score(ws.classes[ws.y[val]], pred),
        "fit_s": time.time() - start,
        "n_fit_subjects": len(np.unique(ws.groups[fit])),
        "n_val_subjects": len(np.unique(ws.groups[val])),
    }


def run(protocol_name: str, folds: list[int], root) -> None:
    """Score every candidate on every requested fold, appending rows to the CSV."""
    import torch

    from medspt.datasets.protocols import protocol

    torch.set_num_threads(1)  # one process per protocol on a small machine
    p = protocol(protocol_name, root=root)
    csv = RESULTS / f"select_defaults_{protocol_name}.csv"
    done = pd.read_csv(csv) if csv.exists() else pd.DataFrame(columns=["fold", "candidate"])
    for fold in folds:
        train = np.asarray(p.folds[fold][0])  # the outer test part is never touched
        fit, val = inner_split(p.windows, train, fold)
        for name, params in CANDIDATES.items():
            if ((done["fold"] == fold) & (done["candidate"] == name)).any():
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                row = score_candidate(p.windows, fit, val, params)
            row = {"protocol": protocol_name, "fold": fold, "candidate": name, **row}
            print(
                f"{protocol_name} fold {fold} {name:<22} "
                f"{row['balanced_accuracy']:.3f} ({row['fit_s']:.0f} s)",
                flush=True,
            )
            pd.DataFrame([row]).to_csv(csv, mode="a", header=not csv.exists(), index=False)


def choose(rows: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The table of mean inner scores and the winning candidate under the declared rule."""
    per = rows.pivot_table(
        index="candidate", columns="protocol", values="balanced_accuracy", aggfunc="mean"
    )
    per["score"] = per.mean(axis=1)  # protocols count equally
    per["fit_s"] = rows.groupby("candidate")["fit_s"].mean()
    per["folds"] = rows.groupby("candidate")["fold"].nunique()
    per = per.reindex([c for c in CANDIDATES if c in per.index])
    best = per["score"].max()
    winner = next(c for c in per.index if per.loc[c, "score"] >= best - TIE)
    return per, winner


def _markdown(frame: pd.DataFrame) -> str:
    """A frame with a (protocol, fold) index as a Markdown table, 3 decimals."""
    head = "| protocol | fold | " + " | ".join(frame.columns) + " |"
    rule = "|---|---:|" + "---:|" * len(frame.columns)
    body = [
        f"| {p} | {f} | " + " | ".join(f"{v:.3f}" for v in r) + " |"
        for (p, f), r in zip(frame.index, frame.to_numpy())
    ]
    return "\n".join([head, rule, *body])


def report(command: str) -> str:
    rows = pd.concat(pd.read_csv(f) for f in sorted(RESULTS.glob("select_defaults_*.csv")))
    per, winner = choose(rows)
    lines = [
        "# Choosing the defaults by inner validation",
        "",
        "Each number is a balanced accuracy on *inner-validation* subjects, held out of an "
        "outer fold's training subjects; no outer test subject was scored (the rule is in "
        "`benchmarks/select_defaults.py`). Mean over folds "
        f"{sorted(rows['fold'].unique().tolist())}, seed 0; `score` weighs the protocols "
        f"equally; ties within {TIE} go to the earlier candidate.",
        "",
        "| candidate | settings changed from the estimator's previous defaults | "
        + " | ".join(c for c in per.columns if c not in ("score", "fit_s", "folds"))
        + " | score | fit time (s) |",
        "|---|---|" + "---:|" * (len(per.columns) - 1),
    ]
    protocols = [c for c in per.columns if c not in ("score", "fit_s", "folds")]
    for name, r in per.iterrows():
        settings = ", ".join(f"{k}={v!r}" for k, v in CANDIDATES[name].items()) or "(none)"
        if name != "R" and name.startswith("R"):
            changed = {k: v for k, v in CANDIDATES[name].items() if RECIPE.get(k, object()) != v}
            settings = "R with " + ", ".join(f"{k}={v!r}" for k, v in changed.items())
        cells = " | ".join(f"{r[p]:.3f}" for p in protocols)
        mark = " **chosen**" if name == winner else ""
        lines.append(
            f"| {name}{mark} | {settings} | {cells} | {r['score']:.3f} | {r['fit_s']:.0f} |"
        )
    by_fold = rows.pivot_table(
        index=["protocol", "fold"], columns="candidate", values="balanced_accuracy"
    )
    lines += [
        "",
        f"Chosen: **{winner}**.",
        "",
        "Per fold (inner-validation balanced accuracy):",
        "",
        _markdown(by_fold.reindex(columns=[c for c in CANDIDATES if c in by_fold])),
        "",
        f"- command: `{command}`",
        f"- date: {dt.datetime.now():%Y-%m-%d %H:%M}; code {git_revision()}",
        "- machine: {cpu}, {cores} logical cores, {os}; torch threads 1".format(**machine()),
    ]
    return "\n".join(lines) + "\n"


# what produced the stored rows (the table itself is rebuilt with --report-only)
RUN_COMMAND = (
    "MEDSPT_DATA=... python benchmarks/select_defaults.py --protocol GPD-1 "
    "(and --protocol NE-1 in a second process)"
)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--protocol", nargs="+", default=["GPD-1", "NE-1"])
    ap.add_argument("--folds", nargs="+", type=int, default=[0, 1, 2])
    ap.add_argument("--root", default=os.environ.get("MEDSPT_DATA"))
    ap.add_argument("--report-only", action="store_true")
    args = ap.parse_args(argv)
    if not args.report_only:
        for name in args.protocol:
            run(name, args.folds, args.root)
    MD.write_text(report(RUN_COMMAND))
    print(MD.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
