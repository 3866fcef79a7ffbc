"""Confound probes: position, channel means and window levels, on constructed windows and
real data."""

import numpy as np
import pandas as pd
import pytest
from conftest import real_dataset
from sklearn.model_selection import GroupKFold

from medspt.core.errors import InputError
from medspt.data.windowset import WindowSet, from_arrays
from medspt.evaluation.probes import (
    LEAK_MARGIN,
    PROBES,
    confound_probes,
    probe_markdown,
    probe_summary,
    probe_table,
    probe_table_markdown,
    probe_warnings,
)

BASE_COLUMNS = [
    "config",
    "depth",
    "seed",
    "fold",
    "window",
    "subject",
    "label",
    "predicted",
    "label_code",
    "predicted_code",
]


def windows(
    y_of: str = "timeline",
    n_subjects: int = 20,
    per: int = 40,
    n_classes: int = 3,
    fs: float | None = 2.0,
    offset: float = 0.0,
    seed: int = 0,
) -> WindowSet:
    """Noise windows of ``n_subjects`` recordings, ``per`` windows each (stride 8 samples).

    ``y_of="timeline"``: every subject goes through the same phases in the same order
    (A, B, A, C, ... over equal quarters), so position predicts the label and the signals
    do not. ``"random"``: labels drawn independently of everything. ``"subject"``: one label
    per subject, and channel 0 is shifted by ``offset`` times the label (a level that
    encodes the class)."""
    rng = np.random.default_rng(seed)
    n = n_subjects * per
    X = rng.standard_normal((n, 2, 16)).astype(np.float32)
    subjects = np.repeat([f"S{i:02d}" for i in range(n_subjects)], per)
    start = np.tile(np.arange(per) * 8, n_subjects)
    if y_of == "timeline":
        phases = np.array([0, 1, 0, 2, 0, 1, 0, 2])[: max(4, n_classes)] % n_classes
        y = np.tile(phases[np.arange(per) * len(phases) // per], n_subjects)
    elif y_of == "random":
        y = rng.integers(0, n_classes, n)
    else:
        y = np.repeat(np.arange(n_subjects) % n_classes, per)
        X[:, 0] += offset * y[:, None] + rng.normal(0, 0.2, (n, 1))
    meta = pd.DataFrame(
        {"subject": subjects, "recording": "r1", "start": start, "stop": start + 16}
    )
    if fs is not None:
        meta["start_time"] = start / fs
    return WindowSet(
        X=X,
        y=y.astype(np.int64),
        classes=np.array([f"c{k}" for k in range(n_classes)]),
        groups=subjects,
        channels=["a", "b"],
        fs=fs,
        meta=meta,
    )


def folds_of(ws: WindowSet, k: int = 5) -> list:
    return list(GroupKFold(n_splits=k).split(ws.X, ws.y, ws.groups))


def summary_of(ws: WindowSet, probes=("position", "channel-means")) -> pd.DataFrame:
    pred = confound_probes(ws, folds_of(ws), probes=probes)
    return probe_summary(pred, ws.classes).set_index("probe")


# --------------------------------------------------------------------------- probes


def test_position_probe_finds_a_fixed_timeline():
    ws = windows("timeline")
    s = summary_of(ws)
    assert s.loc["position", "balanced_accuracy"] > 0.9
    assert s.loc["position", "leak"]
    # the signals are noise: the means probe must not find the timeline
    assert s.loc["channel-means", "balanced_accuracy"] < 1 / 3 + LEAK_MARGIN
    assert not s.loc["channel-means", "leak"]
    warns = probe_warnings(s.reset_index())
    assert len(warns) == 1 and "position in its recording" in warns[0]
    assert f"{s.loc['position', 'balanced_accuracy']:.2f}" in warns[0]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_position_probe_at_chance_when_labels_ignore_position(seed):
    ws = windows("random", n_classes=2, seed=seed)  # 800 windows, 20 subjects
    s = summary_of(ws, probes="position")
    # The standard error of balanced accuracy on 800 windows is ~0.018: 0.58 is > 4 of them.
    assert abs(s.loc["position", "balanced_accuracy"] - 0.5) < 0.08
    assert not s.loc["position", "leak"]
    assert probe_warnings(s.reset_index()) == []


def test_channel_means_probe_finds_a_level_that_encodes_the_label():
    ws = windows("subject", n_classes=2, offset=1.5)
    s = summary_of(ws)
    assert s.loc["channel-means", "balanced_accuracy"] > 0.9
    assert s.loc["channel-means", "leak"]
    assert s.loc["position", "balanced_accuracy"] < 0.5 + LEAK_MARGIN
    warns = probe_warnings(s.reset_index())
    assert len(warns) == 1 and "mean level of each channel" in warns[0]
    # and without the offset there is nothing to find
    s0 = summary_of(windows("subject", n_classes=2, offset=0.0), probes="channel-means")
    assert s0.loc["channel-means", "balanced_accuracy"] < 0.5 + LEAK_MARGIN


def test_window_levels_probe_finds_a_spread_that_encodes_the_label():
    ws = windows("subject", n_classes=2, offset=0.0)
    ws.X[:, 0] *= np.where(ws.y == 1, 3.0, 1.0)[:, None]  # class 1 spreads three times wider
    s = summary_of(ws, probes=PROBES)
    assert s.loc["channel-means", "balanced_accuracy"] < 0.5 + LEAK_MARGIN  # levels equal
    assert s.loc["window-levels", "balanced_accuracy"] > 0.9 and s.loc["window-levels", "leak"]
    warns = probe_warnings(s.reset_index())
    assert len(warns) == 1 and "window statistics the model's head receives" in warns[0]


def test_probe_table_says_why_a_probe_did_not_run():
    ws = windows("subject", n_classes=2, offset=1.5)
    ws.meta = ws.meta.assign(start=0).drop(columns="start_time")  # no start positions
    table = probe_table(ws, folds_of(ws))
    assert table["probe"].tolist() == list(PROBES)
    reasons = table.set_index("probe")["not_run"]
    assert "every window starts at the same position" in reasons["position"]
    assert reasons["channel-means"] == reasons["window-levels"] == ""
    assert np.isnan(table.set_index("probe").loc["position", "balanced_accuracy"])
    text = probe_table_markdown(table)
    assert "- position: not run (every window starts" in text
    assert "| channel-means |" in text and "| window-levels |" in text
    assert "**Warning:**" in text  # the level of channel 0 gives the class away
    # the report section of the windows is this table's
    assert probe_markdown(ws, folds_of(ws)) == text


def test_probes_never_see_the_test_labels():
    """The test subjects carry the opposite label at every position: a probe fitted on the
    training windows only gets almost every test window wrong; one that saw them would not."""
    ws = windows("timeline", n_classes=2, n_subjects=10)
    flipped = ~np.isin(ws.groups, ["S00", "S01", "S02"])  # most windows are test windows
    ws.y[flipped] = 1 - ws.y[flipped]
    fold = [(np.flatnonzero(~flipped), np.flatnonzero(flipped))]
    s = probe_summary(confound_probes(ws, fold, probes="position"), ws.classes)
    assert s.loc[0, "balanced_accuracy"] < 0.1


def test_predictions_frame_layout():
    ws = windows("timeline")
    folds = folds_of(ws)
    pred = confound_probes(ws, folds)
    proba_cols = [f"proba_{c}" for c in ws.classes]
    assert list(pred.columns) == BASE_COLUMNS + proba_cols
    assert len(pred) == 3 * len(ws)  # one row per test window per probe
    assert pred["config"].unique().tolist() == [
        "probe-position", "probe-channel-means", "probe-window-levels"
    ]  # fmt: skip
    assert pred["depth"].isna().all() and (pred["seed"] == 0).all()
    for _, g in pred.groupby("config"):
        # every window tested exactly once per probe, in the fold that tests it
        assert np.array_equal(np.sort(g["window"].to_numpy()), np.arange(len(ws)))
        for k, (tr, te) in enumerate(folds):
            rows = g[g["fold"] == k]
            assert np.array_equal(np.sort(rows["window"].to_numpy()), np.sort(te))
            assert not set(rows["subject"]) & set(ws.groups[tr].astype(str))
    w = pred["window"].to_numpy()
    assert (pred["subject"].to_numpy() == ws.groups[w].astype(str)).all()
    assert (pred["label_code"].to_numpy() == ws.y[w]).all()
    proba = pred[proba_cols].to_numpy()
    assert np.allclose(proba.sum(axis=1), 1.0) and (proba >= 0).all()
    assert (pred["predicted_code"].to_numpy() == proba.argmax(1)).all()


def test_class_missing_from_a_training_fold_gets_zero_probability():
    ws = windows("timeline", n_classes=3, n_subjects=10)
    test = ws.groups == "S00"
    fold = [(np.flatnonzero((ws.y != 2) & ~test), np.flatnonzero(test))]
    pred = confound_probes(ws, fold)
    assert (pred["proba_c2"] == 0).all()
    assert np.allclose(pred[["proba_c0", "proba_c1"]].sum(axis=1), 1.0)
    # a training fold with one class: the constant model
    one = [(np.flatnonzero((ws.y == 0) & ~test), np.flatnonzero(test))]
    pred = confound_probes(ws, one, probes="channel-means")
    assert (pred["predicted_code"] == 0).all() and (pred["proba_c0"] == 1).all()


@pytest.mark.filterwarnings("ignore:Mean of empty slice:RuntimeWarning")
def test_missing_values_use_the_training_mean():
    ws = windows("subject", n_classes=2, offset=1.5)
    ws.X[::7, 0, :] = np.nan  # some windows lose channel 0 entirely
    ws.X[::5, 1, :4] = np.nan  # others a few samples
    test = np.isin(ws.groups, ["S03", "S04"])
    ws.X[test, 1, :] = np.nan  # the test subjects lack channel 1
    fold = [(np.flatnonzero(~test), np.flatnonzero(test))]
    pred = confound_probes(ws, fold, probes="channel-means")
    assert np.isfinite(pred.filter(like="proba_").to_numpy()).all()
    # a missing mean counts as the training windows' mean of that channel, nothing else
    filled = WindowSet(ws.X.copy(), ws.y, ws.classes, ws.groups, ws.channels, ws.fs, ws.meta)
    train_means = np.nanmean(ws.X[~test].astype(np.float64), axis=2)
    filled.X[test, 1, :] = np.nanmean(train_means[:, 1])
    same = confound_probes(filled, fold, probes="channel-means")
    np.testing.assert_allclose(same.filter(like="proba_"), pred.filter(like="proba_"), atol=1e-6)
    # and the level of channel 0 still gives the class away
    pred = confound_probes(ws, folds_of(ws), probes="channel-means")
    assert probe_summary(pred, ws.classes).loc[0, "balanced_accuracy"] > 0.8


def test_position_falls_back_to_start_samples():
    ws = windows("timeline")
    folds = folds_of(ws)
    ref = confound_probes(ws, folds, probes="position")
    ws.meta = ws.meta.drop(columns="start_time")  # start / fs
    pd.testing.assert_frame_equal(confound_probes(ws, folds, probes="position"), ref)
    ws.fs = None  # start in samples: a uniform-knot spline does not care about units
    got = confound_probes(ws, folds, probes="position")
    assert np.array_equal(got["predicted_code"], ref["predicted_code"])


# --------------------------------------------------------------------------- summary


def test_summary_numbers_and_chance_levels():
    pred = pd.DataFrame(
        {
            "config": ["probe-position"] * 8,
            "fold": [0, 0, 0, 0, 1, 1, 1, 1],
            "subject": list("aabbccdd"),
            "label_code": [0, 0, 0, 1, 0, 0, 0, 1],
            "proba_x": [0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.2, 0.2],
            "proba_y": [0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.8, 0.8],
        }
    )
    s = probe_summary(pred, ["x", "y"]).iloc[0]
    # pooled: class 0 recall 5/6, class 1 recall 1/2
    assert s["balanced_accuracy"] == pytest.approx((5 / 6 + 1 / 2) / 2)
    assert s["accuracy"] == pytest.approx(6 / 8)
    folds = [0.5, (2 / 3 + 1) / 2]
    assert s["balanced_accuracy_fold_mean"] == pytest.approx(np.mean(folds))
    assert s["balanced_accuracy_fold_std"] == pytest.approx(np.std(folds, ddof=1))
    assert s["chance"] == 0.5 and s["majority_accuracy"] == pytest.approx(6 / 8)
    assert (s["n_windows"], s["n_subjects"], s["n_folds"]) == (8, 4, 2)
    assert s["probe"] == "position"
    assert bool(s["leak"]) == (s["balanced_accuracy"] > 0.5 + LEAK_MARGIN)


# --------------------------------------------------------------------------- errors


def test_errors_name_the_argument_and_the_fix():
    ws = windows("timeline")
    folds = folds_of(ws)
    unlabelled = WindowSet(ws.X, None, ws.classes, ws.groups, ws.channels, ws.fs, ws.meta)
    with pytest.raises(InputError, match="no labels.*ws.y"):
        confound_probes(unlabelled, folds)
    with pytest.raises(InputError, match="unknown probe.*'clock'.*position"):
        confound_probes(ws, folds, probes=("position", "clock"))
    with pytest.raises(InputError, match="probes is empty"):
        confound_probes(ws, folds, probes=())
    no_start = WindowSet(
        ws.X, ws.y, ws.classes, ws.groups, ws.channels, ws.fs, ws.meta[["subject"]]
    )
    with pytest.raises(InputError, match="start_time.*channel-means"):
        confound_probes(no_start, folds)
    confound_probes(no_start, folds, probes="channel-means")  # the other probe still runs
    with pytest.raises(InputError, match="same position"):  # from_arrays: every start is 0
        arr = from_arrays(ws.X, ws.labels, ws.groups)
        confound_probes(arr, folds, probes="position")
    leaky = [(np.arange(len(ws) - 10), np.arange(len(ws) - 20, len(ws)))]
    with pytest.raises(InputError, match="both train and test"):
        confound_probes(ws, leaky)
    with pytest.raises(InputError, match="lie in 0"):
        confound_probes(ws, [(np.arange(10), np.array([len(ws)]))])
    with pytest.raises(InputError, match="lacks the column"):
        probe_summary(confound_probes(ws, folds, probes="position"), ["other", "names", "x"])


# --------------------------------------------------------------------------- real data


@pytest.mark.parametrize(
    "name, folder", [("NE-1", "noneeg"), ("GPD-1", "gaitpdb")], ids=["NE-1", "GPD-1"]
)
def test_real_protocols(name, folder):
    from medspt.datasets import protocol

    p = protocol(name, real_dataset(folder))
    pred = confound_probes(p.windows, p.folds)
    assert len(pred) == 3 * len(p.windows)
    s = probe_summary(pred, p.windows.classes).set_index("probe")
    warns = probe_warnings(s.reset_index())
    if name == "NE-1":
        # every subject went through the phases in the same order
        assert s.loc["position", "balanced_accuracy"] > 0.8
        assert s.loc["position", "leak"]
        assert any("position in its recording" in w for w in warns)
    else:
        # PD vs control is a property of the subject, not of the time in the walk
        assert s.loc["position", "balanced_accuracy"] < 0.5 + LEAK_MARGIN
