"""Optuna storage from a URL, and study creation that never races."""

from __future__ import annotations

import contextlib
import importlib.util
import time
import warnings
from pathlib import Path

import optuna
from filelock import FileLock

from medspt.core.errors import InputError
from medspt.core.urls import hide_secret, redact

JOURNAL_PREFIX = "journal:"
JOURNAL_SUFFIXES = (".log", ".journal", ".jsonl")
SQLITE_TIMEOUT_S = 120.0  # how long a worker waits for SQLite's write lock
HEARTBEAT_S = 30.0  # default heartbeat of a running trial in a database storage
GRACE_BEATS = 4  # a trial without a heartbeat for this many intervals is dead
MAX_RETRY = 3  # how often a dead worker's trial is queued again by RetryFailedTrialCallback
OPEN_ATTEMPTS = 8  # about 7 s of retries before a storage counts as unreachable


def check_storage_url(url: object) -> None:
    """Refuse a storage that is not a non-empty URL string, before anything reads it."""
    if not isinstance(url, str) or not url:
        raise InputError(f"storage must be a URL string such as 'sqlite:///medspt.db', got {url!r}")


def is_journal(url: str) -> bool:
    return url.startswith(JOURNAL_PREFIX) or url.endswith(JOURNAL_SUFFIXES)


def journal_path(url: str) -> Path:
    path = url[len(JOURNAL_PREFIX) :] if url.startswith(JOURNAL_PREFIX) else url
    return Path(path.removeprefix("//")).expanduser()


def sqlite_file(url: str) -> Path | None:
    """The database file a ``sqlite:///`` URL names (None for other URLs and in-memory)."""
    path = url[len("sqlite:///") :] if url.startswith("sqlite:///") else ""
    return Path(path).expanduser() if path and not path.startswith(":memory:") else None


def is_server_database(url: str) -> bool:
    """Whether ``url`` names a database server (PostgreSQL, MySQL, ...), which workers on
    several machines share: not a SQLite file and not a journal file."""
    return "://" in url and not url.startswith("sqlite:") and not is_journal(url)


def _with_driver(url: str) -> str:
    """``postgresql://`` means psycopg2 to SQLAlchemy; use psycopg (3) when only it is
    installed, and say what to install when neither is."""
    scheme, sep, rest = url.partition("://")
    if scheme not in ("postgresql", "postgres"):
        return url
    if importlib.util.find_spec("psycopg2") is not None:
        return f"postgresql{sep}{rest}"
    if importlib.util.find_spec("psycopg") is not None:
        return f"postgresql+psycopg{sep}{rest}"
    raise InputError(
        f"storage {redact(url)!r}: no PostgreSQL driver is installed; install one with "
        "`pip install 'medspt[postgres]'` (psycopg 3) and use postgresql+psycopg://..."
    )


def _reason(e: Exception, url: str) -> str:
    """The first line of a database error, without SQLAlchemy's links or the password."""
    text = str(getattr(e, "orig", None) or e).strip().splitlines()
    line = next((t for t in text if t.strip()), type(e).__name__)
    return hide_secret(line, url).strip()


def make_storage(url: str, heartbeat: float | None = HEARTBEAT_S) -> optuna.storages.BaseStorage:
    """The Optuna storage a URL names.

    * ``sqlite:///medspt.db`` (a local file; the default of :func:`run_study`) or any
      SQLAlchemy URL such as ``postgresql+psycopg://user@host/db`` (``postgresql://``
      works too: psycopg 3 is used when psycopg2 is not installed): an ``RDBStorage``.
      With ``heartbeat`` (seconds) each running trial records a heartbeat that often; a
      trial whose heartbeat stopped for ``GRACE_BEATS`` intervals is marked failed by the
      next worker that looks, and queued again (Optuna's retry callback, at most
      ``MAX_RETRY`` times), so that a cell of a machine that died is rerun by another.
    * ``journal:path/to/study.log``, or any path ending in ``.log``/``.journal``/``.jsonl``:
      an Optuna journal file, safe for several processes on one machine or on a shared
      file system (no database server needed).

    Errors never show the URL's password.
    """
    check_storage_url(url)
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
            "postgresql+psycopg://user@host/db) nor a journal file (journal:path.log)"
        )
    if (db := sqlite_file(url)) is not None:
        db.parent.mkdir(parents=True, exist_ok=True)
    return _open_rdb(_with_driver(url), _rdb_options(url, heartbeat))


def _rdb_options(url: str, heartbeat: float | None) -> dict:
    """RDBStorage's keyword arguments: heartbeat and retry, SQLite's lock wait."""
    kwargs: dict = {}
    if heartbeat is not None and heartbeat <= 0:
        raise InputError(f"heartbeat must be a positive number of seconds, got {heartbeat!r}")
    if heartbeat:
        interval = int(max(1, round(heartbeat)))
        kwargs = dict(
            heartbeat_interval=interval, grace_period=GRACE_BEATS * interval, **_retry_option()
        )
    if url.startswith("sqlite:"):
        # SQLite has one writer at a time; wait for it instead of failing after 5 s
        kwargs["engine_kwargs"] = {"connect_args": {"timeout": SQLITE_TIMEOUT_S}}
    return kwargs


def _retry_option() -> dict:
    """Queue a dead worker's trial again: Optuna 4.9 renamed the callback and its option."""
    with warnings.catch_warnings():  # marked experimental
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        retry = getattr(optuna.storages, "RetryHeartbeatStaleTrialCallback", None)
        if retry is not None:
            return {"heartbeat_stale_trial_callback": retry(max_retry=MAX_RETRY)}
        return {"failed_trial_callback": optuna.storages.RetryFailedTrialCallback(MAX_RETRY)}


def _open_rdb(url: str, kwargs: dict) -> optuna.storages.RDBStorage:
    """An RDBStorage, retried a few times: first use creates the tables and concurrent
    creators may collide; a server may be starting."""
    last = None
    for attempt in range(OPEN_ATTEMPTS):
        try:
            with warnings.catch_warnings():  # heartbeats are marked experimental
                warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
                return optuna.storages.RDBStorage(url, **kwargs)
        except Exception as e:  # sqlalchemy errors vary by backend
            if "No module named" in str(e) or isinstance(e, (ImportError, ValueError)):
                why = _reason(e, url)
                raise InputError(f"cannot open storage {redact(url)!r}: {why}") from None
            last = e
            time.sleep(0.2 * (attempt + 1))
    hint = (
        "; check that the server runs and accepts this machine, and the host, port, user, "
        "database and password (a ~/.pgpass file or PGPASSWORD keeps it out of the URL)"
        if is_server_database(url)
        else ""
    )
    raise InputError(f"cannot open storage {redact(url)!r}: {_reason(last, url)}{hint}") from None


def storage_lost(error: BaseException, url: str) -> InputError | None:
    """The error to show when ``error`` comes from a lost database connection (the server
    stopped or is unreachable), found anywhere in its chain of causes; None otherwise."""
    from sqlalchemy.exc import InterfaceError, OperationalError

    seen: set[int] = set()
    e: BaseException | None = error
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, (OperationalError, InterfaceError)):
            return InputError(
                f"lost the study's storage {redact(url)!r}: {_reason(e, url)}. Completed "
                "cells are safe in it: start the workers again when the database is back "
                "(the cells that were running are run again)"
            )
        e = e.__cause__ or e.__context__
    return None


def storage_url(study: optuna.Study) -> str:
    """The database URL of a study's storage ("" for a journal file)."""
    backend = getattr(study._storage, "_backend", study._storage)  # unwrap optuna's cache
    return str(getattr(backend, "url", ""))


def claim_lock(study: optuna.Study) -> contextlib.AbstractContextManager:
    """A lock that makes "take the next waiting trial" atomic between processes.

    SQLite cannot lock a row (no ``SELECT ... FOR UPDATE``), so two workers may both move
    the same waiting trial to RUNNING and run it twice; the second then fails with
    "Cannot tell a COMPLETE trial" (optuna issue #4621). For a SQLite file this is a file
    lock beside it (``<file>.lock``; SQLite is one machine's database anyway). Server
    databases lock the row and journal files lock themselves: no lock needed.
    """
    db = sqlite_file(storage_url(study))
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
