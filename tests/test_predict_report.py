"""What predict and score report on labelled data: scores per level with chance levels,
the window confusion matrix, per-class and per-subject tables, window times in seconds,
and the CLI's printout and files."""

import numpy as np
import pandas as pd
import pytest
from conftest import FAST, subject_frame
from sklearn.metrics import (
    accuracy_score,
    balanced_accuracy_score,
    confusion_matrix,
    f1_score,
    precision_recall_fscore_support,
)

from medspt import fit_spt
from medspt.cli.commands import main
from medspt.core.errors import InputError
from medspt.data.windowset import make_windows

FS = 20.0  # subject_frame's sampling rate


@pytest.fixture(scope="module")
def model():
    # 2-s windows, 1-s stride; a second or two to fit on CPU
    return fit_spt(subject_frame(seed=0), window=40, stride=20, random_state=0, **FAST)


def two_recordings(seed: int = 1) -> pd.DataFrame:
    """New subjects' data, two recordings each, so recordings and subjects differ."""
    a = subject_frame(seed=seed).assign(recording="r1")
    b = subject_frame(seed=seed + 10).assign(recording="r2")
    df = pd.concat([a, b], ignore_index=True)
    df["subject"] = "new-" + df["subject"]
    return df


def _argmax_class(frame: pd.DataFrame, classes) -> np.ndarray:
    cols = [f"proba_{c}" for c in classes]
    return np.asarray(classes)[frame[cols].to_numpy().argmax(1)]


def test_scores_and_confusion_agree_with_sklearn_at_every_level(model):
    clf, df = model, two_recordings()
    pred = clf.predict(df)
    win, classes = pred.windows, list(clf.classes_)
    truth, guess = win["label"].to_numpy(), win["predicted"].to_numpy()

    cm = confusion_matrix(truth, guess, labels=classes)
    np.testing.assert_array_equal(pred.confusion.to_numpy(), cm)
    assert list(pred.confusion.index) == classes == list(pred.confusion.columns)
    assert (pred.confusion.index.name, pred.confusion.columns.name) == ("label", "predicted")

    s = pred.scores
    assert list(s.index) == ["window", "recording", "subject"]
    assert list(s.columns) == [
        "n", "accuracy", "balanced_accuracy", "macro_f1", "chance_majority", "chance_uniform"
    ]  # fmt: skip
    assert s.loc["window", "n"] == len(win)
    assert s.loc["window", "accuracy"] == pytest.approx(accuracy_score(truth, guess))
    assert s.loc["window", "balanced_accuracy"] == pytest.approx(
        balanced_accuracy_score(truth, guess)
    )
    assert s.loc["window", "macro_f1"] == pytest.approx(
        f1_score(truth, guess, labels=classes, average="macro")
    )

    # recordings: mean window probability -> argmax, against the windows' majority label
    g = win.groupby(["subject", "recording"])
    rec_true = g["label"].agg(lambda x: x.value_counts().idxmax())
    rec_pred = _argmax_class(g[[f"proba_{c}" for c in classes]].mean(), classes)
    assert s.loc["recording", "n"] == len(rec_true) == 12
    assert s.loc["recording", "accuracy"] == pytest.approx(accuracy_score(rec_true, rec_pred))

    # subjects: the same rule over all their windows
    g = win.groupby("subject")
    sub_true = g["label"].first()
    sub_pred = _argmax_class(g[[f"proba_{c}" for c in classes]].mean(), classes)
    assert s.loc["subject", "n"] == len(sub_true) == 6
    assert s.loc["subject", "accuracy"] == pytest.approx(accuracy_score(sub_true, sub_pred))

    subjects = pred.subjects.set_index("subject").loc[sub_true.index]
    np.testing.assert_array_equal(subjects["label"], sub_true)
    np.testing.assert_array_equal(subjects["predicted"], sub_pred)
    np.testing.assert_array_equal(subjects["correct"].astype(bool), sub_true == sub_pred)
    np.testing.assert_array_equal(subjects["n_windows"], g.size().loc[sub_true.index])
    top = g[[f"proba_{c}" for c in classes]].mean().max(axis=1)
    np.testing.assert_allclose(subjects["probability"], top.loc[sub_true.index])

    p, r, f, n = precision_recall_fscore_support(truth, guess, labels=classes, zero_division=0)
    np.testing.assert_allclose(pred.per_class.loc[classes, "recall"], r)
    np.testing.assert_allclose(pred.per_class.loc[classes, "precision"], p)
    np.testing.assert_array_equal(pred.per_class.loc[classes, "support"], n)

    assert "balanced_accuracy" in repr(pred) and "chance_majority" in repr(pred)


def test_chance_of_an_imbalanced_label_set(model):
    # 3 "slow" subjects and 1 "fast", all with the same number of windows: 3:1
    df = subject_frame(seed=2)
    df = df[~df["subject"].isin(["fast1", "fast2"])]
    s = model.predict(df).scores
    for level in ("window", "recording", "subject"):
        assert s.loc[level, "chance_majority"] == pytest.approx(0.75)
        assert s.loc[level, "chance_uniform"] == pytest.approx(0.5)


def test_a_class_missing_from_new_data_keeps_every_class(model):
    df = subject_frame(seed=3)
    df = df[df["label"] == "slow"]
    pred = model.predict(df)
    classes = list(model.classes_)
    assert pred.confusion.shape == (2, 2) and list(pred.confusion.columns) == classes
    assert pred.confusion.loc["fast"].sum() == 0
    assert pred.confusion.loc["slow"].sum() == len(pred.windows)
    assert pred.per_class.loc["fast", "support"] == 0
    assert pred.scores.loc["window", "chance_majority"] == 1.0
    assert pred.scores.loc["window", "chance_uniform"] == 0.5


def test_subject_level_only_when_each_subject_has_one_label(model):
    df = subject_frame(seed=4)
    rows = df.index[(df["subject"] == "slow0") & (df["time"] >= 20)]
    df.loc[rows, "label"] = "fast"  # the last third of slow0's recording changes class
    pred = model.predict(df)
    # a recording whose label changes inside it has no recording-level score either
    assert list(pred.scores.index) == ["window"]
    sub = pred.subjects.set_index("subject")
    assert pd.isna(sub.loc["slow0", "label"]) and sub.loc["slow1", "label"] == "slow"
    rec = pred.recordings.set_index("subject")
    assert "label" not in rec.columns
    assert rec.loc["slow0", "n_labels"] == 2 and rec.loc["slow1", "n_labels"] == 1


def test_window_positions_in_seconds_from_the_recordings_first_sample(model):
    df = subject_frame(seed=1)
    df["time"] += 100.0  # a clock that does not start at 0
    win = model.predict(df.drop(columns="label")).windows
    np.testing.assert_allclose(win["start_s"], win["start"] / FS)
    np.testing.assert_allclose(win["stop_s"], win["stop"] / FS)
    first = df[df["subject"] == "fast0"]["time"].to_numpy()
    one = win[win["subject"] == "fast0"]
    np.testing.assert_allclose(first[one["start"]] - first[0], one["start_s"])
    # 40 samples at 20 Hz (fs inferred from the time column, so not exactly 20)
    np.testing.assert_allclose(one["stop_s"] - one["start_s"], 2.0)


def test_unlabelled_frame_has_no_report(model):
    pred = model.predict(subject_frame(seed=1).drop(columns="label"))
    assert pred.scores is pred.confusion is pred.per_class is pred.subjects is None
    assert "accuracy" not in repr(pred)


def test_labels_the_model_does_not_know_are_named(model):
    df = subject_frame(seed=1)
    df.loc[df["subject"] == "fast0", "label"] = "medium"
    with pytest.raises(InputError, match=r"not trained on: \['medium'\]"):
        model.predict(df)


def test_score_takes_windowsets_frames_and_names_not_codes(model):
    clf, df = model, subject_frame(seed=1)
    ws = clf.frame_windows(df)
    want = accuracy_score(ws.labels, clf.predict(ws.X))
    assert clf.score(ws) == pytest.approx(want)
    assert clf.score(ws.X, ws.labels) == pytest.approx(want)
    assert clf.score(df) == pytest.approx(clf.predict(df).scores.loc["window", "accuracy"])
    assert clf.score(df) == pytest.approx(want)  # the same windows, cut the same way
    # a WindowSet whose classes are ordered unlike the model's scores the same
    other = make_windows(df, window=40, stride=20, classes=["slow", "fast"])
    assert list(other.classes) != list(clf.classes_)
    assert clf.score(other) == pytest.approx(want)
    with pytest.raises(InputError, match=r"WindowSet class codes.*ws\.labels.*clf\.score\(ws\)"):
        clf.score(ws.X, ws.y)
    with pytest.raises(InputError, match="without y"):
        clf.score(ws, ws.labels)
    with pytest.raises(InputError, match="no labels"):
        clf.score(clf.frame_windows(df.drop(columns="label")))
    with pytest.raises(InputError, match="no label column 'label'"):
        clf.score(df.drop(columns="label"))


def test_cli_predict_prints_scores_and_writes_the_tables(model, tmp_path, capsys):
    path = tmp_path / "m.safetensors"
    model.save(path)
    data = tmp_path / "new.csv"
    two_recordings().to_csv(data, index=False)
    out = tmp_path / "res" / "p.csv"
    assert main(["predict", "--model", str(path), "--data", str(data), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    win = pd.read_csv(out)
    assert {"start_s", "stop_s", "label", "predicted"} <= set(win.columns)
    for col in ("accuracy", "balanced_accuracy", "chance_majority", "chance_uniform"):
        assert col in text
    assert "rows: true class, columns: predicted class, windows" in text
    scores = pd.read_csv(tmp_path / "res" / "p.scores.csv", index_col="level")
    acc = accuracy_score(win["label"], win["predicted"])
    assert scores.loc["window", "accuracy"] == pytest.approx(acc)
    assert f"{acc:.3f}" in text
    cm = pd.read_csv(tmp_path / "res" / "p.confusion.csv", index_col="label")
    np.testing.assert_array_equal(
        cm.to_numpy(), confusion_matrix(win["label"], win["predicted"], labels=model.classes_)
    )
    per_class = pd.read_csv(tmp_path / "res" / "p.per_class.csv")
    assert list(per_class["class"]) == list(model.classes_)
    assert len(pd.read_csv(tmp_path / "res" / "p.subjects.csv")) == 6
    assert (tmp_path / "res" / "p.confusion.png").read_bytes()[:4] == b"\x89PNG"
    for name in ("scores", "confusion", "per_class", "subjects"):
        assert str(tmp_path / "res" / f"p.{name}.csv") in text

    # unlabelled data: predictions only, as before
    bare = tmp_path / "bare.csv"
    two_recordings().drop(columns="label").to_csv(bare, index=False)
    out2 = tmp_path / "q.csv"
    assert main(["predict", "--model", str(path), "--data", str(bare), "--out", str(out2)]) == 0
    text = capsys.readouterr().out
    assert "confusion" not in text and not (tmp_path / "q.scores.csv").exists()
