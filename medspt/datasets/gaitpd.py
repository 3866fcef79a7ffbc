"""Gait in Parkinson's Disease (PhysioNet ``gaitpdb`` v1.0.0).

Vertical ground reaction force under both feet while walking, 100 Hz. Each recording is
a plain text file ``<Study><Co|Pt><NN>_<walk>.txt`` (for example ``GaPt03_01.txt``):
tab-separated, CRLF line endings, no header, 19 columns: time (s), the 8 sensors under
the left foot ``L1``..``L8`` and under the right foot ``R1``..``R8`` (N), then the total
force under the left and under the right foot. Study ``Ga``/``Ju``/``Si``; ``Pt`` = PD
patient, ``Co`` = control. ``demographics.txt`` (tab-separated) holds one row per
subject: study, group (1 = PD, 2 = control), gender (1 = male, 2 = female), age, height,
weight, Hoehn & Yahr stage, UPDRS, UPDRS motor part, Timed Up And Go, gait speed per walk.

:func:`load_gaitpd` returns the long DataFrame of :mod:`medspt.data.windowset` (one row per sample)
with the per-subject table in ``df.attrs["subjects"]`` (see :func:`subject_table`);
:func:`load_gaitpd_demographics` returns the cleaned demographics table on its own.

Quirks of the public files that are handled here:

* ``demographics.txt`` has trailing empty columns (rows of 20, 21, 26 or 30 fields),
  blank lines at the end, and ``NaN`` for missing values.
* Heights are in metres for the Ga and Si studies but in centimetres for Ju; the
  ``height_m`` column is in metres for all.
* The control ``Juc010`` (sic) is listed in the demographics but has no recording.
* Hoehn & Yahr is 0 for the Ga controls and missing for the Ju and Si controls; with
  ``label="hoehn_yahr"`` every control gets stage 0.
* The time column drifts slightly against an exact 100 Hz grid (every ~143 samples a step
  is 0.0099 s instead of 0.01 s); the file's times are kept as they are.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from medspt.core.errors import InputError
from medspt.datasets._paths import resolve_root

__all__ = [
    "CHANNELS",
    "FS",
    "KNOWN_WALKS",
    "load_gaitpd",
    "load_gaitpd_demographics",
    "gaitpd_files",
    "subject_table",
]

FS = 100.0
CHANNELS = (
    [f"L{i}" for i in range(1, 9)] + [f"R{i}" for i in range(1, 9)] + ["total_left", "total_right"]
)
N_COLUMNS = 1 + len(CHANNELS)  # time + 18 force columns
KNOWN_WALKS = ("01", "02", "03", "04", "05", "06", "07", "10")
LABELS = ("group", "hoehn_yahr")
DEMOGRAPHICS = "demographics.txt"

_FILE_RE = re.compile(r"^(?P<study>[A-Z][a-z])(?P<group>Co|Pt)(?P<num>\d+)_(?P<walk>\d+)\.txt$")
_NA_TOKENS = {"", "nan", "na", "n/a", "null", "none", "-"}

# demographics.txt column -> (output name, numeric?)
_DEMO_COLUMNS = {
    "ID": "subject",
    "Study": "study",
    "Group": "group",
    "Subjnum": "subjnum",
    "Gender": "gender",
    "Age": "age",
    "Height": "height_m",
    "Weight": "weight_kg",
    "HoehnYahr": "hoehn_yahr",
    "UPDRS": "updrs",
    "UPDRSM": "updrsm",
    "TUAG": "tuag",
}


def _resolve_root(root) -> Path:
    return resolve_root(root, "gaitpdb", lambda name: bool(_FILE_RE.match(name)), "*_01.txt files")


def _norm_walk(walk) -> str:
    if isinstance(walk, (bool, np.bool_)):
        raise InputError(f"walk must be a walk number like '01', got {walk!r}")
    if isinstance(walk, (int, np.integer)):
        text = f"{int(walk):02d}"
    elif isinstance(walk, str) and walk.strip().isdigit():
        text = f"{int(walk.strip()):02d}"
    else:
        raise InputError(f"unknown walk {walk!r}: use a walk number, one of {list(KNOWN_WALKS)!r}")
    if text not in KNOWN_WALKS:
        raise InputError(
            f"unknown walk {walk!r}: gaitpdb has walks {list(KNOWN_WALKS)!r} "
            "(01 = usual walk; 10 = dual-task walk of the Ga study)"
        )
    return text


def gaitpd_files(root=None) -> pd.DataFrame:
    """Recordings found in a gaitpdb folder: one row per file, sorted by file name, with
    columns ``path``, ``file``, ``subject``, ``study``, ``group`` ("PD"/"control") and
    ``walk``. Files that do not follow the naming scheme are ignored."""
    root = _resolve_root(root)
    rows = []
    for p in root.iterdir():
        m = _FILE_RE.match(p.name)
        if m is None or not p.is_file():
            continue
        rows.append(
            {
                "path": p,
                "file": p.name,
                "subject": p.name.split("_")[0],
                "study": m["study"],
                "group": "PD" if m["group"] == "Pt" else "control",
                "walk": f"{int(m['walk']):02d}",
            }
        )
    cols = ["path", "file", "subject", "study", "group", "walk"]
    out = pd.DataFrame(rows, columns=cols)
    return out.sort_values("file", kind="stable").reset_index(drop=True)


# --------------------------------------------------------------------------- demographics


def _parse_number(text: str, where: str) -> float:
    t = text.strip()
    if t.lower() in _NA_TOKENS:
        return np.nan
    try:
        return float(t)
    except ValueError:
        raise InputError(f"{where}: {text!r} is not a number (or NaN)") from None


def load_gaitpd_demographics(root=None) -> pd.DataFrame:
    """The subject table of ``demographics.txt``, cleaned.

    One row per listed subject (166 in the public release), with columns ``subject``,
    ``study``, ``group`` ("PD"/"control"), ``subjnum``, ``gender`` ("M"/"F"), ``age``,
    ``height_m`` (metres; the Ju study's centimetres are converted), ``weight_kg``,
    ``hoehn_yahr``, ``updrs``, ``updrsm``, ``tuag`` (Timed Up And Go, s), ``speed_01`` …
    ``speed_10`` (gait speed of each walk, m/s) and ``has_recording`` (whether any
    recording file of the subject is in the folder; False for ``Juc010``).
    Missing values are NaN. Trailing empty columns and blank lines are ignored.
    """
    root = _resolve_root(root)
    path = root / DEMOGRAPHICS
    if not path.is_file():
        raise InputError(f"{DEMOGRAPHICS} not found in {str(root)!r}")
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise InputError(f"cannot read {path.name}: {e}") from None
    lines = [ln.rstrip("\r\n") for ln in text.splitlines()]
    lines = [ln for ln in lines if ln.replace("\t", "").strip()]
    if not lines:
        raise InputError(f"{path.name} is empty")
    header = [h.strip() for h in lines[0].split("\t")]
    while header and not header[-1]:
        header.pop()
    for need in ("ID", "Group"):
        if need not in header:
            raise InputError(f"{path.name}: header has no {need!r} column (found {header!r})")
    if "" in header:
        raise InputError(f"{path.name}: header has an empty column name: {header!r}")
    records = []
    for lineno, ln in enumerate(lines[1:], start=2):
        fields = ln.split("\t")
        extra = [f for f in fields[len(header) :] if f.strip()]
        if extra:
            raise InputError(
                f"{path.name} line {lineno}: {len(fields)} fields, values beyond the "
                f"{len(header)} named columns: {extra[:3]!r}"
            )
        fields = (fields + [""] * len(header))[: len(header)]
        rec = dict(zip(header, (f.strip() for f in fields)))
        if not rec["ID"]:
            raise InputError(f"{path.name} line {lineno}: empty ID")
        records.append((lineno, rec))

    out = []
    for lineno, rec in records:
        where = f"{path.name} line {lineno} ({rec['ID']})"
        row: dict = {}
        for col, value in rec.items():
            name = _DEMO_COLUMNS.get(col, col.lower())
            if col in ("ID", "Study"):
                row[name] = value
            elif col == "Gender":
                g = _parse_number(value, f"{where}, column Gender")
                row[name] = {1.0: "M", 2.0: "F"}.get(g, None if np.isnan(g) else str(value))
            else:
                row[name] = _parse_number(value, f"{where}, column {col}")
        grp = row["group"]
        if grp not in (1.0, 2.0):
            raise InputError(f"{where}: Group must be 1 (PD) or 2 (control), got {grp!r}")
        row["group"] = "PD" if grp == 1.0 else "control"
        if "height_m" in row and row["height_m"] > 3:  # centimetres (Ju study)
            row["height_m"] = row["height_m"] / 100.0
        out.append(row)
    demo = pd.DataFrame(out)
    dup = demo["subject"][demo["subject"].duplicated()]
    if len(dup):
        raise InputError(f"{path.name}: subject(s) listed twice: {sorted(set(dup))[:5]!r}")
    if "study" not in demo:
        demo["study"] = demo["subject"].str[:2]
    for col in ("gender", "study", "subject"):
        if col in demo:
            demo[col] = demo[col].astype(object)
    have = set(gaitpd_files(root)["subject"])
    demo["has_recording"] = demo["subject"].isin(have)
    return demo


# --------------------------------------------------------------------------- recordings


def _diagnose(path: Path) -> str | None:
    """Slow line-by-line check of a recording; the first problem found, or None."""
    try:
        text = path.read_text(encoding="ascii", errors="replace")
    except OSError as e:
        return f"cannot be read: {e}"
    lineno = 0
    for lineno, ln in enumerate(text.splitlines(), start=1):
        if not ln.strip():
            continue
        fields = ln.rstrip("\r\n").split("\t")
        if len(fields) != N_COLUMNS:
            return f"line {lineno} has {len(fields)} columns instead of {N_COLUMNS}"
        for j, f in enumerate(fields):
            t = f.strip()
            if j == 0 and t.lower() in _NA_TOKENS:
                return f"line {lineno} has no time value (column 1)"
            if t.lower() in _NA_TOKENS:
                continue
            try:
                float(t)
            except ValueError:
                return f"line {lineno}, column {j + 1}: {t[:20]!r} is not a number"
    if lineno == 0:
        return "is empty"
    return None


def read_recording(path: Path) -> np.ndarray:
    """The (n, 19) float64 table of one recording file, or an InputError naming it."""
    try:
        frame = pd.read_csv(
            path,
            sep="\t",
            header=None,
            engine="c",
            dtype=np.float64,
            skip_blank_lines=True,
        )
    except pd.errors.EmptyDataError:
        raise InputError(f"{path.name}: the file is empty") from None
    except (ValueError, pd.errors.ParserError) as e:
        problem = _diagnose(path) or str(e).strip().splitlines()[0]
        raise InputError(f"{path.name}: {problem}") from None
    arr = frame.to_numpy()
    if arr.shape[1] != N_COLUMNS or np.isnan(arr).any():
        problem = _diagnose(path)
        if problem is not None:
            raise InputError(f"{path.name}: {problem}")
        if arr.shape[1] != N_COLUMNS:  # pragma: no cover - _diagnose catches this
            raise InputError(f"{path.name}: {arr.shape[1]} columns instead of {N_COLUMNS}")
    if len(arr) == 0:
        raise InputError(f"{path.name}: the file holds no data rows")
    return arr


def _select_subjects(files: pd.DataFrame, subjects, demo: pd.DataFrame | None) -> pd.DataFrame:
    if subjects is None:
        return files
    if isinstance(subjects, str):
        subjects = [subjects]
    wanted = [str(s) for s in subjects]
    if not wanted:
        raise InputError("subjects is empty; pass None for all subjects")
    have = set(files["subject"])
    unknown = [s for s in wanted if s not in have]
    if unknown:
        listed = set() if demo is None else set(demo["subject"])
        no_rec = [s for s in unknown if s in listed]
        if no_rec and len(no_rec) == len(unknown):
            raise InputError(
                f"subject(s) {no_rec!r} are listed in {DEMOGRAPHICS} but have no recording "
                "for the requested walk(s)"
            )
        raise InputError(
            f"unknown subject(s) {unknown[:10]!r}; subjects look like 'GaPt03' "
            f"(found e.g. {sorted(have)[:3]!r})"
        )
    return files[files["subject"].isin(wanted)]


def plan_walks(root, walks, label: str, subjects):
    """Validate the arguments and pick the files: ``(root, files, labels, demo, walks)``
    with ``files`` sorted by file name and ``labels`` the label of each subject."""
    if label not in LABELS:
        raise InputError(f"label must be one of {list(LABELS)!r}, got {label!r}")
    root = _resolve_root(root)
    if isinstance(walks, (str, int, np.integer)):
        walks = [walks]
    walk_ids = list(dict.fromkeys(_norm_walk(w) for w in walks))
    if not walk_ids:
        raise InputError("walks is empty; e.g. walks=('01',)")

    files = gaitpd_files(root)
    if files.empty:
        raise InputError(
            f"no gaitpdb recordings (files like GaPt03_01.txt) in folder {str(root)!r}"
        )
    present = set(files["walk"])
    absent = [w for w in walk_ids if w not in present]
    if absent:
        raise InputError(
            f"no recording files for walk(s) {absent!r} in {str(root)!r}; "
            f"this copy holds walk(s) {sorted(present)!r}"
        )
    files = files[files["walk"].isin(walk_ids)]

    demo = load_gaitpd_demographics(root) if (root / DEMOGRAPHICS).is_file() else None
    if demo is None and label == "hoehn_yahr":
        raise InputError(f"label='hoehn_yahr' needs {DEMOGRAPHICS} in {str(root)!r}")
    files = _select_subjects(files, subjects, demo).reset_index(drop=True)

    demo_by_id = None if demo is None else demo.set_index("subject")
    if demo_by_id is not None:
        for subj, grp, name in zip(files["subject"], files["group"], files["file"]):
            if subj in demo_by_id.index and demo_by_id.at[subj, "group"] != grp:
                raise InputError(
                    f"{name} is a {grp} recording by its name ({subj[2:4]}), but "
                    f"{DEMOGRAPHICS} lists {subj} in Group "
                    f"{1 if demo_by_id.at[subj, 'group'] == 'PD' else 2} "
                    f"({demo_by_id.at[subj, 'group']})"
                )

    subj_label: dict[str, object] = {}
    for subj, grp in zip(files["subject"], files["group"]):
        if label == "group":
            subj_label[subj] = grp
        elif grp == "control":
            subj_label[subj] = 0.0
        else:
            hy = demo_by_id.at[subj, "hoehn_yahr"] if subj in demo_by_id.index else np.nan
            if not np.isfinite(hy):
                raise InputError(
                    f"label='hoehn_yahr': PD subject {subj} has no Hoehn & Yahr stage "
                    f"in {DEMOGRAPHICS}"
                )
            subj_label[subj] = float(hy)

    return root, files, subj_label, demo_by_id, walk_ids


def load_gaitpd(
    root=None,
    walks: Sequence[str | int] | str | int = ("01",),
    label: str = "group",
    subjects: Iterable[str] | None = None,
    *,
    dtype=np.float32,
) -> pd.DataFrame:
    """Load gaitpdb recordings as a long DataFrame (one row per 10 ms sample).

    Parameters
    ----------
    root : path, optional
        The folder with the ``*.txt`` files and ``demographics.txt`` (or a folder holding
        ``gaitpdb/``). Default: the first local copy found by
        :func:`medspt.datasets._paths.find_dataset`.
    walks : sequence of str or int
        Walk numbers to load, e.g. ``("01",)`` (usual walk), ``("01", "02")`` or ``"10"``
        (dual task, Ga study only). Subjects without a requested walk are skipped; a
        walk that no file in the folder has is an error.
    label : {"group", "hoehn_yahr"}
        ``"group"``: "PD" or "control" (from the file name, cross-checked against the
        demographics ``Group``). ``"hoehn_yahr"``: the Hoehn & Yahr stage as a float
        (controls 0; PD 2, 2.5 or 3).
    subjects : iterable of str, optional
        Subject ids to load, e.g. ``["GaPt03", "JuCo01"]``. Default: all.
    dtype : numpy dtype
        Of the force columns (float32 by default; the files have at most 2 decimals).

    Returns
    -------
    DataFrame
        Columns ``subject``, ``recording`` (the walk, e.g. ``"01"``), ``time`` (s, as in
        the file), ``label``, then ``L1``..``L8``, ``R1``..``R8``, ``total_left``,
        ``total_right`` (N). Rows are ordered by file name, then time.
        ``df.attrs["subjects"]`` holds one row per loaded subject (subject, study, group,
        gender, age, height_m, weight_kg, hoehn_yahr, updrs, updrsm, tuag,
        ``speed_<walk>`` for each loaded walk, ``n_samples``) as ``{column: [values]}``;
        :func:`subject_table` (or ``pd.DataFrame(df.attrs["subjects"])``) turns it into a
        DataFrame. ``df.attrs["fs"]`` is 100.0.

    Raises
    ------
    InputError
        Naming the file and the problem: a row without 19 columns, a non-numeric value,
        an empty folder or no matching files, an unknown walk or subject, a file name
        that disagrees with the demographics group.
    """
    root, files, subj_label, demo_by_id, walk_ids = plan_walks(root, walks, label, subjects)
    blocks, times, lengths = [], [], []
    for path in files["path"]:
        arr = read_recording(path)
        times.append(arr[:, 0].copy())  # a view would keep the whole float64 table
        blocks.append(arr[:, 1:].astype(dtype))
        lengths.append(len(arr))
        del arr
    lengths = np.asarray(lengths)
    # Channels-major buffer, filled file by file and released as it goes: the frame then
    # holds one contiguous block per dtype without further copies.
    values = np.empty((len(CHANNELS), int(lengths.sum())), dtype=dtype)
    stops = np.cumsum(lengths)
    for k in range(len(blocks)):
        values[:, stops[k] - lengths[k] : stops[k]] = blocks[k].T
        blocks[k] = None
    del blocks
    df = pd.DataFrame(values.T, columns=CHANNELS, copy=False)
    subj_col = np.repeat(files["subject"].to_numpy(dtype=object), lengths)
    df.insert(0, "subject", subj_col)
    df.insert(1, "recording", np.repeat(files["walk"].to_numpy(dtype=object), lengths))
    df.insert(2, "time", np.concatenate(times))
    labels = np.array([subj_label[s] for s in files["subject"]], dtype=object)
    lab_col = np.repeat(labels, lengths)
    df.insert(3, "label", lab_col.astype(np.float64) if label == "hoehn_yahr" else lab_col)

    n_per_subject = pd.Series(lengths, index=files["subject"].to_numpy()).groupby(level=0).sum()
    table = _subject_table(files, demo_by_id, walk_ids, n_per_subject)
    df.attrs["subjects"] = table_to_attrs(table)
    df.attrs["fs"] = FS
    df.attrs["dataset"] = "gaitpdb"
    return df


def table_to_attrs(table: pd.DataFrame) -> dict[str, list]:
    """A small table as ``{column: [values]}`` of plain Python scalars (missing = None).

    Kept in ``df.attrs`` instead of a DataFrame: pandas deep-copies ``attrs`` on every
    operation and compares them with ``==`` in ``pd.concat``, which raises for DataFrame
    values ("truth value of a DataFrame is ambiguous") as soon as two pieces of one frame
    are concatenated. Lists of plain scalars compare cleanly.
    """
    out = {}
    for col in table.columns:
        values = []
        for v in table[col].tolist():
            if v is None or (isinstance(v, float) and np.isnan(v)):
                values.append(None)
            elif isinstance(v, np.generic):
                values.append(v.item())
            else:
                values.append(v)
        out[str(col)] = values
    return out


def subject_table(df: pd.DataFrame) -> pd.DataFrame:
    """The per-subject table that a loader stored in ``df.attrs["subjects"]``, as a
    DataFrame (one row per subject; missing values NaN)."""
    if "subjects" not in df.attrs:
        raise InputError(
            'this DataFrame has no df.attrs["subjects"] (it was not made by a medspt '
            "dataset loader, or an operation dropped its attrs)"
        )
    table = pd.DataFrame(df.attrs["subjects"])
    for col in table.columns:
        if table[col].dtype == object:
            conv = pd.to_numeric(table[col], errors="coerce")
            if conv.notna().sum() == table[col].notna().sum():
                table[col] = conv
    return table


def _subject_table(
    files: pd.DataFrame, demo_by_id: pd.DataFrame | None, walk_ids: list[str], n: pd.Series
) -> pd.DataFrame:
    subj = files.drop_duplicates("subject")[["subject", "study", "group"]]
    subj = subj.reset_index(drop=True)
    cols = ["gender", "age", "height_m", "weight_kg", "hoehn_yahr", "updrs", "updrsm", "tuag"]
    cols += [f"speed_{w}" for w in walk_ids]
    if demo_by_id is None:
        for c in cols:
            subj[c] = np.nan
    else:
        d = demo_by_id.reindex(subj["subject"])
        for c in cols:
            subj[c] = d[c].to_numpy() if c in d else np.nan
    subj["n_samples"] = n.reindex(subj["subject"]).to_numpy()
    return subj
