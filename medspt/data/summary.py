"""What a model is about to be trained on, in words: :class:`DataSummary`.

Built by :meth:`medspt.SPTClassifier.fit` (``clf.data_summary_``) and printed by the
command line before training, so a wrong channel, sampling rate or window shows up before
minutes of training rather than after.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

# a channel whose pretraining loss at the kept epoch is above this share of predicting each
# window's visible mean has learned (next to) nothing: fit warns, the summary marks it
NOT_LEARNED = 0.95


def case_lengths(X: np.ndarray) -> np.ndarray:
    """Real length of every window or case of ``X (N, C, T)``: ``T`` minus its trailing
    steps missing in every channel (the padding of shorter cases), ``(N,)``."""
    observed = ~np.isnan(X).all(axis=1)  # (N, T)
    last = X.shape[2] - np.argmax(observed[:, ::-1], axis=1)  # one past the last observed
    return np.where(observed.any(axis=1), last, 0)


def dropouts_text(dropped: dict | None, fs: float | None = None) -> str | None:
    """What cutting a table into windows left out or split (``WindowSet.dropped``), in
    one sentence; None when nothing was. Durations in seconds at rate ``fs`` (or from
    the ``seconds`` entries), else in samples."""
    if not dropped:
        return None

    def span(samples_key: str, seconds_key: str) -> str:
        seconds = dropped.get(seconds_key)
        if seconds is None and fs:
            seconds = dropped.get(samples_key, 0) / fs
        return f"{seconds:.4g} s" if seconds is not None else f"{dropped[samples_key]} samples"

    parts = []
    if dropped.get("windows"):
        parts.append(
            f"{dropped['windows']} windows dropped for too many missing values "
            f"({span('samples', 'seconds')})"
        )
    if dropped.get("windows_channel_missing"):
        parts.append(
            f"{dropped['windows_channel_missing']} windows kept with a channel missing throughout"
        )
    if dropped.get("recordings_split"):
        parts.append(
            f"{dropped['recordings_split']} recording(s) split at gaps "
            f"({span('gap_samples', 'gap_seconds')} without any value)"
        )
    subjects = dropped.get("subjects") or []
    if subjects:
        parts.append(
            f"{len(subjects)} subject(s) dropped without any window: "
            + ", ".join(map(repr, subjects))
        )
    return "; ".join(parts) or None


@dataclass
class DataSummary:
    """Channels, sampling rate, window and class/subject counts of a training set.

    Attributes
    ----------
    channels : list of str
        Signal columns, in model order.
    left_out : dict
        Columns of the DataFrame that are not channels, with the reason (empty for arrays).
    fs : float or None
        Sampling rate in Hz; ``fs_source`` says where it came from.
    n_steps : int
        Window length in samples (the longest case for one case per recording).
    lengths : tuple of int
        Shortest, median and longest real window/case length in samples.
    per_class : dict
        ``{class: (windows, subjects)}``.
    per_subject : tuple of int
        Fewest, median and most windows of a subject.
    auto : dict
        Settings chosen from the data (``"auto"`` values).
    n_validation_subjects : int
        Training subjects held out for early stopping.
    validation_per_fold : list of int or None
        With cross-validation: the training subjects each fold holds out for early stopping.
    pretraining : dict or None
        After a fit that pretrained: the reconstruction loss at the kept epoch relative to
        predicting each window's visible mean (``"relative"``, and ``"channels"``:
        ``{channel: value}``, None where a channel had nothing to predict), where it was
        measured (``"measured_on"``) and over how many ensemble ``"members"``.
    windows_dropped, samples_dropped : int
        Windows (or cases) left out for more than ``max_missing`` of their values missing,
        and the samples they cover (overlaps counted once).
    windows_channel_missing : int
        Windows kept although a channel is missing throughout them.
    recordings_split, gap_samples : int
        Recordings split at gaps of a window or more without any value, and the samples
        of those gaps.
    subjects_dropped : list
        Subjects left out for want of any window.
    """

    channels: list[str]
    n_windows: int
    n_subjects: int
    n_steps: int
    lengths: tuple[int, int, int]
    per_class: dict
    per_subject: tuple[int, int, int]
    fs: float | None = None
    fs_source: str = "not given"
    left_out: dict = field(default_factory=dict)
    auto: dict = field(default_factory=dict)
    n_validation_subjects: int = 0
    validation_per_fold: list[int] | None = None
    pretraining: dict | None = None
    windows_dropped: int = 0
    samples_dropped: int = 0
    windows_channel_missing: int = 0
    recordings_split: int = 0
    gap_samples: int = 0
    subjects_dropped: list = field(default_factory=list)

    @classmethod
    def from_windows(
        cls,
        X: np.ndarray,
        labels: np.ndarray,
        groups: np.ndarray,
        channels: list[str],
        *,
        fs: float | None = None,
        fs_source: str | None = None,
        left_out: dict | None = None,
        dropped: dict | None = None,
    ) -> DataSummary:
        """Summary of windows ``X (N, C, T)`` with class ``labels`` and subject ``groups``;
        ``dropped``: what cutting them left out (``WindowSet.dropped``)."""
        lengths = case_lengths(X)
        per_class = {}
        for c in np.unique(labels):
            sel = labels == c
            per_class[c.item() if hasattr(c, "item") else c] = (
                int(sel.sum()),
                len(np.unique(groups[sel])),
            )
        _, counts = np.unique(groups, return_counts=True)
        summary = cls(
            channels=list(channels),
            n_windows=len(X),
            n_subjects=len(counts),
            n_steps=int(X.shape[2]),
            lengths=(int(lengths.min()), int(np.median(lengths)), int(lengths.max())),
            per_class=per_class,
            per_subject=(int(counts.min()), int(np.median(counts)), int(counts.max())),
            fs=fs,
            fs_source=fs_source or ("given" if fs is not None else "not given"),
            left_out=dict(left_out or {}),
        )
        summary.set_dropped(dropped)
        return summary

    @classmethod
    def of(cls, ws) -> DataSummary:
        """Summary of a labelled :class:`~medspt.data.windowset.WindowSet`."""
        return cls.from_windows(
            ws.X,
            ws.labels,
            ws.groups,
            list(ws.channels),
            fs=ws.fs,
            fs_source=getattr(ws, "fs_source", None),
            left_out=getattr(ws, "left_out", None),
            dropped=getattr(ws, "dropped", None),
        )

    def set_dropped(self, dropped: dict | None) -> None:
        """Take the counts of what cutting left out or split from ``WindowSet.dropped``
        (:meth:`medspt.data.windowing.Cases.counts`); nothing for None or ``{}``."""
        if not dropped:
            return
        self.windows_dropped = int(dropped.get("windows", 0))
        self.samples_dropped = int(dropped.get("samples", 0))
        self.windows_channel_missing = int(dropped.get("windows_channel_missing", 0))
        self.recordings_split = int(dropped.get("recordings_split", 0))
        self.gap_samples = int(dropped.get("gap_samples", 0))
        self.subjects_dropped = list(dropped.get("subjects", []))

    def _seconds(self, n: int) -> str:
        return f" = {n / self.fs:g} s" if self.fs else ""

    def dropout_line(self) -> str | None:
        """``"dropouts: ..."``: what cutting left out or split, in one line
        (:func:`dropouts_text`); None when nothing was."""
        text = dropouts_text(
            {
                "windows": self.windows_dropped,
                "samples": self.samples_dropped,
                "windows_channel_missing": self.windows_channel_missing,
                "recordings_split": self.recordings_split,
                "gap_samples": self.gap_samples,
                "subjects": self.subjects_dropped,
            },
            self.fs,
        )
        return "dropouts: " + text if text else None

    def _pretraining_lines(self) -> list[str]:
        """The pretraining line (none before a fit that pretrained): the loss relative to
        the visible-mean baseline, pooled and per channel, the channels that did not learn
        marked."""
        p = self.pretraining
        if not p:
            return []

        def shown(v) -> str:
            return "–" if v is None else f"{v:.2f}"

        parts = [
            f"{c} {shown(v)}" + (" ← did not learn" if v is not None and v > NOT_LEARNED else "")
            for c, v in p["channels"].items()
        ]
        members = f", mean of {p['members']} members" if p.get("members", 1) > 1 else ""
        return [
            f"pretraining: reconstruction loss {shown(p['relative'])} of the visible-mean "
            f"baseline on the {p['measured_on']}{members} ({', '.join(parts)})"
        ]

    def __str__(self) -> str:
        lo, med, hi = self.lengths
        if lo == hi:
            window = f"{self.n_steps} samples{self._seconds(self.n_steps)}"
        else:
            window = (
                f"one case per recording, {lo}-{hi} samples (median {med}); shorter ones "
                f"padded to {self.n_steps}"
            )
        rate = "unknown" if self.fs is None else f"{self.fs:g} Hz"
        lines = [
            f"channels ({len(self.channels)}): {', '.join(map(str, self.channels))}",
        ]
        # the named key columns (subject, label, ...) on one line, other columns with why
        keys = {c: w for c, w in self.left_out.items() if w.split(" (")[0].endswith(" column")}
        others = {c: w for c, w in self.left_out.items() if c not in keys}
        if keys:
            lines.append(
                "key columns: " + ", ".join(f"{c} ({w.split(' (')[0]})" for c, w in keys.items())
            )
        if others:
            lines.append("left out: " + "; ".join(f"{c} ({why})" for c, why in others.items()))
        lines += [
            f"sampling rate: {rate} ({self.fs_source})",
            f"window: {window}",
            f"{self.n_windows} windows from {self.n_subjects} subjects "
            f"({self.per_subject[0]}-{self.per_subject[2]} per subject, median "
            f"{self.per_subject[1]})",
            "per class: "
            + ", ".join(f"{c}: {w} windows / {s} subjects" for c, (w, s) in self.per_class.items()),
        ]
        dropouts = self.dropout_line()
        if dropouts:
            lines.append(dropouts)
        if self.auto:
            lines.append(
                "chosen from the data: " + ", ".join(f"{k}={v}" for k, v in self.auto.items())
            )
        n_val = self.n_validation_subjects
        per_fold = self.validation_per_fold
        if per_fold is not None:  # cross-validation: each fold holds out its own
            shown = ", ".join(map(str, per_fold))
            lines.append(
                f"validation: per fold, training subjects held out for early stopping ({shown})"
                if any(per_fold)
                else "validation: none in any fold (all epochs run, final weights kept)"
            )
            return "\n".join(lines + self._pretraining_lines())
        lines.append(
            f"validation: {n_val} training subject{'s' if n_val > 1 else ''} held out for "
            "early stopping"
            if n_val
            else "validation: none (all epochs run, final weights kept)"
        )
        return "\n".join(lines + self._pretraining_lines())

    def to_dict(self) -> dict:
        """Plain values (JSON-ready apart from numpy scalars)."""
        return {
            "channels": self.channels,
            "n_windows": self.n_windows,
            "n_subjects": self.n_subjects,
            "n_steps": self.n_steps,
            "lengths": list(self.lengths),
            "per_class": {str(k): list(v) for k, v in self.per_class.items()},
            "per_subject": list(self.per_subject),
            "fs": self.fs,
            "fs_source": self.fs_source,
            "left_out": self.left_out,
            "auto": self.auto,
            "n_validation_subjects": self.n_validation_subjects,
            "pretraining": self.pretraining,
            "windows_dropped": self.windows_dropped,
            "samples_dropped": self.samples_dropped,
            "windows_channel_missing": self.windows_channel_missing,
            "recordings_split": self.recordings_split,
            "gap_samples": self.gap_samples,
            "subjects_dropped": list(self.subjects_dropped),
        }

    @classmethod
    def from_dict(cls, d: dict) -> DataSummary:
        """Inverse of :meth:`to_dict` (class names come back as strings)."""
        d = dict(d)
        d["lengths"] = tuple(d["lengths"])
        d["per_subject"] = tuple(d["per_subject"])
        d["per_class"] = {k: tuple(v) for k, v in d["per_class"].items()}
        return cls(**d)
