"""A model file saved by an earlier version of the package predicts exactly as it did:
the windows cut from the demo recordings and the probabilities are compared with the
ones stored beside the file when it was made (tests/data/make_fixture_model.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import medspt
from medspt.data.synthetic import make_phase_frame

DATA = Path(__file__).parent / "data"


def test_fixture_model_predicts_what_it_predicted_when_saved():
    clf = medspt.load(DATA / "fixture_model.safetensors")
    stored = np.load(DATA / "fixture_predictions.npz", allow_pickle=False)
    ws = clf.frame_windows(make_phase_frame(seed=0))  # the demo data of its time
    np.testing.assert_array_equal(ws.meta["start"].to_numpy(), stored["starts"])
    np.testing.assert_array_equal(ws.X[:8], stored["X"])
    np.testing.assert_allclose(clf.predict_proba(ws.X), stored["proba"], rtol=0, atol=1e-6)
    assert clf.depth == 2 and clf.classes_.tolist() == ["lag", "lead", "sync"]
