"""Studies on a real PostgreSQL server, started by the test itself (``pgserver``: the
server's binaries from a pip package, a fresh data folder, a Unix socket), with workers in
separate processes, as on several machines."""

import json
import signal
import socket
import subprocess
import time
import urllib.request

import optuna
import pytest
from optuna.trial import TrialState
from study_helpers import (
    TINY,
    cells,
    cli,
    cli_with_fit_fold_hook,
    complete_per_cell,
    dashboard_studies,
    env,
)

from medspt.core.errors import InputError
from medspt.study import make_storage
from medspt.study.dashboard import free_port

GRID = ["--depths", "1", "2", "--maskings", "span", "--seeds", "0", "1"]
HEARTBEAT = "2"  # seconds; a worker silent for 4 heartbeats (8 s) is dead


@pytest.fixture(scope="module")
def postgres(tmp_path_factory):
    """A PostgreSQL server for this module; its URL for SQLAlchemy with psycopg 3."""
    pgserver = pytest.importorskip("pgserver", reason="pgserver (test extras) is not installed")
    pytest.importorskip("psycopg", reason="psycopg (test extras) is not installed")
    try:
        server = pgserver.get_server(tmp_path_factory.mktemp("pg"), cleanup_mode="stop")
    except Exception as e:  # no binaries for this platform, no permission, ...
        pytest.skip(f"a PostgreSQL server could not be started here: {e}")
    yield server.get_uri().replace("postgresql://", "postgresql+psycopg://", 1)
    server.cleanup()


def _database(postgres: str, name: str) -> str:
    """A fresh database on the server, so that tests never see each other's studies."""
    import psycopg

    plain = postgres.replace("postgresql+psycopg://", "postgresql://", 1)
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    head, _, query = postgres.partition("?")
    return f"{head.rsplit('/', 1)[0]}/{name}?{query}"


def _ok(proc: subprocess.CompletedProcess) -> None:
    assert proc.returncode == 0, proc.stderr[-1500:]


def _key(t: optuna.trial.FrozenTrial) -> tuple:
    return t.params["depth"], t.params["config"], t.params["seed"]


_MEET_THEN_DIE = """
barrier = pathlib.Path(os.environ["BARRIER"])
if len(calls) == 1:  # wait in the first fold until all three workers are in one
    (barrier / str(os.getpid())).touch()
    deadline = time.time() + 300
    while len(list(barrier.iterdir())) < 3 and time.time() < deadline:
        time.sleep(0.05)
if len(calls) == 2 and os.environ.get("DIE_IN_SECOND_FOLD"):  # mid-cell: fold 2 of 2
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_three_workers_one_killed_mid_cell_every_cell_completes_once(postgres, tmp_path):
    url = _database(postgres, "killed")
    create = cli("run", "--data", "demo", "--storage", url, "--study", "k", *GRID, *TINY)
    create += ["--n-trials", "0", "--heartbeat", HEARTBEAT]
    _ok(subprocess.run(create, env=env(), capture_output=True, text=True, timeout=300))

    # the undisturbed values: the same cells run one after another by one worker on SQLite
    reference = f"sqlite:///{tmp_path / 'reference.db'}"
    run = cli("run", "--data", "demo", "--storage", reference, "--study", "k", *GRID, *TINY)
    _ok(subprocess.run(run, env=env(), capture_output=True, text=True, timeout=600))

    barrier = tmp_path / "barrier"
    barrier.mkdir()
    worker = cli_with_fit_fold_hook(_MEET_THEN_DIE)
    worker += ["study", "worker", "--storage", url, "--study", "k", "--heartbeat", HEARTBEAT]
    procs = [
        subprocess.Popen(
            worker,
            env=dict(
                env(), BARRIER=str(barrier), **({"DIE_IN_SECOND_FOLD": "1"} if i == 0 else {})
            ),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(3)
    ]
    outs = [p.communicate(timeout=600) for p in procs]
    codes = [p.returncode for p in procs]
    assert codes == [-signal.SIGKILL, 0, 0], [err[-600:] for _, err in outs]

    assert complete_per_cell(url, "k") == {c: 1 for c in cells((1, 2), ("span",), (0, 1))}
    study = optuna.load_study(study_name="k", storage=make_storage(url, heartbeat=None))
    killed_worker = f"{socket.gethostname()}:{procs[0].pid}"
    failed = study.get_trials(states=(TrialState.FAIL,))
    assert [t.user_attrs["worker"] for t in failed] == [killed_worker]  # no other failure
    (killed,) = failed
    assert killed.user_attrs["folds_done"] == 1  # killed inside the cell, not between cells
    # Optuna's heartbeat found it dead and queued a retry; a surviving worker reran its cell
    # (the retry itself, or a trial of the same cell that a worker took first, which the
    # retry then left as a duplicate)
    trials = study.get_trials()
    assert {t.state for t in trials} <= {TrialState.COMPLETE, TrialState.FAIL, TrialState.PRUNED}
    assert [t.system_attrs.get("failed_trial") for t in trials].count(killed.number) == 1
    (rerun,) = [t for t in trials if t.state == TrialState.COMPLETE and t.params == killed.params]
    assert rerun.number > killed.number
    assert rerun.user_attrs["worker"] in {f"{socket.gethostname()}:{p.pid}" for p in procs[1:]}
    for t in trials:
        if t.state == TrialState.PRUNED:
            assert "duplicate_of" in t.user_attrs

    ref = optuna.load_study(study_name="k", storage=make_storage(reference, heartbeat=None))
    expected = {_key(t): t.value for t in ref.get_trials(states=(TrialState.COMPLETE,))}
    got = {_key(t): t.value for t in study.get_trials(states=(TrialState.COMPLETE,))}
    assert got == pytest.approx(expected, abs=1e-12)  # no value changed by the kill or retry


def test_dashboard_serves_a_postgresql_study(postgres, tmp_path):
    url = _database(postgres, "watched")
    run = cli("run", "--data", "demo", "--storage", url, "--study", "w", "--depths", "1")
    run += ["--maskings", "span", "--seeds", "0", *TINY]
    _ok(subprocess.run(run, env=env(), capture_output=True, text=True, timeout=300))
    port = free_port()
    proc = subprocess.Popen(
        cli("dashboard", "--storage", url, "--port", str(port)),
        env=env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        body = dashboard_studies(port)
        (summary,) = body["study_summaries"]
        assert summary["study_name"] == "w"
        with urllib.request.urlopen(
            f"http://127.0.0.1:{port}/api/studies/{summary['study_id']}", timeout=5
        ) as r:
            detail = json.loads(r.read().decode())
        assert [t["state"] for t in detail["trials"]] == ["Complete", "Complete"]
    finally:
        proc.terminate()
        proc.communicate(timeout=20)


def test_unreachable_server_is_named_without_its_password():
    url = "postgresql+psycopg://ana:s3cret-pw@127.0.0.1:1/studies"
    with pytest.raises(InputError) as err:
        make_storage(url)
    text = str(err.value)
    assert "s3cret-pw" not in text
    assert "'postgresql+psycopg://ana:***@127.0.0.1:1/studies'" in text
    assert "Connection refused" in text and "check that the server runs" in text
    # the command line: one line naming the storage, no traceback, no password
    proc = subprocess.run(
        cli("worker", "--storage", url.replace("+psycopg", ""), "--study", "x"),
        env=env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0
    assert "s3cret-pw" not in proc.stdout + proc.stderr
    assert "postgresql+psycopg://ana:***@127.0.0.1:1/studies" in proc.stderr
    assert "Traceback" not in proc.stderr


_WAIT_FOR_SERVER_STOP = """
here = pathlib.Path(os.environ["SIGNALS"])
if len(calls) == 1:  # in the first cell: wait until the test has stopped the server
    (here / "in_cell").touch()
    deadline = time.time() + 300
    while not (here / "server_stopped").exists() and time.time() < deadline:
        time.sleep(0.05)
"""


def test_a_server_that_goes_away_is_one_clear_line(tmp_path):
    pgserver = pytest.importorskip("pgserver", reason="pgserver (test extras) is not installed")
    try:
        server = pgserver.get_server(tmp_path / "pg", cleanup_mode="stop")
    except Exception as e:
        pytest.skip(f"a PostgreSQL server could not be started here: {e}")
    url = server.get_uri().replace("postgresql://", "postgresql+psycopg://", 1)
    create = cli("run", "--data", "demo", "--storage", url, "--study", "gone", "--depths", "1")
    create += ["--maskings", "span", "--seeds", "0", *TINY, "--n-trials", "0"]
    _ok(subprocess.run(create, env=env(), capture_output=True, text=True, timeout=300))
    signals = tmp_path / "signals"
    signals.mkdir()
    worker = cli_with_fit_fold_hook(_WAIT_FOR_SERVER_STOP)
    worker += ["study", "worker", "--storage", url, "--study", "gone", "--heartbeat", "1"]
    proc = subprocess.Popen(
        worker, env=dict(env(), SIGNALS=str(signals)), stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.time() + 300
        while not (signals / "in_cell").exists() and proc.poll() is None:
            assert time.time() < deadline, "the worker never reached its first cell"
            time.sleep(0.1)
        time.sleep(2.5)  # a few heartbeats on the live server
        server.cleanup()  # stops the server
        (signals / "server_stopped").touch()
        err = proc.communicate(timeout=300)[1]
    finally:
        proc.kill()
    assert proc.returncode not in (0, None)
    lines = err.strip().splitlines()
    assert lines[-1].startswith("medspt study worker: error: lost the study's storage '")
    assert "start the workers again when the database is back" in lines[-1]
    assert "Traceback" not in err  # neither the worker's nor a heartbeat thread's
