"""Facts about the public datasets medspt knows: where they live, what they hold, how to cite.

``DATASETS`` maps a short name to a :class:`DatasetInfo`; :func:`get_info` looks one up by
name or alias. The PhysioNet datasets (``gaitpd``, ``noneeg``) can be fetched with
:func:`medspt.datasets.download.download`; ``camargo`` must be obtained by hand.
"""

from __future__ import annotations

from dataclasses import dataclass

from medspt.core.errors import InputError

PHYSIONET_CITATION = (
    "Goldberger AL, Amaral LAN, Glass L, Hausdorff JM, Ivanov PCh, Mark RG, Mietus JE, "
    "Moody GB, Peng C-K, Stanley HE. PhysioBank, PhysioToolkit, and PhysioNet: Components "
    "of a New Research Resource for Complex Physiologic Signals. Circulation "
    "101(23):e215-e220 (2000)."
)

PHYSIONET_LICENCE = "ODC-By 1.0 (PhysioNet open access)"
_PHYSIONET_LICENCE_NOTE = (
    "Licence: PhysioNet open access, to our knowledge under the Open Data Commons "
    "Attribution License v1.0 (ODC-By 1.0); confirm on the dataset page before "
    "redistributing. Cite PhysioNet and the dataset's own publication."
)


@dataclass(frozen=True)
class DatasetInfo:
    """Description of one public dataset.

    ``files_url`` is the folder the files are fetched from and ``sha256_url`` the checksum
    list that names them; both are ``None`` for datasets medspt cannot download.
    ``channel_summary`` is a one-line version of ``channels`` for tables.
    ``folder`` is the sub-folder of a data root (``datasets/`` or ``$MEDSPT_DATA``) that
    holds a local copy. ``always_files`` are small metadata files that are fetched even
    when only a subset of the recordings is selected.
    """

    name: str
    title: str
    version: str
    url: str
    files_url: str | None
    sha256_url: str | None
    licence: str
    citation: str
    channels: str
    rates: str
    classes: tuple[str, ...]
    subjects: int
    layout: str
    notes: tuple[str, ...] = ()
    folder: str = ""
    aliases: tuple[str, ...] = ()
    subjects_detail: str = ""
    protocol: str = ""
    always_files: tuple[str, ...] = ()
    get_from: tuple[str, ...] = ()
    channel_summary: str = ""

    @property
    def downloadable(self) -> bool:
        """True when medspt can fetch and verify the files itself."""
        return self.files_url is not None and self.sha256_url is not None


_GAITPD_BASE = "https://physionet.org/files/gaitpdb/1.0.0/"
_NONEEG_BASE = "https://physionet.org/files/noneeg/1.0.0/"

GAITPD = DatasetInfo(
    name="gaitpd",
    folder="gaitpdb",
    aliases=("gaitpdb",),
    title="Gait in Parkinson's Disease (PhysioNet gaitpdb)",
    version="1.0.0",
    url="https://physionet.org/content/gaitpdb/1.0.0/",
    files_url=_GAITPD_BASE,
    sha256_url=_GAITPD_BASE + "SHA256SUMS.txt",
    licence=PHYSIONET_LICENCE,
    citation=(
        PHYSIONET_CITATION + " Source studies: Ga = Yogev G et al., dual tasking in PD, "
        "Eur J Neurosci 2005; Ju = Hausdorff JM et al., rhythmic auditory stimulation in PD, "
        "Eur J Neurosci 2007; Si = Frenkel-Toledo S et al., treadmill walking in PD, "
        "Mov Disord 2005."
    ),
    channels=(
        "18 vertical ground reaction force channels (N): L1-L8 and R1-R8 under the left and "
        "right foot, plus the total force under each foot; column 1 is time in s"
    ),
    channel_summary="18 force (VGRF): 8 sensors per foot + 2 totals",
    rates="100 Hz",
    classes=("control", "PD"),
    subjects=165,
    subjects_detail=(
        "165 subjects with recordings (93 PD, 72 control); demographics.txt lists 166 "
        "(control Juc010 has no recording)"
    ),
    layout=(
        "gaitpdb/<Study><Co|Pt><NN>_<walk>.txt (Study = Ga, Ju or Si; walk 01 = usual-pace "
        "level-ground walk), demographics.txt, demographics.xls, format.txt, SHA256SUMS.txt"
    ),
    notes=(
        "Plain ASCII, tab-separated, CRLF line endings, no header; every row has 19 columns.",
        "Ga and Si walk-01 files have exactly 12,119 rows; Ju walk-01 files 4,034-26,366.",
        "Label from the file name (Pt = PD, Co = control) or demographics.txt column Group "
        "(1 = PD, 2 = control). Subject id = first 6 characters of the file name.",
        "demographics.txt has trailing empty columns, blank lines and NaN strings; control "
        "Juc010 (lowercase c) has no recording.",
        "Further walks: Ga _02 and _10 (dual task, serial-7 subtraction), Ju _02 to _07; "
        "the full release has 306 recordings (288 MiB), walk 01 alone is about 160 MiB.",
        "Sensor (X, Y) positions for centre-of-pressure proxies are in format.txt.",
        _PHYSIONET_LICENCE_NOTE,
    ),
    protocol=(
        "GPD-1: walk 01, the 18 force columns; average non-overlapping blocks of 5 samples "
        "(100 -> 20 Hz); windows of 10 s (200 samples), stride 5 s; PD (1) vs control (0); "
        "5-fold StratifiedGroupKFold(shuffle=True, random_state=0) by subject; "
        "training-fold standardization; metrics: window accuracy, subject accuracy, "
        "balanced accuracy. Self-check: 3,481 windows (control 1,465, PD 2,016). "
        "GPD-2: the same subjects and folds, one case per whole walk (20 Hz block means, "
        "806-5,273 samples; 'GPD-2@100': the recorded 100 Hz), NaN-padded to the longest; "
        "subject-level accuracy and balanced accuracy."
    ),
    always_files=("demographics.txt", "demographics.xls", "format.txt"),
    get_from=("https://physionet.org/content/gaitpdb/1.0.0/",),
)

NONEEG = DatasetInfo(
    name="noneeg",
    folder="noneeg",
    aliases=("non-eeg",),
    title="Non-EEG Dataset for Assessment of Neurological Status (PhysioNet noneeg)",
    version="1.0.0",
    url="https://physionet.org/content/noneeg/1.0.0/",
    files_url=_NONEEG_BASE,
    sha256_url=_NONEEG_BASE + "SHA256SUMS.txt",
    licence=PHYSIONET_LICENCE,
    citation=(
        "Birjandtalab J, Cogan D, Pouyan MB, Nourani M. A Non-EEG Biosignals Dataset for "
        "Assessment and Visualization of Neurological Status. 2016 IEEE International "
        "Workshop on Signal Processing Systems (SiPS), pp. 110-114. doi:10.1109/SiPS.2016.27. "
        + PHYSIONET_CITATION
    ),
    channels=(
        "SubjectN_AccTempEDA: ax, ay, az (accelerometer, about g), temp (degC), EDA; "
        "SubjectN_SpO2HR: SpO2 (%), hr (bpm)"
    ),
    channel_summary="ax, ay, az, temp, EDA; SpO2, hr",
    rates="8 Hz (AccTempEDA), 1 Hz (SpO2HR)",
    classes=("Relax", "PhysicalStress", "CognitiveStress", "EmotionalStress"),
    subjects=20,
    subjects_detail="20 healthy adults, 2 WFDB records each (40 records)",
    layout=(
        "noneeg/SubjectN_AccTempEDA.{hea,dat,atr}, noneeg/SubjectN_SpO2HR.{hea,dat} "
        "(N = 1..20), RECORDS, ANNOTATORS, subjectinfo.csv, SHA256SUMS.txt"
    ),
    notes=(
        "WFDB format 16; read with wfdb.rdrecord and wfdb.rdann(record, 'atr').",
        "Labels are in the .atr aux_note (symbol '\"'): 8 annotations per subject, each "
        "holding until the next; the first sits at sample 1.",
        "The label sequence is the same for every subject (Relax, PhysicalStress, Relax, "
        "EmotionalStress 40 s, CognitiveStress, Relax, EmotionalStress ~360 s, Relax), so "
        "time in the recording predicts the label: never feed time to a model.",
        "SpO2HR records have no .atr file and run about 6 s longer than AccTempEDA; both "
        "start at t = 0.",
        "AccTempEDA records have 18,175-20,255 samples (about 38-42 min).",
        _PHYSIONET_LICENCE_NOTE,
    ),
    protocol=(
        "NE-1: AccTempEDA (5 channels at 8 Hz); windows of 30 s (240 samples), stride 15 s, "
        "only windows fully inside one labelled segment, grid anchored at sample 0; 4 classes; "
        "5 folds by subject (sorted numerically, fold k = index mod 5 == k); training-fold "
        "standardization; metrics: window accuracy, balanced accuracy (headline), macro F1. "
        "Self-check: 2,743 windows (Relax 1,437, PhysicalStress 382, CognitiveStress 434, "
        "EmotionalStress 490)."
    ),
    always_files=("RECORDS", "ANNOTATORS", "subjectinfo.csv"),
    get_from=("https://physionet.org/content/noneeg/1.0.0/",),
)

CAMARGO = DatasetInfo(
    name="camargo",
    folder="camargo2021",
    aliases=("camargo2021",),
    title=("Camargo et al. 2021 lower-limb biomechanics (stairs, ramps, level ground, treadmill)"),
    version="Mendeley Data v2 (3 parts)",
    url="http://www.epic.gatech.edu/opensource-biomechanics-camargo-et-al",
    files_url=None,
    sha256_url=None,
    licence="CC-BY 4.0",
    citation=(
        "Camargo J, Ramanathan A, Flanagan W, Young A. A comprehensive, open-source dataset "
        "of lower limb biomechanics in multiple conditions of stairs, ramps, and level-ground "
        "ambulation and transitions. J Biomech 119:110320 (2021). "
        "doi:10.1016/j.jbiomech.2021.110320"
    ),
    channels=(
        "imu: trunk, thigh, shank, foot (Accel/Gyro X, Y, Z); gon: hip_sagittal, "
        "hip_frontal, knee_sagittal, ankle_sagittal, ankle_frontal; emg: 11 muscles "
        "(band-pass 20-400 Hz); also fp, gcLeft/gcRight, id, ik, ik_offset, jp, markers"
    ),
    channel_summary="IMU (4 segments), goniometers, EMG (11); mocap, forces",
    rates="IMU 200 Hz; goniometer and EMG 1000 Hz",
    classes=("stand", "walk", "rampascent", "rampdescent", "stairascent", "stairdescent"),
    subjects=22,
    subjects_detail="22 able-bodied adults, AB06-AB30 (no AB22, AB26, AB29)",
    layout="camargo2021/<subject>/<date>/<mode>/<sensor>/<trial>.mat",
    notes=(
        "Not downloadable by medspt: fetch it from the EPIC lab page (Dropbox) or the three "
        "Mendeley Data parts, then point medspt at the folder.",
        "Example file: AB06/10_09_18/levelground/imu/levelground_ccw_normal_01_01.mat; "
        "CSV exports keep the same layout.",
        "Each file holds one MATLAB table; its Header column is time in s, used to align sensors.",
        "Modes: levelground, ramp (6 inclines), stair (4 heights), treadmill (28 speeds in "
        "7 trials), static.",
        "Labels: conditions/<trial>.mat (Header, Label) with states such as stand, walk, "
        "rampascent, walk-stairascent; transitions are dropped and states mapped to "
        "locomotion-mode classes. The readme says 1000 Hz for conditions; one third-party "
        "project found the labels on the 200 Hz IMU time base.",
        "SubjectInfo.mat is a MATLAB table object (MCOS): scipy cannot read it, the "
        "PyPI package mat-io can.",
    ),
    protocol=(
        "CAM-1: IMU (200 Hz) + goniometer (1000 -> 200 Hz) + EMG envelope; windows of 1 s, "
        "stride 0.25 s; locomotion-mode classes (stand, walk, ramp ascent/descent, stair "
        "ascent/descent), transitions dropped; leave-subjects-out folds."
    ),
    get_from=(
        "http://www.epic.gatech.edu/opensource-biomechanics-camargo-et-al",
        "https://doi.org/10.17632/fcgm3chfff.2",
        "https://doi.org/10.17632/k9kvm5tn3f.2",
        "https://doi.org/10.17632/jj3r5f9pnf.2",
    ),
)

DATASETS: dict[str, DatasetInfo] = {d.name: d for d in (GAITPD, NONEEG, CAMARGO)}


def get_info(name: str) -> DatasetInfo:
    """The :class:`DatasetInfo` for ``name`` (a name like ``"gaitpd"`` or an alias like
    ``"gaitpdb"``, ``"camargo2021"``; case-insensitive). Raises :class:`InputError` that
    lists the known names otherwise."""
    key = str(name).strip().lower()
    if key in DATASETS:
        return DATASETS[key]
    for info in DATASETS.values():
        if key in info.aliases:
            return info
    known = ", ".join(
        f"{n} (alias {', '.join(i.aliases)})" if i.aliases else n for n, i in DATASETS.items()
    )
    raise InputError(f"unknown dataset {name!r}; known datasets: {known}")
