"""Masking strategies for masked-reconstruction pretraining.

A mask is a boolean tensor shaped like the batch ``(B, C, T)`` (batch, channels, time) in which
``True`` marks a value that is hidden from the encoder and has to be reconstructed.

All strategies are vectorized over the batch with torch (no Python loop over samples or time
steps), are reproducible through an optional :class:`torch.Generator` and are created on the
requested device. With the generator on that device (as the training loop keeps it), a mask
is drawn without the host waiting for the device: nothing is read back, so a GPU training
step does not stall on its mask.

Strategies
----------
``"random"``
    Every value is hidden independently with probability ``ratio``.
``"span"``
    Per channel, contiguous hidden runs with geometric lengths of mean ``mean_span``; the hidden
    fraction is ``ratio`` in expectation (two-state Markov chain of Zerveas et al., 2021).
``"channel"``
    Whole channels (or groups of channels) hidden for the whole window.
``"block"``
    The ``"span"`` process drawn once per sample and shared by all channels, so the same time
    steps are hidden in every channel.

A user callable ``strategy(shape, generator) -> tensor`` can be passed instead of a name. In
training the generator lives on the training device: draw with ``device=generator.device``.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch

from medspt.core.errors import InputError

__all__ = ["STRATEGIES", "make_mask", "resolve_channel_groups"]

STRATEGIES: tuple[str, ...] = ("random", "span", "channel", "block")


# ----------------------------------------------------------------------------------------------
# validation helpers
# ----------------------------------------------------------------------------------------------


def _check_shape(shape: Any) -> tuple[int, int, int]:
    """Return ``shape`` as a tuple of 3 positive ints or raise ``InputError``."""
    try:
        dims = tuple(shape)
    except TypeError:
        dims = None
    ok = dims is not None and len(dims) == 3
    if ok:
        try:
            # operator.index rejects floats; bools are ints in Python but never a valid size.
            ints = tuple(operator.index(d) for d in dims if not isinstance(d, bool))
        except TypeError:
            ints = ()
        ok = len(ints) == 3 and all(d > 0 for d in ints)
    if not ok:
        raise InputError(f"shape must be 3 positive ints (B, C, T), got {shape!r}")
    return ints  # type: ignore[return-value]


def _check_ratio(ratio: Any) -> float:
    try:
        r = float(ratio)
    except (TypeError, ValueError):
        r = math.nan
    if isinstance(ratio, bool) or not 0.0 < r < 1.0:  # also rejects NaN
        raise InputError(f"ratio (mask_ratio) must be strictly inside (0, 1), got {ratio!r}")
    return r


def _check_mean_span(mean_span: Any) -> float:
    try:
        m = float(mean_span)
    except (TypeError, ValueError):
        m = math.nan
    if isinstance(mean_span, bool) or not (1.0 <= m < math.inf):  # also rejects NaN
        raise InputError(f"mean_span must be a finite number >= 1, got {mean_span!r}")
    return m


def _as_index(value: Any, n_channels: int, where: str) -> int:
    if isinstance(value, bool):
        raise InputError(f"{where}: channel index must be an int, got {value!r}")
    try:
        idx = operator.index(value)
    except TypeError:
        raise InputError(
            f"{where}: channel index must be an int, got {type(value).__name__} {value!r}"
        ) from None
    if not 0 <= idx < n_channels:
        raise InputError(
            f"{where}: channel index {idx} out of range for {n_channels} channels "
            f"(expected 0 <= index < {n_channels})"
        )
    return idx


def _check_groups(groups: Any, n_channels: int) -> list[list[int]]:
    """Validate channel groups (lists of indices): in range, no channel used twice."""
    if isinstance(groups, (str, bytes)) or not isinstance(groups, Sequence):
        raise InputError(
            f"channel_groups must be a list of lists of channel indices, got {groups!r}"
        )
    out: list[list[int]] = []
    seen: dict[int, int] = {}
    for g, group in enumerate(groups):
        if isinstance(group, (str, bytes)) or not isinstance(group, Sequence) or not group:
            raise InputError(
                f"channel_groups[{g}] must be a non-empty list of channel indices, got {group!r}"
            )
        idx = [_as_index(v, n_channels, f"channel_groups[{g}]") for v in group]
        for i in idx:
            if i in seen:
                raise InputError(
                    f"channel_groups: channel {i} is repeated (in group {seen[i]} and group {g}); "
                    "each channel may belong to at most one group"
                )
            seen[i] = g
        out.append(idx)
    return out


def _callable_name(fn: Callable) -> str:
    # Functions have a __qualname__; callable objects are named by their class.
    return getattr(fn, "__qualname__", None) or type(fn).__qualname__


def _check_user_mask(
    result: Any, fn: Callable, shape: tuple[int, int, int], device: torch.device
) -> torch.Tensor:
    """Convert the output of a user strategy to a bool tensor of exactly ``shape``."""
    name = _callable_name(fn)
    expected = f"a bool tensor (or 0/1 values) of shape {tuple(shape)}"
    try:
        mask = torch.as_tensor(result)
    except Exception as exc:  # re-raised with a clearer message
        raise InputError(
            f"mask strategy {name!r} must return {expected}, got {type(result).__name__}"
        ) from exc
    if tuple(mask.shape) != tuple(shape):
        raise InputError(
            f"mask strategy {name!r} must return {expected}, got shape {tuple(mask.shape)}"
        )
    if mask.dtype != torch.bool:
        if mask.is_complex() or not bool(((mask == 0) | (mask == 1)).all()):
            raise InputError(
                f"mask strategy {name!r} must return {expected}, got dtype {mask.dtype} "
                "with values other than 0 and 1"
            )
        mask = mask != 0
    return _on(mask, device)


# ----------------------------------------------------------------------------------------------
# random draws
# ----------------------------------------------------------------------------------------------


def _on(t: torch.Tensor, device: torch.device) -> torch.Tensor:
    """``t`` on ``device``; no call at all when it is there already (the training loop's
    case), so that nothing in a step even looks like a copy."""
    return t if t.device == device else t.to(device)


def _uniform(
    size: tuple[int, ...], generator: torch.Generator | None, device: torch.device
) -> torch.Tensor:
    """Uniform [0, 1) samples on ``device``.

    Drawn on the generator's device (torch refuses a CPU generator for CUDA sampling) and moved
    if that is another device, so a CPU generator also seeds masks made on an accelerator; a
    generator on ``device`` draws there, with no copy.
    """
    if generator is None:
        return torch.rand(size, device=device)
    return _on(torch.rand(size, generator=generator, device=generator.device), device)


def _run_lengths(
    states: torch.Tensor,
    p_end: tuple[float, float],
    max_len: int,
    generator: torch.Generator | None,
) -> torch.Tensor:
    """Geometric run lengths on {1, 2, ...}; ``p_end[s]`` is the per-step end prob. of state s.

    Inverse CDF: ``floor(log U / log(1 - p)) + 1`` is geometric with success probability p.
    """
    u = 1.0 - _uniform(tuple(states.shape), generator, states.device)  # (0, 1], avoids log(0)
    p = torch.where(states, p_end[1], p_end[0])
    # log1p(-p) = -inf for p == 1 gives length exactly 1.
    lengths = torch.floor(torch.log(u) / torch.log1p(-p)) + 1.0
    # Lengths >= max_len all cover the rest of the window; clamping keeps int64 cumsums safe.
    return lengths.clamp_(1, max_len).long()


# A row of runs that falls short of the window is left to chance below this probability.
MISS_LOG_PROB = -40 * math.log(2)  # 2**-40, about 1e-12 per row


def miss_log_bound(n_runs: int, length: int, p_end: tuple[float, float]) -> float:
    """Chernoff bound on ``log P(n_runs alternating runs cover fewer than length steps)``.

    Runs are geometric on {1, 2, ...} with end probabilities ``p_end`` (visible, hidden),
    alternating from either state; the worse start is taken. For ``theta > 0``,
    ``P(S <= length - 1) <= exp(theta (length - 1)) * E[exp(-theta S)]`` and
    ``E[exp(-theta L)] = p e^-theta / (1 - (1 - p) e^-theta)``; the bound is minimized over
    a grid of ``theta``.
    """
    if n_runs >= length:  # every run has length >= 1
        return -math.inf
    few, many = n_runs // 2, n_runs - n_runs // 2  # runs of the two states
    best = 0.0
    for i in range(80):
        theta = 1e-5 * 1.25**i  # 1e-5 .. about 4.5
        log_mgf = [math.log(p) - theta - math.log1p(-(1.0 - p) * math.exp(-theta)) for p in p_end]
        worse = max(few * log_mgf[0] + many * log_mgf[1], many * log_mgf[0] + few * log_mgf[1])
        best = min(best, theta * (length - 1) + worse)
    return best


@functools.lru_cache(maxsize=256)
def runs_needed(length: int, p_end: tuple[float, float]) -> int:
    """The fewest runs whose total falls short of ``length`` steps with probability at most
    ``exp(MISS_LOG_PROB)`` (:func:`miss_log_bound`); never more than ``length``, which
    always covers. Computed once per setting (a training run asks with the same values)."""
    lo, hi = 1, length  # miss_log_bound(length, ...) = -inf
    while lo < hi:
        mid = (lo + hi) // 2
        if miss_log_bound(mid, length, p_end) <= MISS_LOG_PROB:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _run_mask(
    n_rows: int,
    length: int,
    ratio: float,
    mean_span: float,
    generator: torch.Generator | None,
    device: torch.device,
    n_runs: int | None = None,
) -> torch.Tensor:
    """Rows of alternating visible / hidden runs (Zerveas et al. 2021 Markov chain).

    Hidden runs have mean ``mean_span``, visible runs mean ``mean_span * (1 - ratio) / ratio``,
    so the stationary hidden fraction is ``ratio``. If that visible mean would be < 1 (large
    ratio with short spans) it is raised to 1 and the hidden mean to ``ratio / (1 - ratio)``
    instead, keeping the ratio exact at the cost of longer hidden runs.

    A fixed number of runs is drawn per row, enough to cover the window with probability at
    least ``1 - 2**-40`` (:func:`runs_needed`): the number of runs never depends on the
    draws, so nothing is read back from the device. A row the runs fall short of keeps the
    state that follows its last run up to the end of the window.

    Parameters
    ----------
    n_rows, length
        Output shape ``(n_rows, length)``.
    n_runs
        Runs drawn per row (testing hook); default :func:`runs_needed`.

    Returns
    -------
    torch.Tensor
        bool ``(n_rows, length)``.
    """
    mean_hidden = mean_span
    mean_visible = mean_span * (1.0 - ratio) / ratio
    if mean_visible < 1.0:
        mean_visible = 1.0
        mean_hidden = ratio / (1.0 - ratio)
    p_end = (1.0 / mean_visible, 1.0 / mean_hidden)  # indexed by state (False, True)

    # Start state from the stationary distribution; since the geometric law is memoryless the
    # first (truncated) run is again geometric, so the chain is stationary from t = 0.
    start = _uniform((n_rows, 1), generator, device) < ratio  # (N, 1)
    if n_runs is None:
        n_runs = runs_needed(length, p_end)
    parity = (torch.arange(n_runs, device=device) % 2).bool()  # (K,)
    states = start ^ parity  # (N, K): runs alternate between visible and hidden
    ends = _run_lengths(states, p_end, length, generator).cumsum(dim=1)  # (N, K) run ends

    t = torch.arange(length, device=device).expand(n_rows, length).contiguous()  # (N, T)
    # Run index of each time step = number of run ends <= t.
    run_idx = torch.searchsorted(ends, t, right=True)  # (N, T)
    return start ^ (run_idx % 2).bool()  # (N, T)


# ----------------------------------------------------------------------------------------------
# strategies
# ----------------------------------------------------------------------------------------------


def _random_mask(shape, ratio, generator, device) -> torch.Tensor:
    return _uniform(shape, generator, device) < ratio  # (B, C, T)


def _span_mask(shape, ratio, mean_span, generator, device) -> torch.Tensor:
    b, c, t = shape
    return _run_mask(b * c, t, ratio, mean_span, generator, device).view(b, c, t)


def _block_mask(shape, ratio, mean_span, generator, device) -> torch.Tensor:
    b, c, t = shape
    rows = _run_mask(b, t, ratio, mean_span, generator, device)  # (B, T)
    return rows[:, None, :].expand(b, c, t).contiguous()  # same time steps in every channel


@functools.lru_cache(maxsize=64)
def _group_index(
    groups: tuple[tuple[int, ...], ...], n_channels: int, device: torch.device
) -> torch.Tensor:
    """The group of each channel, ``(C,)`` long on ``device``; channels in no group form
    singleton groups after the listed ones. Built once per setting (cached), by filling in
    Python numbers: no host memory is copied to the device, which would wait for it."""
    group_of = [-1] * n_channels
    for g, idx in enumerate(groups):
        for i in idx:
            group_of[i] = g
    loose = iter(range(len(groups), n_channels))
    index = torch.empty(n_channels, dtype=torch.long, device=device)
    for i, g in enumerate(group_of):
        index[i] = g if g >= 0 else next(loose)
    return index


def _channel_mask(
    shape, ratio, groups, generator, device, at_least_one: bool = False
) -> torch.Tensor:
    b, c, t = shape
    n_groups = c - sum(len(idx) for idx in groups or []) + len(groups or [])
    group_of = None
    if groups:
        group_of = _group_index(tuple(map(tuple, groups)), c, device)  # (C,)

    def one_of_each(pick: torch.Tensor) -> torch.Tensor:  # (B,) group -> (B, G) one-hot
        return pick[:, None] == torch.arange(n_groups, device=device)

    hidden = _uniform((b, n_groups), generator, device) < ratio  # (B, G)
    # Keep something to reconstruct from: if all groups of a sample are hidden, reveal one.
    all_hidden = hidden.all(dim=1)  # (B,)
    pick = (_uniform((b,), generator, device) * n_groups).long().clamp_(max=n_groups - 1)  # (B,)
    hidden &= ~(one_of_each(pick) & all_hidden[:, None])
    if at_least_one and n_groups > 1:
        # a window that hides nothing teaches nothing: hide one random group instead
        none_hidden = ~hidden.any(dim=1)  # (B,)
        pick = (_uniform((b,), generator, device) * n_groups).long().clamp_(max=n_groups - 1)
        hidden |= one_of_each(pick) & none_hidden[:, None]
    if group_of is not None:
        hidden = hidden[:, group_of]  # (B, C)
    return hidden[:, :, None].expand(b, c, t).contiguous()  # (B, C, T)


# ----------------------------------------------------------------------------------------------
# public API
# ----------------------------------------------------------------------------------------------


def resolve_channel_groups(
    groups: Mapping[str, Sequence[str | int]] | Sequence[Sequence[str | int]] | None,
    channels: Sequence[str],
) -> list[list[int]] | None:
    """Turn a user channel-group specification into lists of channel indices.

    Parameters
    ----------
    groups
        ``None``; a list of lists of channel indices or channel names (may be mixed); or a dict
        ``{group_name: [channel names or indices]}`` (only the values are used).
    channels
        Channel names of the data, in channel order.

    Returns
    -------
    list[list[int]] | None
        One list of channel indices per group, or ``None`` if ``groups`` is ``None``.

    Raises
    ------
    InputError (a ValueError)
        On an unknown channel name (the message lists the available channels), an out-of-range
        index, a channel that appears twice, or a malformed specification.
    """
    if groups is None:
        return None
    channels = list(channels)
    lookup = {name: i for i, name in enumerate(channels)}
    if isinstance(groups, Mapping):
        labels = [repr(k) for k in groups]
        groups = list(groups.values())
    elif isinstance(groups, (str, bytes)) or not isinstance(groups, Sequence):
        raise InputError(
            "channel_groups must be None, a list of lists of channel names/indices or a dict "
            f"{{group_name: [channels]}}, got {groups!r}"
        )
    else:
        labels = [str(g) for g in range(len(groups))]

    out: list[list[int]] = []
    for label, group in zip(labels, groups):
        if isinstance(group, (str, bytes)) or not isinstance(group, Sequence):
            raise InputError(
                f"channel_groups[{label}] must be a list of channel names or indices, got {group!r}"
            )
        idx = []
        for ch in group:
            if isinstance(ch, str):
                if ch not in lookup:
                    raise InputError(
                        f"channel_groups[{label}]: unknown channel name {ch!r}; "
                        f"available channels: {channels}"
                    )
                idx.append(lookup[ch])
            else:
                idx.append(_as_index(ch, len(channels), f"channel_groups[{label}]"))
        out.append(idx)
    return _check_groups(out, len(channels))


def make_mask(
    shape: tuple[int, int, int],
    strategy: str | Callable = "span",
    *,
    ratio: float = 0.15,
    mean_span: float = 3.0,
    channel_groups: Sequence[Sequence[int]] | None = None,
    valid: torch.Tensor | None = None,
    generator: torch.Generator | None = None,
    device: torch.device | str | None = None,
    token_len: int | None = None,
) -> torch.Tensor:
    """Draw a pretraining mask (``True`` = hidden) for a batch of shape ``(B, C, T)``.

    Parameters
    ----------
    shape
        ``(B, C, T)``: batch size, channels, time steps (3 positive ints).
    strategy
        One of :data:`STRATEGIES` or a callable ``strategy(shape, generator) -> tensor`` that
        returns a bool (or 0/1) tensor of exactly ``shape``.

        - ``"random"``: each value hidden independently with probability ``ratio``.
        - ``"span"``: per channel, contiguous hidden runs with geometric lengths of mean
          ``mean_span``; hidden fraction ``ratio`` in expectation (Zerveas et al., 2021).
          If ``mean_span * (1 - ratio) / ratio < 1`` (visible runs would be shorter than one
          step) visible runs get mean 1 and hidden runs mean ``ratio / (1 - ratio)`` instead.
        - ``"channel"``: whole channels, or whole groups of ``channel_groups``, hidden for the
          whole window, each independently with probability ``ratio``. If every group of a
          sample is drawn hidden, one random group is revealed again so there is something to
          reconstruct from; this lowers the realized fraction below ``ratio`` by about
          ``ratio ** G / G`` for ``G`` equal groups, noticeable only for very few channels (a
          single channel/group is therefore never hidden).
        - ``"block"``: the ``"span"`` process drawn once per sample and applied to all
          channels, i.e. the same time steps are hidden in every channel.
    ratio
        Target fraction of hidden values, strictly inside (0, 1).
    mean_span
        Mean length (>= 1) of hidden runs for ``"span"`` and ``"block"``.
    channel_groups
        For ``"channel"``: lists of channel indices hidden together (e.g. the three axes of an
        accelerometer). Channels in no group form singleton groups. See
        :func:`resolve_channel_groups` to build it from channel names.
    valid
        Optional bool ``(B, C, T)``, ``True`` where the data is really observed (``False`` for
        NaN or padding). Hidden positions are restricted to it, so missing values are never
        chosen; the realized hidden fraction is then ``ratio`` times the valid fraction.
    generator
        Optional :class:`torch.Generator` for reproducible masks. It may live on a different
        device than ``device`` (random numbers are drawn on its device and moved); on
        ``device`` itself, as in training, nothing is copied and nothing read back.
    device
        Device of the mask; defaults to ``valid.device``, else the CPU.
    token_len
        Draw the mask on the token grid of a model with patches of ``token_len`` steps and
        hide whole tokens: ``random`` whole tokens of a channel, ``span`` and ``block`` runs
        of tokens (``mean_span`` then counts tokens), ``channel`` whole channels with at
        least one group hidden in every window (when there are 2 or more). A step-level mask
        inside a patch token is mostly interpolation: the patch embedding sees the hidden
        step's visible neighbours. None (default): step-level masks.

    Returns
    -------
    torch.Tensor
        bool ``(B, C, T)`` mask, ``True`` = hidden.

    Raises
    ------
    InputError (a ValueError)
        On an unknown strategy, ``ratio`` outside (0, 1), ``mean_span < 1``, a bad ``shape``,
        invalid ``channel_groups``, a ``valid`` of the wrong shape, or a user strategy that
        returns something other than a bool tensor of ``shape``.
    """
    shape = _check_shape(shape)
    ratio = _check_ratio(ratio)
    mean_span = _check_mean_span(mean_span)
    if not callable(strategy) and strategy not in STRATEGIES:
        raise InputError(
            f"unknown mask strategy {strategy!r}; expected one of {list(STRATEGIES)} or a "
            "callable strategy(shape, generator) -> bool tensor"
        )
    groups = None if channel_groups is None else _check_groups(channel_groups, shape[1])

    if valid is not None:
        valid = torch.as_tensor(valid)
        if tuple(valid.shape) != shape:
            raise InputError(
                f"valid must be a bool tensor of shape {shape} (like the batch), "
                f"got shape {tuple(valid.shape)}"
            )
    device = torch.device(device or (valid.device if valid is not None else "cpu"))

    if token_len is not None:
        if isinstance(token_len, bool) or not isinstance(token_len, int) or token_len < 1:
            raise InputError(
                f"token_len must be a positive int (the patch length), got {token_len!r}"
            )
        if callable(strategy):
            raise InputError(
                "token_len works with the named strategies; a callable strategy draws its own "
                "mask at the step level"
            )
    grid = shape if token_len is None else (shape[0], shape[1], -(-shape[2] // token_len))
    if callable(strategy):
        mask = _check_user_mask(strategy(shape, generator), strategy, shape, device)
    elif strategy == "random":
        mask = _random_mask(grid, ratio, generator, device)
    elif strategy == "span":
        mask = _span_mask(grid, ratio, mean_span, generator, device)
    elif strategy == "block":
        mask = _block_mask(grid, ratio, mean_span, generator, device)
    else:  # "channel"
        mask = _channel_mask(grid, ratio, groups, generator, device, token_len is not None)
    if token_len is not None:  # (B, C, n_tokens) -> (B, C, T): every step of a token alike
        mask = mask.repeat_interleave(token_len, dim=2)[:, :, : shape[2]]

    if valid is not None:
        mask = mask & _on(valid, device).bool()  # never hide padding / NaN
    return mask
