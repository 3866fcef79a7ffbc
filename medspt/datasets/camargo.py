"""Camargo et al. (2021) lower-limb biomechanics dataset (Georgia Tech EPIC Lab).

22 able-bodied adults walking on level ground, ramps, stairs and a treadmill, with IMUs,
goniometers, EMG and locomotion-mode labels. Cite: Camargo J, Ramanathan A, Flanagan W,
Young A. A comprehensive, open-source dataset of lower limb biomechanics in multiple
conditions of stairs, ramps, and level-ground ambulation and transitions. J Biomech 119:
110320 (2021), doi:10.1016/j.jbiomech.2021.110320. The data are hosted by the lab and on
Mendeley Data; this module reads a local copy and never downloads anything.

Layout of a local copy (the published one, or the same tree exported to CSV)::

    <root>/SubjectInfo.mat                       subject table (Age, Gender, Height, Weight)
    <root>/<subject>/<date>/<mode>/<sensor>/<trial>.mat   (or .csv)
    e.g. AB06/10_09_18/levelground/imu/levelground_ccw_normal_01_01.mat

Each ``.mat`` file holds one MATLAB ``table`` (read with the ``mat-io`` package); a CSV
export holds the same table with a header row. Every table has a ``Header`` column, the
time in seconds, used to align sensors. Sensors read here (rates from the dataset's
readme): ``imu`` 200 Hz (trunk, thigh, shank, foot; ``foot_Accel_X`` ... ``foot_Gyro_Z``),
``gon`` 1000 Hz (``hip_sagittal``, ``hip_frontal``, ``knee_sagittal``, ``ankle_sagittal``,
``ankle_frontal``), ``emg`` 1000 Hz (11 muscles, already band-passed 20–400 Hz by the
authors) and ``conditions`` (the ``Label`` column holds the locomotion mode; the readme
says 1000 Hz, labels are looked up by time so the rate does not matter).

Locomotion-mode classes (``label`` column):

============== ==========================================================
class          raw labels in ``conditions``
============== ==========================================================
stand          ``idle``, ``stand``
walk           ``walk``, ``turn1``, ``turn2`` (turning is level walking)
rampascent     ``rampascent``
rampdescent    ``rampdescent``
stairascent    ``stairascent``
stairdescent   ``stairdescent``
transition     any label with a ``-`` (``stand-walk``, ``walk-rampascent``, ...)
============== ==========================================================
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from medspt.core.errors import InputError
from medspt.core.warn import warn
from medspt.data.preprocess import emg_envelope, resample_array

__all__ = [
    "load_camargo",
    "load_camargo_subjects",
    "read_camargo_table",
    "check_camargo",
    "camargo_label",
    "CLASSES",
    "LABEL_MAP",
    "SENSOR_RATES",
    "SUBJECTS",
    "MODES",
]

#: Nominal sampling rates from the dataset's readme (Hz). The loader measures the actual
#: rate of every file from its ``Header`` column.
SENSOR_RATES: dict[str, float] = {
    "imu": 200.0,
    "gon": 1000.0,
    "emg": 1000.0,
    "conditions": 1000.0,
}
SIGNAL_SENSORS = ("imu", "gon", "emg")
#: Locomotion modes with labels (``static`` holds only a standing marker trial).
MODES = ("levelground", "ramp", "stair", "treadmill")
ALL_MODES = MODES + ("static",)
KNOWN_SENSORS = (
    "conditions",
    "emg",
    "fp",
    "gcLeft",
    "gcRight",
    "gon",
    "id",
    "ik",
    "ik_offset",
    "imu",
    "jp",
    "markers",
)
#: The 22 subjects of the published dataset (there is no AB22, AB26 or AB29).
SUBJECTS = tuple(f"AB{i:02d}" for i in range(6, 31) if i not in (22, 26, 29))
CLASSES = ("stand", "walk", "rampascent", "rampdescent", "stairascent", "stairdescent")
TRANSITION = "transition"
#: Raw ``conditions`` label -> class. Labels containing ``-`` are transitions.
LABEL_MAP: dict[str, str] = {
    "idle": "stand",
    "stand": "stand",
    "walk": "walk",
    "turn1": "walk",
    "turn2": "walk",
    "rampascent": "rampascent",
    "rampdescent": "rampdescent",
    "stairascent": "stairascent",
    "stairdescent": "stairdescent",
}

_TRIAL_SUFFIXES = (".mat", ".csv")
_DATE_RE = re.compile(r"^\d{1,2}_\d{1,2}_\d{2,4}$")
_SUBJECT_RE = re.compile(r"^AB\d+$")
_ROOT_EXTRAS = {"SubjectInfo.mat", "SubjectInfo.csv", "README.txt", "scripts"}


# ------------------------------------------------------------------------ file reading


def _import_matio():
    try:
        import matio
    except ImportError:  # pragma: no cover - depends on the environment
        raise InputError(
            "reading the dataset's .mat files needs the package mat-io "
            "(pip install mat-io); or use a CSV export of the same layout"
        ) from None
    return matio


def _frames_in(obj, depth: int = 0):
    """DataFrames in a loaded MAT-file dict (looking one level into structs)."""
    if isinstance(obj, pd.DataFrame):
        yield None, obj
        return
    if isinstance(obj, Mapping) and depth < 2:
        for k, v in obj.items():
            if isinstance(v, pd.DataFrame):
                yield k, v
            elif isinstance(v, Mapping):
                for _, f in _frames_in(v, depth + 1):
                    yield k, f


def _cell_str(v) -> str:
    """A MATLAB char/cellstr entry as a plain string (mat-io gives e.g. array(['AB06']))."""
    if isinstance(v, np.ndarray):
        if v.size == 0:
            return ""
        v = v.ravel()[0]
        return _cell_str(v)
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace").strip()
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    return str(v).strip()


def _read_mat(path: Path, want_label: bool) -> pd.DataFrame:
    matio = _import_matio()
    try:
        contents = matio.load_from_mat(str(path))
    except Exception as e:  # mat-io raises many types on bad files
        raise InputError(f"cannot read {path} as a MATLAB file ({type(e).__name__}: {e})") from None
    frames = list(_frames_in(contents))
    if not frames:
        names = list(contents) if isinstance(contents, Mapping) else []
        raise InputError(f"{path} holds no MATLAB table (variables: {names!r})")
    preferred = "labels" if want_label else "data"
    frames.sort(key=lambda kv: kv[0] != preferred)
    if want_label:
        for _, f in frames:
            if "Label" in f.columns:
                return f
        cols = [list(map(str, f.columns)) for _, f in frames]
        raise InputError(f"{path}: no table with a 'Label' column (tables have columns {cols!r})")
    for _, f in frames:
        if "Header" in f.columns:
            return f
    return frames[0][1]


def _read_csv(path: Path) -> pd.DataFrame:
    try:
        return pd.read_csv(path)
    except Exception as e:
        raise InputError(f"cannot read {path} as CSV ({type(e).__name__}: {e})") from None


def read_camargo_table(path: str | Path, labels: bool = False) -> pd.DataFrame:
    """Read one trial file (``.mat`` table or ``.csv`` export) of the dataset.

    Parameters
    ----------
    path : str or Path
        A ``<trial>.mat`` or ``<trial>.csv`` file.
    labels : bool
        True for a ``conditions`` file: the table with the ``Label`` column is returned
        and ``Label`` is made of plain strings.

    Returns
    -------
    DataFrame
        The table, with a float ``Header`` column (time in seconds).

    Raises
    ------
    InputError
        Naming the file, when it cannot be read, holds no table, or has no ``Header``
        (or, for labels, no ``Label``) column.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"file not found: {path}")
    suffix = path.suffix.lower()
    if suffix == ".mat":
        df = _read_mat(path, labels)
    elif suffix == ".csv":
        df = _read_csv(path)
    else:
        raise InputError(f"{path}: expected a .mat or .csv file")
    if "Header" not in df.columns:
        raise InputError(
            f"{path}: the table has no 'Header' (time) column; columns: "
            f"{list(map(str, df.columns))[:20]!r}"
        )
    df = df.copy()
    try:
        header = df["Header"]
        if header.dtype == object:  # cells of a MATLAB cell array come as small arrays
            header = header.map(_unwrap_number)
        df["Header"] = pd.to_numeric(header)
    except (TypeError, ValueError):
        raise InputError(f"{path}: the 'Header' column is not numeric time in seconds") from None
    if df["Header"].isna().any():
        raise InputError(
            f"{path}: the 'Header' (time) column has {int(df['Header'].isna().sum())} "
            "missing values"
        )
    if labels:
        if "Label" not in df.columns:
            raise InputError(
                f"{path}: the table has no 'Label' column; columns: {list(map(str, df.columns))!r}"
            )
        df["Label"] = [_cell_str(v) for v in df["Label"].to_numpy()]
    return df


def _unwrap_number(v):
    if isinstance(v, np.ndarray):
        return v.ravel()[0] if v.size else np.nan
    return v


# ---------------------------------------------------------------------------- subjects


def load_camargo_subjects(path: str | Path) -> pd.DataFrame:
    """Read the dataset's subject table ``SubjectInfo.mat``.

    Parameters
    ----------
    path : str or Path
        The file, or the dataset folder holding it.

    Returns
    -------
    DataFrame
        One row per subject: ``Subject`` (str, e.g. ``"AB06"``), ``Age`` (years),
        ``Gender`` (``"M"``/``"F"``), ``Height`` (m), ``Weight`` (kg), plus any other
        column the table has.
    """
    path = Path(path)
    if path.is_dir():
        path = path / "SubjectInfo.mat"
    if not path.is_file():
        raise InputError(f"subject table not found: {path}")
    if path.suffix.lower() == ".csv":
        df = _read_csv(path)
    else:
        matio = _import_matio()
        try:
            contents = matio.load_from_mat(str(path))
        except Exception as e:
            raise InputError(
                f"cannot read {path} as a MATLAB file ({type(e).__name__}: {e})"
            ) from None
        frames = [f for _, f in _frames_in(contents) if "Subject" in f.columns]
        if not frames:
            raise InputError(f"{path}: no table with a 'Subject' column")
        df = frames[0]
    if "Subject" not in df.columns:
        raise InputError(f"{path}: no 'Subject' column; columns: {list(df.columns)!r}")
    df = df.copy()
    for c in df.columns:
        if df[c].dtype == object:
            vals = [_cell_str(v) for v in df[c].to_numpy()]
            num = pd.to_numeric(pd.Series(vals), errors="coerce")
            df[c] = num.to_numpy() if num.notna().all() and c != "Subject" else vals
    return df.reset_index(drop=True)


# ------------------------------------------------------------------------------ labels


def camargo_label(raw: str, label_map: Mapping[str, str] | None = None) -> str | None:
    """Class of one raw ``conditions`` label (None when unknown).

    ``label_map`` entries take precedence over :data:`LABEL_MAP`; otherwise a label with
    a ``-`` is a ``"transition"``. Matching ignores case and surrounding spaces.
    """
    key = str(raw).strip()
    if label_map:
        for k, v in label_map.items():
            if str(k).strip().lower() == key.lower():
                return v
    low = key.lower()
    if low in LABEL_MAP:
        return LABEL_MAP[low]
    if "-" in low:
        return TRANSITION
    return None


def _map_labels(raw: np.ndarray, label_map, path: Path) -> np.ndarray:
    uniq = pd.unique(raw)
    mapping = {u: camargo_label(u, label_map) for u in uniq}
    unknown = [u for u, v in mapping.items() if v is None]
    if unknown:
        raise InputError(
            f"{path}: unknown locomotion label(s) {unknown!r}; known: "
            f"{sorted(LABEL_MAP)!r} and transitions 'a-b'. Map them with "
            f"label_map={{{unknown[0]!r}: 'walk'}} (or 'transition' to drop them)"
        )
    return np.array([mapping[u] for u in raw], dtype=object)


# -------------------------------------------------------------------------- alignment


def _measure_fs(t: np.ndarray, path: Path) -> float:
    if len(t) < 2:
        raise InputError(f"{path}: fewer than 2 samples")
    dt = float(np.median(np.diff(t)))
    if not np.isfinite(dt) or dt <= 0:
        raise InputError(f"{path}: the 'Header' times do not increase (median step {dt})")
    fs = 1.0 / dt
    if abs(fs - round(fs)) < 1e-3 * fs:
        fs = float(round(fs))
    return fs


def _uniform(t: np.ndarray, x: np.ndarray, fs: float) -> tuple[np.ndarray, np.ndarray]:
    """Put (t, x) on the uniform grid t0 + k/fs; samples in gaps become NaN."""
    dt = 1.0 / fs
    steps = np.diff(t)
    if np.all(np.abs(steps - dt) <= 0.25 * dt):
        return t, x
    grid = t[0] + np.arange(int(round((t[-1] - t[0]) * fs)) + 1) * dt
    pos = np.clip(np.searchsorted(t, grid), 1, len(t) - 1)
    near = np.minimum(np.abs(t[pos - 1] - grid), np.abs(t[pos] - grid))
    out = np.empty((len(grid), x.shape[1]))
    for j in range(x.shape[1]):
        out[:, j] = np.interp(grid, t, x[:, j])
    out[near > 0.75 * dt] = np.nan
    return grid, out


def _sensor_block(
    path: Path,
    sensor: str,
    fs: float,
    emg: str,
    emg_band,
    emg_lowpass: float,
    columns: Sequence[str] | None,
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Read one sensor file and bring it to ``fs``: (times, values (n, C), column names)."""
    table = read_camargo_table(path)
    table = table.sort_values("Header", kind="stable").drop_duplicates("Header")
    if columns is not None:
        missing = [c for c in columns if c not in table.columns]
        if missing:
            raise InputError(
                f"{path}: column(s) {missing!r} not in the table; it has "
                f"{[c for c in table.columns if c != 'Header']!r}"
            )
        cols = list(columns)
    else:
        cols = [
            str(c)
            for c in table.columns
            if c != "Header"
            and pd.api.types.is_numeric_dtype(table[c])
            and not pd.api.types.is_bool_dtype(table[c])
        ]
    if not cols:
        raise InputError(f"{path}: no numeric signal column besides 'Header'")
    t = table["Header"].to_numpy(dtype=float)
    try:
        x = table[cols].to_numpy(dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{path}: column(s) {cols!r} are not all numeric") from None
    src_fs = _measure_fs(t, path)
    t, x = _uniform(t, x, src_fs)
    if sensor == "emg" and emg == "envelope":
        x = emg_envelope(x, src_fs, band=emg_band, lowpass=emg_lowpass, axis=0)
    if src_fs != fs:
        x = resample_array(x, src_fs, fs, axis=0)
        if sensor == "emg" and emg == "envelope":  # an envelope is non-negative
            x = np.where(np.isnan(x), np.nan, np.maximum(x, 0.0))
    times = t[0] + np.arange(len(x)) / fs
    return times, x, [f"{sensor}_{c}" for c in cols]


def _trial_frame(
    files: dict[str, Path],
    sensors: Sequence[str],
    fs: float,
    emg: str,
    emg_band,
    emg_lowpass: float,
    columns: Mapping[str, Sequence[str]] | None,
    label_map,
    keep_raw_label: bool,
    dtype,
) -> pd.DataFrame:
    blocks = []
    for s in sensors:
        cols = None if columns is None else columns.get(s)
        blocks.append(_sensor_block(files[s], s, fs, emg, emg_band, emg_lowpass, cols))
    lab = read_camargo_table(files["conditions"], labels=True)
    lab = lab.sort_values("Header", kind="stable")
    lt = lab["Header"].to_numpy(dtype=float)
    raw = lab["Label"].to_numpy(dtype=object)
    if len(lt) == 0:
        raise InputError(f"{files['conditions']}: the label table is empty")
    half = 0.5 / fs
    start = max([b[0][0] for b in blocks] + [lt[0] - half])
    stop = min([b[0][-1] for b in blocks] + [lt[-1] + half])
    # put the grid on the first sensor's samples (all sensors, when they share a clock)
    t0 = blocks[0][0][0]
    start = t0 + math.ceil((start - t0) * fs - 1e-6) / fs
    if stop < start:
        raise InputError(
            f"sensor files of trial {files['conditions'].stem!r} do not overlap in time "
            f"(Header ranges: {[(round(b[0][0], 3), round(b[0][-1], 3)) for b in blocks]!r})"
        )
    n = int(math.floor((stop - start) * fs + 1e-6)) + 1
    grid = start + np.arange(n) / fs
    data: dict[str, np.ndarray] = {}
    for times, x, names in blocks:
        exact = len(times) >= n and np.allclose(times[:n], grid, atol=1e-9, rtol=0)
        i0 = int(round((grid[0] - times[0]) * fs))
        on_grid = abs(times[0] + i0 / fs - grid[0]) < 1e-9 and i0 + n <= len(times)
        for j, name in enumerate(names):
            if exact:
                col = x[:n, j]
            elif on_grid:
                col = x[i0 : i0 + n, j]
            else:
                col = np.interp(grid, times, x[:, j])
            data[name] = col.astype(dtype, copy=False)
    if len(lt) > 1:
        pos = np.clip(np.searchsorted(lt, grid), 1, len(lt) - 1)
        near = np.where(np.abs(lt[pos - 1] - grid) <= np.abs(lt[pos] - grid), pos - 1, pos)
    else:
        near = np.zeros(n, np.int64)
    raw_at = raw[near]
    out = {"time": grid, "label": _map_labels(raw_at, label_map, files["conditions"])}
    if keep_raw_label:
        out["raw_label"] = raw_at
    out.update(data)
    return pd.DataFrame(out)


# ------------------------------------------------------------------------------ layout


def _visible(p: Path) -> bool:
    return not p.name.startswith(".")


def _subject_dirs(root: Path) -> list[Path]:
    return sorted(
        p for p in root.iterdir() if p.is_dir() and _visible(p) and p.name not in _ROOT_EXTRAS
    )


def _date_dirs(subject_dir: Path) -> list[Path]:
    return sorted(
        p for p in subject_dir.iterdir() if p.is_dir() and _visible(p) and p.name != "osimxml"
    )


def _trial_files(folder: Path, file_format: str) -> dict[str, Path]:
    """{trial stem: file}; with "auto" a .mat file wins over a .csv of the same trial."""
    found: dict[str, Path] = {}
    suffixes = {"auto": (".csv", ".mat"), "mat": (".mat",), "csv": (".csv",)}[file_format]
    for suffix in suffixes:  # later suffixes overwrite earlier ones
        for p in sorted(folder.glob(f"*{suffix}")):
            if p.is_file() and _visible(p):
                found[p.stem] = p
    return found


def _as_list(value, name: str) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    try:
        return [str(v) for v in value]
    except TypeError:
        raise InputError(f"{name} must be a name or a list of names, got {value!r}") from None


# --------------------------------------------------------------------------------- load


def load_camargo(
    root: str | Path,
    sensors: Sequence[str] = ("imu", "gon", "emg"),
    modes: Sequence[str] | None = None,
    subjects: Sequence[str] | None = None,
    fs: float = 200.0,
    drop_transitions: bool = False,
    *,
    emg: str = "envelope",
    emg_band: tuple[float, float] | None = (20.0, 450.0),
    emg_lowpass: float = 6.0,
    columns: Mapping[str, Sequence[str]] | None = None,
    label_map: Mapping[str, str] | None = None,
    file_format: str = "auto",
    dtype: str | np.dtype = "float32",
    keep_raw_label: bool = False,
) -> pd.DataFrame:
    """Load a local copy of the Camargo et al. (2021) dataset as a long DataFrame.

    Each trial's sensors are brought to the common rate ``fs`` and aligned on their
    ``Header`` time: a sensor recorded faster is resampled with an anti-aliasing filter
    (:func:`medspt.data.preprocess.resample_array`); EMG is first turned into its linear
    envelope at its own rate (:func:`medspt.data.preprocess.emg_envelope`). The rows of a
    trial cover the time span that all its sensors and its labels share, on the grid
    ``start + k / fs``. Labels come from the ``conditions`` file, taking the label
    sample nearest in time, mapped to classes as in the module table.

    Parameters
    ----------
    root : str or Path
        Dataset folder holding ``<subject>/<date>/<mode>/<sensor>/<trial>.mat|csv``.
    sensors : sequence of {"imu", "gon", "emg"}
        Sensors to read (``conditions`` is always read for the labels).
    modes : sequence of str, optional
        Modes to read (``levelground``, ``ramp``, ``stair``, ``treadmill``); default:
        every one of these found under each subject.
    subjects : sequence of str, optional
        Subjects to read (e.g. ``["AB06", "AB07"]``); default: all found.
    fs : float
        Common sampling rate in Hz (200 Hz, the IMU rate, by default).
    drop_transitions : bool
        Remove rows labelled ``"transition"``. Each remaining contiguous stretch of a
        trial then becomes its own recording ``"<mode>/<trial>#<k>"`` (k = 1, 2, ...), so
        that windows and filters never join samples across a removed stretch.
    emg : {"envelope", "raw"}
        ``"envelope"``: band-pass ``emg_band``, rectify, low-pass ``emg_lowpass`` Hz, then
        resample. ``"raw"``: resample the raw EMG (everything above fs/2 is removed by the
        anti-aliasing filter, i.e. most of the EMG spectrum at 200 Hz).
    emg_band, emg_lowpass
        Envelope settings (see :func:`medspt.data.preprocess.emg_envelope`).
    columns : mapping, optional
        Columns to keep per sensor, e.g. ``{"imu": ["shank_Accel_X", ...]}``; default: all
        numeric columns of each table.
    label_map : mapping, optional
        Extra or overriding raw-label -> class entries (e.g. for labels not in
        :data:`LABEL_MAP`; unknown labels raise an error naming the file).
    file_format : {"auto", "mat", "csv"}
        Which files to read; ``"auto"`` takes ``.mat`` where present, else ``.csv``.
    dtype : dtype
        Dtype of the channel columns (float32 by default: the full dataset is large).
    keep_raw_label : bool
        Also return the original label in a ``raw_label`` column.

    Returns
    -------
    DataFrame
        Columns ``subject``, ``recording`` (``"<mode>/<trial>"``; ``"<date>/<mode>/<trial>"``
        when a subject has several date folders), ``time`` (the trial's ``Header``
        clock, seconds), ``label``, then one column per channel named
        ``<sensor>_<column>`` (``imu_foot_Accel_X``, ``gon_knee_sagittal``,
        ``emg_<muscle>``). ``df.attrs`` holds ``fs``, ``sensors`` and, when
        ``SubjectInfo.mat`` is in ``root``, ``subjects``: the loaded subjects' rows of it
        as ``{column: [values]}`` (``pd.DataFrame(df.attrs["subjects"])`` gives the
        table; plain lists, not a DataFrame, so that ``pd.concat`` of such frames keeps
        working). The ``time`` column is for bookkeeping: never use it as a feature.

    Raises
    ------
    InputError
        Naming the folder or file, for a missing sensor folder, a trial present for one
        sensor but not another, a table without ``Header``, an unreadable file, or an
        unknown label.
    """
    root = Path(root)
    sensors, modes, fs = _check_load_args(root, sensors, modes, fs, emg, file_format)
    dtype = np.dtype(dtype)
    read_trial = functools.partial(
        _trial_frame,
        sensors=sensors,
        fs=fs,
        emg=emg,
        emg_band=emg_band,
        emg_lowpass=emg_lowpass,
        columns=columns,
        label_map=label_map,
        keep_raw_label=keep_raw_label,
        dtype=dtype,
    )
    parts: list[pd.DataFrame] = []
    for sdir in _subject_folders(root, subjects):
        parts += _load_subject(sdir, sensors, modes, file_format, read_trial, drop_transitions)
    if not parts:
        raise InputError(f"no trials found in {root} for modes={modes!r}")
    df = pd.concat(parts, ignore_index=True, sort=False)
    return _finish_frame(df, root, fs, sensors, dtype)


def _check_load_args(
    root: Path, sensors, modes, fs, emg: str, file_format: str
) -> tuple[list[str], list[str] | None, float]:
    """The arguments of :func:`load_camargo`, checked: (sensors, modes, fs)."""
    if not root.is_dir():
        raise InputError(f"Camargo dataset folder not found: {root}")
    sensors = _as_list(sensors, "sensors") or []
    if not sensors:
        raise InputError("sensors is empty; choose from ('imu', 'gon', 'emg')")
    bad = [s for s in sensors if s not in SIGNAL_SENSORS]
    if bad:
        raise InputError(f"unknown sensor(s) {bad!r}; choose from {SIGNAL_SENSORS!r}")
    if len(set(sensors)) != len(sensors):
        raise InputError(f"sensors lists a sensor twice: {sensors!r}")
    modes = _as_list(modes, "modes")
    if modes is not None:
        bad = [m for m in modes if m not in ALL_MODES]
        if bad:
            raise InputError(f"unknown mode(s) {bad!r}; choose from {MODES!r}")
    if emg not in ("envelope", "raw"):
        raise InputError(f"emg must be 'envelope' or 'raw', got {emg!r}")
    if file_format not in ("auto", "mat", "csv"):
        raise InputError(f"file_format must be 'auto', 'mat' or 'csv', got {file_format!r}")
    try:
        fs = float(fs)
    except (TypeError, ValueError):
        raise InputError(f"fs must be a sampling rate in Hz, got {fs!r}") from None
    if not math.isfinite(fs) or fs <= 0:
        raise InputError(f"fs must be a positive sampling rate in Hz, got {fs!r}")
    return sensors, modes, fs


def _subject_folders(root: Path, subjects) -> list[Path]:
    """The folders of the subjects asked for (default: every one with a date folder)."""
    found = {p.name: p for p in _subject_dirs(root)}
    wanted = _as_list(subjects, "subjects")
    if wanted is None:
        subject_dirs = [p for name, p in found.items() if _date_dirs(p)]
    else:
        missing = [s for s in wanted if s not in found]
        if missing:
            raise InputError(
                f"subject folder(s) {missing!r} not found in {root}; found: {sorted(found)!r}"
            )
        subject_dirs = [found[s] for s in wanted]
    if not subject_dirs:
        raise InputError(
            f"no subject folders (<subject>/<date>/<mode>/<sensor>/<trial>) found in {root}"
        )
    if wanted is None and _SUBJECT_RE.match(root.name):
        if any(_DATE_RE.match(p.name) for p in _date_dirs(root)):
            raise InputError(
                f"{root} looks like one subject's folder; pass the dataset folder above it "
                f"and subjects=[{root.name!r}]"
            )
    return subject_dirs


def _mode_trials(mdir: Path, sensors: list[str], file_format: str):
    """Yield ``(trial, {sensor: file})`` for every trial of a mode folder, the
    ``conditions`` file included; a trial lacking a sensor's file is refused at its turn."""
    need = ["conditions"] + sensors
    files_by_sensor: dict[str, dict[str, Path]] = {}
    for s in need:
        sfold = mdir / s
        if not sfold.is_dir():
            raise InputError(
                f"missing sensor folder {sfold} (needed for sensors={sensors!r}; "
                "conditions holds the labels)"
            )
        files_by_sensor[s] = _trial_files(sfold, file_format)
    for trial in sorted(set().union(*files_by_sensor.values())):
        have = {s: f[trial] for s, f in files_by_sensor.items() if trial in f}
        lacking = [s for s in need if s not in have]
        if lacking:
            present = next(iter(have.values()))
            raise InputError(
                f"trial {trial!r} has {present} but no file in "
                f"{[str(mdir / s) for s in lacking]!r} "
                f"(expected {mdir / lacking[0] / (trial + present.suffix)})"
            )
        yield trial, have


def _load_subject(
    sdir: Path,
    sensors: list[str],
    modes: list[str] | None,
    file_format: str,
    read_trial,
    drop_transitions: bool,
) -> list[pd.DataFrame]:
    """One frame per trial of a subject (``read_trial(files)`` reads one), with its
    ``subject`` and ``recording`` columns."""
    dates = _date_dirs(sdir)
    if not dates:
        raise InputError(f"{sdir}: no date folder (expected e.g. {sdir.name}/10_09_18)")
    parts = []
    for ddir in dates:
        mode_dirs = (
            [ddir / m for m in modes]
            if modes is not None
            else [ddir / m for m in MODES if (ddir / m).is_dir()]
        )
        for mdir in mode_dirs:
            if not mdir.is_dir():
                raise InputError(f"missing mode folder {mdir}")
            for trial, files in _mode_trials(mdir, sensors, file_format):
                frame = read_trial(files)
                rec = f"{mdir.name}/{trial}"
                if len(dates) > 1:
                    rec = f"{ddir.name}/{rec}"
                frame.insert(0, "recording", rec)
                frame.insert(0, "subject", sdir.name)
                if drop_transitions:
                    frame = _drop_transitions(frame)
                parts.append(frame)
    return parts


def _finish_frame(
    df: pd.DataFrame, root: Path, fs: float, sensors: list[str], dtype: np.dtype
) -> pd.DataFrame:
    """Channel dtypes made uniform, and ``df.attrs`` (rate, sensors, subject table)."""
    chan_cols = [c for c in df.columns if c not in ("subject", "recording", "time", "label")]
    chan_cols = [c for c in chan_cols if c != "raw_label"]
    for c in chan_cols:  # channels missing from some trials came back as float64 NaN
        if df[c].dtype != dtype:
            df[c] = df[c].astype(dtype)
    df.attrs["fs"] = fs
    df.attrs["dataset"] = "camargo2021"
    df.attrs["sensors"] = list(sensors)
    info = root / "SubjectInfo.mat"
    if info.is_file():
        try:
            table = load_camargo_subjects(info)
        except InputError as e:
            warn(f"subject table not attached: {e}")
        else:
            table = table[table["Subject"].isin(df["subject"].unique())]
            df.attrs["subjects"] = _table_to_attrs(table)
    return df


def _table_to_attrs(table: pd.DataFrame) -> dict[str, list]:
    """A small table as ``{column: [plain Python values]}`` (missing = None), the form
    medspt's loaders keep in ``df.attrs["subjects"]``: a DataFrame there would break
    ``pd.concat`` (pandas compares attrs with ``==``), lists of scalars do not."""
    out = {}
    for col in table.columns:
        values = []
        for v in table[col].tolist():
            if v is None or (isinstance(v, float) and math.isnan(v)):
                values.append(None)
            else:
                values.append(v.item() if isinstance(v, np.generic) else v)
        out[str(col)] = values
    return out


def _drop_transitions(frame: pd.DataFrame) -> pd.DataFrame:
    keep = (frame["label"] != TRANSITION).to_numpy()
    if not keep.any():
        return frame.iloc[:0]
    seg = np.cumsum(np.concatenate([[keep[0]], keep[1:] & ~keep[:-1]]))
    out = frame.loc[keep].copy()
    out["recording"] = [f"{r}#{k}" for r, k in zip(out["recording"], seg[keep])]
    return out


# -------------------------------------------------------------------------------- check


def check_camargo(
    root: str | Path,
    subjects: Sequence[str] | None = SUBJECTS,
    modes: Sequence[str] = MODES,
    sensors: Sequence[str] = ("conditions", "imu", "gon", "emg"),
) -> list[str]:
    """Problems in the layout of a local copy (an empty list means it looks complete).

    Only names are checked (no file is opened): missing ``SubjectInfo.mat``, subjects,
    date, mode and sensor folders; trials present for one sensor but not another;
    unknown files or folders. Paths in the messages are relative to ``root``.

    Parameters
    ----------
    root : str or Path
        Dataset folder.
    subjects : sequence of str or None
        Subjects expected (default: the 22 of the published dataset); None: only check
        the subjects present.
    modes : sequence of str
        Mode folders expected under every date folder.
    sensors : sequence of str
        Sensor folders expected under every mode folder (except ``static``), and whose
        trial lists must agree.
    """
    root = Path(root)
    if not root.is_dir():
        return [f"{root} is not a folder"]
    problems: list[str] = []

    def rel(p: Path) -> str:
        return p.relative_to(root).as_posix()

    subject_dirs = []
    for p in sorted(root.iterdir()):
        if not _visible(p) or p.name in _ROOT_EXTRAS:
            continue
        if p.is_dir() and _SUBJECT_RE.match(p.name):
            subject_dirs.append(p)
        else:
            problems.append(f"unknown {'folder' if p.is_dir() else 'file'} at the top: {p.name}")
    if not (root / "SubjectInfo.mat").is_file():
        problems.append("missing SubjectInfo.mat (the subject table)")
    present = {p.name for p in subject_dirs}
    if not subject_dirs:
        problems.append("no subject folders (AB06, AB07, ...)")
    for s in subjects or ():
        if s not in present:
            problems.append(f"missing subject {s}")

    for sdir in subject_dirs:
        dates = []
        for p in sorted(sdir.iterdir()):
            if not _visible(p) or (p.is_dir() and p.name == "osimxml"):
                continue
            if p.is_dir() and _DATE_RE.match(p.name):
                dates.append(p)
            else:
                problems.append(f"unknown {'folder' if p.is_dir() else 'file'}: {rel(p)}")
        if not dates:
            problems.append(f"{rel(sdir)}: no date folder (e.g. {sdir.name}/10_09_18)")
        for ddir in dates:
            for p in sorted(ddir.iterdir()):
                if _visible(p) and not (p.is_dir() and p.name in ALL_MODES):
                    problems.append(f"unknown {'folder' if p.is_dir() else 'file'}: {rel(p)}")
            for m in modes:
                if not (ddir / m).is_dir():
                    problems.append(f"{rel(ddir)}: missing mode folder {m}")
            for mdir in sorted(p for p in ddir.iterdir() if p.is_dir() and p.name in ALL_MODES):
                problems += _check_mode(mdir, sensors, rel)
    return problems


def _check_mode(mdir: Path, sensors: Sequence[str], rel) -> list[str]:
    problems = []
    trials: dict[str, set[str]] = {}
    for p in sorted(mdir.iterdir()):
        if not _visible(p):
            continue
        if not (p.is_dir() and p.name in KNOWN_SENSORS):
            problems.append(f"unknown {'folder' if p.is_dir() else 'file'}: {rel(p)}")
            continue
        stems = set()
        for f in sorted(p.iterdir()):
            if not _visible(f):
                continue
            if f.is_file() and f.suffix.lower() in _TRIAL_SUFFIXES:
                stems.add(f.stem)
            else:
                problems.append(f"unknown {'folder' if f.is_dir() else 'file'}: {rel(f)}")
        if not stems:
            problems.append(f"{rel(p)}: no trial files")
        trials[p.name] = stems
    if mdir.name == "static":
        return problems
    for s in sensors:
        if s not in trials:
            problems.append(f"{rel(mdir)}: missing sensor folder {s}")
    checked = [s for s in sensors if s in trials]
    everything = set().union(*(trials[s] for s in checked)) if checked else set()
    for s in checked:
        for t in sorted(everything - trials[s]):
            others = [o for o in checked if t in trials[o]]
            problems.append(f"{rel(mdir / s)}: no file for trial {t} (present in {others})")
    return problems
