"""benchmarks/minirocket_check.py: MiniRocket inside medspt against the stored tsai runs."""

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import minirocket_check as mc  # noqa: E402


def _rows(values: dict[int, list[float]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"fold": k, "seed": s, "balanced_accuracy": v}
            for k, vs in values.items()
            for s, v in enumerate(vs)
        ]  # fmt: skip
    )


def test_fold_table_averages_seeds_within_folds():
    old = _rows({0: [0.7, 0.8, 0.9], 1: [0.5, 0.5, 0.5]})
    new = _rows({0: [0.6, 0.6, 0.9], 1: [0.6, 0.7, 0.8]})
    t = mc.fold_table(old, new, "balanced_accuracy")
    assert t.loc[0, "tsai"] == pytest.approx(0.8) and t.loc[0, "aeon"] == pytest.approx(0.7)
    assert t.loc[1, "diff"] == pytest.approx(0.2)
    assert t.loc[0, "tsai_sd"] == pytest.approx(np.std([0.7, 0.8, 0.9], ddof=1))
    assert t.loc[1, "tsai_sd"] == 0.0


def test_fold_subjects_reads_each_folds_test_subjects():
    pred = pd.DataFrame(
        {"seed": [0, 0, 0, 1], "fold": [0, 0, 1, 0], "subject": ["a", "b", "c", "z"]}
    )
    assert mc.fold_subjects(pred) == {0: frozenset({"a", "b"}), 1: frozenset({"c"})}


@pytest.mark.parametrize("protocol", ["GPD-1", "NE-1"])
def test_stored_runs_scored_identical_subjects_per_fold(protocol):
    old, new = mc.load(protocol, mc.OLD), mc.load(protocol, mc.NEW)
    if old is None or new is None:
        pytest.skip(f"{protocol}: the stored runs of both MiniRockets are not in the results")
    old_subjects, new_subjects = mc.fold_subjects(old[1]), mc.fold_subjects(new[1])
    assert sorted(new_subjects) == [0, 1, 2, 3, 4]
    assert old_subjects == new_subjects
    # every seed of the new run scored the same subjects as seed 0
    for _, g in new[1].groupby("seed"):
        assert mc.fold_subjects(g) == new_subjects
    assert sorted(new[0]["seed"].unique()) == [0, 1, 2]
