"""Saving and loading fitted classifiers.

:func:`load` is :func:`medspt.load` and :func:`save_model` is
:meth:`SPTClassifier.save <medspt.SPTClassifier.save>`. The file format (a JSON
description plus tensors in one safetensors file; loading never unpickles anything) is
read and written by :mod:`medspt.estimator.model_file`; :mod:`medspt.estimator.classifier`
decides what a
classifier's file holds.
"""

from __future__ import annotations

from medspt.estimator.classifier import SPTClassifier, load
from medspt.estimator.model_file import FORMAT_VERSION

__all__ = ["save_model", "load", "FORMAT_VERSION"]


def save_model(est: SPTClassifier, path) -> None:
    """Save a fitted :class:`~medspt.SPTClassifier` to ``path`` (``.safetensors``); the
    same as ``est.save(path)``."""
    est.save(path)
