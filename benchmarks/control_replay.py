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
    MEDSPT_DATA=... python benchmarks/control_replay.py --refit --protocols NE-1

``--refit`` fits the marked fits again under the new rule (``control_refit/<protocol>.csv``
and predictions, appended, resumable); the capacity report takes them in place of the
stored ones (:func:`with_refits`) and says how many are still pending.
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
    ap = parser(__doc__, "data")
    ap.add_argument("--protocols", nargs="+", default=["GPD-1", "NE-1"])
    ap.add_argument("--refit", action="store_true",
                    help="refit the fits control_replay.csv marks (resumable; one process "
                    "per protocol)")  # fmt: skip
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    if args.refit:
        import torch

        torch.set_num_threads(1)  # one process per protocol on a small machine
        for p in args.protocols:
            refit(p, args.data)
        return 0
    table = pd.concat([replay(p) for p in args.protocols], ignore_index=True)
    table.to_csv(RESULTS / "control_replay.csv", index=False)
    text = report(table)
    write_report(RESULTS / "control_replay.md", text)
    print(text)
    return 0


def refit_paths(protocol: str):
    """Where the refitted scratch-long fold fits of a protocol are appended: rows (CSV)
    and out-of-fold predictions (one compressed CSV per fit)."""
    base = RESULTS / "control_refit"
    return base / f"{protocol}.csv", base / protocol


def refit(protocol: str, root=None) -> None:
    """Refit, under the new control rule, every scratch-long fold fit of the protocol that
    ``control_replay.csv`` marks (``refit``), each appended as soon as it is done; fits
    already appended are skipped (resumable)."""
    import time

    import optuna
    from _baselines_folds import load_windows
    from _common import append_csv, git_revision
    from _paper_table_report import _studies

    from medspt.api import _fit_job  # the fold-fitting step of evaluate, one fit at a time

    todo = pd.read_csv(RESULTS / "control_replay.csv")
    todo = todo[(todo["protocol"] == protocol) & todo["refit"]]
    csv, pred_dir = refit_paths(protocol)
    done = set()
    if csv.exists():
        prev = pd.read_csv(csv)
        done = {(int(d), int(s), int(k)) for d, s, k in prev[["depth", "seed", "fold"]].to_numpy()}
    revision = git_revision()  # refuses uncommitted code
    name, ws, folds, _ = load_windows(protocol, root)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    params = {}
    for study in _studies(protocol, study_storage(protocol)):
        if study.study_name in set(todo["study"]):
            params = dict(study.user_attrs["medspt"].get("params", {}))
    for r in todo.sort_values(["seed", "depth", "fold"]).itertuples():
        key = (int(r.depth), int(r.seed), int(r.fold))
        if key in done:
            continue
        t0 = time.time()
        config = dict(config="scratch-long", depth=int(r.depth), masking=None, pretrain=False)
        row, pred = _fit_job(ws, folds[r.fold], int(r.fold), config, int(r.seed), params)
        pred_dir.mkdir(parents=True, exist_ok=True)
        pred.to_csv(pred_dir / f"depth{r.depth}_seed{r.seed}_fold{r.fold}.csv.gz", index=False,
                    float_format="%.4g")  # fmt: skip
        append_csv(csv, pd.DataFrame([row]).assign(study=r.study, revision=revision,
                                                   replaced_epoch=r.stored))  # fmt: skip
        print(f"{protocol} scratch-long depth {r.depth} seed {r.seed} fold {r.fold}: kept "
              f"epoch {row['finetune_epoch']} (was {r.stored}), "
              f"{(time.time() - t0) / 60:.1f} min", flush=True)  # fmt: skip


def refit_progress(protocol: str) -> tuple[int, int]:
    """``(needed, done)``: the capacity grid's scratch-long fold fits of ``protocol`` that
    the new control rule changes, and how many of them have been refitted."""
    marks = RESULTS / "control_replay.csv"
    if not marks.exists():
        return 0, 0
    todo = pd.read_csv(marks)
    todo = todo[(todo["protocol"] == protocol) & todo["refit"]]
    need = {(int(d), int(s), int(k)) for d, s, k in todo[["depth", "seed", "fold"]].to_numpy()}
    csv, _ = refit_paths(protocol)
    rows = pd.read_csv(csv) if csv.exists() else pd.DataFrame(columns=["depth", "seed", "fold"])
    done = {(int(d), int(s), int(k)) for d, s, k in rows[["depth", "seed", "fold"]].to_numpy()}
    return len(need), len(need & done)


def with_refits(protocol: str, res):
    """The capacity grid's results ``res`` with its scratch-long fold fits under the new
    control rule: the refitted ones where ``control_refit/<protocol>.csv`` has them, the
    stored ones where the rule keeps the same epoch. Returns the results and the number of
    fold fits still under the old rule (refits not yet run)."""
    from medspt.api import Results
    from medspt.estimator.metrics import read_predictions

    marks = RESULTS / "control_replay.csv"
    if not marks.exists() or res.predictions is None:
        return res, 0
    todo = pd.read_csv(marks)
    todo = todo[(todo["protocol"] == protocol) & todo["refit"]]
    csv, pred_dir = refit_paths(protocol)
    rows = pd.read_csv(csv) if csv.exists() else pd.DataFrame(columns=["depth", "seed", "fold"])
    new = {(int(d), int(s), int(k)) for d, s, k in rows[["depth", "seed", "fold"]].to_numpy()}
    pending = len({(int(d), int(s), int(k)) for d, s, k in
                   todo[["depth", "seed", "fold"]].to_numpy()} - new)  # fmt: skip
    if not new:
        return res, pending

    def _replaced(frame):
        long = frame["config"] == "scratch-long"
        keys = zip(frame["depth"].fillna(-1).astype(int), frame["seed"], frame["fold"])
        return long.to_numpy() & pd.Series([k in new for k in keys], index=frame.index)

    kept = pd.DataFrame(res)[~_replaced(pd.DataFrame(res)).to_numpy()]
    added = rows.drop(columns=["study", "revision", "replaced_epoch"], errors="ignore")
    out = Results(pd.concat([kept, added], ignore_index=True))
    pred = res.predictions[~_replaced(res.predictions).to_numpy()]
    files = [read_predictions(f) for f in sorted(pred_dir.glob("*.csv.gz"))]
    out.predictions = pd.concat([pred, *files], ignore_index=True)
    return out, pending


if __name__ == "__main__":
    sys.exit(main())
