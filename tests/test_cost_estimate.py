"""The cost before the run: planned steps equal the steps a fit makes, and evaluate /
fit say what they will cost before training."""

from __future__ import annotations

import numpy as np
import pytest

import medspt
from medspt.data.synthetic import make_demo_frame
from medspt.estimator.cost import CostEstimate, estimate_fit

SMALL = dict(d_model=8, n_heads=2, batch_size=32, n_estimators=1, patience=None)


@pytest.fixture(scope="module")
def windows():
    return medspt.make_windows(make_demo_frame(n_subjects=6), window="4s")


def _fit_steps(clf) -> int:
    return sum(r["steps"] for stage in clf.history_.values() for r in stage)


@pytest.mark.parametrize(
    "settings",
    [
        dict(min_steps=0, epochs=3, pretrain_epochs=2),  # epochs as given
        dict(min_steps=40, epochs=1, pretrain_epochs=1),  # raised to the floor
        dict(min_steps=0, epochs=2, pretrain=False),  # scratch: one stage
        dict(min_steps=0, epochs=1, pretrain_epochs=2, pretrain=False, steps_like_spt=True),
    ],
)
def test_planned_steps_are_the_steps_a_fit_makes(windows, settings):
    clf = medspt.SPTClassifier(**SMALL, val_size=0, **settings)
    planned = estimate_fit(clf, windows.X, windows.classes[windows.y], probe=False)
    clf.fit(windows)
    assert planned.steps == _fit_steps(clf)
    assert planned.n_train == len(windows.X)
    assert planned.seconds == 0.0  # no probe, no time


def test_the_probe_times_steps_and_scales_them(windows):
    est = estimate_fit(
        medspt.SPTClassifier(**SMALL, min_steps=100), windows.X, windows.classes[windows.y]
    )
    assert 0 < est.pretrain_step_s < 5 and 0 < est.finetune_step_s < 5
    assert est.pretrain_steps >= 100 and est.finetune_steps >= 100
    expected = est.pretrain_steps * est.pretrain_step_s + est.finetune_steps * est.finetune_step_s
    assert est.seconds == pytest.approx(expected)
    text = str(est)
    assert "pretraining" in text and "optimizer steps" in text and "per fit" in text


def test_members_multiply_the_cost():
    one = CostEstimate(100, 80, 1, 10, 20, 0.1, 0.2)
    five = CostEstimate(100, 80, 5, 10, 20, 0.1, 0.2)
    assert one.steps == 30 and five.steps == 150
    assert five.seconds == pytest.approx(5 * one.seconds) == pytest.approx(25.0)
    assert "× 5 members" in str(five) and "members" not in str(one)


def test_evaluate_prints_its_plan_before_training(capsys):
    df = make_demo_frame(n_subjects=6)
    medspt.evaluate(
        df, window="4s", cv=2, depths=(1,), scratch_long=False, baselines=("minirocket",),
        probes=False, verbose=True, min_steps=0, epochs=1, pretrain_epochs=1, **SMALL,
    )  # fmt: skip
    out = capsys.readouterr().out
    plan = next(line for line in out.splitlines() if line.startswith("Plan:"))
    assert "2 folds × 1 seed(s)" in plan
    assert "scratch: 2 fits" in plan and "spt-span: 2 fits" in plan
    assert "plus 2 baseline fits" in plan and "ms per optimizer step" in plan


def test_fit_spt_verbose_prints_the_cost(capsys):
    medspt.fit_spt(make_demo_frame(n_subjects=4), window="4s", verbose=True, min_steps=0,
                   epochs=1, pretrain_epochs=1, **SMALL)  # fmt: skip
    out = capsys.readouterr().out
    assert "cost:" in out and "per fit" in out
    assert np.isfinite(float(out.split("about ")[1].split(" ms")[0]))
