"""Every user mistake gets a clear ValueError naming what is wrong - never a torch
traceback. One row per kind of mistake, across fit_spt, SPTClassifier.fit/predict, the
windowing and timing functions, the dataset loaders, model files and the CLI; documented
warnings (data that is fixed, not refused) have a matrix of their own."""

import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import FAST

from medspt import SPTClassifier, fit_spt


def _fit_frame(df, **kw):
    return fit_spt(df, **({"window": 40} | FAST | kw))


def _fit_arrays(arrays, X=None, y=None, groups=None, **kw):
    X0, y0, g0 = arrays
    return SPTClassifier(**(FAST | kw)).fit(
        X0 if X is None else X, y0 if y is None else y, groups=g0 if groups is None else groups
    )


CASES = {
    "not a DataFrame": (lambda f, a: fit_spt(a[0]), "fit_spt expects a long pandas DataFrame"),
    "missing label column": (
        lambda f, a: _fit_frame(f.drop(columns="label")),
        "label column 'label' not found",
    ),
    "missing subject column": (
        lambda f, a: _fit_frame(f.rename(columns={"subject": "patient"})),
        "subject column 'subject' not found",
    ),
    "numbers stored as text": (
        lambda f, a: _fit_frame(f.assign(a=f["a"].map("{:.3f}".format)), channels=["a", "b"]),
        "channel 'a' must be numeric.*numbers stored as text",
    ),
    "infinite values": (
        lambda f, a: _fit_frame(f.assign(b=f["b"].replace(f["b"].iloc[7], np.inf))),
        "channel 'b' contains 1 infinite",
    ),
    "single class": (
        lambda f, a: _fit_frame(f.assign(label="slow")),
        "only one class.*at least 2 classes",
    ),
    "recordings shorter than the window": (
        lambda f, a: _fit_frame(f, window=5000),
        "no complete window of 5000 samples",
    ),
    "empty frame": (lambda f, a: _fit_frame(f.iloc[:0]), "empty"),
    "all-NaN channel": (lambda f, a: _fit_frame(f.assign(b=np.nan)), "'b' is entirely missing"),
    "unknown masking": (
        lambda f, a: _fit_arrays(a, masking="zigzag"),
        "masking must be one of.*'zigzag'",
    ),
    "negative mask ratio": (lambda f, a: _fit_arrays(a, mask_ratio=-0.2), r"in \(0, 1\)"),
    "mask ratio of 1": (lambda f, a: _fit_arrays(a, mask_ratio=1.0), r"in \(0, 1\)"),
    "depth 0": (lambda f, a: _fit_arrays(a, depth=0), "depth must be an integer >= 1"),
    "d_model not divisible by heads": (
        lambda f, a: _fit_arrays(a, d_model=30, n_heads=4),
        r"d_model \(30\) must be divisible by n_heads \(4\)",
    ),
    "4-D X": (lambda f, a: _fit_arrays(a, X=a[0][..., None]), r"shape \(N, C, T\)"),
    "y of the wrong length": (
        lambda f, a: _fit_arrays(a, y=a[1][:-3]),
        "inconsistent numbers of samples",
    ),
    "groups of the wrong length": (
        lambda f, a: _fit_arrays(a, groups=a[2][:5]),
        "groups must have one entry per window",
    ),
    "continuous target": (
        lambda f, a: _fit_arrays(a, y=np.linspace(0, 1, len(a[1]))),
        "Unknown label type",
    ),
    "unknown channel in channel_groups": (
        lambda f, a: _fit_frame(f, masking="channel", channel_groups={"acc": ["a", "z"]}),
        "'z'",
    ),
    "CUDA requested without a GPU": (
        lambda f, a: _fit_arrays(a, device="cuda:0"),
        "CUDA is not available",
    ),
    "window given as a vague string": (lambda f, a: _fit_frame(f, window="long"), "window='long'"),
    "duplicated timestamps": (
        lambda f, a: _fit_frame(pd.concat([f.iloc[:5], f])),
        "time column 'time' has duplicated timestamps in subject 'slow0'",
    ),
    "zero sampling rate": (lambda f, a: _fit_frame(f, fs=0), "fs must be a positive"),
    "negative sampling rate": (lambda f, a: _fit_frame(f, fs=-20.0), "fs must be a positive"),
    "stride of zero": (lambda f, a: _fit_frame(f, stride=0), "stride must be at least 1"),
    "max_missing outside [0, 1]": (
        lambda f, a: _fit_frame(f, max_missing=1.5),
        r"max_missing must lie in \[0, 1\]",
    ),
    "a channel named twice": (
        lambda f, a: _fit_frame(f, channels=["a", "a"]),
        r"channels=\['a', 'a'\] names 'a' more than once",
    ),
    "the time column as a channel": (
        lambda f, a: _fit_frame(f, channels=["a", "time"]),
        r"column 'time' is the time column and cannot also be a channel; take it out of ch",
    ),
    "rows without a subject": (
        lambda f, a: _fit_frame(f.assign(subject=f["subject"].where(f.index > 3))),
        "subject column 'subject' has 4 missing values",
    ),
    "rows without a label": (
        lambda f, a: _fit_frame(f.assign(label=f["label"].where(f.index > 9))),
        "label column 'label' has 10 missing values",
    ),
    "label changes inside a recording with window=None": (
        lambda f, a: _fit_frame(
            f.drop(columns="time").assign(recording="r1", subject="one"), window=None
        ),
        "label changes inside subject 'one'",
    ),
    "a window with no observed value": (
        lambda f, a: _fit_arrays(a, X=np.where(np.arange(80)[:, None, None] == 3, np.nan, a[0])),
        r"1 window\(s\) have no observed value",
    ),
    "a saved CSV index among the channels": (
        lambda f, a: _fit_frame(f.reset_index().rename(columns={"index": "Unnamed: 0"})),
        r"column\(s\) \['Unnamed: 0'\] are named like an index or a clock.*channels=",
    ),
    "time stored as text": (
        lambda f, a: _fit_frame(f.assign(time=f["time"].astype(str))),
        "time column 'time' must be numeric seconds",
    ),
}


@pytest.mark.parametrize("kind", list(CASES))
def test_fit_errors(kind, frame, arrays):
    call, match = CASES[kind]
    if kind == "CUDA requested without a GPU":
        import torch

        if torch.cuda.is_available():
            pytest.skip("a GPU is present")
    with pytest.raises(ValueError, match=match):
        call(frame, arrays)


@pytest.fixture(scope="module")
def fitted_frame_model():
    from conftest import subject_frame

    df = subject_frame()
    return fit_spt(df, window=40, **FAST), df


PREDICT_CASES = {
    "channels missing at predict time": (
        lambda m, df: m.predict(df.drop(columns="a")),
        r"lacks channel column\(s\) \['a'\]",
    ),
    "labels unseen at predict time": (
        lambda m, df: m.predict(df.assign(label="medium")),
        "values the model was not trained on: \\['medium'\\]",
    ),
    "array with wrong number of channels": (
        lambda m, df: m.predict_proba(np.zeros((2, 3, 40))),
        "expecting 2 features",
    ),
    # other window lengths are padded or cut into sliding windows (tests/test_auto.py)
    "array with an empty case": (
        lambda m, df: m.predict_proba(np.stack([np.zeros((2, 40)), np.full((2, 40), np.nan)])),
        r"1 case\(s\) of X have no observed value \(all NaN\), e.g. case 1",
    ),
    "predict before fit": (
        lambda m, df: SPTClassifier().predict(np.zeros((2, 2, 40))),
        "not fitted",
    ),
}


def test_channels_reordered_at_predict_time_are_matched_by_name(fitted_frame_model):
    model, df = fitted_frame_model
    reordered = df[list(reversed(df.columns))]
    a = model.predict(df).windows.filter(like="proba_").to_numpy()
    b = model.predict(reordered).windows.filter(like="proba_").to_numpy()
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("kind", list(PREDICT_CASES))
def test_predict_errors(kind, fitted_frame_model):
    model, df = fitted_frame_model
    call, match = PREDICT_CASES[kind]
    with pytest.raises(ValueError, match=match):
        call(model, df)


def _model_file(arrays, tmp_path):
    X, y, groups = arrays
    path = tmp_path / "m.safetensors"
    SPTClassifier(**FAST).fit(X, y, groups=groups).save(path)
    return path


def _newer_model_file(arrays, tmp_path):
    from test_persistence import _rewrite_metadata

    path = _model_file(arrays, tmp_path)
    _rewrite_metadata(path, lambda m: m.update(format_version=99, medspt_version="9.0.0"))
    return path


def _truncated_model_file(arrays, tmp_path):
    path = _model_file(arrays, tmp_path)
    path.write_bytes(path.read_bytes()[:200])
    return path


def _cli(args, capsys):
    from medspt.cli.commands import main

    code = main(args)
    err = capsys.readouterr().err
    assert code == 2, err
    raise ValueError(err)  # the message the user sees, for the match below


def _load(path):
    from medspt import load

    return load(path)


OTHER_CASES = {
    "gaitpdb folder missing": (
        lambda tmp, a, c: __import__("medspt.datasets", fromlist=["x"]).load_gaitpd(tmp / "no"),
        "does not exist or is not a folder",
    ),
    "Camargo subject table missing": (
        lambda tmp, a, c: __import__(
            "medspt.datasets.camargo", fromlist=["x"]
        ).load_camargo_subjects(tmp / "SubjectInfo.mat"),
        "subject table not found",
    ),
    "model file from a newer medspt": (
        lambda tmp, a, c: _load(_newer_model_file(a, tmp)),
        "written by medspt 9.0.0 in file format 99",
    ),
    "truncated model file": (
        lambda tmp, a, c: _load(_truncated_model_file(a, tmp)),
        "corrupt or truncated",
    ),
    "CLI: data file missing": (
        lambda tmp, a, c: _cli(["fit", "--data", str(tmp / "none.csv")], c),
        "--data file .*none.csv' does not exist",
    ),
    "CLI: data file of an unknown type": (
        lambda tmp, a, c: _cli(["fit", "--data", str(_touch(tmp / "x.json"))], c),
        "expected a .csv, .tsv or .parquet file",
    ),
    "CLI: predict with a missing model file": (
        lambda tmp, a, c: _cli(
            ["predict", "--model", str(tmp / "none.st"), "--data", str(_touch(tmp / "d.csv"))], c
        ),
        "model file .*none.st' does not exist",
    ),
    "resampling to a rate of zero": (
        lambda tmp, a, c: __import__("medspt.data.timing", fromlist=["x"]).regularize(
            pd.DataFrame({"subject": "a", "time": [0.0, 0.1, 0.2], "x": 1.0}), 0
        ),
        "fs must be a positive sampling rate",
    ),
}


def _touch(path):
    path.write_text("subject,label,a\n")
    return path


@pytest.mark.parametrize("kind", list(OTHER_CASES))
def test_loader_model_file_and_cli_errors(kind, tmp_path, arrays, capsys):
    call, match = OTHER_CASES[kind]
    with pytest.raises((ValueError, FileNotFoundError), match=match):
        call(tmp_path, arrays, capsys)


WARNING_CASES = {
    "a clock under another name": (
        lambda f: _fit_frame(f.assign(elapsed=f.groupby("subject").cumcount() * 0.5)),
        r"channel\(s\) \['elapsed'\] only ever increase within every recording",
    ),
    "unsorted time": (
        lambda f: _fit_frame(f.sample(frac=1.0, random_state=0)),
        "not in 'time' order; they are sorted by time",
    ),
    "irregular timestamps": (
        lambda f: _fit_frame(
            f.assign(time=f["time"] + np.random.default_rng(0).uniform(0, 0.02, len(f)))
        ),
        "time column 'time' is irregular.*Resampled",
    ),
    "a case with too many missing values": (
        lambda f: _fit_frame(
            f.assign(
                recording=f["subject"],
                a=f["a"].where(f["subject"] != "slow1"),
                b=f["b"].where(f["subject"] != "slow1"),
            ),
            window=None,
        ),
        "100% of its values are missing",
    ),
}


@pytest.mark.parametrize("kind", list(WARNING_CASES))
def test_documented_warnings(kind, frame):
    call, match = WARNING_CASES[kind]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # everything but the warning under test
        warnings.filterwarnings("always", category=UserWarning)
        with pytest.warns(UserWarning, match=match):
            try:
                call(frame)
            except ValueError:
                pass  # some cases also fail later; the warning must come first


def test_matrix_is_large_enough():
    kinds = len(CASES) + len(PREDICT_CASES) + len(OTHER_CASES) + len(WARNING_CASES)
    assert kinds >= 25
