"""Counting the tensor operations that make the host wait for an accelerator.

On a GPU, torch queues work and returns at once; the Python thread runs ahead and queues
the next operations while the device computes. A few operations cannot return before
the device has caught up, because the host needs a value or a size computed there:

- reading a value: ``t.item()``, ``float(t)``, ``int(t)``, ``bool(t)`` (``if t.any():``),
  ``t.tolist()``, ``t.numpy()``, ``t.cpu()``, ``t.to("cpu")``, ``x in t``,
  ``torch.equal``, ``torch.allclose``, printing or formatting a tensor;
- copying host data to a device: ``torch.tensor(values, device=...)``;
- an output whose size depends on the data: ``nonzero``, ``argwhere``, ``torch.where``
  with one argument, ``masked_select``, ``unique``, ``bincount``, ``repeat_interleave``
  with a tensor of repeats, and indexing with a boolean mask (``x[mask]``,
  ``x[mask] = v``).

A training step with one of these stalls every step: the device idles while Python
prepares the next step. :func:`count_host_syncs` counts those calls with a
:class:`torch.overrides.TorchFunctionMode`, on any device, the CPU included. On a CPU
run nothing waits, but the calls that *would* wait on a GPU are the same, so a CPU-only
test can check that a training step makes none.

The counter sees the calls made from Python. On CUDA,
``torch.cuda.set_sync_debug_mode("warn")`` is the authoritative check: it also sees
synchronizations inside torch that no Python-level hook can. Copies to a device are where
a CPU run cannot tell: there ``t.to(device)`` is no copy at all. The counter therefore
counts every ``to`` whose target is the CPU, which on a CPU run includes a move to the
training device (on a GPU a host-to-device copy, which synchronizes unless it comes from
pinned memory), and every ``torch.tensor(values, device=...)``.

Examples
--------
>>> import torch
>>> x = torch.ones(3)
>>> with count_host_syncs() as syncs:
...     y = x + 1          # queued on a GPU: not counted
...     if y.sum() > 0:    # bool(): the host waits for the sum
...         pass
>>> syncs.count
1
>>> dict(syncs.calls)
{'__bool__': 1}
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

__all__ = ["HostSyncCounter", "count_host_syncs"]

# Calls that read a value or copy to the host, whatever their arguments.
_READS = frozenset(
    {
        "item",
        "tolist",
        "numpy",
        "cpu",
        "__bool__",
        "__float__",
        "__int__",
        "__index__",
        "__complex__",
        "__array__",
        "__contains__",
        "__format__",
        "__repr__",
        "equal",
        "allclose",
        "is_nonzero",
    }
)
# Calls whose output size depends on the data.
_DATA_SIZED = frozenset(
    {
        "nonzero",
        "argwhere",
        "masked_select",
        "unique",
        "unique_consecutive",
        "bincount",
    }
)


def _is_mask(index: Any) -> bool:
    """Whether an index (or any part of an index tuple) is a boolean tensor."""
    parts = index if isinstance(index, (tuple, list)) else (index,)
    return any(isinstance(p, torch.Tensor) and p.dtype in (torch.bool, torch.uint8) for p in parts)


def _to_host(args: tuple, kwargs: dict) -> bool:
    """Whether ``Tensor.to(*args, **kwargs)`` targets the CPU."""
    for a in (*args[1:], kwargs.get("device"), kwargs.get("other")):
        if isinstance(a, torch.Tensor):
            return a.device.type == "cpu"
        if isinstance(a, (str, torch.device)):
            return torch.device(a).type == "cpu"
    return False  # a dtype only: same device


def _syncs(name: str, args: tuple, kwargs: dict) -> bool:
    """Whether the call ``name(*args, **kwargs)`` makes the host wait for the device."""
    if name in _READS or name in _DATA_SIZED:
        return True
    if name == "to":
        return _to_host(args, kwargs)
    if name in ("__getitem__", "__setitem__"):
        return len(args) > 1 and _is_mask(args[1])
    if name in ("index_put", "index_put_"):
        return len(args) > 1 and _is_mask(args[1])
    if name in ("tensor", "as_tensor"):  # host data copied to a device
        data = args[0] if args else kwargs.get("data")
        return kwargs.get("device") is not None and not isinstance(data, torch.Tensor)
    if name == "where":  # torch.where(condition) is nonzero
        return len(args) + len(kwargs) == 1
    if name == "repeat_interleave":  # tensor repeats: the output size is their sum
        repeats = args[1] if len(args) > 1 else kwargs.get("repeats")
        sized = kwargs.get("output_size") is not None or len(args) > 3
        return isinstance(repeats, torch.Tensor) and repeats.numel() > 1 and not sized
    return False


class HostSyncCounter(TorchFunctionMode):
    """A torch function mode that counts calls which synchronize host and device.

    Use it through :func:`count_host_syncs`. ``count`` is the number of such calls made
    while the mode was active, ``calls`` counts them by name (``"item"``, ``"__bool__"``,
    ``"__getitem__"`` for boolean-mask indexing, ...). Calls made inside a counted call
    (``torch.unique`` calling ``torch._unique2``) are not counted again.
    """

    def __init__(self) -> None:
        super().__init__()
        self.calls: Counter[str] = Counter()
        self._paused = 0

    @property
    def count(self) -> int:
        """Number of synchronizing calls seen."""
        return sum(self.calls.values())

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Count nothing inside: for code whose calls are known not to wait on a GPU but
        look alike on a CPU run, e.g. torch's AdamW reading its step counters, which live
        on the host (``.item()`` of a CPU tensor), or gradient clipping moving the norms
        to the device they are on."""
        self._paused += 1
        try:
            yield
        finally:
            self._paused -= 1

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        if not self._paused and _syncs(name, args, kwargs):
            self.calls[name] += 1
        return func(*args, **kwargs)


def count_host_syncs() -> HostSyncCounter:
    """A context manager counting the calls that make the host wait for the device.

    Returns
    -------
    HostSyncCounter
        Use as ``with count_host_syncs() as syncs: ...``; then ``syncs.count`` and
        ``syncs.calls`` (by name). See the module docstring for what is counted; on CUDA,
        ``torch.cuda.set_sync_debug_mode`` is the authoritative check.
    """
    return HostSyncCounter()
