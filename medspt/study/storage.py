"""Optuna storage from a URL, and study creation that never races."""

from __future__ import annotations

import contextlib
import time
import warnings
from pathlib import Path

import optuna
from filelock import FileLock

from medspt.errors import InputError

JOURNAL_PREFIX = "journal:"
JOURNAL_SUFFIXES = (".log", ".journal", ".jsonl")
SQLITE_TIMEOUT_S = 120.0  # how long a worker waits for SQLite's write lock


def is_journal(url: str) -> bool:
    return url.startswith(JOURNAL_PREFIX) or url.endswith(JOURNAL_SUFFIXES)


def journal_path(url: str) -> Path:
    path = url[len(JOURNAL_PREFIX) :] if url.startswith(JOURNAL_PREFIX) else url
    return Path(path.removeprefix("//")).expanduser()


def _sqlite_file(url: str) -> Path | None:
    """The database file a ``sqlite:///`` URL names (None for other URLs and in-memory)."""
    path = url[len("sqlite:///") :] if url.startswith("sqlite:///") else ""
    return Path(path).expanduser() if path and not path.startswith(":memory:") else None


def make_storage(url: str, heartbeat: float | None = 30.0) -> optuna.storages.BaseStorage:
    """The Optuna storage a URL names.

    * ``sqlite:///medspt.db`` (a local file; the default of :func:`run_study`) or any
      SQLAlchemy URL such as ``postgresql://user:pass@host/db``: an ``RDBStorage``. With
      ``heartbeat`` (seconds), a trial whose worker stopped sending heartbeats for four
      intervals is marked failed, so that another worker retries it.
    * ``journal:path/to/study.log``, or any path ending in ``.log``/``.journal``/``.jsonl``:
      an Optuna journal file, safe for several processes on one machine or on a shared
      file system (no database server needed).
    """
    if not isinstance(url, str) or not url:
        raise InputError(f"storage must be a URL string such as 'sqlite:///medspt.db', got {url!r}")
    if is_journal(url):
        # optuna.storages.journal exists from optuna 4.0 on: imported here, database
        # storages keep working with optuna 3
        from optuna.storages.journal import JournalFileBackend, JournalStorage

        path = journal_path(url)
        path.parent.mkdir(parents=True, exist_ok=True)
        return JournalStorage(JournalFileBackend(str(path)))
    if "://" not in url:
        raise InputError(
            f"storage {url!r} is neither a database URL (sqlite:///file.db, "
            "postgresql://...) nor a journal file (journal:path.log)"
        )
    if (db := _sqlite_file(url)) is not None:
        db.parent.mkdir(parents=True, exist_ok=True)
    kwargs = {}
    if heartbeat:
        kwargs = dict(heartbeat_interval=int(max(1, heartbeat)), grace_period=int(4 * heartbeat))
    if url.startswith("sqlite:"):
        # SQLite has one writer at a time; wait for it instead of failing after 5 s
        kwargs["engine_kwargs"] = {"connect_args": {"timeout": SQLITE_TIMEOUT_S}}
    last = None
    for attempt in range(8):  # first use creates the tables; concurrent creators may collide
        try:
            with warnings.catch_warnings():  # heartbeats are marked experimental
                warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
                return optuna.storages.RDBStorage(url, **kwargs)
        except Exception as e:  # sqlalchemy errors vary by backend
            if "No module named" in str(e) or isinstance(e, (ImportError, ValueError)):
                raise InputError(f"cannot open storage {url!r}: {e}") from None
            last = e
            time.sleep(0.2 * (attempt + 1))
    raise InputError(f"cannot open storage {url!r}: {last}")


def claim_lock(study: optuna.Study) -> contextlib.AbstractContextManager:
    """A lock that makes "take the next waiting trial" atomic between processes.

    SQLite cannot lock a row (no ``SELECT ... FOR UPDATE``), so two workers may both move
    the same waiting trial to RUNNING and run it twice; the second then fails with
    "Cannot tell a COMPLETE trial" (optuna issue #4621). For a SQLite file this is a file
    lock beside it (``<file>.lock``; SQLite is one machine's database anyway). Server
    databases lock the row and journal files lock themselves: no lock needed.
    """
    backend = getattr(study._storage, "_backend", study._storage)  # unwrap optuna's cache
    db = _sqlite_file(str(getattr(backend, "url", "")))
    return contextlib.nullcontext() if db is None else FileLock(f"{db}.lock")


def create_or_load(storage, study_name: str, sampler=None, attrs: dict | None = None):
    """Create the study, or load it when it exists; safe when many workers start at once.

    ``attrs`` are written as study user attributes on creation; on load they must agree
    with the stored ones (a different grid under the same name is an error).
    """
    last = None
    for attempt in range(10):
        try:
            study = optuna.create_study(
                storage=storage,
                study_name=study_name,
                sampler=sampler,
                direction="maximize",
                load_if_exists=True,
            )
            break
        except Exception as e:  # a racing creator: table or row created meanwhile
            last = e
            time.sleep(0.1 * (attempt + 1))
    else:
        raise InputError(f"cannot create or load study {study_name!r}: {last}")
    if attrs:
        stored = study.user_attrs.get("medspt")
        if stored is None:
            study.set_user_attr("medspt", attrs)
        elif _comparable(stored) != _comparable(attrs):
            raise InputError(
                f"study {study_name!r} already exists with another set-up "
                f"({_diff(stored, attrs)}); choose another study name or the same settings"
            )
    return study


def _comparable(attrs: dict) -> dict:
    return {k: v for k, v in attrs.items() if k not in ("created", "medspt_version", "command")}


def _diff(a: dict, b: dict) -> str:
    keys = sorted(set(_comparable(a)) | set(_comparable(b)))
    bad = [k for k in keys if a.get(k) != b.get(k)]
    return ", ".join(f"{k}: stored {a.get(k)!r} vs given {b.get(k)!r}" for k in bad[:3])
