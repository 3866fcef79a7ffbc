"""Every user mistake gets a clear ValueError naming what is wrong - never a torch
traceback. One row per kind of mistake."""

import numpy as np
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
    "array with wrong window length": (
        lambda m, df: m.predict_proba(np.zeros((2, 2, 10))),
        "windows of 10 steps",
    ),
    "predict before fit": (
        lambda m, df: SPTClassifier().predict(np.zeros((2, 2, 40))),
        "not fitted",
    ),
}


@pytest.mark.parametrize("kind", list(PREDICT_CASES))
def test_predict_errors(kind, fitted_frame_model):
    model, df = fitted_frame_model
    call, match = PREDICT_CASES[kind]
    with pytest.raises(ValueError, match=match):
        call(model, df)


def test_matrix_is_large_enough():
    assert len(CASES) + len(PREDICT_CASES) >= 12
