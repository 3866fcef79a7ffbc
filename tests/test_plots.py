"""Figures: content checks on the matplotlib objects, not just "a PNG was written"."""

import ast
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from conftest import FAST
from sklearn.metrics import confusion_matrix

import medspt.evaluation.plots as plots
from medspt import SPTClassifier
from medspt.api import summarize
from medspt.estimator.metrics import confusion_frame, predictions_frame, subject_table
from medspt.evaluation.diagnostics import positional_score, profile_from_maps
from medspt.evaluation.plots import (
    NESTED_LABEL,
    figure_accuracy_vs_depth,
    figure_confusion,
    figure_distance_profiles,
    figure_gain_vs_depth,
    figure_history,
    figure_positional_score,
    figure_subjects,
    plot_accuracy_vs_depth,
    plot_confusion,
    plot_gain_vs_depth,
    plot_subjects,
)
from medspt.nn.model import ModelConfig, SPTTransformer


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _results(seed: int = 0) -> pd.DataFrame:
    """Fold × seed rows of two configurations at depths 1, 2, 4 and a nested-best row
    without a depth; spt is 0.05 better than scratch."""
    rng = np.random.default_rng(seed)
    rows = [
        {"depth": d, "config": c, "seed": s, "fold": f,
         "balanced_accuracy": 0.6 + 0.05 * (c == "spt-span") + rng.normal(0, 0.03)}
        for d in (1, 2, 4) for c in ("scratch", "spt-span") for s in (0, 1) for f in range(5)
    ]  # fmt: skip
    rows += [
        {"depth": np.nan, "config": "nested-best", "seed": s, "fold": f,
         "balanced_accuracy": 0.64 + rng.normal(0, 0.03)}
        for s in (0, 1) for f in range(5)
    ]  # fmt: skip
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return summarize(_results(), "balanced_accuracy")


def _container(ax, label):
    found = [c for c in ax.containers if c.get_label() == label]
    assert found, f"no errorbar container {label!r}; have {[c.get_label() for c in ax.containers]}"
    return found[0]


def _xy(container) -> tuple[np.ndarray, np.ndarray]:
    line = container.lines[0]
    return np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)


def _hlines(ax) -> dict:
    """Horizontal lines (axhline) by label: their y value."""
    out = {}
    for line in ax.get_lines():
        y = np.asarray(line.get_ydata(), float)
        if len(y) == 2 and y[0] == y[1] and tuple(line.get_xdata()) == (0, 1):
            out[line.get_label()] = float(y[0])
    return out


# ---------------------------------------------------------------- accuracy vs depth


def test_plots_does_not_import_the_api():
    tree = ast.parse(Path(plots.__file__).read_text())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not {m for m in imported if m and m.startswith("medspt")}, imported


def test_chance_lines_sit_at_the_levels_with_labelled_values(table):
    ax = figure_accuracy_vs_depth(table, chance={"majority": 0.75, "uniform": 0.5}).axes[0]
    lines = _hlines(ax)
    assert lines["chance: majority class (0.75)"] == pytest.approx(0.75)
    assert lines["chance: uniform guess (0.50)"] == pytest.approx(0.5)
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "chance: majority class (0.75)" in legend and "chance: uniform guess (0.50)" in legend


def test_equal_chance_levels_give_one_line_and_nan_levels_none(table):
    ax = figure_accuracy_vs_depth(table, chance={"majority": 0.5, "uniform": 0.5}).axes[0]
    assert {k: v for k, v in _hlines(ax).items() if "chance" in k} == {"chance (0.50)": 0.5}
    ax = figure_accuracy_vs_depth(table, chance={"majority": np.nan, "uniform": 1 / 3}).axes[0]
    assert {k for k in _hlines(ax) if "chance" in k} == {"chance: uniform guess (0.33)"}
    ax = figure_accuracy_vs_depth(table).axes[0]  # summarize() without predictions: no chance
    assert not [k for k in _hlines(ax) if "chance" in k]


def test_chance_comes_from_the_table_columns_when_not_given(table):
    t = table.assign(chance_majority=0.8, chance_uniform=0.5)
    lines = _hlines(figure_accuracy_vs_depth(t).axes[0])
    assert lines["chance: majority class (0.80)"] == pytest.approx(0.8)


def test_configurations_are_dodged_symmetrically_about_each_depth(table):
    ax = figure_accuracy_vs_depth(table).axes[0]
    xs, ys = _xy(_container(ax, "scratch"))
    xt, yt = _xy(_container(ax, "spt-span"))
    np.testing.assert_allclose(xs + xt, 2 * np.array([1, 2, 4]))  # symmetric about depth
    assert np.all(xt - xs > 0.05) and np.all(np.abs(xt - [1, 2, 4]) <= 0.3)
    # the points are the table's means, at the table's depths
    for config, y in (("scratch", ys), ("spt-span", yt)):
        np.testing.assert_allclose(y, table[table["config"] == config]["mean"].to_numpy())


def test_error_bars_are_the_std(table):
    ax = figure_accuracy_vs_depth(table).axes[0]
    bars = _container(ax, "spt-span").lines[2][0].get_segments()
    rows = table[table["config"] == "spt-span"]
    for seg, mean, std in zip(bars, rows["mean"], rows["std"]):
        assert seg[:, 1].min() == pytest.approx(mean - std)
        assert seg[:, 1].max() == pytest.approx(mean + std)


def test_rows_without_depth_get_their_own_position_and_tick(table):
    ax = figure_accuracy_vs_depth(table).axes[0]
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["1", "2", "4", NESTED_LABEL]
    x, y = _xy(_container(ax, "nested-best"))
    assert len(x) == 1 and x[0] == pytest.approx(ax.get_xticks()[-1]) and x[0] > 4.5
    assert y[0] == pytest.approx(table.loc[table["depth"].isna(), "mean"].iloc[0])


def test_y_range_is_fixed_not_zoomed(table):
    narrow = table.assign(mean=0.7, std=0.001)  # all points within 0.699 … 0.701
    ax = figure_accuracy_vs_depth(narrow).axes[0]
    assert ax.get_ylim() == pytest.approx((0.0, 1.02))
    ax = figure_accuracy_vs_depth(table, metric="accuracy").axes[0]
    assert ax.get_ylim() == pytest.approx((0.0, 1.02))


def test_plot_accuracy_vs_depth_writes_a_png_and_accepts_raw_results(tmp_path, table):
    path = plot_accuracy_vs_depth(table, tmp_path / "a" / "acc.png", chance={"majority": 0.5})
    assert path.read_bytes()[:4] == b"\x89PNG"
    with pytest.warns(DeprecationWarning, match="summarize"):
        ax = figure_accuracy_vs_depth(_results()).axes[0]
    _, y = _xy(_container(ax, "spt-span"))
    np.testing.assert_allclose(y, table[table["config"] == "spt-span"]["mean"])


# ---------------------------------------------------------------- gain vs depth


def _gain_table(table):
    """The summarize table with its depth-2 row tested over subjects (as with
    out-of-fold predictions) and significant after Holm."""
    t = table.copy()
    at = (t["config"] == "spt-span") & (t["depth"] == 2)
    t.loc[at, ["subject_gain", "ci_low", "ci_high", "p_holm", "test"]] = [
        0.25, 0.12, 0.31, 0.004, "subjects"
    ]  # fmt: skip
    return t


def test_gain_shows_the_table_gain_with_its_interval(table):
    t = _gain_table(table)
    ax = figure_gain_vs_depth(t).axes[0]
    bars = _container(ax, "spt-span")
    x, y = _xy(bars)
    rows = t[t["config"] == "spt-span"]
    expected = np.where(rows["test"] == "subjects", rows["subject_gain"], rows["gain_vs_scratch"])
    np.testing.assert_allclose(y, expected)
    assert y[1] == pytest.approx(0.25)  # subject_gain, not gain_vs_scratch
    np.testing.assert_allclose(x, [1, 2, 4])  # the only configuration: no offset
    for seg, lo, hi in zip(bars.lines[2][0].get_segments(), rows["ci_low"], rows["ci_high"]):
        assert (seg[:, 1].min(), seg[:, 1].max()) == pytest.approx((lo, hi))
    assert [c.get_label() for c in ax.containers] == ["spt-span"]  # no scratch, no nested
    assert NESTED_LABEL not in [t.get_text() for t in ax.get_xticklabels()]


def test_gain_stars_holm_and_fixes_a_symmetric_range(table):
    t = _gain_table(table)
    fig = figure_gain_vs_depth(t)
    ax = fig.axes[0]
    stars = [a for a in ax.texts if a.get_text() == "*"]
    assert len(stars) == int((t["p_holm"] < 0.05).sum()) == 1
    assert stars[0].xy[0] == pytest.approx(2.0)
    text = ax.get_title() + ax.get_legend().get_title().get_text()
    assert "Holm-adjusted" in text
    lo, hi = ax.get_ylim()
    assert lo == pytest.approx(-hi) and hi >= max(0.31, 0.1)
    assert _hlines(ax)  # the zero line
    assert 0.0 in _hlines(ax).values()
    # tiny gains still get at least ±0.1
    small = table.assign(gain_vs_scratch=0.001, ci_low=-0.002, ci_high=0.004)
    assert figure_gain_vs_depth(small).axes[0].get_ylim() == pytest.approx((-0.1, 0.1))


def test_gain_configurations_are_dodged(table):
    two = pd.concat([table, table[table["config"] == "spt-span"].assign(config="spt-block")])
    ax = figure_gain_vs_depth(two).axes[0]
    xa, _ = _xy(_container(ax, "spt-span"))
    xb, _ = _xy(_container(ax, "spt-block"))
    np.testing.assert_allclose(xa + xb, 2 * np.array([1, 2, 4]))
    assert np.all(xb > xa)


def test_plot_gain_vs_depth_writes_a_png(tmp_path, table):
    assert plot_gain_vs_depth(table, tmp_path / "g.png").read_bytes()[:4] == b"\x89PNG"


# ---------------------------------------------------------------- history


def test_history_epoch_ticks_are_integers():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(24, 2, 64)).astype("float32")
    clf = SPTClassifier(**FAST, random_state=0).fit(X, [0, 1] * 12)
    fig = figure_history(clf)
    fig.canvas.draw()
    visible = [ax for ax in fig.axes if ax.axison]
    assert len(visible) == 2
    for ax in visible:
        ticks = [t.get_text().replace("−", "-") for t in ax.get_xticklabels()]
        ticks = [t for t in ticks if t]
        assert ticks and all(float(t).is_integer() and "." not in t for t in ticks), ticks


# ---------------------------------------------------------------- confusion


CLASSES = ["walk", "sit", "stand"]


def _predictions(seed: int, config: str = "spt-span", depth=2, n: int = 60) -> pd.DataFrame:
    y = np.random.default_rng(100).integers(0, 3, n)  # the same labels for every seed
    rng = np.random.default_rng(seed)
    proba = rng.dirichlet(np.ones(3), n)
    proba[np.arange(n), y] += rng.uniform(0, 0.8, n)  # better than chance, not perfect
    proba /= proba.sum(1, keepdims=True)
    subject = np.repeat(np.arange(n // 5), 5)
    y = y.reshape(-1, 5)[:, :1].repeat(5, 1).ravel()  # one label per subject
    return predictions_frame(
        np.arange(n), subject, y, proba, CLASSES, config=config, depth=depth, seed=seed, fold=0
    )


def _cells(ax) -> np.ndarray:
    K = len(CLASSES)
    out = np.empty((K, K), dtype=object)
    for t in ax.texts:
        x, y = t.get_position()
        out[int(round(y)), int(round(x))] = t.get_text()
    return out


def test_confusion_cells_are_sklearn_counts_and_row_percentages():
    pred = _predictions(0)
    cm = confusion_matrix(pred["label_code"], pred["predicted_code"], labels=[0, 1, 2])
    fig = figure_confusion(confusion_frame(pred, CLASSES))
    ax = fig.axes[0]
    cells = _cells(ax)
    counts = np.array([[int(c.split("\n")[0]) for c in row] for row in cells])
    np.testing.assert_array_equal(counts, cm)
    share = cm / cm.sum(1, keepdims=True)
    pct = np.array([[int(c.split("\n")[1].rstrip(" %")) for c in row] for row in cells])
    np.testing.assert_array_equal(pct, np.round(100 * share).astype(int))
    np.testing.assert_allclose(ax.images[0].get_array(), share)  # colour = row share
    assert ax.images[0].get_clim() == (0.0, 1.0)
    assert ax.get_xlabel() == "predicted class" and ax.get_ylabel() == "true class"
    assert [t.get_text() for t in ax.get_yticklabels()] == CLASSES  # order of appearance
    assert [t.get_text() for t in ax.get_xticklabels()] == CLASSES
    assert len(fig.axes) == 2 and fig.axes[1].get_ylabel() == "share of the true class"
    assert "spt-span" in ax.get_title()


def test_confusion_averages_seeds_and_says_so(tmp_path):
    pred = pd.concat([_predictions(0), _predictions(1)], ignore_index=True)
    frame = confusion_frame(pred, CLASSES)
    ax = figure_confusion(frame).axes[0]
    mean = np.mean(
        [
            confusion_matrix(g["label_code"], g["predicted_code"], labels=[0, 1, 2])
            for _, g in pred.groupby("seed")
        ],
        axis=0,
    )
    counts = np.array([[float(c.split("\n")[0]) for c in row] for row in _cells(ax)])
    np.testing.assert_allclose(counts, mean, atol=0.05)
    assert "mean over 2 seeds" in ax.get_title()
    assert plot_confusion(frame, tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"


def test_confusion_refuses_several_configurations_by_name():
    pred = pd.concat([_predictions(0, "scratch"), _predictions(0, "spt-span")])
    with pytest.raises(ValueError, match=r"several.*scratch.*spt-span"):
        figure_confusion(confusion_frame(pred, CLASSES))
    pred = pd.concat([_predictions(0, depth=2), _predictions(0, depth=4)])
    with pytest.raises(ValueError, match=r"depth=2.*depth=4"):
        figure_confusion(confusion_frame(pred, CLASSES))
    with pytest.raises(ValueError, match="normalize"):
        figure_confusion(confusion_frame(_predictions(0), CLASSES), normalize="rows")


# ---------------------------------------------------------------- subjects


def test_subject_dots_are_the_true_class_probability_sorted_and_coloured():
    pred = _predictions(0)
    subjects = subject_table(pred)
    fig = figure_subjects(subjects)
    ax = fig.axes[0]
    right, wrong = (
        next(c for c in ax.collections if c.get_label() == k) for k in ("right", "wrong")
    )
    p_true = subjects.apply(lambda r: r[f"proba_{r['label']}"], axis=1).to_numpy()
    got = np.concatenate([right.get_offsets()[:, 1], wrong.get_offsets()[:, 1]])
    np.testing.assert_allclose(np.sort(got), np.sort(p_true))
    assert len(right.get_offsets()) == int(subjects["correct"].sum())
    # sorted: x rank follows the probability
    xy = np.concatenate([right.get_offsets(), wrong.get_offsets()])
    assert np.all(np.diff(xy[np.argsort(xy[:, 0]), 1]) >= 0)
    assert ax.get_ylim() == (0.0, 1.0)
    assert _hlines(ax)["chance (1/3 = 0.33)"] == pytest.approx(1 / 3)


def test_subjects_one_panel_per_configuration_and_mixed_labels_left_out(tmp_path):
    pred = pd.concat(
        [_predictions(0, "scratch"), _predictions(0, "spt-span"), _predictions(1, "spt-span")]
    )
    mixed = pred["subject"] == "0"
    pred.loc[mixed, "label_code"] = np.arange(mixed.sum()) % 2  # subject 0: two labels
    subjects = subject_table(pred)
    fig = figure_subjects(subjects)
    panels = [ax for ax in fig.axes if ax.axison]
    assert len(panels) == 2
    assert "scratch" in panels[0].get_title() and "spt-span" in panels[1].get_title()
    n = subjects["subject"].nunique() - 1
    assert all(sum(len(c.get_offsets()) for c in ax.collections) == n for ax in panels)
    assert "mean over 2 seeds" in panels[1].get_title()  # one dot per subject, not per seed
    assert "seeds" not in panels[0].get_title()
    # the dots of the two-seed panel are the seed means of the true-class probability
    two = subjects[(subjects["config"] == "spt-span") & (subjects["subject"] != "0")]
    p_true = two.apply(lambda r: r[f"proba_{r['label']}"], axis=1).groupby(two["subject"]).mean()
    got = np.concatenate([c.get_offsets()[:, 1] for c in panels[1].collections])
    np.testing.assert_allclose(np.sort(got), np.sort(p_true.to_numpy()))
    assert "1 subject without a single label left out" in fig._suptitle.get_text()
    assert plot_subjects(subjects, tmp_path / "s.png").read_bytes()[:4] == b"\x89PNG"


# ---------------------------------------------------------------- attention diagnostics


def _dist(n):
    i = np.arange(n)
    return np.abs(i[:, None] - i[None, :])


def _rows(a):
    return a / a.sum(-1, keepdims=True)


def test_distance_profile_axis_is_not_zoomed_onto_noise():
    n = 16
    noisy = _rows(1 + 0.01 * np.random.default_rng(0).uniform(-1, 1, (2, 2, n, n)))
    fig = figure_distance_profiles({"a": profile_from_maps(noisy), "b": profile_from_maps(noisy)})
    for ax in fig.axes:
        assert ax.get_yscale() == "linear"
        lo, hi = ax.get_ylim()
        assert lo == 0.0 and hi >= 2.0
        assert _hlines(ax)["uniform attention"] == 1.0


def test_sharp_profiles_get_a_log_axis_spanning_a_decade_each_side():
    n = 30
    local = _rows(np.exp(-_dist(n) / 3.0))[None, None]  # falls to ~1e-4 of uniform
    fig = figure_distance_profiles({"local": profile_from_maps(local)})
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    lo, hi = ax.get_ylim()
    assert lo <= 0.1 and hi >= 10
    y = ax.get_lines()[0].get_ydata()
    assert lo <= y.min() and y.max() <= hi  # the data fit


def test_positional_score_heatmaps_have_labels_and_one_shared_colour_bar():
    cfg = ModelConfig(n_channels=2, n_steps=64, n_classes=2, depth=2, d_model=16, n_heads=2)
    score = positional_score(SPTTransformer(cfg))
    fig = figure_positional_score(score)
    maps = [ax for ax in fig.axes if ax.images]
    bars = [ax for ax in fig.axes if not ax.images]
    assert len(maps) == 4 and len(bars) == 1
    assert "S(i, j)" in bars[0].get_ylabel()
    clims = {ax.images[0].get_clim() for ax in maps}
    assert len(clims) == 1  # one scale for every head
    lo, hi = clims.pop()
    assert lo == -hi and hi == pytest.approx(np.abs(score.scores).max())
    assert {ax.get_xlabel() for ax in maps[2:]} == {"key token j"}
    assert {maps[0].get_ylabel(), maps[2].get_ylabel()} == {"query token i"}
