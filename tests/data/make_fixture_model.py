"""How ``fixture_model.safetensors`` and ``fixture_predictions.npz`` were made.

Run once, before the package's internals were reorganised, and committed: the test
``tests/test_fixture_model.py`` checks that today's code loads that file, cuts the demo
recordings into the same windows and predicts the same probabilities. Do not re-run it
to make a failing test pass; a difference means behaviour changed. The demo recordings of
that time are :func:`medspt.data.synthetic.make_phase_frame` today (the demo has a task
MiniRocket can solve since).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import medspt
from medspt.data.synthetic import make_phase_frame

HERE = Path(__file__).parent


def main() -> None:
    df = make_phase_frame(seed=0)
    clf = medspt.fit_spt(
        df, window="4s", stride="2s", d_model=16, n_heads=2, depth=2, epochs=3,
        pretrain_epochs=2, min_steps=0, random_state=0, verbose=False,
    )  # fmt: skip
    clf.save(HERE / "fixture_model.safetensors")
    ws = clf.frame_windows(df)
    np.savez_compressed(
        HERE / "fixture_predictions.npz",
        proba=clf.predict_proba(ws.X),
        X=ws.X[:8],
        starts=ws.meta["start"].to_numpy(),
    )


if __name__ == "__main__":
    main()
