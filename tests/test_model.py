import pytest
import torch

from medspt.core.errors import InputError
from medspt.nn.model import (
    ATTENTION,
    FullAttention,
    ModelConfig,
    SPTTransformer,
    register_attention,
)


def _model(**kw):
    cfg = dict(
        n_channels=3,
        n_steps=50,
        n_classes=4,
        depth=2,
        d_model=16,
        n_heads=2,
        patch_len=8,
        dropout=0.0,
    )
    torch.manual_seed(0)
    return SPTTransformer(ModelConfig(**(cfg | kw))).eval()


@pytest.mark.parametrize("pooling", ["mean", "cls"])
@pytest.mark.parametrize("positional", ["learned", "sinusoidal", "none"])
def test_shapes_with_length_not_divisible_by_patch(pooling, positional):
    m = _model(pooling=pooling, positional=positional)
    x = torch.randn(5, 3, 50)  # 50 = 6 patches of 8 + 2 steps
    assert m.config.n_patches == 7
    assert m(x).shape == (5, 4)
    assert m.reconstruct(x).shape == (5, 3, 50)
    assert m.encode(x).shape == (5, 7 + (pooling == "cls"), 16)


def test_hidden_values_do_not_reach_the_model():
    m = _model()
    x = torch.randn(2, 3, 50)
    hidden = torch.zeros_like(x, dtype=torch.bool)
    hidden[:, 1, 10:20] = True
    y = x.clone()
    y[hidden] = 1000.0  # changing hidden values must not change anything
    torch.testing.assert_close(m.reconstruct(x, hidden), m.reconstruct(y, hidden))
    assert not torch.allclose(m.reconstruct(x), m.reconstruct(y))


def test_nan_inputs_are_treated_as_hidden_and_give_finite_outputs():
    m = _model()
    x = torch.randn(2, 3, 50)
    x[0, 2, 5:30] = float("nan")
    out = m(x)
    assert torch.isfinite(out).all()
    filled = x.nan_to_num(0.0)
    hidden = torch.isnan(x)
    torch.testing.assert_close(m.reconstruct(x), m.reconstruct(filled, hidden))


def test_depth_changes_parameter_count():
    n = [sum(p.numel() for p in _model(depth=d).parameters()) for d in (1, 2, 4)]
    per_block = n[1] - n[0]
    assert per_block > 0 and n[2] - n[1] == 2 * per_block


def test_full_attention_respects_key_padding():
    att = FullAttention(ModelConfig(n_channels=1, n_steps=8, n_classes=2, dropout=0.0))
    q, k, v = (torch.randn(1, 2, 5, 4) for _ in range(3))
    pad = torch.tensor([[False, False, False, True, True]])
    out = att(q, k, v, pad)
    ref = att(q, k[:, :, :3], v[:, :, :3])
    torch.testing.assert_close(out, ref)


def test_register_attention_plugs_in():
    calls = []

    class Recording(FullAttention):
        def forward(self, q, k, v, key_padding_mask=None):
            calls.append(q.shape)
            return super().forward(q, k, v, key_padding_mask)

    register_attention("recording-test", Recording)
    try:
        m = _model(attention="recording-test")
        m(torch.randn(2, 3, 50))
        assert calls == [(2, 2, 7, 8)] * 2  # (B, H, N, Dh) once per block
    finally:
        ATTENTION.pop("recording-test")


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"d_model": 30, "n_heads": 4}, "divisible by n_heads"),
        ({"depth": 0}, "depth must be an integer >= 1"),
        ({"positional": "rotary"}, "positional must be one of"),
        ({"attention": "sparse"}, "attention must be one of"),
        ({"dropout": 1.0}, "dropout must lie in"),
    ],
)
def test_config_validation(kw, match):
    with pytest.raises(InputError, match=match):
        _model(**kw)


def test_attn_dropout_defaults_to_dropout_and_can_be_switched_off():
    cfg = ModelConfig(n_channels=2, n_steps=32, n_classes=2, dropout=0.3)
    assert SPTTransformer(cfg).blocks[0].attn.attend.dropout == 0.3
    cfg = ModelConfig(n_channels=2, n_steps=32, n_classes=2, dropout=0.3, attn_dropout=0.0)
    model = SPTTransformer(cfg).train()
    assert model.blocks[0].attn.attend.dropout == 0.0
    assert model.blocks[0].mlp.drop.p == 0.3
    bad = ModelConfig(n_channels=2, n_steps=32, n_classes=2, attn_dropout=1.5)
    with pytest.raises(InputError, match="attn_dropout must lie in"):
        bad.validate()


def test_instance_norm_statistics_ignore_hidden_values():
    model = _model(instance_norm=True)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(4, 3, 50, generator=g) * 3 + 5
    hidden = torch.zeros(4, 3, 50, dtype=torch.bool)
    hidden[:, :, 10:30] = True
    changed = x.clone()
    changed[hidden] = changed[hidden] * 100 - 40  # what the model must not see
    a, b = model.instance_normalize(x, hidden), model.instance_normalize(changed, hidden)
    torch.testing.assert_close(a[~hidden], b[~hidden])
    seen = a[:, :, :10]
    assert float(torch.cat([seen, a[:, :, 30:]], -1).mean(-1).abs().max()) < 1e-5
    # the encoder's view and its reconstruction do not move either
    torch.testing.assert_close(model.reconstruct(x, hidden), model.reconstruct(changed, hidden))
    # the target of the hidden values is in the visible values' scale (x had mean 5, sd 3)
    assert float(a[:, :, 10:30].abs().mean()) < 2


def test_instance_norm_off_is_identity_and_whole_hidden_channels_keep_their_values():
    x = torch.randn(2, 3, 50)
    assert _model().instance_normalize(x) is x
    model = _model(instance_norm=True)
    hidden = torch.zeros(2, 3, 50, dtype=torch.bool)
    hidden[:, 1] = True  # channel masking hides channel 1 whole
    out = model.instance_normalize(x, hidden)
    torch.testing.assert_close(out[:, 1], x[:, 1])
    # without a mask every observed value counts, NaN ignored
    x[0, 0, :5] = float("nan")
    out = model.instance_normalize(x)
    assert float(out[0, 0, 5:].mean().abs()) < 1e-5 and torch.isnan(out[0, 0, :5]).all()


def test_window_stats_hand_levels_back_to_the_classifier_only():
    torch.manual_seed(0)
    # without the instance floor, which keeps scales below it apart on purpose
    base = dict(n_channels=3, n_steps=32, n_classes=2, d_model=16, n_heads=2, patch_len=8,
                instance_floor=0.0)  # fmt: skip
    x = torch.randn(4, 3, 32)
    shifted = x * 3.0 + 5.0  # same shape of every window, other level and spread
    plain = SPTTransformer(ModelConfig(**base, instance_norm=True)).eval()
    with torch.no_grad():
        # instance normalization alone cannot tell the two apart
        torch.testing.assert_close(plain(x), plain(shifted), atol=1e-4, rtol=1e-4)
        stats = SPTTransformer(ModelConfig(**base, instance_norm=True, window_stats=True)).eval()
        assert (stats(x) - stats(shifted)).abs().max() > 1e-3
        # reconstruction (pretraining) never sees the statistics
        hidden = torch.zeros_like(x, dtype=torch.bool)
        hidden[:, :, 8:16] = True
        stats.stats_head.weight.mul_(10.0)
        before = stats.reconstruct(x, hidden)
        stats.stats_head.weight.zero_()
        torch.testing.assert_close(stats.reconstruct(x, hidden), before)
    mean, std = SPTTransformer.visible_stats(shifted)
    torch.testing.assert_close(mean[..., 0], shifted.mean(-1))
    torch.testing.assert_close(std[..., 0], (shifted.var(-1, unbiased=False) + 1e-5).sqrt())
    names = {n for n, _ in stats.named_parameters()}
    head = {id(p) for p in stats.head_parameters()}
    assert {"stats_head.weight", "head.weight"} <= names
    assert {id(stats.stats_head.weight), id(stats.head.weight)} <= head
    assert not head & {id(p) for p in stats.encoder_parameters()}
