"""Shared by the study tests: tiny models on the demo data, the CLI in child processes,
and a hook that stops a child at a fixed point of a study."""

import json
import os
import sys
import textwrap
import time
import urllib.request
from collections import Counter

import optuna
from optuna.trial import TrialState

from medspt.study import grid_cells, make_storage, run_study

TINY = ["--d-model", "8", "--n-heads", "2", "--epochs", "1", "--pretrain-epochs", "1"]
TINY += ["--min-steps", "0", "--patch-len", "8", "--n-estimators", "1"]
TINY += ["--batch-size", "128", "--cv", "2", "--window", "4s", "--quiet", "--no-scratch-long"]
TINY += ["--no-baselines"]  # baseline cells have their own test
TINY_PARAMS = dict(
    d_model=8,
    n_heads=2,
    epochs=1,
    pretrain_epochs=1,
    batch_size=128,
    min_steps=0,
    patch_len=8,
    n_estimators=1,
)


def demo_study(url: str, name: str, **kw):
    """run_study on the demo data with tiny models; ``kw`` overrides the grid etc."""
    base = dict(depths=(1,), maskings=("span",), cv=2, window="4s", params=TINY_PARAMS)
    base["scratch_long"] = False  # its own test below; the mechanics need fewer cells
    base["baselines"] = ()  # likewise
    return run_study("demo", storage=url, study_name=name, verbose=False, **{**base, **kw})


def cli(*args) -> list[str]:
    return [sys.executable, "-m", "medspt.cli.commands", "study", *args]


def env():
    return dict(os.environ, PYTHONWARNINGS="ignore", OMP_NUM_THREADS="1")


def complete_per_cell(url: str, name: str) -> Counter:
    study = optuna.load_study(study_name=name, storage=make_storage(url, heartbeat=None))
    done = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    return Counter((t.params["depth"], t.params["config"], t.params["seed"]) for t in done)


def cells(depths, maskings, seeds):
    return {(c.depth, c.config, c.seed) for c in grid_cells(depths, maskings, True, seeds)}


def cli_with_fit_fold_hook(hook: str) -> list[str]:
    """The CLI in a child process whose ``runner.fit_fold`` first runs ``hook``: a fixed
    point in the study where a test acts, however fast the machine is."""
    script = (
        "import os, pathlib, signal, sys, time\n"
        "import medspt.study.runner as runner\n"
        "fit_fold, calls = runner.fit_fold, []\n"
        "def hooked(*args, **kwargs):\n"
        "    calls.append(1)\n"
        + textwrap.indent(hook.strip(), "    ")
        + "\n    return fit_fold(*args, **kwargs)\n"
        "runner.fit_fold = hooked\n"
        "from medspt.cli.commands import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    return [sys.executable, "-c", script]


def dashboard_studies(port: int, tries: int = 120) -> dict:
    """The study list of the optuna-dashboard on 127.0.0.1:``port``, once it answers."""
    for _ in range(tries):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/studies", timeout=2) as r:
                return json.load(r)
        except OSError:
            time.sleep(0.25)
    raise AssertionError(f"the dashboard on port {port} did not answer")
