"""benchmarks/paper_table.py and benchmarks/sensitivity.py: variant studies, baseline
budgets and the sweep's table, on real journal storage and the demo data."""

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import _paper_table_report as ptr  # noqa: E402
import paper_table as pt  # noqa: E402
import sensitivity  # noqa: E402

from medspt.study import results_frame, run_study  # noqa: E402

TINY = dict(d_model=8, n_heads=2, epochs=1, pretrain_epochs=1, batch_size=128, min_steps=0,
            n_estimators=1)  # fmt: skip


def test_the_default_model_grid_pins_every_setting_but_the_grids_own():
    from medspt import SPTClassifier
    from medspt.evaluation.configs import config_params

    args = pt.parse_args(["--model", "default", "--device", "cpu"])
    params = pt._params(args)
    assert pt._suffix(params) == "-default" and params["device"] == "cpu"
    study = pt._study_params(params)
    assert "model" not in study
    defaults = SPTClassifier().get_params()
    assert not set(pt.GRID_OWNED) - {"device"} & set(study)
    assert {k: v for k, v in study.items() if k != "device"} == {
        k: v for k, v in defaults.items() if k not in pt.GRID_OWNED
    }
    # each cell gets its own masking, depth and seed; scratch-long its own budget rule
    assert config_params("spt-block", 4, 2, study)["masking"] == "block"
    long = config_params("scratch-long", 1, 0, study)
    assert long["steps_like_spt"] is True and long["patience"] == 10 and long["depth"] == 1
    paper = pt._params(pt.parse_args([]))
    assert pt._suffix(paper) == "" and paper["d_model"] == 64 and "model" not in paper
    # both models' settings pass the study's own checks, with and without scratch-alibi
    from medspt.study.runner import _checked_params

    for shared in (study, pt._study_params(paper)):
        for alibi in (False, True):
            assert _checked_params(shared, (1, 2), ("span",), (0,), True, alibi) == shared


def test_variant_names_follow_the_settings_that_differ():
    assert pt._suffix(TINY) == ""
    assert pt._suffix({**TINY, "normalize": "window"}) == "-window"
    both = {**TINY, "normalize": "window", "pooling": "cls", "lr": 0.003}
    assert pt._suffix(both) == "-window-cls-lr0.003"
    assert ptr._variant("paper-X", TINY) == "channel scaling"
    assert ptr._variant("paper-X-window-cls-lr0.003", both) == (
        "per-window centring, cls pooling, lr 0.003"
    )
    assert pt._suffix({**TINY, "normalize": "window", "val_size": 0.0}) == "-window-val0"
    assert ptr._variant("paper-X-val0", {"val_size": 0.0}) == (
        "channel scaling, no validation split"
    )
    # the default model is told by its study's name, the name paper_table.py gives it
    default = {"embedding": "conv", "lr": 0.001, "val_size": 0.2}
    assert ptr._variant("paper-GPD-2@100-default", default) == "default model"
    assert ptr._variant("paper-GPD-1", default) == "channel scaling, lr 0.001, validation share 0.2"
    assert ptr._is_default("paper-GPD-1-default-window", "GPD-1")
    assert not ptr._is_default("paper-GPD-1-default", "NE-1")
    assert not ptr._is_default("paper-GPD-1-defaults") and not ptr._is_default("paper-default")


def test_baseline_rows_carry_their_training_budget(tmp_path, monkeypatch):
    monkeypatch.setattr(ptr, "RESULTS", tmp_path)
    row = dict(seed=0, balanced_accuracy=0.5)
    pd.DataFrame([{**row, "config": "tsai-minirocket", "fold": f} for f in range(2)]).to_csv(
        tmp_path / "baselines_X.csv", index=False
    )
    (tmp_path / "baselines_X.md").write_text("- Networks: fit_one_cycle, 30 epochs (MVP 20)\n")
    nets = pd.DataFrame(
        [
            {**row, "config": "tsai-tstplus", "fold": 0, "balanced_accuracy": 0.6},
            {**row, "config": "tsai-tstplus-mvp", "fold": 0, "balanced_accuracy": 0.7},
        ]
    )
    nets.to_csv(tmp_path / "baselines_X_long.csv", index=False)
    (tmp_path / "baselines_X_long.md").write_text(
        "- Networks: fit_one_cycle, 15 epochs (MVP pretraining 10), lr_max 0.001\n"
    )
    nets.to_csv(tmp_path / "baselines_X_short.csv", index=False)
    (tmp_path / "baselines_X_short.md").write_text(
        "- Networks: fit_one_cycle, 6 epochs (MVP pretraining 6), lr_max 0.001\n"
    )
    b = ptr._read_baselines("X")
    assert b["config"].tolist() == [
        "tsai-minirocket",
        "tsai-minirocket",
        "tsai-tstplus (15 epochs)",
        "tsai-tstplus-mvp (15 epochs, MVP 10)",
        "tsai-tstplus (6 epochs)",
        "tsai-tstplus-mvp (6 epochs, MVP 6)",
    ]
    assert ptr._read_baselines("nothing") is None


def test_report_tests_over_subjects_and_compares_the_nested_choice(tmp_path, monkeypatch):
    monkeypatch.setattr(ptr, "RESULTS", tmp_path)
    url = f"journal:{tmp_path / 'p.log'}"
    grid = dict(depths=(1,), cv=2, window="4s", verbose=False, storage=url, seeds=(0, 1))
    grid["baselines"] = ()  # the paper table reads its baselines from stored runs
    run_study("demo", study_name="paper-X", maskings=(), params=TINY, **grid)  # earlier
    run_study("demo", study_name="paper-X-subjects", maskings=("span",), params=TINY, **grid)
    run_study("demo", study_name="paper-XY", maskings=(), params=TINY, **grid)  # other
    conv = {**TINY, "embedding": "conv", "lr": 0.001, "val_size": 0.2}  # pinned by the model
    run_study("demo", study_name="paper-X-default", maskings=("block",), params=conv, **grid)
    studies = ptr._studies("X", url)
    names = ["paper-X", "paper-X-default", "paper-X-subjects"]
    assert [s.study_name for s in studies] == names

    # a baseline that kept its predictions: the subject-level study's scratch, relabelled
    fresh = results_frame(studies[2])
    scratch = fresh[fresh.config == "scratch"]
    base = pd.DataFrame(scratch).assign(config="tsai-minirocket", depth=np.nan)
    base.to_csv(tmp_path / "baselines_X_mr.csv", index=False)
    pred = fresh.predictions[fresh.predictions.config == "scratch"]
    pred.assign(config="tsai-minirocket", depth=np.nan).to_csv(
        tmp_path / "baselines_X_mr_predictions.csv.gz", index=False
    )
    lines, summary, answers, extra = ptr._protocol_report("X", studies, "balanced_accuracy")
    text = "\n".join(lines)
    assert "### X, channel scaling: tested over subjects" in text
    assert "### X, default model: tested over subjects" in text
    assert "### X, channel scaling: fold level (earlier grid)" in text
    # each model's own nested choice, its candidates never from another model's studies
    recipe, default = (
        text.split(f"### Nested choice against the baselines: the {m}")[1].split("###")[0]
        for m in ("paper recipe", "default model")
    )
    assert "default model:" not in recipe and "channel scaling: scratch" in recipe
    assert "channel scaling" not in default and "'default model: spt-block'" in default
    earlier = text.split("### Nested choice among the earlier grids")[1].split("###")[0]
    assert "default model" not in earlier and "spt-span" not in earlier
    # the nested choice of each fold is the candidate with the best mean validation score
    for part, study in ((recipe, studies[2]), (default, studies[1])):
        cand = ptr._combined([study], {study.study_name: results_frame(study)})
        for k, g in cand.groupby("fold"):
            best = g.groupby("config")["val_score"].mean().idxmax()
            assert f"| {k} | {best} (depth 1) |" in part
        nested_row = next(
            ln for ln in part.splitlines() if ln.startswith("| – | nested-best | tsai-minirocket")
        )
        assert "(n=12)" in nested_row  # the 12 demo subjects
    for m in ("paper recipe", "default model"):
        assert any(f"| X | nested best of the {m} | tsai-minirocket |" in r for r in summary)
    assert any("spt-span (depth 1) | channel scaling: scratch-long |" in r for r in summary)
    assert any(
        "default model: spt-block (depth 1) | default model: scratch |" in r for r in summary
    )
    # the answer paragraph: the default model's SPT against the better label-only control
    from medspt.evaluation.comparisons import spt_answer

    (answer,) = answers
    assert answer == "- **X**: " + spt_answer(results_frame(studies[1])).strip()
    assert "the better of scratch and the compute-matched scratch-long" in answer
    assert "block masking" in answer and "partial" not in answer
    done = results_frame(studies[1])
    part = ptr._answer("X", studies[1], done[done.seed == 0], "balanced_accuracy")
    assert part.startswith("- **X** (partial: 3 of 6 cells so far): **Did self-pretraining")
    # headline rows are for the default masking (span), which this grid does not run
    assert extra["headline"].empty and set(extra) == {"contrast", "headline"}


def test_nested_best_never_looks_at_test_scores():
    from medspt.api import Results, nested_best

    rows = []
    for fold in range(3):
        for seed in range(2):
            # "a" is better on validation subjects, "b" on the test folds
            rows.append(
                dict(
                    config="a", depth=2, fold=fold, seed=seed, val_score=0.8, balanced_accuracy=0.6
                )
            )
            rows.append(
                dict(
                    config="b", depth=2, fold=fold, seed=seed, val_score=0.7, balanced_accuracy=0.9
                )
            )
    rows[0]["val_score"] = 0.5  # fold 0: the seed mean now favours "b"
    res = Results(rows)
    res.predictions = None
    nested = nested_best(res)
    chosen = nested.groupby("fold")["chosen"].first().tolist()
    assert chosen == ["b (depth 2)", "a (depth 2)", "a (depth 2)"]
    assert nested["balanced_accuracy"].tolist() == [0.9, 0.9, 0.6, 0.6, 0.6, 0.6]
    assert set(nested["config"]) == {"nested-best"}


def test_sensitivity_rows_and_differences_match_the_fits(tmp_path):
    variants = ["base", "window", "window+cls"]
    args = ["--protocol", "demo", "--variants", *variants, "--seeds", "0"]
    args += ["--reference", "window+cls", "--tag", "t", "--out", str(tmp_path)]
    assert sensitivity.main(args) == 0
    df = pd.read_csv(tmp_path / "sensitivity_demo_t.csv")
    assert df.groupby("variant").size().to_dict() == {v: 3 for v in variants}  # 3 demo folds
    md = (tmp_path / "sensitivity_demo_t.md").read_text()
    assert "| vs window+cls |" in md
    ref = df[df["variant"] == "window+cls"].set_index("fold")["balanced_accuracy"]
    for v in variants:
        acc = df[df["variant"] == v].set_index("fold")["balanced_accuracy"]
        line = next(ln for ln in md.splitlines() if ln.startswith(f"| {v} |"))
        assert f"| {acc.mean():.3f} ± {acc.std(ddof=1):.3f} |" in line
        if v != "window+cls":
            assert f"| {(acc - ref).mean():+.3f} |" in line
    assert "pooling='cls'" in md and np.isfinite(df["wall_time_s"]).all()


def test_sensitivity_refuses_a_reference_it_does_not_run(capsys):
    with pytest.raises(SystemExit):
        sensitivity.main(["--variants", "base", "window", "--reference", "window+cls"])
    assert "--reference 'window+cls' is not among --variants" in capsys.readouterr().err


def test_a_partial_study_names_the_options_that_resume_it():
    assert ptr._resume_hint("paper-GPD-1-default") == " (with `--model default`)"
    assert ptr._resume_hint("paper-GPD-1-window") == " (with the same variant options)"
    assert ptr._resume_hint("paper-GPD-1") == ""


def test_progress_counts_a_baseline_cell_whose_rows_carry_no_depth():
    """A finished MiniRocket cell has results without a depth; the grid files it at depth 1."""
    import optuna
    from optuna.distributions import CategoricalDistribution

    grid = {"depths": [1, 2], "maskings": ["span"], "scratch": True, "seeds": [0],
            "baselines": ["minirocket"]}  # fmt: skip
    rows = [(1, "scratch"), (1, "spt-span"), (2, "scratch"), (2, "spt-span"), (1, "minirocket")]
    space = {
        "depth": CategoricalDistribution([1, 2]),
        "config": CategoricalDistribution([c for _, c in rows]),
        "seed": CategoricalDistribution([0]),
    }

    def study_with(cells):
        study = optuna.create_study()
        study.set_user_attr("medspt", {"grid": grid})
        for d, c in cells:
            params = {"depth": d, "config": c, "seed": 0}
            study.add_trial(
                optuna.trial.create_trial(params=params, distributions=space, value=0.5)
            )
        return study

    assert ptr._progress(study_with(rows)) == "All 5 cells of the grid are complete."
    partial = ptr._progress(study_with(rows[:4]))
    assert partial.startswith("**Partial: 4 of 5 cells complete**; missing 1 cells of seed 0")
    assert "next: depth1-minirocket-seed0" in partial
    assert ptr._progress(study_with(rows[1:])).startswith("**Partial: 4 of 5")


def _oof(config, depth, correct_share, n_subjects=12, seeds=(0, 1), per=10):
    """Out-of-fold predictions of one configuration: each subject's windows right with
    probability ``correct_share`` (deterministic per subject), two classes."""
    rows = []
    for seed in seeds:
        for s in range(n_subjects):
            for w in range(per):
                y = w % 2
                right = (w + s) % 10 < round(correct_share * 10)
                rows.append(dict(config=config, depth=depth, seed=seed, fold=s % 3, window=w,
                                 subject=f"S{s}", label_code=y,
                                 predicted_code=y if right else 1 - y))  # fmt: skip
    return pd.DataFrame(rows)


def test_depth_contrast_compares_gains_over_the_better_control():
    from _paper_table_report import depth_contrast_lines, depth_contrasts

    from medspt.api import Results

    shares = {  # (config, depth): share of windows right
        ("scratch", 1): 0.6, ("scratch-long", 1): 0.5, ("spt-span", 1): 0.7,
        ("scratch", 8): 0.5, ("scratch-long", 8): 0.6, ("spt-span", 8): 0.9,
    }  # fmt: skip
    preds = pd.concat([_oof(c, d, v) for (c, d), v in shares.items()], ignore_index=True)
    rows = [dict(config=c, depth=d, seed=s, fold=k, balanced_accuracy=v)
            for (c, d), v in shares.items() for s in (0, 1) for k in range(3)]  # fmt: skip
    res = Results(rows)
    res.predictions = preds
    table = depth_contrasts("GPD-1", res, "balanced_accuracy")
    r = table.iloc[0]
    assert (r.control_lo, r.control_hi) == ("scratch", "scratch-long")  # the better one
    assert r.gain_ref == pytest.approx(0.1) and r.gain == pytest.approx(0.3)
    assert r["diff"] == pytest.approx(0.2) and r.ci_low > 0 and r.n_subjects == 12
    lines = "\n".join(depth_contrast_lines([table]))
    assert "The gain grew with depth for GPD-1 span." in lines
    assert "| GPD-1 | span | scratch / scratch-long | +0.100 | +0.300 | +0.200" in lines
    head = ptr.headline_rows("GPD-1", res, "balanced_accuracy")
    assert list(head["x"]) == [1.0, 8.0] and set(head["role"]) == {"control"}  # no MiniRocket
    assert list(head["versus"]) == ["scratch", "scratch-long"]  # the better one per depth
    assert head["diff"].round(6).tolist() == [0.1, 0.3] and (head["n_subjects"] == 12).all()
    same = {**shares, ("spt-span", 8): 0.7}  # the same gain at both depths
    res.predictions = pd.concat([_oof(c, d, v) for (c, d), v in same.items()], ignore_index=True)
    text = "\n".join(depth_contrast_lines([depth_contrasts("NE-1", res, "balanced_accuracy")]))
    assert (
        "For no protocol and masking was SPT's gain shown to grow from depth 1 to depth 8" in text
    )
    assert "| NE-1 | span | scratch / scratch-long | +0.100 | +0.100 | +0.000" in text
