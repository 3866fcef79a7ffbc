"""Every figure agrees with its sentence: the gain figure draws exactly the comparisons
``spt_answer`` states (SPT against the better label-only control at each depth, named),
the paired answer against a baseline opens with the verdict its ``prefer`` holds and shows
the summary table's scores, intervals are worded by their printed bounds, the recording
level is left out when labels change inside recordings, and the confound probes (window
levels included) travel with ``evaluate``'s results into ``summarize``."""

from __future__ import annotations

import re

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
import torch

import medspt
from medspt.cli.commands import _write_results, main
from medspt.core.stats import channel_stats
from medspt.data.synthetic import CLASSES, make_demo_frame
from medspt.estimator.metrics import RECORDING_LEVEL_NA, predictions_frame, recording_level
from medspt.evaluation.comparisons import spt_answer, spt_comparisons, summarize
from medspt.evaluation.markdown_tables import (
    claimed_direction,
    format_signed,
    interval_side,
    interval_words,
    markdown_table,
)
from medspt.evaluation.plots import figure_gain_vs_depth
from medspt.evaluation.probes import PROBES, window_levels
from medspt.evaluation.results import Results
from medspt.evaluation.versus import _sentence, preference, versus_baseline
from medspt.nn.model import SPTTransformer

N_SUBJECTS = 40
# one stated comparison in spt_answer's words: "at depth 2 with span masking against
# scratch-long: +0.031 balanced accuracy (95 % CI +0.004 to +0.058, Holm p 0.041)"
STATED = re.compile(
    r"at depth (?P<depth>\d+) with (?P<masking>\S+) masking(?: against (?P<versus>[\w-]+))?: "
    r"(?P<diff>[+-]\d\.\d{3}) balanced accuracy \(95 % CI (?P<low>[+-]\d\.\d{3}) to "
    r"(?P<high>[+-]\d\.\d{3}), Holm p (?P<p><?[\d.]+)\)"
)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _results(cells: dict[tuple[str, float], int]) -> Results:
    """Results of two folds over 40 subjects (4 windows each, classes alternating by
    subject). ``cells`` maps ``(config, depth)`` to how many subjects that fit gets right:
    the first ones, so two configurations differ on exactly the subjects between their
    counts, and every number below is deterministic."""
    subjects = np.repeat([f"s{i:02d}" for i in range(N_SUBJECTS)], 4)
    y = np.repeat(np.arange(N_SUBJECTS) % 2, 4)
    fold = np.repeat(np.arange(N_SUBJECTS) % 2, 4)
    rows, preds = [], []
    for (config, depth), n_right in cells.items():
        good = np.repeat(np.arange(N_SUBJECTS) < n_right, 4)
        pred = np.where(good, y, 1 - y)
        for k in (0, 1):
            te = fold == k
            keys = dict(config=config, depth=depth, seed=0, fold=k)
            preds.append(
                predictions_frame(
                    np.flatnonzero(te), subjects[te], y[te], np.eye(2)[pred[te]], ["a", "b"],
                    **keys,
                )
            )  # fmt: skip
            rows.append(
                {**keys, "balanced_accuracy": float((pred[te] == y[te]).mean()),
                 "wall_time_s": 30.0 if config.startswith("spt-") else 10.0}
            )  # fmt: skip
    res = Results(pd.DataFrame(rows))
    res.predictions = pd.concat(preds, ignore_index=True)
    res.classes = np.array(["a", "b"])
    return res


def _stated(text: str) -> list[dict]:
    """The comparisons a sentence states, as printed."""
    return [m.groupdict() for m in STATED.finditer(text)]


def _assert_figure_states(fig, text: str) -> None:
    """Every comparison the sentence states is drawn with the same control, difference
    and interval as printed, and the figure's title names that control."""
    drawn = fig.drawn.assign(depth=fig.drawn["depth"].astype(int).astype(str))
    stated = _stated(text)
    assert stated, f"the sentence states no comparison: {text}"
    title = fig.axes[0].get_title()
    for s in stated:
        row = drawn[(drawn["depth"] == s["depth"]) & (drawn["config"] == f"spt-{s['masking']}")]
        assert len(row) == 1, f"the figure draws no point for {s}"
        row = row.iloc[0]
        versus = s["versus"] or ("scratch-long" if "(scratch-long)" in text else "scratch")
        assert row["versus"] == versus
        assert row["versus"] in title  # the caption names the control
        got = (format_signed(row["diff"]), format_signed(row["low"]), format_signed(row["high"]))
        assert got == (s["diff"], s["low"], s["high"])
    # and the figure draws what it says it drew
    for container in fig.axes[0].containers:
        config = container.get_label()
        y = container.lines[0].get_ydata()
        np.testing.assert_allclose(y, fig.drawn.loc[fig.drawn["config"] == config, "diff"])


# --------------------------------------------------------------------------- gain figure


def test_figure_draws_the_comparison_the_sentence_makes_not_the_gain_over_scratch():
    # the review's case: SPT far above scratch, level with the stronger scratch-long
    res = _results({("scratch", 2): 20, ("scratch-long", 2): 36, ("spt-span", 2): 37})
    text = spt_answer(res)
    assert "It did not demonstrably help" in text and "against scratch-long" in text
    fig = figure_gain_vs_depth(spt_comparisons(res))
    _assert_figure_states(fig, text)
    assert "gain over the better label-only control (scratch-long)" in fig.axes[0].get_title()
    assert fig.drawn["diff"].iloc[0] == pytest.approx(0.025)  # one subject of forty
    # the summary's gain over scratch is another comparison: the figure must not show it
    gain = summarize(res).query("config == 'spt-span'")["subject_gain"].iloc[0]
    assert gain == pytest.approx(0.425) and not np.isclose(fig.drawn["diff"].iloc[0], gain)


def test_the_better_control_is_chosen_per_depth_and_named():
    res = _results({
        ("scratch", 1): 20, ("scratch-long", 1): 24, ("spt-span", 1): 38,
        ("scratch", 2): 24, ("scratch-long", 2): 20, ("spt-span", 2): 38,
    })  # fmt: skip
    rows = spt_comparisons(res)
    assert rows.set_index("depth")["versus"].to_dict() == {1: "scratch-long", 2: "scratch"}
    # Holm over the family the comparisons table declares: 3 comparisons at each depth
    assert (rows["n_family"] == 6).all()
    table = medspt.comparison_table(res).set_index(["config", "depth", "versus"])
    for r in rows.itertuples():
        assert r.p_holm == table.loc[(r.config, r.depth, r.versus), "p_holm"]
    text = spt_answer(res)
    assert "the better of scratch and the compute-matched scratch-long" in text
    assert "scratch-long at depth 1; scratch at depth 2" in text
    assert len(_stated(text)) == 2  # it helped at both depths, each against its control
    fig = figure_gain_vs_depth(rows)
    _assert_figure_states(fig, text)
    names = [t.get_text() for t in fig.axes[0].texts]
    assert "vs scratch-long" in names and "vs scratch" in names  # beside each point


def test_the_cli_figure_numbers_match_summary_md(tmp_path):
    res = _results({
        ("scratch", 1): 20, ("scratch-long", 1): 24, ("spt-span", 1): 38,
        ("scratch", 2): 24, ("scratch-long", 2): 20, ("spt-span", 2): 38,
    })  # fmt: skip
    _write_results(res, tmp_path, "balanced_accuracy", None)
    summary = (tmp_path / "summary.md").read_text()
    drawn = pd.read_csv(tmp_path / "gain_vs_depth.csv")  # what gain_vs_depth.png draws
    stated = _stated(summary)
    assert len(stated) == len(drawn) == 2
    for s in stated:
        row = drawn[drawn["depth"] == int(s["depth"])].iloc[0]
        assert row["versus"] == s["versus"]
        assert format_signed(row["diff"]) == s["diff"]
        assert (format_signed(row["low"]), format_signed(row["high"])) == (s["low"], s["high"])


def test_a_comparison_frame_with_two_controls_per_point_is_refused():
    res = _results({("scratch", 2): 20, ("scratch-long", 2): 30, ("spt-span", 2): 37})
    with pytest.raises(ValueError, match="spt_comparisons"):
        figure_gain_vs_depth(medspt.comparison_table(res))


# --------------------------------------------------------------------------- wording


def test_interval_words_follow_the_printed_bounds():
    # the review's case: [-0.104, -0.0002] prints as [-0.104, +0.000], p 0.129
    assert format_signed(-0.0002) == "+0.000"
    assert interval_side(-0.104, -0.0002) == "touches"
    assert interval_words(-0.104, -0.0002) == "the interval touches zero"
    assert claimed_direction(-0.104, -0.0002, 0.001) == 0  # touching is not below
    assert interval_side(-0.104, -0.0006) == "below"  # prints -0.001
    assert claimed_direction(-0.104, -0.0006, 0.129) == 0  # p after correction decides
    assert claimed_direction(-0.104, -0.0006, 0.01) == -1
    assert interval_side(0.0004, 0.2) == "touches" and interval_side(-0.1, 0.1) == "includes"
    assert interval_words(np.nan, np.nan) == "no interval could be computed"


def test_spt_answer_says_touches_zero_at_the_rounding_edge():
    # SPT is right on one more subject than scratch-long: the interval's lower bound is 0
    res = _results({("scratch-long", 2): 36, ("spt-span", 2): 37})
    text = spt_answer(res)
    (s,) = _stated(text)
    assert s["low"] == "+0.000" and "the interval touches zero" in text
    assert "above zero" not in text and "It helped" not in text
    assert "Holm p is not below 0.05" in text


def _versus_dict(low: float, high: float, p: float) -> dict:
    v = dict(medspt="spt-span at depth 2", chosen="the only medspt configuration fitted",
             baseline="minirocket", metric="balanced_accuracy", mean=0.601, baseline_mean=0.635,
             pooled=0.598, baseline_pooled=0.632, diff=(low + high) / 2, ci_low=low,
             ci_high=high, p=p, p_holm=p, n_comparisons=1, n=20, unit="subjects", fit_s=30.0,
             baseline_fit_s=2.0)  # fmt: skip
    v["prefer"] = preference(low, high, p)
    return v


def test_versus_sentence_never_claims_what_its_numbers_do_not_show():
    edge = _versus_dict(-0.104, -0.0002, 0.129)  # the review's numbers
    text = _sentence(edge)
    assert edge["prefer"] == "either" and text.startswith("No clear winner")
    assert "touches zero" in text and "below zero" not in text and "-0.000" not in text
    assert "prefer" not in text.lower()
    below_but_not_sure = _versus_dict(-0.104, -0.01, 0.129)
    text = _sentence(below_but_not_sure)
    assert below_but_not_sure["prefer"] == "either"
    assert "the interval lies below zero, but p is not below 0.05" in text
    assert "MiniRocket is the cheaper to fit" in text  # 2 s against 30 s
    sure = _versus_dict(-0.104, -0.01, 0.01)
    assert sure["prefer"] == "baseline" and _sentence(sure).startswith("Prefer MiniRocket")


@pytest.mark.parametrize(
    "spt_right, base_right, prefer",
    [(38, 20, "medspt"), (20, 38, "baseline"), (30, 28, "either")],
)
def test_prefer_and_sentence_agree_and_show_the_table_scores(spt_right, base_right, prefer):
    res = _results({("spt-span", 2): spt_right, ("minirocket", np.nan): base_right})
    v = versus_baseline(res)
    assert v["prefer"] == prefer
    verdict = {"medspt": "Prefer medspt", "baseline": "Prefer MiniRocket"}.get(prefer)
    if verdict:
        assert v["sentence"].startswith(verdict + " on this data")
    else:
        assert v["sentence"].startswith("No clear winner") and "prefer" not in v["sentence"].lower()
    # the sentence's scores are the summary table's, printed the same way
    table = summarize(res).set_index("config")
    shown = markdown_table(summarize(res))
    for config, key in (("spt-span", "mean"), ("minirocket", "baseline_mean")):
        assert v[key] == pytest.approx(table.loc[config, "mean"])
        assert f"{v[key]:.3f}" in v["sentence"]
        assert f"| {config} | {v[key]:.3f} ±" in shown


# --------------------------------------------------------------------------- recordings


def test_recording_level_is_left_out_when_labels_change_inside_a_recording():
    windows = pd.DataFrame(
        {"subject": ["s1"] * 4 + ["s2"] * 2, "recording": ["r1"] * 4 + ["r1"] * 2,
         "label": ["a", "a", "b", "b", "a", "a"]}
    )  # fmt: skip
    recordings = pd.DataFrame(
        {"subject": ["s1", "s2"], "recording": ["r1", "r1"], "predicted": ["a", "a"],
         "label": ["a", "a"]}
    )  # fmt: skip
    scores = pd.DataFrame(
        {"n": [6, 2], "accuracy": [0.5, 1.0]}, index=pd.Index(["window", "recording"])
    )
    rec, sc, note = recording_level(windows, recordings, scores)
    assert list(sc.index) == ["window"] and "label" not in rec
    assert rec["n_labels"].tolist() == [2, 1]
    assert RECORDING_LEVEL_NA in note and "1 of 2 recordings" in note
    again = recording_level(windows, rec, sc)  # the tables without the level stay so
    pd.testing.assert_frame_equal(again[0], rec)
    pd.testing.assert_frame_equal(again[1], sc)
    # one label per recording: the level stands, nothing changes
    same = windows.assign(label="a")
    assert recording_level(same, recordings, scores) == (recordings, scores, "")


def test_cli_predict_leaves_out_the_recording_level(tmp_path, capsys):
    df = make_demo_frame(n_subjects=4, recordings_per_subject=1, seconds_per_recording=60)
    # labels set here, not by the demo's random segments: S01 and S02 keep one label,
    # S03 and S04 change theirs half-way through
    first, second = CLASSES[0], CLASSES[1]
    late = df["time"] >= 30
    df["label"] = np.where(df["subject"].isin(["S01", "S03"]), first, second)
    df.loc[late & df["subject"].isin(["S03", "S04"]), "label"] = CLASSES[2]
    clf = medspt.fit_spt(
        df, window="4s", d_model=8, n_heads=2, depth=1, patch_len=8, epochs=1,
        pretrain_epochs=1, min_steps=0, n_estimators=1, batch_size=64, random_state=0,
    )  # fmt: skip
    clf.save(tmp_path / "m.safetensors")
    data = tmp_path / "demo.csv"
    df.to_csv(data, index=False)
    out = tmp_path / "pred.csv"
    assert main(["predict", "--model", str(tmp_path / "m.safetensors"), "--data", str(data),
                 "--out", str(out)]) == 0  # fmt: skip
    printed = capsys.readouterr().out
    assert f"recording level: {RECORDING_LEVEL_NA} (2 of 4 recordings)" in printed
    assert not re.search(r"^recording\s+\d", printed, flags=re.MULTILINE)  # no score row
    scores = pd.read_csv(tmp_path / "pred.scores.csv", index_col=0)
    assert "recording" not in scores.index and "window" in scores.index
    recordings = pd.read_csv(tmp_path / "pred.recordings.csv")
    assert "label" not in recordings
    assert recordings.set_index("subject")["n_labels"].to_dict() == {
        "S01": 1, "S02": 1, "S03": 2, "S04": 2
    }  # fmt: skip


# --------------------------------------------------------------------------- probes


def test_window_levels_are_the_features_the_head_receives():
    rng = np.random.default_rng(0)
    X = rng.normal(3.0, 2.0, (6, 3, 20)).astype(np.float32)
    X[0, 1, 5:] = np.nan  # a few missing values
    X[1, 2, 1:] = np.nan  # one observed value: the model's 0 and 1
    mean, std = channel_stats(X)
    got = window_levels(X, mean, std)
    Z = torch.from_numpy((X - mean[None, :, None]) / std[None, :, None])
    m, s = SPTTransformer.visible_stats(Z)
    expected = torch.cat([m, torch.log(s)], dim=1)[..., 0].double().numpy()
    np.testing.assert_allclose(got, expected, atol=1e-5)


@pytest.fixture(scope="module")
def evaluated():
    df = make_demo_frame(n_subjects=6, recordings_per_subject=1, seconds_per_recording=40)
    fast = dict(d_model=8, n_heads=2, patch_len=8, epochs=1, pretrain_epochs=1, min_steps=0,
                n_estimators=1, batch_size=64, val_size=0.0)  # fmt: skip
    res = medspt.evaluate(
        df, window="4s", cv=2, depths=(1,), scratch_long=False, baselines=(), verbose=False,
        **fast,
    )  # fmt: skip
    return df, res, fast


def test_evaluate_carries_the_probes_and_summarize_shows_them(evaluated):
    _, res, _ = evaluated
    probes = res.probes.set_index("probe")
    assert list(probes.index) == list(PROBES)
    assert (probes["not_run"] == "").all() and (probes["n_folds"] == 2).all()
    table = summarize(res)
    for probe in PROBES:
        column = "probe_" + probe.replace("-", "_")
        assert table[column].nunique() == 1  # the same for every row, like chance
        assert table[column].iloc[0] == probes.loc[probe, "balanced_accuracy_fold_mean"]
    shown = markdown_table(table)
    score = probes.loc["window-levels", "balanced_accuracy_fold_mean"]
    assert f"| – | *probe: window-levels* | {score:.3f} |" in shown
    assert "each channel's mean and log standard deviation" in shown


def test_probes_can_be_left_out(evaluated):
    df, _, fast = evaluated
    res = medspt.evaluate(
        df, window="4s", cv=2, depths=(1,), maskings=(), baselines=(), probes=False,
        verbose=False, **fast,
    )  # fmt: skip
    assert res.probes is None
    assert not [c for c in summarize(res).columns if c.startswith("probe_")]
    assert "*probe:" not in markdown_table(summarize(res))
