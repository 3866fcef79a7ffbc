"""Storage URLs, heartbeats and the retry of dead workers' trials (medspt.study.storage,
medspt.study.trials) on real SQLite files: fast checks of what the PostgreSQL tests rely on."""

import contextlib
import importlib.util
import time

import optuna
import pytest
import sqlalchemy.exc
from optuna.trial import TrialState

from medspt.core.errors import InputError
from medspt.study.storage import (
    GRACE_BEATS,
    MAX_RETRY,
    SQLITE_TIMEOUT_S,
    _rdb_options,
    _with_driver,
    claim_lock,
    is_server_database,
    make_storage,
    storage_lost,
    storage_url,
)
from medspt.study.trials import has_waiting, poll_seconds, reap_dead_trials, running_cells


@pytest.mark.parametrize(
    "url, server",
    [
        ("postgresql+psycopg://a@db/x", True),
        ("postgresql://db/x", True),
        ("mysql+pymysql://a@db/x", True),
        ("sqlite:///x.db", False),
        ("sqlite://", False),
        ("journal:x.log", False),
        ("runs/x.log", False),
        ("medspt.db", False),
    ],
)
def test_server_databases_are_told_from_files(url, server):
    assert is_server_database(url) is server


def test_heartbeat_grace_and_retry_of_a_database_storage(tmp_path):
    storage = make_storage(f"sqlite:///{tmp_path / 'h.db'}", heartbeat=7.4)
    assert storage.get_heartbeat_interval() == 7
    assert storage.grace_period == 7 * GRACE_BEATS
    retry = storage.get_heartbeat_stale_trial_callback()
    assert retry is not None and retry._max_retry == MAX_RETRY
    quick = make_storage(f"sqlite:///{tmp_path / 'q.db'}", heartbeat=0.2)
    assert quick.get_heartbeat_interval() == 1  # Optuna counts whole seconds
    off = make_storage(f"sqlite:///{tmp_path / 'o.db'}", heartbeat=None)
    assert off.get_heartbeat_interval() is None
    assert off.get_heartbeat_stale_trial_callback() is None


@pytest.mark.parametrize("bad", [0, -5])
def test_heartbeat_must_be_positive(tmp_path, bad):
    with pytest.raises(
        InputError, match=f"heartbeat must be a positive number of seconds, got {bad}"
    ):
        make_storage(f"sqlite:///{tmp_path / 'b.db'}", heartbeat=bad)


def test_a_lost_connection_is_found_anywhere_in_the_chain_of_causes():
    url = "postgresql://ana:pw7@db/x"
    try:
        try:
            raise sqlalchemy.exc.OperationalError("SELECT 1", {}, Exception("server closed pw7"))
        except Exception as inner:
            raise optuna.exceptions.StorageInternalError("commit failed") from inner
    except Exception as e:
        try:
            raise UnboundLocalError("updated_state")  # what optuna raises next
        except UnboundLocalError as outer:
            lost = storage_lost(outer, url)
            assert storage_lost(e, url) is not None
    assert isinstance(lost, InputError)
    assert "lost the study's storage 'postgresql://ana:***@db/x': " in str(lost)
    assert "server closed ***" in str(lost) and "pw7" not in str(lost)
    assert storage_lost(ValueError("unrelated"), url) is None
    looped = ValueError("a")
    looped.__context__ = looped
    assert storage_lost(looped, url) is None  # a cycle in the chain ends the search


def test_stale_trials_of_a_database_are_failed_and_queued_again(tmp_path):
    url = f"sqlite:///{tmp_path / 's.db'}"
    study = optuna.create_study(storage=make_storage(url, heartbeat=1), study_name="s")
    assert storage_url(study) == url and poll_seconds(study) == 1.0
    study.enqueue_trial({"x": 1.0})
    trial = study.ask()  # RUNNING; its worker never sends a heartbeat
    study._storage.record_heartbeat(trial._trial_id)
    assert running_cells(study) == set()  # no cell parameters: not a grid cell
    assert reap_dead_trials(study) == 0  # heartbeat fresh
    time.sleep(GRACE_BEATS * 1 + 1.5)
    assert reap_dead_trials(study) == 1
    (failed,) = study.get_trials(states=(TrialState.FAIL,))
    (retry,) = study.get_trials(states=(TrialState.WAITING,))
    assert failed.number == trial.number and retry.system_attrs["failed_trial"] == trial.number
    assert has_waiting(study)
    assert reap_dead_trials(study) == 0  # nothing left running


def test_poll_of_a_journal_is_capped_at_half_a_minute(tmp_path):
    study = optuna.create_study(storage=make_storage(f"journal:{tmp_path / 'j.log'}"))
    assert poll_seconds(study) == 30.0
    assert not has_waiting(study)


def test_sqlite_files_get_their_folder_and_a_claim_lock_journals_none(tmp_path):
    url = f"sqlite:///{tmp_path / 'deep' / 'er' / 'x.db'}"
    study = optuna.create_study(storage=make_storage(url, heartbeat=None), study_name="x")
    assert (tmp_path / "deep" / "er" / "x.db").is_file()
    lock = claim_lock(study)
    assert lock.lock_file == f"{tmp_path / 'deep' / 'er' / 'x.db'}.lock"
    journal = optuna.create_study(storage=make_storage(f"journal:{tmp_path / 'j' / 'j.log'}"))
    assert storage_url(journal) == "" and (tmp_path / "j" / "j.log").is_file()
    assert isinstance(claim_lock(journal), contextlib.nullcontext)
    memory = optuna.create_study(storage=make_storage("sqlite:///:memory:", heartbeat=None))
    assert isinstance(claim_lock(memory), contextlib.nullcontext)


def test_sqlite_waits_for_its_write_lock_and_servers_get_no_sqlite_options(tmp_path):
    storage = make_storage(f"sqlite:///{tmp_path / 'w.db'}", heartbeat=None)
    assert storage.engine_kwargs == {"connect_args": {"timeout": SQLITE_TIMEOUT_S}}
    assert _rdb_options("postgresql+psycopg://a@h/db", None) == {}
    assert set(_rdb_options("postgresql+psycopg://a@h/db", 30)) == {
        "heartbeat_interval",
        "grace_period",
        "heartbeat_stale_trial_callback",
    }


@pytest.mark.skipif(
    importlib.util.find_spec("psycopg2") is not None, reason="psycopg2 is installed here"
)
def test_postgresql_urls_use_psycopg_3_when_psycopg2_is_absent():
    assert _with_driver("postgresql://a@h/db") == "postgresql+psycopg://a@h/db"
    assert _with_driver("postgres://a:pw@h:5/db") == "postgresql+psycopg://a:pw@h:5/db"
    for url in ("postgresql+psycopg://a@h/db", "mysql://a@h/db", "sqlite:///x.db"):
        assert _with_driver(url) == url


def test_a_missing_database_driver_is_named_at_once_without_the_password():
    if importlib.util.find_spec("pymysql") is not None:
        pytest.skip("pymysql is installed here")
    with pytest.raises(InputError) as err:
        make_storage("mysql+pymysql://root:pw5@127.0.0.1/db")
    assert str(err.value).startswith(
        "cannot open storage 'mysql+pymysql://root:***@127.0.0.1/db': "
    )
    assert "pymysql" in str(err.value) and "pw5" not in str(err.value)
