"""What a model is about to be trained on, in words: :class:`DataSummary`.

Built by :meth:`medspt.SPTClassifier.fit` (``clf.data_summary_``) and printed by the
command line before training, so a wrong channel, sampling rate or window shows up before
minutes of training rather than after.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


def case_lengths(X: np.ndarray) -> np.ndarray:
    """Real length of every window or case of ``X (N, C, T)``: ``T`` minus its trailing
    steps missing in every channel (the padding of shorter cases), ``(N,)``."""
    observed = ~np.isnan(X).all(axis=1)  # (N, T)
    last = X.shape[2] - np.argmax(observed[:, ::-1], axis=1)  # one past the last observed
    return np.where(observed.any(axis=1), last, 0)


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
    ) -> DataSummary:
        """Summary of windows ``X (N, C, T)`` with class ``labels`` and subject ``groups``."""
        lengths = case_lengths(X)
        per_class = {}
        for c in np.unique(labels):
            sel = labels == c
            per_class[c.item() if hasattr(c, "item") else c] = (
                int(sel.sum()),
                len(np.unique(groups[sel])),
            )
        _, counts = np.unique(groups, return_counts=True)
        return cls(
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
        )

    def _seconds(self, n: int) -> str:
        return f" = {n / self.fs:g} s" if self.fs else ""

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
            return "\n".join(lines)
        lines.append(
            f"validation: {n_val} training subject{'s' if n_val > 1 else ''} held out for "
            "early stopping"
            if n_val
            else "validation: none (all epochs run, final weights kept)"
        )
        return "\n".join(lines)

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
        }

    @classmethod
    def from_dict(cls, d: dict) -> DataSummary:
        """Inverse of :meth:`to_dict` (class names come back as strings)."""
        d = dict(d)
        d["lengths"] = tuple(d["lengths"])
        d["per_subject"] = tuple(d["per_subject"])
        d["per_class"] = {k: tuple(v) for k, v in d["per_class"].items()}
        return cls(**d)
