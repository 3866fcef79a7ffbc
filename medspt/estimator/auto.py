"""Data-aware values for the estimator's ``"auto"`` settings.

A window of 200 steps and a case of 12 steps need different patch lengths, and 3,000
training windows and 30 need different batch sizes. These rules turn the shape of the
training data into those settings; :class:`medspt.SPTClassifier` records what they chose in
``auto_params_``. The rules keep the values the defaults were selected with on the real
protocols (patch 8 and batch 64 for GPD-1's and NE-1's windows of 200-240 steps and
thousands of windows) and were tried on the small public sets of
``benchmarks/public_sets.py``, which the selection rounds then used to choose defaults:
development data, not an independent check.
``n_estimators="auto"`` (round 7 of ``benchmarks/select_model.py``) averages five seeds on
small sets only, where a fit is cheap and one seed's luck moves the score most.
"""

from __future__ import annotations

import math

MIN_TOKENS = 12  # fewest tokens per window the patch length aims for
MAX_TOKENS = 512  # most tokens per window: attention cost grows with their square
MAX_PATCH = 8  # the patch length the defaults were selected with
MIN_BATCH, MAX_BATCH = 8, 64
BATCHES_PER_EPOCH = 8  # the batch size aims for at least this many steps per epoch
FEWEST_TOKENS = 4  # a window cut into fewer tokens than this is refused


def _pow2_floor(x: float) -> int:
    return 1 << max(0, math.floor(math.log2(x))) if x >= 1 else 1


def _pow2_ceil(x: float) -> int:
    return 1 << max(0, math.ceil(math.log2(x))) if x > 1 else 1


def patch_len_for(n_steps: int) -> int:
    """Patch length for windows (or padded cases) of ``n_steps`` steps.

    The largest power of two up to 8 that still leaves at least 12 tokens per window
    (1 for windows under 24 steps), raised for very long windows until they have at most
    512 tokens.

    >>> patch_len_for(200), patch_len_for(100), patch_len_for(29), patch_len_for(12000)
    (8, 8, 2, 32)
    """
    if n_steps < 1:
        raise ValueError(f"n_steps must be >= 1, got {n_steps}")
    short = min(MAX_PATCH, _pow2_floor(n_steps / MIN_TOKENS))
    return max(short, _pow2_ceil(n_steps / MAX_TOKENS))


CONV_MAX_TOKENS = 64  # most tokens per window of the conv tokenizer (CPU cost)
MASK_RUNS = 16  # with the conv tokenizer, a mask hides runs of about 1/16 of a window


def token_stride_for(n_steps: int) -> int:
    """Token stride of the conv tokenizer for windows of ``n_steps`` steps: the smallest
    that gives at most 64 tokens (attention's cost grows with their square; hierarchical
    attention beyond), rounded up to a multiple of the pooling a stride over 8 needs
    (:func:`medspt.nn.model.conv_steps`).

    >>> token_stride_for(24), token_stride_for(150), token_stride_for(200), token_stride_for(1460)
    (1, 3, 4, 24)
    """
    if n_steps < 1:
        raise ValueError(f"n_steps must be >= 1, got {n_steps}")
    s = -(-n_steps // CONV_MAX_TOKENS)
    r = -(-s // 8)  # average pooling by r, then a convolution stride of at most 8
    return r * -(-s // r)


def mask_run_for(n_steps: int, stride: int) -> int:
    """Steps one mask unit hides with the conv tokenizer: about a sixteenth of the window,
    at least one token. Its convolutions see many neighbours of a hidden step, so single
    hidden steps would be interpolation; runs of a sixteenth make reconstruction a task.

    >>> mask_run_for(200, 2), mask_run_for(24, 1), mask_run_for(200, 20)
    (13, 2, 20)
    """
    return max(int(stride), -(-int(n_steps) // MASK_RUNS))


def batch_size_for(n_train: int) -> int:
    """Batch size for ``n_train`` training windows: a power of two from 8 to 64 that gives
    an epoch at least 8 optimizer steps where the data allow.

    >>> batch_size_for(5000), batch_size_for(300), batch_size_for(32)
    (64, 32, 8)
    """
    if n_train < 1:
        raise ValueError(f"n_train must be >= 1, got {n_train}")
    return min(MAX_BATCH, max(MIN_BATCH, _pow2_floor(n_train / BATCHES_PER_EPOCH)))


SMALL_SET = 300  # fewer labelled windows than this: the small regime (36-270 cases)
SMALL_SET_MEMBERS = 5  # seeds averaged there


def n_estimators_for(n_windows: int) -> int:
    """Ensemble members for a fit on ``n_windows`` labelled windows (cases): five seeds
    below 300 windows, one from 300 on, so the protocols' thousands of windows keep one
    model and its fit time.

    >>> n_estimators_for(40), n_estimators_for(299), n_estimators_for(300)
    (5, 5, 1)
    """
    if n_windows < 1:
        raise ValueError(f"n_windows must be >= 1, got {n_windows}")
    return SMALL_SET_MEMBERS if n_windows < SMALL_SET else 1
