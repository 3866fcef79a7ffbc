"""The three index-build implementations (torch reference, Numba CPU, Numba CUDA) agree
exactly, and hierarchical attention gives the same outputs and gradients with each of them.

By default (``tests/conftest.py``) the CUDA implementation runs in Numba's simulator on CPU
tensors, so CI checks it without a GPU. On a machine with an NVIDIA GPU,
``NUMBA_ENABLE_CUDASIM=0 pytest tests/test_kernels.py`` runs it on the device: its inputs
are created there and its results compared on the CPU (``benchmarks/gpu.sh`` does this).
"""

import pytest
import torch

from medspt.nn import kernels
from medspt.nn.attention import HierarchicalAttention, select_partition

IMPLS = ("torch", "numba", "cuda")
# the CUDA kernels on a real device (simulator off, a GPU present); else in the simulator
HARDWARE = not kernels.simulator_enabled() and torch.cuda.is_available()
if not kernels.simulator_enabled() and not HARDWARE:
    pytest.skip(
        "NUMBA_ENABLE_CUDASIM=0 but no CUDA device: the CUDA implementation cannot run",
        allow_module_level=True,
    )


def _dev(impl: str) -> torch.device:
    """Where an implementation's inputs live: the GPU for "cuda" on hardware."""
    return torch.device("cuda" if impl == "cuda" and HARDWARE else "cpu")


def _on(impl: str, t):
    return None if t is None else t.to(_dev(impl))


# (B, H, N, levels, pool, topk, tile): odd lengths, one level, tiles of one entry, ties
CASES = [
    (2, 2, 37, 3, 4, 2, None),
    (2, 3, 101, 3, 2, 1, 2),
    (1, 2, 64, 1, 4, 3, 5),
    (3, 1, 50, 4, 2, 2, 1),
    (2, 2, 203, 3, 4, 4, 3),
    (1, 1, 5, 3, 4, 1, 1),
]


def _scores(B, H, N, seed):
    g = torch.Generator().manual_seed(seed)
    s = torch.rand(B, H, N, generator=g)
    s[..., N // 4 : N // 4 + 5] = 0.5  # a run of ties
    return s


def _pad(B, N):
    pad = torch.zeros(B, N, dtype=torch.bool)
    pad[-1, N // 2 :] = True  # right padding
    pad[0, :3] = True  # left padding
    return pad


def test_the_cuda_implementation_can_run_here():
    if HARDWARE:
        assert kernels.cuda_usable(torch.zeros(1, device="cuda"))
    else:
        assert kernels.simulator_enabled(), "conftest sets NUMBA_ENABLE_CUDASIM=1 before numba"
        assert kernels.cuda_usable(torch.zeros(1))


@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
@pytest.mark.parametrize("padded", [False, True])
def test_implementations_agree_exactly(case, padded):
    B, H, N, levels, pool, topk, tile = case
    s = _scores(B, H, N, seed=N)
    pad = _pad(B, N) if padded else None
    ref = select_partition(s, pad, levels, pool, topk, tile, impl="torch")
    for impl in ("numba", "cuda"):
        got = select_partition(_on(impl, s), _on(impl, pad), levels, pool, topk, tile, impl=impl)
        got = [t.cpu() for t in got]
        for name, a, b in zip(ref._fields, ref, got):
            assert a.shape == b.shape, (impl, name)
            assert torch.equal(a, b), (impl, name)
    # and the result is a partition in position order, padding never covered
    Np = ref.slot.shape[-1]
    valid = torch.zeros(B, Np, dtype=torch.bool)
    valid[:, :N] = True if pad is None else ~pad
    for b in range(B):
        for h in range(H):
            c = int(ref.counts[b, h])
            starts = ref.pos_idx[b, h, :c] * pool ** ref.level_idx[b, h, :c]
            assert torch.all(starts[1:] > starts[:-1])
            cov = torch.zeros(Np, dtype=torch.long)
            for s_ in range(c):
                w = pool ** int(ref.level_idx[b, h, s_])
                lo = int(ref.pos_idx[b, h, s_]) * w
                cov[lo : lo + w] += 1
                assert valid[b, lo : lo + w].any(), "an entry covers padding only"
                assert torch.all(ref.slot[b, h, lo : lo + w][valid[b, lo : lo + w]] == s_)
            assert torch.all(cov[valid[b]] == 1)
            assert torch.all(ref.slot[b, h][~valid[b]] == -1)


def test_per_tile_bound_and_every_tile_refined():
    # tiles make selection local: every tile refines its own top-k, so a loud region
    # cannot take all the detail
    B, H, N, levels, pool, topk, tile = 1, 1, 256, 3, 4, 2, 2  # 8 tiles of 32 tokens
    s = torch.rand(B, H, N, generator=torch.Generator().manual_seed(0))
    s[..., :32] += 100.0  # first tile far louder than the rest
    part = select_partition(s, None, levels, pool, topk, tile)
    fine = part.level_idx[0, 0] == 0
    starts = part.pos_idx[0, 0][fine]
    assert set((starts // 32).tolist()) == set(range(8))
    n_tiles = N // (tile * pool ** (levels - 1))
    assert int(part.counts) <= n_tiles * (tile + (levels - 1) * (pool - 1) * topk)
    glob = select_partition(s, None, levels, pool, topk, None)
    assert set((glob.pos_idx[0, 0][glob.level_idx[0, 0] == 0] // 32).tolist()) == {0}


def _qkv(seed, B=2, H=2, N=29, D=4, dtype=torch.float32, impl="torch"):
    """Query, key and value leaves (gradients land on them), on ``impl``'s device; the
    same values whatever the device."""
    g = torch.Generator().manual_seed(seed)
    draws = [torch.randn(B, H, N, D, generator=g, dtype=dtype) for _ in "qkv"]
    return [t.to(_dev(impl)).requires_grad_() for t in draws]


@pytest.mark.parametrize("tile", [None, 1])
def test_outputs_and_gradients_agree_across_implementations(tile):
    mask = torch.zeros(2, 29, dtype=torch.bool)
    mask[1, 20:] = True
    res = {}
    for impl in IMPLS:
        q, k, v = _qkv(1, impl=impl)
        attn = HierarchicalAttention(levels=3, pool=2, topk=2, tile=tile, impl=impl)
        y = attn(q, k, v, _on(impl, mask))
        weights = torch.linspace(-1, 1, y.numel(), device=y.device).view_as(y)
        (y * weights).sum().backward()
        res[impl] = tuple(t.cpu() for t in (y.detach(), q.grad, k.grad, v.grad))
    for impl in ("numba", "cuda"):
        for a, b in zip(res["torch"], res[impl]):
            assert (a - b).abs().max() < 1e-5


@pytest.mark.parametrize("impl", IMPLS)
def test_gradcheck_each_implementation(impl):
    q, k, v = _qkv(4, B=1, H=1, N=11, D=3, dtype=torch.float64, impl=impl)
    attn = HierarchicalAttention(levels=2, pool=2, topk=1, tile=2, impl=impl)
    assert torch.autograd.gradcheck(lambda q, k, v: attn(q, k, v), (q, k, v))


@pytest.mark.parametrize("impl", IMPLS)
def test_large_topk_equals_full_attention_with_tiles(impl):
    q, k, v = _qkv(2, N=45, impl=impl)
    mask = torch.zeros(2, 45, dtype=torch.bool, device=q.device)
    mask[0, 40:] = True
    y = HierarchicalAttention(levels=3, pool=3, topk=45, tile=2, impl=impl)(q, k, v, mask)
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=~mask[:, None, None])
    keep = ~mask
    assert (y - ref).abs().permute(0, 2, 1, 3)[keep].max() < 1e-5


def test_bad_impl_and_tile_rejected():
    with pytest.raises(ValueError, match="impl must be one of"):
        HierarchicalAttention(impl="triton")
    with pytest.raises(ValueError, match="tile must be a positive integer"):
        HierarchicalAttention(tile=0)
    with pytest.raises(ValueError, match="pad_mask must have shape"):
        select_partition(torch.rand(1, 1, 8), torch.zeros(1, 7, dtype=torch.bool), 2, 2, 1)
