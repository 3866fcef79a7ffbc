"""The dashboard's gain figure shows what the study report states and draws: each SPT
configuration against the better label-only control at its depth, with the numbers of
``gain_vs_depth.csv`` and a title naming the control."""

from __future__ import annotations

from types import SimpleNamespace

import matplotlib.pyplot as plt
import numpy as np
import optuna
import pandas as pd
import pytest
from optuna.distributions import CategoricalDistribution
from optuna.trial import create_trial
from sklearn.metrics import balanced_accuracy_score

from medspt.study import oof, results_frame, write_report
from medspt.study.dashboard import gain_figure, refresh_note

N_SUBJECTS, PER_SUBJECT = 24, 4
CLASSES = ["a", "b"]
# subjects each fit gets right, per (config, depth), seed 1 one more: at depth 1 scratch
# is the better control and SPT beats it clearly (a starred point), at depth 2
# scratch-long is the better control and SPT does not beat it
RIGHT = {
    ("scratch", 1): 12,
    ("scratch-long", 1): 8,
    ("spt-span", 1): 22,
    ("scratch", 2): 11,
    ("scratch-long", 2): 17,
    ("spt-span", 2): 16,
}


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _fold_rows(ws, fold_of: np.ndarray, n_right: int) -> list[dict]:
    """The two fold rows of one cell, with their packed out-of-fold predictions: the
    first ``n_right`` subjects classified right, the others wrong."""
    good = np.repeat(np.arange(N_SUBJECTS) < n_right, PER_SUBJECT)
    pred = np.where(good, ws.y, 1 - ws.y)
    rows = []
    for k in (0, 1):
        te = np.flatnonzero(fold_of == k)
        rows.append(
            {
                "fold": k,
                "n_test": len(te),
                "balanced_accuracy": float(balanced_accuracy_score(ws.y[te], pred[te])),
                "wall_time_s": 1.0,
                "oof": oof.pack(ws, te, np.eye(2)[pred[te]]),
            }
        )
    return rows


def _study() -> optuna.Study:
    """An in-memory study of two depths × {scratch, scratch-long, SPT} × two seeds on two
    subject-wise folds, every number fixed by ``RIGHT``."""
    subject = np.repeat(np.arange(N_SUBJECTS), PER_SUBJECT)
    ws = SimpleNamespace(groups=np.array([f"s{i:02d}" for i in subject]), y=subject % 2)
    fold_of = (subject // 2) % 2  # both classes in each fold
    study = optuna.create_study(study_name="gain", direction="maximize")
    study.set_user_attr("medspt", {"classes": CLASSES, "n_folds": 2})
    configs = sorted({c for c, _ in RIGHT})
    space = {
        "config": CategoricalDistribution(configs),
        "depth": CategoricalDistribution([1, 2]),
        "seed": CategoricalDistribution([0, 1]),
    }
    for (config, depth), n_right in RIGHT.items():
        for seed in (0, 1):
            folds = _fold_rows(ws, fold_of, n_right + seed)
            study.add_trial(
                create_trial(
                    params={"config": config, "depth": depth, "seed": seed},
                    distributions=space,
                    value=float(np.mean([f["balanced_accuracy"] for f in folds])),
                    user_attrs={"folds": folds},
                )
            )
    return study


def _drawn(fig) -> pd.DataFrame:
    """The points of a plotly gain figure, one row each."""
    rows = []
    for trace in fig.data:
        err = trace.error_y
        for i, (x, y, versus) in enumerate(zip(trace.x, trace.y, trace.customdata)):
            rows.append(
                {
                    "config": trace.name,
                    "depth": float(x),
                    "versus": str(versus),
                    "diff": float(y),
                    "low": float(y) - float(err.arrayminus[i]),
                    "high": float(y) + float(err.array[i]),
                    "star": trace.marker.symbol[i] == "star",
                }
            )
    return pd.DataFrame(rows)


def test_dashboard_gain_figure_plots_the_reports_comparisons(tmp_path, monkeypatch):
    study = _study()
    paths = write_report(study, tmp_path / "report")
    report = pd.read_csv(paths["gain_vs_depth_numbers"])
    # the case the figure exists for: the better control changes with depth
    assert dict(zip(report["depth"], report["versus"])) == {1: "scratch", 2: "scratch-long"}

    fig = gain_figure(results_frame(study))
    drawn = _drawn(fig)
    keys = ["config", "depth"]
    got = drawn.sort_values(keys).reset_index(drop=True)
    want = report.sort_values(keys).reset_index(drop=True)
    assert list(got["versus"]) == list(want["versus"])
    assert list(got["star"]) == list(want["star"].astype(bool)) == [True, False]
    for column in ("diff", "low", "high"):
        np.testing.assert_allclose(got[column], want[column], atol=1e-12, err_msg=column)
    title = fig.layout.title.text
    assert "better label-only control" in title
    assert "scratch at depth 1" in title and "scratch-long at depth 2" in title
    # not the gain over scratch the dashboard drew before
    at2 = got[got["depth"] == 2].iloc[0]
    res = results_frame(study)
    over_scratch = (
        res[(res["config"] == "spt-span") & (res["depth"] == 2)]["balanced_accuracy"].mean()
        - res[(res["config"] == "scratch") & (res["depth"] == 2)]["balanced_accuracy"].mean()
    )
    assert at2["diff"] < 0 < over_scratch

    # and refresh_note hands optuna-dashboard exactly this figure
    import optuna_dashboard

    saved = {}
    monkeypatch.setattr(optuna_dashboard, "save_note", lambda study, note: None)
    monkeypatch.setattr(
        optuna_dashboard,
        "save_plotly_graph_object",
        lambda study, figure, graph_object_id: saved.__setitem__(graph_object_id, figure),
    )
    refresh_note(study)
    assert saved["gain_vs_depth"].to_json() == fig.to_json()
