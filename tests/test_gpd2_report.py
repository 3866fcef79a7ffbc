"""benchmarks/gpd2.py's report: GPD-1's windows aggregated per subject, and SPT's gain on
whole walks against its gain on windows computed over the same subjects."""

import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import gpd2  # noqa: E402
from _common import append_csv  # noqa: E402
from _gpd2_report import render_accuracy  # noqa: E402
from _gpd2_stats import per_subject  # noqa: E402

SUBJECTS = [f"S{i:02d}" for i in range(10)]
LABELS = np.arange(10) % 2  # S00 control, S01 PD, ...


def _subject_rows(config, right, protocol="GPD-2", windows=1):
    """One row per window; a subject's windows are all right or all wrong."""
    rows = []
    for i, (s, y) in enumerate(zip(SUBJECTS, LABELS)):
        pred = y if right[i] else 1 - y
        for w in range(windows):
            rows.append(
                dict(
                    config=config,
                    depth=2,
                    seed=0,
                    fold=(i // 2) % 2,  # both classes in each fold
                    window=i * windows + w,
                    subject=s,
                    y=y,
                    pred=pred,
                    proba_control=0.9 if pred == 0 else 0.1,
                    proba_PD=0.1 if pred == 0 else 0.9,
                    protocol=protocol,
                )
            )
    return pd.DataFrame(rows)


def test_windows_become_one_prediction_per_subject_by_their_mean_probability():
    w = pd.DataFrame(
        dict(
            config="c",
            depth=2,
            seed=0,
            fold=0,
            subject=["a", "a", "a", "b", "b"],
            label_code=[1, 1, 1, 0, 0],
            predicted_code=[1, 0, 0, 0, 1],
            proba_control=[0.1, 0.6, 0.6, 0.8, 0.3],
            proba_PD=[0.9, 0.4, 0.4, 0.2, 0.7],
        )
    )
    s = per_subject(w).set_index("subject")
    # a: mean PD 0.567 > 0.5 although two of its three windows said control
    assert s.loc["a", "proba_PD"] == pytest.approx(1.7 / 3)
    assert s.loc["a", "predicted_code"] == 1 and s.loc["a", "label_code"] == 1
    assert s.loc["b", "proba_PD"] == pytest.approx(0.45)
    assert s.loc["b", "predicted_code"] == 0
    assert len(s) == 2


def test_report_states_spts_gain_on_whole_walks_against_its_gain_on_windows(tmp_path):
    half = np.arange(10) < 5
    rows = pd.concat(
        [
            _subject_rows("spt-hierarchical", np.ones(10, bool)),
            _subject_rows("scratch-hierarchical", half),  # right on S00-S04 only
            _subject_rows("tsai-minirocket", np.arange(10) < 3),  # right on S00-S02
        ]
    )
    rows.to_csv(tmp_path / "gpd2_accuracy_predictions.csv", index=False)
    fits = rows.groupby(["config", "fold", "seed", "protocol"], as_index=False).size()
    fits = fits.assign(depth=2, wall_time_s=10.0, optimizer_steps=100, settings='{"patch_len": 8}')
    fits.to_csv(tmp_path / "gpd2_accuracy.csv", index=False)
    windows = pd.concat(
        [
            _subject_rows("spt-span", np.ones(10, bool), "GPD-1", windows=3),
            _subject_rows("scratch", np.arange(10) != 0, "GPD-1", windows=3),  # S00 wrong
        ]
    ).drop(columns="protocol")
    windows.to_csv(tmp_path / "gpd1.csv", index=False)
    args = gpd2.parse_args(
        ["report", "--out-dir", str(tmp_path), "--gpd1-predictions", str(tmp_path / "gpd1.csv")]
    )
    text = render_accuracy(args, [], 1.0)
    section = text.split("## Does SPT help more on whole walks than on windows?")[1]
    acc = next(line for line in section.splitlines() if "| accuracy |" in line)
    gain, gain_ref, diff = (float(x) for x in re.findall(r"[+-]\d\.\d{3}", acc)[:3])
    assert gain == pytest.approx(0.5)  # 5 of 10 subjects more
    assert gain_ref == pytest.approx(0.1)  # 1 of 10
    assert diff == pytest.approx(0.4)
    assert "(n=10)" in acc
    # the subject-level comparison of SPT and scratch on whole walks
    spt = next(line for line in text.splitlines() if line.startswith("| spt-hierarchical | scr"))
    assert "+0.500" in spt
    # against MiniRocket on the same walks: balanced accuracy 1.0 against (2/5 + 1/5) / 2
    rocket = text.split("## Against MiniRocket on the same whole walks")[1].split("##")[0]
    spt = next(line for line in rocket.splitlines() if line.startswith("| spt-hierarchical"))
    assert "| 1.000 | 0.300 | +0.700 |" in spt


def test_rows_with_other_columns_are_appended_under_one_header(tmp_path):
    path = tmp_path / "rows.csv"
    append_csv(path, pd.DataFrame([dict(config="spt", seed=0, wall_time_s=1.5)]))
    append_csv(path, pd.DataFrame([dict(seed=1, config="scratch", wall_time_s=2.5)]))
    append_csv(path, pd.DataFrame([dict(config="minirocket", seed=0, n_params=7)]))
    append_csv(path, pd.DataFrame([dict(config="spt", seed=2)]))
    got = pd.read_csv(path)
    assert got.columns.tolist() == ["config", "seed", "wall_time_s", "n_params"]
    assert got["config"].tolist() == ["spt", "scratch", "minirocket", "spt"]
    assert got["seed"].tolist() == [0, 1, 0, 2]
    assert got["wall_time_s"].tolist()[:2] == [1.5, 2.5]
    assert got["n_params"].tolist()[2] == 7 and got["wall_time_s"].isna().tolist()[2:] == [1, 1]


def test_a_stored_fit_counts_as_done_only_under_the_same_defaults(tmp_path):
    from _gpd2_accuracy import _done

    csv = tmp_path / "rows.csv"
    old = dict(config="spt", protocol="GPD-2", fold=0, seed=0, settings="{}")
    pd.DataFrame([old]).to_csv(csv, index=False)  # a row from before defaults were recorded
    (only,) = _done(csv)
    assert only[:5] == ("spt", "GPD-2", 0, 0, "{}") and only[5] != "0a1b2c3d"
    append_csv(csv, pd.DataFrame([{**old, "fold": 1, "defaults": "0a1b2c3d"}]))
    done = _done(csv)
    assert ("spt", "GPD-2", 1, 0, "{}", "0a1b2c3d") in done
    assert ("spt", "GPD-2", 0, 0, "{}", "0a1b2c3d") not in done  # other (unknown) defaults
