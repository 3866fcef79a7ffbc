"""Statistics learnt from training windows only: per-channel mean and std, class weights."""

from __future__ import annotations

import warnings

import numpy as np

__all__ = ["balanced_class_weights", "channel_stats"]


def channel_stats(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel mean and std of windows ``X (N, C, T)``, NaN (missing values, padding)
    ignored; a flat channel gets std 1 (centred only), a channel with no value mean 0."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a channel with no observed value
        mean = np.nanmean(X, axis=(0, 2)).astype(np.float32)  # (C,)
        std = np.nanstd(X, axis=(0, 2)).astype(np.float32)  # (C,)
    mean[~np.isfinite(mean)] = 0.0
    std[~(std > 1e-8)] = 1.0
    return mean, std


def balanced_class_weights(y: np.ndarray, n_classes: int) -> np.ndarray:
    """``n_samples / (n_present_classes * count)`` per class code present in ``y``, 1 for
    absent ones (scikit-learn's ``class_weight="balanced"``), shape ``(n_classes,)``."""
    counts = np.bincount(np.asarray(y, dtype=int), minlength=n_classes).astype(np.float64)
    present = counts > 0
    w = np.ones(n_classes)
    w[present] = len(y) / (present.sum() * counts[present])
    return w.astype(np.float32)
