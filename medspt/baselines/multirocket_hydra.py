"""aeon's MultiRocket-Hydra on medspt windows (input rules: :mod:`medspt.baselines._base`)."""

from __future__ import annotations

import numpy as np

from medspt.baselines._base import RocketBaseline

__all__ = ["MultiRocketHydra"]


class MultiRocketHydra(RocketBaseline):
    """aeon's ``MultiRocketHydraClassifier`` (Hydra and MultiRocket features, scaled,
    ``RidgeClassifierCV``) with medspt's input rules and softmax scores.

    Parameters: those of :class:`~medspt.baselines.RocketBaseline`.
    """

    name = "multirocket-hydra"
    min_steps = 10  # MultiRocket's dilations need 10 steps

    aeon_class = "MultiRocketHydraClassifier"

    def _decision(self, X: np.ndarray) -> np.ndarray:
        # aeon 1.6's _predict up to the ridge's decision values (same fitted steps)
        c = self.estimator_
        hydra = c._scale_hydra.transform(c._transform_hydra.transform(X))
        multi = c._scale_multirocket.transform(c._transform_multirocket.transform(X))
        return c.classifier.decision_function(np.concatenate((hydra, multi), axis=1))
