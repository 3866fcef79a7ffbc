"""Numba kernels for the index build of hierarchical attention (CPU and CUDA).

The index build turns per-token scores into a partition of the positions (see
:func:`medspt.nn.attention.select_partition` for the rule and the pure-torch reference). The
work splits into independent *tiles* (runs of ``tile`` coarsest-level entries), so both
backends run one worker per ``(batch·head, tile)``:

1. ``select``: build the max-pooled score pyramid of the tile, then from the coarsest
   level down mark the ``topk`` best active entries for refinement (ties: lower index) and
   emit the rest; every refined entry activates its non-padding children.
2. an exclusive sum of the per-tile counts gives each tile its first output slot;
3. ``emit``: walk the tile's positions in order, writing each emitted entry once
   ``(level, index)`` and the slot covering each position.

The per-tile routines are plain Python compiled twice, by ``numba.njit`` for the CPU
(``prange`` over tiles) and by ``numba.cuda.jit(device=True)`` for the GPU (one thread per
tile), so the two backends run the same code. On the GPU, torch tensors are handed to Numba
through ``__cuda_array_interface__`` on torch's current stream: no copy, no host round trip
except reading the largest count, which fixes the output shape. Under
``NUMBA_ENABLE_CUDASIM=1`` the CUDA kernels run in Numba's simulator on host arrays.
"""

from __future__ import annotations

import math

import numba
import numpy as np
import torch
from numba import cuda

__all__ = ["build_index_numba", "build_index_cuda", "cuda_usable", "simulator_enabled"]

# entry states in the pyramid
_EMPTY, _ACTIVE, _MARKED, _EMITTED, _REFINED = 0, 1, 2, 3, 4


def _select_tile(bh, t, b, scores, valid, lvl, state, offsets, levels, pool, topk, tile):
    """Pyramid maxima and top-k refinement of one tile; returns the number emitted."""
    top = levels - 1
    n = scores.shape[1]
    # level 0: the token scores, -inf at padding (and past the end), NaN read as 0
    span = tile * pool**top
    lo = t * span
    hi = min(lo + span, offsets[1] if levels > 1 else lvl.shape[1])
    for x in range(lo, hi):
        v = -math.inf
        if x < n and valid[b, x] != 0:
            v = scores[bh, x]
            if v != v:
                v = 0.0
        lvl[bh, x] = v
        state[bh, x] = _EMPTY
    # max-pool the scores of this tile up the pyramid
    for lv in range(1, levels):
        span = tile * pool ** (top - lv)
        size = (lvl.shape[1] - offsets[lv]) if lv == top else (offsets[lv + 1] - offsets[lv])
        lo = t * span
        hi = min(lo + span, size)
        for e in range(lo, hi):
            m = -math.inf
            for c in range(e * pool, e * pool + pool):
                v = lvl[bh, offsets[lv - 1] + c]
                if v > m:
                    m = v
            lvl[bh, offsets[lv] + e] = m
            state[bh, offsets[lv] + e] = _EMPTY

    size_top = lvl.shape[1] - offsets[top]
    lo = t * tile
    hi = min(lo + tile, size_top)
    for e in range(lo, hi):
        state[bh, offsets[top] + e] = _ACTIVE if lvl[bh, offsets[top] + e] > -math.inf else _EMPTY

    count = 0
    for lv in range(top, 0, -1):
        span = tile * pool ** (top - lv)
        size = (lvl.shape[1] - offsets[lv]) if lv == top else (offsets[lv + 1] - offsets[lv])
        lo = t * span
        hi = min(lo + span, size)
        o = offsets[lv]
        for _ in range(topk):  # k passes of arg-max: O(k·m), ties go to the lower index
            best = -1
            best_v = -math.inf
            for e in range(lo, hi):
                if state[bh, o + e] == _ACTIVE:
                    v = lvl[bh, o + e]
                    if best < 0 or v > best_v:
                        best = e
                        best_v = v
            if best < 0:
                break
            state[bh, o + best] = _MARKED
        oc = offsets[lv - 1]
        for e in range(lo, hi):
            s = state[bh, o + e]
            if s == _ACTIVE:
                state[bh, o + e] = _EMITTED
                count += 1
            elif s == _MARKED:
                state[bh, o + e] = _REFINED
                for c in range(e * pool, e * pool + pool):
                    state[bh, oc + c] = _ACTIVE if lvl[bh, oc + c] > -math.inf else _EMPTY

    span = tile * pool**top
    lo = t * span
    hi = min(lo + span, offsets[1] if levels > 1 else lvl.shape[1])
    for x in range(lo, hi):
        if state[bh, x] == _ACTIVE:
            state[bh, x] = _EMITTED
            count += 1
    return count


def _emit_tile(bh, t, b, state, valid, offsets, levels, pool, tile, base, lvl_out, pos_out, slot):
    """Write the emitted entries of one tile in position order, and each position's slot."""
    top = levels - 1
    n_pos = slot.shape[1]
    n = valid.shape[1]
    span = tile * pool**top
    lo = t * span
    hi = min(lo + span, n_pos)
    cur = base - 1
    last_l = -1
    last_e = -1
    for x in range(lo, hi):
        found_l = -1
        found_e = -1
        for lv in range(top, -1, -1):  # an emitted entry's ancestors are all refined
            e = x // pool**lv
            if state[bh, offsets[lv] + e] == _EMITTED:
                found_l = lv
                found_e = e
                break
        if found_l < 0:
            slot[bh, x] = -1
            continue
        if found_l != last_l or found_e != last_e:
            cur += 1
            lvl_out[bh, cur] = found_l
            pos_out[bh, cur] = found_e
            last_l = found_l
            last_e = found_e
        slot[bh, x] = cur if x < n and valid[b, x] != 0 else -1


# --------------------------------------------------------------------------- CPU

_select_tile_cpu = numba.njit(cache=True, nogil=True)(_select_tile)
_emit_tile_cpu = numba.njit(cache=True, nogil=True)(_emit_tile)


@numba.njit(parallel=True, cache=True)
def _select_cpu(scores, valid, heads, lvl, state, offsets, levels, pool, topk, tile, n_tiles, tc):
    for i in numba.prange(lvl.shape[0] * n_tiles):
        bh, t = i // n_tiles, i % n_tiles
        b = bh // heads
        tc[bh, t] = _select_tile_cpu(
            bh, t, b, scores, valid, lvl, state, offsets, levels, pool, topk, tile
        )


@numba.njit(parallel=True, cache=True)
def _emit_cpu(state, valid, heads, offsets, levels, pool, tile, n_tiles, tile_base, lo, po, slot):
    for i in numba.prange(state.shape[0] * n_tiles):
        bh, t = i // n_tiles, i % n_tiles
        b = bh // heads
        base = tile_base[bh, t]
        _emit_tile_cpu(bh, t, b, state, valid, offsets, levels, pool, tile, base, lo, po, slot)


# --------------------------------------------------------------------------- CUDA

_select_tile_gpu = cuda.jit(device=True)(_select_tile)
_emit_tile_gpu = cuda.jit(device=True)(_emit_tile)


@cuda.jit
def _select_gpu(scores, valid, heads, lvl, state, offsets, levels, pool, topk, tile, n_tiles, tc):
    i = cuda.grid(1)
    if i < lvl.shape[0] * n_tiles:
        bh, t = i // n_tiles, i % n_tiles
        b = bh // heads
        tc[bh, t] = _select_tile_gpu(
            bh, t, b, scores, valid, lvl, state, offsets, levels, pool, topk, tile
        )


@cuda.jit
def _emit_gpu(state, valid, heads, offsets, levels, pool, tile, n_tiles, tile_base, lo, po, slot):
    i = cuda.grid(1)
    if i < state.shape[0] * n_tiles:
        bh, t = i // n_tiles, i % n_tiles
        b = bh // heads
        base = tile_base[bh, t]
        _emit_tile_gpu(bh, t, b, state, valid, offsets, levels, pool, tile, base, lo, po, slot)


def simulator_enabled() -> bool:
    """True when Numba runs CUDA kernels in its simulator (``NUMBA_ENABLE_CUDASIM=1``)."""
    return bool(numba.config.ENABLE_CUDASIM)


def cuda_usable(t: torch.Tensor) -> bool:
    """Whether the CUDA kernels can run on tensors like ``t`` (real GPU or simulator)."""
    if t.is_cuda:
        return not simulator_enabled() and cuda.is_available()
    return simulator_enabled()


# --------------------------------------------------------------------------- wrappers


def _layout(n: int, levels: int, pool: int, tile: int | None):
    """Padded length, level sizes and offsets, tile width (coarsest entries) and count."""
    w = pool ** (levels - 1)
    n_pad = -(-n // w) * w
    sizes = [n_pad // pool**lv for lv in range(levels)]
    offsets = np.cumsum([0] + sizes[:-1]).astype(np.int64)
    tile = sizes[-1] if tile is None else max(1, min(int(tile), sizes[-1]))
    n_tiles = -(-sizes[-1] // tile) if sizes[-1] else 0
    return n_pad, sizes, offsets, tile, n_tiles


def _buffers(scores, valid, sizes):
    """Kernel inputs: float32 scores ``(B·H, N)``, uint8 validity ``(B, N)``; and the
    pyramid's score and state buffers, which the kernels fill tile by tile."""
    B, H, N = scores.shape
    dev = scores.device
    s = scores.detach().to(torch.float32).reshape(B * H, N).contiguous()
    v = valid.to(device=dev, dtype=torch.uint8).contiguous()
    lvl = torch.empty((B * H, sum(sizes)), dtype=torch.float32, device=dev)
    state = torch.empty((B * H, sum(sizes)), dtype=torch.int8, device=dev)
    return s, v, lvl, state


def _outputs(tile_counts, B, H, n_pad, dev):
    counts = tile_counts.sum(1)
    tile_base = torch.cumsum(tile_counts, 1) - tile_counts  # exclusive prefix sum
    S = int(counts.max()) if counts.numel() else 0  # the one host sync: fixes the shape
    lo = torch.full((B * H, S), -1, dtype=torch.int64, device=dev)
    po = torch.full((B * H, S), -1, dtype=torch.int64, device=dev)
    slot = torch.empty((B * H, n_pad), dtype=torch.int64, device=dev)
    return counts, tile_base, lo, po, slot


def _finish(lo, po, counts, slot, B, H):
    return lo.view(B, H, -1), po.view(B, H, -1), counts.view(B, H), slot.view(B, H, -1)


def build_index_numba(scores, valid, levels, pool, topk, tile):
    """CPU (Numba ``parallel=True``) index build; see :func:`medspt.nn.attention.select_partition`.

    Returns ``(level_idx, pos_idx, counts, slot)`` as CPU tensors.
    """
    B, H, N = scores.shape
    n_pad, sizes, offsets, tile, n_tiles = _layout(N, levels, pool, tile)
    s, v, lvl, state = _buffers(scores.cpu(), valid.cpu(), sizes)
    tile_counts = torch.zeros((B * H, n_tiles), dtype=torch.int64)
    _select_cpu(
        s.numpy(),
        v.numpy(),
        H,
        lvl.numpy(),
        state.numpy(),
        offsets,
        levels,
        pool,
        topk,
        tile,
        n_tiles,
        tile_counts.numpy(),
    )
    counts, tile_base, lo, po, slot = _outputs(tile_counts, B, H, n_pad, "cpu")
    _emit_cpu(
        state.numpy(),
        v.numpy(),
        H,
        offsets,
        levels,
        pool,
        tile,
        n_tiles,
        tile_base.numpy(),
        lo.numpy(),
        po.numpy(),
        slot.numpy(),
    )
    return _finish(lo, po, counts, slot, B, H)


def _device_view(t: torch.Tensor):
    """Zero-copy Numba view of a tensor: ``__cuda_array_interface__`` on a GPU, the host
    array itself in the simulator."""
    return cuda.as_cuda_array(t) if t.is_cuda else t.numpy()


def build_index_cuda(scores, valid, levels, pool, topk, tile, threads: int = 64):
    """GPU (``numba.cuda``) index build on torch's current stream; the tensors never leave
    the device. In the simulator the same kernels run on CPU tensors.

    Returns ``(level_idx, pos_idx, counts, slot)`` on the device of ``scores``.
    """
    if not cuda_usable(scores):
        raise RuntimeError(
            "the CUDA index build needs CUDA tensors and a working numba.cuda, or "
            "NUMBA_ENABLE_CUDASIM=1 (set before numba is imported) for CPU tensors"
        )
    B, H, N = scores.shape
    dev = scores.device
    n_pad, sizes, offsets, tile, n_tiles = _layout(N, levels, pool, tile)
    s, vv, lvl, state = _buffers(scores, valid.to(dev), sizes)
    tile_counts = torch.zeros((B * H, n_tiles), dtype=torch.int64, device=dev)
    offs = torch.from_numpy(offsets).to(dev)
    n_work = B * H * n_tiles
    blocks = max(1, -(-n_work // threads))
    if scores.is_cuda:
        stream = cuda.external_stream(torch.cuda.current_stream(dev).cuda_stream)
        launch = (blocks, threads, stream)
    else:
        launch = (blocks, threads)
    v = _device_view
    if n_work:
        _select_gpu[launch](
            v(s),
            v(vv),
            H,
            v(lvl),
            v(state),
            v(offs),
            levels,
            pool,
            topk,
            tile,
            n_tiles,
            v(tile_counts),
        )
    counts, tile_base, lo, po, slot = _outputs(tile_counts, B, H, n_pad, dev)
    if n_work and lo.shape[1]:
        _emit_gpu[launch](
            v(state),
            v(vv),
            H,
            v(offs),
            levels,
            pool,
            tile,
            n_tiles,
            v(tile_base),
            v(lo),
            v(po),
            v(slot),
        )
    elif n_work:
        slot.fill_(-1)
    return _finish(lo, po, counts, slot, B, H)
