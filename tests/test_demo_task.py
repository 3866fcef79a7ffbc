"""The demo's built-in synthetic task: what it is, that it is deterministic, that a
convolutional baseline (MiniRocket) can solve it, and that ``medspt demo`` says so and
points to results on data that is not synthetic."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import balanced_accuracy_score

from medspt.api import windows_from
from medspt.baselines import make_baseline
from medspt.cli.commands import (
    PROTOCOL_REPORTS,
    PUBLIC_RESULTS,
    _demo_banner,
    build_parser,
)
from medspt.data.synthetic import (
    CLASSES,
    PHASE_CLASSES,
    RISE_FRACTION,
    make_demo_frame,
    make_phase_frame,
)

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return make_demo_frame(seed=0)


def _segments(labels: pd.Series) -> pd.Series:
    """Lengths (samples) of the runs of one label, in order."""
    run = (labels != labels.shift()).cumsum()
    return labels.groupby(run).size()


def test_demo_frame_columns_classes_subjects_and_attrs(frame):
    assert list(frame.columns) == [
        "subject", "recording", "time", "label", "acc_x", "acc_y", "emg"
    ]  # fmt: skip
    assert CLASSES == ("even", "fall", "rise") and set(frame["label"]) == set(CLASSES)
    assert frame["subject"].nunique() == 12
    assert frame.groupby("subject")["recording"].nunique().eq(2).all()
    assert len(frame) == 12 * 2 * 120 * 20  # 120 s at 20 Hz per recording
    assert frame.attrs == {"synthetic": True, "fs": 20.0}
    assert np.allclose(frame.groupby(["subject", "recording"])["time"].diff().dropna(), 0.05)
    assert not frame[["acc_x", "acc_y", "emg"]].isna().any().any()


def test_demo_frame_is_deterministic_per_seed():
    small = dict(n_subjects=3, seconds_per_recording=40.0)
    first = make_demo_frame(seed=3, **small)
    pd.testing.assert_frame_equal(first, make_demo_frame(seed=3, **small))
    assert not np.allclose(first["acc_x"], make_demo_frame(seed=4, **small)["acc_x"])


def test_labels_change_inside_every_recording_in_segments_of_20_to_40_s(frame):
    lengths = []
    for _, rec in frame.groupby(["subject", "recording"]):
        runs = _segments(rec["label"].reset_index(drop=True)).to_numpy() / 20.0  # seconds
        assert len(runs) >= 2  # the label changes inside every recording
        lengths += list(runs[:-1])  # a recording's last run is cut by its end
    # a run is one segment of 20-40 s, or a few in a row that drew the same class
    assert min(lengths) >= 20 and np.median(lengths) <= 40
    # each subject has its own share of each class: classes are drawn per segment
    shares = pd.crosstab(frame["subject"], frame["label"], normalize="index")
    assert shares.std().min() > 0.05


def test_the_class_is_the_shape_of_each_cycle_not_its_values():
    clean = make_demo_frame(noise=0.0, seed=0)
    for (subject, label), g in clean.groupby(["subject", "label"]):
        if len(g) < 400:  # a few cycles are too few to measure a share
            continue
        rising = np.diff(g["acc_x"].to_numpy()) > 0
        # the share of steps on the way up is the class's rise fraction, give or take the
        # subject's lean (0.05) and the sampling of each cycle
        assert abs(rising.mean() - RISE_FRACTION[label]) < 0.1, (subject, label)
    # within a subject the classes span the same values: same range, same quartiles
    for subject, g in clean.groupby("subject"):
        q = g.groupby("label")["acc_x"].quantile([0.25, 0.5, 0.75]).unstack()
        amplitude = g["acc_x"].max() - g["acc_x"].min()
        assert (q.max() - q.min()).max() < 0.1 * amplitude, subject
    # subjects differ: their own rhythm (crossings of the mean per second) and offsets
    rhythm = clean.groupby("subject")["acc_x"].apply(
        lambda v: np.mean(np.diff(np.sign(v - v.mean())) > 0) * 20.0
    )
    assert rhythm.max() - rhythm.min() > 0.3
    assert clean.groupby("subject")["acc_y"].mean().std() > 0.2


def _held_out(ws, test_subjects):
    test = np.isin(ws.groups, test_subjects)
    return ~test, test


def test_minirocket_separates_the_classes_on_held_out_subjects():
    # what makes the demo's comparison fair: a convolution can see the class
    ws, _ = windows_from(make_demo_frame(n_subjects=6, seed=0), window="4s")
    train, test = _held_out(ws, ["S05", "S06"])
    clf = make_baseline("minirocket", random_state=0)
    clf.fit(ws.X[train], ws.classes[ws.y[train]])
    score = balanced_accuracy_score(ws.classes[ws.y[test]], clf.predict(ws.X[test]))
    assert score > 0.9


def test_a_model_of_window_levels_cannot_tell_the_classes():
    # each window's channel means and standard deviations: near chance (1/3), so only
    # the temporal shape carries the class
    ws, _ = windows_from(make_demo_frame(n_subjects=6, seed=0), window="4s")
    levels = np.concatenate([ws.X.mean(axis=2), ws.X.std(axis=2)], axis=1)
    train, test = _held_out(ws, ["S05", "S06"])
    clf = LogisticRegression(max_iter=1000).fit(levels[train], ws.y[train])
    assert balanced_accuracy_score(ws.y[test], clf.predict(levels[test])) < 0.5


def test_the_earlier_phase_task_keeps_its_classes_and_shares_the_segments():
    old = make_phase_frame(n_subjects=3, seed=1)
    new = make_demo_frame(n_subjects=3, seed=1)
    assert PHASE_CLASSES == ("lag", "lead", "sync") and set(old["label"]) <= set(PHASE_CLASSES)
    assert list(old.columns) == list(new.columns) and old.attrs == new.attrs
    # the same segments: class k of one task is class k of the other
    to_new = dict(zip(PHASE_CLASSES, CLASSES))
    assert old["label"].map(to_new).equals(new["label"])


def test_demo_banner_names_the_data_and_where_other_results_are():
    a = build_parser().parse_args(["demo"])
    banner = _demo_banner(a, ("span",))
    text = " ".join(banner.split())  # the paragraphs are wrapped at 78 columns
    assert all(len(line) <= 78 for line in banner.splitlines()), banner
    assert "SYNTHETIC DATA" in text and "not real recordings" in text
    assert "16 subjects, 3 sensors (acc_x, acc_y, emg)" in text
    assert "rise (slow rise, fast drop), fall (fast rise, slow fall) or even" in text
    assert "medspt and MiniRocket can both solve this task in principle" in text
    assert "(its default training) gain from self-pretraining (spt-span)" in text
    assert "every other setting is the package default" in text
    assert f"Results on public sets: {PUBLIC_RESULTS};" in text
    assert f"the protocol reports {PROTOCOL_REPORTS}. On them MiniRocket leads or ties" in text
    # the pointers lead to files that exist
    assert (ROOT / PUBLIC_RESULTS).is_file()
    for name in ("default_model.md", "paper_table.md"):
        assert name in PROTOCOL_REPORTS and (ROOT / "benchmarks" / "results" / name).is_file()
    quick = " ".join(
        _demo_banner(build_parser().parse_args(["demo", "--quick"]), ("span",)).split()
    )
    assert "(short training (--quick: --min-steps 0))" in quick


def test_demo_evaluate_gives_what_evaluate_gives_on_one_thread():
    # the demo fits its folds side by side; the rows, predictions and probes must be
    # evaluate's own (on one PyTorch thread, as every demo fit runs)
    import torch

    from medspt import evaluate
    from medspt.cli.commands import _demo_evaluate

    df = make_demo_frame(n_subjects=8, seconds_per_recording=60.0, seed=0)
    tiny = dict(d_model=8, n_heads=2, epochs=2, pretrain_epochs=1, min_steps=0, n_estimators=1)
    options = dict(depths=(1,), maskings=("span",), seeds=(0,), baselines=("minirocket",), **tiny)
    mine = _demo_evaluate(df, 2, options, verbose=False)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        theirs = evaluate(df, window="4s", cv=2, verbose=False, **options)
    finally:
        torch.set_num_threads(threads)
    timing = ["wall_time_s", "windows_per_s"]
    assert list(mine["config"]) == ["scratch", "scratch-long", "spt-span", "minirocket"] * 2
    pd.testing.assert_frame_equal(
        pd.DataFrame(mine).drop(columns=timing), pd.DataFrame(theirs).drop(columns=timing)
    )
    pd.testing.assert_frame_equal(mine.predictions, theirs.predictions)
    np.testing.assert_array_equal(mine.classes, theirs.classes)
    pd.testing.assert_frame_equal(mine.probes, theirs.probes)
    assert mine.best_estimator_ is None and mine.chosen_ is None
