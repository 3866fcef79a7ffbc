"""``medspt.write_results``: the folder ``medspt evaluate --out`` writes, from Python; a
note where per-subject figures cannot exist; results tables as markdown."""

from __future__ import annotations

import pandas as pd
import pytest

import medspt
from medspt.data.synthetic import make_demo_frame

TINY = dict(d_model=8, n_heads=2, epochs=2, pretrain_epochs=1, batch_size=64, min_steps=0,
            n_estimators=1)  # fmt: skip


@pytest.fixture(scope="module")
def evaluated():
    # demo recordings: the label changes inside every subject's recordings
    df = make_demo_frame(n_subjects=6)
    return medspt.evaluate(
        df, window="4s", cv=2, depths=(1,), maskings=("span",), scratch_long=False,
        baselines=(), probes=False, verbose=False, **TINY,
    )  # fmt: skip


def test_write_results_writes_what_the_command_line_writes(evaluated, tmp_path):
    table = medspt.write_results(evaluated, tmp_path / "out")
    out = tmp_path / "out"
    for name in ("results.csv", "summary.md", "comparisons.md", "per_class.md",
                 "predictions.csv", "subjects.csv", "accuracy_vs_depth.png",
                 "gain_vs_depth.png"):  # fmt: skip
        assert (out / name).is_file(), name
    # the summary table returned is the one summary.md opens with
    assert list(table["config"]) == list(medspt.summarize(evaluated)["config"])
    rows = pd.read_csv(out / "results.csv")
    assert len(rows) == len(evaluated)
    assert "balanced_accuracy" in (out / "summary.md").read_text()


def test_missing_subject_figures_are_explained(evaluated, tmp_path):
    medspt.write_results(evaluated, tmp_path)
    note = (tmp_path / "subjects" / "README.md").read_text()
    assert not list((tmp_path / "subjects").glob("*.png"))
    assert "scratch, depth 1" in note and "spt-span, depth 1" in note
    assert "more than one class" in note and "subjects.csv" in note


def test_results_print_as_markdown(evaluated):
    text = medspt.summarize(evaluated).to_markdown()
    assert text.splitlines()[0].startswith("|")
