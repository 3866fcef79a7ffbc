"""The CPU cells of ``throughput.py``: models, one timed training step per kind (medspt
classification, medspt pretraining, tsai's TSTPlus classification), and the timing loop
that keeps only the steps other processes did not disturb.

``throughput.py --worker`` imports this module in tsai's interpreter too, so medspt is
imported through :func:`import_medspt` (from this checkout when it is not installed) and
tsai only where TSTPlus is built.
"""

from __future__ import annotations

import importlib
import os
import platform
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

import torch
import torch.nn.functional as F
from _common import REPO_ROOT, cpu_seconds

N_CHANNELS, N_STEPS = 18, 200  # GPD-1 gait windows
HEAD_DIM = 16  # n_heads = d_model // 16: 4 heads at d_model 64, 8 at 128
MIN_SLOW_STEPS = 3  # fewest timed steps of a cell stopped by Settings.max_seconds
KINDS_SAME_TORCH = ("medspt_cls", "medspt_pretrain", "tstplus_cls")
KINDS_MEDSPT = ("medspt_cls", "medspt_pretrain")


@dataclass
class Settings:
    """What every cell shares."""

    batch_size: int = 64
    patch_len: int = 8
    embedding: str = "patch"  # medspt's tokenizer: "patch" or "conv"
    positional: str = "learned"
    attn_dropout: float | None = None  # medspt's; None: same as dropout
    dropout: float = 0.1
    n_classes: int = 2
    tstplus_attn_dropout: float | None = None  # None: same as dropout (like medspt)
    threads: int = 1
    seconds: float = 2.0  # minimum timed seconds per cell
    min_steps: int = 20  # minimum timed steps per cell
    warmup: int = 3  # untimed steps before timing (fewer if they take > max_seconds / 4)
    max_seconds: float = 30.0  # slow / disturbed cells stop here (after MIN_SLOW_STEPS steps)
    seed: int = 0


@dataclass
class Cell:
    """One measured (configuration, model, step) combination."""

    depth: int
    d_model: int
    n_heads: int
    kind: str  # one of KINDS_SAME_TORCH
    torch_version: str
    n_params: int
    steps: int  # timed steps
    clean_steps: int  # undisturbed ones among them: those counted, unless there are none
    seconds: float
    windows_per_s: float
    median_step_ms: float
    min_step_ms: float
    max_step_ms: float
    other_cpu: float | None  # share of the machine's CPU other processes used while timing


# --------------------------------------------------------------------------- models and steps


def import_medspt() -> tuple[ModuleType, ModuleType, ModuleType]:
    """``medspt.nn.masking``, ``.model``, ``.training`` (from this checkout if not installed)."""
    try:
        import medspt  # noqa: F401
    except ImportError:
        sys.path.insert(0, str(REPO_ROOT))
    masking = importlib.import_module("medspt.nn.masking")
    model = importlib.import_module("medspt.nn.model")
    training = importlib.import_module("medspt.nn.training")
    return masking, model, training


def _build(
    kind: str, depth: int, d_model: int, n_heads: int, s: Settings
) -> tuple[torch.nn.Module, list[torch.nn.Parameter], Callable]:
    """Model, trained parameters and ``loss(x, y)`` of one kind of training step."""
    if kind == "tstplus_cls":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from tsai.models.TSTPlus import TSTPlus
        # Matched: depth, width, heads, d_ff, dropout (residual, attention weights and head,
        # like medspt). Everything else is TSTPlus's default (post-norm BatchNorm, residual
        # attention, flatten head).
        model = TSTPlus(
            N_CHANNELS,
            s.n_classes,
            N_STEPS,
            n_layers=depth,
            d_model=d_model,
            n_heads=n_heads,
            d_ff=4 * d_model,
            dropout=s.dropout,
            attn_dropout=s.dropout if s.tstplus_attn_dropout is None else s.tstplus_attn_dropout,
            fc_dropout=s.dropout,
        )
        return model, list(model.parameters()), lambda x, y: F.cross_entropy(model(x), y)

    masking, medspt_model, training = import_medspt()
    config = medspt_model.ModelConfig(
        n_channels=N_CHANNELS,
        n_steps=N_STEPS,
        n_classes=s.n_classes,
        depth=depth,
        d_model=d_model,
        n_heads=n_heads,
        patch_len=s.patch_len,
        embedding=s.embedding,
        positional=s.positional,
        dropout=s.dropout,
        attn_dropout=s.attn_dropout,
        mlp_ratio=4,
    )
    model = medspt_model.SPTTransformer(config)
    if kind == "medspt_cls":
        return model, list(model.parameters()), lambda x, y: F.cross_entropy(model(x), y)
    if kind == "medspt_pretrain":
        gen = torch.Generator().manual_seed(s.seed)

        def loss(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            # Same call as medspt.nn.training.pretrain with its defaults.
            hidden = masking.make_mask(
                tuple(x.shape),
                "span",
                ratio=0.15,
                mean_span=3.0,
                valid=~torch.isnan(x),
                generator=gen,
            )
            return training.masked_mse(model.reconstruct(x, hidden), x, hidden)

        return model, model.encoder_parameters(), loss
    raise ValueError(f"unknown kind {kind!r}")


def foreign_seconds(
    before: tuple[float, float] | None, after: tuple[float, float] | None
) -> float | None:
    """CPU seconds other processes used between two :func:`cpu_seconds` readings (or None)."""
    if before is None or after is None:
        return None
    return max(0.0, (after[0] - before[0]) - (after[1] - before[1]))


def measure(kind: str, depth: int, d_model: int, n_heads: int, s: Settings) -> Cell:
    """Time training steps of one kind until ``s.seconds`` and ``s.min_steps`` are both reached.

    Only undisturbed steps count: a step during which other processes used more than 1.5
    clock ticks and more than 5 % of the machine's CPU time is discarded, since with one
    thread per core any foreign load slows a step down many times over. A cell whose steps
    are so slow (or so often disturbed) that the targets are not met stops after
    ``s.max_seconds`` (and ``MIN_SLOW_STEPS`` timed steps); if it then has no undisturbed
    step at all, every step counts (the cell is flagged through ``clean_steps``).

    Parameters
    ----------
    kind : {"medspt_cls", "medspt_pretrain", "tstplus_cls"}
    depth, d_model, n_heads : int
        Architecture of the cell.
    s : Settings

    Returns
    -------
    Cell
        Throughput over the undisturbed timed steps (warm-up excluded) and step statistics.
    """
    torch.manual_seed(s.seed)
    model, params, loss_fn = _build(kind, depth, d_model, n_heads, s)
    model.train()
    opt = torch.optim.AdamW(params, lr=1e-3, weight_decay=0.01)
    # A few fixed synthetic batches, cycled (data loading is not part of the benchmark).
    xs = [torch.randn(s.batch_size, N_CHANNELS, N_STEPS) for _ in range(4)]
    ys = [torch.randint(0, s.n_classes, (s.batch_size,)) for _ in range(4)]

    def step(i: int) -> None:
        x, y = xs[i % len(xs)], ys[i % len(ys)]
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        float(loss.detach())

    start = time.perf_counter()
    for i in range(s.warmup):
        if i and time.perf_counter() - start > s.max_seconds / 4:
            break
        step(i)
    cores, tick = os.cpu_count() or 1, 1.0 / os.sysconf("SC_CLK_TCK")
    times: list[float] = []  # every timed step
    clean: list[float] = []  # undisturbed steps
    foreign_total = 0.0
    start = time.perf_counter()
    while len(clean) < s.min_steps or sum(clean) < s.seconds:
        if len(times) >= MIN_SLOW_STEPS and time.perf_counter() - start >= s.max_seconds:
            break
        c0, t0 = cpu_seconds(), time.perf_counter()
        step(len(times))
        dt_step, foreign = time.perf_counter() - t0, foreign_seconds(c0, cpu_seconds())
        times.append(dt_step)
        foreign_total += foreign or 0.0
        if foreign is None or foreign <= max(1.5 * tick, 0.05 * dt_step * cores):
            clean.append(dt_step)
    used = clean or times
    wall = time.perf_counter() - start
    return Cell(
        depth=depth,
        d_model=d_model,
        n_heads=n_heads,
        kind=kind,
        torch_version=torch.__version__,
        n_params=sum(p.numel() for p in model.parameters()),
        steps=len(times),
        clean_steps=len(clean),
        seconds=round(sum(used), 3),
        windows_per_s=len(used) * s.batch_size / sum(used),
        median_step_ms=1e3 * statistics.median(used),
        min_step_ms=1e3 * min(used),
        max_step_ms=1e3 * max(used),
        other_cpu=None if c0 is None else round(foreign_total / (wall * cores), 3),
    )


def run_cells(grid: list[tuple[int, int, int]], kinds: tuple[str, ...], s: Settings) -> list[Cell]:
    """Measure every kind for every ``(depth, d_model, n_heads)``, kinds of a config together."""
    torch.set_num_threads(s.threads)
    cells = []
    for depth, d_model, n_heads in grid:
        for kind in kinds:
            cell = measure(kind, depth, d_model, n_heads, s)
            print(
                f"  torch {cell.torch_version:<14} depth {depth} d_model {d_model:<4} "
                f"{kind:<16} {cell.windows_per_s:8.1f} windows/s "
                f"({cell.clean_steps}/{cell.steps} undisturbed steps, {cell.seconds:.1f} s)",
                file=sys.stderr,
                flush=True,
            )
            cells.append(cell)
    return cells


# --------------------------------------------------------------------------- interpreters


def versions() -> dict[str, str]:
    """torch / tsai / medspt versions of this interpreter ("-" when not importable)."""
    out = {"python": platform.python_version(), "torch": torch.__version__}
    for name in ("tsai", "medspt"):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if name == "medspt":
                    import_medspt()
                out[name] = importlib.import_module(name).__version__
        except Exception:  # missing or broken install: reported as "-"
            out[name] = "-"
    return out


def tsai_in_process() -> bool:
    """Whether TSTPlus imports in this interpreter."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            importlib.import_module("tsai.models.TSTPlus")
        return True
    except Exception:
        return False
