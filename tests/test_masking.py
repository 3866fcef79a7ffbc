"""Tests for medspt.nn.masking: statistics of each strategy, constraints, seeding and validation."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from medspt.core.errors import InputError
from medspt.nn.masking import (
    MISS_LOG_PROB,
    STRATEGIES,
    _run_lengths,
    _run_mask,
    make_mask,
    miss_log_bound,
    resolve_channel_groups,
    runs_needed,
)


def gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def interior_run_lengths(rows: torch.Tensor) -> np.ndarray:
    """Lengths of hidden runs of bool (N, T) rows that touch neither window edge."""
    x = rows.to(torch.int8).numpy()
    padded = np.pad(x, ((0, 0), (1, 1)))
    diff = np.diff(padded, axis=1)  # +1 at run starts, -1 one past run ends
    r_s, starts = np.nonzero(diff == 1)
    r_e, ends = np.nonzero(diff == -1)
    assert np.array_equal(r_s, r_e)  # starts and ends pair up row by row, in order
    t = x.shape[1]
    keep = (starts > 0) & (ends < t)
    return (ends - starts)[keep]


# ---------------------------------------------------------------------------------- ratios


@pytest.mark.parametrize("ratio", [0.15, 0.5])
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_ratio_honoured(strategy, ratio):
    g = gen(1)
    # "channel" has only one draw per channel, so more channels for a tight estimate.
    shape = (256, 20, 50) if strategy == "channel" else (256, 6, 200)
    fractions = [
        make_mask(shape, strategy, ratio=ratio, generator=g).float().mean() for _ in range(4)
    ]
    assert abs(float(torch.stack(fractions).mean()) - ratio) < 0.02


def test_channel_ratio_few_channels_matches_unhide_rule():
    # With G singleton groups the expected hidden fraction is ratio - ratio**G / G.
    ratio, c = 0.5, 3
    m = make_mask((20000, c, 4), "channel", ratio=ratio, generator=gen(2))
    expected = ratio - ratio**c / c
    assert abs(float(m.float().mean()) - expected) < 0.01
    assert abs(expected - ratio) > 0.03  # the rule is visible for so few channels


@pytest.mark.parametrize("strategy", ["span", "block"])
def test_high_ratio_short_span_keeps_ratio(strategy):
    # Visible runs would need mean < 1 here; the ratio must still be honoured.
    m = make_mask((256, 4, 200), strategy, ratio=0.9, mean_span=3, generator=gen(3))
    assert abs(float(m.float().mean()) - 0.9) < 0.02


# ---------------------------------------------------------------------------------- span / block


@pytest.mark.parametrize("ratio", [0.15, 0.5])
@pytest.mark.parametrize("mean_span", [3.0, 8.0])
@pytest.mark.parametrize("strategy", ["span", "block"])
def test_mean_hidden_run_length(strategy, mean_span, ratio):
    b, c = (64, 4) if strategy == "span" else (256, 2)
    m = make_mask((b, c, 2000), strategy, ratio=ratio, mean_span=mean_span, generator=gen(4))
    rows = m.reshape(-1, 2000) if strategy == "span" else m[:, 0, :]
    lengths = interior_run_lengths(rows)
    assert len(lengths) > 1000
    assert abs(lengths.mean() - mean_span) < 0.1 * mean_span
    # Geometric lengths: the spread is not degenerate (e.g. not fixed-length spans).
    if mean_span > 1:
        assert lengths.std() > 0.5 * np.sqrt(mean_span * (mean_span - 1))


def test_span_differs_between_channels():
    m = make_mask((8, 6, 200), "span", ratio=0.5, generator=gen(5))
    assert not (m == m[:, :1]).all()


def test_block_identical_across_channels():
    m = make_mask((64, 7, 300), "block", ratio=0.3, mean_span=5, generator=gen(6))
    assert (m == m[:, :1]).all()
    assert m.any() and not m.all()


@pytest.mark.parametrize("t", [1, 2, 3, 17])
def test_run_mask_tiny_windows(t):
    rows = _run_mask(4000, t, 0.4, 3.0, gen(7), torch.device("cpu"))
    assert rows.shape == (4000, t) and rows.dtype == torch.bool
    assert abs(float(rows.float().mean()) - 0.4) < 0.03


def test_a_row_its_runs_fall_short_of_keeps_the_next_state_to_the_end():
    # n_runs=1: one run per row, then the other state up to the end of the window
    rows = _run_mask(2000, 40, 0.4, 3.0, gen(7), torch.device("cpu"), n_runs=1)
    switches = (rows[:, 1:] != rows[:, :-1]).sum(1)  # (N,)
    assert switches.max() == 1 and float((switches == 1).float().mean()) > 0.99
    assert torch.equal(rows[:, -1], torch.where(switches == 1, ~rows[:, 0], rows[:, 0]))


@pytest.mark.parametrize(
    "length, ratio, mean_span", [(64, 0.15, 3.0), (200, 0.01, 1.0), (25, 0.4, 3.0), (64, 0.9, 3.0)]
)
def test_runs_needed_bounds_the_chance_of_falling_short(length, ratio, mean_span):
    mean_visible = max(1.0, mean_span * (1 - ratio) / ratio)
    mean_hidden = mean_span if mean_span * (1 - ratio) / ratio >= 1 else ratio / (1 - ratio)
    p_end = (1 / mean_visible, 1 / mean_hidden)
    k = runs_needed(length, p_end)
    assert miss_log_bound(k, length, p_end) <= MISS_LOG_PROB < miss_log_bound(k - 1, length, p_end)
    assert miss_log_bound(length, length, p_end) == -math.inf  # runs of >= 1 step cover
    # the Chernoff bound really bounds: with fewer runs it is large enough to check by drawing
    few = max(j for j in range(1, k) if miss_log_bound(j, length, p_end) > math.log(0.05))
    bound = math.exp(miss_log_bound(few, length, p_end))
    rows = 20000
    states = (torch.rand(rows, 1, generator=gen(13)) < ratio) ^ (torch.arange(few) % 2).bool()
    ends = _run_lengths(states, p_end, length, gen(14)).sum(1)
    assert float((ends < length).float().mean()) <= bound + 0.01


# ---------------------------------------------------------------------------------- channel


def test_channel_whole_channels():
    m = make_mask((128, 9, 50), "channel", ratio=0.4, generator=gen(8))
    assert (m == m[:, :, :1]).all()  # constant over time
    per_channel = m[:, :, 0]
    assert not per_channel.all(dim=1).any()  # never every channel hidden
    assert per_channel.any()


def test_channel_groups_hidden_together():
    groups = [[0, 1, 2], [5, 3]]  # channels 4, 6, 7 become singletons
    m = make_mask((2000, 8, 10), "channel", ratio=0.5, channel_groups=groups, generator=gen(9))
    assert (m == m[:, :, :1]).all()
    ch = m[:, :, 0]  # (B, C)
    assert (ch[:, [0, 1, 2]] == ch[:, :1]).all()
    assert (ch[:, [3, 5]] == ch[:, 3:4]).all()
    # 5 groups in total: never all hidden, but each of them sometimes hidden.
    group_hidden = torch.stack([ch[:, 0], ch[:, 3], ch[:, 4], ch[:, 6], ch[:, 7]], dim=1)
    assert not group_hidden.all(dim=1).any()
    assert group_hidden.any(dim=0).all()
    # Singletons are independent of each other (not all hidden together).
    assert not (ch[:, 4] == ch[:, 6]).all()


def test_channel_single_group_never_hidden():
    m = make_mask((50, 3, 5), "channel", ratio=0.9, channel_groups=[[0, 1, 2]], generator=gen(10))
    assert not m.any()


# ---------------------------------------------------------------------------------- valid


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_valid_respected(strategy):
    shape = (32, 6, 100)
    valid = torch.rand(shape, generator=gen(11)) > 0.3
    valid[:, :, 80:] = False  # padding at the end
    m = make_mask(shape, strategy, ratio=0.5, valid=valid, generator=gen(12))
    assert m.dtype == torch.bool and m.shape == shape
    assert not (m & ~valid).any()
    assert m.any()


def test_valid_callable_respected():
    valid = torch.zeros(2, 3, 4, dtype=torch.bool)
    valid[0] = True
    m = make_mask((2, 3, 4), lambda s, g: torch.ones(s, dtype=torch.bool), valid=valid)
    assert torch.equal(m, valid)


# ---------------------------------------------------------------------------------- seeding


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_seeding(strategy):
    shape = (16, 6, 100)
    a = make_mask(shape, strategy, ratio=0.3, generator=gen(123))
    b = make_mask(shape, strategy, ratio=0.3, generator=gen(123))
    c = make_mask(shape, strategy, ratio=0.3, generator=gen(124))
    assert torch.equal(a, b)
    assert not torch.equal(a, c)


def test_device_and_dtype():
    m = make_mask((2, 3, 4), "random", ratio=0.5, device="cpu")
    assert m.device.type == "cpu" and m.dtype == torch.bool and m.shape == (2, 3, 4)


# ---------------------------------------------------------------------------------- callable


def test_user_callable():
    def every_other(shape, generator):
        m = torch.zeros(shape, dtype=torch.bool)
        m[..., ::2] = True
        return m

    m = make_mask((3, 2, 6), every_other)
    assert m.dtype == torch.bool
    assert m[..., ::2].all() and not m[..., 1::2].any()


def test_user_callable_gets_shape_and_generator():
    seen = {}
    g = gen(0)

    def spy(shape, generator):
        seen["shape"], seen["generator"] = shape, generator
        return torch.randint(0, 2, shape, generator=generator)  # int 0/1 is accepted

    m = make_mask((2, 3, 4), spy, generator=g)
    assert seen == {"shape": (2, 3, 4), "generator": g}
    assert m.dtype == torch.bool


def test_user_callable_wrong_shape():
    def bad_shape(shape, generator):
        return torch.zeros(shape[0], shape[2], dtype=torch.bool)

    with pytest.raises(ValueError, match=r"bad_shape.*\(2, 3, 4\)"):
        make_mask((2, 3, 4), bad_shape)


def test_user_callable_wrong_values():
    with pytest.raises(ValueError, match=r"bool.*float32"):
        make_mask((2, 3, 4), lambda s, g: torch.full(s, 0.5))


# ---------------------------------------------------------------------------------- validation


@pytest.mark.parametrize("ratio", [0.0, 1.0, -0.1, 1.5, float("nan")])
def test_bad_ratio(ratio):
    with pytest.raises(ValueError, match=r"ratio.*\(0, 1\)"):
        make_mask((2, 3, 4), "random", ratio=ratio)


@pytest.mark.parametrize("mean_span", [0.5, 0, -3, float("nan"), float("inf")])
def test_bad_mean_span(mean_span):
    with pytest.raises(ValueError, match="mean_span"):
        make_mask((2, 3, 4), "span", mean_span=mean_span)


def test_unknown_strategy():
    with pytest.raises(InputError):  # the project's ValueError subclass for user mistakes
        make_mask((2, 3, 4), "spam")
    with pytest.raises(ValueError, match=r"unknown mask strategy 'spam'.*'random'.*'block'"):
        make_mask((2, 3, 4), "spam")


@pytest.mark.parametrize("shape", [(2, 3), (2, 3, 4, 5), (0, 3, 4), (2, -1, 4), (2, 3.0, 4), 5])
def test_bad_shape(shape):
    with pytest.raises(ValueError, match="shape must be 3 positive ints"):
        make_mask(shape, "random")


def test_bad_channel_groups():
    with pytest.raises(ValueError, match=r"channel index 3 out of range for 3 channels"):
        make_mask((2, 3, 4), "channel", channel_groups=[[0], [3]])
    with pytest.raises(ValueError, match=r"channel 1 is repeated"):
        make_mask((2, 3, 4), "channel", channel_groups=[[0, 1], [1, 2]])
    with pytest.raises(ValueError, match=r"channel 0 is repeated"):
        make_mask((2, 3, 4), "channel", channel_groups=[[0, 0]])
    with pytest.raises(ValueError, match=r"out of range"):
        make_mask((2, 3, 4), "channel", channel_groups=[[-1]])


def test_bad_valid_shape():
    with pytest.raises(ValueError, match=r"valid.*\(2, 3, 4\).*\(2, 3\)"):
        make_mask((2, 3, 4), "random", valid=torch.ones(2, 3, dtype=torch.bool))


# ---------------------------------------------------------------------------------- groups


def test_resolve_channel_groups():
    chans = ["ecg", "acc_x", "acc_y", "acc_z", "spo2"]
    assert resolve_channel_groups(None, chans) is None
    assert resolve_channel_groups([[1, 2, 3]], chans) == [[1, 2, 3]]
    assert resolve_channel_groups([["acc_x", "acc_y", "acc_z"], ["ecg"]], chans) == [
        [1, 2, 3],
        [0],
    ]
    assert resolve_channel_groups({"acc": ["acc_x", "acc_y", 3], "pulse": [4]}, chans) == [
        [1, 2, 3],
        [4],
    ]
    groups = resolve_channel_groups({"acc": ["acc_x", "acc_y", "acc_z"]}, chans)
    m = make_mask((500, 5, 3), "channel", ratio=0.5, channel_groups=groups, generator=gen(0))
    assert (m[:, 1:4] == m[:, 1:2]).all()


def test_resolve_channel_groups_errors():
    chans = ["ecg", "acc_x"]
    with pytest.raises(ValueError, match=r"unknown channel name 'acc_q'.*\['ecg', 'acc_x'\]"):
        resolve_channel_groups({"acc": ["acc_q"]}, chans)
    with pytest.raises(ValueError, match="out of range"):
        resolve_channel_groups([[5]], chans)
    with pytest.raises(ValueError, match="repeated"):
        resolve_channel_groups([["ecg"], [0]], chans)
    with pytest.raises(ValueError, match="list of channel names"):
        resolve_channel_groups(["ecg"], chans)


# ------------------------------------------------------------------ token-level masks


@pytest.mark.parametrize("strategy", ["random", "span", "block", "channel"])
@pytest.mark.parametrize("T", [240, 237])  # a last token shorter than the patch
def test_token_masks_hide_whole_tokens(strategy, T):
    P = 8
    g = torch.Generator().manual_seed(0)
    m = make_mask((64, 5, T), strategy, ratio=0.4, mean_span=2, token_len=P, generator=g)
    assert m.shape == (64, 5, T)
    n_tok = -(-T // P)
    padded = torch.nn.functional.pad(m, (0, n_tok * P - T), value=False)
    tok = padded.view(64, 5, n_tok, P)
    full = tok[..., : T - (n_tok - 1) * P] if T % P else tok
    # no hidden value shares a token with a visible value of its channel
    assert bool((full.all(-1) | ~full.any(-1)).all())
    assert bool((tok[:, :, :-1].all(-1) | ~tok[:, :, :-1].any(-1)).all())


@pytest.mark.parametrize("strategy", ["random", "span", "block"])
@pytest.mark.parametrize("ratio", [0.3, 0.5])
def test_token_masks_keep_the_ratio(strategy, ratio):
    g = torch.Generator().manual_seed(1)
    m = make_mask((512, 4, 240), strategy, ratio=ratio, mean_span=2, token_len=8, generator=g)
    assert float(m.float().mean()) == pytest.approx(ratio, abs=0.03)


def test_token_span_runs_count_tokens():
    g = torch.Generator().manual_seed(2)
    m = make_mask((256, 2, 400), "span", ratio=0.4, mean_span=3, token_len=10, generator=g)
    tok = m[:, :, ::10].reshape(-1, 40).int()  # one value per token
    starts = (tok[:, 1:] > tok[:, :-1]).sum() + tok[:, 0].sum()
    assert float(tok.sum() / starts) == pytest.approx(3.0, rel=0.15)


def test_token_channel_masks_hide_at_least_one_channel_in_every_window():
    g = torch.Generator().manual_seed(3)
    m = make_mask((2000, 5, 240), "channel", ratio=0.15, token_len=8, generator=g)
    per_channel = m.all(dim=2)  # (B, C): whole channels only
    assert bool((m.any(dim=2) == per_channel).all())
    assert bool(per_channel.any(dim=1).all())  # at least one hidden channel in every window
    assert not bool(per_channel.all(dim=1).any())  # and never all of them
    step = make_mask((2000, 5, 240), "channel", ratio=0.15, generator=g)
    assert not bool(step.any(dim=2).any(dim=1).all())  # the paper's masks may hide none


def test_token_masks_respect_valid_and_refuse_callables():
    valid = torch.ones(8, 3, 64, dtype=torch.bool)
    valid[:, :, 50:] = False
    m = make_mask((8, 3, 64), "random", ratio=0.5, token_len=8, valid=valid)
    assert not bool(m[:, :, 50:].any())
    with pytest.raises(InputError, match="token_len must be a positive int"):
        make_mask((8, 3, 64), "random", token_len=0)
    with pytest.raises(InputError, match="callable strategy"):
        make_mask((8, 3, 64), lambda shape, gen: torch.zeros(shape, dtype=torch.bool), token_len=8)
