"""Time-series augmentation for fine-tuning batches (never for evaluation).

Windows arrive standardized (per channel), so the noise scales below are in units of a
channel's spread. Missing values (NaN) stay missing.

``"jitter"``
    Gaussian noise of std 0.03 on every value.
``"scale"``
    Every channel of a window multiplied by ``1 + N(0, 0.1)``.
``"channel_dropout"``
    Each channel of a window marked missing with probability 0.1 (never all of them), as
    a sensor that drops out; the model already knows how to read missing values.
``"shift"``
    Each window moved in time by up to 10 % of its length (either way), the part that
    leaves the window dropped and the part that enters marked missing: the same event
    seen a little earlier or later, without inventing samples.
``"mixup"``
    Pairs of windows of a batch blended, ``lam * a + (1 - lam) * b`` with
    ``lam ~ Beta(0.4, 0.4)``, and their targets blended the same way
    (:func:`mixup`, applied by the training loop because it changes the targets).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from medspt.errors import InputError

__all__ = ["AUGMENTATIONS", "check_augment", "augment", "mixup"]

AUGMENTATIONS = ("jitter", "scale", "channel_dropout", "shift", "mixup")
JITTER_STD, SCALE_STD, CHANNEL_DROP, MAX_SHIFT, MIXUP_ALPHA = 0.03, 0.1, 0.1, 0.1, 0.4


def check_augment(kinds) -> tuple[str, ...]:
    """``None``, a name, a comma-separated string or a list of names -> a tuple of names."""
    if kinds is None:
        return ()
    if isinstance(kinds, str):
        kinds = [k.strip() for k in kinds.split(",") if k.strip()]
    if not isinstance(kinds, Sequence):
        raise InputError(f"augment must be None, a name or a list of names, got {kinds!r}")
    unknown = [k for k in kinds if k not in AUGMENTATIONS]
    if unknown:
        raise InputError(
            f"augment has unknown augmentation(s) {unknown}; choose from {list(AUGMENTATIONS)}"
        )
    return tuple(dict.fromkeys(kinds))


def augment(
    x: torch.Tensor, kinds: Sequence[str], generator: torch.Generator | None = None
) -> torch.Tensor:
    """A randomly perturbed copy of a batch ``x (B, C, T)``; random numbers come from
    ``generator`` (on the CPU) so training stays reproducible."""
    if not kinds:
        return x
    B, C, T = x.shape

    def draw(*shape):  # standard normal on the generator's device, moved to x's
        return torch.randn(*shape, generator=generator).to(x.device, x.dtype)

    out = x
    if "scale" in kinds:
        out = out * (1 + SCALE_STD * draw(B, C, 1))
    if "jitter" in kinds:
        out = out + JITTER_STD * draw(B, C, T)
    if "channel_dropout" in kinds and C > 1:
        drop = torch.rand(B, C, generator=generator) < CHANNEL_DROP  # (B, C)
        drop &= ~drop.all(dim=1, keepdim=True)  # keep at least one channel
        nan = torch.tensor(float("nan"), dtype=x.dtype, device=x.device)
        out = torch.where(drop.to(x.device)[:, :, None], nan, out)
    if "shift" in kinds:
        out = _shift(out, generator)
    return out


def _shift(x: torch.Tensor, generator: torch.Generator | None) -> torch.Tensor:
    """Move each window of ``x (B, C, T)`` by its own offset; vacated samples are NaN."""
    B, C, T = x.shape
    k = int(MAX_SHIFT * T)
    if k == 0:
        return x
    offset = torch.randint(-k, k + 1, (B, 1), generator=generator).to(x.device)  # (B, 1)
    src = torch.arange(T, device=x.device)[None, :] - offset  # (B, T) source index
    inside = (src >= 0) & (src < T)
    moved = torch.gather(x, 2, src.clamp(0, T - 1)[:, None, :].expand(B, C, T))
    return torch.where(inside[:, None, :], moved, torch.full_like(x, float("nan")))


def mixup(
    x: torch.Tensor, y: torch.Tensor, generator: torch.Generator | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Blend each window of ``x (B, C, T)`` with a random partner of the same batch.

    Returns the blended batch, the two label vectors and the weight ``lam (B,)`` of the
    first: the loss is ``lam * loss(y_a) + (1 - lam) * loss(y_b)``. A value missing in
    either partner stays missing.
    """
    B = x.shape[0]
    lam = _beta(B, generator).to(x.device, x.dtype)  # (B,)
    lam = torch.maximum(lam, 1 - lam)  # the first partner dominates
    perm = torch.randperm(B, generator=generator).to(x.device)
    mixed = lam[:, None, None] * x + (1 - lam[:, None, None]) * x[perm]
    return mixed, y, y[perm], lam


def _beta(n: int, generator: torch.Generator | None) -> torch.Tensor:
    """``n`` draws of Beta(MIXUP_ALPHA, MIXUP_ALPHA) from ``generator``, reproducibly.

    torch.distributions takes no generator, so this is Joehnk's rejection method:
    ``a = U**(1/alpha)``, ``b = V**(1/alpha)``, keep ``a / (a + b)`` where ``a + b <= 1``.
    """
    out = torch.empty(n)
    filled = 0
    while filled < n:
        u = torch.rand(2, 2 * (n - filled) + 4, generator=generator)
        a, b = u[0] ** (1 / MIXUP_ALPHA), u[1] ** (1 / MIXUP_ALPHA)
        ok = (a + b) <= 1
        draw = (a / (a + b))[ok][: n - filled]
        out[filled : filled + len(draw)] = draw
        filled += len(draw)
    return out
