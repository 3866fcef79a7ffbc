"""The estimator layer: a scikit-learn classifier around the model.

- :mod:`medspt.estimator.classifier`: :class:`SPTClassifier` (``fit`` is a pipeline:
  check -> split -> normalize -> pretrain -> fine-tune -> recover) and frame predictions;
- :mod:`medspt.estimator.auto`: data-aware ``"auto"`` values;
- :mod:`medspt.estimator.metrics`: window- and subject-level metrics, chance levels,
  confusion matrices, predictions tables;
- :mod:`medspt.estimator.model_file`: the model file format (JSON + tensors, never
  pickle);
- :mod:`medspt.estimator.persistence`: what a classifier's file holds, saving and loading.

Baselines (MiniRocket, MultiRocket-Hydra) live in :mod:`medspt.baselines`.
"""

from medspt.estimator.classifier import (
    PAPER_RECIPE,
    FramePredictions,
    SPTClassifier,
    TrainingData,
)
from medspt.estimator.persistence import load

__all__ = ["SPTClassifier", "FramePredictions", "TrainingData", "load", "PAPER_RECIPE"]
