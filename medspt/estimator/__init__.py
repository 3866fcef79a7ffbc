"""The estimator layer: a scikit-learn classifier around the model.

- :mod:`medspt.estimator.classifier`: :class:`SPTClassifier` (``fit`` is a pipeline:
  check -> split -> normalize -> pretrain -> fine-tune -> recover) and frame predictions;
- :mod:`medspt.estimator.auto`: data-aware ``"auto"`` values;
- :mod:`medspt.estimator.metrics`: window- and subject-level metrics, chance levels,
  confusion matrices, predictions tables;
- :mod:`medspt.estimator.model_file`: the model file format (JSON + tensors, never
  pickle);
- :mod:`medspt.estimator.persistence`: what a classifier's file holds, saving and loading.

Baselines (MiniRocket, MultiRocket-Hydra) live in :mod:`medspt.baselines`. The public
names load on first use, so that reading stored results (metrics, predictions tables) does
not load PyTorch.
"""

from typing import TYPE_CHECKING

from medspt.core.lazy import lazy_exports

if TYPE_CHECKING:  # what the lazy names are, for readers and type checkers
    from medspt.estimator.classifier import (
        PAPER_RECIPE,
        FramePredictions,
        SPTClassifier,
        TrainingData,
    )
    from medspt.estimator.persistence import load

_EXPORTS = {
    "SPTClassifier": "medspt.estimator.classifier",
    "FramePredictions": "medspt.estimator.classifier",
    "TrainingData": "medspt.estimator.classifier",
    "PAPER_RECIPE": "medspt.estimator.classifier",
    "load": "medspt.estimator.persistence",
}
__all__ = ["SPTClassifier", "FramePredictions", "TrainingData", "load", "PAPER_RECIPE"]
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
