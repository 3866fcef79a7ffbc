"""Fixed evaluation protocols, so that every benchmark cuts, labels and splits the same way.

``protocol("GPD-1")``, ``protocol("GPD-2")`` and ``protocol("NE-1")`` return a
:class:`Protocol`: the windows (a :class:`~medspt.data.windowset.WindowSet`; for GPD-2 one whole
walk per case), the subject-wise folds, the metrics to report and a description.
Normalization is *not* done here: estimators standardize per channel with
statistics from each training fold only.

GPD-1 (Parkinson's disease vs control, gaitpdb walk 01)
    The 18 force columns; non-overlapping blocks of 5 samples averaged (100 -> 20 Hz),
    blocks starting at row 0, trailing rows that do not fill a block dropped; windows of
    200 samples (10 s) at starts 0, 100, 200, … while start + 200 <= length; classes
    ``["control", "PD"]`` (PD = 1); 5-fold ``StratifiedGroupKFold(shuffle=True,
    random_state=0)`` by subject over the windows ordered by file name, then time.
    Expected: 3,481 windows of (18, 200), control 1,465, PD 2,016. The windows are cut
    by the same steps as :func:`~medspt.data.windowset.make_windows` uses
    (:func:`~medspt.data.windowing.window_starts`, :func:`~medspt.data.windowing.cut_windows`),
    called directly on the block means: make_windows would resample with an
    anti-aliasing filter, not average blocks.

GPD-2 (Parkinson's disease vs control, whole walks)
    The subjects, recordings, channels and labels of GPD-1, one case per walk: the whole
    recording at 20 Hz (blocks of 5 samples averaged, as in GPD-1; ``rows // 5`` samples)
    or, with ``"GPD-2@100"``, at the recorded 100 Hz (every row). A name ``"GPD-2@<Hz>"``
    takes any rate that splits 100 Hz into whole blocks (100, 50, 25, 20, 10, …). Cases
    are padded at the end with NaN to the longest walk (as ``make_windows(window=None)``
    pads them; the model never attends to padding, masks never hide it and no loss
    scores it); ``windows.meta`` keeps each walk's real ``length`` (samples at the
    protocol's rate) and ``duration_s``. The folds hold exactly GPD-1's subjects, fold by
    fold (derived from GPD-1's split, not split again), so fold k of both protocols tests
    the same people. One case per subject: window metrics are subject metrics.
    Expected: 165 cases of 18 channels, control 72, PD 93; lengths 806-5,273 samples at
    20 Hz (4,034-26,366 at 100 Hz).

NE-1 (4 stress states, noneeg AccTempEDA)
    ``ax, ay, az, temp, EDA`` at 8 Hz; windows of 240 samples (30 s) on the grid 0, 120,
    240, … of each record, kept only when all 240 samples lie in one labelled segment
    (sample 0, before the first annotation, is unlabelled); classes ``Relax,
    PhysicalStress, CognitiveStress, EmotionalStress``; fold k tests the subjects whose
    index in numeric order (Subject1 -> 0 … Subject20 -> 19) is k mod 5.
    Expected: 2,743 windows of (5, 240): 1,437 / 382 / 434 / 490.

CAM-1 (locomotion modes, Camargo et al. 2021)
    Needs the Camargo signals through ``medspt.datasets.camargo.load_camargo``: windows
    of 1 s with stride 0.25 s at 200 Hz, transitions dropped, ``GroupKFold(5)`` by subject.

NE-1 and CAM-1 cut their windows with :func:`~medspt.data.windowset.make_windows`.

``windows.meta`` keeps ``subject``, ``recording``, ``start``/``stop`` (sample indices on
the protocol's time base) and ``start_time``; position in a recording can leak the label
(in Non-EEG every subject went through the phases in the same order), so none of it is
ever a model input.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import GroupKFold, StratifiedGroupKFold

from medspt.core.errors import InputError
from medspt.data.windowing import cut_windows, pad_cases, window_meta, window_starts
from medspt.data.windowset import WindowSet, make_windows
from medspt.datasets._paths import resolve_root
from medspt.datasets.camargo import load_camargo
from medspt.datasets.gaitpd import CHANNELS as GAITPD_CHANNELS
from medspt.datasets.gaitpd import plan_walks, read_recording
from medspt.datasets.noneeg import CLASSES as NONEEG_CLASSES
from medspt.datasets.noneeg import SIGNALS as NONEEG_SIGNALS
from medspt.datasets.noneeg import load_noneeg

__all__ = ["Protocol", "PROTOCOLS", "protocol"]

Fold = tuple[np.ndarray, np.ndarray]


@dataclass
class Protocol:
    """An evaluation protocol: windows, subject-wise folds, metrics to report."""

    name: str
    windows: WindowSet
    folds: list[Fold]
    metrics: tuple[str, ...]
    description: str
    info: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        return (
            f"Protocol({self.name!r}, {self.windows!r}, folds={len(self.folds)}, "
            f"metrics={self.metrics!r})"
        )


def _dataset_root(folder: str, root, marker: str) -> Path:
    """``root`` (the dataset folder or a folder holding ``<folder>/``), or the local copy."""
    return resolve_root(root, folder, lambda name: fnmatch.fnmatch(name, marker), marker)


# --------------------------------------------------------------------------- GPD-1

GPD1_BLOCK = 5
GPD1_FS = 20.0
GPD1_WINDOW, GPD1_STRIDE = 200, 100
GPD1_CLASSES = ["control", "PD"]


def _block_average(values: np.ndarray, block: int) -> np.ndarray:
    """Means of non-overlapping blocks of ``block`` rows of ``values`` (n, C), starting at
    row 0; a trailing part shorter than a block is dropped."""
    n = len(values) // block
    vals = values[: n * block].reshape(n, block, values.shape[1])
    return vals.mean(axis=1, dtype=np.float64).astype(np.float32)


def _gaitpd_walks(root):
    """``(path, walks)``: the walk-01 recordings of ``root`` in file-name order, each as
    ``(subject, walk, class code, forces (n, 18) float64 at 100 Hz)``; the loader's file
    selection and checks, without building the 100 Hz long frame."""
    path = _dataset_root("gaitpdb", root, "*_01.txt")
    _, files, labels, _, _ = plan_walks(path, ("01",), "group", None)
    code = {c: i for i, c in enumerate(GPD1_CLASSES)}
    walks = (
        (subj, walk, code[labels[subj]], read_recording(fpath)[:, 1:])
        for fpath, subj, walk in zip(files["path"], files["subject"], files["walk"])
    )
    return path, walks


def _gpd1_windows(n_blocks: int) -> np.ndarray:
    """GPD-1's window starts in a recording of ``n_blocks`` samples at 20 Hz."""
    return window_starts(n_blocks, GPD1_WINDOW, GPD1_STRIDE)


def _gpd1_folds(y: np.ndarray, groups: np.ndarray) -> list[Fold]:
    """GPD-1's split of its windows (class codes ``y``, subjects ``groups``, in file then
    time order): 5-fold StratifiedGroupKFold(shuffle=True, random_state=0)."""
    sgkf = StratifiedGroupKFold(n_splits=5, shuffle=True, random_state=0)
    return [(np.asarray(tr), np.asarray(te)) for tr, te in sgkf.split(np.zeros(len(y)), y, groups)]


def _gpd1(root) -> Protocol:
    path, walks = _gaitpd_walks(root)
    Xs, ys, metas = [], [], []
    for subj, walk, code, forces in walks:
        blocks = _block_average(forces, GPD1_BLOCK)  # (n, 18) at 20 Hz
        # make_windows' own cutting step, on the block means (its resampling would not
        # reproduce the protocol's block averaging)
        starts = _gpd1_windows(len(blocks))
        if len(starts) == 0:
            continue
        X, starts = cut_windows(blocks, starts, GPD1_WINDOW)  # (n_w, 18, 200)
        Xs.append(X)
        ys.append(np.full(len(starts), code, dtype=np.int64))
        metas.append(window_meta(subj, walk, starts, GPD1_WINDOW, starts / GPD1_FS))
    if not Xs:
        raise InputError(f"no gaitpdb recording in {str(path)!r} is long enough for GPD-1")
    meta = pd.concat(metas, ignore_index=True)
    ws = WindowSet(
        X=np.concatenate(Xs),
        y=np.concatenate(ys),
        classes=np.asarray(GPD1_CLASSES),
        groups=meta["subject"].to_numpy(dtype=object),
        channels=list(GAITPD_CHANNELS),
        fs=GPD1_FS,
        meta=meta,
    )
    return Protocol(
        name="GPD-1",
        windows=ws,
        folds=_gpd1_folds(ws.y, ws.groups),
        metrics=("accuracy", "subject_accuracy", "balanced_accuracy"),
        description=(
            "Gait in Parkinson's disease (gaitpdb, walk 01): 18 VGRF channels averaged over "
            "blocks of 5 samples (100 -> 20 Hz); 10 s windows (200 samples), stride 5 s; "
            "PD (1) vs control (0); 5-fold StratifiedGroupKFold(shuffle=True, "
            "random_state=0) by subject. Subject accuracy: mean PD probability over a "
            "subject's windows, threshold 0.5. Standardize per channel on the training fold."
        ),
        info={"source_fs": 100.0, "block": GPD1_BLOCK, "window": GPD1_WINDOW},
    )


# --------------------------------------------------------------------------- GPD-2

GPD2_RATE = 20.0  # the default rate: GPD-1's time base
GAITPD_FS = 100.0


def gpd2_block(rate: float) -> int:
    """Samples averaged per step of GPD-2 at ``rate`` Hz (100 Hz / rate, a whole number)."""
    block = GAITPD_FS / rate if rate > 0 else 0.0
    if not (block >= 1 and abs(block - round(block)) < 1e-9):
        raise InputError(
            f"GPD-2 takes a rate that splits the recorded {GAITPD_FS:g} Hz into whole "
            f"blocks of samples (100, 50, 25, 20, 10, ... Hz), got {rate:g} Hz"
        )
    return int(round(block))


def _gpd2_folds(lengths: list[int], ys: list[int], subjects: list[str]) -> list[Fold]:
    """GPD-1's folds carried over to one case per walk: GPD-1's windows are rebuilt from
    the walks' lengths at 20 Hz (the split only reads their classes and subjects), split
    as GPD-1 splits them, and each case goes to the fold that tests its subject."""
    counts = [len(_gpd1_windows(n)) for n in lengths]
    y = np.repeat(np.asarray(ys, dtype=np.int64), counts)
    groups = np.repeat(np.asarray(subjects, dtype=object), counts)
    case_subjects = np.asarray(subjects, dtype=object)
    folds = []
    for _, te in _gpd1_folds(y, groups):
        test = np.isin(case_subjects, np.unique(groups[te]))
        folds.append((np.flatnonzero(~test), np.flatnonzero(test)))
    return folds


def _gpd2(root, rate: float = GPD2_RATE) -> Protocol:
    block = gpd2_block(rate)
    path, walks = _gaitpd_walks(root)
    xs, ys, subjects, recordings, lengths, lengths20 = [], [], [], [], [], []
    for subj, walk, code, forces in walks:
        n20 = len(forces) // GPD1_BLOCK
        if len(_gpd1_windows(n20)) == 0:  # not in GPD-1, so in none of its folds
            continue
        x = _block_average(forces, block)  # (n, 18) at `rate`
        xs.append(x.T)
        ys.append(code)
        subjects.append(subj)
        recordings.append(walk)
        lengths.append(len(x))
        lengths20.append(n20)
    if not xs:
        raise InputError(f"no gaitpdb recording in {str(path)!r} is long enough for GPD-2")
    fs = GAITPD_FS / block
    length = np.asarray(lengths, dtype=np.int64)
    meta = pd.DataFrame(
        {
            "subject": subjects,
            "recording": recordings,
            "start": 0,
            "stop": length,
            "start_time": 0.0,
            "length": length,
            "duration_s": length / fs,
        }
    )
    ws = WindowSet(
        X=pad_cases(xs, None, subjects),  # (N, 18, longest), NaN after each walk's end
        y=np.asarray(ys, dtype=np.int64),
        classes=np.asarray(GPD1_CLASSES),
        groups=np.asarray(subjects, dtype=object),
        channels=list(GAITPD_CHANNELS),
        fs=fs,
        meta=meta,
    )
    name = "GPD-2" if fs == GPD2_RATE else f"GPD-2@{fs:g}"
    how = (
        f"18 VGRF channels averaged over blocks of {block} samples (100 -> {fs:g} Hz)"
        if block > 1
        else "18 VGRF channels at the recorded 100 Hz"
    )
    return Protocol(
        name=name,
        windows=ws,
        folds=_gpd2_folds(lengths20, ys, subjects),
        metrics=("accuracy", "balanced_accuracy", "roc_auc"),
        description=(
            f"Gait in Parkinson's disease, whole walks (gaitpdb, walk 01): {how}; one case "
            "per walk (subject), NaN-padded at the end to the longest walk (padding is "
            "never attended to or scored; meta 'length' keeps each walk's samples); PD (1) "
            "vs control (0); the subjects of GPD-1's 5 folds, fold by fold. One case per "
            "subject, so accuracy and balanced accuracy are subject-level. Standardize per "
            "channel on the training fold."
        ),
        info={"source_fs": GAITPD_FS, "block": block, "length": int(length.max())},
    )


# --------------------------------------------------------------------------- NE-1

NE1_WINDOW, NE1_STRIDE = 240, 120
_UNLABELLED = "__unlabelled__"


def _ne1(root) -> Protocol:
    path = _dataset_root("noneeg", root, "Subject*_AccTempEDA.hea")
    df = load_noneeg(path, signals=("AccTempEDA",), unlabelled="keep")
    df.attrs = {}
    # Keep the unlabelled rows so the grid stays anchored at sample 0; windows that touch
    # them are dropped below.
    df["label"] = df["label"].astype(object).where(df["label"].notna(), _UNLABELLED)
    ws = make_windows(
        df,
        window=NE1_WINDOW,
        stride=NE1_STRIDE,
        channels=NONEEG_SIGNALS["AccTempEDA"],
        classes=[*NONEEG_CLASSES, _UNLABELLED],
    )
    del df
    ws = ws.subset(np.flatnonzero(ws.y != len(NONEEG_CLASSES)))
    ws.classes = np.asarray(NONEEG_CLASSES)
    subjects = sorted(np.unique(ws.groups), key=lambda s: int(re.sub(r"\D", "", s)))
    index = {s: i for i, s in enumerate(subjects)}
    fold_of = np.array([index[s] % 5 for s in ws.groups])
    folds = [(np.flatnonzero(fold_of != k), np.flatnonzero(fold_of == k)) for k in range(5)]
    return Protocol(
        name="NE-1",
        windows=ws,
        folds=folds,
        metrics=("accuracy", "balanced_accuracy", "macro_f1"),
        description=(
            "Non-EEG stress states (noneeg, AccTempEDA: ax, ay, az, temp, EDA at 8 Hz): "
            "30 s windows (240 samples), stride 15 s, grid anchored at sample 0, only "
            "windows inside one labelled segment; 4 classes; 5 folds by subject (numeric "
            "order, fold k = index mod 5). Headline metric: balanced accuracy (52 % of "
            "windows are Relax). Never use time or window position as a feature: the "
            "phase order is the same for every subject. Standardize on the training fold."
        ),
        info={"window": NE1_WINDOW, "stride": NE1_STRIDE},
    )


# --------------------------------------------------------------------------- CAM-1

CAM1_FS = 200.0
CAM1_CLASSES = ["stand", "walk", "rampascent", "rampdescent", "stairascent", "stairdescent"]
_CAM1_ALIASES = {"idle": "stand", "turn1": "walk", "turn2": "walk"}
_DROP = "__transition__"


def _cam1(root) -> Protocol:
    path = _dataset_root("camargo2021", root, "AB*")
    df = load_camargo(path)
    df.attrs = {}
    if "time" in df.columns and len(df) > 1:
        dt = df.groupby("subject", sort=False)["time"].diff().median()
        if not np.isfinite(dt) or abs(1.0 / dt - CAM1_FS) > 1.0:
            raise InputError(
                f"CAM-1 expects signals at {CAM1_FS:g} Hz, but load_camargo returned a time "
                f"step of {dt!r} s; resample to {CAM1_FS:g} Hz first"
            )
    keys = {"subject", "recording", "time", "label"}
    channels = [c for c in df.columns if c not in keys and pd.api.types.is_numeric_dtype(df[c])]
    mode = df["label"].astype(str).str.strip().str.lower().str.replace(r"[\s_]", "", regex=True)
    mode = mode.replace(_CAM1_ALIASES)
    df["label"] = mode.where(mode.isin(CAM1_CLASSES), _DROP)  # transitions, turns, …
    ws = make_windows(
        df,
        window="1s",
        stride="0.25s",
        channels=channels,
        fs=CAM1_FS,
        classes=[*CAM1_CLASSES, _DROP],
        drop_short=True,
    )
    ws = ws.subset(np.flatnonzero(ws.y != len(CAM1_CLASSES)))
    ws.classes = np.asarray(CAM1_CLASSES)
    folds = [
        (np.asarray(tr), np.asarray(te))
        for tr, te in GroupKFold(n_splits=5).split(np.zeros(len(ws)), ws.y, ws.groups)
    ]
    return Protocol(
        name="CAM-1",
        windows=ws,
        folds=folds,
        metrics=("accuracy", "balanced_accuracy", "macro_f1"),
        description=(
            "Camargo et al. 2021 locomotion modes: 1 s windows (200 samples at 200 Hz), "
            "stride 0.25 s, transitions dropped; leave-subjects-out GroupKFold(5)."
        ),
    )


PROTOCOLS = {"GPD-1": _gpd1, "GPD-2": _gpd2, "NE-1": _ne1, "CAM-1": _cam1}
#: protocols whose name may carry a sampling rate, ``"GPD-2@100"``
RATED = ("GPD-2",)


def protocol(name: str, root=None) -> Protocol:
    """Build an evaluation protocol by name: ``"GPD-1"``, ``"GPD-2"``, ``"NE-1"`` or
    ``"CAM-1"``.

    ``"GPD-2"`` is at 20 Hz; ``"GPD-2@100"`` takes the whole walks at the recorded 100 Hz
    (``"GPD-2@<Hz>"``: any rate that splits 100 Hz into whole blocks). The rate is part
    of the name, so it works wherever a protocol is named (``medspt study run
    --protocol GPD-2@100``, the benchmarks' ``--protocol``).

    ``root`` is the dataset folder (or a folder holding ``gaitpdb/``, ``noneeg/``,
    ``camargo2021/``); by default the local copy found by
    :func:`medspt.datasets._paths.find_dataset`. The result is deterministic: two calls
    give identical windows and folds.
    """
    key = re.sub(r"[\s_\-]", "", str(name)).upper()
    base, _, rate = key.partition("@")
    table = {re.sub(r"-", "", k): k for k in PROTOCOLS}
    if base not in table:
        raise InputError(
            f"unknown protocol {name!r}; choose from {list(PROTOCOLS)!r} "
            "(GPD-2 also as 'GPD-2@100', at 100 Hz)"
        )
    found = table[base]
    if not rate:
        return PROTOCOLS[found](root)
    hz = re.fullmatch(r"(\d+(?:\.\d+)?)(?:HZ)?", rate)
    if found not in RATED or hz is None:
        raise InputError(
            f"protocol {name!r}: only {', '.join(RATED)} takes a rate after '@' "
            "(e.g. 'GPD-2@100', in Hz)"
        )
    return PROTOCOLS[found](root, rate=float(hz[1]))
