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
codes, probabilities), so reports can test over subjects (:mod:`medspt.stats`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import socket
import threading
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import optuna
from optuna.storages._heartbeat import is_heartbeat_enabled
from optuna.trial import TrialState
from tqdm.auto import tqdm

from medspt._version import __version__
from medspt.api import DATA_DEFAULTS, check_params, config_params, fit_fold, windows_from
from medspt.core.jsonable import to_jsonable
from medspt.core.splits import check_folds, subject_folds
from medspt.core.tables import read_table
from medspt.data import WindowSet, WindowSpec
from medspt.errors import InputError
from medspt.masking import STRATEGIES
from medspt.study import oof
from medspt.study.storage import claim_lock, create_or_load, make_storage

__all__ = ["Cell", "grid_cells", "run_study", "run_worker", "load_study_data"]

WORKER = f"{socket.gethostname()}:{os.getpid()}"


@dataclass(frozen=True)
class Cell:
    """One point of the grid."""

    depth: int
    config: str  # "scratch" or "spt-<masking>"
    seed: int

    @property
    def params(self) -> dict:
        return {"depth": self.depth, "config": self.config, "seed": self.seed}

    @property
    def key(self) -> str:
        return f"depth{self.depth}-{self.config}-seed{self.seed}"

    def estimator_params(self, shared: dict | None = None) -> dict:
        """Estimator parameters of this cell on top of the study's ``shared`` ones."""
        return config_params(self.config, self.depth, self.seed, shared)


def grid_configs(
    maskings: Sequence[str], scratch: bool, alibi: bool = False, scratch_long: bool = False
) -> list[str]:
    """Configuration names: ``scratch``, ``scratch-long`` (label-only for SPT's whole
    budget of optimizer steps), ``scratch-alibi`` (label-only with ALiBi positions),
    then ``spt-<masking>`` for each masking."""
    return (
        (["scratch"] if scratch else [])
        + (["scratch-long"] if scratch_long else [])
        + (["scratch-alibi"] if alibi else [])
        + [f"spt-{m}" for m in maskings]
    )


def grid_cells(
    depths: Sequence[int],
    maskings: Sequence[str],
    scratch: bool,
    seeds: Sequence[int],
    alibi: bool = False,
    scratch_long: bool = False,
) -> list[Cell]:
    """Every cell, ordered by seed, then depth, then configuration: a study that stops
    early (or is watched while it runs) has covered the whole grid once before it
    repeats it with the next seed."""
    configs = grid_configs(maskings, scratch, alibi, scratch_long)
    return [Cell(int(d), c, int(s)) for s in seeds for d in depths for c in configs]


def _search_space(attrs: dict) -> dict:
    g = attrs["grid"]
    configs = grid_configs(
        g["maskings"], g["scratch"], g.get("alibi", False), g.get("scratch_long", False)
    )
    return {"depth": list(g["depths"]), "config": configs, "seed": list(g["seeds"])}


class CellGridSampler(optuna.samplers.GridSampler):
    """The grid of a study whose cells the worker loop enqueues one by one.

    Enqueued cells are tagged with their grid id like sampled ones (optuna leaves them
    untagged), and the study is never stopped by the sampler: the worker loop knows when
    every cell is complete, including retries of failed ones.
    """

    def before_trial(self, study, trial) -> None:
        fixed = trial.system_attrs.get("fixed_params")
        if fixed and "grid_id" not in trial.system_attrs:
            values = [fixed.get(name) for name in self._param_names]
            for grid_id, grid in enumerate(self._all_grids):
                if list(grid) == values:
                    study._storage.set_trial_system_attr(
                        trial._trial_id, "search_space", self._search_space
                    )
                    study._storage.set_trial_system_attr(trial._trial_id, "grid_id", grid_id)
                    return
        super().before_trial(study, trial)

    def after_trial(self, study, trial, state, values) -> None:
        pass  # the worker loop decides when the grid is done


def _cells(attrs: dict) -> list[Cell]:
    g = attrs["grid"]
    return grid_cells(
        g["depths"],
        g["maskings"],
        g["scratch"],
        g["seeds"],
        g.get("alibi", False),
        g.get("scratch_long", False),
    )


# --------------------------------------------------------------------------- data


# How a study's table is read and cut besides window and stride (fit_spt's data keywords).
# A data spec stores the ones that differ from their defaults (window and stride always),
# so a study started before an option existed resumes unchanged.
DATA_OPTIONS = {k: v for k, v in DATA_DEFAULTS.items() if k not in ("window", "stride")}


def _data_spec(data, protocol, cv, window, stride, options: dict | None = None) -> dict:
    """How workers load the study's data; ``options`` are the data keywords
    (``subject``, ``channels``, ...; see ``DATA_OPTIONS``)."""
    options = dict(options or {})
    unknown = sorted(set(options) - set(DATA_OPTIONS))
    if unknown:
        raise InputError(f"unknown data options {unknown}; known: {sorted(DATA_OPTIONS)}")
    if options.get("channels") is not None:
        options["channels"] = [str(c) for c in options["channels"]]
    given = {k: v for k, v in options.items() if v != DATA_OPTIONS[k]}
    if protocol is not None:
        if data is not None and not isinstance(data, (str, Path)):
            raise InputError("give either protocol=... or data=..., not both")
        cut = {"window": window, "stride": stride} if window != "auto" or stride else {}
        if given or cut:
            shown = ", ".join(f"{k}={v!r}" for k, v in {**given, **cut}.items())
            raise InputError(
                f"{shown}: protocol={protocol!r} fixes its own columns, windows and folds; "
                "leave these out, or give data=... (a file) instead of protocol=..."
            )
        return {
            "kind": "protocol",
            "name": str(protocol),
            "root": None if data is None else str(data),
        }
    if data is None:
        raise InputError("run_study needs data (a DataFrame, a file, 'demo') or protocol=...")
    if isinstance(data, str) and data == "demo":
        return {"kind": "demo", "cv": cv, "window": window, "stride": stride, **given}
    if isinstance(data, (str, Path)):
        path = Path(data).expanduser().resolve()
        if not path.is_file():
            raise InputError(f"data file {str(data)!r} does not exist")
        return {
            "kind": "file",
            "path": str(path),
            "cv": cv,
            "window": window,
            "stride": stride,
            **given,
        }
    return {"kind": "memory", "cv": cv, "window": window, "stride": stride, **given}


def load_study_data(
    spec: dict, data=None, with_spec: bool = False
) -> tuple[WindowSet, list] | tuple[WindowSet, list, WindowSpec | None]:
    """Windows and subject-wise folds a study's data spec describes; ``with_spec``: also
    how a DataFrame was cut (a :class:`~medspt.data.WindowSpec`, None for protocols), so
    a model refitted on them predicts new recordings cut the same way."""
    kind = spec["kind"]
    if kind == "protocol":
        from medspt.datasets.protocols import protocol

        p = protocol(spec["name"], root=spec.get("root"))
        return (p.windows, list(p.folds)) + ((None,) if with_spec else ())
    if kind == "memory" and data is None:
        raise InputError(
            "this study's data was given in memory (a DataFrame) and cannot be loaded by "
            "another worker; start studies that workers join with a data file, 'demo' or "
            "a protocol name"
        )
    if kind == "demo":
        from medspt.synthetic import make_demo_frame

        data = make_demo_frame()
    elif kind == "file":
        data = read_table(spec["path"])
    options = {k: spec.get(k, default) for k, default in DATA_OPTIONS.items()}
    ws, cut = windows_from(
        data, window=spec.get("window", "auto"), stride=spec.get("stride"), **options
    )
    if ws.y is None:
        raise InputError("the study's data has no labels")
    folds = subject_folds(ws.y, ws.groups, int(spec.get("cv", 5)))
    return (ws, check_folds(folds, ws.groups, len(ws))) + ((cut,) if with_spec else ())


# --------------------------------------------------------------------------- trials


def _cell_of(t: optuna.trial.FrozenTrial) -> Cell | None:
    p = t.params or t.system_attrs.get("fixed_params") or {}
    try:
        return Cell(int(p["depth"]), str(p["config"]), int(p["seed"]))
    except (KeyError, TypeError, ValueError):
        return None


def _alive(worker: str | None) -> bool:
    """Whether the worker that owns a trial still runs (unknown hosts count as alive)."""
    if not worker:
        return True
    host, _, pid = worker.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return True  # another machine: left to the storage's heartbeat
    if int(pid) == os.getpid():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


HEARTBEAT_S = 60.0  # a running trial writes its "heartbeat" attribute this often
STALE_AFTER_S = 600.0  # a trial of another machine with an older heartbeat is dead


def _heartbeat(study: optuna.Study, trial_id: int) -> threading.Event:
    """Write the time to the trial every HEARTBEAT_S seconds until the event is set.

    Only for storages without Optuna's heartbeat (journal files): a worker on another
    machine cannot be asked whether its process lives, so this lets any worker see that
    a trial was abandoned."""
    stop = threading.Event()
    if is_heartbeat_enabled(study._storage):
        return stop  # Optuna's own heartbeat covers it; no extra writes to the database

    def beat():
        while not stop.is_set():
            try:
                study._storage.set_trial_user_attr(trial_id, "heartbeat", time.time())
            except Exception:  # a finished trial refuses attributes: stop quietly
                return
            stop.wait(HEARTBEAT_S)

    threading.Thread(target=beat, daemon=True, name="medspt-heartbeat").start()
    return stop


def reap_dead_trials(study: optuna.Study, stale_after: float = STALE_AFTER_S) -> int:
    """Mark RUNNING trials whose worker is gone as FAILED: on this machine, when its
    process no longer exists; on another machine, when its heartbeat is older than
    ``stale_after`` seconds."""
    n = 0
    now = time.time()
    for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        worker = t.user_attrs.get("worker")
        beat = t.user_attrs.get("heartbeat")
        stale = isinstance(beat, (int, float)) and now - beat > stale_after
        if worker and (not _alive(worker) or (stale and not _local(worker))):
            why = "stopped" if not stale else f"sent no heartbeat for {now - beat:.0f} s"
            try:
                study._storage.set_trial_user_attr(
                    t._trial_id, "error", f"worker {worker} {why} while running this trial"
                )
                study._storage.set_trial_state_values(t._trial_id, TrialState.FAIL)
            except optuna.exceptions.UpdateFinishedTrialError:
                continue  # another worker reaped it first
            n += 1
    return n


def _local(worker: str) -> bool:
    return worker.rpartition(":")[0] == socket.gethostname()


def _next_cell(study, cells: list[Cell], skip: set[Cell]) -> tuple[Cell | None, bool]:
    """The first cell without a completed or live running trial; and whether a trial of
    it already waits in the queue."""
    done, busy, waiting = set(), set(), set()
    for t in study.get_trials(deepcopy=False):
        c = _cell_of(t)
        if c is None:
            continue
        if t.state == TrialState.COMPLETE:
            done.add(c)
        elif t.state == TrialState.RUNNING:
            busy.add(c)
        elif t.state == TrialState.WAITING:
            waiting.add(c)
    for c in cells:
        if c not in done and c not in busy and c not in skip:
            return c, c in waiting
    return None, False


def _duplicate_of(study, trial: optuna.Trial, cell: Cell) -> int | None:
    for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.RUNNING)):
        if t.number == trial.number or _cell_of(t) != cell:
            continue
        if t.state == TrialState.COMPLETE or t.number < trial.number:
            return t.number
    return None


def _curves(clf) -> dict:
    out = {}
    for stage, rows in clf.history_.items():
        if rows:
            out[stage] = {  # 5 significant digits: plenty for a curve, a third of the size
                k: [None if r.get(k) is None else float(f"{r[k]:.5g}") for r in rows]
                for k in ("train_loss", "val_loss", "val_balanced_accuracy")
                if k in rows[0]
            }
    return out


def _attention_stats(clf, X) -> dict:
    """Mean attention distance and locality ratio of a fold's model on (up to 256 of)
    its test windows, and the proximity statistics of its positional score; see
    :mod:`medspt.diagnostics`."""
    from medspt.diagnostics import attention_profile, positional_score

    stats = attention_profile(clf, X, max_windows=256).overall()
    if clf.model_.config.positional != "none":
        score = positional_score(clf)
        stats["positional_spearman"] = float(np.nanmean(score.spearman))
        stats["positional_slope"] = float(np.nanmean(score.slope))
    return stats


def _evaluate_cell(
    ws, folds, params: dict, trial=None, diagnostics: bool = False, fold_ids=None
) -> list[dict]:
    """Fit and score every fold (or those in ``fold_ids``); each row keeps the fold's
    out-of-fold predictions (``oof``); with ``diagnostics`` attention statistics too."""
    rows = []
    for k, (tr, te) in enumerate(folds):
        if fold_ids is not None and k not in fold_ids:
            continue
        row, clf, proba = fit_fold(ws, tr, te, params)
        if diagnostics:
            row.update(_attention_stats(clf, ws.X[te]))
        row = {"fold": k, **row, "curves": _curves(clf)}  # row has val_score
        row["oof"] = oof.pack(ws, te, proba)
        rows.append(row)
        if trial is not None:
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


def _objective(study, ws, folds, attrs: dict, failed: set[Cell]):
    space = _search_space(attrs)
    metric = attrs["metric"]

    def objective(trial: optuna.Trial) -> float:
        trial.set_user_attr("worker", WORKER)
        cell = Cell(
            int(trial.suggest_categorical("depth", space["depth"])),
            str(trial.suggest_categorical("config", space["config"])),
            int(trial.suggest_categorical("seed", space["seed"])),
        )
        dup = _duplicate_of(study, trial, cell)
        if dup is not None:
            trial.set_user_attr("duplicate_of", dup)
            raise optuna.TrialPruned(f"cell {cell.key} is already run by trial {dup}")
        trial.set_user_attr("started", dt.datetime.now().isoformat(timespec="seconds"))
        beating = _heartbeat(study, trial._trial_id)
        try:
            if attrs.get("tune"):
                rows, best = _tune_cell(study, cell, ws, folds, attrs)
                trial.set_user_attr("tuned_params", to_jsonable(best))
            else:
                params = cell.estimator_params(attrs["params"])
                rows = _evaluate_cell(
                    ws, folds, params, trial=trial, diagnostics=attrs.get("diagnostics", False)
                )
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
        return float(np.nanmean([r[metric] for r in rows]))

    return objective


def _work(study: optuna.Study, ws, folds, attrs: dict, max_trials, verbose: bool) -> None:
    cells = _cells(attrs)
    failed: set[Cell] = set()
    objective = _objective(study, ws, folds, attrs, failed)
    from medspt.study.dashboard import refresh_note

    def after(study_, trial):
        if trial.state == TrialState.COMPLETE:
            try:
                refresh_note(study_)
            except Exception as e:  # a note is a convenience; never stop the study for it
                print(f"note not refreshed: {e}")

    n_done = lambda: len(  # noqa: E731
        {_cell_of(t) for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))}
    )
    # Choosing, queueing and taking a cell happen under the claim lock, which the trial
    # releases as soon as it runs: no two workers take the same cell or waiting trial.
    lock, claim = claim_lock(study), contextlib.ExitStack()

    def claimed(trial: optuna.Trial) -> float:
        claim.close()  # this trial is RUNNING and ours: the next worker may choose
        return objective(trial)

    bar = tqdm(total=len(cells), initial=n_done(), desc=study.study_name, disable=not verbose)
    ran = 0
    while max_trials is None or ran < max_trials:
        with claim:
            claim.enter_context(lock)
            reaped = reap_dead_trials(study)
            if reaped and verbose:
                print(f"marked {reaped} trial(s) of stopped workers as failed; rerunning them")
            cell, queued = _next_cell(study, cells, failed)
            if cell is None:
                break
            if not queued:
                study.enqueue_trial(cell.params)
            study.optimize(claimed, n_trials=1, catch=(Exception,), callbacks=[after])
        ran += 1
        bar.n = n_done()
        bar.refresh()
    bar.close()
    if failed and verbose:
        print(
            f"{len(failed)} cell(s) failed: {sorted(c.key for c in failed)}; their errors are "
            "stored on the trials, and the next run retries them"
        )


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
    metric: str = "balanced_accuracy",
    params: dict | None = None,
    diagnostics: bool = True,
    verbose: bool = True,
) -> optuna.Study:
    """Run (or resume, or join) the capacity-versus-pretraining study.

    Parameters
    ----------
    data : DataFrame, WindowSet, path, "demo" or None
        A long DataFrame or WindowSet (this process only), a CSV/Parquet file or
        ``"demo"`` (the built-in synthetic data), which other workers can load too.
        With ``protocol``, an optional data folder for the protocol.
    protocol : {"GPD-1", "NE-1", "CAM-1"}, optional
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
    storage : str
        Optuna storage URL: ``sqlite:///file.db`` (default ``sqlite:///medspt.db``), any
        SQLAlchemy URL, or ``journal:file.log`` for several workers without a database.
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
    window, stride, label, subject, recording, time, channels, fs, max_missing, drop_short
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
        windows (:mod:`medspt.diagnostics`); the report shows them per configuration.

    Returns
    -------
    optuna.Study
        Completed trials hold ``folds`` (per-fold metrics, epochs, wall time and learning
        curves) as user attributes; see :func:`medspt.study.results_frame`.
    """
    params = dict(params or {})
    check_params(params, run_study, grid=True, in_params=True)
    for bad in ("depth", "pretrain", "masking", "random_state", "positional"):
        if bad in params:
            raise InputError(f"params may not set {bad!r}: the grid sets it per cell")
    unknown = [m for m in maskings if m not in STRATEGIES]
    if unknown:
        raise InputError(f"maskings {unknown} are not among {STRATEGIES}")
    if not depths or any(int(d) < 1 for d in depths):
        raise InputError(f"depths must be positive integers, got {list(depths)!r}")
    if not seeds:
        raise InputError("seeds is empty")
    if not scratch and not alibi and not maskings:
        raise InputError("nothing to run: scratch=False and no maskings")
    options = dict(
        label=label,
        subject=subject,
        recording=recording,
        time=time,
        channels=None if channels is None else list(channels),
        fs=fs,
        max_missing=max_missing,
        drop_short=drop_short,
    )
    spec = _data_spec(data, protocol, cv, window, stride, options)
    ws, folds = load_study_data(spec, data if spec["kind"] == "memory" else None)
    if study_name is None:
        stem = protocol or (Path(spec["path"]).stem if spec["kind"] == "file" else spec["kind"])
        study_name = f"medspt-{stem}"
    attrs = {
        "data": spec,
        "grid": {
            "depths": [int(d) for d in depths],
            "maskings": list(maskings),
            "scratch": bool(scratch),
            "alibi": bool(alibi),
            "scratch_long": bool(scratch_long and scratch and len(maskings) > 0),
            "seeds": [int(s) for s in seeds],
        },
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
    st = make_storage(storage)
    sampler = CellGridSampler(_search_space(attrs), seed=0)
    study = create_or_load(st, study_name, sampler=sampler, attrs=attrs)
    if verbose:
        print(
            f"study {study_name!r} in {storage}: {len(_cells(attrs))} cells × {len(folds)} "
            f"folds on {len(ws)} windows of {len(np.unique(ws.groups))} subjects"
        )
    _work(study, ws, folds, study.user_attrs["medspt"], None if tune else n_trials, verbose)
    return study


def run_worker(storage: str, study_name: str, verbose: bool = True) -> optuna.Study:
    """Join an existing study as one more worker and run cells until the grid is done."""
    st = make_storage(storage)
    try:
        study = optuna.load_study(study_name=study_name, storage=st)
    except KeyError:
        names = [s.study_name for s in optuna.get_all_study_summaries(st)]
        raise InputError(
            f"no study {study_name!r} in {storage}; studies there: {names}. Create it with "
            "`medspt study run` first"
        ) from None
    attrs = study.user_attrs.get("medspt")
    if attrs is None:
        raise InputError(f"study {study_name!r} was not created by medspt")
    study.sampler = CellGridSampler(_search_space(attrs), seed=0)
    ws, folds = load_study_data(attrs["data"])
    _work(study, ws, folds, attrs, None, verbose)
    return study
