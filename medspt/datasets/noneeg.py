"""Non-EEG Dataset for Assessment of Neurological Status (PhysioNet ``noneeg`` v1.0.0).

20 healthy subjects went through the same sequence of relaxation and stress phases while
wearing a wrist device. Two WFDB records per subject:

* ``SubjectN_AccTempEDA``: ``ax``, ``ay``, ``az`` (accelerometer, roughly g), ``temp``
  (degC) and ``EDA`` (electrodermal activity) at 8 Hz, with reference annotations
  ``SubjectN_AccTempEDA.atr`` whose ``aux_note`` holds the state (``Relax``,
  ``PhysicalStress``, ``CognitiveStress``, ``EmotionalStress``). A state holds from its
  annotation until the next one; the last holds to the end of the record. The first
  annotation sits at sample 1, so sample 0 is unlabelled.
* ``SubjectN_SpO2HR``: ``SpO2`` (%) and ``hr`` (bpm) at 1 Hz, about 6 s longer, no
  annotations. Both records start at t = 0.

:func:`load_noneeg` returns the long DataFrame of :mod:`medspt.data.windowset` with subject
metadata (``subjectinfo.csv``) in ``df.attrs["subjects"]``.

Every subject went through the phases in the same order, so a window's position in the
recording predicts its label: never use ``time`` (or anything derived from it) as a
feature.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from medspt.core.errors import InputError
from medspt.datasets._paths import resolve_root
from medspt.datasets.gaitpd import subject_table, table_to_attrs

__all__ = [
    "CLASSES",
    "SIGNALS",
    "load_noneeg",
    "noneeg_subjects",
    "read_states",
    "subject_table",
]

SIGNALS = {"AccTempEDA": ["ax", "ay", "az", "temp", "EDA"], "SpO2HR": ["SpO2", "hr"]}
BASE = "AccTempEDA"
CLASSES = ("Relax", "PhysicalStress", "CognitiveStress", "EmotionalStress")
_STATE_KEYS = {re.sub(r"[\s_\-]", "", c).lower(): c for c in CLASSES}
_SUBJECT_RE = re.compile(r"^Subject(\d+)_AccTempEDA\.hea$")
# Bytes per sample of the WFDB storage formats this reader can size-check.
_BYTES_PER_SAMPLE = {"8": 1.0, "16": 2.0, "24": 3.0, "32": 4.0, "61": 2.0, "80": 1.0}
_BYTES_PER_SAMPLE.update({"160": 2.0, "212": 1.5})


def _wfdb():
    try:
        import wfdb
    except ImportError:  # pragma: no cover - wfdb is a core dependency
        raise InputError("reading noneeg needs the PyPI package 'wfdb'") from None
    return wfdb


class _Quiet:
    def __enter__(self):
        self._ctx = warnings.catch_warnings()
        self._ctx.__enter__()
        for cat in (DeprecationWarning, FutureWarning, PendingDeprecationWarning):
            warnings.simplefilter("ignore", cat)
        return self

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)


def _resolve_root(root) -> Path:
    hint = "SubjectN_*.hea/.dat/.atr files"
    return resolve_root(root, "noneeg", lambda name: bool(_SUBJECT_RE.match(name)), hint)


def noneeg_subjects(root=None) -> list[str]:
    """Subjects with an ``AccTempEDA`` header in the folder, sorted by number
    (``Subject2`` before ``Subject10``)."""
    root = _resolve_root(root)
    nums = sorted(int(m[1]) for p in root.iterdir() if (m := _SUBJECT_RE.match(p.name)))
    return [f"Subject{n}" for n in nums]


def _subject_id(s) -> str:
    if isinstance(s, (bool, np.bool_)):
        raise InputError(f"subject must be like 'Subject3' or 3, got {s!r}")
    if isinstance(s, (int, np.integer)):
        return f"Subject{int(s)}"
    m = re.fullmatch(r"(?i)\s*(?:subject)?\s*(\d+)\s*", str(s))
    if m is None:
        raise InputError(f"subject must be like 'Subject3' or 3, got {s!r}")
    return f"Subject{int(m[1])}"


def _normalize_state(note: str) -> str | None:
    key = re.sub(r"[\s_\-\x00]", "", str(note)).lower()
    return _STATE_KEYS.get(key)


def _read_record(root: Path, name: str):
    """``wfdb.rdrecord`` with the file problems turned into errors that name the file."""
    wfdb = _wfdb()
    hea = root / f"{name}.hea"
    if not hea.is_file():
        raise InputError(f"{hea.name} not found in {str(root)!r}")
    with _Quiet():
        try:
            header = wfdb.rdheader(str(root / name))
        except Exception as e:  # wfdb raises many kinds for malformed headers
            raise InputError(f"{hea.name} is not a valid WFDB header: {e}") from None
    if not header.sig_len:
        raise InputError(f"{hea.name} gives no record length (samples per signal)")
    files = list(dict.fromkeys(header.file_name or []))
    for fname in files:
        if not (root / fname).is_file():
            raise InputError(f"{hea.name} names the signal file {fname!r}, which is missing")
    # Size check of each signal file against the header (wfdb's own error is obscure).
    for fname in files:
        idx = [i for i, f in enumerate(header.file_name) if f == fname]
        fmts = {str(header.fmt[i]) for i in idx}
        if len(fmts) == 1 and (fmt := fmts.pop()) in _BYTES_PER_SAMPLE:
            offset = max(int(header.byte_offset[i] or 0) for i in idx) if header.byte_offset else 0
            need = offset + int(np.ceil(_BYTES_PER_SAMPLE[fmt] * len(idx) * header.sig_len))
            have = (root / fname).stat().st_size
            if have < need:
                raise InputError(
                    f"{fname} is truncated: {have} bytes, but {hea.name} describes "
                    f"{header.sig_len} samples of {len(idx)} signals in format {fmt} "
                    f"({need} bytes)"
                )
    with _Quiet():
        try:
            rec = wfdb.rdrecord(str(root / name), physical=True)
        except Exception as e:
            raise InputError(f"cannot read record {name} ({', '.join(files)}): {e}") from None
    sig = rec.p_signal
    if sig is None or sig.shape != (header.sig_len, header.n_sig):
        shape = None if sig is None else sig.shape
        raise InputError(
            f"{name}: read signal shape {shape} but {hea.name} says "
            f"{header.sig_len} samples x {header.n_sig} signals"
        )
    return rec


def read_states(root, name: str, n_samples: int) -> tuple[np.ndarray, list[str]]:
    """Annotation sample indices and canonical state names of ``<name>.atr``.

    Raises an InputError naming the file for a missing file, an unknown state string,
    annotations out of order, or an annotation at or past the end of the record
    (``n_samples``).
    """
    wfdb = _wfdb()
    root = Path(root)
    atr = root / f"{name}.atr"
    if not atr.is_file():
        raise InputError(f"annotation file {atr.name} not found in {str(root)!r}")
    with _Quiet():
        try:
            ann = wfdb.rdann(str(root / name), "atr")
        except Exception as e:
            raise InputError(f"{atr.name} is not a readable WFDB annotation file: {e}") from None
    samples = np.asarray(ann.sample, dtype=np.int64)
    notes = list(ann.aux_note or [""] * len(samples))
    if len(samples) == 0:
        raise InputError(f"{atr.name} holds no annotations")
    states = []
    for s, note in zip(samples, notes):
        state = _normalize_state(note)
        if state is None:
            raise InputError(
                f"{atr.name}: unknown state {note!r} at sample {int(s)}; expected one of "
                f"{list(CLASSES)!r} (case and spaces are ignored)"
            )
        states.append(state)
    if np.any(np.diff(samples) <= 0):
        k = int(np.flatnonzero(np.diff(samples) <= 0)[0])
        raise InputError(
            f"{atr.name}: annotations are not in increasing sample order "
            f"(sample {int(samples[k + 1])} follows {int(samples[k])})"
        )
    if samples[0] < 0 or samples[-1] >= n_samples:
        bad = int(samples[-1] if samples[-1] >= n_samples else samples[0])
        raise InputError(
            f"{atr.name}: annotation at sample {bad} lies outside the record "
            f"{name} of {n_samples} samples (0 .. {n_samples - 1})"
        )
    return samples, states


def _resample_onto(values: np.ndarray, fs_from: float, n_to: int, fs_to: float) -> np.ndarray:
    """Linear interpolation of ``values`` (n, C) sampled at ``fs_from`` onto the first
    ``n_to`` samples of an ``fs_to`` grid that starts at the same t = 0.

    This is upsampling (1 Hz -> 8 Hz here): no new frequencies above the source Nyquist
    are created, so no anti-aliasing filter is needed. Times past the last source sample
    are NaN (missing), never extrapolated.
    """
    t_from = np.arange(len(values)) / fs_from
    t_to = np.arange(n_to) / fs_to
    out = np.empty((n_to, values.shape[1]), dtype=np.float64)
    for j in range(values.shape[1]):
        v = values[:, j].astype(np.float64)
        ok = np.isfinite(v)
        if ok.sum() < 2:
            out[:, j] = np.nan
            continue
        out[:, j] = np.interp(t_to, t_from[ok], v[ok], left=np.nan, right=np.nan)
    return out


def _subject_info(root: Path, subjects: list[str], headers: dict) -> pd.DataFrame:
    path = root / "subjectinfo.csv"
    cols = ["subject", "age", "gender", "height_cm", "weight_kg"]
    if path.is_file():
        try:
            info = pd.read_csv(path)
        except Exception as e:
            raise InputError(f"subjectinfo.csv cannot be read: {e}") from None
        info.columns = [str(c).strip().lower() for c in info.columns]
        info = info.rename(columns={"height/cm": "height_cm", "weight/kg": "weight_kg"})
        if "subject" not in info.columns:
            raise InputError(f"subjectinfo.csv has no 'subject' column: {list(info.columns)}")
        info["subject"] = [_subject_id(s) for s in info["subject"]]
        info = info.set_index("subject")
    else:  # the same values are in the '#' comment lines of each header
        rows = {}
        for s in subjects:
            row = {}
            for c in headers[s]:
                key, _, val = str(c).partition(":")
                key = key.strip().lower().replace("height/cm", "height_cm")
                row[key.replace("weight/kg", "weight_kg")] = val.strip()
            rows[s] = row
        info = pd.DataFrame.from_dict(rows, orient="index")
    out = pd.DataFrame({"subject": subjects})
    for c in cols[1:]:
        vals = info[c].reindex(subjects) if c in info.columns else pd.Series(np.nan, subjects)
        if c != "gender":
            vals = pd.to_numeric(vals, errors="coerce")
        out[c] = vals.to_numpy()
    return out


def load_noneeg(
    root=None,
    signals: Sequence[str] | str = ("AccTempEDA",),
    subjects: Iterable[str | int] | None = None,
    *,
    unlabelled: str = "drop",
    dtype=np.float32,
) -> pd.DataFrame:
    """Load the Non-EEG records as a long DataFrame on the 8 Hz time base.

    Parameters
    ----------
    root : path, optional
        The folder with ``SubjectN_*.hea/.dat/.atr`` and ``subjectinfo.csv`` (or a folder
        holding ``noneeg/``). Default: the first local copy found by
        :func:`medspt.datasets._paths.find_dataset`.
    signals : ("AccTempEDA",) or ("AccTempEDA", "SpO2HR")
        ``AccTempEDA`` is always the time base. With ``SpO2HR`` the 1 Hz ``SpO2`` and
        ``hr`` are linearly interpolated onto the 8 Hz sample times and cut to the
        AccTempEDA length.
    subjects : iterable of str or int, optional
        ``["Subject1", "Subject7"]`` or ``[1, 7]``. Default: all, sorted by number.
    unlabelled : {"drop", "keep"}
        Samples before the first annotation carry no state: drop them (default) or keep
        them with a missing (NaN) label.
    dtype : numpy dtype
        Of the signal columns.

    Returns
    -------
    DataFrame
        Columns ``subject`` (``"Subject1"``…), ``recording`` (``"Subject1_AccTempEDA"``),
        ``time`` (s, sample index / 8), ``label`` (one of :data:`CLASSES`), ``ax``,
        ``ay``, ``az``, ``temp``, ``EDA`` (+ ``SpO2``, ``hr``). Subjects in numeric order.
        ``df.attrs["subjects"]`` holds age, gender, height_cm, weight_kg and n_samples per
        subject as ``{column: [values]}`` (:func:`subject_table` makes a DataFrame);
        ``df.attrs["fs"]`` is 8.0.

    Raises
    ------
    InputError
        Naming the file: a missing or truncated ``.dat``, a header naming a missing file,
        an annotation past the end of the record, an unknown state string.
    """
    if isinstance(signals, str):
        signals = [signals]
    signals = list(dict.fromkeys(signals))
    unknown = [s for s in signals if s not in SIGNALS]
    if unknown:
        raise InputError(f"unknown signals {unknown!r}; choose from {list(SIGNALS)!r}")
    if BASE not in signals:
        raise InputError(f"signals must include {BASE!r} (the labelled 8 Hz time base)")
    if unlabelled not in ("drop", "keep"):
        raise InputError(f"unlabelled must be 'drop' or 'keep', got {unlabelled!r}")
    root = _resolve_root(root)
    found = noneeg_subjects(root)
    if not found:
        raise InputError(
            f"no noneeg records (files like Subject1_AccTempEDA.hea) in folder {str(root)!r}"
        )
    if subjects is None:
        chosen = found
    else:
        if isinstance(subjects, (str, int, np.integer)):
            subjects = [subjects]
        chosen = list(dict.fromkeys(_subject_id(s) for s in subjects))
        if not chosen:
            raise InputError("subjects is empty; pass None for all subjects")
        missing = [s for s in chosen if s not in found]
        if missing:
            raise InputError(
                f"unknown subject(s) {missing!r}; this folder has {found[0]} … {found[-1]}"
            )
        chosen = sorted(chosen, key=lambda s: int(s[7:]))

    frames, lengths, headers = [], {}, {}
    for subj in chosen:
        name = f"{subj}_{BASE}"
        rec = _read_record(root, name)
        n = rec.sig_len
        names = list(rec.sig_name)
        if not frames:
            fs, first_names = float(rec.fs), names
        elif float(rec.fs) != fs or names != first_names:
            raise InputError(
                f"{name}.hea has signals {names!r} at {rec.fs} Hz, but {chosen[0]}_{BASE}.hea "
                f"has {first_names!r} at {fs} Hz; all records must match"
            )
        headers[subj] = rec.comments or []
        samples, states = read_states(root, name, n)
        # label of each sample: the state of the last annotation at or before it
        seg = np.searchsorted(samples, np.arange(n), side="right") - 1
        label = np.asarray(states, dtype=object)[np.maximum(seg, 0)]
        label[seg < 0] = None
        cols = {c: rec.p_signal[:, j].astype(dtype) for j, c in enumerate(names)}
        if "SpO2HR" in signals:
            other = _read_record(root, f"{subj}_SpO2HR")
            vals = _resample_onto(other.p_signal, float(other.fs), n, fs)
            for j, c in enumerate(other.sig_name):
                if c in cols:
                    raise InputError(f"{subj}_SpO2HR.hea repeats the signal name {c!r}")
                cols[c] = vals[:, j].astype(dtype)
        frame = pd.DataFrame(cols)
        frame.insert(0, "subject", subj)
        frame.insert(1, "recording", name)
        frame.insert(2, "time", np.arange(n) / fs)
        frame.insert(3, "label", label)
        if unlabelled == "drop":
            frame = frame[seg >= 0]
        frames.append(frame)
        lengths[subj] = n
    df = pd.concat(frames, ignore_index=True)
    info = _subject_info(root, chosen, headers)
    info["n_samples"] = [lengths[s] for s in chosen]
    df.attrs["subjects"] = table_to_attrs(info)
    df.attrs["fs"] = float(fs)
    df.attrs["dataset"] = "noneeg"
    return df
