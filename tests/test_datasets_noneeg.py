"""Non-EEG loader: small WFDB records written with wfdb (always run) and the real data
(when a local copy exists)."""

import shutil
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import real_dataset

from medspt.core.errors import InputError
from medspt.datasets.noneeg import (
    CLASSES,
    load_noneeg,
    noneeg_subjects,
    read_states,
    subject_table,
)

wfdb = pytest.importorskip("wfdb")

ACC = ["ax", "ay", "az", "temp", "EDA"]

# --------------------------------------------------------------------------- synthetic


def write_subject(folder, num, n=1600, samples=(1, 400, 800, 1000, 1200), notes=None, seed=0):
    """SubjectN_AccTempEDA (5 signals, 8 Hz, format 16, with .atr) and SubjectN_SpO2HR
    (2 signals, 1 Hz, 6 s longer), as in the PhysioNet release."""
    rng = np.random.default_rng(seed + num)
    notes = notes or ["Relax", "PhysicalStress", "Relax", "CognitiveStress", "EmotionalStress"]
    t = np.arange(n) / 8.0
    sig = np.column_stack(
        [
            np.sin(t / 3) + 0.1 * rng.standard_normal(n),
            np.cos(t / 5),
            rng.uniform(-1, 1, n),
            31 + 0.01 * t,
            0.5 + 0.3 * np.abs(np.sin(t / 50)),
        ]
    )
    comments = ["age: 30", "gender: M", "height/cm: 177", "weight/kg: 94"]
    name = f"Subject{num}_AccTempEDA"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wfdb.wrsamp(
            name,
            fs=8,
            units=["NU", "NU", "NU", "degC", "NU"],
            sig_name=ACC,
            p_signal=sig,
            fmt=["16"] * 5,
            comments=comments,
            write_dir=str(folder),
        )
        wfdb.wrann(
            name,
            "atr",
            np.asarray(samples),
            symbol=['"'] * len(samples),
            aux_note=list(notes),
            write_dir=str(folder),
        )
        m = int(np.ceil(n / 8)) + 6
        spo2 = np.column_stack([95 + np.arange(m) % 3, 70 + 0.5 * np.arange(m)])
        wfdb.wrsamp(
            f"Subject{num}_SpO2HR",
            fs=1,
            units=["%", "bpm"],
            sig_name=["SpO2", "hr"],
            p_signal=spo2,
            fmt=["16"] * 2,
            comments=comments,
            write_dir=str(folder),
        )
    return sig, spo2


@pytest.fixture
def nedir(tmp_path):
    d = tmp_path / "noneeg"
    d.mkdir()
    sigs = {num: write_subject(d, num) for num in (1, 2, 10)}
    (d / "subjectinfo.csv").write_text(
        "subject,age,gender,height/cm,weight/kg\n1,30,M,177,94\n2,28,F,160,55\n10,23,M,180,64\n"
    )
    return d, sigs


def test_synthetic_frame(nedir):
    d, sigs = nedir
    assert noneeg_subjects(d) == ["Subject1", "Subject2", "Subject10"]
    df = load_noneeg(d)
    assert list(df.columns) == ["subject", "recording", "time", "label", *ACC]
    assert list(pd.unique(df["subject"])) == ["Subject1", "Subject2", "Subject10"]
    assert set(df["recording"]) == {f"Subject{i}_AccTempEDA" for i in (1, 2, 10)}
    assert all(df[c].dtype == np.float32 for c in ACC)
    s1 = df[df["subject"] == "Subject1"]
    assert len(s1) == 1599  # sample 0 precedes the first annotation: dropped
    assert s1["time"].iloc[0] == 0.125
    np.testing.assert_allclose(np.diff(s1["time"]), 0.125)
    # physical units (format 16 quantizes: compare loosely)
    np.testing.assert_allclose(s1[ACC].to_numpy(), sigs[1][0][1:], atol=2e-3, rtol=1e-3)
    # labels hold until the next annotation, the last to the end
    lab = s1.set_index(np.arange(1, 1600))["label"]
    assert lab[1] == lab[399] == "Relax"
    assert lab[400] == lab[799] == "PhysicalStress"
    assert lab[999] == "Relax" and lab[1000] == "CognitiveStress"
    assert lab[1199] == "CognitiveStress" and lab[1200] == lab[1599] == "EmotionalStress"
    counts = s1["label"].value_counts().to_dict()
    assert counts == {
        "Relax": 599,
        "PhysicalStress": 400,
        "CognitiveStress": 200,
        "EmotionalStress": 400,
    }


def test_synthetic_subject_table(nedir):
    d, _ = nedir
    st = subject_table(load_noneeg(d, subjects=[10, "subject2"]))
    assert st["subject"].tolist() == ["Subject2", "Subject10"]
    assert st["age"].tolist() == [28, 23]
    assert st["gender"].tolist() == ["F", "M"]
    assert st["height_cm"].tolist() == [160, 180]
    assert st["n_samples"].tolist() == [1600, 1600]
    # without subjectinfo.csv the '#' comments of the headers are used
    (d / "subjectinfo.csv").unlink()
    st = subject_table(load_noneeg(d, subjects=["Subject1"]))
    assert st[["age", "height_cm", "weight_kg"]].iloc[0].tolist() == [30, 177, 94]


def test_synthetic_keep_unlabelled(nedir):
    d, _ = nedir
    df = load_noneeg(d, unlabelled="keep")
    assert len(df) == 3 * 1600
    first = df.groupby("subject", sort=False).head(1)
    assert first["label"].isna().all() and (first["time"] == 0).all()
    assert df["label"].isna().sum() == 3


def test_synthetic_spo2hr_resampled(nedir):
    d, sigs = nedir
    df = load_noneeg(d, signals=("AccTempEDA", "SpO2HR"), subjects=[2], unlabelled="keep")
    assert list(df.columns[-2:]) == ["SpO2", "hr"]
    assert len(df) == 1600  # cut to the AccTempEDA length
    spo2 = sigs[2][1]
    whole = df.iloc[::8]  # t = 0, 1, 2, ... s: the 1 Hz samples themselves
    np.testing.assert_allclose(whole["hr"].to_numpy(), spo2[:200, 1], atol=0.01)
    # halfway between two 1 Hz samples: the mean of the two (linear interpolation)
    np.testing.assert_allclose(df["hr"].iloc[4], (spo2[0, 1] + spo2[1, 1]) / 2, atol=0.01)
    assert not df[["SpO2", "hr"]].isna().any().any()


def test_state_strings_case_and_whitespace(tmp_path):
    notes = [" relax", "Physical Stress", "RELAX ", "cognitive_stress", "emotionalstress"]
    write_subject(tmp_path, 3, notes=notes)
    df = load_noneeg(tmp_path)
    assert set(df["label"]) == set(CLASSES)


def test_unknown_state(tmp_path):
    write_subject(tmp_path, 4, notes=["Relax", "Sleeping", "Relax", "Relax", "Relax"])
    with pytest.raises(InputError, match=r"Subject4_AccTempEDA\.atr: unknown state 'Sleeping'"):
        load_noneeg(tmp_path)


def test_annotation_past_end(tmp_path):
    write_subject(tmp_path, 5, samples=(1, 400, 800, 1000, 1700))
    with pytest.raises(
        InputError, match=r"Subject5_AccTempEDA\.atr: annotation at sample 1700 lies outside"
    ):
        load_noneeg(tmp_path)


def test_truncated_dat(nedir):
    d, _ = nedir
    dat = d / "Subject2_AccTempEDA.dat"
    dat.write_bytes(dat.read_bytes()[:5000])
    with pytest.raises(InputError, match=r"Subject2_AccTempEDA\.dat is truncated: 5000 bytes"):
        load_noneeg(d)


def test_header_names_missing_file(nedir):
    d, _ = nedir
    hea = d / "Subject10_AccTempEDA.hea"
    hea.write_text(hea.read_text().replace("Subject10_AccTempEDA.dat", "Subject10_data.dat"))
    with pytest.raises(
        InputError, match=r"Subject10_AccTempEDA\.hea names the signal file 'Subject10_data\.dat'"
    ):
        load_noneeg(d)


def test_missing_atr_and_spo2(nedir):
    d, _ = nedir
    (d / "Subject2_SpO2HR.dat").unlink()
    assert load_noneeg(d)["subject"].nunique() == 3  # SpO2HR not asked for
    with pytest.raises(InputError, match=r"Subject2_SpO2HR\.hea names the signal file"):
        load_noneeg(d, signals=("AccTempEDA", "SpO2HR"))
    (d / "Subject1_AccTempEDA.atr").unlink()
    with pytest.raises(InputError, match=r"Subject1_AccTempEDA\.atr not found"):
        load_noneeg(d)


def test_argument_errors(nedir, tmp_path):
    d, _ = nedir
    with pytest.raises(InputError, match="unknown signals"):
        load_noneeg(d, signals=("ECG",))
    with pytest.raises(InputError, match="must include 'AccTempEDA'"):
        load_noneeg(d, signals=("SpO2HR",))
    with pytest.raises(InputError, match="unlabelled"):
        load_noneeg(d, unlabelled="nan")
    with pytest.raises(InputError, match=r"unknown subject\(s\) \['Subject7'\]"):
        load_noneeg(d, subjects=[7])
    with pytest.raises(InputError, match="like 'Subject3'"):
        load_noneeg(d, subjects=["patient-x"])
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match="no noneeg records"):
        load_noneeg(empty)


def test_no_wfdb_warnings_leak(nedir):
    d, _ = nedir
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_noneeg(d, signals=("AccTempEDA", "SpO2HR"))


# --------------------------------------------------------------------------- real data

SUBJECT1_SAMPLES = [1, 2401, 5026, 7427, 7748, 10661, 13062, 15943]
SUBJECT1_STATES = [
    "Relax",
    "PhysicalStress",
    "Relax",
    "EmotionalStress",
    "CognitiveStress",
    "Relax",
    "EmotionalStress",
    "Relax",
]


@pytest.fixture(scope="module")
def real_root():
    return real_dataset("noneeg")


@pytest.fixture(scope="module")
def real_df(real_root):
    return load_noneeg(real_root)


def test_real_subjects_channels(real_df):
    assert list(pd.unique(real_df["subject"])) == [f"Subject{i}" for i in range(1, 21)]
    assert [c for c in real_df.columns if c not in ("subject", "recording", "time", "label")] == (
        ACC
    )
    assert real_df.attrs["fs"] == 8.0
    dt = real_df.groupby("subject")["time"].diff().dropna()
    np.testing.assert_allclose(dt.unique(), [0.125])
    assert sorted(real_df["label"].unique()) == sorted(CLASSES)
    assert not real_df[ACC].isna().any().any()
    st = subject_table(real_df)
    assert len(st) == 20
    assert st["n_samples"].min() == 18175 and st["n_samples"].max() == 20255
    s1 = st.set_index("subject").loc["Subject1"]
    assert (s1["age"], s1["gender"], s1["height_cm"], s1["weight_kg"]) == (30, "M", 177, 94)
    assert len(real_df) == st["n_samples"].sum() - 20  # sample 0 of each record dropped


def test_real_class_durations(real_df):
    seconds = (real_df["label"].value_counts() / 8.0).to_dict()
    # Exact totals in the files (samples / 8 Hz).
    assert seconds == {
        "Relax": 23995.0,
        "PhysicalStress": 6527.5,
        "CognitiveStress": 7093.5,
        "EmotionalStress": 8488.0,
    }
    # The dataset notes give rounded totals (Relax as a round 24,000 s, i.e. 80 segments
    # at the nominal 300 s); 10 s is < 0.05 % of the total and a third of one window.
    notes = {"Relax": 24000, "PhysicalStress": 6528, "CognitiveStress": 7094}
    notes["EmotionalStress"] = 8488
    for k, v in notes.items():
        assert abs(seconds[k] - v) <= 10, k


def test_real_subject1_annotations(real_root, real_df):
    samples, states = read_states(real_root, "Subject1_AccTempEDA", 18343)
    assert samples.tolist() == SUBJECT1_SAMPLES
    assert states == SUBJECT1_STATES
    s1 = real_df[real_df["subject"] == "Subject1"]
    sample = np.rint(s1["time"].to_numpy() * 8).astype(int)
    change = np.flatnonzero(s1["label"].to_numpy()[1:] != s1["label"].to_numpy()[:-1]) + 1
    assert [int(sample[0]), *sample[change].tolist()] == SUBJECT1_SAMPLES
    assert s1["label"].iloc[np.r_[0, change]].tolist() == SUBJECT1_STATES


def test_real_spo2hr(real_root):
    df = load_noneeg(real_root, signals=("AccTempEDA", "SpO2HR"), subjects=[1, 12])
    assert df.columns[4:].tolist() == ACC + ["SpO2", "hr"]
    assert not df[["SpO2", "hr"]].isna().any().any()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raw = wfdb.rdrecord(str(real_root / "Subject1_SpO2HR")).p_signal
    s1 = df[df["subject"] == "Subject1"]
    on_second = s1[(s1["time"] % 1) == 0]
    k = on_second["time"].astype(int).to_numpy()
    np.testing.assert_allclose(on_second["hr"].to_numpy(), raw[k, 1], rtol=1e-5)
    assert len(s1) == 18343 - 1


def test_real_broken_copies(real_root, tmp_path):
    for ext in ("hea", "dat", "atr"):
        shutil.copy(real_root / f"Subject1_AccTempEDA.{ext}", tmp_path)
    assert len(load_noneeg(tmp_path)) == 18342
    # annotation past the end of the record
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ann = wfdb.rdann(str(real_root / "Subject1_AccTempEDA"), "atr")
        wfdb.wrann(
            "Subject1_AccTempEDA",
            "atr",
            np.r_[ann.sample, 18400],
            symbol=['"'] * 9,
            aux_note=[*ann.aux_note, "Relax"],
            write_dir=str(tmp_path),
        )
    with pytest.raises(InputError, match=r"Subject1_AccTempEDA\.atr: annotation at sample 18400"):
        load_noneeg(tmp_path)
    shutil.copy(real_root / "Subject1_AccTempEDA.atr", tmp_path)
    # truncated signal file
    dat = tmp_path / "Subject1_AccTempEDA.dat"
    dat.write_bytes(dat.read_bytes()[:-1000])
    with pytest.raises(InputError, match=r"Subject1_AccTempEDA\.dat is truncated"):
        load_noneeg(tmp_path)
    # header naming a missing file
    dat.unlink()
    with pytest.raises(InputError, match=r"names the signal file 'Subject1_AccTempEDA\.dat'"):
        load_noneeg(tmp_path)
