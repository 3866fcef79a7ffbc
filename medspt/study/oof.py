"""Out-of-fold predictions packed small enough for a trial's attributes.

A study keeps every test window's prediction so that its report can test over subjects.
As JSON lists they would make up most of a study's storage, so each fold's arrays are
stored as one compressed ``.npz`` in base64 (numbers only: loading unpickles nothing):
the gaps between sorted window indices, subject codes into the fold's subject list, true
and predicted class codes in the smallest integer type that holds them, and the
probabilities of all classes but the last as float16 (the last is one minus their sum;
the prediction is kept exactly beside them).
"""

from __future__ import annotations

import base64
import io

import numpy as np
import pandas as pd

from medspt.estimator.metrics import predictions_frame

__all__ = ["pack", "unpack"]


def pack(ws, test_idx: np.ndarray, proba: np.ndarray) -> dict:
    """A fold's out-of-fold predictions (``proba`` in the order of ``ws.classes``)."""
    te = np.asarray(test_idx)
    order = np.argsort(te, kind="stable")  # sorted, the gaps are small numbers
    te, proba = te[order], np.asarray(proba)[order]
    subjects, codes = np.unique(ws.groups[te].astype(str), return_inverse=True)
    buf = io.BytesIO()
    np.savez_compressed(
        buf,
        window=_small(np.diff(te, prepend=0)),
        subject=_small(codes),
        y=_small(ws.y[te]),
        pred=_small(proba.argmax(1)),
        proba=proba[:, :-1].astype(np.float16),
    )
    return {"subjects": subjects.tolist(), "npz": base64.b64encode(buf.getvalue()).decode()}


def _small(a: np.ndarray) -> np.ndarray:
    """Non-negative integers in the smallest unsigned type that holds them."""
    a = np.asarray(a, dtype=np.int64)
    top = int(a.max(initial=0))
    for t in (np.uint8, np.uint16, np.uint32):
        if top <= np.iinfo(t).max:
            return a.astype(t)
    return a


def unpack(oof: dict, classes, **keys) -> pd.DataFrame:
    """The predictions frame of a packed fold (or of the plain lists of earlier studies)."""
    if "npz" in oof:
        with np.load(io.BytesIO(base64.b64decode(oof["npz"])), allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        subject = np.asarray(oof["subjects"])[arrays["subject"]]
        head = arrays["proba"].astype(float)
        proba = np.column_stack([head, 1.0 - head.sum(axis=1)])
        return predictions_frame(
            np.cumsum(arrays["window"].astype(np.int64)),
            subject,
            arrays["y"].astype(np.int64),
            proba,
            classes,
            pred=arrays["pred"].astype(np.int64),
            **keys,
        )
    proba = np.asarray(oof["proba"], dtype=float).reshape(len(oof["window"]), len(classes))
    return predictions_frame(oof["window"], oof["subject"], oof["y"], proba, classes, **keys)
