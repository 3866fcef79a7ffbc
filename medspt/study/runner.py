"""The capacity-versus-pretraining grid as an Optuna study: run it, join it, resume it.

One trial = one *cell* of the grid, ``(depth, config, seed)`` with config ``"scratch"`` or
``"spt-<masking>"``, evaluated on every subject-wise fold. The study's sampler is a
``GridSampler`` over exactly these three parameters. A worker loop picks the next cell
that has no completed trial and nobody working on it, enqueues it and runs it, so that

* a process killed at any moment loses only the trial it was running: on the next run
  that trial is marked failed (its worker is gone) and its cell is run again;
* failed trials keep their error message as a user attribute and are retried by the
  next run (not by the run that saw them fail, so a broken cell cannot loop);
* several workers (processes or machines) can share one study: a cell that two workers
  happened to start together is run by the lower-numbered trial; the other is pruned
  with ``duplicate_of`` set.

With ``tune=True`` each cell also tunes learning rate, width, mask ratio and pretraining
epochs (TPE) *separately in every outer fold*, in a study of its own per fold, on the
*validation subjects* held out inside that fold's training part: a fold's test subjects
never influence the settings it is scored with, and each fold row records the subjects
whose validation scores chose them (``selection_subjects``).

Every fold row keeps its out-of-fold predictions (``oof``: test windows, subjects, true
codes, probabilities), so reports can test over subjects (:mod:`medspt.evaluation.statistics`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import threading
import time as time_mod
import traceback
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import optuna
from optuna.trial import TrialState
from tqdm.auto import tqdm

from medspt._version import __version__
from medspt.api import check_params, fit_baseline_fold, fit_fold
from medspt.baselines import BASELINES, check_baselines
from medspt.core.errors import InputError
from medspt.core.jsonable import to_jsonable
from medspt.core.urls import redact
from medspt.data.windowset import WindowSet
from medspt.evaluation.diagnostics import attention_profile, positional_score
from medspt.nn.masking import STRATEGIES
from medspt.nn.training import resolve_device
from medspt.study import oof
from medspt.study.dashboard import refresh_note
from medspt.study.data import data_spec, load_study_data
from medspt.study.grid import Cell, CellGridSampler, search_space, study_cells
from medspt.study.storage import (
    HEARTBEAT_S,
    claim_lock,
    create_or_load,
    make_storage,
    storage_lost,
    storage_url,
)
from medspt.study.trials import (
    FOLD_ATTR,
    WORKER,
    completed_cells,
    duplicate_of,
    finished_folds,
    has_waiting,
    next_cell,
    poll_seconds,
    reap_dead_trials,
    running_cells,
    start_heartbeat,
)

__all__ = ["run_study", "run_worker"]


# --------------------------------------------------------------------------- one cell


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and np.isnan(v))


def _curves(clf) -> dict:
    """A fitted model's learning curves per stage, small enough for a trial attribute."""
    out = {}
    for stage, rows in clf.history_.items():
        if rows:
            out[stage] = {  # 5 significant digits: plenty for a curve, a third of the size
                k: [None if _missing(r.get(k)) else float(f"{r[k]:.5g}") for r in rows]
                # val_relative: pretraining's loss relative to the visible-mean baseline
                for k in ("train_loss", "val_loss", "val_balanced_accuracy", "val_relative")
                if k in rows[0]
            }
    return out


def _attention_stats(clf, X) -> dict:
    """Mean attention distance and locality ratio of a fold's model on (up to 256 of)
    its test windows, and the proximity statistics of its positional score; see
    :mod:`medspt.evaluation.diagnostics`."""
    stats = attention_profile(clf, X, max_windows=256).overall()
    if clf.model_.config.positional != "none":
        score = positional_score(clf)
        stats["positional_spearman"] = float(np.nanmean(score.spearman))
        stats["positional_slope"] = float(np.nanmean(score.slope))
    return stats


def _evaluate_cell(
    ws, folds, params: dict, trial=None, diagnostics: bool = False, fold_ids=None, done=None
) -> list[dict]:
    """Fit and score every fold (or those in ``fold_ids``); each row keeps the fold's
    out-of-fold predictions (``oof``); with ``diagnostics`` attention statistics too.
    Folds in ``done`` (fold -> row, from a stopped trial of the cell) are not fitted again."""

    def fit(k, tr, te):
        row, clf, proba = fit_fold(ws, tr, te, params)
        if diagnostics:
            row.update(_attention_stats(clf, ws.X[te]))
        row = {"fold": k, **row, "curves": _curves(clf)}  # row has val_score
        return {**row, "oof": oof.pack(ws, te, proba)}

    return _fold_rows(folds, fit, trial, fold_ids, done)


def _evaluate_baseline_cell(ws, folds, cell: Cell, trial=None, done=None) -> list[dict]:
    """A baseline's rows on every fold, in the format of :func:`_evaluate_cell`."""

    def fit(k, tr, te):
        row, _, proba = fit_baseline_fold(ws, tr, te, cell.config, cell.seed)
        return {"fold": k, **row, "oof": oof.pack(ws, te, proba)}

    return _fold_rows(folds, fit, trial, None, done)


def _fold_rows(folds, fit, trial, fold_ids, done) -> list[dict]:
    """``fit(k, train, test)`` on each fold not in ``done``; the trial stores every row as
    it is finished (``fold_<k>``), so a stopped cell resumes from its last finished fold
    instead of from its first (a deep cell on a CPU can outlast a working session)."""
    rows, done = [], done or {}
    for k, (tr, te) in enumerate(folds):
        if fold_ids is not None and k not in fold_ids:
            continue
        row = done[k] if k in done else fit(k, tr, te)
        rows.append(row)
        if trial is not None:
            trial.set_user_attr(f"{FOLD_ATTR}{k}", to_jsonable(row))
            trial.set_user_attr("folds_done", len(rows))
    return rows


def _tune_cell(study, cell: Cell, ws, folds, attrs: dict) -> tuple[list[dict], list[dict]]:
    """Tune one cell's hyperparameters separately inside each outer fold, on that fold's
    validation subjects only (nested: a fold's test subjects never influence its
    choice). Returns the test rows (one per fold, from its best inner trial) and the
    parameters chosen in each fold."""
    spt = cell.config.startswith("spt-")
    rows, chosen = [], []
    for k in range(len(folds)):
        inner = optuna.create_study(
            storage=study._storage,
            study_name=f"{study.study_name}/tune/{cell.key}/fold{k}",
            direction="maximize",
            load_if_exists=True,
            sampler=optuna.samplers.TPESampler(seed=cell.seed * 1000 + k),
        )

        def objective(t: optuna.Trial, k=k) -> float:
            p = cell.estimator_params(attrs["params"])
            p["lr"] = t.suggest_float("lr", 3e-4, 3e-3, log=True)
            p["d_model"] = t.suggest_categorical("d_model", [32, 64, 128])
            if spt:
                p["mask_ratio"] = t.suggest_float("mask_ratio", 0.15, 0.5)
                p["pretrain_epochs"] = t.suggest_categorical("pretrain_epochs", [10, 20, 40])
            (row,) = _evaluate_cell(
                ws, folds, p, diagnostics=attrs.get("diagnostics", False), fold_ids={k}
            )
            if not np.isfinite(row["val_score"]):
                raise InputError(
                    "tuning needs validation subjects inside each training fold (val_size "
                    "> 0 and at least 4 training subjects)"
                )
            t.set_user_attr("val_subjects", row["val_subjects"])
            t.set_user_attr("row", to_jsonable(row))
            return row["val_score"]

        n_done = len(inner.get_trials(states=(TrialState.COMPLETE,)))
        remaining = int(attrs["n_trials"]) - n_done
        if remaining > 0:
            inner.optimize(objective, n_trials=remaining, catch=(InputError,))
        best = inner.best_trial
        # every subject whose validation score took part in this fold's choice
        seen = {
            s
            for t in inner.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
            for s in str(t.user_attrs.get("val_subjects", "")).split()
        }
        row = dict(best.user_attrs["row"], tuned_params=dict(best.params))
        row["selection_subjects"] = " ".join(sorted(seen))
        rows.append(row)
        chosen.append(dict(best.params))
    return rows, chosen


# --------------------------------------------------------------------------- workers


def _objective(study, ws, folds, attrs: dict, failed: set[Cell]):
    """The trial function: run the trial's cell (tuned or not) unless another trial has
    it, keep its fold rows, and record errors on the trial (and the cell in ``failed``)."""
    space = search_space(attrs)
    metric = attrs["metric"]

    def objective(trial: optuna.Trial) -> float:
        trial.set_user_attr("worker", WORKER)
        cell = Cell(
            int(trial.suggest_categorical("depth", space["depth"])),
            str(trial.suggest_categorical("config", space["config"])),
            int(trial.suggest_categorical("seed", space["seed"])),
        )
        dup = duplicate_of(study, trial, cell)
        if dup is not None:
            trial.set_user_attr("duplicate_of", dup)
            raise optuna.TrialPruned(f"cell {cell.key} is already run by trial {dup}")
        trial.set_user_attr("started", dt.datetime.now().isoformat(timespec="seconds"))
        beating = start_heartbeat(study, trial._trial_id)
        try:
            done = _resumed_folds(study, trial, cell)
            if cell.config in BASELINES:  # nothing to tune, no attention to measure
                rows = _evaluate_baseline_cell(ws, folds, cell, trial=trial, done=done)
            elif attrs.get("tune"):  # its inner studies resume fold by fold themselves
                rows, best = _tune_cell(study, cell, ws, folds, attrs)
                trial.set_user_attr("tuned_params", to_jsonable(best))
            else:
                params = cell.estimator_params(attrs["params"])
                diagnostics = attrs.get("diagnostics", False)
                rows = _evaluate_cell(ws, folds, params, trial, diagnostics, done=done)
        except optuna.TrialPruned:
            raise
        except Exception as e:
            failed.add(cell)
            trial.set_user_attr("error", f"{type(e).__name__}: {e}")
            trial.set_user_attr("traceback", traceback.format_exc()[-3000:])
            raise
        finally:
            beating.set()
        trial.set_user_attr("folds", to_jsonable(rows))
        return mean_metric(rows, metric)

    return objective


def mean_metric(rows: list[dict], metric: str) -> float:
    """The trial's value: ``metric`` averaged over folds, NaN folds left out (a row taken
    from storage holds None where the metric was NaN)."""
    return float(np.nanmean([np.nan if r[metric] is None else r[metric] for r in rows]))


def _resumed_folds(study, trial, cell: Cell) -> dict[int, dict]:
    """The folds of ``cell`` that stopped trials finished, noted on ``trial``
    (``resumed_folds``: fold -> the trial that fitted it)."""
    found = finished_folds(study, cell)
    if found:
        trial.set_user_attr("resumed_folds", {str(k): n for k, (n, _) in sorted(found.items())})
    return {k: row for k, (_, row) in found.items()}


def _work(study: optuna.Study, ws, folds, attrs: dict, max_trials, verbose: bool) -> None:
    """:func:`_take_cells`, with a lost database connection told in one line (and not
    once more by each heartbeat thread that notices it)."""
    url, hook = storage_url(study), threading.excepthook

    def quiet_if_lost(args) -> None:
        if args.exc_value is None or storage_lost(args.exc_value, url) is None:
            hook(args)

    threading.excepthook = quiet_if_lost
    try:
        _take_cells(study, ws, folds, attrs, max_trials, verbose)
    except Exception as e:
        lost = storage_lost(e, url)
        if lost is None:
            raise
        raise lost from None
    finally:
        threading.excepthook = hook


def _take_cells(study: optuna.Study, ws, folds, attrs: dict, max_trials, verbose: bool) -> None:
    """Run cells of the study until its grid is complete (or ``max_trials`` ran): each
    time, under the claim lock, reap trials of stopped workers, choose the next cell,
    queue it unless queued, and take it. When every open cell is running elsewhere, wait
    for those workers: a cell of a worker that dies is failed by its missing heartbeat
    and run here."""
    cells = study_cells(attrs)
    failed: set[Cell] = set()
    objective = _objective(study, ws, folds, attrs, failed)
    # Choosing, queueing and taking a cell happen under the claim lock, which the trial
    # releases as soon as it runs: no two workers take the same cell or waiting trial.
    lock, claim = claim_lock(study), contextlib.ExitStack()

    def claimed(trial: optuna.Trial) -> float:
        claim.close()  # this trial is RUNNING and ours: the next worker may choose
        return objective(trial)

    done = completed_cells(study)
    bar = tqdm(total=len(cells), initial=done, desc=study.study_name, disable=not verbose)
    try:
        ran, waiting = 0, False
        while max_trials is None or ran < max_trials:
            with claim:
                claim.enter_context(lock)
                reaped = reap_dead_trials(study)
                if reaped and verbose:
                    tqdm.write(
                        f"marked {reaped} trial(s) of stopped workers as failed; rerunning them"
                    )
                cell, queued = next_cell(study, cells, failed)
                if cell is not None and not queued:
                    study.enqueue_trial(cell.params)
                # a retry queued for a cell that another trial completed meanwhile is taken
                # too: it ends as a duplicate instead of waiting in the queue for ever
                take = cell is not None or has_waiting(study)
                if take:
                    study.optimize(
                        claimed, n_trials=1, catch=(Exception,), callbacks=[_after_trial]
                    )
            if not take:
                if not _wait_for_others(study, failed, announce=verbose and not waiting):
                    break
                waiting = True
                continue
            ran, waiting = ran + (cell is not None), False
            bar.n = completed_cells(study)
            bar.refresh()
    finally:  # before any error, so that the error is the last line
        bar.close()
    if failed and verbose:
        print(
            f"{len(failed)} cell(s) failed: {sorted(c.key for c in failed)}; their errors are "
            "stored on the trials, and the next run retries them"
        )


def _wait_for_others(study: optuna.Study, failed: set[Cell], announce: bool) -> bool:
    """With no cell left to take: wait one heartbeat when other workers still run cells
    (True), or say that there is nothing left (False)."""
    busy = running_cells(study) - failed
    if not busy:
        return False
    if announce:  # above the progress bar, not through it
        tqdm.write(
            f"waiting for {len(busy)} cell(s) that other workers run "
            f"({', '.join(sorted(c.key for c in busy)[:4])}); a worker that dies is "
            "noticed by its missing heartbeat and its cell is run here"
        )
    time_mod.sleep(poll_seconds(study))
    return True


def _after_trial(study: optuna.Study, trial: optuna.trial.FrozenTrial) -> None:
    """Refresh the dashboard's note after every completed trial."""
    if trial.state == TrialState.COMPLETE:
        try:
            refresh_note(study)
        except Exception as e:  # a note is a convenience; never stop the study for it
            print(f"note not refreshed: {e}")


# --------------------------------------------------------------------------- API


def run_study(
    data=None,
    *,
    protocol: str | None = None,
    depths: Sequence[int] = (1, 2, 4, 8),
    maskings: Sequence[str] = STRATEGIES,
    scratch: bool = True,
    alibi: bool = False,
    scratch_long: bool = True,
    baselines: Sequence[str] = ("minirocket",),
    seeds: Sequence[int] = (0,),
    storage: str = "sqlite:///medspt.db",
    study_name: str | None = None,
    n_trials: int | None = None,
    tune: bool = False,
    cv: int = 5,
    window: int | str = "auto",
    stride: int | str | None = None,
    label: str = "label",
    subject: str = "subject",
    recording: str | None = "recording",
    time: str | None = "time",
    channels: Sequence[str] | None = None,
    fs: float | None = None,
    max_missing: float = 0.5,
    drop_short: bool = False,
    strict: bool = False,
    metric: str = "balanced_accuracy",
    params: dict | None = None,
    diagnostics: bool = True,
    heartbeat: float = HEARTBEAT_S,
    verbose: bool = True,
) -> optuna.Study:
    """Run (or resume, or join) the capacity-versus-pretraining study.

    Parameters
    ----------
    data : DataFrame, WindowSet, path, "demo" or None
        A long DataFrame or WindowSet (this process only), a CSV/Parquet file or
        ``"demo"`` (the built-in synthetic data), which other workers can load too.
        With ``protocol``, an optional data folder for the protocol.
    protocol : {"GPD-1", "GPD-2", "NE-1", "CAM-1"}, optional
        Use a dataset protocol's windows and folds (DESIGN §4).
    depths, maskings, scratch, seeds
        The grid: every depth × {scratch, SPT with each masking} × seed.
    alibi : bool
        Add the configuration ``scratch-alibi``: label-only training with ALiBi's
        proximity bias instead of learned positions. Does an explicit proximity prior
        close the gap that SPT closes?
    scratch_long : bool, default=True
        Add ``scratch-long`` (with ``scratch`` and at least one masking): label-only
        training for SPT's whole budget (pretraining + fine-tuning epochs, the same
        number of optimizer steps), the compute-matched control.
    baselines : sequence of str, default=("minirocket",)
        Baselines run as one cell per seed on the same folds (:mod:`medspt.baselines`;
        ``()`` for none; a study from before baseline cells resumes with ``()``).
    storage : str
        Optuna storage URL: ``sqlite:///file.db`` (default ``sqlite:///medspt.db``), a
        database server such as ``postgresql+psycopg://user@host/db`` (workers on many
        machines, docs/distributed.md), or ``journal:file.log`` for several workers
        without a database.
    study_name : str, optional
        Default ``"medspt-<protocol>"`` or ``"medspt-<data file stem>"``.
    n_trials : int, optional
        Without tuning: the most cells this call runs (None = until the grid is done).
        With ``tune=True``: tuning trials per cell (default 20).
    tune : bool
        Tune lr, d_model, mask ratio and pretraining epochs per cell and per outer fold
        (TPE), on that fold's validation subjects only (nested).
    cv : int
        Subject-wise folds for data without a protocol.
    window, stride, label, subject, recording, time, channels, fs, max_missing, drop_short, strict
        How a DataFrame or file is read and cut, as in :func:`medspt.fit_spt` (the same
        options on the command line: ``--window``, ``--subject``, ...). They are stored
        in the study, so workers that join it cut identical windows; a protocol fixes
        its own, so none of them may be given with ``protocol``.
    metric : str
        The trial value: mean over folds of this test metric.
    params : dict, optional
        Further :class:`~medspt.SPTClassifier` parameters shared by every cell. An unknown
        key is an :class:`~medspt.InputError` naming the closest parameter; the grid sets
        ``depth``, ``masking``, ``pretrain`` and ``random_state`` (the seed) per cell.
    diagnostics : bool
        Record each fold model's mean attention distance and locality ratio on its test
        windows (:mod:`medspt.evaluation.diagnostics`); the report shows them per configuration.
    heartbeat : float, default=30
        Database storages: seconds between a running trial's heartbeats. A trial silent
        for four heartbeats counts as dead (its worker was killed or its machine died):
        the next worker that looks fails it and runs its cell again.
        ``params["device"]`` is this process's only, not part of the study's set-up.

    Returns
    -------
    optuna.Study
        Completed trials hold ``folds`` (per-fold metrics, epochs, wall time and learning
        curves) as user attributes; see :func:`medspt.study.results_frame`.
    """
    params = _checked_params(params, depths, maskings, seeds, scratch, alibi)
    device = _check_device(params.pop("device", None))  # this worker's, not the study's
    channels = None if channels is None else list(channels)
    options = dict(label=label, subject=subject, recording=recording, time=time)
    options |= dict(channels=channels, fs=fs, max_missing=max_missing, drop_short=drop_short)
    options |= dict(strict=strict)
    spec = data_spec(data, protocol, cv, window, stride, options)
    ws, folds = load_study_data(spec, data if spec["kind"] == "memory" else None)
    grid = _grid(depths, maskings, scratch, alibi, scratch_long, seeds, baselines)
    attrs = _study_attrs(spec, grid, ws, folds, params, metric, tune, n_trials, diagnostics)
    name = _default_name(spec, protocol) if study_name is None else study_name
    sampler = CellGridSampler(search_space(attrs), seed=0)
    study = _open_study(make_storage(storage, heartbeat), name, sampler, attrs)
    if verbose:
        print(
            f"study {name!r} in {redact(storage)}: {len(study_cells(attrs))} cells × "
            f"{len(folds)} folds on {len(ws)} windows of {len(np.unique(ws.groups))} subjects"
        )
    attrs = _on_device(study.user_attrs["medspt"], device)
    _work(study, ws, folds, attrs, None if tune else n_trials, verbose)
    return study


def _open_study(storage, name: str, sampler, attrs: dict) -> optuna.Study:
    """:func:`create_or_load`, saying how to resume a study from before baseline cells."""
    try:
        return create_or_load(storage, name, sampler=sampler, attrs=attrs)
    except InputError as e:
        if attrs["grid"].get("baselines") and "grid" in str(e):
            raise InputError(
                f"{e}. A study created before baselines were cells of the grid resumes with "
                "baselines=()"
            ) from None
        raise


def _check_device(device: str | None) -> str | None:
    """A device this machine has, or an error naming ``--device`` before any cell runs."""
    if device is not None:
        try:
            resolve_device(device)
        except (RuntimeError, ValueError) as e:
            raise InputError(f"{e}; use cpu, auto or a device this machine has") from None
    return device


def _on_device(attrs: dict, device: str | None) -> dict:
    """The study's attributes with this worker's device among the estimator parameters."""
    if device is None:
        return attrs
    return {**attrs, "params": {**attrs["params"], "device": device}}


def _checked_params(
    params: dict | None,
    depths: Sequence[int],
    maskings: Sequence[str],
    seeds: Sequence[int],
    scratch: bool,
    alibi: bool,
) -> dict:
    """The shared estimator parameters, once the grid and they are known to make sense."""
    params = dict(params or {})
    check_params(params, run_study, grid=True, in_params=True)
    for bad in ("depth", "pretrain", "masking", "random_state"):
        if bad in params:
            raise InputError(f"params may not set {bad!r}: the grid sets it per cell")
    # every configuration shares params' positions; scratch-alibi alone swaps in ALiBi's
    if alibi and params.get("positional") == "alibi":
        raise InputError(
            "params set positional='alibi' and the grid adds scratch-alibi, which would "
            "then be scratch again; leave positional out of params or drop the alibi "
            "configuration (alibi=False)"
        )
    unknown = [m for m in maskings if m not in STRATEGIES]
    if unknown:
        raise InputError(f"maskings {unknown} are not among {STRATEGIES}")
    if not depths or any(int(d) < 1 for d in depths):
        raise InputError(f"depths must be positive integers, got {list(depths)!r}")
    if not seeds:
        raise InputError("seeds is empty")
    if not scratch and not alibi and not maskings:
        raise InputError("nothing to run: scratch=False and no maskings")
    return params


def _grid(depths, maskings, scratch, alibi, scratch_long, seeds, baselines=()) -> dict:
    """The grid as stored in the study (``scratch-long`` needs scratch and a masking;
    ``baselines`` only when there are some, so that older studies resume unchanged)."""
    grid = {
        "depths": [int(d) for d in depths],
        "maskings": list(maskings),
        "scratch": bool(scratch),
        "alibi": bool(alibi),
        "scratch_long": bool(scratch_long and scratch and len(maskings) > 0),
        "seeds": [int(s) for s in seeds],
    }
    baselines = check_baselines(baselines)
    if baselines:
        grid["baselines"] = list(baselines)
    return grid


def _study_attrs(
    spec: dict,
    grid: dict,
    ws: WindowSet,
    folds: list,
    params: dict,
    metric: str,
    tune: bool,
    n_trials: int | None,
    diagnostics: bool,
) -> dict:
    """The study's ``medspt`` user attribute: everything a joining worker, the report and
    the refit need to redo or read the study."""
    return {
        "data": spec,
        "grid": grid,
        "diagnostics": bool(diagnostics),
        "metric": metric,
        "params": to_jsonable(params),
        "tune": bool(tune),
        "n_trials": int(n_trials or 20) if tune else None,
        "n_folds": len(folds),
        "classes": [str(c) for c in ws.classes],
        "medspt_version": __version__,
        "created": dt.datetime.now().isoformat(timespec="seconds"),
    }


def _default_name(spec: dict, protocol: str | None) -> str:
    """``medspt-<protocol>``, ``medspt-<data file stem>``, ``medspt-demo`` or ``medspt-memory``."""
    stem = protocol or (Path(spec["path"]).stem if spec["kind"] == "file" else spec["kind"])
    return f"medspt-{stem}"


def run_worker(
    storage: str,
    study_name: str,
    verbose: bool = True,
    *,
    heartbeat: float = HEARTBEAT_S,
    device: str | None = None,
) -> optuna.Study:
    """Join an existing study as one more worker and run cells until the grid is done.

    ``device`` (``"cuda:1"``, ``"cpu"``, ...) is this worker's, whatever the study was
    created with; ``heartbeat`` as in :func:`run_study`."""
    _check_device(device)
    st = make_storage(storage, heartbeat)
    try:
        study = optuna.load_study(study_name=study_name, storage=st)
    except KeyError:
        names = [s.study_name for s in optuna.get_all_study_summaries(st)]
        raise InputError(
            f"no study {study_name!r} in {redact(storage)}; studies there: {names}. Create it "
            "with `medspt study run` first"
        ) from None
    attrs = study.user_attrs.get("medspt")
    if attrs is None:
        raise InputError(f"study {study_name!r} was not created by medspt")
    study.sampler = CellGridSampler(search_space(attrs), seed=0)
    ws, folds = load_study_data(attrs["data"])
    _work(study, ws, folds, _on_device(attrs, device), None, verbose)
    return study
