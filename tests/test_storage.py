"""Storage URLs, heartbeats and the retry of dead workers' trials (medspt.study.storage,
medspt.study.trials) on real SQLite files: fast checks of what the PostgreSQL tests rely on."""

import time

import optuna
import pytest
import sqlalchemy.exc
from optuna.trial import TrialState

from medspt.errors import InputError
from medspt.study.storage import (
    GRACE_BEATS,
    MAX_RETRY,
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
