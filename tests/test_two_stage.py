"""Hierarchical attention in training: the two-stage (hierarchical, then full) schedule,
its parameters through SPTClassifier, fit_spt and the CLI, and long real windows."""

import numpy as np
import pytest
import torch
from conftest import FAST, real_dataset, subject_frame

import medspt
from medspt import SPTClassifier
from medspt.core.errors import InputError
from medspt.nn.attention import HierarchicalAttention
from medspt.nn.model import FullAttention

HIER = dict(FAST, patch_len=2, attention="hierarchical", attention_options={"topk": 1, "tile": 2})


def _attention_kinds(clf):
    return {type(b.attn.attend) for b in clf.model_.blocks}


def _losses(rows):
    return [round(r["train_loss"], 6) for r in rows]


def test_recovery_continues_the_same_weights_with_full_attention(arrays):
    X, y, g = arrays
    plain = SPTClassifier(**HIER).fit(X, y, g)
    assert plain.attention_ == "hierarchical"
    assert _attention_kinds(plain) == {HierarchicalAttention}
    assert plain.history_["recover"] == []

    two = SPTClassifier(**HIER, recover_epochs=2).fit(X, y, g)
    assert two.attention_ == "full" and _attention_kinds(two) == {FullAttention}
    # the hierarchical stages are identical (same seed), recovery comes on top
    assert _losses(two.history_["pretrain"]) == _losses(plain.history_["pretrain"])
    assert _losses(two.history_["finetune"]) == _losses(plain.history_["finetune"])
    assert len(two.history_["recover"]) == 2
    assert "val_balanced_accuracy" in two.history_["recover"][0]  # a fine-tuning stage
    assert not np.allclose(two.predict_proba(X), plain.predict_proba(X))


def test_hierarchical_in_pretraining_only(arrays):
    X, y, g = arrays
    clf = SPTClassifier(**HIER, recover_epochs=1, hierarchical_stages="pretrain").fit(X, y, g)
    assert clf.attention_ == "full"
    rec = clf.history_["recover"]
    assert len(rec) == 1 and "val_balanced_accuracy" not in rec[0]  # masked reconstruction
    assert len(clf.history_["finetune"]) == FAST["epochs"]
    # without recovery epochs fine-tuning still switches to full attention
    clf0 = SPTClassifier(**HIER, hierarchical_stages="pretrain").fit(X, y, g)
    assert clf0.attention_ == "full" and clf0.history_["recover"] == []


def test_recovered_model_round_trips_through_a_file(arrays, tmp_path):
    X, y, g = arrays
    clf = SPTClassifier(**HIER, recover_epochs=1).fit(X, y, g)
    clf.save(tmp_path / "m.safetensors")
    back = medspt.load(tmp_path / "m.safetensors")
    assert back.attention_ == "full" and back.recover_epochs == 1
    assert back.attention_options == {"topk": 1, "tile": 2}
    np.testing.assert_array_equal(back.predict_proba(X), clf.predict_proba(X))


@pytest.mark.parametrize(
    "params,message",
    [
        (dict(recover_epochs=2), "recover_epochs > 0 needs attention='hierarchical'"),
        (dict(recover_epochs=-1, attention="hierarchical"), "recover_epochs must be"),
        (dict(attention="hierarchical", hierarchical_stages="finetune"), "hierarchical_stages"),
        (dict(attention="hierarchical", attention_options={"topk": -1}), "topk must be"),
        (dict(attention="hierarchical", attention_options={"levles": 2}), "levles"),
        (dict(attention="hierarchical", attention_options=[1]), "attention_options must be"),
    ],
)
def test_bad_hierarchical_settings_are_named(arrays, params, message):
    X, y, g = arrays
    with pytest.raises(InputError, match=message):
        SPTClassifier(**{**FAST, **params}).fit(X, y, g)


def test_fit_spt_and_cli_take_the_hierarchical_options(tmp_path):
    df = subject_frame(n_per_class=2, seconds=20)
    clf = medspt.fit_spt(df, window="2s", **HIER, recover_epochs=1)
    assert clf.attention_ == "full" and len(clf.history_["recover"]) == 1

    from medspt.cli.commands import main

    data = tmp_path / "rec.csv"
    df.to_csv(data, index=False)
    out = tmp_path / "m.safetensors"
    argv = ["fit", "--data", str(data), "--window", "2s", "--depth", "1", "--d-model", "16"]
    argv += ["--n-heads", "2", "--patch-len", "2", "--pretrain-epochs", "1", "--epochs", "2"]
    argv += ["--min-steps", "0"]
    argv += ["--attention", "hierarchical", "--recover-epochs", "1", "--out", str(out)]
    assert main(argv) == 0
    back = medspt.load(out)
    assert back.attention == "hierarchical" and back.attention_ == "full"
    assert len(back.history_["recover"]) == 1


def test_hierarchical_fits_gaitpd_windows_of_1000_steps():
    """Whole 10-s windows at the full 100 Hz, one token per step (1,000 tokens)."""
    from medspt.datasets.gaitpd import load_gaitpd

    root = real_dataset("gaitpdb")
    names = ["GaCo01", "GaCo02", "GaCo03", "GaPt03", "GaPt04", "GaPt05"]
    df = load_gaitpd(root, subjects=names)
    torch.manual_seed(0)
    clf = medspt.fit_spt(
        df,
        window=1000,
        stride=1000,
        attention="hierarchical",
        patch_len=1,
        depth=1,
        d_model=16,
        n_heads=2,
        pretrain_epochs=1,
        epochs=1,
        min_steps=0,
        n_estimators=1,
        val_size=0,
    )
    assert clf.model_.config.n_patches == 1000
    assert _attention_kinds(clf) == {HierarchicalAttention}
    assert np.isfinite(clf.history_["pretrain"][0]["train_loss"])
    pred = clf.predict(df)
    assert len(pred.recordings) == 6
    assert set(pred.windows["predicted"]) <= {"PD", "control"}
    assert len(pred.windows) == clf.n_train_windows_
