"""Saving and loading fitted classifiers: what a classifier's model file holds.

:func:`load` is :func:`medspt.load`; :func:`save_model` is
:meth:`SPTClassifier.save <medspt.SPTClassifier.save>`. The file format itself (a JSON
description plus tensors in one safetensors file; loading never unpickles anything) is read
and written by :mod:`medspt.estimator.model_file`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from medspt.data.summary import DataSummary
from medspt.data.windowset import WindowSpec
from medspt.estimator.classifier import SPTClassifier
from medspt.estimator.model_file import FORMAT_VERSION, classes_from_json, read_model_file

__all__ = ["save_model", "load", "FORMAT_VERSION"]


def save_model(est: SPTClassifier, path) -> None:
    """Save a fitted :class:`~medspt.SPTClassifier` to ``path`` (``.safetensors``); the
    same as ``est.save(path)``."""
    est.save(path)


def load(path: str | Path) -> SPTClassifier:
    """Load a model saved with :meth:`SPTClassifier.save`.

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    ModelFileError
        The file is truncated or corrupt, is not a medspt model, or was written by a newer
        medspt whose format this version cannot read.
    """
    meta, members = read_model_file(path)
    params = dict(meta["params"])
    params.setdefault("embedding", "patch")  # files from before the conv tokenizer
    if isinstance(params.get("masking"), str) and params["masking"].startswith("<callable"):
        params["masking"] = "span"  # the callable itself is not stored; refit to reuse it
    est = SPTClassifier(**params)
    est.model_, est.members_ = members[0], members
    est.attention_ = est.model_.config.attention
    est.classes_ = classes_from_json(meta["classes"])
    est.channels_ = list(meta["channels"])
    est.n_steps_ = int(meta["n_steps"])
    est.n_features_in_ = int(meta["n_features_in"])
    est.mean_ = np.asarray(meta["mean"], dtype=np.float32)
    est.std_ = np.asarray(meta["std"], dtype=np.float32)
    fs = meta.get("frame_spec")
    est.frame_spec_ = WindowSpec.from_dict(fs) if fs else None
    est.history_ = meta.get("history", {})
    est.best_epoch_ = meta.get("best_epoch", {})
    # files written before these were kept: a window=None model may have seen any length
    padded = est.frame_spec_ is not None and est.frame_spec_.window is None
    est.min_length_ = int(meta.get("min_length", 1 if padded else est.n_steps_))
    est.auto_params_ = dict(meta.get("auto_params") or {})
    est.patch_len_ = int(est.model_.config.patch_len)
    est.positional_ = est.model_.config.positional
    est.batch_size_ = est.auto_params_.get("batch_size", params.get("batch_size"))
    est.n_estimators_ = len(members)
    summary = meta.get("data_summary")
    est.data_summary_ = DataSummary.from_dict(summary) if summary else None
    est.evaluation_ = meta.get("evaluation")
    relative = meta.get("pretrain_relative")  # files before it: None, as without pretraining
    est.pretrain_relative_ = (
        None if relative is None else {c: np.nan if v is None else v for c, v in relative.items()}
    )
    return est
