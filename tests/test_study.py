"""The capacity-versus-pretraining study: real SQLite and journal storages, real worker
processes, a real optuna-dashboard server on 127.0.0.1."""

import json
import os
import signal
import subprocess
import sys
import urllib.request
from collections import Counter

import numpy as np
import optuna
import pandas as pd
import pytest
import torch
from optuna.trial import TrialState
from study_helpers import TINY, TINY_PARAMS, dashboard_studies
from study_helpers import cells as _cells
from study_helpers import cli as _cli
from study_helpers import cli_with_fit_fold_hook as _cli_with_fit_fold_hook
from study_helpers import complete_per_cell as _complete_per_cell
from study_helpers import demo_study as _demo_study
from study_helpers import env as _env

from medspt.api import comparison_table, summarize
from medspt.core.errors import InputError
from medspt.study import (
    load_study_data,
    make_storage,
    results_frame,
    write_report,
)
from medspt.study.dashboard import free_port


@pytest.fixture(scope="module")
def small_study(tmp_path_factory):
    url = f"sqlite:///{tmp_path_factory.mktemp('study') / 's.db'}"
    study = _demo_study(url, "small", depths=(1, 2), seeds=(0, 1))
    return url, study


def test_grid_runs_every_cell_once_with_fold_details(small_study):
    url, study = small_study
    assert _complete_per_cell(url, "small") == Counter(_cells((1, 2), ("span",), (0, 1)))
    res = results_frame(study)
    assert len(res) == 8 * 2  # cells x folds
    assert set(res["config"]) == {"scratch", "spt-span"}
    folds_per_cell = res.groupby(["depth", "config", "seed"])["fold"].apply(sorted)
    assert all(f == [0, 1] for f in folds_per_cell)
    t = study.get_trials(states=(TrialState.COMPLETE,))[0]
    fold = t.user_attrs["folds"][0]
    assert {"balanced_accuracy", "wall_time_s", "finetune_epoch", "curves"} <= set(fold)
    assert len(fold["curves"]["finetune"]["train_loss"]) == 1
    spt = next(
        f for tr in study.get_trials(states=(TrialState.COMPLETE,))
        for f in tr.user_attrs["folds"] if "pretrain" in f["curves"]
    )  # fmt: skip
    # whether pretraining learned, for the dashboard: relative to the visible-mean baseline
    relative = spt["curves"]["pretrain"]["val_relative"]
    assert all(v is None or 0.0 < v < 3.0 for v in relative) and len(relative) >= 1
    assert "pretrain_relative" in spt and "not_learned" in spt
    assert t.value == pytest.approx(
        np.mean([f["balanced_accuracy"] for f in t.user_attrs["folds"]])
    )
    # folds are subject-wise and identical for every cell
    assert res.groupby("fold")["n_test"].nunique().eq(1).all()


def test_report_table_values_and_files(small_study, tmp_path):
    _, study = small_study
    paths = write_report(study, tmp_path / "rep")
    res = pd.read_csv(paths["results"])
    table = pd.read_csv(paths["capacity"])
    row = table[(table.depth == 2) & (table.config == "spt-span")].iloc[0]
    mine = res[(res.depth == 2) & (res.config == "spt-span")].set_index(["fold", "seed"])
    base = res[(res.depth == 2) & (res.config == "scratch")].set_index(["fold", "seed"])
    diff = (mine["balanced_accuracy"] - base["balanced_accuracy"]).groupby("fold").mean()
    assert row["mean"] == pytest.approx(mine["balanced_accuracy"].mean())
    assert row["gain_vs_scratch"] == pytest.approx(diff.mean())
    # the study kept out-of-fold predictions, so the test runs over the 12 demo subjects
    assert row["test"] == "subjects" and row["n_pairs"] == 12
    pred = results_frame(study).predictions
    assert len(pred) == res["n_test"].sum()
    text = paths["report"].read_text()
    assert "| 2 | spt-span |" in text and "sign-flip" in text and "Holm" in text
    assert "## Confound probes" in text and "| position |" in text  # the demo has no clock
    answer = text.split("**Did self-pretraining help?**", 1)[1].split("\n", 1)[0]
    assert "at each depth, paired over 12 subjects" in answer and "A fit with SPT took" in answer
    assert "**Warning:**" not in text
    for name in ("accuracy_vs_depth", "gain_vs_depth"):
        assert paths[name].read_bytes()[:4] == b"\x89PNG"


def test_summarize_averages_seeds_within_folds_before_testing():
    rows = []
    for fold in range(4):
        for seed in range(2):
            base = 0.6 + 0.05 * fold
            rows.append(dict(depth=2, config="scratch", fold=fold, seed=seed, m=base))
            rows.append(
                dict(depth=2, config="spt-x", fold=fold, seed=seed, m=base + 0.01 * (fold + 1))
            )
    table = summarize(pd.DataFrame(rows), "m").set_index("config")
    diffs = 0.01 * np.arange(1, 5)
    assert table.loc["spt-x", "gain_vs_scratch"] == pytest.approx(diffs.mean())
    assert table.loc["spt-x", "n_pairs"] == 4  # folds, not folds x seeds
    assert table.loc["spt-x", "test"] == "folds"
    assert table.loc["spt-x", "p_value"] == pytest.approx(2 / 16)  # exact, all positive
    assert table.loc["spt-x", "p_holm"] == pytest.approx(2 / 16)
    assert np.isnan(table.loc["scratch", "p_value"])


_KILL_MID_CELL = """
if len(calls) == 4:  # SIGKILL inside the second cell's second fold
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_killed_study_resumes_without_losing_completed_trials(tmp_path):
    # the process kills itself at a fixed point (2 folds per cell: cell 0 complete, cell 1
    # half done), so the test does not depend on how fast the machine is
    url = f"sqlite:///{tmp_path / 'k.db'}"
    args = ["study", "run", "--data", "demo", "--storage", url, "--study", "k"]
    args += ["--depths", "1", "2", "--maskings", "span", "block", *TINY]
    proc = subprocess.run(
        [*_cli_with_fit_fold_hook(_KILL_MID_CELL), *args],
        env=_env(),
        capture_output=True,
        timeout=400,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-500:]
    storage = make_storage(url, heartbeat=None)
    trials = optuna.load_study(study_name="k", storage=storage).get_trials()
    states = [t.state for t in trials]
    assert states == [TrialState.COMPLETE, TrialState.RUNNING]
    assert trials[1].user_attrs["folds_done"] == 1  # killed mid-cell, not between cells
    completed_before = {trials[0].number: trials[0].value}

    study = _demo_study(url, "k", depths=(1, 2), maskings=("span", "block"))
    per_cell = _complete_per_cell(url, "k")
    assert per_cell == Counter(_cells((1, 2), ("span", "block"), (0,)))  # each exactly once
    after = {t.number: t.value for t in study.get_trials(states=(TrialState.COMPLETE,))}
    assert all(after[n] == v for n, v in completed_before.items())  # nothing lost or redone
    failed = study.get_trials(states=(TrialState.FAIL,))
    assert [t.number for t in failed] == [trials[1].number]  # the killed trial, reaped
    assert all("stopped while running" in t.user_attrs["error"] for t in failed)
    # the killed cell resumed from its finished fold: fold 0 taken as stored (a refit
    # would have another wall time), fold 1 fitted now
    killed = trials[1]
    (resumed,) = [t for t in study.get_trials(states=(TrialState.COMPLETE,))
                  if t.params == killed.params]  # fmt: skip
    assert resumed.user_attrs["resumed_folds"] == {"0": killed.number}
    rows = resumed.user_attrs["folds"]
    assert [r["fold"] for r in rows] == [0, 1]
    assert rows[0] == killed.user_attrs["fold_0"]
    assert "fold_1" not in killed.user_attrs
    assert rows[1]["wall_time_s"] != rows[0]["wall_time_s"]
    assert resumed.value == pytest.approx(np.mean([r["balanced_accuracy"] for r in rows]))
    # every trial stores each fold as it finishes, the same row as in its "folds"
    for t in study.get_trials(states=(TrialState.COMPLETE,)):
        assert [t.user_attrs[f"fold_{k}"] for k in (0, 1)] == t.user_attrs["folds"]
    assert "resumed_folds" not in trials[0].user_attrs


def test_trial_value_leaves_out_folds_whose_metric_is_missing():
    from medspt.study.runner import mean_metric

    rows = [{"roc_auc": 0.5}, {"roc_auc": None}, {"roc_auc": np.nan}, {"roc_auc": 0.75}]
    assert mean_metric(rows, "roc_auc") == pytest.approx(0.625)


def test_finished_folds_come_from_stopped_trials_of_the_same_cell_newest_first(tmp_path):
    from medspt.study.grid import Cell
    from medspt.study.trials import finished_folds

    study = optuna.create_study(storage=f"sqlite:///{tmp_path / 'ff.db'}", study_name="ff")

    def trial(depth, state, **folds):
        study.enqueue_trial({"depth": depth})
        t = study.ask()
        t.suggest_categorical("depth", [1, 2])
        t.suggest_categorical("config", ["scratch"])
        t.suggest_categorical("seed", [0])
        for key, row in folds.items():
            t.set_user_attr(key, row)
        t.set_user_attr("folds_done", len(folds))
        if state is not None:
            study.tell(t, state=state)
        return t.number

    a = trial(1, TrialState.FAIL, fold_0={"v": 1}, fold_1={"v": 2})
    b = trial(1, TrialState.FAIL, fold_0={"v": 3}, fold_note="a user's own attribute")
    trial(2, TrialState.FAIL, fold_2={"v": 4})  # another cell
    trial(1, None, fold_3={"v": 5})  # still running: its worker may finish it
    assert finished_folds(study, Cell(1, "scratch", 0)) == {0: (b, {"v": 3}), 1: (a, {"v": 2})}
    assert finished_folds(study, Cell(1, "spt-span", 0)) == {}


_MEET_IN_FIRST_FOLD = """
barrier = pathlib.Path(os.environ["BARRIER"])
if len(calls) == 1:  # wait in the first fold until the other worker is in one too
    (barrier / str(os.getpid())).touch()
    deadline = time.time() + 300
    while len(list(barrier.iterdir())) < 2 and time.time() < deadline:
        time.sleep(0.05)
"""


@pytest.mark.parametrize("kind", ["journal", "sqlite"])
def test_two_workers_started_together_share_one_study(tmp_path, kind):
    # both processes create-or-load the same new study at the same moment
    url = f"journal:{tmp_path / 'j.log'}" if kind == "journal" else f"sqlite:///{tmp_path / 'j.db'}"
    args = ["run", "--data", "demo", "--storage", url, "--study", "j", "--depths", "1", "2"]
    args += ["--maskings", "span", "--seeds", "0", "1", *TINY]
    # each worker waits in its first fold until the other is in one too, so both must work
    # on the study at the same time however fast the machine is
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    cmd = [*_cli_with_fit_fold_hook(_MEET_IN_FIRST_FOLD), "study", *args]
    env = dict(_env(), BARRIER=str(barrier))
    procs = [subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE) for _ in range(2)]
    errs = [p.communicate(timeout=400)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [e[-400:] for e in errs]
    assert _complete_per_cell(url, "j") == Counter(_cells((1, 2), ("span",), (0, 1)))
    study = optuna.load_study(study_name="j", storage=make_storage(url))
    workers = {t.user_attrs["worker"] for t in study.get_trials(states=(TrialState.COMPLETE,))}
    assert len(workers) == 2  # both processes did work
    for t in study.get_trials(states=(TrialState.PRUNED,)):
        assert "duplicate_of" in t.user_attrs


_TAKE_ALL = """
import sys, optuna
from medspt.study.storage import claim_lock, make_storage
study = optuna.load_study(study_name="q", storage=make_storage(sys.argv[1], heartbeat=None))
lock, taken = claim_lock(study), []
while True:
    with lock:  # what a worker holds while it takes its next trial
        trial_id = study._pop_waiting_trial_id()
    if trial_id is None:
        break
    taken.append(trial_id)
print(*taken)
"""


def test_sqlite_workers_never_take_the_same_waiting_trial(tmp_path):
    # SQLite cannot lock rows: without the claim lock, processes popping the queue
    # together move one WAITING trial to RUNNING twice (then both run it)
    url = f"sqlite:///{tmp_path / 'q.db'}"
    study = optuna.create_study(storage=make_storage(url, heartbeat=None), study_name="q")
    for i in range(150):
        study.enqueue_trial({"x": i})
    procs = [
        subprocess.Popen([sys.executable, "-c", _TAKE_ALL, url], stdout=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    taken = [int(t) for p in procs for t in p.communicate(timeout=300)[0].split()]
    assert [p.returncode for p in procs] == [0, 0, 0, 0]
    assert len(taken) == len(set(taken)) == 150  # every trial taken, none twice
    assert (tmp_path / "q.db.lock").exists()


def test_a_worker_joins_by_storage_and_name(tmp_path):
    url = f"journal:{tmp_path / 'w.log'}"
    _demo_study(url, "w", n_trials=1)
    assert sum(_complete_per_cell(url, "w").values()) == 1
    out = subprocess.run(
        _cli("worker", "--storage", url, "--study", "w", "--quiet"),
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-400:]
    assert _complete_per_cell(url, "w") == Counter(_cells((1,), ("span",), (0,)))
    bad = subprocess.run(
        _cli("worker", "--storage", url, "--study", "nope"),
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2 and "no study 'nope'" in bad.stderr and "'w'" in bad.stderr


def test_failed_cells_keep_their_error_and_are_retried_on_resume(tmp_path):
    url = f"sqlite:///{tmp_path / 'f.db'}"
    bad_groups = {**TINY_PARAMS, "channel_groups": [["no_such_channel"]]}
    study = _demo_study(url, "f", params=bad_groups)
    failed = study.get_trials(states=(TrialState.FAIL,))
    assert len(failed) == 2  # each cell tried once, no retry loop within a run
    assert all("no_such_channel" in t.user_attrs["error"] for t in failed)
    study = _demo_study(url, "f", params=bad_groups)  # resume: failed cells are tried again
    assert len(study.get_trials(states=(TrialState.FAIL,))) == 4


def test_dashboard_serves_the_study_and_its_note(small_study):
    url, _ = small_study
    port = free_port()
    proc = subprocess.Popen(
        _cli("dashboard", "--storage", url, "--port", str(port)),
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        body = dashboard_studies(port)
        studies = {s["study_name"]: s["study_id"] for s in body["study_summaries"]}
        assert "small" in studies
        with urllib.request.urlopen(
            f"http://127.0.0.1:{port}/api/studies/{studies['small']}", timeout=5
        ) as r:
            detail = r.read().decode()
        assert "Capacity vs pretraining" in detail and "8 of 8 cells done" in detail
        assert "accuracy_vs_depth" in detail and "gain_vs_depth" in detail
        assert len(json.loads(detail)["trials"]) == 8
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=20)
    assert f"http://127.0.0.1:{port}/" in out


def test_bad_storage_and_changed_setup_are_named(tmp_path):
    with pytest.raises(InputError, match="neither a database URL"):
        make_storage("medspt.db")
    url = f"sqlite:///{tmp_path / 'c.db'}"
    _demo_study(url, "c", n_trials=0)
    with pytest.raises(InputError, match="already exists with another set-up.*depths"):
        _demo_study(url, "c", depths=(1, 2), n_trials=0)
    with pytest.raises(InputError, match="params may not set 'depth'"):
        _demo_study(url, "c", params={"depth": 3})
    with pytest.raises(InputError, match="maskings \\['nope'\\]"):
        _demo_study(url, "c", maskings=("nope",))


def test_tuning_chooses_per_outer_fold_on_its_own_validation_subjects(tmp_path):
    url = f"sqlite:///{tmp_path / 't.db'}"
    study = _demo_study(url, "t", maskings=(), tune=True, n_trials=2)
    (cell,) = study.get_trials(states=(TrialState.COMPLETE,))
    res = results_frame(study)
    ws, folds = load_study_data(study.user_attrs["medspt"]["data"])
    assert len(folds) == 2 and len(res) == 2
    for k, (tr, te) in enumerate(folds):
        inner = optuna.load_study(
            study_name=f"t/tune/depth1-scratch-seed0/fold{k}", storage=make_storage(url)
        )
        done = inner.get_trials(states=(TrialState.COMPLETE,))
        assert len(done) == 2
        best = inner.best_trial
        # the choice is the best validation score of this fold's trials ...
        assert best.value == max(t.value for t in done)
        assert best.value == pytest.approx(best.user_attrs["row"]["val_score"])
        row = cell.user_attrs["folds"][k]
        assert row["tuned_params"] == best.params
        assert row["balanced_accuracy"] == best.user_attrs["row"]["balanced_accuracy"]
        # ... and no subject whose validation score took part is a test subject of the
        # fold it chose for (averaging over folds would put fold j's test subjects here)
        test_subjects = set(ws.groups[te])
        train_subjects = set(ws.groups[tr])
        chose = set(row["selection_subjects"].split())
        assert chose and chose <= train_subjects and not chose & test_subjects
        for t in done:
            assert set(t.user_attrs["val_subjects"].split()) <= train_subjects
    assert {"lr", "d_model"} <= set(res.filter(like="tuned_").columns.str[6:])
    assert (
        res.set_index("fold").loc[0, "tuned_d_model"]
        == cell.user_attrs["folds"][0]["tuned_params"]["d_model"]
    )


def test_scratch_long_is_the_compute_matched_control_of_a_study(tmp_path):
    url = f"sqlite:///{tmp_path / 'l.db'}"
    params = dict(TINY_PARAMS, epochs=2, pretrain_epochs=3)
    study = _demo_study(url, "l", scratch_long=True, params=params, seeds=(0,))
    assert _complete_per_cell(url, "l") == Counter(
        {(1, "scratch", 0): 1, (1, "scratch-long", 0): 1, (1, "spt-span", 0): 1}
    )
    res = results_frame(study).set_index(["config", "fold"])
    for k in (0, 1):
        spt, long = res.loc[("spt-span", k)], res.loc[("scratch-long", k)]
        # as many optimizer steps as SPT's pretraining + fine-tuning budget, all run
        assert long["optimizer_steps"] >= spt["optimizer_steps"]
        assert long["optimizer_steps"] == res.loc[("scratch", k), "optimizer_steps"] * 5 / 2
    table = comparison_table(results_frame(study))
    assert ("spt-span", "scratch-long") in set(zip(table["config"], table["versus"]))


def test_alibi_configuration_and_attention_columns_reach_the_report(tmp_path):
    url = f"journal:{tmp_path / 'a.log'}"
    study = _demo_study(url, "alibi", alibi=True, maskings=(), seeds=(0,))
    assert _complete_per_cell(url, "alibi") == Counter(
        {(1, "scratch", 0): 1, (1, "scratch-alibi", 0): 1}
    )
    res = results_frame(study)
    assert {"attention_distance", "uniform_distance", "locality_ratio"} <= set(res.columns)
    alibi = res[res.config == "scratch-alibi"]
    assert (alibi["positional"] == "alibi").all() and not alibi["pretrain"].any()
    # N = 10 tokens per 4-s window: uniform attention's mean distance is (N²-1)/(3N) = 3.3
    assert res["uniform_distance"].unique().tolist() == [pytest.approx(3.3)]
    paths = write_report(study, tmp_path / "rep")
    table = pd.read_csv(paths["capacity"]).set_index("config")
    for config in ("scratch", "scratch-alibi"):
        mine = res[res.config == config]
        assert table.loc[config, "locality_ratio"] == pytest.approx(mine["locality_ratio"].mean())
        assert table.loc[config, "attention_distance"] == pytest.approx(
            mine["attention_distance"].mean()
        )
    # ALiBi's fixed bias keeps attention closer than learned positions after one epoch
    assert table.loc["scratch-alibi", "locality_ratio"] > table.loc["scratch", "locality_ratio"]
    assert table.loc["scratch-alibi", "gain_vs_scratch"] == pytest.approx(
        alibi["balanced_accuracy"].mean() - res[res.config == "scratch"]["balanced_accuracy"].mean()
    )
    text = paths["report"].read_text()
    assert "attention distance | locality |" in text and "| 1 | scratch-alibi |" in text


def test_params_may_not_set_what_the_grid_sets(tmp_path):
    url = f"sqlite:///{tmp_path / 'p.db'}"
    with pytest.raises(InputError, match="params may not set 'masking'"):
        _demo_study(url, "p", params={**TINY_PARAMS, "masking": "block"})
    # ALiBi shared by every configuration would make scratch-alibi plain scratch
    with pytest.raises(InputError, match="scratch-alibi, which would then be scratch again"):
        _demo_study(url, "p", alibi=True, params={**TINY_PARAMS, "positional": "alibi"})
    from medspt.study.runner import _checked_params

    # without scratch-alibi, ALiBi for every configuration is a setting like any other
    kept = _checked_params({"positional": "alibi"}, (1,), ("span",), (0,), True, False)
    assert kept == {"positional": "alibi"}


def test_shared_positions_reach_every_cell_and_the_rows(tmp_path):
    """A study may pin positions (the default model's relative ones, say): every
    configuration uses them but scratch-alibi, and the rows say which each used."""
    url = f"journal:{tmp_path / 'r.log'}"
    params = {**TINY_PARAMS, "positional": "relative"}
    study = _demo_study(url, "rel", alibi=True, maskings=("span",), seeds=(0,), params=params)
    res = results_frame(study)
    assert set(res["config"]) == {"scratch", "scratch-alibi", "spt-span"}
    assert (res.loc[res.config == "scratch-alibi", "positional"] == "alibi").all()
    assert (res.loc[res.config != "scratch-alibi", "positional"] == "relative").all()
    assert study.user_attrs["medspt"]["params"]["positional"] == "relative"
    from medspt.evaluation.configs import config_params

    fits = {c: config_params(c, 1, 0, params)["positional"] for c in set(res["config"])}
    assert fits == {"scratch": "relative", "scratch-alibi": "alibi", "spt-span": "relative"}


def test_trials_of_other_machines_are_reaped_when_their_heartbeat_stops(tmp_path):
    import time as _time

    from medspt.study.runner import reap_dead_trials

    storage = make_storage(f"journal:{tmp_path / 'h.log'}")
    study = optuna.create_study(storage=storage, study_name="h")
    old, fresh, local = (study.ask() for _ in range(3))
    old.set_user_attr("worker", "elsewhere:1")
    old.set_user_attr("heartbeat", _time.time() - 3600)
    fresh.set_user_attr("worker", "elsewhere:2")
    fresh.set_user_attr("heartbeat", _time.time())
    local.set_user_attr("worker", f"{__import__('socket').gethostname()}:{os.getpid()}")
    local.set_user_attr("heartbeat", _time.time() - 3600)  # this process: alive
    assert reap_dead_trials(study) == 1
    states = {t.number: t.state for t in study.get_trials()}
    assert states == {0: TrialState.FAIL, 1: TrialState.RUNNING, 2: TrialState.RUNNING}
    err = study.get_trials()[0].user_attrs["error"]
    assert err.startswith("worker elsewhere:1 sent no heartbeat for 36")


def test_running_cells_write_a_heartbeat_on_journal_storage(tmp_path):
    study = _demo_study(f"journal:{tmp_path / 'hb.log'}", "hb", maskings=(), seeds=(0,))
    done = study.get_trials(states=(TrialState.COMPLETE,))
    assert len(done) == 1
    beats = [t.user_attrs.get("heartbeat") for t in done]
    assert all(isinstance(b, float) for b in beats)
    for t, b in zip(done, beats):  # written while the trial ran
        assert t.datetime_start.timestamp() - 1 <= b <= t.datetime_complete.timestamp() + 1


def test_device_is_each_workers_own_not_the_studys(tmp_path):
    url = f"sqlite:///{tmp_path / 'd.db'}"
    study = _demo_study(url, "d", n_trials=0, params={**TINY_PARAMS, "device": "cpu"})
    assert "device" not in study.user_attrs["medspt"]["params"]
    _demo_study(url, "d", n_trials=0, params={**TINY_PARAMS, "device": "auto"})  # same set-up
    if torch.cuda.is_available():
        return
    with pytest.raises(InputError, match=r"device='cuda:3' was .*CUDA is not available; use cpu"):
        _demo_study(url, "d", n_trials=0, params={**TINY_PARAMS, "device": "cuda:3"})
    proc = subprocess.run(
        _cli("worker", "--storage", url, "--study", "d", "--device", "cuda:3"),
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "error: --device cuda:3 was requested but CUDA is not available; use cpu" in proc.stderr


@pytest.mark.parametrize("value", ["0", "-1", "soon"])
def test_heartbeat_must_be_a_positive_number_of_seconds(value):
    proc = subprocess.run(
        _cli("worker", "--storage", "sqlite:///x.db", "--study", "x", "--heartbeat", value),
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert f"--heartbeat: expected a positive number of seconds, got '{value}'" in proc.stderr


def test_baselines_are_cells_of_the_grid_and_face_the_validation_choice(tmp_path):
    url = f"sqlite:///{tmp_path / 'b.db'}"
    study = _demo_study(url, "with-rocket", depths=(1, 2), seeds=(0, 1), baselines=("minirocket",))
    done = _complete_per_cell(url, "with-rocket")
    # one MiniRocket cell per seed, at the first depth (its placeholder)
    assert done == Counter(
        _cells((1, 2), ("span",), (0, 1)) | {(1, "minirocket", 0), (1, "minirocket", 1)}
    )
    res = results_frame(study)
    rocket = res[res["config"] == "minirocket"]
    assert len(rocket) == 2 * 2 and rocket["depth"].isna().all()  # seeds x folds, no depth
    assert rocket["val_score"].isna().all() and (rocket["optimizer_steps"] == 0).all()
    pred = res.predictions
    for k in (0, 1):  # the same test subjects as the models of the grid
        mine = pred[(pred["config"] == "spt-span") & (pred["fold"] == k)]["subject"]
        theirs = pred[(pred["config"] == "minirocket") & (pred["fold"] == k)]["subject"]
        assert set(mine) == set(theirs)
    table = comparison_table(res)
    row = table[table["versus"] == "minirocket"]
    assert row["config"].tolist() == ["nested-best"] and row["n_subjects"].iloc[0] == 12
    text = write_report(study, tmp_path / "rep")["report"].read_text()
    assert "## medspt or MiniRocket?" in text and "*minirocket*: aeon's MiniRocket" in text
    # a study created without baseline cells says how to resume it
    _demo_study(url, "plain", seeds=(0,))
    with pytest.raises(InputError, match=r"resumes with baselines=\(\)$"):
        _demo_study(url, "plain", seeds=(0,), baselines=("minirocket",))
