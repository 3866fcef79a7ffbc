"""A study storage copied into one small journal file, to commit or to move.

A journal file keeps every change ever made to its studies: each heartbeat, each fold row
as its fold finished (``fold_<k>``, so a stopped cell can resume), and the rows once more
when the cell completed (``folds``). Its copy keeps what a report or a resumed run reads:
every study with its attributes and every trial in its final state, numbered as before.
Completed trials lose their ``fold_<k>`` rows, which repeat their ``folds``; failed and
running trials keep theirs, since the next run resumes those cells from them.

Copy only while no worker writes to the storage: a worker's later writes go to the
source, not to the copy.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path

import optuna
from optuna.trial import TrialState

from medspt.core.errors import InputError
from medspt.core.urls import redact
from medspt.study.storage import (
    check_storage_url,
    is_journal,
    journal_path,
    make_storage,
    sqlite_file,
)
from medspt.study.trials import fold_of_attr

__all__ = ["compact_storage"]


def compact_storage(storage: str, out: str | Path | None = None) -> dict[str, int]:
    """Copy every study of ``storage`` into the journal file ``out`` without the changes
    only a running worker needs (see the module's docstring).

    Parameters
    ----------
    storage : str
        Storage URL of the studies (``journal:file.log``, ``sqlite:///file.db``,
        ``postgresql+psycopg://...``).
    out : str or Path, optional
        Journal file to write; it must not exist, unless it is the source journal itself,
        which is then replaced once its copy is complete. Default: the source journal
        (required for a database storage).

    Returns
    -------
    dict
        Study name -> number of trials copied.
    """
    check_storage_url(storage)  # before _target reads it as a path
    target = _target(storage, out)
    source = make_storage(storage, heartbeat=None)
    names = [s.study_name for s in optuna.get_all_study_summaries(source)]
    if not names:
        raise InputError(f"storage {redact(storage)!r} holds no study; nothing to copy")
    partial = target.with_name(target.name + ".partial")
    partial.unlink(missing_ok=True)
    verbosity = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(optuna.logging.WARNING)  # no line per study created
    try:
        dest = make_storage(f"journal:{partial}", heartbeat=None)
        counts = {name: _copy_study(source, dest, name) for name in names}
        os.replace(partial, target)  # the source stays whole until its copy is
    finally:
        optuna.logging.set_verbosity(verbosity)
        partial.unlink(missing_ok=True)
    return counts


def _target(storage: str, out: str | Path | None) -> Path:
    """The journal file to write: ``out``, or the source journal itself."""
    src = journal_path(storage) if is_journal(storage) else None
    if src is not None and not src.is_file():
        raise InputError(f"storage {storage!r}: no journal file {src}; give an existing one")
    if out is None and src is None:
        raise InputError(
            f"storage {redact(storage)!r} is a database, not a journal file: give "
            "the journal file to write (out=...)"
        )
    db = sqlite_file(storage)
    if db is not None and not db.is_file():  # opening it would create an empty database
        raise InputError(f"storage {storage!r}: no database file {db}; give an existing one")
    if out is None:
        return src
    target = Path(out).expanduser()
    if target.exists() and (src is None or target.resolve() != src.resolve()):
        raise InputError(
            f"{target} already exists: give a new file to write (out=...), or remove it first"
        )
    return target


def _copy_study(source, dest, name: str) -> int:
    """Copy study ``name`` (attributes, then trials in their order, so they keep their
    numbers); returns the number of trials."""
    study = optuna.load_study(study_name=name, storage=source)
    copied = optuna.create_study(study_name=name, storage=dest, directions=study.directions)
    for key, value in source.get_study_system_attrs(study._study_id).items():
        dest.set_study_system_attr(copied._study_id, key, value)
    for key, value in study.user_attrs.items():
        copied.set_user_attr(key, value)
    trials = study.get_trials(deepcopy=False)
    for t in trials:
        dest.create_new_trial(copied._study_id, template_trial=_final(t))
    return len(trials)


def _final(t: optuna.trial.FrozenTrial) -> optuna.trial.FrozenTrial:
    """``t`` without the per-fold rows its ``folds`` repeats (completed trials only)."""
    if t.state != TrialState.COMPLETE or "folds" not in t.user_attrs:
        return t
    kept = copy.copy(t)
    kept.user_attrs = {k: v for k, v in t.user_attrs.items() if fold_of_attr(k) is None}
    return kept
