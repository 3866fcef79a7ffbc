"""gaitpdb loader: format-faithful synthetic files (always run) and the real data (when
a local copy exists)."""

import shutil

import numpy as np
import pandas as pd
import pytest
from conftest import FAST, real_dataset

from medspt.core.errors import InputError
from medspt.datasets.gaitpd import (
    CHANNELS,
    load_gaitpd,
    load_gaitpd_demographics,
    subject_table,
)

# --------------------------------------------------------------------------- synthetic

DEMO_HEADER = (
    "ID\tStudy\tGroup\tSubjnum\tGender\tAge\tHeight\tWeight\tHoehnYahr\tUPDRS\tUPDRSM\tTUAG"
    "\tSpeed_01\tSpeed_02\tSpeed_03\tSpeed_04\tSpeed_05\tSpeed_06\tSpeed_07\tSpeed_10"
)


def write_recording(path, n_rows, seed=0, decimals=2):
    """A gaitpdb-style file: 19 tab-separated columns, CRLF, no header, 100 Hz."""
    rng = np.random.default_rng(seed)
    t = np.arange(n_rows) / 100.0
    forces = np.round(rng.uniform(0, 300, size=(n_rows, 18)), decimals)
    lines = ["\t".join([f"{ti:.4f}"] + [f"{v:g}" for v in row]) for ti, row in zip(t, forces)]
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode("ascii"))
    return t, forces


def demo_row(sid, group, gender=1, height="1.70", hy="NaN", n_trailing=6):
    study = sid[:2]
    fields = [sid, study, str(group), sid[-2:], str(gender), "66", height, "70", hy]
    fields += ["20", "10", "NaN", "1.1", "NaN", "NaN", "NaN", "NaN", "NaN", "NaN", "NaN"]
    return "\t".join(fields + [""] * n_trailing)


def write_demographics(folder, rows):
    text = "\r\n".join([DEMO_HEADER + "\t" * 6] + rows + ["\t" * 29] * 3) + "\r\n"
    (folder / "demographics.txt").write_bytes(text.encode("ascii"))


@pytest.fixture
def gaitdir(tmp_path):
    """4 subjects (2 PD, 2 control) of different lengths, plus a listed subject without
    a recording, trailing empty columns, blank lines and NaN strings in demographics."""
    d = tmp_path / "gaitpdb"
    d.mkdir()
    lengths = {"GaPt03": 1200, "JuPt01": 1700, "GaCo01": 1200, "SiCo02": 950}
    truth = {}
    for i, (sid, n) in enumerate(lengths.items()):
        truth[sid] = write_recording(d / f"{sid}_01.txt", n, seed=i)
    write_demographics(
        d,
        [
            demo_row("GaPt03", 1, gender=2, height="1.45", hy="3.0"),
            demo_row("JuPt01", 1, height="183", hy="2", n_trailing=0),
            demo_row("GaCo01", 2, hy="0.0", n_trailing=10),
            demo_row("Juc010", 2, height="167"),
            demo_row("SiCo02", 2, hy="NaN"),
        ],
    )
    (d / "format.txt").write_text("not a recording\n")
    return d, lengths, truth


def test_synthetic_long_frame(gaitdir):
    d, lengths, truth = gaitdir
    df = load_gaitpd(d)
    assert list(df.columns) == ["subject", "recording", "time", "label", *CHANNELS]
    assert len(CHANNELS) == 18
    # sorted by file name, then time
    assert list(pd.unique(df["subject"])) == ["GaCo01", "GaPt03", "JuPt01", "SiCo02"]
    assert df.groupby("subject").size().to_dict() == lengths
    assert set(df["recording"]) == {"01"}
    assert all(df[c].dtype == np.float32 for c in CHANNELS)
    assert df["time"].dtype == np.float64
    labels = df.groupby("subject")["label"].first().to_dict()
    assert labels == {"GaCo01": "control", "GaPt03": "PD", "JuPt01": "PD", "SiCo02": "control"}
    sub = df[df["subject"] == "JuPt01"]
    t, forces = truth["JuPt01"]
    np.testing.assert_allclose(sub["time"].to_numpy(), t, atol=1e-9)
    np.testing.assert_allclose(sub[CHANNELS].to_numpy(), forces, rtol=1e-6, atol=1e-4)


def test_synthetic_subject_table_and_demographics(gaitdir):
    d, lengths, _ = gaitdir
    df = load_gaitpd(d)
    st = subject_table(df).set_index("subject")
    assert len(st) == 4
    assert st.loc["GaPt03", "gender"] == "F" and st.loc["GaCo01", "gender"] == "M"
    assert st.loc["GaPt03", "study"] == "Ga" and st.loc["SiCo02", "study"] == "Si"
    assert st.loc["JuPt01", "height_m"] == pytest.approx(1.83)  # centimetres converted
    assert st.loc["GaPt03", "height_m"] == pytest.approx(1.45)
    assert st.loc["GaPt03", "hoehn_yahr"] == 3.0
    assert np.isnan(st.loc["GaPt03", "tuag"])
    assert st.loc["GaCo01", "speed_01"] == pytest.approx(1.1)
    assert st["n_samples"].to_dict() == lengths
    demo = load_gaitpd_demographics(d)
    assert len(demo) == 5
    assert demo.set_index("subject")["has_recording"].to_dict() == {
        "GaPt03": True,
        "JuPt01": True,
        "GaCo01": True,
        "Juc010": False,
        "SiCo02": True,
    }


def test_attrs_survive_concat_of_pieces(gaitdir):
    d, _, _ = gaitdir
    df = load_gaitpd(d)
    a, b = df[df["label"] == "PD"], df[df["label"] == "control"]
    both = pd.concat([a, b])  # raises when attrs hold DataFrames
    assert len(both) == len(df)
    assert len(subject_table(both)) == 4


def test_hoehn_yahr_label(gaitdir):
    d, _, _ = gaitdir
    df = load_gaitpd(d, label="hoehn_yahr")
    hy = df.groupby("subject")["label"].first().to_dict()
    assert hy == {"GaCo01": 0.0, "GaPt03": 3.0, "JuPt01": 2.0, "SiCo02": 0.0}
    assert df["label"].dtype == np.float64


def test_subject_selection(gaitdir):
    d, _, _ = gaitdir
    df = load_gaitpd(d, subjects=["SiCo02", "GaPt03"])
    assert list(pd.unique(df["subject"])) == ["GaPt03", "SiCo02"]
    assert len(subject_table(df)) == 2
    with pytest.raises(InputError, match="no recording"):
        load_gaitpd(d, subjects=["Juc010"])
    with pytest.raises(InputError, match="unknown subject"):
        load_gaitpd(d, subjects=["GaPt99"])


def test_walks(gaitdir):
    d, _, _ = gaitdir
    assert len(load_gaitpd(d, walks=1)) == len(load_gaitpd(d, walks=("01",)))
    with pytest.raises(InputError, match="unknown walk"):
        load_gaitpd(d, walks=("08",))
    with pytest.raises(InputError, match="unknown walk"):
        load_gaitpd(d, walks=("usual",))
    with pytest.raises(InputError, match=r"walk\(s\) \['02'\]"):
        load_gaitpd(d, walks=("01", "02"))
    with pytest.raises(InputError, match="label must be"):
        load_gaitpd(d, label="severity")


def test_second_walk_and_missing_walk_per_subject(gaitdir):
    d, _, _ = gaitdir
    write_recording(d / "GaPt03_02.txt", 700, seed=9)
    df = load_gaitpd(d, walks=("01", "02"))
    keys = df.groupby(["subject", "recording"]).size()
    assert keys[("GaPt03", "02")] == 700 and keys[("GaPt03", "01")] == 1200
    assert ("GaCo01", "02") not in keys.index  # subjects without that walk just skip it
    assert "speed_02" in subject_table(df).columns


def _replace_line(path, lineno, new):
    lines = path.read_bytes().decode().split("\r\n")
    lines[lineno - 1] = new
    path.write_bytes("\r\n".join(lines).encode())


def test_row_with_18_columns_names_file_and_line(gaitdir):
    d, _, _ = gaitdir
    f = d / "JuPt01_01.txt"
    line = f.read_bytes().decode().split("\r\n")[56]
    _replace_line(f, 57, "\t".join(line.split("\t")[:18]))
    with pytest.raises(InputError, match=r"JuPt01_01\.txt: line 57 has 18 columns instead of 19"):
        load_gaitpd(d)


def test_first_row_short_and_row_too_long(gaitdir):
    d, _, _ = gaitdir
    f = d / "GaCo01_01.txt"
    first = f.read_bytes().decode().split("\r\n")[0]
    _replace_line(f, 1, "\t".join(first.split("\t")[:18]))
    with pytest.raises(InputError, match=r"GaCo01_01\.txt: line 1 has 18 columns"):
        load_gaitpd(d)
    _replace_line(f, 1, first)
    _replace_line(f, 300, first + "\t1.0")
    with pytest.raises(InputError, match=r"GaCo01_01\.txt: line 300 has 20 columns"):
        load_gaitpd(d)


def test_non_numeric_value_names_file(gaitdir):
    d, _, _ = gaitdir
    f = d / "SiCo02_01.txt"
    fields = f.read_bytes().decode().split("\r\n")[9].split("\t")
    fields[4] = "12,5"
    _replace_line(f, 10, "\t".join(fields))
    with pytest.raises(InputError, match=r"SiCo02_01\.txt: line 10, column 5: '12,5'"):
        load_gaitpd(d)


def test_empty_recording_file(gaitdir):
    d, _, _ = gaitdir
    (d / "GaCo01_01.txt").write_bytes(b"")
    with pytest.raises(InputError, match=r"GaCo01_01\.txt.*empty"):
        load_gaitpd(d)


def test_empty_folder_and_no_matching_files(tmp_path):
    with pytest.raises(InputError, match="no gaitpdb recordings"):
        load_gaitpd(tmp_path)
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "GaPt03.txt").write_text("1\t2")
    with pytest.raises(InputError, match="no gaitpdb recordings"):
        load_gaitpd(tmp_path)
    with pytest.raises(InputError, match="does not exist"):
        load_gaitpd(tmp_path / "nowhere")


def test_group_disagreement_with_demographics(gaitdir):
    d, _, _ = gaitdir
    write_demographics(d, [demo_row("GaPt03", 2), demo_row("GaCo01", 2)])
    with pytest.raises(InputError, match=r"GaPt03_01\.txt is a PD recording.*Group 2"):
        load_gaitpd(d)


def test_bad_demographics_value(gaitdir):
    d, _, _ = gaitdir
    write_demographics(d, [demo_row("GaPt03", 1).replace("\t66\t", "\tsixty\t")])
    with pytest.raises(InputError, match=r"demographics\.txt line 2 \(GaPt03\), column Age"):
        load_gaitpd(d)


def test_without_demographics(gaitdir):
    d, lengths, _ = gaitdir
    (d / "demographics.txt").unlink()
    df = load_gaitpd(d)
    assert df["subject"].nunique() == 4
    assert subject_table(df)["age"].isna().all()
    with pytest.raises(InputError, match="needs demographics"):
        load_gaitpd(d, label="hoehn_yahr")


def test_synthetic_frame_windows(gaitdir):
    from medspt.data.windowset import make_windows

    d, lengths, _ = gaitdir
    ws = make_windows(load_gaitpd(d), window=200, stride=100)
    assert ws.fs == pytest.approx(100.0)
    assert ws.channels == CHANNELS
    expected = sum((n - 200) // 100 + 1 for n in lengths.values())
    assert len(ws) == expected


# --------------------------------------------------------------------------- real data


@pytest.fixture(scope="module")
def real_root():
    return real_dataset("gaitpdb")


@pytest.fixture(scope="module")
def real_df(real_root):
    return load_gaitpd(real_root)


def test_real_subjects_and_groups(real_df):
    st = subject_table(real_df)
    assert len(st) == 165 == real_df["subject"].nunique()
    groups = real_df.groupby("subject")["label"].first().value_counts().to_dict()
    assert groups == {"PD": 93, "control": 72}
    assert st["group"].value_counts().to_dict() == {"PD": 93, "control": 72}
    assert st.groupby(["study", "group"]).size().to_dict() == {
        ("Ga", "PD"): 29,
        ("Ga", "control"): 18,
        ("Ju", "PD"): 29,
        ("Ju", "control"): 25,
        ("Si", "PD"): 35,
        ("Si", "control"): 29,
    }
    # every subject found in demographics: no missing age
    assert st["age"].notna().all()
    assert st["height_m"].dropna().between(1.4, 2.0).all()  # Ju centimetres converted
    assert st["height_m"].isna().sum() == 3  # GaPt15, GaPt19, GaPt21 have no height


def test_real_channels_and_sampling(real_df):
    assert [c for c in real_df.columns if c not in ("subject", "recording", "time", "label")] == (
        CHANNELS
    )
    assert len(CHANNELS) == 18
    assert not real_df[CHANNELS].isna().any().any()
    first = real_df.groupby("subject")["time"].first()
    assert (first == 0).all()
    dt = real_df.groupby("subject")["time"].diff().dropna()
    assert dt.median() == pytest.approx(0.01, abs=1e-9)
    assert dt.between(0.0099 - 1e-6, 0.01 + 1e-6).all()  # the known slight drift


def test_real_lengths(real_df):
    n = subject_table(real_df).set_index("subject")["n_samples"]
    study = n.index.str[:2]
    assert (n[study != "Ju"] == 12119).all()
    assert n[study == "Ju"].min() == 4034
    assert n[study == "Ju"].max() == 26366
    assert len(real_df) == n.sum() == 1_848_227


def test_real_demographics(real_root):
    demo = load_gaitpd_demographics(real_root)
    assert len(demo) == 166
    assert demo["group"].value_counts().to_dict() == {"PD": 93, "control": 73}
    assert demo.loc[~demo["has_recording"], "subject"].tolist() == ["Juc010"]
    hy = demo.set_index("subject")["hoehn_yahr"]
    assert set(hy[demo.set_index("subject")["group"] == "PD"]) == {2.0, 2.5, 3.0}
    assert demo.set_index("subject").loc["GaPt03", "tuag"] == pytest.approx(36.34)


def test_real_hoehn_yahr(real_root):
    subj = ["GaPt03", "JuPt01", "SiCo01", "GaCo01"]
    df = load_gaitpd(real_root, label="hoehn_yahr", subjects=subj)
    assert df.groupby("subject")["label"].first().to_dict() == {
        "GaCo01": 0.0,
        "GaPt03": 3.0,
        "JuPt01": 2.0,
        "SiCo01": 0.0,
    }


def test_real_copy_with_broken_row(real_root, tmp_path):
    for name in ("GaPt03_01.txt", "GaCo01_01.txt", "demographics.txt"):
        shutil.copy(real_root / name, tmp_path / name)
    assert load_gaitpd(tmp_path)["subject"].nunique() == 2
    f = tmp_path / "GaPt03_01.txt"
    line = f.read_bytes().decode().split("\r\n")[4999]
    _replace_line(f, 5000, "\t".join(line.split("\t")[:18]))
    with pytest.raises(InputError, match=r"GaPt03_01\.txt: line 5000 has 18 columns"):
        load_gaitpd(tmp_path)


def test_real_fit_spt_end_to_end(real_root):
    import medspt

    pd_ids, co_ids = ["GaPt03", "GaPt04", "SiPt02", "JuPt01"], ["GaCo01", "GaCo02", "SiCo01"]
    co_ids.append("JuCo01")
    df = load_gaitpd(real_root, subjects=pd_ids + co_ids)
    clf = medspt.fit_spt(df, window=200, random_state=0, **FAST)
    assert set(clf.classes_) == {"PD", "control"}
    assert clf.frame_spec_.channels == tuple(CHANNELS)
    assert clf.frame_spec_.fs == pytest.approx(100.0)
    pred = clf.predict(df)
    rec = pred.recordings
    assert len(rec) == 8
    assert set(rec["subject"]) == set(pd_ids + co_ids)
    assert set(rec["predicted"]) <= {"PD", "control"}
    assert rec.set_index("subject")["label"].to_dict() == {
        **{s: "PD" for s in pd_ids},
        **{s: "control" for s in co_ids},
    }
    n = subject_table(df).set_index("subject")["n_samples"]
    assert rec.set_index("subject")["n_windows"].to_dict() == (n // 200).to_dict()
    proba = pred.windows[["proba_PD", "proba_control"]].to_numpy()
    np.testing.assert_allclose(proba.sum(1), 1.0, rtol=1e-5)
