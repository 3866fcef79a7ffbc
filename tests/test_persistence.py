import json
import struct

import numpy as np
import pytest
from conftest import FAST

import medspt
from medspt import SPTClassifier, fit_spt
from medspt.core.errors import ModelFileError


def _rewrite_metadata(path, change):
    """Edit the JSON metadata of a safetensors file in place (header is JSON)."""
    raw = path.read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8 : 8 + n])
    meta = json.loads(header["__metadata__"]["medspt"])
    change(meta)
    header["__metadata__"]["medspt"] = json.dumps(meta)
    new = json.dumps(header).encode()
    new += b" " * ((8 - len(new) % 8) % 8)
    path.write_bytes(struct.pack("<Q", len(new)) + new + raw[8 + n :])


@pytest.fixture
def fitted(arrays, tmp_path):
    X, y, groups = arrays
    clf = SPTClassifier(**FAST, masking="block").fit(X, y, groups=groups)
    path = tmp_path / "model.safetensors"
    clf.save(path)
    return clf, path, X


def test_roundtrip_gives_identical_predictions(fitted):
    clf, path, X = fitted
    loaded = medspt.load(path)
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))
    assert list(loaded.classes_) == list(clf.classes_)
    assert loaded.get_params() == clf.get_params()
    assert loaded.history_["finetune"][0]["train_loss"] == pytest.approx(
        clf.history_["finetune"][0]["train_loss"]
    )


def test_file_is_safetensors_with_json_metadata_not_pickle(fitted):
    _, path, _ = fitted
    raw = path.read_bytes()
    assert b"\x80\x04" not in raw[:2] and not raw.startswith(b"PK")  # neither pickle nor zip
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8 : 8 + n])
    meta = json.loads(header["__metadata__"]["medspt"])
    assert meta["format"] == "medspt-model" and meta["model_config"]["depth"] == 1


def test_frame_spec_survives(frame, tmp_path):
    clf = fit_spt(frame, window=40, stride=20, **FAST)
    clf.save(tmp_path / "m.safetensors")
    loaded = medspt.load(tmp_path / "m.safetensors")
    a, b = clf.predict(frame), loaded.predict(frame)
    np.testing.assert_allclose(a.windows["proba_fast"], b.windows["proba_fast"])
    assert loaded.frame_spec_ == clf.frame_spec_


def test_truncated_file(fitted):
    _, path, _ = fitted
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(ModelFileError, match="model.safetensors.*corrupt or truncated"):
        medspt.load(path)


def test_newer_format_version(fitted):
    _, path, _ = fitted
    _rewrite_metadata(path, lambda m: m.update(format_version=99, medspt_version="9.0.0"))
    with pytest.raises(ModelFileError, match="written by medspt 9.0.0 in file format 99"):
        medspt.load(path)


def test_not_a_model(tmp_path):
    p = tmp_path / "notes.safetensors"
    p.write_text("hello")
    with pytest.raises(ModelFileError, match="notes.safetensors"):
        medspt.load(p)
    with pytest.raises(FileNotFoundError, match="missing.safetensors"):
        medspt.load(tmp_path / "missing.safetensors")


def test_integer_classes_keep_their_type(arrays, tmp_path):
    X, y, groups = arrays
    yi = (y == "pd").astype(int) + 3
    clf = SPTClassifier(**FAST).fit(X, yi, groups=groups)
    clf.save(tmp_path / "m.safetensors")
    loaded = medspt.load(tmp_path / "m.safetensors")
    assert loaded.classes_.dtype.kind == "i" and list(loaded.predict(X[:3])) == list(
        clf.predict(X[:3])
    )


def test_model_file_holds_metadata_and_members_without_the_estimator(tmp_path):
    import torch

    from medspt.estimator.model_file import FORMAT_VERSION, read_model_file, write_model_file
    from medspt.nn.model import ModelConfig, SPTTransformer

    config = ModelConfig(n_channels=2, n_steps=16, n_classes=3, depth=1, d_model=8, n_heads=2)
    members = []
    for seed in (0, 1):
        torch.manual_seed(seed)
        members.append(SPTTransformer(ModelConfig(**config.to_dict())))
    write_model_file(tmp_path / "m.safetensors", {"note": [1, 2]}, members)
    meta, back = read_model_file(tmp_path / "m.safetensors")
    assert meta["note"] == [1, 2] and meta["n_members"] == 2
    assert meta["format_version"] == FORMAT_VERSION and meta["model_config"] == config.to_dict()
    for a, b in zip(members, back):
        assert not b.training
        for (name, x), (_, z) in zip(a.state_dict().items(), b.state_dict().items()):
            assert torch.equal(x, z), name


def test_saving_and_loading_import_in_one_direction():
    """persistence -> estimator -> model_file -> model -> params; no import inside a
    function hides a way back."""
    import ast
    import importlib

    from medspt.estimator import persistence

    assert persistence.load is medspt.load
    modules = {
        "estimator": "medspt.estimator.classifier",
        "persistence": "medspt.estimator.persistence",
        "model_file": "medspt.estimator.model_file",
        "model": "medspt.nn.model",
        "params": "medspt.core.params",
        "training": "medspt.nn.training",
    }
    imported = {}
    for name, module in modules.items():
        tree = ast.parse(open(importlib.import_module(module).__file__).read())
        imported[name] = {
            node.module
            for node in tree.body
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("medspt.")
        }
        local = [
            sub
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef)
            for sub in ast.walk(node)
            if isinstance(sub, (ast.Import, ast.ImportFrom))
        ]
        assert local == [], f"{module} imports inside a function"
    assert modules["estimator"] in imported["persistence"]
    assert modules["model_file"] in imported["estimator"]
    for low, high in [("model_file", "estimator"), ("estimator", "persistence")]:
        assert modules[high] not in imported[low]
    assert not imported["params"] & set(modules.values())
