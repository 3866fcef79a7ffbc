"""The depth-parameterized Transformer of medspt, in one file.

Input values with hidden entries (masked for pretraining, or missing) set to zero, plus an
indicator channel per input channel that says which entries are hidden, become tokens of
``patch_len`` steps each, in one of two ways (``embedding``):

- ``"patch"``: each patch of ``patch_len`` steps is flattened and embedded by one linear
  layer (the SPT paper's setting);
- ``"conv"``: multi-scale dilated temporal convolutions per channel (shapes of 9 to 97
  steps) evaluated at each token's centre, ``patch_len`` steps apart, and a pointwise
  convolution that mixes all channels. Convolutional embeddings are what make
  ConvTran-like models competitive on small sets.

``depth`` pre-norm blocks follow, then two heads: a reconstruction head that predicts every
value of every token's steps, and a classification head on the pooled tokens. Positions are
absolute (learned, sinusoidal), a fixed proximity bias (ALiBi) or a learned per-head bias
of the token distance (``"relative"``, eRPE-like; distances beyond the training length are
clipped, so any length can be predicted).

Windows of different lengths share a batch by padding: trailing steps missing (NaN) in
every channel are padding, and tokens made only of padding are never attended to, never
pooled and (being missing) never masked or scored in pretraining.

Attention is a pluggable module (see :data:`ATTENTION`): it receives ``q, k, v`` shaped
``(B, H, N, Dh)`` and a key padding mask ``(B, N)`` (True = padding) and returns the
attended values ``(B, H, N, Dh)``. ``"full"`` wraps ``scaled_dot_product_attention``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import torch
import torch.nn as nn
import torch.nn.functional as F

from medspt.core.errors import InputError
from medspt.core.params import Rule, check, flag, integer, interval, one_of
from medspt.nn.attention import hierarchical_from_config

POSITIONAL = ("learned", "sinusoidal", "alibi", "relative", "none")
EMBEDDING = ("patch", "conv")
CONV_KERNEL = 9  # of every temporal convolution of the conv tokenizer
CONV_DILATIONS = (1, 4, 12)  # receptive fields of 9, 33 and 97 steps
HEAD_PREFIXES = ("head.", "stats_head.")  # parameter names of the classification head
POOLING = ("mean", "cls")
# The least window scale of instance normalization, in units of the channel's training std
# (the model's input is standardized by the training channels first). Without it a window
# whose channel is (nearly) constant -- a value held over from a slower rate, a saturated
# sensor -- is divided by ~0.003, and one step inside it becomes a value of hundreds.
INSTANCE_FLOOR = 0.1
INSTANCE_EPS = 1e-5  # the variance added before the square root (the floor of old files)


@dataclass
class ModelConfig:
    n_channels: int
    n_steps: int  # window length T
    n_classes: int
    depth: int = 2
    d_model: int = 64
    n_heads: int = 4
    patch_len: int = 8  # steps per token (the pooling stride with embedding="conv")
    embedding: str = "patch"
    # filters per channel and dilation of the conv tokenizer; None = from the channels
    conv_filters: int | None = None
    dropout: float = 0.1
    # dropout of attention weights; None = `dropout`. On CPU any attention dropout makes
    # torch leave its fused kernel: at 1,000 tokens training runs ~6x slower.
    attn_dropout: float | None = None
    positional: str = "learned"
    pooling: str = "mean"
    attention: str = "full"
    attention_options: dict | None = None  # keyword arguments of the attention module
    mlp_ratio: int = 4
    # RevIN-style: every window standardized per channel by the statistics of the values
    # the model may see (observed and not hidden), so hidden values leak nothing
    instance_norm: bool = False
    # the least std a window is divided by (see INSTANCE_FLOOR); configs stored before it
    # existed load with 0 (from_dict), so their models predict as they did
    instance_floor: float = INSTANCE_FLOOR
    # the classifier also sees each window's per-channel mean and log-std (of the values
    # it may see): the levels and spreads instance normalization takes from the tokens
    window_stats: bool = False

    @property
    def attention_dropout(self) -> float:
        return self.dropout if self.attn_dropout is None else self.attn_dropout

    @property
    def n_patches(self) -> int:
        return math.ceil(self.n_steps / self.patch_len)

    @property
    def n_conv_filters(self) -> int:
        """Filters per channel and dilation: about 48 features per step in all, 4 to 16
        per channel and dilation (more channels, fewer each)."""
        if self.conv_filters is not None:
            return int(self.conv_filters)
        return int(min(16, max(4, math.ceil(48 / (len(CONV_DILATIONS) * self.n_channels)))))

    def validate(self) -> None:
        """Raise :class:`InputError` naming the first bad setting."""
        check_model_params(self.to_dict())
        make_attention(self)  # bad attention options fail here, named

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ModelConfig:
        """The config :meth:`to_dict` wrote. Settings added since keep the behaviour of
        the files written before them: no ``instance_floor`` means 0 (no floor)."""
        return cls(**{"instance_floor": 0.0, **d})


# --------------------------------------------------------------------------- attention


def alibi_slopes(n_heads: int) -> torch.Tensor:
    """ALiBi's per-head slopes ``2**(-8h/H)``, h = 1..H (Press et al. 2022), shape (H,)."""
    return torch.tensor([2.0 ** (-8.0 * h / n_heads) for h in range(1, n_heads + 1)])


def alibi_bias(n_heads: int, n_tokens: int, has_cls: bool = False) -> torch.Tensor:
    """Non-causal ALiBi bias ``-m_h·|i - j|`` between patch tokens, shape (H, N, N).

    A class token (first position, ``has_cls``) has no place in time: its bias is zero."""
    off = int(has_cls)
    pos = torch.arange(n_tokens - off, dtype=torch.float32)
    dist = (pos[:, None] - pos[None, :]).abs()  # (N', N')
    bias = torch.zeros(n_heads, n_tokens, n_tokens)
    bias[:, off:, off:] = -alibi_slopes(n_heads)[:, None, None] * dist
    return bias


class FullAttention(nn.Module):
    """Exact softmax attention over all tokens (``scaled_dot_product_attention``).

    With ``positional="alibi"`` the scores get ALiBi's proximity bias (see
    :func:`alibi_bias`)."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.dropout = config.attention_dropout
        self.n_heads = config.n_heads
        self.alibi = config.positional == "alibi"
        self.has_cls = config.pooling == "cls"
        self._bias: torch.Tensor | None = None

    def _mask(self, q, key_padding_mask, bias=None):
        """SDPA's ``attn_mask``: boolean (True = attend), float (additive), or None.
        ``bias (H, N, N)``: a learned additive bias (relative positions), or None."""
        N = q.shape[2]
        pad = None
        if key_padding_mask is not None:
            pad = ~key_padding_mask[:, None, None, :]  # (B, 1, 1, N), True = attend
        if self.alibi:
            if self._bias is None or self._bias.shape[-1] != N or self._bias.device != q.device:
                self._bias = alibi_bias(self.n_heads, N, self.has_cls).to(q.device)
            bias = self._bias
        if bias is None:
            return pad
        bias = bias.to(q.dtype)[None]  # (1, H, N, N)
        if pad is not None:
            bias = bias.masked_fill(~pad, -math.inf)  # (B, H, N, N)
        return bias

    def forward(self, q, k, v, key_padding_mask=None, bias=None):
        # q, k, v: (B, H, N, Dh); key_padding_mask: (B, N), True = padding; bias (H, N, N)
        p = self.dropout if self.training else 0.0
        mask = self._mask(q, key_padding_mask, bias)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)

    def attention_weights(self, q, k, key_padding_mask=None, bias=None) -> torch.Tensor:
        """The attention probabilities ``forward`` uses, ``(B, H, N, N)`` (no dropout)."""
        s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, H, N, N)
        mask = self._mask(q, key_padding_mask, bias)
        if mask is not None:
            s = s.masked_fill(~mask, -math.inf) if mask.dtype == torch.bool else s + mask
        return torch.softmax(s, dim=-1)


ATTENTION: dict[str, Callable[[ModelConfig], nn.Module]] = {
    "full": FullAttention,
    "hierarchical": hierarchical_from_config,  # medspt.nn.attention: Numba and CUDA kernels
}


def register_attention(name: str, factory: Callable[[ModelConfig], nn.Module]) -> None:
    """Make ``ModelConfig(attention=name)`` build ``factory(config)`` as attention module.

    The factory reads its settings from ``config.attention_options`` (a dict or None)."""
    ATTENTION[name] = factory


def make_attention(config: ModelConfig) -> nn.Module:
    """The attention module ``config`` asks for; bad options raise :class:`InputError`."""
    try:
        return ATTENTION[config.attention](config)
    except (TypeError, ValueError) as e:
        raise InputError(
            f"attention={config.attention!r} with attention_options="
            f"{config.attention_options!r}: {e}"
        ) from None


# --------------------------------------------------------------------------- parameters

# One rule per setting of the model, used by ModelConfig and by SPTClassifier for the
# parameters it passes on (medspt.core.params).
MODEL_RULES: dict[str, Rule] = {
    "n_channels": integer(1),
    "n_steps": integer(1),
    "n_classes": integer(1),
    "depth": integer(1),
    "d_model": integer(1),
    "n_heads": integer(1),
    "patch_len": integer(1),
    "embedding": one_of(EMBEDDING),
    "conv_filters": Rule(
        lambda v: v is None or (isinstance(v, int) and not isinstance(v, bool) and v >= 1),
        "be a positive integer or None",
    ),
    "dropout": interval("[0, 1)"),
    "attn_dropout": interval("[0, 1)", none=True),
    "positional": one_of(POSITIONAL),
    "pooling": one_of(POOLING),
    "attention": one_of(lambda: tuple(ATTENTION)),  # the registry grows
    "attention_options": Rule(lambda v: v is None or isinstance(v, dict), "be a dict or None"),
    "mlp_ratio": integer(1),
    "instance_norm": flag(),
    "instance_floor": interval("[0, inf)"),
    "window_stats": flag(),
}


def check_model_params(values: Mapping[str, Any]) -> None:
    """Check the model settings among ``values`` by :data:`MODEL_RULES`, then that
    ``d_model`` splits evenly into ``n_heads`` heads; raise :class:`InputError` naming the
    first bad one. Settings absent from ``values`` are not checked."""
    check(values, MODEL_RULES)
    if "d_model" in values and "n_heads" in values:
        d_model, n_heads = values["d_model"], values["n_heads"]
        if d_model % n_heads:
            raise InputError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})")


# --------------------------------------------------------------------------- blocks


class RelativeBias(nn.Module):
    """A learned bias per head and token distance ``i - j`` (eRPE-like, Foumani et al.
    2024), added to the attention scores; distances beyond the training length ``n_max``
    share the bias of the longest one, so longer cases can be predicted. A class token
    (first position, ``has_cls``) has no place in time: its bias is zero."""

    def __init__(self, n_heads: int, n_max: int, has_cls: bool = False):
        super().__init__()
        self.n_max, self.off = n_max, int(has_cls)
        self.table = nn.Parameter(torch.zeros(n_heads, 2 * n_max - 1))  # (H, 2R-1)

    def forward(self, n_tokens: int) -> torch.Tensor:
        """The bias ``(H, N, N)`` between ``n_tokens`` tokens."""
        pos = torch.arange(n_tokens - self.off, device=self.table.device)
        dist = (pos[:, None] - pos[None, :]).clamp(1 - self.n_max, self.n_max - 1)
        bias = self.table[:, dist + self.n_max - 1]  # (H, N', N')
        return F.pad(bias, (self.off, 0, self.off, 0))


class SelfAttention(nn.Module):
    def __init__(self, config: ModelConfig):
        super().__init__()
        self.n_heads = config.n_heads
        self.qkv = nn.Linear(config.d_model, 3 * config.d_model)
        self.proj = nn.Linear(config.d_model, config.d_model)
        self.attend = make_attention(config)
        self.drop = nn.Dropout(config.dropout)
        self.rel = (
            RelativeBias(config.n_heads, config.n_patches, config.pooling == "cls")
            if config.positional == "relative"
            else None
        )

    def forward(self, x, key_padding_mask=None):
        B, N, D = x.shape
        q, k, v = self.qkv(x).split(D, dim=2)  # each (B, N, D)
        q, k, v = (t.view(B, N, self.n_heads, D // self.n_heads).transpose(1, 2) for t in (q, k, v))
        if self.rel is None:
            y = self.attend(q, k, v, key_padding_mask)  # (B, H, N, Dh)
        else:
            y = self.attend(q, k, v, key_padding_mask, bias=self.rel(N))
        y = y.transpose(1, 2).reshape(B, N, D)
        return self.drop(self.proj(y))


class MLP(nn.Module):
    def __init__(self, config: ModelConfig):
        super().__init__()
        hidden = config.mlp_ratio * config.d_model
        self.fc = nn.Linear(config.d_model, hidden)
        self.out = nn.Linear(hidden, config.d_model)
        self.drop = nn.Dropout(config.dropout)

    def forward(self, x):
        return self.drop(self.out(F.gelu(self.fc(x))))


class Block(nn.Module):
    """Pre-norm Transformer block."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.ln1 = nn.LayerNorm(config.d_model)
        self.attn = SelfAttention(config)
        self.ln2 = nn.LayerNorm(config.d_model)
        self.mlp = MLP(config)

    def forward(self, x, key_padding_mask=None):
        x = x + self.attn(self.ln1(x), key_padding_mask)
        return x + self.mlp(self.ln2(x))


def sinusoidal_table(n: int, d: int) -> torch.Tensor:
    """Fixed sine/cosine positions (Vaswani et al. 2017), shape (n, d)."""
    pos = torch.arange(n, dtype=torch.float32)[:, None]
    freq = torch.exp(torch.arange(0, d, 2, dtype=torch.float32) * (-math.log(10000.0) / d))
    table = torch.zeros(n, d)
    table[:, 0::2] = torch.sin(pos * freq)
    table[:, 1::2] = torch.cos(pos * freq)[:, : d // 2]
    return table


def conv_steps(patch_len: int) -> tuple[int, int]:
    """How the conv tokenizer reaches a token stride of ``patch_len`` steps: average
    pooling by ``r`` (the smallest divisor with ``patch_len / r <= 8``), then convolutions
    at stride ``patch_len / r``, so that long strides neither skip steps nor pay for
    convolving every one. Returns ``(r, conv_stride)``.

    >>> conv_steps(2), conv_steps(8), conv_steps(24), conv_steps(11)
    ((1, 2), (1, 8), (3, 8), (11, 1))
    """
    r = next(d for d in range(1, patch_len + 1) if patch_len % d == 0 and patch_len // d <= 8)
    return r, patch_len // r


class ConvTokenizer(nn.Module):
    """Values and hidden-indicators ``(B, C, T)`` → tokens ``(B, T / patch_len, D)``.

    Per channel, temporal convolutions at the dilations :data:`CONV_DILATIONS` (kernel
    :data:`CONV_KERNEL`, zero padding) evaluated once per token, at its centre (a stride
    over 8 steps first averages the input, see :func:`conv_steps`); a pointwise
    convolution mixes every channel and scale into ``d_model`` features. A token thus sees
    shapes of 9 to 97 (pooled) steps around it. ``T`` must be a multiple of
    ``patch_len``."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        C, F_, D = config.n_channels, config.n_conv_filters, config.d_model
        self.pool, self.stride = conv_steps(config.patch_len)
        self.scales = nn.ModuleList(
            nn.Conv1d(2 * C, C * F_, CONV_KERNEL, stride=self.stride, dilation=d, groups=C)
            for d in CONV_DILATIONS
        )
        self.mix = nn.Conv1d(len(CONV_DILATIONS) * C * F_, D, 1)

    def forward(self, vals: torch.Tensor, hidden: torch.Tensor) -> torch.Tensor:
        B, C, T = vals.shape  # vals, hidden: (B, C, T)
        inp = torch.stack([vals, hidden], dim=2).view(B, 2 * C, T)  # a group per channel
        if self.pool > 1:
            inp = F.avg_pool1d(inp, self.pool)  # (B, 2C, T / r)
        centre = (self.stride - 1) // 2  # output i sits at step i * stride + centre
        h = []
        for conv in self.scales:
            half = conv.dilation[0] * (CONV_KERNEL // 2)
            h.append(conv(F.pad(inp, (half - centre, half + centre))))  # (B, CF, N)
        h = F.gelu(torch.cat(h, dim=1))  # (B, 3CF, N)
        return F.gelu(self.mix(h)).transpose(1, 2)  # (B, N, D)


# --------------------------------------------------------------------------- model


class SPTTransformer(nn.Module):
    """Transformer encoder (patch or convolutional tokens) with reconstruction and
    classification heads."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        config.validate()
        self.config = config
        C, P, D = config.n_channels, config.patch_len, config.d_model
        n_tok = config.n_patches + (config.pooling == "cls")
        if config.embedding == "conv":
            self.embed = ConvTokenizer(config)
        else:
            self.embed = nn.Linear(2 * C * P, D)  # values + hidden-indicator of one patch
        if config.positional == "learned":
            self.pos = nn.Parameter(torch.zeros(1, n_tok, D))
            nn.init.normal_(self.pos, std=0.02)
        elif config.positional == "sinusoidal":
            self.register_buffer("pos", sinusoidal_table(n_tok, D)[None], persistent=False)
        else:
            self.pos = None
        self.cls_token = nn.Parameter(torch.zeros(1, 1, D)) if config.pooling == "cls" else None
        self.drop = nn.Dropout(config.dropout)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.depth))
        self.ln_f = nn.LayerNorm(D)
        self.recon_head = nn.Linear(D, C * P)
        self.head = nn.Linear(D, config.n_classes)
        # part of the classification head: (mean, log std) per channel -> (D,)
        self.stats_head = nn.Linear(2 * C, D) if config.window_stats else None
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(m: nn.Module) -> None:
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, std=0.02)
            nn.init.zeros_(m.bias)

    def set_attention(self, name: str) -> None:
        """Switch every block to attention ``name`` (e.g. ``"full"`` after hierarchical
        training); attention modules hold no weights, so the trained weights stay."""
        check_model_params({"attention": name})
        self.config.attention = name
        for block in self.blocks:
            block.attn.attend = make_attention(self.config)

    def encoder_parameters(self):
        """Everything but the classification head (what pretraining trains)."""
        return [p for n, p in self.named_parameters() if not n.startswith(HEAD_PREFIXES)]

    def head_parameters(self):
        """The classification head (with the window-statistics layer, if any)."""
        return [p for n, p in self.named_parameters() if n.startswith(HEAD_PREFIXES)]

    def token_padding(self, x: torch.Tensor) -> torch.Tensor:
        """Which tokens of windows ``x (B, C, T)`` are padding, ``(B, N)`` (True = pad).

        Padding is the run of trailing steps where every channel is NaN (how shorter
        recordings are stored in a batch); a token is padding when all its steps are.
        A window with no observed value at all keeps its tokens (nothing to attend to
        otherwise)."""
        cfg = self.config
        B, C, T = x.shape
        pad_t = self.padding_steps(x)  # (B, T)
        extra = cfg.n_patches * cfg.patch_len - T
        pad_t = F.pad(pad_t, (0, extra), value=True)
        pad_tok = pad_t.view(B, cfg.n_patches, cfg.patch_len).all(-1)  # (B, n_p)
        pad_tok &= ~pad_tok.all(dim=1, keepdim=True)
        if self.cls_token is not None:
            pad_tok = F.pad(pad_tok, (1, 0), value=False)
        return pad_tok

    def encode(
        self,
        x: torch.Tensor,
        hidden: torch.Tensor | None = None,
        *,
        return_padding: bool = False,
        padded: bool | None = None,
    ):
        """Token states ``(B, N, D)`` of windows ``x (B, C, T)``.

        ``hidden (B, C, T)`` marks entries the model must not see; NaN entries of ``x``
        are always hidden. Trailing steps missing in every channel are padding (see
        :meth:`token_padding`): no token attends to padding tokens. With
        ``return_padding`` the token padding mask ``(B, N)`` is returned too.

        ``padded`` says whether the batch may hold padding tokens: True hands attention
        the padding mask, False hands it none (the fused attention kernels are fastest
        without one; only right when no window of ``x`` is padded), None looks at the
        batch, which on a GPU makes the host wait for the device. The training loop
        decides once per dataset so that its steps never wait.
        """
        B, C, T = x.shape
        missing = torch.isnan(x)
        pad_t = self.padding_steps(x)  # (B, T)
        pad_tok = self.token_padding(x)  # (B, N)
        if padded is None:
            padded = bool(pad_tok.any())
        key_padding = pad_tok if padded else None
        hide = missing if hidden is None else (hidden | missing)
        x = self.instance_normalize(x, hidden)
        vals = torch.where(hide, torch.zeros((), dtype=x.dtype, device=x.device), x)
        h = self.tokenize(vals, hide, pad_t)  # (B, n_p, D)
        if self.cls_token is not None:
            h = torch.cat([self.cls_token.expand(B, -1, -1), h], dim=1)
        if self.pos is not None:
            h = h + self.pos[:, : h.shape[1]]
        h = self.drop(h)
        for block in self.blocks:
            h = block(h, key_padding)
        h = self.ln_f(h)  # (B, N, D)
        return (h, pad_tok) if return_padding else h

    def tokenize(self, vals: torch.Tensor, hide: torch.Tensor, pad_t: torch.Tensor) -> torch.Tensor:
        """Tokens ``(B, n_p, D)`` of values ``vals (B, C, T)`` (zero where hidden), the
        hidden-indicator ``hide (B, C, T)`` and the padding steps ``pad_t (B, T)``;
        windows are padded to whole tokens."""
        cfg = self.config
        B, C, T = vals.shape
        P, n_p = cfg.patch_len, cfg.n_patches
        pad = n_p * P - T
        if cfg.embedding == "conv":
            # padding reads as the convolutions' own zero padding (value 0, not flagged),
            # so a case's tokens do not depend on how much padding follows it
            flag = (hide & ~pad_t[:, None, :]).to(vals.dtype)
            return self.embed(F.pad(vals, (0, pad)), F.pad(flag, (0, pad)))
        inp = torch.cat([vals, hide.to(vals.dtype)], dim=1)  # (B, 2C, T)
        if pad:  # trailing steps of the last patch: zero value, flagged hidden
            inp = F.pad(inp, (0, pad))
            inp[:, C:, T:] = 1.0
        tok = inp.view(B, 2 * C, n_p, P).permute(0, 2, 1, 3).reshape(B, n_p, 2 * C * P)
        return self.embed(tok)

    @staticmethod
    def padding_steps(x: torch.Tensor) -> torch.Tensor:
        """Padding steps of windows ``x (B, C, T)``, ``(B, T)`` (True = padding): the run
        of trailing steps where every channel is NaN."""
        all_missing = torch.isnan(x).all(dim=1).to(torch.int8)  # (B, T)
        # trailing run: cumulative minimum from the end stays 1 until an observed step
        return all_missing.flip(1).cummin(dim=1).values.flip(1).bool()

    def instance_normalize(
        self, x: torch.Tensor, hidden: torch.Tensor | None = None
    ) -> torch.Tensor:
        """``x (B, C, T)`` standardized per window and channel by the mean and std of its
        visible values (observed, not ``hidden``), with ``instance_norm``; else ``x``.

        The std is ``sqrt(var + max(instance_floor**2, 1e-5))``: a window whose channel
        barely moves is divided by at least ``instance_floor`` (a fraction of the
        channel's training std), so a step inside a near-constant window stays a step of
        moderate size instead of a value of hundreds. A channel with fewer than 2 visible
        values (hidden whole by channel masking) keeps its values: its level cannot be
        known from what the model sees."""
        if not self.config.instance_norm:
            return x
        eps = max(float(self.config.instance_floor) ** 2, INSTANCE_EPS)
        mean, std = self.visible_stats(x, hidden, eps=eps)
        return (x - mean) / std

    @staticmethod
    def visible_stats(
        x: torch.Tensor, hidden: torch.Tensor | None = None, *, eps: float = INSTANCE_EPS
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Mean and std ``(B, C, 1)`` of each window's visible values per channel (observed
        and not ``hidden``); 0 and 1 for a channel with fewer than 2 visible values.

        The std is ``sqrt(var + eps)``. The window-statistics head reads it with the
        default ``eps`` (its log-std feature is unchanged by the instance floor: a level
        and a spread are features there, not divisors)."""
        seen = ~torch.isnan(x) if hidden is None else ~torch.isnan(x) & ~hidden  # (B, C, T)
        n = seen.sum(-1, keepdim=True)  # (B, C, 1)
        zero = torch.zeros((), dtype=x.dtype, device=x.device)
        mean = torch.where(seen, x, zero).sum(-1, keepdim=True) / n.clamp_min(1)
        var = torch.where(seen, (x - mean) ** 2, zero).sum(-1, keepdim=True) / n.clamp_min(1)
        std = torch.sqrt(var + eps)
        few = n < 2
        mean = torch.where(few, zero, mean)
        std = torch.where(few, torch.ones((), dtype=x.dtype, device=x.device), std)
        return mean, std

    def reconstruct(
        self, x: torch.Tensor, hidden: torch.Tensor | None = None, *, padded: bool | None = None
    ) -> torch.Tensor:
        """Predicted values ``(B, C, T)`` for every entry (trained on hidden ones); with
        ``instance_norm`` in the space of :meth:`instance_normalize` ``(x, hidden)``.
        ``padded``: see :meth:`encode`."""
        cfg = self.config
        B, C, T = x.shape
        h = self.encode(x, hidden, padded=padded)
        if self.cls_token is not None:
            h = h[:, 1:]
        out = self.recon_head(h)  # (B, n_p, C*P)
        out = out.view(B, cfg.n_patches, C, cfg.patch_len).permute(0, 2, 1, 3)
        return out.reshape(B, C, cfg.n_patches * cfg.patch_len)[:, :, :T]

    def forward(self, x: torch.Tensor, *, padded: bool | None = None) -> torch.Tensor:
        """Class logits ``(B, K)`` of windows ``x (B, C, T)``; ``padded``: see
        :meth:`encode`."""
        h, pad = self.encode(x, return_padding=True, padded=padded)
        if self.cls_token is not None:
            pooled = h[:, 0]  # (B, D)
        else:  # mean over the tokens that are not padding
            keep = (~pad).to(h.dtype)[..., None]  # (B, N, 1)
            pooled = (h * keep).sum(1) / keep.sum(1).clamp_min(1.0)
        if self.stats_head is not None:
            mean, std = self.visible_stats(x)  # each (B, C, 1)
            stats = torch.cat([mean, torch.log(std)], dim=1)[..., 0]  # (B, 2C)
            pooled = pooled + self.stats_head(stats)
        return self.head(self.drop(pooled))
