"""Hierarchical attention: a non-causal adaptation of Lighthouse Attention.

Every token is scored per head without gradient; a pyramid of pooled ``q, k, v`` is built
(level ``l`` averages windows of ``pool**l`` tokens); the top-``topk`` entries of each level
are refined into their children, the rest stay coarse. The emitted entries form a partition
of the non-padding positions; ordinary ``scaled_dot_product_attention`` runs on them and each
entry's output is broadcast back to the positions it covers.

This module is the pure-torch reference. The index build lives in :func:`select_partition`
so that faster kernels can replace it without touching pooling, gather or scatter.

Importing ``medspt.attention`` registers the module under the name ``"hierarchical"``, so
``ModelConfig(attention="hierarchical")`` works once this module has been imported.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
import torch.nn as nn
import torch.nn.functional as F

from medspt.model import register_attention

__all__ = ["HierarchicalAttention", "Partition", "select_partition", "token_scores"]


class Partition(NamedTuple):
    """Emitted entries per ``(batch, head)``, packed densely.

    ``level_idx`` and ``pos_idx`` are ``(B, H, S)`` long tensors: slot ``s`` holds the entry
    at pyramid level ``level_idx`` with index ``pos_idx`` inside that level (it covers tokens
    ``pos_idx * pool**level_idx`` up to, not including, ``(pos_idx + 1) * pool**level_idx``).
    Slots at or beyond ``counts[b, h]`` are unused and hold ``-1`` in both tensors.
    ``counts`` is ``(B, H)``: the number of emitted entries. ``S = counts.max()``.
    """

    level_idx: torch.Tensor
    pos_idx: torch.Tensor
    counts: torch.Tensor


def _padded_length(n: int, levels: int, pool: int) -> int:
    w = pool ** (levels - 1)
    return -(-n // w) * w


def _check(levels: int, pool: int, topk: int) -> None:
    if levels < 1:
        raise ValueError(f"levels must be at least 1, got {levels!r}")
    if pool < 2:
        raise ValueError(f"pool must be at least 2, got {pool!r}")
    if topk < 0:
        raise ValueError(f"topk must be non-negative, got {topk!r}")


@torch.no_grad()
def token_scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """Per-token, per-head importance ``‖q‖₂ + ‖k‖₂`` of shape ``(B, H, N)`` (no gradient)."""
    return torch.linalg.vector_norm(q, dim=-1) + torch.linalg.vector_norm(k, dim=-1)


@torch.no_grad()
def select_partition(
    scores: torch.Tensor,
    pad_mask: torch.Tensor | None,
    levels: int,
    pool: int,
    topk: int,
) -> Partition:
    """Choose which pyramid entries to attend over.

    Args:
        scores: ``(B, H, N)`` token scores (larger = more important).
        pad_mask: ``(B, N)`` bool, True = padding, or None.
        levels: number of pyramid levels (1 = tokens only).
        pool: pooling factor between consecutive levels.
        topk: entries refined per level and per ``(batch, head)``.

    Starting from all entries of the coarsest level, the ``topk`` highest-scoring active
    entries of each level are replaced by their (non-padding) children at the next finer
    level; the others are emitted at their level. A window's score is the max over its
    non-padding tokens. The sequence end is padded to a multiple of ``pool**(levels-1)``;
    entries covering padding only are never emitted. The result is a partition: every
    non-padding position is covered by exactly one emitted entry, and
    ``counts <= ceil(N / pool**(levels-1)) + (levels-1) * (pool-1) * topk``.

    Returns:
        :class:`Partition` ``(level_idx, pos_idx, counts)``.
    """
    _check(levels, pool, topk)
    B, H, N = scores.shape
    device = scores.device
    Np = _padded_length(N, levels, pool)
    valid = torch.ones(B, N, dtype=torch.bool, device=device)
    if pad_mask is not None:
        valid = ~pad_mask.to(device=device, dtype=torch.bool)
    valid = F.pad(valid, (0, Np - N), value=False)  # (B, Np)
    s = F.pad(scores.float(), (0, Np - N))
    s = s.masked_fill(~valid[:, None, :], float("-inf"))  # (B, H, Np)

    # level scores and validity: (B, H, M_l) and (B, 1, M_l)
    lvl_score, lvl_valid = [], []
    for lvl in range(levels):
        w = pool**lvl
        lvl_score.append(s.view(B, H, Np // w, w).amax(-1))
        lvl_valid.append(valid.view(B, 1, Np // w, w).any(-1))

    emitted = [None] * levels
    active = lvl_valid[-1].expand(B, H, -1).clone()
    for lvl in range(levels - 1, 0, -1):
        sc = lvl_score[lvl].masked_fill(~active, float("-inf"))
        kk = min(topk, sc.shape[-1])
        refine = torch.zeros_like(active)
        if kk > 0:
            top_val, top_idx = sc.topk(kk, dim=-1)
            refine.scatter_(-1, top_idx, torch.isfinite(top_val))
        refine &= active
        emitted[lvl] = active & ~refine
        active = refine.repeat_interleave(pool, dim=-1) & lvl_valid[lvl - 1]
    emitted[0] = active

    # pack: concatenate levels, move emitted entries to the front (stable)
    em = torch.cat(emitted, dim=-1)  # (B, H, E)
    sizes = [e.shape[-1] for e in emitted]
    reps = torch.tensor(sizes, device=device)
    lvl_of = torch.repeat_interleave(torch.arange(levels, device=device), reps)
    pos_of = torch.cat([torch.arange(m, device=device) for m in sizes])
    counts = em.sum(-1)
    S = int(counts.max()) if counts.numel() else 0
    order = torch.argsort((~em).to(torch.int8), dim=-1, stable=True)[..., :S]
    used = torch.arange(S, device=device) < counts[..., None]
    level_idx = torch.where(used, lvl_of[order], -1)
    pos_idx = torch.where(used, pos_of[order], -1)
    return Partition(level_idx, pos_idx, counts)


def _pyramid(x: torch.Tensor, valid: torch.Tensor, levels: int, pool: int) -> torch.Tensor:
    """Masked window means of ``x (B, H, Np, D)`` for every level, concatenated on dim 2."""
    B, H, Np, D = x.shape
    out = []
    for lvl in range(levels):
        w = pool**lvl
        if w == 1:
            out.append(x)
            continue
        m = valid.view(B, 1, Np // w, w, 1).to(x.dtype)
        num = (x.view(B, H, Np // w, w, D) * m).sum(3)
        out.append(num / m.sum(3).clamp_min(1.0))
    return torch.cat(out, dim=2)


class HierarchicalAttention(nn.Module):
    """Hierarchical (Lighthouse-style, non-causal) attention over a pooled token pyramid.

    Same call as :class:`medspt.model.FullAttention`: ``forward(q, k, v, key_padding_mask)``
    with ``q, k, v`` shaped ``(B, H, N, Dh)`` and ``key_padding_mask (B, N)`` (True =
    padding); returns ``(B, H, N, Dh)``. Outputs at padding positions are zero. With
    ``topk`` large enough that every entry is refined down to tokens, the result equals
    full attention. Selection carries no gradient; pooling, gather and scatter do.
    """

    def __init__(self, levels: int = 3, pool: int = 4, topk: int = 8, dropout: float = 0.0):
        super().__init__()
        _check(levels, pool, topk)
        self.levels, self.pool, self.topk = levels, pool, topk
        self.dropout = dropout

    def extra_repr(self) -> str:
        return f"levels={self.levels}, pool={self.pool}, topk={self.topk}, dropout={self.dropout}"

    def forward(self, q, k, v, key_padding_mask=None):
        B, H, N, Dh = q.shape
        L, p = self.levels, self.pool
        part = select_partition(token_scores(q, k), key_padding_mask, L, p, self.topk)
        Np = _padded_length(N, L, p)
        valid = torch.ones(B, N, dtype=torch.bool, device=q.device)
        if key_padding_mask is not None:
            valid = ~key_padding_mask.to(device=q.device, dtype=torch.bool)
        valid = F.pad(valid, (0, Np - N), value=False)

        # offsets of each level inside the concatenated pyramid
        sizes = [Np // p**lvl for lvl in range(L)]
        offsets = torch.tensor([0] + sizes[:-1], device=q.device).cumsum(0)
        used = part.level_idx >= 0  # (B, H, S)
        entry = torch.where(used, offsets[part.level_idx.clamp_min(0)] + part.pos_idx, 0)
        S = entry.shape[-1]
        if S == 0:  # nothing but padding
            return q.new_zeros(B, H, N, Dh) + 0.0 * (q.sum() + k.sum() + v.sum())

        idx = entry[..., None].expand(B, H, S, Dh)
        qs, ks, vs = (
            _pyramid(F.pad(t, (0, 0, 0, Np - N)), valid, L, p).gather(2, idx) for t in (q, k, v)
        )
        # rows with nothing emitted (fully padded) attend to slot 0 to stay finite; discarded
        keep = used | (part.counts == 0)[..., None]
        dp = self.dropout if self.training else 0.0
        mask = keep[:, :, None, :]
        out = F.scaled_dot_product_attention(qs, ks, vs, attn_mask=mask, dropout_p=dp)

        # slot covering each position: per level, entry -> slot, broadcast to its tokens
        slot = torch.full((B, H, Np), -1, dtype=torch.long, device=q.device)
        slot_ids = torch.arange(S, device=q.device).expand(B, H, S)
        for lvl in range(L):
            here = used & (part.level_idx == lvl)
            m = torch.full((B, H, sizes[lvl] + 1), -1, dtype=torch.long, device=q.device)
            m.scatter_(-1, torch.where(here, part.pos_idx, sizes[lvl]), slot_ids)
            slot = torch.maximum(slot, m[..., :-1].repeat_interleave(p**lvl, dim=-1))
        covered = (slot >= 0) & valid[:, None, :]
        y = out.gather(2, slot.clamp_min(0)[..., None].expand(B, H, Np, Dh))
        y = y * covered[..., None].to(y.dtype)
        return y[:, :, :N]


register_attention("hierarchical", lambda cfg: HierarchicalAttention(dropout=cfg.dropout))
