"""benchmarks/select_defaults.py and benchmarks/default_model.py: the selection rule never
reads test subjects, ties go to the earlier candidate, and the default's report
aggregates exactly the stored runs."""

import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import FAST

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import default_model as dm  # noqa: E402
import select_defaults as sd  # noqa: E402

from medspt import evaluate, from_arrays, subject_folds  # noqa: E402


@pytest.fixture
def windows(arrays):
    X, y, groups = arrays
    return from_arrays(X, y, groups)


def test_inner_split_uses_training_subjects_only():
    rng = np.random.default_rng(0)
    groups = np.repeat([f"s{i}" for i in range(20)], 5)
    y = np.repeat(np.arange(20) % 2, 5)
    windows = from_arrays(rng.standard_normal((100, 2, 16)), y, groups)
    folds = subject_folds(windows.y, windows.groups, n_splits=4)
    for k, (train, test) in enumerate(folds):
        fit, val = sd.inner_split(windows, np.asarray(train), k)
        g = windows.groups
        assert set(g[fit]).isdisjoint(g[val])  # whole subjects on one side
        assert set(fit) | set(val) == set(train)  # every training window, nothing else
        assert set(g[val]).isdisjoint(g[test]) and set(g[fit]).isdisjoint(g[test])
        assert set(windows.y[val]) == set(windows.y[fit]) == {0, 1}  # stratified
        assert len(set(g[val])) == pytest.approx(0.25 * len(set(g[train])), abs=1)


def test_choose_weighs_protocols_equally_and_breaks_ties_toward_earlier_candidates():
    names = list(sd.CANDIDATES)
    rows = []
    # GPD-1 has three folds, NE-1 one: a protocol's mean counts once, whatever its folds
    scores = {names[0]: (0.70, 0.60), names[1]: (0.703, 0.601), names[2]: (0.60, 0.75)}
    for name, (gpd, ne) in scores.items():
        rows += [dict(protocol="GPD-1", fold=f, candidate=name, balanced_accuracy=gpd, fit_s=1)
                 for f in range(3)]  # fmt: skip
        rows.append(dict(protocol="NE-1", fold=0, candidate=name, balanced_accuracy=ne, fit_s=2))
    per, winner = sd.choose(pd.DataFrame(rows))
    assert per.loc[names[2], "score"] == pytest.approx((0.60 + 0.75) / 2)
    assert winner == names[2]  # 0.675 beats 0.650 and 0.652
    # within the tie margin, the earlier (simpler) candidate wins over a slightly better one
    rows = [r for r in rows if r["candidate"] != names[2]]
    per, winner = sd.choose(pd.DataFrame(rows))
    assert per.loc[names[1], "score"] > per.loc[names[0], "score"]
    assert winner == names[0]
    assert list(per.index) == names[:2] and (per["folds"] == 3).all()


def test_default_model_report_aggregates_the_stored_runs(windows, tmp_path, monkeypatch):
    monkeypatch.setattr(dm, "OUT", tmp_path)
    monkeypatch.setattr(dm, "RESULTS", tmp_path)
    folds = subject_folds(windows.y, windows.groups, n_splits=4)
    params = {k: v for k, v in FAST.items() if k != "depth"}
    res = evaluate(windows, cv=folds, seeds=(0,), verbose=False, **params)
    (tmp_path / "NE-1").mkdir()
    rows_csv, pred_csv = dm._paths("NE-1", "default", 0)
    res.predictions.to_csv(pred_csv, index=False)
    pd.DataFrame(res).to_csv(rows_csv, index=False)
    # a baseline on the same folds: rows and predictions as benchmarks/baselines.py writes
    base = pd.DataFrame(res[res["config"] == "scratch"]).assign(config="tsai-minirocket")
    base["depth"] = np.nan
    base["balanced_accuracy"] = 0.5
    base.to_csv(tmp_path / "baselines_NE-1_minirocket-oof.csv", index=False)
    bp = res.predictions[res.predictions["config"] == "scratch"].assign(config="tsai-minirocket")
    bp["depth"] = np.nan
    bp.to_csv(tmp_path / "baselines_NE-1_minirocket-oof_predictions.csv.gz", index=False)

    loaded = dm.load("NE-1")
    assert len(loaded) == len(res) + len(base)
    assert len(loaded.predictions) == len(res.predictions) + len(bp)
    lines = dm.section("NE-1")
    text = "\n".join(lines)
    spt = res[res["config"] == "spt-span"]
    mean_ba = spt["balanced_accuracy"].mean()
    shown = re.search(r"\| mean \| \*\*([0-9.]+)\*\* \|", text)
    assert float(shown.group(1)) == pytest.approx(mean_ba, abs=6e-4)
    assert f"seeds [0], {len(folds)} subject-wise folds" in text
    assert f"| **{0.5:.3f}** |" in text  # MiniRocket's mean in the last columns
    row0 = spt[spt["fold"] == 0].iloc[0]
    assert f"| 0 | {row0['balanced_accuracy']:.3f} | {row0['subject_accuracy']:.3f} |" in text
    goal = dm.TARGETS["NE-1"]["balanced_accuracy"]
    verdict = "(met)" if mean_ba >= goal else "(**not met**, short by"
    assert f"balanced accuracy target {goal:.2f}: {shown.group(1)} {verdict}" in text
    assert "| spt-span | scratch-long |" in text and "| spt-span | tsai-minirocket |" in text


def test_the_plan_runs_the_default_with_every_seed_first():
    plan = dm._plan()
    assert plan[: len(dm.SEEDS)] == [("default", s) for s in dm.SEEDS]
    rest = plan[len(dm.SEEDS) :]
    assert rest == [(v, 0) for v in [*dm.ABLATION, f"depth {dm.DEEPER}"]]
    assert len(set(plan)) == len(plan)
    # every ablation removes something the default has
    from medspt import SPTClassifier

    defaults = SPTClassifier().get_params()
    for name, change in dm.ABLATION.items():
        assert any(defaults[k] != v for k, v in change.items()), name
