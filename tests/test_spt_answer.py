"""The one-paragraph answer to "did self-pretraining help?": SPT against the compute-matched
control at each depth, the interval, the corrected p-value and the cost in fitting time."""

from __future__ import annotations

import numpy as np
import pandas as pd

from medspt.estimator.metrics import predictions_frame
from medspt.evaluation.comparisons import fit_times, spt_answer
from medspt.evaluation.results import Results


def _results(spt_right: float, control: str = "scratch-long", n_subjects: int = 40) -> Results:
    """Two folds of ``n_subjects`` subjects, 4 windows each; the control is right on half
    of the subjects' windows, SPT on a share ``spt_right`` of the subjects."""
    rng = np.random.default_rng(0)
    subjects = np.repeat([f"s{i}" for i in range(n_subjects)], 4)
    y = np.repeat(np.arange(n_subjects) % 2, 4)
    fold = np.repeat(np.arange(n_subjects) % 2, 4)
    rows, preds = [], []
    for config, right, wall in (("spt-span", spt_right, 30.0), (control, 0.5, 20.0)):
        good = np.repeat(rng.random(n_subjects) < right, 4)
        pred = np.where(good, y, 1 - y)
        for k in (0, 1):
            te = fold == k
            proba = np.eye(2)[pred[te]]
            keys = dict(config=config, depth=2, seed=0, fold=k)
            window = np.flatnonzero(te)
            preds.append(predictions_frame(window, subjects[te], y[te], proba, ["a", "b"], **keys))
            acc = float((pred[te] == y[te]).mean())
            rows.append(dict(config=config, depth=2, seed=0, fold=k, balanced_accuracy=acc,
                             wall_time_s=wall))  # fmt: skip
    res = Results(pd.DataFrame(rows))
    res.predictions = pd.concat(preds, ignore_index=True)
    res.classes = np.array(["a", "b"])
    return res


def test_a_clear_gain_is_stated_with_its_interval_and_cost():
    text = spt_answer(_results(spt_right=0.95))
    assert text.startswith("**Did self-pretraining help?** SPT was compared with the "
                           "compute-matched label-only control (scratch-long)")  # fmt: skip
    assert "paired over 40 subjects (1 comparison, Holm-corrected)" in text
    assert "It helped at depth 2 with span masking: +0." in text and "95 % CI +0." in text
    assert "A fit with SPT took 30 s on average against 20 s for scratch-long (1.5×)." in text
    assert "did not" not in text and "worse" not in text


def test_no_gain_and_a_loss_are_said_as_they_are():
    same = spt_answer(_results(spt_right=0.5))
    assert (
        "It did not demonstrably help at any depth: the largest difference was at depth 2" in same
    )
    worse = spt_answer(_results(spt_right=0.02))
    assert "It did not help at any depth, and it was worse at depth 2 with span" in worse
    assert worse.count("at depth 2") == 1 and "Holm p <0.001" in worse
    assert "95 % CI -0." in worse


def test_without_scratch_long_the_control_is_scratch_and_without_spt_nothing_is_said():
    text = spt_answer(_results(spt_right=0.95, control="scratch"))
    assert "training from scratch on the labels" in text and "for scratch (1.5×)" in text
    only = _results(spt_right=0.5)
    only = Results(only[only["config"] != "spt-span"])
    assert spt_answer(only) == ""


def test_fit_times_average_all_maskings_and_refuse_what_cannot_be_divided():
    rows = pd.DataFrame(
        {
            "config": ["spt-span", "spt-block", "scratch-long", "scratch-long", "scratch"],
            "wall_time_s": [30.0, 50.0, 10.0, 30.0, 999.0],
        }
    )
    assert fit_times(rows, "scratch-long") == (40.0, 20.0)
    assert fit_times(rows.drop(columns="wall_time_s"), "scratch-long") is None
    assert fit_times(rows, "scratch-tiny") is None  # no control rows: nothing to compare
    zero = rows.assign(wall_time_s=[30.0, 50.0, 0.0, 0.0, 1.0])
    assert fit_times(zero, "scratch-long") is None  # a ratio against 0 s means nothing
    no_spt = rows[~rows["config"].str.startswith("spt-")]
    assert fit_times(no_spt, "scratch-long") is None


def test_fit_times_compare_only_cells_both_have():
    # a partial grid: the control has already run depth 4, SPT only depth 1
    rows = pd.DataFrame(
        {
            "config": ["spt-span", "spt-block", "scratch-long", "scratch-long"],
            "depth": [1, 1, 1, 4],
            "seed": [0, 0, 0, 0],
            "fold": [0, 0, 0, 0],
            "wall_time_s": [30.0, 50.0, 20.0, 500.0],
        }
    )
    assert fit_times(rows, "scratch-long") == (40.0, 20.0)
    # per cell first: a cell with two maskings weighs as much as a cell with one
    more = pd.concat([rows, rows.iloc[[0]].assign(depth=4, wall_time_s=100.0)])
    assert fit_times(more, "scratch-long") == (70.0, 260.0)
    assert fit_times(rows.assign(fold=[0, 0, 1, 1]), "scratch-long") is None  # no shared cell
