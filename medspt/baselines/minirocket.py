"""aeon's MiniRocket on medspt windows (input rules: :mod:`medspt.baselines._base`)."""

from __future__ import annotations

import numpy as np

from medspt.baselines._base import RocketBaseline

__all__ = ["MiniRocket"]


class MiniRocket(RocketBaseline):
    """aeon's ``MiniRocketClassifier`` (10,000 kernels, scaler, ``RidgeClassifierCV``)
    with medspt's input rules and softmax scores.

    Parameters: those of :class:`~medspt.baselines.RocketBaseline`.
    """

    name = "minirocket"
    min_steps = 9

    aeon_class = "MiniRocketClassifier"

    def _decision(self, X: np.ndarray) -> np.ndarray:
        # the classifier's own pipeline (transform, scaler, ridge) up to its decision values
        return self.estimator_.pipeline_.decision_function(X)
