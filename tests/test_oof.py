"""Packed out-of-fold predictions: what a study stores is what its report reads."""

import json

import numpy as np

from medspt.api import oof_frame
from medspt.data.windowset import from_arrays
from medspt.study import oof


def test_packed_predictions_round_trip_and_stay_small():
    rng = np.random.default_rng(0)
    n = 600
    X = rng.standard_normal((n, 2, 8)).astype(np.float32)
    y = np.array(["b", "a", "c"])[rng.integers(0, 3, n)]
    groups = np.array([f"S{i:03d}" for i in range(60)])[np.arange(n) % 60]
    ws = from_arrays(X, y, groups)
    te = np.flatnonzero(np.isin(groups, groups[:12]))
    proba = rng.dirichlet([1, 1, 1], size=len(te))
    packed = oof.pack(ws, te, proba)
    back = oof.unpack(packed, ws.classes, config="c", seed=1, fold=3)
    want = oof_frame(ws, te, proba, config="c", seed=1, fold=3)
    assert list(back.columns) == list(want.columns)
    for col in ("config", "seed", "fold", "window", "subject", "label_code", "predicted_code"):
        np.testing.assert_array_equal(back[col].to_numpy(), want[col].to_numpy())
    np.testing.assert_allclose(back.filter(like="proba_"), want.filter(like="proba_"), atol=1e-3)
    plain = {
        "window": te.tolist(),
        "subject": groups[te].tolist(),
        "y": ws.y[te].tolist(),
        "proba": np.round(proba, 4).tolist(),
    }
    assert len(json.dumps(packed)) < 0.6 * len(json.dumps(plain))
    # studies written before packing still read
    old = oof.unpack(plain, ws.classes, fold=3)
    np.testing.assert_array_equal(old["window"], want["window"])
    np.testing.assert_array_equal(old["predicted_code"], np.round(proba, 4).argmax(1))
