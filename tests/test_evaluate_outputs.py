"""What evaluate and studies hand a clinical reader: out-of-fold tables, confusion
matrices, chance levels, explained reports and the refitted chosen model."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import confusion_matrix, f1_score, precision_recall_fscore_support

import medspt
from medspt.api import choose_configuration, markdown_table
from medspt.cli.commands import main
from medspt.core.errors import InputError
from medspt.data.synthetic import make_demo_frame
from medspt.estimator.metrics import chance_levels, predictions_frame, subject_table

TINY = dict(d_model=8, n_heads=2, epochs=2, pretrain_epochs=1, batch_size=64, min_steps=0,
            n_estimators=1)  # fmt: skip


def one_label_per_subject(seed: int = 0) -> pd.DataFrame:
    """Demo recordings with each subject keeping one class (S01 even, S02 fall, ...):
    subject-level labels exist, and classes are imbalanced (6 : 4 : 2 subjects)."""
    df = make_demo_frame(seed=seed)
    subjects = sorted(df["subject"].unique())
    wanted = dict(zip(subjects, ["even"] * 6 + ["fall"] * 4 + ["rise"] * 2))
    # each stretch of one label becomes a recording of its own, so keeping one label
    # leaves no gaps inside a recording
    stretch = (df["label"] != df["label"].shift()).cumsum()
    df = df.assign(recording=df["recording"] + "-" + stretch.astype(str))
    return df[df["label"] == df["subject"].map(wanted)].reset_index(drop=True)


@pytest.fixture(scope="module")
def evaluated():
    df = one_label_per_subject()
    res = medspt.evaluate(
        df, window="4s", cv=3, depths=(1,), maskings=("span",), scratch_long=False,
        seeds=(0, 1), refit=True, verbose=False, **TINY,
    )  # fmt: skip
    return df, res


# --------------------------------------------------------------------------- chance


def test_chance_levels_for_imbalanced_classes():
    y = np.array([0] * 6 + [1] * 3 + [2] * 1)
    assert chance_levels(y, 3, "accuracy") == pytest.approx({"majority": 0.6, "uniform": 1 / 3})
    assert chance_levels(y, 3, "balanced_accuracy") == pytest.approx(
        {"majority": 1 / 3, "uniform": 1 / 3}
    )
    assert chance_levels(y, 3, "roc_auc") == {"majority": 0.5, "uniform": 0.5}
    # majority: sklearn's macro F1 of always naming class 0
    major = chance_levels(y, 3, "macro_f1")["majority"]
    assert major == pytest.approx(
        f1_score(y, np.zeros_like(y), labels=[0, 1, 2], average="macro", zero_division=0)
    )
    # uniform: the expected macro F1 of guessing, against a large simulation
    rng = np.random.default_rng(0)
    big = np.repeat(y, 20_000)
    guess = rng.integers(0, 3, len(big))
    simulated = f1_score(big, guess, labels=[0, 1, 2], average="macro")
    assert chance_levels(y, 3, "macro_f1")["uniform"] == pytest.approx(simulated, abs=0.003)
    # a class absent from y still counts for the uniform guess
    assert chance_levels(np.array([0, 0, 1]), 4, "accuracy")["uniform"] == 0.25
    with pytest.raises(ValueError, match="no chance level for metric 'wall_time_s'"):
        chance_levels(y, 3, "wall_time_s")


def test_results_chance_counts_each_window_once_and_subjects_for_subject_accuracy(evaluated):
    _, res = evaluated
    pred = res.predictions
    one = pred[(pred["config"] == "scratch") & (pred["seed"] == 0)]
    share = one["label_code"].value_counts(normalize=True).max()
    assert res.chance("accuracy")["majority"] == pytest.approx(share)
    per_subject = one.groupby("subject")["label_code"].first().value_counts(normalize=True).max()
    assert res.chance("subject_accuracy")["majority"] == pytest.approx(per_subject)
    assert per_subject == pytest.approx(0.5)  # 6 of 12 subjects are "even"
    table = medspt.summarize(res)
    np.testing.assert_allclose(table["chance_majority"], 1 / 3)
    text = markdown_table(table)
    row = next(line for line in text.splitlines() if "*chance*" in line)
    header = text.splitlines()[0]
    assert row.count("|") == header.count("|") and "0.333" in row
    acc = markdown_table(medspt.summarize(res, "accuracy"), "accuracy")
    assert f"*chance: majority class* | {share:.3f}" in acc
    assert "*chance: uniform guess* | 0.333" in acc


# --------------------------------------------------------------------------- oof views


def test_confusion_and_per_class_equal_sklearn_on_the_oof_predictions(evaluated):
    _, res = evaluated
    conf, per = res.confusion, res.per_class
    names = list(res.classes)
    for (config, seed), g in res.predictions.groupby(["config", "seed"]):
        mine = conf[(conf["config"] == config) & (conf["seed"] == seed)]
        matrix = mine.pivot(index="label", columns="predicted", values="count")
        expected = confusion_matrix(g["label_code"], g["predicted_code"], labels=range(len(names)))
        np.testing.assert_array_equal(matrix.loc[names, names].to_numpy(), expected)
        p, r, _, s = precision_recall_fscore_support(
            g["label_code"], g["predicted_code"], labels=range(len(names)), zero_division=0
        )
        rows = per[(per["config"] == config) & (per["seed"] == seed)].set_index("class")
        np.testing.assert_allclose(rows.loc[names, "recall"], r)
        np.testing.assert_allclose(rows.loc[names, "precision"], p)
        np.testing.assert_array_equal(rows.loc[names, "support"], s)


def test_subject_table_aggregates_exactly_the_subjects_windows(evaluated):
    _, res = evaluated
    subjects, pred = res.subjects, res.predictions
    keys = ["config", "depth", "seed", "subject"]  # MiniRocket's rows have no depth
    assert len(subjects) == pred.groupby(keys, dropna=False).ngroups
    assert set(subjects["config"]) == {"scratch", "spt-span", "minirocket"}
    for r in subjects.sample(6, random_state=0).itertuples():
        mine = pred[(pred["config"] == r.config) & (pred["seed"] == r.seed)
                    & (pred["subject"] == r.subject)]  # fmt: skip
        assert r.n_windows == len(mine) and r.fold == mine["fold"].iloc[0]
        assert r.accuracy == pytest.approx((mine["predicted_code"] == mine["label_code"]).mean())
        means = mine.filter(like="proba_").mean()
        assert r.predicted == means.idxmax().removeprefix("proba_")
        assert r.probability == pytest.approx(means.max())
        assert r.label == res.classes[mine["label_code"].iloc[0]]
        assert r.correct == (r.label == r.predicted)


def test_subject_table_leaves_label_empty_for_subjects_with_several_labels():
    proba = np.array([[0.9, 0.1], [0.2, 0.8], [0.3, 0.7]])
    frame = predictions_frame(
        np.arange(3), ["a", "a", "b"], np.array([0, 1, 1]), proba, ["ctrl", "pd"], fold=0
    )
    table = subject_table(frame).set_index("subject")
    assert pd.isna(table.loc["a", "label"]) and pd.isna(table.loc["a", "correct"])
    assert table.loc["a", "predicted"] == "ctrl" and table.loc["a", "probability"] == 0.55
    assert table.loc["b", "label"] == "pd" and table.loc["b", "correct"]


# --------------------------------------------------------------------------- refit


def test_refit_chooses_by_validation_scores_and_records_the_numbers(evaluated):
    df, res = evaluated
    means = res.groupby("config")["val_score"].mean().dropna()  # MiniRocket has none
    assert list(means.index) == ["scratch", "spt-span"]
    clf, ev = res.best_estimator_, res.chosen_
    assert ev["chosen"]["config"] == means.idxmax()
    assert ev["val_score"] == pytest.approx(means.max())
    assert ev["candidates"] == pytest.approx({f"{c} (depth 1)": v for c, v in means.items()})
    rows = res[res["config"] == ev["chosen"]["config"]]
    assert ev["cv_mean"] == pytest.approx(rows.groupby("fold")["balanced_accuracy"].mean().mean())
    assert ev["n_folds"] == 3 and ev["n_seeds"] == 2
    assert ev["chance"]["majority"] == pytest.approx(1 / 3)
    assert clf.pretrain == ev["chosen"]["config"].startswith("spt-")
    assert clf.random_state == 0 and clf.depth == 1
    # fitted on every subject, and it predicts recordings cut like the evaluation's
    assert clf.data_summary_.n_subjects == df["subject"].nunique()
    assert set(clf.predict(df).recordings["subject"]) == set(df["subject"])


def test_refitted_model_file_reproduces_its_stored_configuration(evaluated, tmp_path):
    df, res = evaluated
    path = tmp_path / "best.safetensors"
    res.best_estimator_.save(path)
    loaded = medspt.load(path)
    assert loaded.evaluation_ == res.chosen_
    again = medspt.fit_spt(df, window="4s", **loaded.evaluation_["chosen"]["params"])
    ws = loaded.frame_windows(df)
    np.testing.assert_allclose(again.predict_proba(ws.X), loaded.predict_proba(ws.X), atol=1e-6)


def test_choose_configuration_ties_and_missing_scores():
    rows = pd.DataFrame(
        dict(config=["scratch", "spt-span", "scratch", "spt-span"], depth=[2, 2, 2, 2],
             seed=0, fold=[0, 0, 1, 1], val_score=[0.7, 0.8, 0.8, 0.7])
    )  # fmt: skip
    assert choose_configuration(rows)["config"] == "scratch"  # a tie: the earlier one
    rows.loc[1, "val_score"] = 0.81
    assert choose_configuration(rows)["config"] == "spt-span"
    with pytest.raises(InputError, match="val_size > 0"):
        choose_configuration(rows.assign(val_score=np.nan))


# --------------------------------------------------------------------------- files


def test_cli_evaluate_writes_tables_figures_and_the_refitted_model(tmp_path, capsys):
    data = tmp_path / "rec.csv"
    one_label_per_subject().to_csv(data, index=False)
    out = tmp_path / "ev"
    args = ["evaluate", "--data", str(data), "--window", "4s", "--cv", "3", "--depths", "1"]
    args += ["--no-scratch-long", "--d-model", "8", "--n-heads", "2", "--epochs", "2"]
    args += ["--pretrain-epochs", "1", "--min-steps", "0", "--quiet", "--refit"]
    assert main([*args, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "refitted on all subjects:" in printed and "*chance*" in printed
    # the data summary states what each fold's fits held out (never "none" here)
    rows = pd.read_csv(out / "results.csv", keep_default_na=False)
    held = rows[rows["config"] == "scratch"].sort_values("fold")["val_subjects"]
    counts = ", ".join(str(len(v.split())) for v in held)
    assert f"validation: per fold, training subjects held out for early stopping ({counts})" in (
        printed
    )
    assert "validation: none" not in printed
    pred = pd.read_csv(out / "predictions.csv")
    conf = pd.read_csv(out / "confusion.csv")
    assert set(conf["config"]) == {"scratch", "spt-span", "minirocket"}
    assert conf.groupby("config")["count"].sum().eq(len(pred) / 3).all()
    assert set(pd.read_csv(out / "per_class.csv")["class"]) == {"even", "fall", "rise"}
    summary = (out / "summary.md").read_text()
    assert "**gain vs scratch**" in summary and "*scratch*: trained on the labels only" in summary
    assert "ALiBi" not in summary and "scratch-long" not in summary  # not run here
    answer = "**Did self-pretraining help?** SPT was compared with training from scratch"
    assert answer in summary and answer in printed and "A fit with SPT took" in summary
    assert "## medspt or MiniRocket?" in summary and "*minirocket*: aeon's MiniRocket" in summary
    assert "recall even" in (out / "per_class.md").read_text()
    for png in ("confusion/scratch_depth1.png", "subjects/spt-span_depth1.png",
                "gain_vs_depth.png", "model.history.png"):  # fmt: skip
        assert (out / png).read_bytes()[:4] == b"\x89PNG"
    # the gain figure draws SPT against the control the answer names, with its numbers
    drawn = pd.read_csv(out / "gain_vs_depth.csv")
    assert drawn[["config", "versus"]].values.tolist() == [["spt-span", "scratch"]]
    # the probes evaluate ran on the same folds, in probes.md, printed and in the table
    probes = (out / "probes.md").read_text()
    assert "| window-levels |" in probes and "| window-levels |" in printed
    assert "*probe: window-levels*" in summary
    model = medspt.load(out / "model.safetensors")
    assert model.evaluation_["source"] == "evaluate" and model.frame_spec_ is not None
