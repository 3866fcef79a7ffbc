"""medspt.estimator.metrics on hand-made predictions: values checked against sklearn or by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import (
    accuracy_score,
    balanced_accuracy_score,
    confusion_matrix,
    f1_score,
    precision_recall_fscore_support,
    roc_auc_score,
)

from medspt.estimator.metrics import (
    chance_levels,
    chance_table,
    class_report,
    classification_metrics,
    confusion_frame,
    predictions_frame,
    read_predictions,
    subject_codes,
    subject_predictions,
    subject_table,
)

CLASSES = ["ctrl", "pd", "other"]


def frame(rng_seed: int = 0, n: int = 60, **keys) -> pd.DataFrame:
    """Predictions of 6 subjects × 10 windows; subject k has class k % 3, except subject
    's5' whose windows alternate between two classes."""
    rng = np.random.default_rng(rng_seed)
    subject = np.repeat([f"s{k}" for k in range(6)], n // 6)
    y = np.repeat(np.arange(6) % 3, n // 6)
    y[subject == "s5"] = np.arange((subject == "s5").sum()) % 2
    proba = rng.dirichlet([1, 1, 1], size=n)
    return predictions_frame(np.arange(n) * 2, subject, y, proba, CLASSES, **keys)


def two_fits() -> pd.DataFrame:
    a = frame(0, config="scratch", depth=2, seed=0, fold=0)
    b = frame(1, config="spt-span", depth=2, seed=0, fold=1)
    return pd.concat([a, b], ignore_index=True)


def test_predictions_frame_layout():
    f = frame(fold=3)
    assert list(f.columns) == [
        "fold",
        "window",
        "subject",
        "label",
        "predicted",
        "label_code",
        "predicted_code",
        *[f"proba_{c}" for c in CLASSES],
    ]
    assert (f["predicted_code"] == f.filter(like="proba_").to_numpy().argmax(1)).all()
    # class names beside the codes, one vocabulary with subjects.csv and confusion.csv
    names = np.asarray(CLASSES, dtype=object)
    assert (f["label"] == names[f["label_code"]]).all()
    assert (f["predicted"] == names[f["predicted_code"]]).all()
    assert (f["fold"] == 3).all() and f["window"].iloc[-1] == 118
    given = predictions_frame([0], ["a"], [1], np.array([[0.9, 0.1]]), ["x", "y"], pred=[1])
    assert given["predicted_code"].iloc[0] == 1  # a given prediction wins over the argmax
    assert given["predicted"].iloc[0] == "y" and given["label"].iloc[0] == "y"


def test_read_predictions_gives_old_files_todays_columns(tmp_path):
    new = frame(fold=0)
    old = new.drop(columns=["label", "predicted"]).rename(
        columns={"label_code": "y", "predicted_code": "pred"}
    )
    old.to_csv(tmp_path / "old.csv.gz", index=False)
    got = read_predictions(tmp_path / "old.csv.gz")
    pd.testing.assert_frame_equal(got, new, check_dtype=False)
    assert read_predictions(new) is not new and read_predictions(new).equals(new)
    # one file with old rows above new ones (appended later)
    mixed = pd.concat([old, new], ignore_index=True)
    got = read_predictions(mixed)
    assert list(got.columns) == list(new.columns)
    both = pd.concat([new, new], ignore_index=True)
    pd.testing.assert_frame_equal(got, both, check_dtype=False)


def test_classification_metrics_match_sklearn():
    f = frame()
    proba = f.filter(like="proba_").to_numpy()
    got = classification_metrics(f["label_code"].to_numpy(), proba, f["subject"].to_numpy())
    assert got["accuracy"] == pytest.approx(accuracy_score(f["label_code"], f["predicted_code"]))
    assert got["balanced_accuracy"] == pytest.approx(
        balanced_accuracy_score(f["label_code"], f["predicted_code"])
    )
    assert got["macro_f1"] == pytest.approx(
        f1_score(f["label_code"], f["predicted_code"], average="macro")
    )
    assert np.isnan(got["roc_auc"])  # three classes
    assert np.isnan(got["subject_accuracy"])  # s5 has two labels
    one = f[f["subject"] != "s5"]
    p1 = one.filter(like="proba_").to_numpy()
    got = classification_metrics(one["label_code"].to_numpy(), p1, one["subject"].to_numpy())
    mean = one.groupby("subject")[[f"proba_{c}" for c in CLASSES]].mean()
    truth = one.groupby("subject")["label_code"].first()
    assert got["subject_accuracy"] == pytest.approx((mean.to_numpy().argmax(1) == truth).mean())
    binary = np.array([[0.8, 0.2], [0.3, 0.7], [0.6, 0.4], [0.1, 0.9]])
    yb = np.array([0, 1, 1, 1])
    assert classification_metrics(yb, binary)["roc_auc"] == pytest.approx(
        roc_auc_score(yb, binary[:, 1])
    )


def test_subject_predictions_mean_then_argmax():
    proba = np.array([[0.6, 0.4], [0.0, 1.0], [0.9, 0.1]])
    out = subject_predictions(proba, np.array(["a", "a", "b"]), np.array([1, 1, 0]))
    assert out.to_dict("list") == {"group": ["a", "b"], "y": [1, 0], "pred": [1, 0]}
    mixed = subject_predictions(proba, np.array(["a", "a", "b"]), np.array([0, 1, 0]))
    assert mixed.empty


def test_subject_table_rows_values_and_names():
    f = two_fits()
    table = subject_table(f)
    assert len(table) == 12 and list(table.columns[:4]) == ["config", "depth", "seed", "subject"]
    for r in table.itertuples():
        mine = f[(f["config"] == r.config) & (f["subject"] == r.subject)]
        means = mine.filter(like="proba_").mean()
        assert (
            r.n_windows == len(mine) == 10
            and r.n_right == (mine["predicted_code"] == mine["label_code"]).sum()
        )
        assert r.accuracy == pytest.approx(r.n_right / 10)
        assert r.fold == mine["fold"].iloc[0]
        assert r.predicted == means.idxmax().removeprefix("proba_")
        assert r.probability == pytest.approx(means.max())
        if r.subject == "s5":
            assert pd.isna(r.label) and pd.isna(r.correct)
        else:
            assert r.label == CLASSES[int(r.subject[1:]) % 3]
            assert r.correct == (r.label == r.predicted)
    np.testing.assert_allclose(table.filter(like="proba_").sum(axis=1), 1.0)


def test_chance_levels_values():
    y = np.array([0, 0, 0, 1])
    assert chance_levels(y, 2, "accuracy") == {"majority": 0.75, "uniform": 0.5}
    assert chance_levels(y, 2, "subject_accuracy") == {"majority": 0.75, "uniform": 0.5}
    assert chance_levels(y, 4, "balanced_accuracy") == {"majority": 0.25, "uniform": 0.25}
    assert chance_levels(y, 2, "roc_auc") == {"majority": 0.5, "uniform": 0.5}
    f1 = chance_levels(y, 2, "macro_f1")
    assert f1["majority"] == pytest.approx(
        f1_score(y, np.zeros(4), labels=[0, 1], average="macro", zero_division=0)
    )
    # uniform guess: precision of class k is its share, recall 1/K
    expected = np.mean([2 * 0.75 * 0.5 / 1.25, 2 * 0.25 * 0.5 / 0.75])
    assert f1["uniform"] == pytest.approx(expected)
    # a class absent from y adds an F1 of 0 to the macro average
    three = chance_levels(y, 3, "macro_f1")["uniform"]
    assert three == pytest.approx(
        np.mean([2 * 0.75 / 3 / (0.75 + 1 / 3), 2 * 0.25 / 3 / (0.25 + 1 / 3), 0])
    )
    for bad in (chance_levels(y, 1, "accuracy"), chance_levels(np.array([], int), 2, "accuracy")):
        assert np.isnan(bad["majority"]) and np.isnan(bad["uniform"])
    with pytest.raises(ValueError, match="one of"):
        chance_levels(y, 2, "steps")


def test_chance_table_counts_windows_once_and_subjects_with_one_label():
    f = two_fits()  # the same 60 windows predicted by two configurations
    one = f[f["config"] == "scratch"]
    share = one["label_code"].value_counts(normalize=True).max()
    assert chance_table(f, 3, "accuracy")["majority"] == pytest.approx(share)
    assert sorted(subject_codes(f)) == [0, 0, 1, 1, 2]  # s5 (two labels) left out
    assert chance_table(f, 3, "subject_accuracy")["majority"] == pytest.approx(0.4)


def test_confusion_frame_and_class_report_equal_sklearn_per_fit():
    f = two_fits()
    conf, rep = confusion_frame(f, CLASSES), class_report(f, CLASSES)
    assert len(conf) == 2 * 9 and len(rep) == 2 * 3
    for config, g in f.groupby("config"):
        c = conf[conf["config"] == config].pivot(index="label", columns="predicted", values="count")
        np.testing.assert_array_equal(
            c.loc[CLASSES, CLASSES].to_numpy(),
            confusion_matrix(g["label_code"], g["predicted_code"], labels=[0, 1, 2]),
        )
        p, r, f1, s = precision_recall_fscore_support(
            g["label_code"], g["predicted_code"], labels=[0, 1, 2], zero_division=0
        )
        mine = rep[rep["config"] == config].set_index("class").loc[CLASSES]
        np.testing.assert_allclose(mine[["precision", "recall", "f1"]].to_numpy().T, [p, r, f1])
        np.testing.assert_array_equal(mine["support"], s)
    bare = f[f["config"] == "scratch"].drop(columns=["config", "depth", "seed"])
    assert list(confusion_frame(bare, CLASSES).columns) == ["label", "predicted", "count"]
    assert confusion_frame(bare, CLASSES)["count"].sum() == 60
    assert list(class_report(bare, CLASSES)["class"]) == CLASSES


def test_rows_without_a_depth_and_classes_nobody_predicted_are_kept():
    # a nested-best row has no depth; class "other" is neither true nor predicted here
    f = two_fits().assign(depth=np.nan)
    f = f[(f["label_code"] < 2) & (f["predicted_code"] < 2)]
    conf = confusion_frame(f, CLASSES)
    assert len(conf) == 2 * 9 and conf["depth"].isna().all()
    absent = conf[(conf["label"] == "other") | (conf["predicted"] == "other")]
    assert (absent["count"] == 0).all() and conf["count"].sum() == len(f)
    rep = class_report(f, CLASSES)
    assert (
        len(rep) == 2 * 3
        and rep.set_index(["config", "class"]).loc[("scratch", "other"), "support"] == 0
    )
    n_subjects = f.groupby(["config", "subject"]).ngroups
    assert subject_table(f)["depth"].isna().all() and len(subject_table(f)) == n_subjects


def test_chance_counts_the_union_of_windows_once():
    # one configuration predicted every window, another only the class-0 windows: each
    # window counts once, not once per configuration
    f = frame(config="a", seed=0, fold=0)
    part = frame(config="b", seed=0, fold=0)
    f = pd.concat([f, part[part["label_code"] == 0]], ignore_index=True)
    share = frame()["label_code"].value_counts(normalize=True).max()
    assert chance_table(f, 3, "accuracy")["majority"] == pytest.approx(share)
