"""Data-aware "auto" settings, the data summary, and prediction on cases of any length."""

import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import FAST

from medspt import SPTClassifier, fit_spt, load
from medspt.core.errors import InputError
from medspt.data.summary import DataSummary, case_lengths
from medspt.estimator.auto import (
    MAX_TOKENS,
    MIN_TOKENS,
    batch_size_for,
    n_estimators_for,
    patch_len_for,
)

# the patch tokenizer's rules (the conv tokenizer's are in test_conv_tokenizer.py)
TINY = {k: v for k, v in FAST.items() if k not in ("patch_len", "batch_size")}
TINY["embedding"] = "patch"


@pytest.mark.parametrize(
    "T, want",
    [(4, 1), (23, 1), (24, 2), (29, 2), (48, 4), (95, 4), (96, 8), (200, 8), (240, 8),
     (4096, 8), (4097, 16), (12000, 32)],
)  # fmt: skip
def test_patch_len_for_lengths(T, want):
    assert patch_len_for(T) == want


def test_patch_len_keeps_tokens_in_range():
    for T in range(MIN_TOKENS, 20000, 37):
        P = patch_len_for(T)
        assert P & (P - 1) == 0  # a power of two
        n_tok = -(-T // P)
        assert n_tok <= MAX_TOKENS
        assert n_tok >= MIN_TOKENS or P == 1


@pytest.mark.parametrize(
    "n, want", [(1, 8), (32, 8), (127, 8), (128, 16), (300, 32), (511, 32), (512, 64), (9999, 64)]
)
def test_batch_size_for_counts(n, want):
    assert batch_size_for(n) == want


@pytest.mark.parametrize("bad", [0, -3])
def test_rules_refuse_nonsense(bad):
    with pytest.raises(ValueError, match="must be >= 1"):
        patch_len_for(bad)
    with pytest.raises(ValueError, match="must be >= 1"):
        batch_size_for(bad)
    with pytest.raises(ValueError, match="n_windows must be >= 1"):
        n_estimators_for(bad)


@pytest.mark.parametrize("n, want", [(1, 5), (36, 5), (299, 5), (300, 1), (2785, 1)])
def test_n_estimators_for_ensembles_small_sets_only(n, want):
    assert n_estimators_for(n) == want


def test_case_lengths_ignore_trailing_padding_only():
    X = np.ones((3, 2, 6), np.float32)
    X[0, :, 4:] = np.nan  # padded after 4 steps
    X[1, 0, 2:] = np.nan  # one channel missing at the end: not padding
    X[2, :, 1:3] = np.nan  # a gap inside: not padding
    assert case_lengths(X).tolist() == [4, 6, 6]


def short_cases(n_cases=40, lo=7, hi=29, seed=0):
    """Cases of 7-29 steps, 2 channels, class = frequency of the pattern."""
    rng = np.random.default_rng(seed)
    T = hi
    X = np.full((n_cases, 2, T), np.nan, np.float32)
    y = np.arange(n_cases) % 2
    for i in range(n_cases):
        n = int(rng.integers(lo, hi + 1))
        t = np.arange(n)
        X[i, 0, :n] = np.sin(t * (0.4 + 0.8 * y[i])) + 0.1 * rng.normal(size=n)
        X[i, 1, :n] = np.cos(t * (0.4 + 0.8 * y[i])) + 0.1 * rng.normal(size=n)
    return X, np.where(y == 1, "fast", "slow")


def test_auto_settings_are_recorded_and_used():
    X, y = short_cases()
    clf = SPTClassifier(**TINY).fit(X, y)
    assert clf.patch_len == "auto" and clf.batch_size == "auto"
    # 40 cases, 20 % held out: 32 training windows -> batch 8; longest case 29 -> patch 2
    assert clf.auto_params_ == {"patch_len": 2, "batch_size": 8, "positional": "relative"}
    assert clf.model_.config.patch_len == 2 and clf.patch_len_ == 2
    assert clf.n_train_windows_ == 32
    assert clf.history_["finetune"][0]["steps"] == 4  # 32 windows / batch 8
    # explicit values are used as given and not listed as chosen
    fixed = SPTClassifier(**TINY, patch_len=4, batch_size=16).fit(X, y)
    assert fixed.auto_params_ == {"positional": "relative"} and fixed.model_.config.patch_len == 4
    assert fixed.history_["finetune"][0]["steps"] == 2
    # the conv tokenizer's stride: at most 64 tokens, here one per step
    conv = SPTClassifier(**{**TINY, "embedding": "conv"}).fit(X, y)
    assert conv.auto_params_ == {"patch_len": 1, "batch_size": 8, "positional": "relative"}


def test_data_summary_counts_and_text(frame):
    clf = fit_spt(frame, window="5s", **TINY)
    s = clf.data_summary_
    assert isinstance(s, DataSummary)
    assert s.channels == ["a", "b"] and s.fs == pytest.approx(20.0)
    assert s.n_steps == 100 and s.lengths == (100, 100, 100)
    assert s.n_subjects == 6 and s.n_windows == 36
    assert s.per_class == {"fast": (18, 3), "slow": (18, 3)}
    assert s.per_subject == (6, 6, 6)
    assert s.auto == {"patch_len": 8, "batch_size": 8, "positional": "relative"}
    assert s.n_validation_subjects == len(clf.validation_subjects_)
    text = str(s)
    assert "channels (2): a, b" in text
    assert "sampling rate: 20 Hz" in text
    assert "window: 100 samples = 5 s" in text
    assert "36 windows from 6 subjects" in text
    assert "fast: 18 windows / 3 subjects" in text
    assert "patch_len=8, batch_size=8" in text


def test_summary_and_auto_params_survive_save_and_load(tmp_path, frame):
    clf = fit_spt(frame, window="5s", **TINY)
    clf.save(tmp_path / "m.safetensors")
    back = load(tmp_path / "m.safetensors")
    assert back.auto_params_ == clf.auto_params_
    assert back.min_length_ == clf.min_length_ == 100
    assert back.data_summary_.to_dict() == clf.data_summary_.to_dict()
    assert str(back.data_summary_) == str(clf.data_summary_)


def test_patch_longer_than_window_is_refused_with_fix(arrays):
    X, y, g = arrays  # windows of 32 steps
    with pytest.raises(InputError, match=r"patch_len=40 is longer than the windows \(32 steps\)"):
        SPTClassifier(**TINY, patch_len=40).fit(X, y, g)
    with pytest.raises(InputError, match=r"patch_len='auto' \(chooses 2 here\)"):
        SPTClassifier(**TINY, patch_len=40).fit(X, y, g)


def test_too_few_tokens_get_a_warning_with_fix(arrays):
    X, y, g = arrays
    with pytest.warns(UserWarning, match=r"patch_len=16 cuts windows of 32 steps into only 2"):
        SPTClassifier(**TINY, patch_len=16).fit(X, y, g)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # random windows: pretraining has nothing to learn and says so (not under test here)
        warnings.filterwarnings("ignore", "pretraining did not learn", UserWarning)
        SPTClassifier(**TINY, patch_len=8).fit(X, y, g)  # 4 tokens: no warning


def test_windows_shorter_than_a_few_steps_get_a_warning():
    X = np.random.default_rng(0).normal(size=(10, 1, 3)).astype(np.float32)
    with pytest.warns(UserWarning, match=r"patch_len=1 cuts windows of 3 steps .* longer windows"):
        SPTClassifier(**TINY).fit(X, np.arange(10) % 2)


@pytest.mark.parametrize("bad", ["big", 0, 2.5, True])
def test_auto_params_refuse_other_values(bad, arrays):
    X, y, g = arrays
    with pytest.raises(InputError, match=r"patch_len must be 'auto' or an integer >= 1"):
        SPTClassifier(**TINY, patch_len=bad).fit(X, y, g)
    with pytest.raises(InputError, match=r"batch_size must be 'auto' or an integer >= 1"):
        SPTClassifier(**TINY, batch_size=bad).fit(X, y, g)


@pytest.fixture(scope="module")
def fixed_model():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 2, 32)).astype(np.float32)
    y = np.arange(40) % 2
    X[y == 1, 0] += np.sin(np.linspace(0, 8 * np.pi, 32))
    return SPTClassifier(**TINY).fit(X, y), rng


def test_longer_cases_are_averaged_over_sliding_windows(fixed_model):
    clf, rng = fixed_model
    X = rng.normal(size=(3, 2, 80)).astype(np.float32)
    X[1, :, 50:] = np.nan  # a case of 50 steps, padded
    X[2, :, 32:] = np.nan  # one of exactly the fitted length
    with pytest.warns(
        UserWarning, match=r"2 case\(s\) are longer than the 32 steps .*\(stride 16\)"
    ):
        got = clf.predict_proba(X)
    want0 = clf.predict_proba(np.stack([X[0, :, s : s + 32] for s in (0, 16, 32, 48)])).mean(0)
    want1 = clf.predict_proba(np.stack([X[1, :, s : s + 32] for s in (0, 16, 18)])).mean(0)
    want2 = clf.predict_proba(X[2:3, :, :32])[0]
    np.testing.assert_allclose(got, np.stack([want0, want1, want2]), atol=1e-6)
    assert got.shape == (3, 2)
    with pytest.warns(UserWarning, match="sliding windows"):
        assert clf.predict(X).shape == (3,)


def test_shorter_cases_are_padded_with_a_warning(fixed_model):
    clf, rng = fixed_model
    X = rng.normal(size=(2, 2, 20)).astype(np.float32)
    with pytest.warns(UserWarning, match=r"2 case\(s\) are shorter than any .* \(20 < 32 steps\)"):
        got = clf.predict_proba(X)
    padded = np.concatenate([X, np.full((2, 2, 12), np.nan, np.float32)], axis=2)
    with pytest.warns(UserWarning, match="shorter than any"):
        np.testing.assert_allclose(got, clf.predict_proba(padded), atol=1e-6)


def test_fit_spt_window_none_predicts_longer_recordings():
    X, y = short_cases(n_cases=30, lo=10, hi=20)
    rows = []
    for i in range(len(X)):
        n = int(case_lengths(X[i : i + 1])[0])
        d = pd.DataFrame({"c0": X[i, 0, :n], "c1": X[i, 1, :n]})
        d["subject"], d["recording"], d["label"] = f"s{i // 3}", f"r{i}", y[i]
        rows.append(d)
    clf = fit_spt(pd.concat(rows, ignore_index=True), window=None, **TINY)
    lengths = case_lengths(X)
    assert clf.n_steps_ == lengths.max() and clf.min_length_ == lengths.min() < 20
    t = np.arange(45)
    test = pd.DataFrame({"c0": np.sin(t * 1.2), "c1": np.cos(t * 1.2)})
    test["subject"], test["recording"], test["label"] = "new", "long", "fast"
    with pytest.warns(UserWarning, match=f"sliding windows of {clf.n_steps_} steps"):
        pred = clf.predict(test)
    assert pred.recordings["n_windows"].tolist() == [1]
    assert pred.recordings["predicted"].iloc[0] in ("fast", "slow")


def test_data_summary_names_key_columns_and_what_was_left_out(frame):
    frame = frame.assign(condition=np.where(frame["subject"].str.startswith("slow"), "a", "b"))
    frame["flag"] = frame["a"] > 0
    clf = fit_spt(frame, window="5s", **TINY)
    assert clf.data_summary_.left_out["condition"].startswith("not numeric")
    assert clf.data_summary_.left_out["flag"] == "boolean"
    text = str(clf.data_summary_)
    assert "key columns: subject (subject column)" in text
    assert "left out: condition (not numeric" in text and "flag (boolean)" in text
    assert "validation: 1 training subject held out" in text


def test_patch_len_of_one_step():
    assert patch_len_for(1) == 1


def test_data_summary_of_uneven_arrays_word_by_word():
    X = np.ones((5, 2, 10), np.float32)
    X[0, :, 4:] = np.nan  # a case of 4 steps
    X[1, :, 7:] = np.nan  # 7 steps
    X[4] = np.nan  # empty: length 0
    labels = np.array(["a", "a", "a", "b", "b"])
    groups = np.array(["p", "p", "q", "r", "r"])
    s = DataSummary.from_windows(X, labels, groups, ["x", "y"])
    assert case_lengths(X).tolist() == [4, 7, 10, 10, 0]
    assert s.lengths == (0, 7, 10) and s.n_steps == 10
    assert s.per_class == {"a": (3, 2), "b": (2, 1)}
    assert s.per_subject == (1, 2, 2) and s.n_subjects == 3 and s.n_windows == 5
    assert s.fs is None and s.fs_source == "not given"
    assert str(s) == "\n".join(
        [
            "channels (2): x, y",
            "sampling rate: unknown (not given)",
            "window: one case per recording, 0-10 samples (median 7); shorter ones padded to 10",
            "5 windows from 3 subjects (1-2 per subject, median 2)",
            "per class: a: 3 windows / 2 subjects, b: 2 windows / 1 subjects",
            "validation: none (all epochs run, final weights kept)",
        ]
    )
    given = DataSummary.from_windows(X[2:4], labels[2:4], groups[2:4], ["x", "y"], fs=2.0)
    assert given.fs_source == "given"
    given.auto, given.n_validation_subjects = {"patch_len": 1}, 2
    given.left_out = {"id": "subject column (who)", "note": "not numeric (text such as 'ok')"}
    assert str(given).splitlines()[1:] == [
        "key columns: id (subject column)",
        "left out: note (not numeric (text such as 'ok'))",
        "sampling rate: 2 Hz (given)",
        "window: 10 samples = 5 s",
        "2 windows from 2 subjects (1-1 per subject, median 1)",
        "per class: a: 1 windows / 1 subjects, b: 1 windows / 1 subjects",
        "chosen from the data: patch_len=1",
        "validation: 2 training subjects held out for early stopping",
    ]
    assert DataSummary.from_dict(given.to_dict()) == given


def test_data_summary_lists_several_columns_and_windows_without_a_rate():
    X = np.ones((4, 1, 6), np.float32)
    s = DataSummary.from_windows(X, np.array([0, 0, 1, 1]), np.array([1, 2, 2, 2]), ["x"])
    s.left_out = {"s": "subject column", "y": "label column", "u": "boolean", "v": "boolean"}
    lines = str(s).splitlines()
    assert lines[1:6] == [
        "key columns: s (subject column), y (label column)",
        "left out: u (boolean); v (boolean)",
        "sampling rate: unknown (not given)",
        "window: 6 samples",
        "4 windows from 2 subjects (1-3 per subject, median 2)",
    ]


def test_window_stats_is_checked_and_stored(tmp_path, arrays):
    X, y, g = arrays
    with pytest.raises(InputError, match="window_stats must be True or False, got 'yes'"):
        SPTClassifier(**TINY, window_stats="yes").fit(X, y, g)
    clf = SPTClassifier(**TINY, window_stats=True).fit(X, y, g)
    assert clf.model_.config.window_stats and clf.model_.stats_head is not None
    clf.save(tmp_path / "s.safetensors")
    back = load(tmp_path / "s.safetensors")
    np.testing.assert_allclose(back.predict_proba(X), clf.predict_proba(X), atol=1e-6)
