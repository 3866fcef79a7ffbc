"""Evaluation protocols GPD-1, NE-1 (real data when present; small format-faithful copies
otherwise) and the guarded CAM-1."""

import numpy as np
import pandas as pd
import pytest
from conftest import real_dataset
from test_datasets_gaitpd import demo_row, write_demographics, write_recording
from test_datasets_noneeg import write_subject

import medspt.datasets.protocols as protocols
from medspt.core.errors import InputError
from medspt.data.windowset import WindowSet
from medspt.datasets.protocols import Protocol, protocol


def check_folds(p: Protocol, n_folds: int = 5):
    """Folds are subject-disjoint and every window is tested exactly once."""
    n = len(p.windows)
    assert len(p.folds) == n_folds
    tested = np.concatenate([te for _, te in p.folds])
    assert np.array_equal(np.sort(tested), np.arange(n))
    for tr, te in p.folds:
        assert len(np.intersect1d(tr, te)) == 0
        assert len(tr) + len(te) == n
        shared = np.intersect1d(p.windows.groups[tr], p.windows.groups[te])
        assert len(shared) == 0


def same(a: Protocol, b: Protocol):
    assert np.array_equal(a.windows.X, b.windows.X, equal_nan=True)
    assert np.array_equal(a.windows.y, b.windows.y)
    assert np.array_equal(a.windows.groups, b.windows.groups)
    pd.testing.assert_frame_equal(a.windows.meta, b.windows.meta)
    for (tr1, te1), (tr2, te2) in zip(a.folds, b.folds):
        assert np.array_equal(tr1, tr2) and np.array_equal(te1, te2)


# --------------------------------------------------------------------------- synthetic


@pytest.fixture
def small_gait(tmp_path):
    """10 gaitpdb-format subjects, enough for 5 stratified folds."""
    d = tmp_path / "gaitpdb"
    d.mkdir()
    rows, lengths = [], {}
    for i in range(10):
        sid = f"Ga{'Pt' if i % 2 else 'Co'}{i + 1:02d}"
        n = 2000 + 173 * i  # 100 Hz rows; not multiples of 5
        write_recording(d / f"{sid}_01.txt", n, seed=i)
        rows.append(demo_row(sid, 1 if i % 2 else 2, hy="2.0" if i % 2 else "0.0"))
        lengths[sid] = n
    write_demographics(d, rows)
    return tmp_path, lengths


def test_gpd1_rules_on_small_files(small_gait):
    root, lengths = small_gait
    p = protocol("GPD-1", root)  # a folder holding gaitpdb/ also works
    ws = p.windows
    assert isinstance(ws, WindowSet) and p.name == "GPD-1"
    assert ws.X.shape[1:] == (18, 200) and ws.X.dtype == np.float32
    assert ws.fs == 20.0
    assert ws.classes.tolist() == ["control", "PD"]
    blocks = {s: n // 5 for s, n in lengths.items()}
    per_subject = {s: len(range(0, b - 200 + 1, 100)) for s, b in blocks.items()}
    assert pd.Series(ws.groups).value_counts().to_dict() == per_subject
    assert ws.meta["start"].tolist()[:3] == [0, 100, 200]
    # windows in file-name order, labels from the names
    assert list(pd.unique(ws.groups)) == sorted(lengths)
    assert (ws.y == np.array([1 if "Pt" in g else 0 for g in ws.groups])).all()
    # block means of the original rows
    from medspt.datasets.gaitpd import CHANNELS, load_gaitpd

    df = load_gaitpd(root / "gaitpdb", subjects=["GaPt02"])
    first = df[CHANNELS].to_numpy(np.float64)[:1000].reshape(200, 5, 18).mean(1).T
    k = np.flatnonzero(ws.groups == "GaPt02")[0]
    np.testing.assert_allclose(ws.X[k], first, rtol=1e-6)
    check_folds(p)
    assert p.metrics == ("accuracy", "subject_accuracy", "balanced_accuracy")


def test_ne1_rules_on_small_records(tmp_path):
    for num in range(1, 11):
        write_subject(tmp_path, num, n=2400, samples=(1, 600, 1200, 1500, 1800))
    p = protocol("ne1", tmp_path)
    ws = p.windows
    assert p.name == "NE-1" and ws.X.shape[1:] == (5, 240)
    assert ws.classes.tolist() == ["Relax", "PhysicalStress", "CognitiveStress", "EmotionalStress"]
    # grid 0, 120, ...; 0 touches the unlabelled sample 0; only windows in one segment
    starts = ws.meta.loc[ws.groups == "Subject1", "start"].tolist()
    segments = [(1, 600), (600, 1200), (1200, 1500), (1500, 1800), (1800, 2400)]
    expected = [
        s
        for s in range(0, 2400 - 240 + 1, 120)
        if any(a <= s and s + 240 <= b for a, b in segments)
    ]
    assert starts == expected
    assert 0 not in starts
    check_folds(p)
    for k, (_, te) in enumerate(p.folds):  # Subject1 -> 0 ... Subject10 -> 9
        assert sorted(set(ws.groups[te]), key=lambda s: int(s[7:])) == [
            f"Subject{k + 1}",
            f"Subject{k + 6}",
        ]
    assert p.metrics == ("accuracy", "balanced_accuracy", "macro_f1")


def test_unknown_protocol_and_missing_root(tmp_path):
    with pytest.raises(InputError, match="unknown protocol"):
        protocol("XYZ-9")
    with pytest.raises(InputError, match="does not exist"):
        protocol("GPD-1", tmp_path / "nowhere")


def test_missing_dataset_gives_clear_error(monkeypatch, tmp_path):
    import medspt.datasets._paths as paths

    monkeypatch.setattr(paths, "find_dataset", lambda folder: None)
    with pytest.raises(InputError, match="'gaitpdb' dataset is needed"):
        protocol("GPD-1")
    with pytest.raises(InputError, match="'noneeg' dataset is needed"):
        protocol("NE-1")


def test_cam1_without_signal_files_names_the_layout(tmp_path):
    (tmp_path / "AB06").mkdir()  # a subject folder, but no <date>/<mode>/<sensor> below it
    with pytest.raises(InputError, match=r"no subject folders \(<subject>/<date>/<mode>"):
        protocol("CAM-1", tmp_path)


def test_cam1_with_a_camargo_loader(monkeypatch, tmp_path):
    """CAM-1 windowing against a stand-in loader (the real one lives elsewhere)."""
    fs, n = 200, 1000  # 5 s per recording
    modes = ["stand", "walk-stand", "walk", "stairascent", "Ramp Descent"]

    def load_camargo(root):
        rows = []
        for s in range(6):
            lab = np.repeat(modes, n // len(modes))  # 1 s of each, transition in the middle
            rows.append(
                pd.DataFrame(
                    {
                        "subject": f"AB{s + 6:02d}",
                        "recording": "trial1",
                        "time": np.arange(n) / fs,
                        "label": lab,
                        "shank_Accel_X": np.sin(np.arange(n) / 10 + s),
                        "knee_sagittal": np.cos(np.arange(n) / 7),
                    }
                )
            )
        return pd.concat(rows, ignore_index=True)

    monkeypatch.setattr(protocols, "load_camargo", load_camargo)
    (tmp_path / "AB06").mkdir()
    p = protocol("CAM-1", tmp_path)
    ws = p.windows
    assert ws.X.shape[1:] == (2, 200)
    # per recording: 1 s windows at 0.25 s steps inside each 1 s segment -> one per kept
    # segment (stand, walk, stairascent, rampdescent); the transition is dropped
    assert len(ws) == 6 * 4
    assert set(ws.labels) == {"stand", "walk", "stairascent", "rampdescent"}
    check_folds(p)


# --------------------------------------------------------------------------- real data


@pytest.fixture(scope="module")
def gpd1():
    root = real_dataset("gaitpdb")
    return protocol("GPD-1", root), root


@pytest.fixture(scope="module")
def ne1():
    root = real_dataset("noneeg")
    return protocol("NE-1", root), root


def test_real_gpd1_counts(gpd1):
    p, _ = gpd1
    ws = p.windows
    assert ws.X.shape == (3481, 18, 200)
    assert ws.classes.tolist() == ["control", "PD"]
    assert np.bincount(ws.y).tolist() == [1465, 2016]
    per = pd.Series(ws.groups).value_counts()
    assert (per.min(), per.max(), per.median()) == (7, 51, 23)
    assert len(per) == 165
    assert sorted(len(np.unique(ws.groups[te])) for _, te in p.folds) == [32, 33, 33, 33, 34]
    assert {"subject", "recording", "start"} <= set(ws.meta.columns)
    assert not np.isnan(ws.X).any()
    check_folds(p)


def test_real_gpd1_is_deterministic(gpd1):
    p, root = gpd1
    same(p, protocol("GPD-1", root))


def test_real_ne1_counts(ne1):
    p, _ = ne1
    ws = p.windows
    assert ws.X.shape == (2743, 5, 240)
    assert ws.classes.tolist() == ["Relax", "PhysicalStress", "CognitiveStress", "EmotionalStress"]
    assert np.bincount(ws.y).tolist() == [1437, 382, 434, 490]
    per = pd.Series(ws.groups).value_counts()
    assert (per.min(), per.max()) == (135, 152)
    assert len(per) == 20
    assert ws.meta.loc[ws.groups == "Subject1", "start"].iloc[0] == 120  # window 0 dropped
    check_folds(p)
    test_subjects = [sorted(set(ws.groups[te]), key=lambda s: int(s[7:])) for _, te in p.folds]
    assert test_subjects[0] == ["Subject1", "Subject6", "Subject11", "Subject16"]
    assert test_subjects[4] == ["Subject5", "Subject10", "Subject15", "Subject20"]


def test_real_ne1_is_deterministic(ne1):
    p, root = ne1
    same(p, protocol("NE-1", root))


def test_cam1_rejects_other_rates(monkeypatch, tmp_path):
    def load_camargo(root):
        n = 500
        return pd.DataFrame(
            {
                "subject": np.repeat(["AB06", "AB07"], n),
                "time": np.tile(np.arange(n) / 100.0, 2),
                "label": "walk",
                "shank_Accel_X": np.zeros(2 * n),
            }
        )

    monkeypatch.setattr(protocols, "load_camargo", load_camargo)
    with pytest.raises(InputError, match="expects signals at 200 Hz"):
        protocol("CAM-1", tmp_path)
