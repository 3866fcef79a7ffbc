"""Camargo et al. (2021) loader, on generated trials in the published layout.

The real signal files are not available to the test suite, so trials are written here
in the dataset's layout (``<subject>/<date>/<mode>/<sensor>/<trial>``) as CSV exports
and as MATLAB tables (written with mat-io, the same package that reads them). The
subject table is also tested on the real ``SubjectInfo.mat`` when a local copy exists.
"""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest
from conftest import real_dataset

from medspt.core.errors import InputError
from medspt.datasets.camargo import (
    SUBJECTS,
    camargo_label,
    check_camargo,
    load_camargo,
    load_camargo_subjects,
    read_camargo_table,
)

matio = pytest.importorskip("matio")

IMU_COLS = [
    f"{seg}_{kind}_{ax}"
    for seg in ("trunk", "thigh", "shank", "foot")
    for kind in ("Accel", "Gyro")
    for ax in "XYZ"
]
GON_COLS = ["hip_sagittal", "hip_frontal", "knee_sagittal", "ankle_sagittal", "ankle_frontal"]
EMG_COLS = [
    "gastrocmed",
    "tibialisanterior",
    "soleus",
    "vastusmedialis",
    "vastuslateralis",
    "rectusfemoris",
    "bicepsfemoris",
    "semitendinosus",
    "gracilis",
    "gluteusmedius",
    "rightexternaloblique",
]
# (start s, stop s, raw label) of a level-ground trial with a stair transition at the end
SEGMENTS = [
    (0.0, 2.0, "idle"),
    (2.0, 3.0, "stand-walk"),
    (3.0, 5.0, "walk"),
    (5.0, 6.0, "turn1"),
    (6.0, 7.0, "walk"),
    (7.0, 8.0, "walk-stairascent"),
    (8.0, 10.0, "stairascent"),
]
TRIAL = "levelground_ccw_normal_01_01"
# a short all-walking trial, for tests about layout and errors
SHORT = dict(seconds=2.0, segments=[(0.0, 2.0, "walk")])


def burst(t: np.ndarray) -> np.ndarray:
    """EMG activation: on during 1.0-1.5 s of every 2 s, off otherwise."""
    return ((t % 2.0) >= 1.0).astype(float) * ((t % 2.0) < 1.5)


def write_table(
    path_no_suffix, df: pd.DataFrame, fmt: str, var: str = "data", cellstr: bool = False
) -> None:
    path_no_suffix.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "csv":
        df.to_csv(path_no_suffix.with_suffix(".csv"), index=False, float_format="%.8g")
    else:
        # text columns as MATLAB cellstr (each cell a char array, as in the real subject
        # table; slow to write) or else as MATLAB strings
        text = [c for c in df if cellstr and not pd.api.types.is_numeric_dtype(df[c])]
        df = df.assign(**{c: [np.array([v]) for v in df[c]] for c in text})
        matio.save_to_mat(str(path_no_suffix.with_suffix(".mat")), {var: df}, version="v7")


def make_trial(
    root,
    subject="AB06",
    date="10_09_18",
    mode="levelground",
    trial=TRIAL,
    fmt="mat",
    seconds=10.0,
    label_fs=1000.0,
    segments=SEGMENTS,
    seed=0,
    cellstr=False,
    gon_offset=0.0,
):
    """Write one trial (imu 200 Hz, gon and emg 1000 Hz, conditions at label_fs)."""
    rng = np.random.default_rng(seed)
    base = root / subject / date / mode
    t200 = np.arange(int(seconds * 200)) / 200
    t1k = np.arange(int(seconds * 1000)) / 1000
    imu = {"Header": t200}
    for j, c in enumerate(IMU_COLS):
        imu[c] = np.sin(2 * np.pi * 1.0 * t200 + j) + 0.01 * j
    tg = t1k + gon_offset  # the goniometer clock may start later than the IMU's
    gon = {"Header": tg}
    for j, c in enumerate(GON_COLS):
        gon[c] = (j + 1) * np.cos(2 * np.pi * 2.0 * tg)
    # 3 Hz joint angle plus a 150 Hz component that must not alias into the 200 Hz data
    gon["knee_sagittal"] = np.sin(2 * np.pi * 3.0 * tg) + 0.5 * np.sin(2 * np.pi * 150.0 * tg)
    emg = {"Header": t1k}
    for c in EMG_COLS:
        emg[c] = 0.05 * rng.standard_normal(len(t1k))
    emg["gastrocmed"] = rng.standard_normal(len(t1k)) * (0.05 + burst(t1k))
    tl = np.arange(int(seconds * label_fs)) / label_fs
    labels = np.empty(len(tl), dtype=object)
    for a, b, name in segments:
        labels[(tl >= a) & (tl < b)] = name
    write_table(base / "imu" / trial, pd.DataFrame(imu), fmt)
    write_table(base / "gon" / trial, pd.DataFrame(gon), fmt)
    write_table(base / "emg" / trial, pd.DataFrame(emg), fmt)
    write_table(
        base / "conditions" / trial,
        pd.DataFrame({"Header": tl, "Label": labels.astype(str)}),
        fmt,
        var="labels",
        cellstr=cellstr,
    )
    return base


def write_subject_info(root, subjects=("AB06", "AB07")) -> None:
    info = pd.DataFrame(
        {
            "Subject": list(subjects),
            "Age": [20.0 + i for i in range(len(subjects))],
            "Gender": ["M" if i % 2 == 0 else "F" for i in range(len(subjects))],
            "Height": [1.80 - 0.05 * i for i in range(len(subjects))],
            "Weight": [74.84 - i for i in range(len(subjects))],
        }
    )
    matio.save_to_mat(str(root / "SubjectInfo.mat"), {"data": info}, version="v7")


def amplitude(y: np.ndarray, t: np.ndarray, f: float) -> float:
    return 2 * float(
        np.hypot(np.mean(y * np.sin(2 * np.pi * f * t)), np.mean(y * np.cos(2 * np.pi * f * t)))
    )


# ----------------------------------------------------------------------------- loading


@pytest.fixture(scope="module")
def csv_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("camargo_csv")
    make_trial(root, fmt="csv")
    return root


@pytest.fixture(scope="module")
def csv_frame(csv_root):
    return load_camargo(csv_root)


def test_long_frame_layout(csv_frame):
    df = csv_frame
    expected = (
        ["subject", "recording", "time", "label"]
        + [f"imu_{c}" for c in IMU_COLS]
        + [f"gon_{c}" for c in GON_COLS]
        + [f"emg_{c}" for c in EMG_COLS]
    )
    assert list(df.columns) == expected
    assert len(df) == 2000  # 10 s at 200 Hz
    assert set(df["subject"]) == {"AB06"}
    assert set(df["recording"]) == {f"levelground/{TRIAL}"}
    assert np.allclose(np.diff(df["time"]), 0.005)
    assert df["time"].iloc[0] == 0.0
    assert df["imu_foot_Gyro_Z"].dtype == np.float32
    assert df.attrs["fs"] == 200.0
    assert df.attrs["sensors"] == ["imu", "gon", "emg"]
    assert not df.drop(columns=["subject", "recording", "label"]).isna().any().any()


def test_imu_at_native_rate_is_untouched(csv_frame):
    t = csv_frame["time"].to_numpy()
    j = IMU_COLS.index("shank_Gyro_Y")
    expected = np.sin(2 * np.pi * t + j) + 0.01 * j
    assert np.allclose(csv_frame["imu_shank_Gyro_Y"], expected, atol=1e-6)


def test_goniometer_resampled_with_anti_aliasing(csv_frame):
    t = csv_frame["time"].to_numpy()
    y = csv_frame["gon_knee_sagittal"].to_numpy(dtype=float)
    inner = slice(40, -40)  # away from the edges of the trial
    # 3 Hz survives with the right amplitude and phase (sample-by-sample comparison)
    assert np.max(np.abs(y[inner] - np.sin(2 * np.pi * 3 * t[inner]))) < 0.01
    assert amplitude(y[inner], t[inner], 3.0) == pytest.approx(1.0, abs=0.01)
    # 150 Hz would alias to 50 Hz at 200 Hz without the anti-aliasing filter
    assert amplitude(y[inner], t[inner], 50.0) < 0.005
    # the other goniometer channels: (j + 1) cos(2 pi 2 t)
    hip = csv_frame["gon_hip_frontal"].to_numpy(dtype=float)
    assert np.max(np.abs(hip[inner] - 2 * np.cos(2 * np.pi * 2 * t[inner]))) < 0.01


def test_naive_decimation_would_alias():
    """Guard for the test above: picking every 5th sample keeps the 150 Hz part."""
    t1k = np.arange(10000) / 1000
    x = np.sin(2 * np.pi * 3 * t1k) + 0.5 * np.sin(2 * np.pi * 150 * t1k)
    assert amplitude(x[::5], t1k[::5], 50.0) > 0.4


def test_sensors_aligned_on_header_time(tmp_path):
    make_trial(tmp_path, gon_offset=0.0123)  # goniometer starts 12.3 ms after the IMU
    df = load_camargo(tmp_path, sensors=["imu", "gon"])
    t = df["time"].to_numpy()
    assert t[0] == pytest.approx(0.015)  # first IMU sample inside every sensor's span
    assert np.allclose(np.diff(t), 0.005)
    j = IMU_COLS.index("foot_Accel_X")
    assert np.allclose(df["imu_foot_Accel_X"], np.sin(2 * np.pi * t + j) + 0.01 * j, atol=1e-6)
    knee = df["gon_knee_sagittal"].to_numpy(dtype=float)
    assert np.max(np.abs(knee[40:-40] - np.sin(2 * np.pi * 3 * t[40:-40]))) < 0.01


def test_emg_envelope_follows_activation(csv_frame):
    t = csv_frame["time"].to_numpy()
    env = csv_frame["emg_gastrocmed"].to_numpy(dtype=float)
    assert np.corrcoef(env, burst(t))[0, 1] > 0.8
    assert env.min() >= 0
    quiet = csv_frame["emg_soleus"].to_numpy(dtype=float)
    assert quiet.mean() < 0.2 * env.mean()


def test_label_mapping(csv_root):
    df = load_camargo(csv_root, sensors=["imu"], keep_raw_label=True)
    at = df.set_index("time")
    expect = {
        1.0: ("stand", "idle"),
        2.5: ("transition", "stand-walk"),
        4.0: ("walk", "walk"),
        5.5: ("walk", "turn1"),
        6.5: ("walk", "walk"),
        7.5: ("transition", "walk-stairascent"),
        9.0: ("stairascent", "stairascent"),
    }
    for time, (label, raw) in expect.items():
        row = at.loc[np.round(time, 3)]
        assert (row["label"], row["raw_label"]) == (label, raw), time
    counts = df["label"].value_counts().to_dict()
    assert counts == {"walk": 800, "stand": 400, "stairascent": 400, "transition": 400}


def test_drop_transitions_splits_recordings(csv_root):
    df = load_camargo(csv_root, sensors=["imu"], drop_transitions=True)
    assert "transition" not in set(df["label"])
    rec = f"levelground/{TRIAL}"
    sizes = df.groupby("recording", sort=False).size()
    assert list(sizes.index) == [f"{rec}#1", f"{rec}#2", f"{rec}#3"]
    assert list(sizes) == [400, 800, 400]
    labels = df.groupby("recording", sort=False)["label"].agg(lambda s: sorted(set(s)))
    assert list(labels) == [["stand"], ["walk"], ["stairascent"]]


@pytest.mark.parametrize(
    ("raw", "label"),
    [
        ("idle", "stand"),
        ("stand", "stand"),
        ("turn2", "walk"),
        ("rampascent", "rampascent"),
        ("rampdescent", "rampdescent"),
        ("stairdescent", "stairdescent"),
        ("walk-rampdescent", "transition"),
        ("stairascent-walk", "transition"),
        (" Walk ", "walk"),
        ("jump", None),
    ],
)
def test_camargo_label(raw, label):
    assert camargo_label(raw) == label


def test_mat_files_match_csv_export(tmp_path, csv_frame):
    make_trial(tmp_path, cellstr=True, label_fs=200.0)  # labels on the IMU clock
    direct = read_camargo_table(
        tmp_path / "AB06/10_09_18/levelground/conditions" / f"{TRIAL}.mat", labels=True
    )
    raw = matio.load_from_mat(
        str(tmp_path / "AB06/10_09_18/levelground/conditions" / f"{TRIAL}.mat")
    )
    assert raw["labels"]["Label"].iloc[0].tolist() == ["idle"]  # a cellstr, as MATLAB writes
    assert list(direct.columns) == ["Header", "Label"]
    assert direct["Label"].iloc[0] == "idle"
    df = load_camargo(tmp_path)
    pd.testing.assert_frame_equal(df, csv_frame)


def test_auto_prefers_mat_and_file_format_chooses(tmp_path):
    make_trial(tmp_path, fmt="mat", seconds=2.0, segments=[(0, 1, "idle"), (1, 2, "walk")])
    # a CSV export of the same trial with other labels: "auto" must read the .mat files
    make_trial(tmp_path, fmt="csv", **SHORT)
    assert set(load_camargo(tmp_path, sensors=["imu"])["label"]) == {"stand", "walk"}
    assert set(load_camargo(tmp_path, sensors=["imu"], file_format="csv")["label"]) == {"walk"}


def test_labels_on_imu_time_base(tmp_path):
    make_trial(tmp_path, label_fs=200.0)
    df = load_camargo(tmp_path, sensors=["gon"])
    assert len(df) == 2000
    assert df["label"].value_counts()["stand"] == 400


def test_subjects_modes_and_subject_table(tmp_path):
    make_trial(tmp_path, subject="AB06")
    make_trial(tmp_path, subject="AB07", date="10_10_18", seed=1)
    make_trial(
        tmp_path,
        subject="AB07",
        date="10_10_18",
        mode="ramp",
        trial="ramp_1_r_01_01",
        segments=[(0, 3, "walk"), (3, 4, "walk-rampascent"), (4, 10, "rampascent")],
        seed=2,
    )
    write_subject_info(tmp_path)
    df = load_camargo(tmp_path, sensors=["imu"])
    assert sorted(df["recording"].unique()) == ["levelground/" + TRIAL, "ramp/ramp_1_r_01_01"]
    assert df.groupby("subject").size().to_dict() == {"AB06": 2000, "AB07": 4000}
    assert df.attrs["subjects"] == {
        "Subject": ["AB06", "AB07"],
        "Age": [20.0, 21.0],
        "Gender": ["M", "F"],
        "Height": [1.80, 1.75],
        "Weight": [74.84, 73.84],
    }
    both = pd.concat([df, df])  # subject table as records keeps concat working
    assert len(both) == 2 * len(df)

    ramp = load_camargo(tmp_path, sensors=["imu"], subjects=["AB07"], modes=["ramp"])
    assert set(ramp["recording"]) == {"ramp/ramp_1_r_01_01"}
    assert ramp["label"].value_counts().to_dict() == {
        "rampascent": 1200,
        "walk": 600,
        "transition": 200,
    }
    assert ramp.attrs["subjects"]["Subject"] == ["AB07"]
    with pytest.raises(InputError, match="AB99"):
        load_camargo(tmp_path, subjects=["AB99"])
    with pytest.raises(InputError, match="missing mode folder.*stair"):
        load_camargo(tmp_path, subjects=["AB06"], modes=["stair"])


def test_several_dates_go_into_recording(tmp_path):
    make_trial(tmp_path, date="10_09_18", **SHORT)
    make_trial(tmp_path, date="11_09_18", **SHORT)
    df = load_camargo(tmp_path, sensors=["imu"])
    assert sorted(df["recording"].unique()) == [
        f"10_09_18/levelground/{TRIAL}",
        f"11_09_18/levelground/{TRIAL}",
    ]


def test_column_selection(csv_root):
    df = load_camargo(csv_root, sensors=["imu", "gon"], columns={"imu": ["shank_Accel_X"]})
    assert [c for c in df.columns if c.startswith("imu_")] == ["imu_shank_Accel_X"]
    assert len([c for c in df.columns if c.startswith("gon_")]) == 5
    with pytest.raises(InputError, match=r"imu.*nope"):
        load_camargo(csv_root, sensors=["imu"], columns={"imu": ["nope"]})


def test_dropped_samples_become_nan(tmp_path):
    base = make_trial(tmp_path, fmt="csv", **SHORT)
    path = base / "gon" / f"{TRIAL}.csv"
    table = pd.read_csv(path)
    table = table[(table["Header"] < 0.8) | (table["Header"] >= 1.0)]  # 0.2 s lost
    table.to_csv(path, index=False)
    df = load_camargo(tmp_path, sensors=["imu", "gon"])
    assert len(df) == 400
    missing = df["gon_knee_sagittal"].isna().to_numpy()
    t = df["time"].to_numpy()
    assert missing.any() and np.all((t[missing] > 0.78) & (t[missing] < 1.02))
    assert not df.loc[(t < 0.7) | (t > 1.1), "gon_knee_sagittal"].isna().any()
    assert not df["imu_foot_Accel_X"].isna().any()


def test_subject_folder_as_root_is_explained(tmp_path):
    make_trial(tmp_path, **SHORT)
    with pytest.raises(InputError, match=r"one subject's folder.*subjects=\['AB06'\]"):
        load_camargo(tmp_path / "AB06")


# ------------------------------------------------------------------------------ errors


def test_missing_sensor_folder(tmp_path):
    base = make_trial(tmp_path, **SHORT)
    shutil.rmtree(base / "emg")
    with pytest.raises(InputError, match=r"missing sensor folder .*levelground[/\\]emg"):
        load_camargo(tmp_path)
    assert len(load_camargo(tmp_path, sensors=["imu", "gon"])) == 400


def test_trial_missing_for_one_sensor(tmp_path):
    base = make_trial(tmp_path, **SHORT)
    (base / "gon" / f"{TRIAL}.mat").unlink()
    with pytest.raises(InputError) as e:
        load_camargo(tmp_path)
    msg = str(e.value)
    assert TRIAL in msg and "gon" in msg and f"{TRIAL}.mat" in msg


def test_table_without_header(tmp_path):
    base = make_trial(tmp_path, fmt="csv", **SHORT)
    path = base / "imu" / f"{TRIAL}.csv"
    pd.read_csv(path).rename(columns={"Header": "Time"}).to_csv(path, index=False)
    with pytest.raises(InputError, match=r"imu.*levelground_ccw_normal_01_01\.csv.*'Header'"):
        load_camargo(tmp_path)


def test_mat_without_header(tmp_path):
    base = make_trial(tmp_path, fmt="mat", **SHORT)
    path = base / "gon" / f"{TRIAL}.mat"
    write_table(path.with_suffix(""), pd.DataFrame({"Time": [0.0, 0.001], "x": [1.0, 2.0]}), "mat")
    with pytest.raises(InputError, match=r"gon.*\.mat.*'Header'"):
        load_camargo(tmp_path)


def test_unreadable_mat(tmp_path):
    base = make_trial(tmp_path, fmt="mat", **SHORT)
    path = base / "emg" / f"{TRIAL}.mat"
    path.write_bytes(b"this is not a MAT-file at all" * 10)
    with pytest.raises(InputError, match=r"cannot read .*emg.*levelground_ccw_normal_01_01\.mat"):
        load_camargo(tmp_path)


def test_unknown_label_names_file_and_fix(tmp_path):
    make_trial(tmp_path, seconds=2.0, segments=[(0, 1, "walk"), (1, 2, "jog")])
    with pytest.raises(InputError, match=r"conditions.*'jog'.*label_map"):
        load_camargo(tmp_path, sensors=["imu"])
    df = load_camargo(tmp_path, sensors=["imu"], label_map={"jog": "walk"})
    assert set(df["label"]) == {"walk"}


def test_bad_arguments(csv_root, tmp_path):
    with pytest.raises(InputError, match="fp"):
        load_camargo(csv_root, sensors=["fp"])
    with pytest.raises(InputError, match="not found"):
        load_camargo(tmp_path / "nowhere")
    with pytest.raises(InputError, match="no subject folders"):
        load_camargo(tmp_path)


# ------------------------------------------------------------------------------- check


def test_check_complete_layout(tmp_path):
    make_trial(tmp_path, **SHORT)
    write_subject_info(tmp_path, ["AB06"])
    assert check_camargo(tmp_path, subjects=["AB06"], modes=["levelground"]) == []
    missing = check_camargo(tmp_path, modes=["levelground"])
    assert missing == [f"missing subject {s}" for s in SUBJECTS if s != "AB06"]


def test_check_reports_problems(tmp_path):
    base = make_trial(tmp_path, **SHORT)
    (base / "gon" / f"{TRIAL}.mat").unlink()
    (base / "imu" / "notes.txt").write_text("x")
    (tmp_path / "stray.bin").write_bytes(b"x")
    problems = check_camargo(tmp_path, subjects=["AB06"])
    assert "missing SubjectInfo.mat (the subject table)" in problems
    assert "unknown file at the top: stray.bin" in problems
    assert "unknown file: AB06/10_09_18/levelground/imu/notes.txt" in problems
    assert "AB06/10_09_18/levelground/gon: no trial files" in problems
    assert any(
        p.startswith("AB06/10_09_18/levelground/gon: no file for trial " + TRIAL) for p in problems
    )
    for mode in ("ramp", "stair", "treadmill"):
        assert f"AB06/10_09_18: missing mode folder {mode}" in problems
    assert check_camargo(tmp_path / "nowhere") == [f"{tmp_path / 'nowhere'} is not a folder"]


# ------------------------------------------------------------------------ real metadata


def test_real_subject_table():
    root = real_dataset("camargo2021")
    info = load_camargo_subjects(root / "SubjectInfo.mat")
    assert list(info.columns[:5]) == ["Subject", "Age", "Gender", "Height", "Weight"]
    assert tuple(info["Subject"]) == SUBJECTS
    assert len(info) == 22
    assert not {"AB22", "AB26", "AB29"} & set(info["Subject"])
    assert set(info["Gender"]) == {"M", "F"}
    ab06 = info.iloc[0]
    assert (ab06["Age"], ab06["Gender"], ab06["Height"], ab06["Weight"]) == (20.0, "M", 1.80, 74.84)
    assert info["Height"].between(1.4, 2.1).all() and info["Weight"].between(40, 120).all()
    # the folder works as well as the file
    pd.testing.assert_frame_equal(load_camargo_subjects(root), info)


def test_real_subject_table_is_attached(tmp_path):
    root = real_dataset("camargo2021")
    make_trial(tmp_path, subject="AB09", **SHORT)
    (tmp_path / "SubjectInfo.mat").symlink_to(root / "SubjectInfo.mat")
    df = load_camargo(tmp_path, sensors=["imu"])
    assert pd.DataFrame(df.attrs["subjects"]).to_dict("records") == [
        {"Subject": "AB09", "Age": 21.0, "Gender": "F", "Height": 1.63, "Weight": 63.50}
    ]
    problems = check_camargo(tmp_path, modes=["levelground"])
    assert "missing SubjectInfo.mat (the subject table)" not in problems
    assert "missing subject AB06" in problems
