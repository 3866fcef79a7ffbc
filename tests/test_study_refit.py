"""``medspt study refit`` and the study report's reader-facing sections."""

from __future__ import annotations

import numpy as np
import pytest
from study_helpers import TINY_PARAMS

import medspt
from medspt.api import choose_configuration
from medspt.cli.commands import main
from medspt.study import run_study
from medspt.study.report import results_frame, write_report


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    url = f"sqlite:///{tmp_path_factory.mktemp('refit') / 's.db'}"
    run_study(
        "demo", storage=url, study_name="r", depths=(1, 2), maskings=("span",), cv=2,
        window="4s", params=TINY_PARAMS, scratch_long=False, verbose=False,
    )  # fmt: skip
    return url


def test_study_refit_saves_the_choice_of_validation_subjects(study, tmp_path, capsys):
    import optuna

    out = tmp_path / "best.safetensors"
    assert main(["study", "refit", "--storage", study, "--study", "r", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    results = results_frame(optuna.load_study(study_name="r", storage=study))
    chosen = choose_configuration(results)
    model = medspt.load(out)
    ev = model.evaluation_
    assert ev["source"] == "study r"
    assert (ev["chosen"]["config"], ev["chosen"]["depth"]) == (chosen["config"], chosen["depth"])
    assert model.depth == chosen["depth"] and model.d_model == 8  # the study's own settings
    assert set(ev["candidates"]) == {f"{c} (depth {d})" for c in ("scratch", "spt-span")
                                     for d in (1, 2)}  # fmt: skip
    assert f"chosen: {chosen['config']} at depth {chosen['depth']}" in printed
    # fitted on every subject of the demo, and it predicts frames cut like the study's
    assert model.data_summary_.n_subjects == 12 and model.frame_spec_.window == 80
    assert (out.with_suffix(".history.png")).read_bytes()[:4] == b"\x89PNG"


def test_study_refit_names_a_missing_study(study, capsys):
    assert main(["study", "refit", "--storage", study, "--study", "nope"]) == 2
    assert "no study 'nope'" in capsys.readouterr().err


def test_report_explains_only_what_was_run(study, tmp_path):
    import optuna

    paths = write_report(optuna.load_study(study_name="r", storage=study), tmp_path / "rep")
    text = paths["report"].read_text()
    assert "*scratch*: trained on the labels only." in text and "*spt-X*" in text
    assert "ALiBi" not in text and "scratch-long*:" not in text  # neither was run
    assert "- **p (Holm)**:" in text and "- **chance**:" in text
    # balanced accuracy: both chance levels are 1/3 with the demo's three classes
    assert "| – | *chance* (majority class = uniform guess) | 0.333 |" in text
    assert "| setting | value |" in text and "| grid.depths | 1, 2 |" in text
    assert "## Per class" in text and "recall even" in text
    assert paths["confusion/scratch_depth2"].read_bytes()[:4] == b"\x89PNG"
    conf = np.loadtxt(paths["confusion"], delimiter=",", skiprows=1, usecols=-1)
    pred_rows = sum(1 for _ in __import__("gzip").open(paths["predictions"])) - 1
    assert conf.sum() == pred_rows
