import pytest
import torch

from medspt.nn.attention import HierarchicalAttention, select_partition, token_scores
from medspt.nn.model import ATTENTION, FullAttention, ModelConfig, SPTTransformer

B, H, N, DH = 2, 2, 37, 8


def _qkv(seed=0, dtype=torch.float32, b=B, h=H, n=N, d=DH, requires_grad=False):
    g = torch.Generator().manual_seed(seed)
    return [
        torch.randn(b, h, n, d, generator=g, dtype=dtype).requires_grad_(requires_grad)
        for _ in range(3)
    ]


def _full(q, k, v, mask=None):
    cfg = ModelConfig(n_channels=1, n_steps=8, n_classes=2, dropout=0.0)
    return FullAttention(cfg)(q, k, v, mask)


def _pad_mask():
    mask = torch.zeros(B, N, dtype=torch.bool)
    mask[1, 30:] = True  # padding at the end of the second row
    return mask


def _coverage(part, levels, pool, n):
    """How many emitted entries cover each position: (B, H, n)."""
    b, h, _ = part.level_idx.shape
    cov = torch.zeros(b, h, n + pool**levels, dtype=torch.long)
    for bi in range(b):
        for hi in range(h):
            for s in range(int(part.counts[bi, hi])):
                lvl, j = int(part.level_idx[bi, hi, s]), int(part.pos_idx[bi, hi, s])
                w = pool**lvl
                cov[bi, hi, j * w : (j + 1) * w] += 1
    return cov[..., :n]


@pytest.mark.parametrize("levels,pool", [(3, 4), (2, 2), (3, 3), (1, 4)])
def test_large_topk_equals_full_attention(levels, pool):
    q, k, v = _qkv()
    attn = HierarchicalAttention(levels=levels, pool=pool, topk=N)
    assert (attn(q, k, v) - _full(q, k, v)).abs().max() < 1e-5


def test_large_topk_equals_full_attention_with_padding():
    q, k, v = _qkv(1)
    mask = _pad_mask()
    y = HierarchicalAttention(levels=3, pool=4, topk=N)(q, k, v, mask)
    ref = _full(q, k, v, mask)
    keep = ~mask
    diff = (y - ref).abs().permute(0, 2, 1, 3)[keep]  # unpadded positions only
    assert diff.max() < 1e-5
    assert torch.all(y.permute(0, 2, 1, 3)[mask] == 0)


@pytest.mark.parametrize("levels,pool,topk", [(3, 4, 2), (3, 2, 3), (2, 4, 1), (4, 2, 2)])
@pytest.mark.parametrize("padded", [False, True])
def test_partition_covers_each_position_once(levels, pool, topk, padded):
    q, k, v = _qkv(2)
    mask = _pad_mask() if padded else None
    part = select_partition(token_scores(q, k), mask, levels, pool, topk)
    cov = _coverage(part, levels, pool, N)
    valid = torch.ones(B, N, dtype=torch.bool) if mask is None else ~mask
    valid = valid[:, None, :].expand(B, H, N)
    assert torch.all(cov[valid] == 1)
    # entries emitted over padding must also cover real tokens (no padding-only entry)
    for bi in range(B):
        for hi in range(H):
            c = int(part.counts[bi, hi])
            assert torch.all(part.level_idx[bi, hi, c:] == -1)
            for s in range(c):
                lvl, j = int(part.level_idx[bi, hi, s]), int(part.pos_idx[bi, hi, s])
                w = pool**lvl
                assert valid[bi, hi, j * w : min((j + 1) * w, N)].any()
    n_valid = valid.sum(-1)
    bound = -(-n_valid // pool ** (levels - 1)) + (levels - 1) * (pool - 1) * topk
    assert torch.all(part.counts <= bound)
    assert torch.all(part.counts < n_valid)  # really coarser than full attention


def test_selection_follows_scores():
    # one very loud token must be refined down to its own level-0 entry
    scores = torch.zeros(1, 1, 16)
    scores[0, 0, 9] = 10.0
    part = select_partition(scores, None, levels=3, pool=2, topk=1)
    pairs = set(zip(part.level_idx[0, 0].tolist(), part.pos_idx[0, 0].tolist()))
    assert (0, 9) in pairs
    assert (2, 0) in pairs  # the quiet half-window stays coarse
    assert int(part.counts[0, 0]) == 2 + 1 + 1 + 2  # 16/4, refine once per level


def test_small_topk_differs_from_full():
    q, k, v = _qkv(3)
    y = HierarchicalAttention(levels=3, pool=4, topk=1)(q, k, v)
    assert y.shape == (B, H, N, DH)
    assert torch.isfinite(y).all()
    assert (y - _full(q, k, v)).abs().max() > 1e-3


def test_gradcheck():
    q, k, v = _qkv(4, dtype=torch.float64, b=1, h=1, n=10, d=3, requires_grad=True)
    attn = HierarchicalAttention(levels=2, pool=2, topk=1)
    assert torch.autograd.gradcheck(lambda q, k, v: attn(q, k, v), (q, k, v))


def test_gradients_reach_all_inputs():
    q, k, v = _qkv(5, requires_grad=True)
    HierarchicalAttention(levels=3, pool=4, topk=2)(q, k, v, _pad_mask()).square().sum().backward()
    for t in (q, k, v):
        assert t.grad is not None and torch.isfinite(t.grad).all() and t.grad.abs().sum() > 0


def test_registered_and_trains_in_model():
    assert "hierarchical" in ATTENTION
    cfg = ModelConfig(
        n_channels=3,
        n_steps=150,
        n_classes=4,
        depth=2,
        d_model=16,
        n_heads=2,
        patch_len=4,
        dropout=0.1,
        attention="hierarchical",
    )
    torch.manual_seed(0)
    model = SPTTransformer(cfg).train()
    assert isinstance(model.blocks[0].attn.attend, HierarchicalAttention)
    x = torch.randn(4, 3, 150)
    x[0, 1, 10:20] = float("nan")
    logits = model(x)
    assert logits.shape == (4, 4)
    loss = logits.square().mean() + model.reconstruct(x).nan_to_num().square().mean()
    loss.backward()
    grads = [p.grad for p in model.parameters() if p.requires_grad]
    assert all(g is not None and torch.isfinite(g).all() for g in grads)


def test_bad_settings_rejected():
    with pytest.raises(ValueError):
        HierarchicalAttention(pool=1)
    with pytest.raises(ValueError):
        HierarchicalAttention(levels=0)


def test_topk_zero_is_attention_over_masked_window_means():
    # nothing refined: every window of `pool` tokens is one entry, its q, k, v the mean of its
    # non-padding tokens; each token receives its window's output
    pool = 4
    q, k, v = _qkv(6)
    mask = _pad_mask()
    y = HierarchicalAttention(levels=2, pool=pool, topk=0)(q, k, v, mask)
    for b in range(B):
        n = int((~mask[b]).sum())
        wins = [range(s, min(s + pool, n)) for s in range(0, n, pool)]
        qs, ks, vs = (torch.stack([t[b, :, list(w)].mean(1) for w in wins], 1) for t in (q, k, v))
        out = torch.nn.functional.scaled_dot_product_attention(qs, ks, vs)
        for i, w in enumerate(wins):
            for pos in w:
                assert (y[b, :, pos] - out[:, i]).abs().max() < 1e-5
        assert torch.all(y[b, :, n:] == 0)
