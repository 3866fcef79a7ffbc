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
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from medspt.errors import InputError

__all__ = ["AUGMENTATIONS", "check_augment", "augment"]

AUGMENTATIONS = ("jitter", "scale", "channel_dropout")
JITTER_STD, SCALE_STD, CHANNEL_DROP = 0.03, 0.1, 0.1


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
    return out
