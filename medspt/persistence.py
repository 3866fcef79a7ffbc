"""Model files: a JSON description plus tensors, in one safetensors file.

Loading never unpickles anything: safetensors holds raw tensors and a string-to-string
metadata table, where we keep the JSON (estimator parameters, model config, classes,
normalization statistics, windowing spec, training history).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from safetensors import SafetensorError, safe_open
from safetensors.torch import save_file

from medspt._version import __version__
from medspt.core.jsonable import to_jsonable
from medspt.data import WindowSpec
from medspt.data_summary import DataSummary
from medspt.errors import ModelFileError
from medspt.model import ModelConfig, SPTTransformer

FORMAT = "medspt-model"
FORMAT_VERSION = 1

__all__ = ["save_model", "load", "FORMAT_VERSION"]


def _classes_to_json(classes: np.ndarray) -> dict:
    kind = "str" if classes.dtype.kind in "OUS" else classes.dtype.str
    return {"dtype": kind, "values": to_jsonable(classes)}


def _classes_from_json(d: dict) -> np.ndarray:
    if d["dtype"] == "str":
        return np.asarray(d["values"], dtype=object)
    return np.asarray(d["values"], dtype=np.dtype(d["dtype"]))


def save_model(est, path) -> None:
    """Save a fitted :class:`~medspt.SPTClassifier` to ``path`` (``.safetensors``)."""
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(est, "model_")
    params = est.get_params()
    if callable(params.get("masking")):
        params["masking"] = f"<callable {getattr(params['masking'], '__name__', '?')}>"
    classes = np.asarray(est.classes_)
    if classes.dtype.kind not in "biufOUS":
        raise ModelFileError(f"cannot save classes of dtype {classes.dtype}")
    meta = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "medspt_version": __version__,
        "params": to_jsonable(params),
        "model_config": est.model_.config.to_dict(),
        "classes": _classes_to_json(classes),
        "channels": list(est.channels_),
        "n_steps": int(est.n_steps_),
        "n_features_in": int(est.n_features_in_),
        "mean": to_jsonable(est.mean_),
        "std": to_jsonable(est.std_),
        "frame_spec": est.frame_spec_.to_dict() if est.frame_spec_ is not None else None,
        "history": to_jsonable(est.history_),
        "best_epoch": to_jsonable(est.best_epoch_),
        "min_length": int(getattr(est, "min_length_", est.n_steps_)),
        "auto_params": to_jsonable(getattr(est, "auto_params_", {})),
        "data_summary": to_jsonable(est.data_summary_.to_dict())
        if getattr(est, "data_summary_", None) is not None
        else None,
        # how the model was chosen and scored when it came from a refit (evaluate/study)
        "evaluation": to_jsonable(getattr(est, "evaluation_", None)),
    }
    members = getattr(est, "members_", None) or [est.model_]
    meta["n_members"] = len(members)
    state = {}
    for m, model in enumerate(members):  # member 0 unprefixed, as in single-model files
        prefix = "" if m == 0 else f"member{m}."
        for k, v in model.state_dict().items():
            state[prefix + k] = v.detach().cpu().contiguous()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_file(state, str(path), metadata={"medspt": json.dumps(meta)})


def load(path):
    """Load a model saved with :meth:`SPTClassifier.save`.

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    ModelFileError
        The file is truncated or corrupt, is not a medspt model, or was written by a newer
        medspt whose format this version cannot read.
    """
    from medspt.estimator import SPTClassifier

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"model file {str(path)!r} does not exist")
    try:
        with safe_open(str(path), framework="pt") as f:
            raw = (f.metadata() or {}).get("medspt")
            state = {k: f.get_tensor(k) for k in f.keys()}
    except (SafetensorError, OSError, ValueError, RuntimeError) as e:
        raise ModelFileError(
            f"model file {str(path)!r} is not a readable medspt model (corrupt or truncated?): {e}"
        ) from None
    if raw is None:
        raise ModelFileError(f"{str(path)!r} is a safetensors file but not a medspt model")
    try:
        meta = json.loads(raw)
    except json.JSONDecodeError as e:
        raise ModelFileError(f"model file {str(path)!r} has corrupt metadata: {e}") from None
    if meta.get("format") != FORMAT:
        raise ModelFileError(f"{str(path)!r} is not a medspt model file")
    version = meta.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise ModelFileError(
            f"model file {str(path)!r} was written by medspt {meta.get('medspt_version')} "
            f"in file format {version}; this medspt {__version__} reads formats up to "
            f"{FORMAT_VERSION}. Upgrade medspt to load it."
        )
    params = dict(meta["params"])
    if isinstance(params.get("masking"), str) and params["masking"].startswith("<callable"):
        params["masking"] = "span"  # the callable itself is not stored; refit to reuse it
    est = SPTClassifier(**params)
    n_members = int(meta.get("n_members", 1))
    members = []
    try:
        for m in range(n_members):
            prefix = f"member{m}."
            if m == 0:
                own = {k: v for k, v in state.items() if not k.startswith("member")}
            else:
                own = {k[len(prefix) :]: v for k, v in state.items() if k.startswith(prefix)}
            model = SPTTransformer(ModelConfig(**meta["model_config"]))
            model.load_state_dict(own)
            members.append(model.eval())
    except (TypeError, RuntimeError, KeyError) as e:
        raise ModelFileError(f"model file {str(path)!r} does not match its config: {e}") from None
    est.model_, est.members_ = members[0], members
    est.attention_ = model.config.attention
    est.classes_ = _classes_from_json(meta["classes"])
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
    est.batch_size_ = est.auto_params_.get("batch_size", params.get("batch_size"))
    summary = meta.get("data_summary")
    est.data_summary_ = DataSummary.from_dict(summary) if summary else None
    est.evaluation_ = meta.get("evaluation")
    return est
