"""Training loops: masked-reconstruction pretraining and fine-tuning (which, on a freshly
initialized model, is training from scratch).

Both share one loop (:func:`_fit_loop`): AdamW, linear warm-up then cosine decay per
step, gradient clipping, early stopping on a validation set with the best weights
restored, seeded shuffling, and a progress bar that ``verbose=False`` silences.

A training step stays on the device: the windows are copied there once (on CUDA through
pinned memory), the batch order and the masks are drawn there by a generator that lives
there, and the epoch's loss is summed there and read once per epoch. So a step never
makes the host wait for the device (:mod:`medspt.core.host_syncs` counts the calls that
would). With ``TrainConfig.amp`` on CUDA, forward passes and losses run under bf16
autocast, the losses in float32; a CPU run ignores ``amp``.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from medspt.nn.augment import augment, may_pad, mixup
from medspt.nn.masking import make_mask
from medspt.nn.model import HEAD_PREFIXES, SPTTransformer

__all__ = [
    "TrainConfig",
    "pretrain",
    "finetune",
    "masked_mse",
    "reconstruction_sums",
    "relative_loss",
    "resolve_device",
]

# a channel whose hidden values deviate from their window's visible mean by less than this
# (mean square, in the units of the training channel std) has no baseline to beat: it is
# constant, up to rounding, wherever it was hidden
BASELINE_ZERO = 1e-12


@dataclass
class TrainConfig:
    """Optimisation settings shared by pretraining and fine-tuning."""

    epochs: int = 30
    batch_size: int = 64
    lr: float = 1e-3
    weight_decay: float = 0.01
    warmup: float = 0.1  # fraction of all steps spent warming up
    grad_clip: float | None = 1.0
    patience: int | None = 10  # epochs without validation improvement; None = never stop
    # False: validation is only scored (every epoch runs, the final weights are kept), for
    # validation sets too small to pick an epoch on
    keep_best: bool = True
    # True: an epoch that ends inside warm-up is never kept and never counts towards
    # patience (the compute-matched control, whose longer schedule warms up for longer,
    # must not keep an under-trained checkpoint that scratch could not reach; issue 59)
    keep_after_warmup: bool = False
    device: str = "cpu"
    seed: int = 0
    verbose: bool = True
    no_decay_norms: bool = False  # no weight decay on biases, norms, positions, class token
    encoder_lr_scale: float = 1.0  # fine-tuning: encoder lr = lr * scale, head at lr
    amp: bool = False  # bf16 autocast of forward passes and losses on CUDA; CPU ignores it


def resolve_device(device: str | torch.device | None) -> torch.device:
    """``"auto"`` picks CUDA when available, else CPU."""
    if device is None or str(device) == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={device!r} was requested but CUDA is not available")
    return dev


def masked_mse(pred: torch.Tensor, target: torch.Tensor, hidden: torch.Tensor) -> torch.Tensor:
    """Mean squared error over hidden entries whose target is observed (not NaN).

    Computed in float32 (also for bf16 predictions under autocast) as a sum over the
    selected entries divided by their number, without reading anything back to the host;
    0, with a gradient of zeros, when no entry is selected.
    """
    sel = hidden & ~torch.isnan(target)  # (B, C, T)
    # NaN targets are replaced before the difference, so they reach neither value nor gradient
    diff = torch.where(sel, pred.float() - target.float().nan_to_num(), 0.0)  # (B, C, T)
    return diff.square().sum() / sel.sum().clamp_min(1)


def reconstruction_sums(
    pred: torch.Tensor, target: torch.Tensor, hidden: torch.Tensor
) -> torch.Tensor:
    """Per channel, the sums that make the reconstruction loss relative to the
    visible-mean baseline, ``(3, C)`` in float32: the squared error of ``pred`` on the
    hidden entries whose target is observed, the squared error of each window-channel's
    visible mean (the mean of its observed values that are not ``hidden``) on the same
    entries, and their number.

    ``pred`` and ``target`` ``(B, C, T)`` live in one space (with instance normalization,
    that of :meth:`~medspt.nn.model.SPTTransformer.instance_normalize`, where the visible
    mean is 0). A window-channel with fewer than 2 visible values (hidden whole by channel
    masking) has the baseline 0, the training channel mean. Nothing is read back to the
    host; add the sums of several batches before :func:`relative_loss`.
    """
    sel = hidden & ~torch.isnan(target)  # (B, C, T)
    t = target.float()
    mean, _ = SPTTransformer.visible_stats(t, hidden)  # (B, C, 1)
    t = t.nan_to_num()
    err = torch.where(sel, pred.float() - t, 0.0).square().sum(dim=(0, 2))  # (C,)
    base = torch.where(sel, t - mean, 0.0).square().sum(dim=(0, 2))
    return torch.stack([err, base, sel.sum(dim=(0, 2)).float()])


def relative_loss(sums) -> tuple[float, list[float]]:
    """The reconstruction loss relative to predicting each window's visible mean, from
    :func:`reconstruction_sums` ``(3, C)`` (a tensor or nested list): pooled over all
    channels (summed errors over summed baselines), and per channel. 1.0 is what the
    visible mean scores, so a value near 1 means nothing was learned for that channel; 0
    is a perfect reconstruction. NaN where there is no baseline to beat (nothing hidden,
    or a channel constant wherever it was hidden)."""
    if isinstance(sums, torch.Tensor):
        sums = sums.tolist()
    err, base, n = np.asarray(sums, dtype=np.float64)

    def ratio(e: float, b: float, k: float) -> float:
        return float(e / b) if k > 0 and b > BASELINE_ZERO * k else float("nan")

    per_channel = [ratio(e, b, k) for e, b, k in zip(err, base, n)]
    return ratio(err.sum(), base.sum(), n.sum()), per_channel


def _relative_row(prefix: str, sums) -> dict:
    pooled, channels = relative_loss(sums)
    return {f"{prefix}_relative": pooled, f"{prefix}_relative_channels": channels}


def _to_device(t: torch.Tensor, device: torch.device) -> torch.Tensor:
    """``t`` on ``device``, copied once before training. From the CPU to CUDA the copy goes
    through pinned (page-locked) memory without blocking: the host goes on queueing, and
    work queued after the copy on the same stream waits for it (the pinned buffer is kept
    until the copy is done by torch's caching host allocator). Elsewhere ``t.to(device)``."""
    if device.type == "cuda" and t.device.type == "cpu":
        return t.pin_memory().to(device, non_blocking=True)
    return t.to(device)


def _autocast(device: torch.device, amp: bool) -> contextlib.AbstractContextManager:
    """bf16 autocast on CUDA with ``amp``; no autocast otherwise (a CPU run ignores amp, so
    its results are those of ``amp=False``). bf16 has float32's range: no loss scaling."""
    if amp and device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def _has_padding(model: SPTTransformer, X: torch.Tensor, chunk: int = 4096) -> bool:
    """Whether any window of ``X`` has padding tokens for ``model``; read once before
    training, so that no step has to look (see :meth:`SPTTransformer.encode`)."""
    # padding is a trailing run of steps missing in every channel: it needs a window whose
    # last step is missing everywhere (a cheap look at (N, C) values rules most sets out)
    if not bool(torch.isnan(X[:, :, -1]).all(dim=1).any()):
        return False
    return any(bool(model.token_padding(X[i : i + chunk]).any()) for i in range(0, len(X), chunk))


def warmup_steps(total_steps: int, warmup: float) -> int:
    """Optimizer steps of the linear warm-up: ``warmup`` of ``total_steps``, at least 1."""
    return max(1, int(round(warmup * total_steps)))


def _warmup_cosine(total_steps: int, warmup: float) -> Callable[[int], float]:
    n_warm = warmup_steps(total_steps, warmup)

    def factor(step: int) -> float:
        if step < n_warm:
            return (step + 1) / n_warm
        progress = (step - n_warm) / max(1, total_steps - n_warm)
        return 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))

    return factor


def _score(row: dict, monitor: str) -> tuple[float, ...]:
    """Lower is better. Balanced accuracy is coarse on few validation subjects, so ties
    are broken by the validation loss."""
    if monitor == "val_balanced_accuracy" and monitor in row:
        return (-round(row[monitor], 6), row["val_loss"])
    return (round(row.get(monitor, row["train_loss"]), 9),)


def _batches(n: int, batch_size: int, generator: torch.Generator | None):
    """The index tensors of one epoch's batches, shuffled by ``generator`` on its device
    (the training device: indexing the windows copies nothing to it)."""
    if generator is None:
        order = torch.arange(n)
    else:
        order = torch.randperm(n, generator=generator, device=generator.device)
    for i in range(0, n, batch_size):
        yield order[i : i + batch_size]


def _param_groups(model: torch.nn.Module, params: list, cfg: TrainConfig) -> list[dict]:
    """AdamW groups of ``params``: with ``no_decay_norms`` biases, norm weights, positions
    and the class token (every tensor of fewer than 2 dimensions, and ``pos``) get no weight
    decay; with ``encoder_lr_scale`` != 1 everything but the classification head trains at
    ``lr * encoder_lr_scale`` (a pretrained encoder moves less than a fresh head)."""
    wanted = {id(p) for p in params}
    groups: dict[tuple[bool, bool], list] = {}
    for name, p in model.named_parameters():
        if id(p) not in wanted:
            continue
        plain = cfg.no_decay_norms and (p.ndim < 2 or name in ("pos", "cls_token"))
        head = name.startswith(HEAD_PREFIXES)
        groups.setdefault((plain, head), []).append(p)
    return [
        {
            "params": ps,
            "weight_decay": 0.0 if plain else cfg.weight_decay,
            "lr": cfg.lr * (1.0 if head else cfg.encoder_lr_scale),
        }
        for (plain, head), ps in groups.items()
    ]


def _fit_loop(
    model: torch.nn.Module,
    params: list[torch.nn.Parameter],
    train_step: Callable[[torch.Tensor, torch.Generator], torch.Tensor],
    eval_fn: Callable[[], dict] | None,
    n_train: int,
    cfg: TrainConfig,
    desc: str,
    monitor: str = "val_loss",
    epoch_stats: Callable[[], dict] | None = None,
) -> tuple[list[dict], int]:
    """Generic epoch loop; returns the per-epoch history and the epoch whose weights are
    kept (1-based): the best validation epoch, or the last one without validation.
    ``epoch_stats`` (optional) adds entries to each epoch's row after its last step
    (read once an epoch, like the loss)."""
    torch.manual_seed(cfg.seed)  # dropout
    dev = resolve_device(cfg.device)
    # shuffling and masks are drawn on the training device: a step copies nothing there
    gen = torch.Generator(device=dev).manual_seed(cfg.seed)
    acc = torch.float32 if dev.type == "mps" else torch.float64
    steps_per_epoch = math.ceil(n_train / cfg.batch_size)
    total = max(1, cfg.epochs * steps_per_epoch)
    opt = torch.optim.AdamW(_param_groups(model, params, cfg), lr=cfg.lr)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, _warmup_cosine(total, cfg.warmup))
    n_warm = warmup_steps(total, cfg.warmup) if cfg.keep_after_warmup else 0
    history: list[dict] = []
    best, best_epoch, best_state, stale, done = None, 0, None, 0, 0
    bar = tqdm(range(1, cfg.epochs + 1), desc=desc, disable=not cfg.verbose, leave=False)
    for epoch in bar:
        model.train()
        t0, seen, steps = time.perf_counter(), 0, 0
        # summed on the device in float64 (as Python floats were; MPS has no float64) and
        # read once an epoch
        total_loss = torch.zeros((), dtype=acc, device=dev)
        for idx in _batches(n_train, cfg.batch_size, gen):
            with _autocast(dev, cfg.amp):
                loss = train_step(idx, gen)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if cfg.grad_clip:
                torch.nn.utils.clip_grad_norm_(params, cfg.grad_clip)
            opt.step()
            sched.step()
            total_loss += loss.detach().to(acc) * len(idx)
            seen += len(idx)
            steps += 1
        done += steps
        train_loss = float(total_loss) / max(seen, 1)  # waits for the epoch's last step
        dt = time.perf_counter() - t0
        row = {
            "epoch": epoch,
            "train_loss": train_loss,
            "windows": seen,
            "steps": steps,
            "seconds": dt,
            "windows_per_s": seen / dt if dt > 0 else float("nan"),
        }
        if epoch_stats is not None:
            row.update(epoch_stats())
        if eval_fn is not None:
            model.eval()
            with torch.no_grad(), _autocast(dev, cfg.amp):
                row.update(eval_fn())
        history.append(row)
        bar.set_postfix({k: f"{v:.3g}" for k, v in row.items() if k.endswith("loss")})
        if done < n_warm:  # still warming up: scored, never kept (keep_after_warmup)
            continue
        score = _score(row, monitor)
        if best is None or score < best:
            best, best_epoch, stale = score, epoch, 0
            if eval_fn is not None and cfg.keep_best:
                best_state = copy.deepcopy(model.state_dict())
        else:
            stale += 1
            # Never stop in the first third: fine-tuning often sits on a plateau for
            # several epochs before the loss starts to fall.
            may_stop = eval_fn is not None and cfg.patience is not None and cfg.keep_best
            if may_stop and stale >= cfg.patience and epoch > cfg.epochs // 3:
                break
    bar.close()
    if best_state is None:  # no validation (or keep_best=False): the final weights
        return history, len(history)
    model.load_state_dict(best_state)
    return history, best_epoch


def pretrain(
    model: SPTTransformer,
    X: torch.Tensor,
    *,
    X_val: torch.Tensor | None = None,
    masking: str | Callable = "span",
    mask_ratio: float = 0.15,
    mean_span: float = 3.0,
    channel_groups: list[list[int]] | None = None,
    config: TrainConfig | None = None,
    token_len: int | None = None,
) -> tuple[list[dict], int]:
    """Train the encoder to reconstruct hidden values of its own training windows.

    Parameters
    ----------
    model : SPTTransformer
    X : Tensor, shape (N, C, T)
        Normalized training windows (NaN = missing; never part of the loss).
    X_val : Tensor, optional
        Windows whose reconstruction loss (with fixed masks) drives early stopping.
    masking, mask_ratio, mean_span, channel_groups, token_len
        See :func:`medspt.nn.masking.make_mask` (``token_len``: hide whole patch tokens).

    Returns
    -------
    history : list of dict
        Per epoch: ``train_loss``, ``val_loss`` (masked MSE), seconds, windows/s, and the
        loss relative to predicting each window-channel's visible mean
        (:func:`relative_loss`; 1.0 = nothing learned): ``train_relative`` and
        ``train_relative_channels`` (over the epoch's training batches, as they were
        hidden and with the weights of the moment), ``val_relative`` and
        ``val_relative_channels`` (one value per channel) with ``X_val``.
    best_epoch : int
    """
    cfg = config or TrainConfig()
    dev = resolve_device(cfg.device)
    model.to(dev)
    X = _to_device(X, dev)  # once: batches are indexed on the device
    # the relative loss of the training batches, summed on the device and read once an epoch
    acc = torch.float32 if dev.type == "mps" else torch.float64  # MPS has no float64
    sums = torch.zeros(3, X.shape[1], dtype=acc, device=dev)
    padded = _has_padding(model, X)
    mask_kw = dict(
        ratio=mask_ratio, mean_span=mean_span, channel_groups=channel_groups, token_len=token_len
    )

    def hide_for(xb: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
        # drawn where the batch is, by a generator on the same device
        return make_mask(tuple(xb.shape), masking, valid=~torch.isnan(xb), generator=gen, **mask_kw)

    def step(idx, gen):
        xb = X[idx]  # (B, C, T)
        hidden = hide_for(xb, gen)
        # with instance normalization the target lives in the visible values' scale
        target = model.instance_normalize(xb, hidden)
        pred = model.reconstruct(xb, hidden, padded=padded)
        with torch.no_grad():
            sums.add_(reconstruction_sums(pred.detach(), target, hidden))
        return masked_mse(pred, target, hidden)

    def epoch_stats() -> dict:
        row = _relative_row("train", sums.tolist())  # the epoch's one read
        sums.zero_()
        return row

    eval_fn = None
    if X_val is not None and len(X_val):
        X_val = _to_device(X_val, dev)
        vgen = torch.Generator(device=dev).manual_seed(cfg.seed + 1)
        val_hidden = [hide_for(X_val[i : i + 512], vgen) for i in range(0, len(X_val), 512)]

        def eval_fn():
            losses, val_sums = [], torch.zeros_like(sums)
            for i, h in enumerate(val_hidden):
                xv = X_val[i * 512 : (i + 1) * 512]
                pred, target = model.reconstruct(xv, h), model.instance_normalize(xv, h)
                losses.append(masked_mse(pred, target, h))
                val_sums += reconstruction_sums(pred, target, h)
            # one read: the chunks' losses (float32, exact in float64) and the sums
            read = torch.cat([torch.stack(losses).to(sums.dtype), val_sums.flatten()]).tolist()
            n = len(losses)
            rows = np.asarray(read[n:]).reshape(3, -1)
            return {"val_loss": float(np.mean(read[:n])), **_relative_row("val", rows)}

    params = model.encoder_parameters()
    cfg = dataclasses.replace(cfg, encoder_lr_scale=1.0)  # the encoder is what it trains
    return _fit_loop(model, params, step, eval_fn, len(X), cfg, "pretrain", epoch_stats=epoch_stats)


def finetune(
    model: SPTTransformer,
    X: torch.Tensor,
    y: torch.Tensor,
    *,
    X_val: torch.Tensor | None = None,
    y_val: torch.Tensor | None = None,
    class_weight: torch.Tensor | None = None,
    linear_probe: bool = False,
    config: TrainConfig | None = None,
    desc: str = "finetune",
    monitor: str = "val_balanced_accuracy",
    augmentations: tuple[str, ...] = (),
    label_smoothing: float = 0.0,
) -> tuple[list[dict], int]:
    """Train the classifier (all weights, or only the head with ``linear_probe=True``).

    ``augmentations`` (:mod:`medspt.nn.augment`) perturb the training batches only;
    validation windows are scored as they are. ``label_smoothing`` is that of
    :func:`torch.nn.functional.cross_entropy`, for the training loss only.

    Early stopping watches ``monitor`` on the validation windows: balanced accuracy by
    default (ties broken by the loss; a loss that rises while accuracy still improves is
    common when fine-tuning), or ``"val_loss"``. The weights of the best epoch are kept.
    Returns the per-epoch history (``train_loss``, ``val_loss``, ``val_accuracy``,
    ``val_balanced_accuracy``) and the best epoch.
    """
    cfg = config or TrainConfig()
    dev = resolve_device(cfg.device)
    model.to(dev)
    X, y = _to_device(X, dev), _to_device(y, dev)  # once: batches are indexed on the device
    w = _to_device(class_weight, dev) if class_weight is not None else None
    # decided once, so that no step has to look; augmenting can leave windows padded
    padded = _has_padding(model, X) or (
        bool(augmentations) and may_pad(augmentations, bool(torch.isnan(X).any()))
    )
    if linear_probe:
        params = model.head_parameters()
        for p in model.parameters():
            p.requires_grad_(False)
        for p in params:
            p.requires_grad_(True)
    else:
        params = [p for p in model.parameters() if p.requires_grad]

    def step(idx, gen):
        xb, yb = augment(X[idx], augmentations, gen), y[idx]
        if "mixup" not in augmentations:
            logits = model(xb, padded=padded).float()  # the loss in float32, also under amp
            return F.cross_entropy(logits, yb, weight=w, label_smoothing=label_smoothing)
        xb, ya, yb, lam = mixup(xb, yb, gen)  # blended windows need blended targets
        logits = model(xb, padded=padded).float()

        def loss(target):  # per window
            return F.cross_entropy(
                logits, target, weight=w, label_smoothing=label_smoothing, reduction="none"
            )

        return (lam * loss(ya) + (1 - lam) * loss(yb)).mean()

    eval_fn = None
    if X_val is not None and len(X_val):
        X_val, y_val = _to_device(X_val, dev), _to_device(y_val, dev)

        def eval_fn():
            chunks = [model(X_val[i : i + 512]) for i in range(0, len(X_val), 512)]
            logits = torch.cat(chunks).float()
            pred = logits.argmax(1)
            recalls = [float((pred[y_val == k] == k).float().mean()) for k in torch.unique(y_val)]
            return {
                "val_loss": float(F.cross_entropy(logits, y_val, weight=w)),
                "val_accuracy": float((pred == y_val).float().mean()),
                "val_balanced_accuracy": float(np.mean(recalls)),
            }

    try:
        return _fit_loop(model, params, step, eval_fn, len(X), cfg, desc, monitor)
    finally:
        if linear_probe:
            for p in model.parameters():
                p.requires_grad_(True)
