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

Random numbers come from the generator passed in, on its device: the training loop keeps
it on the training device, so augmenting a batch copies nothing and reads nothing back
(no host-device synchronization inside a training step).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from medspt.core.errors import InputError

__all__ = ["AUGMENTATIONS", "check_augment", "augment", "mixup", "may_pad"]

AUGMENTATIONS = ("jitter", "scale", "channel_dropout", "shift", "mixup")
JITTER_STD, SCALE_STD, CHANNEL_DROP, MAX_SHIFT, MIXUP_ALPHA = 0.03, 0.1, 0.1, 0.1, 0.4
# Beta draws by rejection: candidates per window; all are rejected with probability
# (1 - 0.845)**16, about 1e-13, for alpha = 0.4 (Joehnk's acceptance rate)
BETA_CANDIDATES = 16


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


def may_pad(kinds: Sequence[str], has_missing: bool) -> bool:
    """Whether augmenting with ``kinds`` can leave a window with trailing steps missing in
    every channel (what the model treats as padding): ``"shift"`` always,
    ``"channel_dropout"`` and ``"mixup"`` only when the windows have missing values
    (``has_missing``)."""
    return "shift" in kinds or (has_missing and bool({"channel_dropout", "mixup"} & set(kinds)))


def _on(t: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """``t`` on ``x``'s device and dtype; no copy when it is already there."""
    return t if t.device == x.device and t.dtype == x.dtype else t.to(x.device, x.dtype)


def _device(generator: torch.Generator | None, x: torch.Tensor) -> torch.device:
    """Where random numbers are drawn: on the generator's device (torch refuses a generator
    of another device), else on ``x``'s."""
    return generator.device if generator is not None else x.device


def augment(
    x: torch.Tensor, kinds: Sequence[str], generator: torch.Generator | None = None
) -> torch.Tensor:
    """A randomly perturbed copy of a batch ``x (B, C, T)``; random numbers come from
    ``generator`` (drawn on its device, moved to ``x``'s if that is another one) so
    training stays reproducible."""
    if not kinds:
        return x
    B, C, T = x.shape
    dev = _device(generator, x)

    def draw(*shape):  # standard normal on the generator's device, on x's device and dtype
        return _on(torch.randn(*shape, generator=generator, device=dev), x)

    out = x
    if "scale" in kinds:
        out = out * (1 + SCALE_STD * draw(B, C, 1))
    if "jitter" in kinds:
        out = out + JITTER_STD * draw(B, C, T)
    if "channel_dropout" in kinds and C > 1:
        drop = torch.rand(B, C, generator=generator, device=dev) < CHANNEL_DROP  # (B, C)
        drop &= ~drop.all(dim=1, keepdim=True)  # keep at least one channel
        drop = drop if drop.device == x.device else drop.to(x.device)
        out = out.masked_fill(drop[:, :, None], float("nan"))
    if "shift" in kinds:
        out = _shift(out, generator)
    return out


def _shift(x: torch.Tensor, generator: torch.Generator | None) -> torch.Tensor:
    """Move each window of ``x (B, C, T)`` by its own offset; vacated samples are NaN."""
    B, C, T = x.shape
    k = int(MAX_SHIFT * T)
    if k == 0:
        return x
    offset = torch.randint(-k, k + 1, (B, 1), generator=generator, device=_device(generator, x))
    offset = offset if offset.device == x.device else offset.to(x.device)  # (B, 1)
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
    dev = _device(generator, x)
    lam = _on(_beta(B, generator, dev), x)  # (B,)
    lam = torch.maximum(lam, 1 - lam)  # the first partner dominates
    perm = torch.randperm(B, generator=generator, device=dev)
    perm = perm if perm.device == x.device else perm.to(x.device)  # (B,)
    mixed = lam[:, None, None] * x + (1 - lam[:, None, None]) * x[perm]
    return mixed, y, y[perm], lam


def _beta(
    n: int, generator: torch.Generator | None, device: torch.device | None = None
) -> torch.Tensor:
    """``n`` draws of Beta(MIXUP_ALPHA, MIXUP_ALPHA) from ``generator``, reproducibly, on
    ``device`` (the generator's).

    torch.distributions takes no generator, so this is Joehnk's rejection method:
    ``a = U**(1/alpha)``, ``b = V**(1/alpha)``, keep ``a / (a + b)`` where ``a + b <= 1``.
    Each window gets :data:`BETA_CANDIDATES` candidates and keeps its first accepted one: a
    fixed amount of work, so nothing is read back from the device to decide whether to draw
    again. If all are rejected (about 1e-13) the window keeps ``lam = 0.5``.
    """
    if device is None:
        device = generator.device if generator is not None else None
    u = torch.rand(2, n, BETA_CANDIDATES, generator=generator, device=device)
    a, b = u[0] ** (1 / MIXUP_ALPHA), u[1] ** (1 / MIXUP_ALPHA)  # (n, K) each
    ok = ((a + b) <= 1) & ((a + b) > 0)  # (n, K); a + b = 0 would be 0 / 0
    draw = torch.where(ok, a / (a + b), 0.5)
    first = ok.int().argmax(dim=1, keepdim=True)  # (n, 1): first accepted, 0 if none
    return torch.where(ok.any(dim=1), draw.gather(1, first)[:, 0], 0.5)  # (n,)
