import numpy as np
import pandas as pd
import pytest

from medspt.core.errors import InputError
from medspt.data.windowset import from_arrays, make_windows


def _frame(n=100, labels=None, subjects=("s1",), fs=10.0):
    rows = []
    for s in subjects:
        lab = labels if labels is not None else ["a"] * n
        rows.append(
            pd.DataFrame(
                {
                    "subject": s,
                    "recording": "r",
                    "time": np.arange(n) / fs,
                    "label": lab,
                    "x": np.arange(n, dtype=float),
                    "y": -np.arange(n, dtype=float),
                }
            )
        )
    return pd.concat(rows, ignore_index=True)


def test_window_grid_anchored_at_zero_and_values():
    ws = make_windows(_frame(100), window=20, stride=10)
    assert ws.X.shape == (9, 2, 20)  # starts 0, 10, ..., 80
    np.testing.assert_array_equal(ws.meta["start"], np.arange(0, 81, 10))
    np.testing.assert_array_equal(ws.X[3, 0], np.arange(30, 50))
    np.testing.assert_array_equal(ws.X[3, 1], -np.arange(30, 50))
    assert ws.channels == ["x", "y"] and ws.fs == pytest.approx(10.0)
    assert ws.X.dtype == np.float32


def test_seconds_equal_samples():
    a = make_windows(_frame(100), window="2s", stride="1s")
    b = make_windows(_frame(100), window=20, stride=10)
    np.testing.assert_array_equal(a.X, b.X)


def test_windows_straddling_a_label_change_are_dropped():
    labels = ["a"] * 45 + ["b"] * 55
    ws = make_windows(_frame(100, labels), window=20, stride=10)
    # window [30, 50) straddles the change at 45; [40, 60) too
    assert set(ws.meta["start"]) == {0, 10, 20, 50, 60, 70, 80}
    assert list(ws.labels) == ["a"] * 3 + ["b"] * 4
    for x, lab in zip(ws.X, ws.labels):
        idx = x[0].astype(int)
        assert set(np.array(labels)[idx]) == {lab}


def test_groups_follow_subjects_and_time_order_is_used():
    df = _frame(60, subjects=("s1", "s2"))
    shuffled = df.sample(frac=1.0, random_state=0)
    ws = make_windows(shuffled, window=20)
    assert list(ws.groups) == ["s1"] * 3 + ["s2"] * 3
    np.testing.assert_array_equal(ws.X[1, 0], np.arange(20, 40))


def test_nan_is_kept_not_filled():
    df = _frame(100)
    df.loc[5:7, "x"] = np.nan
    ws = make_windows(df, window=20)
    assert np.isnan(ws.X[0, 0, 5:8]).all()
    assert not np.isnan(ws.X[0, 1]).any()


def test_windows_with_too_much_missing_are_dropped():
    df = _frame(100)
    df.loc[20:35, ["x", "y"]] = np.nan  # 16 of 20 samples of window [20, 40)
    ws = make_windows(df, window=20, max_missing=0.5)
    assert 20 not in set(ws.meta["start"])
    assert len(ws) == 4


def test_from_arrays_encodes_labels_and_accepts_2d():
    X = np.zeros((4, 10))
    ws = from_arrays(X, ["b", "a", "b", "a"], ["s1", "s1", "s2", "s2"])
    assert ws.X.shape == (4, 1, 10)
    assert list(ws.classes) == ["a", "b"] and list(ws.y) == [1, 0, 1, 0]


def test_subset_keeps_alignment():
    ws = make_windows(_frame(100, subjects=("s1", "s2")), window=20)
    sub = ws.subset(ws.groups == "s2")
    assert len(sub) == 5 and set(sub.groups) == {"s2"}
    assert len(sub.meta) == 5 and set(sub.meta["subject"]) == {"s2"}


@pytest.mark.parametrize(
    "mutate, kwargs, match",
    [
        (lambda d: d.drop(columns="subject"), {}, "subject column 'subject' not found"),
        (lambda d: d.drop(columns="label"), {}, "label column 'label' not found"),
        (
            lambda d: d.assign(x=d["x"].astype(str)),
            {"channels": ["x"]},
            "channel 'x' must be numeric.*pd.to_numeric",
        ),
        (
            lambda d: d.assign(x=np.where(d.index == 3, np.inf, d["x"])),
            {},
            "channel 'x' contains 1 infinite",
        ),
        (
            lambda d: d.assign(label=d["label"].where(d.index != 4)),
            {},
            "label column 'label' has 1 missing",
        ),
        (lambda d: d.iloc[:0], {}, "empty"),
        (lambda d: d, {"channels": ["nope"]}, r"channels=\['nope'\] has a name that is not a"),
        (lambda d: d, {"window": 500}, "no complete window of 500 samples"),
        (lambda d: d.assign(x=np.nan), {}, "channel 'x' is entirely missing"),
        (lambda d: d.assign(time=0.0), {"fs": 10.0}, "duplicated timestamps"),
        (lambda d: d, {"window": "2 minutes"}, "window='2 minutes'"),
        (lambda d: d, {"window": 0}, "window must be at least 1"),
        (lambda d: d, {"fs": -5.0}, "fs must be a positive"),
    ],
)
def test_bad_frames_raise_clear_errors(mutate, kwargs, match):
    df = mutate(_frame(100, subjects=("s1", "s2")))
    args = dict(window=20) | kwargs
    with pytest.raises(InputError, match=match):
        make_windows(df, **args)


def test_long_gap_raises_with_location_when_strict():
    df = _frame(100)
    df.loc[10:40, "x"] = np.nan
    with pytest.raises(InputError, match=r"subject 's1', recording 'r' has a gap of 31"):
        make_windows(df, window=20, strict=True)
    # without strict: the windows where x is missing throughout hold half of all values
    # (within max_missing=0.5), so they are kept, and the warning says so
    with pytest.warns(UserWarning, match=r"1 window\(s\) \(2 s\) were kept although a channel"):
        ws = make_windows(df, window=20)
    assert len(ws) == 5 and ws.dropped["windows_channel_missing"] == 1


def test_drop_short_subject_warns():
    df = pd.concat([_frame(100, subjects=("s1",)), _frame(10, subjects=("s2",))])
    with pytest.warns(UserWarning, match="1 subject.*dropped: 's2'"):
        ws = make_windows(df, window=20)
    assert set(ws.groups) == {"s1"} and ws.dropped["subjects"] == ["s2"]
    with pytest.raises(InputError, match="'s2'"):
        make_windows(df, window=20, strict=True)
    with pytest.warns(UserWarning, match="dropped"):
        ws = make_windows(df, window=20, drop_short=True, strict=True)
    assert set(ws.groups) == {"s1"}


def test_unknown_label_at_predict_time():
    df = _frame(100)
    with pytest.raises(InputError, match="values the model was not trained on: \\['a'\\]"):
        make_windows(df, window=20, classes=["b", "c"])
