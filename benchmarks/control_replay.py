"""Which stored scratch-long fits does the new control rule change? (issue 59)

Before issue 59 the compute-matched control ``scratch-long`` ran every epoch of its cosine
schedule (``patience=None``) and kept the best validation epoch, often one inside warm-up.
Now it stops like scratch (``patience``, never in the first third of its epochs) and never
keeps an epoch that ends inside warm-up. Both rules walk the same training trajectory: the
schedule is planned from the same budget and every epoch is deterministic for a seed, so a
fit whose kept epoch is the same under both rules has the same weights and predictions,
and its stored result stands for the new control unchanged.

The capacity grid stores every fold's validation curve, so the new rule can be replayed
on it exactly (:func:`kept_epoch`; the replay of the old rule reproduces every stored kept
epoch, which checks it). This script writes, per protocol, which (depth, seed, fold) fits
keep another epoch under the new rule and must be refitted, to
``results/control_replay.csv`` and ``control_replay.md``. The label-efficiency rows stored
no curves: all their scratch-long fits are rerun (``label_efficiency.py --arms
scratch-long``).

    python benchmarks/control_replay.py
"""

from __future__ import annotations

import sys
import warnings

import pandas as pd
from _common import RESULTS, parser, study_storage, write_report

PATIENCE = 10  # the default's patience, which scratch-long now shares
WARMUP = 0.1  # the default's warm-up share of the schedule


def kept_epoch(
    val_balanced_accuracy: list[float],
    val_loss: list[float],
    steps: int,
    patience: int | None = PATIENCE,
    warmup: float = WARMUP,
    after_warmup: bool = True,
) -> int:
    """The epoch (1-based) fine-tuning keeps, replayed from a fit's validation curves.

    ``steps`` is the fit's optimizer steps over all ``len(val_loss)`` epochs it ran.
    ``patience=None, after_warmup=False`` is the old control's rule (every epoch, the best
    kept); the defaults are the new one (:func:`medspt.nn.training._fit_loop`): an epoch
    that ends inside warm-up is neither kept nor counted, and the run stops after
    ``patience`` epochs without improvement, never in the first third of its epochs. Ties
    in balanced accuracy go to the lower validation loss, then the earlier epoch.
    """
    n = len(val_loss)
    per = steps // n
    n_warm = max(1, int(round(warmup * per * n))) if after_warmup else 0
    best, best_epoch, stale, done = None, 0, 0, 0
    for epoch in range(1, n + 1):
        done += per
        if done < n_warm:
            continue
        score = (-round(val_balanced_accuracy[epoch - 1], 6), val_loss[epoch - 1])
        if best is None or score < best:
            best, best_epoch, stale = score, epoch, 0
        else:
            stale += 1
            if patience is not None and stale >= patience and epoch > n // 3:
                break
    return best_epoch


def replay(protocol: str) -> pd.DataFrame:
    """Every stored scratch-long fold fit of the protocol's default capacity grid, with
    the epoch it kept, the old rule's replay of it and the new rule's."""
    import optuna
    from _paper_table_report import _studies

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    rows = []
    for study in _studies(protocol, study_storage(protocol)):
        if not study.study_name.endswith("-default"):
            continue
        for t in study.get_trials(deepcopy=False, states=[optuna.trial.TrialState.COMPLETE]):
            if t.params.get("config") != "scratch-long":
                continue
            for r in t.user_attrs.get("folds", []):
                c = r["curves"]["finetune"]
                acc, loss, steps = c["val_balanced_accuracy"], c["val_loss"], r["optimizer_steps"]
                per = steps // len(loss)
                rows.append(dict(
                    protocol=protocol, study=study.study_name, depth=t.params["depth"],
                    seed=t.params["seed"], fold=r["fold"], epochs=len(loss),
                    warmup_epochs=-(-max(1, round(WARMUP * per * len(loss))) // per) - 1,
                    stored=r["finetune_epoch"],
                    old_rule=kept_epoch(acc, loss, steps, patience=None, after_warmup=False),
                    new_rule=kept_epoch(acc, loss, steps),
                ))  # fmt: skip
    out = pd.DataFrame(rows)
    if len(out):
        out["refit"] = out["new_rule"] != out["stored"]
        out["inside_warmup"] = out["stored"] <= out["warmup_epochs"]
    return out


def report(table: pd.DataFrame) -> str:
    lines = [
        "# scratch-long under the new control rule: which stored fits change",
        "",
        "Replayed from the validation curves the capacity grid stored for every fold "
        "(`benchmarks/control_replay.py`). *old rule*: every epoch run, the best validation "
        "epoch kept; *new rule*: scratch's patience and no epoch kept from inside warm-up. "
        "A fit whose kept epoch does not change keeps its stored result (same trajectory, "
        "same weights); the others are refitted.",
        "",
        "| protocol | fold fits | old rule replayed = stored | kept inside warm-up | kept "
        "after the new early stop | to refit |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for protocol, g in table.groupby("protocol", sort=False):
        late = g["refit"] & ~g["inside_warmup"]
        lines.append(
            f"| {protocol} | {len(g)} | {int((g['old_rule'] == g['stored']).sum())} | "
            f"{int(g['inside_warmup'].sum())} | {int(late.sum())} | {int(g['refit'].sum())} |"
        )
    return "\n".join([*lines, "", "The fits to refit are listed in `control_replay.csv`.", ""])


def main(argv: list[str] | None = None) -> int:
    ap = parser(__doc__)
    ap.add_argument("--protocols", nargs="+", default=["GPD-1", "NE-1"])
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    table = pd.concat([replay(p) for p in args.protocols], ignore_index=True)
    table.to_csv(RESULTS / "control_replay.csv", index=False)
    text = report(table)
    write_report(RESULTS / "control_replay.md", text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
