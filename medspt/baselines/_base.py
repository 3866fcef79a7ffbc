"""What aeon's convolution classifiers share in medspt: input rules, scores, refusals.

aeon's MiniRocket and MultiRocket-Hydra take neither unequal lengths nor missing values
(their ``capability:unequal_length`` and ``capability:missing_values`` tags are False).
medspt's windows mark both with NaN, so before handing windows to aeon a baseline:

1. holds each case at its last observed value over its trailing padding (an
   unequal-length case; aeon's ``Padder(fill_value="last")`` does the same);
2. fills gaps inside a case by linear interpolation between the observed values around
   them (a gap at the start takes the first observed value);
3. fills a channel that a case never observed with that channel's mean over the training
   windows (a training-fold statistic, like the model's);
4. standardizes each channel by its mean and standard deviation over the training windows
   (:func:`medspt.core.stats.channel_stats`, the estimator's own statistics), so that
   channels in different units mix on equal terms in multivariate kernels.

It refuses, by name, what it cannot take: windows shorter than the classifier's shortest
input (a shorter case inside longer windows is held at its last value), infinite values,
a channel observed in no training window, fewer than two classes.
Scores are softmax probabilities of the ridge classifier's decision values, so a
subject's windows can be averaged exactly as medspt's model's are.

aeon's kernels run on Numba's OpenMP thread pool, whose ``omp_set_num_threads`` resolves to
the first ``libgomp.so.1`` in the process: PyTorch's. Left alone, one MiniRocket fit raises
PyTorch's thread count (``OMP_NUM_THREADS=1`` becomes the number of cores) for the rest of the
process, and on a busy machine every later model fit slows down many times over. Every call
into aeon therefore restores the thread counts it found (:func:`kept_thread_counts`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import ClassVar

import numpy as np
import pandas as pd
from scipy.special import softmax
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted
from threadpoolctl import threadpool_limits

from medspt.core.errors import InputError
from medspt.core.stats import channel_stats

__all__ = ["RocketBaseline", "fill_missing", "kept_thread_counts", "scores_to_proba"]


@contextmanager
def kept_thread_counts() -> Iterator[None]:
    """Run the block, then set every native thread pool loaded before it (PyTorch's OpenMP
    among them) back to the thread count it had."""
    with threadpool_limits(limits=None):  # no limit: only the restore on exit
        yield


def fill_missing(X: np.ndarray, channel_fill: np.ndarray) -> np.ndarray:
    """Windows ``X (N, C, T)`` without NaN, by the rules of this module's docstring.

    ``channel_fill (C,)`` is the value of a channel a case never observed (the training
    windows' channel means)."""
    N, C, T = X.shape
    flat = pd.DataFrame(X.reshape(N * C, T).T.astype(np.float64))  # (T, N*C): one column per series
    # linear inside, first/last observed value held at the edges (trailing padding)
    flat = flat.interpolate(method="linear", axis=0, limit_direction="both")
    out = flat.to_numpy().T.reshape(N, C, T)
    never = np.isnan(out)
    if never.any():
        out = np.where(never, np.asarray(channel_fill, dtype=np.float64)[None, :, None], out)
    return out


def scores_to_proba(scores: np.ndarray) -> np.ndarray:
    """Softmax of linear decision values ``(N,)`` (two classes: the score of the second)
    or ``(N, K)`` as ``(N, K)`` probabilities."""
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim == 1:
        scores = np.stack([-scores, scores], axis=1)
    return softmax(scores, axis=1)


class RocketBaseline(ClassifierMixin, BaseEstimator):
    """An aeon convolution classifier on medspt windows (subclasses name the classifier).

    Parameters
    ----------
    random_state : int, default=0
        Seed of the random kernels.
    n_jobs : int, default=1
        Threads aeon may use (1 keeps runs reproducible and polite on a shared machine).
    class_weight : "balanced" or None, default="balanced"
        The ridge's class weights; "balanced" like medspt's estimator, so that both are
        judged on balanced accuracy on the same terms.

    Attributes
    ----------
    classes_ : ndarray
        Class labels, sorted.
    estimator_ : aeon classifier
        The fitted aeon classifier.
    channel_mean_, channel_std_ : ndarray (C,)
        Training windows' channel statistics: the fill of a channel a case never observed,
        and the standardization.
    n_steps_ : int
        Window length seen in ``fit``; ``predict`` takes the same.
    filled_fraction_ : float
        Share of training values that were NaN and filled.
    """

    name: ClassVar[str] = ""  # the baseline's name in results ("minirocket", ...)
    min_steps: ClassVar[int] = 9  # shortest window the aeon classifier takes

    def __init__(self, random_state: int = 0, n_jobs: int = 1, class_weight="balanced"):
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.class_weight = class_weight

    aeon_class: ClassVar[str] = ""  # the classifier's name in aeon.classification.convolution_based

    def _make(self):
        from aeon.classification import convolution_based

        cls = getattr(convolution_based, self.aeon_class)
        return cls(
            random_state=self.random_state, n_jobs=self.n_jobs, class_weight=self.class_weight
        )

    # subclasses: the decision values of filled windows

    def _decision(self, X: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _check_X(self, X, where: str) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 3:
            raise InputError(
                f"{self.name}: X must be windows of shape (N, channels, steps); got shape {X.shape}"
            )
        if np.isinf(X).any():
            raise InputError(
                f"{self.name}: X has infinite values in {where}; replace them with NaN "
                "(missing) or finite values first"
            )
        if X.shape[2] < self.min_steps:
            raise InputError(
                f"{self.name} needs windows of at least {self.min_steps} steps (aeon's "
                f"shortest input); {where} have {X.shape[2]}. Use a longer window (window=...) "
                "or leave the baseline out (baselines=())"
            )
        return X

    def _prepare(self, X: np.ndarray) -> np.ndarray:
        """Filled and standardized windows, as aeon gets them."""
        filled = fill_missing(X, self.channel_mean_)
        return (filled - self.channel_mean_[None, :, None]) / self.channel_std_[None, :, None]

    def fit(self, X, y) -> RocketBaseline:
        """Fit on windows ``X (N, C, T)`` (NaN = missing) and labels ``y (N,)``."""
        X = self._check_X(X, "the training windows")
        y = np.asarray(y)
        if len(y) != len(X):
            raise InputError(f"{self.name}: {len(X)} windows but {len(y)} labels")
        if len(np.unique(y)) < 2:
            raise InputError(f"{self.name} needs at least 2 classes in the training windows")
        never = np.isnan(X).all(axis=(0, 2))  # (C,)
        if never.any():
            missing = np.flatnonzero(never).tolist()
            raise InputError(
                f"{self.name}: channel(s) {missing} have no observed value in any training "
                "window; leave those channels out (channels=[...] naming the others)"
            )
        self.channel_mean_, self.channel_std_ = channel_stats(X)
        self.n_steps_ = X.shape[2]
        self.filled_fraction_ = float(np.isnan(X).mean())
        with kept_thread_counts():
            self.estimator_ = self._make().fit(self._prepare(X), y)
        self.classes_ = np.asarray(self.estimator_.classes_)
        return self

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities ``(N, n_classes)``, columns in the order of ``classes_``."""
        check_is_fitted(self, "estimator_")
        X = self._check_X(X, "the windows to predict")
        if X.shape[2] != self.n_steps_:
            raise InputError(
                f"{self.name} was fitted on windows of {self.n_steps_} steps; got {X.shape[2]}"
            )
        with kept_thread_counts():
            decision = self._decision(self._prepare(X))
        return scores_to_proba(decision)

    def predict(self, X) -> np.ndarray:
        """Class labels ``(N,)``: the most probable class."""
        return self.classes_[self.predict_proba(X).argmax(1)]
