"""The convolutional tokenizer and relative positions (issue: a model for both regimes)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from medspt import SPTClassifier, load
from medspt.core.errors import InputError
from medspt.data.synthetic import TASKS, make_task
from medspt.estimator.auto import mask_run_for, token_stride_for
from medspt.nn.model import (
    CONV_DILATIONS,
    CONV_KERNEL,
    ModelConfig,
    RelativeBias,
    SPTTransformer,
    conv_steps,
)


def _model(**kw) -> SPTTransformer:
    torch.manual_seed(0)
    cfg = dict(
        n_channels=3,
        n_steps=64,
        n_classes=2,
        d_model=16,
        n_heads=2,
        patch_len=2,
        embedding="conv",
        positional="relative",
        dropout=0.0,
        instance_norm=True,
    )
    return SPTTransformer(ModelConfig(**{**cfg, **kw})).eval()


@pytest.mark.parametrize("positional", ["relative", "learned"])
@pytest.mark.parametrize("instance_norm", [True, False])
def test_hidden_values_never_reach_the_conv_tokenizer(positional, instance_norm):
    model = _model(positional=positional, instance_norm=instance_norm)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(4, 3, 64, generator=g)
    hidden = torch.rand(4, 3, 64, generator=g) < 0.4
    changed = x.clone()
    changed[hidden] = torch.randn(int(hidden.sum()), generator=g) * 100.0
    with torch.no_grad():
        a, b = model.encode(x, hidden), model.encode(changed, hidden)
        visible_change = model.encode(x + (~hidden) * torch.randn(4, 3, 64, generator=g), hidden)
    torch.testing.assert_close(a, b, rtol=0, atol=0)
    assert (a - visible_change).abs().max() > 1e-3  # what it may see does reach it


def test_conv_tokens_have_the_stride_and_the_receptive_field_of_the_dilations():
    model = _model(positional="none", instance_norm=False, depth=1, n_steps=256)
    reach = (CONV_KERNEL // 2) * max(CONV_DILATIONS)  # 48 steps each side
    x = torch.zeros(1, 3, 256)
    poked = x.clone()
    poked[0, 1, 128] = 5.0
    no_hiding = torch.zeros_like(x, dtype=torch.bool)
    no_padding = torch.zeros(1, 256, dtype=torch.bool)
    with torch.no_grad():
        a = model.tokenize(poked, no_hiding, no_padding)
        b = model.tokenize(x, no_hiding, no_padding)
        diff = (a - b).abs().sum(-1)[0]  # (N,)
    assert diff.shape == (128,)  # 256 steps, stride 2
    moved = torch.nonzero(diff > 1e-7).flatten()
    # token i is centred on step 2i: the poke at 128 reaches tokens of steps 80..176
    assert moved.min().item() == (128 - reach) // 2
    assert moved.max().item() == (128 + reach) // 2


def test_nan_padding_reads_like_a_shorter_case():
    model = _model()
    x = torch.randn(1, 3, 40)
    padded = torch.cat([x, torch.full((1, 3, 24), math.nan)], dim=2)
    with torch.no_grad():
        h_short, pad_short = model.encode(x, return_padding=True)
        h_long, pad_long = model.encode(padded, return_padding=True)
        logits_short, logits_long = model(x), model(padded)
    assert pad_long.sum().item() == 12 and pad_short.sum().item() == 12
    keep = ~pad_long[0]
    torch.testing.assert_close(h_short[0, keep], h_long[0, keep])
    torch.testing.assert_close(logits_short, logits_long)


def test_relative_bias_clips_long_distances_and_leaves_the_class_token_alone():
    rel = RelativeBias(n_heads=2, n_max=4, has_cls=True)
    with torch.no_grad():
        rel.table.copy_(torch.arange(14, dtype=torch.float32).view(2, 7))
    b = rel(1 + 6)  # a class token and 6 tokens, more than the 4 trained on
    assert b.shape == (2, 7, 7)
    assert torch.all(b[:, 0, :] == 0) and torch.all(b[:, :, 0] == 0)
    # distance i - j = +5 clips to +3 (index 6), -5 to -3 (index 0)
    assert b[0, 6, 1].item() == 6.0 and b[0, 1, 6].item() == 0.0
    assert b[1, 3, 3].item() == 7.0 + 3  # distance 0 of head 1
    assert b[1, 2, 3].item() == 7.0 + 2  # distance -1


def test_relative_attention_equals_explicit_softmax_with_the_bias():
    model = _model(depth=1, n_steps=16, patch_len=1)
    block = model.blocks[0].attn
    with torch.no_grad():
        block.rel.table.normal_()
        q, k = torch.randn(2, 2, 16, 8), torch.randn(2, 2, 16, 8)
        pad = torch.zeros(2, 16, dtype=torch.bool)
        pad[1, 12:] = True
        w = block.attend.attention_weights(q, k, pad, bias=block.rel(16))
        s = q @ k.transpose(-2, -1) / math.sqrt(8) + block.rel(16)
        s = s.masked_fill(pad[:, None, None, :], -math.inf)
    torch.testing.assert_close(w, torch.softmax(s, dim=-1))
    assert torch.all(w[1, :, :, 12:] == 0)


def test_relative_positions_learn_through_attention():
    model = _model().train()
    model(torch.randn(4, 3, 64)).sum().backward()
    assert model.blocks[0].attn.rel.table.grad.abs().sum() > 0


def test_relative_positions_with_hierarchical_attention_are_refused_by_name():
    with pytest.raises(InputError, match="positional='relative'.*attention='full'"):
        _model(attention="hierarchical")


def test_unknown_embedding_is_refused_by_name():
    with pytest.raises(InputError, match="embedding"):
        SPTClassifier(embedding="convolution").fit(np.zeros((8, 1, 32)), [0, 1] * 4)


def test_auto_stride_and_mask_runs_follow_the_length():
    assert [token_stride_for(n) for n in (24, 64, 65, 200, 427, 1460)] == [1, 1, 2, 4, 7, 24]
    for n in (24, 65, 200, 427, 1460, 5000, 12000):  # at most 64 tokens, no skipped steps
        P = token_stride_for(n)
        r, stride = conv_steps(P)
        assert -(-n // P) <= 64 and r * stride == P and stride <= 8
    assert mask_run_for(200, 2) == 13 and mask_run_for(24, 1) == 2 and mask_run_for(64, 8) == 8
    with pytest.raises(ValueError, match="n_steps"):
        token_stride_for(0)


def test_estimator_with_conv_tokens_fits_saves_and_loads(tmp_path):
    X, y, groups = make_task("frequency", n_subjects=6, windows_per_subject=8)
    clf = SPTClassifier(
        embedding="conv",
        positional="relative",
        depth=1,
        d_model=16,
        n_heads=2,
        pretrain_epochs=1,
        epochs=1,
        min_steps=0,
        n_estimators=1,
        random_state=0,
    )
    clf.fit(X, y, groups=groups)
    assert clf.patch_len_ == token_stride_for(200) == 4
    assert clf._mask_token_len() == 13
    assert clf.model_.config.embedding == "conv"
    clf.save(tmp_path / "m.safetensors")
    again = load(tmp_path / "m.safetensors")
    assert again.embedding == "conv"
    np.testing.assert_allclose(again.predict_proba(X[:6]), clf.predict_proba(X[:6]), atol=1e-6)


@pytest.mark.parametrize("name", TASKS)
def test_synthetic_tasks_are_balanced_per_subject_and_seeded(name):
    X, y, groups = make_task(name, n_subjects=4, windows_per_subject=10, seed=3)
    assert X.shape == (40, 2 if name == "echo" else 1, 200) and X.dtype == np.float32
    for s in np.unique(groups):
        _, counts = np.unique(y[groups == s], return_counts=True)
        assert counts.tolist() == [5, 5]
    np.testing.assert_array_equal(
        make_task(name, n_subjects=4, windows_per_subject=10, seed=3)[0], X
    )


def test_echo_task_differs_only_in_the_lag_between_channels():
    X, y, _ = make_task("echo", n_subjects=2, windows_per_subject=200)
    Xc = X - X.mean(axis=2, keepdims=True)

    def corr_at(lag):
        a, b = Xc[:, 0, : 200 - lag], Xc[:, 1, lag:]
        return (a * b).sum(1) / np.sqrt((a * a).sum(1) * (b * b).sum(1))

    echo = y == "echo"
    assert corr_at(12)[echo].mean() > 0.8 and abs(corr_at(12)[~echo].mean()) < 0.2
    assert corr_at(0)[~echo].mean() > 0.8 and abs(corr_at(0)[echo].mean()) < 0.2
    # each channel alone: the same spread in both classes
    np.testing.assert_allclose(X[echo].std(axis=2).mean(0), X[~echo].std(axis=2).mean(0), rtol=0.1)


def test_long_strides_pool_first_and_widen_the_reach():
    model = _model(positional="none", instance_norm=False, depth=1, n_steps=480, patch_len=24)
    assert (model.embed.pool, model.embed.stride) == (3, 8)
    x = torch.zeros(1, 3, 480)
    poked = x.clone()
    poked[0, 0, 228:252] = 5.0  # pooled steps 76..83
    no_hiding = torch.zeros_like(x, dtype=torch.bool)
    no_padding = torch.zeros(1, 480, dtype=torch.bool)
    with torch.no_grad():
        diff = model.tokenize(poked, no_hiding, no_padding) - model.tokenize(
            x, no_hiding, no_padding
        )
    moved = torch.nonzero(diff.abs().sum(-1)[0] > 1e-7).flatten()
    assert diff.shape[1] == 20
    # token i sits at pooled step 8i + 3 and reaches 48 pooled steps (144 steps) each side
    assert moved.min().item() == 4 and moved.max().item() == 16
