"""Trials of a study as its workers see them: which cell a trial runs, whether its worker
still lives, and which cell runs next.

A worker is ``"<host>:<pid>"`` (:data:`WORKER`), stored on every trial it runs. On its
own machine a worker asks the operating system whether another worker's process lives;
for other machines it reads the ``heartbeat`` attribute that running trials write
(:func:`start_heartbeat`), unless the storage has Optuna's own heartbeat.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import warnings

import optuna
from optuna.storages._heartbeat import is_heartbeat_enabled
from optuna.trial import TrialState

from medspt.study.grid import Cell
from medspt.study.storage import is_server_database, storage_url

__all__ = [
    "HEARTBEAT_S",
    "STALE_AFTER_S",
    "WORKER",
    "cell_of",
    "completed_cells",
    "duplicate_of",
    "finished_folds",
    "fold_of_attr",
    "has_waiting",
    "next_cell",
    "poll_seconds",
    "reap_dead_trials",
    "running_cells",
    "start_heartbeat",
    "worker_alive",
]

WORKER = f"{socket.gethostname()}:{os.getpid()}"

HEARTBEAT_S = 60.0  # a running trial writes its "heartbeat" attribute this often
STALE_AFTER_S = 600.0  # a trial of another machine with an older heartbeat is dead
FOLD_ATTR = "fold_"  # a running trial stores each finished fold's row as fold_<k>


def cell_of(t: optuna.trial.FrozenTrial) -> Cell | None:
    """The cell a trial runs (from its parameters, or those it was enqueued with)."""
    p = t.params or t.system_attrs.get("fixed_params") or {}
    try:
        return Cell(int(p["depth"]), str(p["config"]), int(p["seed"]))
    except (KeyError, TypeError, ValueError):
        return None


def worker_alive(worker: str | None) -> bool:
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


def _on_this_machine(worker: str) -> bool:
    return worker.rpartition(":")[0] == socket.gethostname()


def start_heartbeat(study: optuna.Study, trial_id: int) -> threading.Event:
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
    """Mark RUNNING trials whose worker is gone as FAILED; returns how many.

    A database storage's own heartbeat comes first: a trial whose heartbeat is older than
    the grace period is failed and queued again. On a database server (workers on many
    machines) that is all (this machine's process table says nothing there: containers on
    different machines may share a host name). On a SQLite or journal file a worker of
    this machine is also dead when its process no longer exists, and a journal trial of
    another machine (shared file system) when its ``heartbeat`` attribute is older than
    ``stale_after`` seconds."""
    n = _fail_stale(study) if is_heartbeat_enabled(study._storage) else 0
    if is_server_database(storage_url(study)):
        return n
    now = time.time()
    for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        worker = t.user_attrs.get("worker")
        beat = t.user_attrs.get("heartbeat")
        stale = isinstance(beat, (int, float)) and now - beat > stale_after
        if worker and (not worker_alive(worker) or (stale and not _on_this_machine(worker))):
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


def _fail_stale(study: optuna.Study) -> int:
    """Optuna's heartbeat check, which also queues the failed trials again."""
    running = {t._trial_id for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))}
    if not running:
        return 0
    with warnings.catch_warnings():  # marked experimental
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        optuna.storages.fail_stale_trials(study)
    failed = {t._trial_id for t in study.get_trials(deepcopy=False, states=(TrialState.FAIL,))}
    return len(running & failed)


def has_waiting(study: optuna.Study) -> bool:
    """Whether a trial waits in the study's queue."""
    return bool(study.get_trials(deepcopy=False, states=(TrialState.WAITING,)))


def running_cells(study: optuna.Study) -> set[Cell]:
    """The cells that some worker (this one or another) is running now."""
    running = study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
    return {c for t in running if (c := cell_of(t)) is not None}


def poll_seconds(study: optuna.Study) -> float:
    """How long a worker with nothing to do waits before it looks again: one heartbeat."""
    interval = (
        study._storage.get_heartbeat_interval() if is_heartbeat_enabled(study._storage) else None
    )
    return float(min(interval or HEARTBEAT_S, 30))


def next_cell(study: optuna.Study, cells: list[Cell], skip: set[Cell]) -> tuple[Cell | None, bool]:
    """The first cell without a completed or live running trial; and whether a trial of
    it already waits in the queue."""
    done, busy, waiting = set(), set(), set()
    for t in study.get_trials(deepcopy=False):
        c = cell_of(t)
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


def duplicate_of(study: optuna.Study, trial: optuna.Trial, cell: Cell) -> int | None:
    """The number of a trial that completed ``cell``, or of a lower-numbered one running
    it: ``trial`` then leaves the cell to that one."""
    for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.RUNNING)):
        if t.number == trial.number or cell_of(t) != cell:
            continue
        if t.state == TrialState.COMPLETE or t.number < trial.number:
            return t.number
    return None


def finished_folds(study: optuna.Study, cell: Cell) -> dict[int, tuple[int, dict]]:
    """The folds of ``cell`` that failed or stopped trials finished: fold number ->
    (trial number, its stored row). A resumed cell takes these instead of fitting them
    again; the newest trial wins where two hold the same fold."""
    done: dict[int, tuple[int, dict]] = {}
    for t in study.get_trials(deepcopy=False, states=(TrialState.FAIL,)):
        if cell_of(t) != cell:
            continue
        for key, row in t.user_attrs.items():
            if (fold := fold_of_attr(key)) is not None:
                done[fold] = (t.number, row)
    return done


def fold_of_attr(key: str) -> int | None:
    """The fold whose row a trial attribute holds (``fold_<k>``), or None."""
    fold = key.removeprefix(FOLD_ATTR)
    return int(fold) if fold != key and fold.isdigit() else None


def completed_cells(study: optuna.Study) -> int:
    """How many distinct cells have a completed trial."""
    done = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    return len({cell_of(t) for t in done})
