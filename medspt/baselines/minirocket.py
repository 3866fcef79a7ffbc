"""aeon's MiniRocket on medspt windows (input rules: :mod:`medspt.baselines._base`)."""

from __future__ import annotations

import numpy as np

from medspt.baselines._base import RocketBaseline

__all__ = ["MiniRocket"]


class MiniRocket(RocketBaseline):
    """aeon's ``MiniRocketClassifier`` (10,000 kernels, scaler, ``RidgeClassifierCV``)
    with medspt's input rules and softmax scores.

    Parameters
    ----------
    random_state : int, default=0
        Seed of the random kernels.
    n_jobs : int, default=1
        Threads aeon may use.
    class_weight : "balanced" or None, default="balanced"
        The ridge's class weights (medspt's estimator also balances classes).
    """

    name = "minirocket"
    min_steps = 9

    def _make(self):
        from aeon.classification.convolution_based import MiniRocketClassifier

        return MiniRocketClassifier(
            random_state=self.random_state, n_jobs=self.n_jobs, class_weight=self.class_weight
        )

    def _decision(self, X: np.ndarray) -> np.ndarray:
        # the classifier's own pipeline (transform, scaler, ridge) up to its decision values
        return self.estimator_.pipeline_.decision_function(X)
