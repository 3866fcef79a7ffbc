"""The model file format: a JSON description plus tensors, in one safetensors file.

Loading never unpickles anything: safetensors holds raw tensors and a string-to-string
metadata table, where the JSON is kept under the key ``"medspt"``. This module reads and
writes that format: a metadata dict (whatever the caller puts in it, plus the format's
own keys) and the weights of one or more models of one :class:`~medspt.nn.model.ModelConfig`.
What the metadata of a classifier holds (parameters, classes, normalization statistics,
windowing spec, training history) is decided by :mod:`medspt.estimator.classifier`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from safetensors import SafetensorError, safe_open
from safetensors.torch import save_file

from medspt._version import __version__
from medspt.core.errors import ModelFileError
from medspt.core.jsonable import to_jsonable
from medspt.nn.model import ModelConfig, SPTTransformer

FORMAT = "medspt-model"
FORMAT_VERSION = 1

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "classes_from_json",
    "classes_to_json",
    "read_model_file",
    "write_model_file",
]


def classes_to_json(classes: np.ndarray) -> dict:
    """Class labels as JSON: their dtype (``"str"`` for text) and values."""
    if classes.dtype.kind not in "biufOUS":
        raise ModelFileError(f"cannot save classes of dtype {classes.dtype}")
    kind = "str" if classes.dtype.kind in "OUS" else classes.dtype.str
    return {"dtype": kind, "values": to_jsonable(classes)}


def classes_from_json(d: dict) -> np.ndarray:
    """The inverse of :func:`classes_to_json`."""
    if d["dtype"] == "str":
        return np.asarray(d["values"], dtype=object)
    return np.asarray(d["values"], dtype=np.dtype(d["dtype"]))


def write_model_file(path, meta: dict, members: Sequence[SPTTransformer]) -> None:
    """Write ``meta`` (JSON-able) and the weights of ``members`` to ``path``.

    The format's own keys are added to ``meta``: ``format``, ``format_version``,
    ``medspt_version``, ``model_config`` (every member has the first one's) and
    ``n_members``. Member 0's tensors keep their names, member ``m``'s are prefixed
    ``member{m}.``, so single-model files read as before ensembles existed.
    """
    meta = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "medspt_version": __version__,
        **meta,
        "model_config": members[0].config.to_dict(),
        "n_members": len(members),
    }
    state = {}
    for m, model in enumerate(members):
        prefix = "" if m == 0 else f"member{m}."
        for k, v in model.state_dict().items():
            state[prefix + k] = v.detach().cpu().contiguous()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_file(state, str(path), metadata={"medspt": json.dumps(meta)})


def read_model_file(path) -> tuple[dict, list[SPTTransformer]]:
    """The metadata dict and the member models (in eval mode) of the file at ``path``.

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    ModelFileError
        The file is truncated or corrupt, is not a medspt model, was written by a newer
        medspt whose format this version cannot read, or its tensors do not fit its
        model config.
    """
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
    members = []
    try:
        for m in range(int(meta.get("n_members", 1))):
            prefix = f"member{m}."
            if m == 0:
                own = {k: v for k, v in state.items() if not k.startswith("member")}
            else:
                own = {k[len(prefix) :]: v for k, v in state.items() if k.startswith(prefix)}
            # from_dict: settings newer than the file keep the behaviour it was written with
            model = SPTTransformer(ModelConfig.from_dict(meta["model_config"]))
            model.load_state_dict(own)
            members.append(model.eval())
    except (TypeError, RuntimeError, KeyError) as e:
        raise ModelFileError(f"model file {str(path)!r} does not match its config: {e}") from None
    return meta, members
