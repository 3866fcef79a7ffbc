"""Hierarchical attention: a non-causal adaptation of Lighthouse Attention.

Every token is scored per head without gradient (``‖q‖₂ + ‖k‖₂``); a pyramid of max-pooled
scores is built (level ``l`` covers windows of ``pool**l`` tokens). The sequence is cut into
*tiles* of ``tile`` coarsest entries; inside each tile the ``topk`` best entries of each
level are refined into their children and the rest stay coarse. The emitted entries form a
partition of the non-padding positions. Each entry's ``q, k, v`` is the mean of its
non-padding tokens; ordinary ``scaled_dot_product_attention`` runs over the entries, and
each entry's output is broadcast back to the positions it covers.

The index build (selection and the position → entry map) has three implementations with
one interface, :func:`select_partition`: a pure-torch reference (``impl="torch"``), Numba
CPU kernels (``"numba"``) and Numba CUDA kernels (``"cuda"``), see :mod:`medspt.nn.kernels`.
``impl="auto"`` takes the CUDA kernels for CUDA tensors and the Numba CPU kernels
otherwise. All three return identical indices. Pooling, gather and scatter are torch
operations, so gradients flow through them; selection carries none.

:data:`medspt.nn.model.ATTENTION` holds it under the name ``"hierarchical"``
(:func:`hierarchical_from_config`), so ``ModelConfig(attention="hierarchical")`` builds it.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
import torch.nn as nn
import torch.nn.functional as F

from medspt.nn import kernels

__all__ = [
    "HierarchicalAttention",
    "IMPLEMENTATIONS",
    "Partition",
    "accumulation_dtype",
    "hierarchical_from_config",
    "select_partition",
    "token_scores",
]

IMPLEMENTATIONS = ("auto", "torch", "numba", "cuda")


class Partition(NamedTuple):
    """Emitted entries per ``(batch, head)``, in order of position, packed densely.

    ``level_idx`` and ``pos_idx`` are ``(B, H, S)`` long tensors: slot ``s`` holds the entry
    at pyramid level ``level_idx`` with index ``pos_idx`` inside that level (it covers tokens
    ``pos_idx * pool**level_idx`` up to, not including, ``(pos_idx + 1) * pool**level_idx``).
    Slots at or beyond ``counts[b, h]`` are unused and hold ``-1`` in both tensors.
    ``counts`` is ``(B, H)``: the number of emitted entries; ``S = counts.max()``.
    ``slot`` is ``(B, H, Np)``: the slot covering each position of the sequence padded to a
    multiple of ``pool**(levels-1)``, or ``-1`` at padding.
    """

    level_idx: torch.Tensor
    pos_idx: torch.Tensor
    counts: torch.Tensor
    slot: torch.Tensor


def _check(levels: int, pool: int, topk: int, tile: int | None = None, impl: str = "auto"):
    def whole(v) -> bool:
        return isinstance(v, int) and not isinstance(v, bool)

    if not whole(levels) or levels < 1:
        raise ValueError(f"levels must be an integer >= 1, got {levels!r}")
    if not whole(pool) or pool < 2:
        raise ValueError(f"pool must be an integer >= 2, got {pool!r}")
    if not whole(topk) or topk < 0:
        raise ValueError(f"topk must be a non-negative integer, got {topk!r}")
    if tile is not None and (not whole(tile) or tile < 1):
        raise ValueError(f"tile must be a positive integer or None, got {tile!r}")
    if impl not in IMPLEMENTATIONS:
        raise ValueError(f"impl must be one of {IMPLEMENTATIONS}, got {impl!r}")


def accumulation_dtype(dtype: torch.dtype) -> torch.dtype:
    """float32 for half-precision tensors (bf16 / fp16 under autocast), else ``dtype``:
    scores, counts and means are summed in it, and the index build always reads float32."""
    return torch.promote_types(dtype, torch.float32)


@torch.no_grad()
def token_scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """Per-token, per-head importance ``‖q‖₂ + ‖k‖₂`` of shape ``(B, H, N)`` (no gradient),
    in float32 or wider (see :func:`accumulation_dtype`)."""
    acc = accumulation_dtype(q.dtype)
    return torch.linalg.vector_norm(q, dim=-1, dtype=acc) + torch.linalg.vector_norm(
        k, dim=-1, dtype=acc
    )


def _resolve_impl(impl: str, t: torch.Tensor) -> str:
    if impl != "auto":
        return impl
    if t.is_cuda:
        return "cuda" if kernels.cuda_usable(t) else "torch"
    return "numba"


@torch.no_grad()
def select_partition(
    scores: torch.Tensor,
    pad_mask: torch.Tensor | None,
    levels: int,
    pool: int,
    topk: int,
    tile: int | None = None,
    impl: str = "auto",
) -> Partition:
    """Choose which pyramid entries to attend over.

    Parameters
    ----------
    scores : Tensor of shape (B, H, N)
        Token scores (larger = more important).
    pad_mask : Tensor of shape (B, N) or None
        True marks padding.
    levels : int
        Number of pyramid levels (1 = tokens only).
    pool : int
        Pooling factor between consecutive levels.
    topk : int
        Entries refined per level, per tile and per ``(batch, head)``.
    tile : int or None
        Tile width in coarsest-level entries (``tile * pool**(levels-1)`` tokens); None =
        the whole sequence is one tile.
    impl : {"auto", "torch", "numba", "cuda"}
        Implementation of the index build; all give identical results.

    Notes
    -----
    The sequence end is padded to a multiple of ``pool**(levels-1)``. A window's score is
    the max over its non-padding tokens; entries covering padding only are never active.
    Inside each tile, from the coarsest level down, the ``topk`` highest-scoring active
    entries (ties: lower index) are replaced by their non-padding children; the others are
    emitted at their level. Every non-padding position is covered by exactly one emitted
    entry, and per tile at most ``tile + (levels-1) * (pool-1) * topk`` entries are emitted.

    Returns
    -------
    Partition
    """
    _check(levels, pool, topk, tile, impl)
    B, H, N = scores.shape
    valid = torch.ones(B, N, dtype=torch.bool, device=scores.device)
    if pad_mask is not None:
        if pad_mask.shape != (B, N):
            raise ValueError(f"pad_mask must have shape {(B, N)}, got {tuple(pad_mask.shape)}")
        valid = ~pad_mask.to(device=scores.device, dtype=torch.bool)
    impl = _resolve_impl(impl, scores)
    if impl == "torch":
        return _select_torch(scores, valid, levels, pool, topk, tile)
    build = kernels.build_index_numba if impl == "numba" else kernels.build_index_cuda
    dev = scores.device
    out = build(scores, valid, levels, pool, topk, tile)
    return Partition(*(t.to(dev) for t in out))


def _select_torch(scores, valid, levels, pool, topk, tile) -> Partition:
    """Pure-torch reference of the index build, vectorized over batch, heads and tiles."""
    B, H, N = scores.shape
    dev = scores.device
    w_top = pool ** (levels - 1)
    Np = -(-N // w_top) * w_top
    sizes = [Np // pool**lv for lv in range(levels)]
    tile = sizes[-1] if tile is None else max(1, min(tile, sizes[-1]))
    n_tiles = -(-sizes[-1] // tile)
    vpad = F.pad(valid, (0, Np - N), value=False)  # (B, Np)
    s = torch.nan_to_num(scores.float(), nan=0.0, posinf=3.0e38)
    s = F.pad(s, (0, Np - N)).masked_fill(~vpad[:, None, :], -math.inf)  # (B, H, Np)
    lvl_score = [s.view(B, H, Np // pool**lv, pool**lv).amax(-1) for lv in range(levels)]

    emitted = [None] * levels
    active = torch.isfinite(lvl_score[-1])
    for lv in range(levels - 1, 0, -1):
        span = tile * pool ** (levels - 1 - lv)  # entries of this level per tile
        sc = lvl_score[lv].masked_fill(~active, -math.inf)
        sc = F.pad(sc, (0, n_tiles * span - sizes[lv]), value=-math.inf)
        sc = sc.view(B, H, n_tiles, span)
        kk = min(topk, span)
        refine = torch.zeros_like(sc, dtype=torch.bool)
        if kk > 0:
            # stable sort of -score: ties keep the lower index first, like the kernels
            order = torch.argsort(-sc, dim=-1, stable=True)[..., :kk]
            refine.scatter_(-1, order, torch.isfinite(sc.gather(-1, order)))
        refine = refine.view(B, H, -1)[..., : sizes[lv]] & active
        emitted[lv] = active & ~refine
        active = refine.repeat_interleave(pool, dim=-1) & torch.isfinite(lvl_score[lv - 1])
    emitted[0] = active

    # entries in position order: mark each emitted entry's first position, count up
    starts = torch.zeros(B, H, Np, dtype=torch.long, device=dev)
    covered = torch.zeros(B, H, Np, dtype=torch.bool, device=dev)
    for lv, em in enumerate(emitted):
        w = pool**lv
        starts.view(B, H, sizes[lv], w)[..., 0] += em
        covered |= em.repeat_interleave(w, dim=-1)
    rank = starts.cumsum(-1) - 1  # (B, H, Np): slot of the entry covering each position
    counts = starts.sum(-1)
    S = int(counts.max()) if counts.numel() else 0
    slot = torch.where(covered & vpad[:, None, :], rank, -1)

    level_idx = torch.full((B, H, S + 1), -1, dtype=torch.long, device=dev)
    pos_idx = torch.full((B, H, S + 1), -1, dtype=torch.long, device=dev)
    for lv, em in enumerate(emitted):
        w = pool**lv
        dst = torch.where(em, rank.view(B, H, sizes[lv], w)[..., 0], S)  # S = discard slot
        level_idx.scatter_(-1, dst, torch.full_like(dst, lv))
        pos_idx.scatter_(-1, dst, torch.arange(sizes[lv], device=dev).expand_as(dst))
    return Partition(level_idx[..., :S], pos_idx[..., :S], counts, slot)


class HierarchicalAttention(nn.Module):
    """Hierarchical (Lighthouse-style, non-causal) attention over a pooled token pyramid.

    Same call as :class:`medspt.nn.model.FullAttention`: ``forward(q, k, v, key_padding_mask)``
    with ``q, k, v`` shaped ``(B, H, N, Dh)`` and ``key_padding_mask (B, N)`` (True =
    padding); returns ``(B, H, N, Dh)``. Outputs at padding positions are zero. With
    ``topk`` large enough that every entry is refined down to tokens, the result equals
    full attention. Selection carries no gradient; pooling, gather and scatter do.

    Parameters
    ----------
    levels, pool, topk, tile, impl
        See :func:`select_partition`. The defaults keep at most
        ``32 + 2·3·4 = 56`` entries per 512 tokens: about 9× fewer than full attention.
    dropout : float
        Attention dropout while training.
    """

    def __init__(
        self,
        levels: int = 3,
        pool: int = 4,
        topk: int = 4,
        tile: int | None = 32,
        impl: str = "auto",
        dropout: float = 0.0,
    ):
        super().__init__()
        _check(levels, pool, topk, tile, impl)
        self.levels, self.pool, self.topk, self.tile, self.impl = levels, pool, topk, tile, impl
        self.dropout = dropout

    def extra_repr(self) -> str:
        return (
            f"levels={self.levels}, pool={self.pool}, topk={self.topk}, tile={self.tile}, "
            f"impl={self.impl!r}, dropout={self.dropout}"
        )

    def _entries(self, q, k, key_padding_mask):
        """Select the partition and return ``(part, S, dump, n_tok, entry_mean, keep)``:
        ``dump (B, H, N)`` is each token's entry slot (padding -> extra slot ``S``),
        ``n_tok (B, H, S+1)`` the tokens per slot, ``entry_mean`` pools ``(B, H, N, Dh)``
        to ``(B, H, S, Dh)`` and ``keep (B, H, S)`` marks the used slots."""
        B, H, N, Dh = q.shape
        part = select_partition(
            token_scores(q, k),
            key_padding_mask,
            self.levels,
            self.pool,
            self.topk,
            self.tile,
            self.impl,
        )
        S = part.level_idx.shape[-1]
        slot = part.slot[..., :N]  # (B, H, N); positions past N are padding
        dump = torch.where(slot >= 0, slot, S)  # padding goes to a discarded extra slot
        idx = dump[..., None].expand(B, H, N, Dh)
        # counts and sums in float32 even under bf16 autocast: bf16 counts stop being exact
        # at 256 and its sums lose the small tokens of an entry
        acc = accumulation_dtype(q.dtype)
        n_tok = torch.zeros(B, H, S + 1, dtype=acc, device=q.device)
        n_tok.scatter_add_(-1, dump, torch.ones_like(dump, dtype=acc))
        denom = n_tok[..., :S, None].clamp_min(1.0)  # (B, H, S, 1)

        def entry_mean(t):  # (B, H, N, Dh) -> (B, H, S, Dh): mean of each entry's tokens
            z = torch.zeros(B, H, S + 1, Dh, dtype=acc, device=t.device)
            z.scatter_add_(2, idx, t.to(acc))
            return (z[:, :, :S] / denom).to(t.dtype)

        # unused slots are masked as keys; rows with nothing emitted attend to slot 0 to
        # stay finite (their output is discarded)
        keep = torch.arange(S, device=q.device) < part.counts[..., None]
        keep |= (part.counts == 0)[..., None]
        return part, S, dump, n_tok, entry_mean, keep

    def attention_weights(self, q, k, key_padding_mask=None) -> torch.Tensor:
        """The attention ``forward`` applies, spread back over tokens: ``(B, H, N, N)``.

        Query ``i`` gets the row of the entry covering it; an entry covering ``m`` key
        tokens shares its probability equally among them (its value is their mean).
        Rows and columns of padding are zero. For diagnostics: this builds N × N."""
        B, H, N, Dh = q.shape
        _, S, dump, n_tok, entry_mean, keep = self._entries(q, k, key_padding_mask)
        if S == 0:
            return q.new_zeros(B, H, N, N)
        s = entry_mean(q) @ entry_mean(k).transpose(-2, -1) / math.sqrt(Dh)  # (B, H, S, S)
        p = torch.softmax(s.masked_fill(~keep[:, :, None, :], -math.inf), dim=-1)
        # append a zero row and column for padding, then expand entries to tokens
        p = F.pad(p, (0, 1, 0, 1))  # (B, H, S+1, S+1)
        share = (p / n_tok.clamp_min(1.0)[:, :, None, :]).to(p.dtype)
        rows = share.gather(2, dump[..., None].expand(B, H, N, S + 1))  # (B, H, N, S+1)
        return rows.gather(3, dump[:, :, None, :].expand(B, H, N, N))

    def forward(self, q, k, v, key_padding_mask=None):
        # q, k, v: (B, H, N, Dh); key_padding_mask: (B, N), True = padding
        B, H, N, Dh = q.shape
        _, S, dump, _, entry_mean, keep = self._entries(q, k, key_padding_mask)
        if S == 0:  # nothing but padding
            return q.new_zeros(B, H, N, Dh) + 0.0 * (q.sum() + k.sum() + v.sum())
        qs, ks, vs = entry_mean(q), entry_mean(k), entry_mean(v)
        dp = self.dropout if self.training else 0.0
        out = F.scaled_dot_product_attention(
            qs, ks, vs, attn_mask=keep[:, :, None, :], dropout_p=dp
        )  # (B, H, S, Dh)
        # padding gathers from an appended zero row: one (B, H, N, Dh) tensor, no masking
        out = torch.cat([out, out.new_zeros(B, H, 1, Dh)], dim=2)
        return out.gather(2, dump[..., None].expand(B, H, N, Dh))  # zero at padding


def hierarchical_from_config(cfg) -> HierarchicalAttention:
    """The hierarchical attention a model config asks for (its ``attention_options``)."""
    if cfg.positional in ("alibi", "relative"):
        raise ValueError(
            f"positional={cfg.positional!r} biases every token pair and needs "
            "attention='full'; hierarchical attention pools tokens, so use "
            "positional='learned' or 'sinusoidal'"
        )
    options = {"dropout": cfg.attention_dropout, **(cfg.attention_options or {})}
    return HierarchicalAttention(**options)
