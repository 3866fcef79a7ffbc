"""Training that stays on the device: the host-sync counter itself, training steps that
make no host-device synchronization (checked on CPU with the counter), bf16 autocast as
an option a CPU run ignores, and the padding decision made once per dataset."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from conftest import FAST

import medspt
import medspt.nn.training as training
from medspt import SPTClassifier
from medspt.core.errors import InputError
from medspt.core.host_syncs import count_host_syncs
from medspt.nn.attention import HierarchicalAttention
from medspt.nn.augment import AUGMENTATIONS, may_pad
from medspt.nn.masking import STRATEGIES, make_mask
from medspt.nn.model import ModelConfig, SPTTransformer
from medspt.nn.training import TrainConfig, finetune, masked_mse, pretrain

# ------------------------------------------------------------------------- the counter

X3 = torch.tensor([[1.0, -2.0, 3.0], [0.5, 0.0, -1.0]])  # (2, 3)
MASK = X3 > 0
IDX = torch.tensor([0, 2])

COUNTED = {
    "item": lambda: X3.sum().item(),
    "bool of any": lambda: bool(MASK.any()),
    "if on all": lambda: 1 if MASK.all() else 0,
    "float": lambda: float(X3.sum()),
    "int": lambda: int(IDX[0]),
    "index": lambda: [10, 11, 12][IDX[1]],
    "tolist": lambda: X3.tolist(),
    "numpy": lambda: X3.numpy(),
    "np.asarray": lambda: np.asarray(X3),
    "cpu": lambda: X3.cpu(),
    "to cpu": lambda: X3.to("cpu"),
    "to device kw": lambda: X3.to(device=torch.device("cpu")),
    "nonzero": lambda: MASK.nonzero(),
    "torch.nonzero": lambda: torch.nonzero(MASK),
    "argwhere": lambda: torch.argwhere(MASK),
    "where one argument": lambda: torch.where(MASK),
    "unique": lambda: torch.unique(IDX),
    "masked_select": lambda: X3.masked_select(MASK),
    "bool-mask getitem": lambda: X3[MASK],
    "bool-mask setitem": lambda: X3.clone().__setitem__(MASK, 0.0),
    "bincount": lambda: torch.bincount(IDX),
    "tensor repeats": lambda: torch.repeat_interleave(IDX, IDX),
    "contains": lambda: 3.0 in X3,
    "equal": lambda: torch.equal(X3, X3),
    "format": lambda: f"{X3.sum():.2f}",
    "tensor to a device": lambda: torch.tensor([1.0, 2.0], device="cpu"),
}
NOT_COUNTED = {
    "add": lambda: X3 + X3,
    "any without bool": lambda: MASK.any(),
    "where three arguments": lambda: torch.where(MASK, X3, 0.0),
    "long index": lambda: X3[:, IDX],
    "slice": lambda: X3[1:],
    "len": lambda: len(X3),
    "shape": lambda: X3.shape[1] + 1,
    "dtype cast": lambda: X3.to(torch.float64),
    "int repeats": lambda: IDX.repeat_interleave(2),
    "masked_fill": lambda: X3.masked_fill(MASK, 0.0),
    "tensor without device": lambda: torch.tensor([1.0]),
    "randperm": lambda: torch.randperm(5),
}


@pytest.mark.parametrize("name", list(COUNTED))
def test_the_counter_counts_each_call_that_waits_for_the_device_once(name):
    with count_host_syncs() as syncs:
        COUNTED[name]()
    assert syncs.count == 1, dict(syncs.calls)


@pytest.mark.parametrize("name", list(NOT_COUNTED))
def test_the_counter_leaves_queued_work_alone(name):
    with count_host_syncs() as syncs:
        NOT_COUNTED[name]()
    assert syncs.count == 0, dict(syncs.calls)


def test_the_counter_names_calls_and_can_pause():
    with count_host_syncs() as syncs:
        for _ in range(3):
            X3.sum().item()
        if MASK.any():
            X3[MASK]
        with syncs.paused():
            X3.tolist()  # not counted
        X3.tolist()
    assert dict(syncs.calls) == {"item": 3, "__bool__": 1, "__getitem__": 1, "tolist": 1}
    assert syncs.count == 6
    X3.sum().item()  # after the block: not counted
    assert syncs.count == 6


def test_the_module_example_runs_as_written():
    import doctest

    import medspt.core.host_syncs

    result = doctest.testmod(medspt.core.host_syncs)
    assert (result.attempted, result.failed) == (5, 0)


# ------------------------------------------------------------------------- training steps


def _windows(n=48, C=3, T=32, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, C, T, generator=g)
    y = (X[:, 0, :4].mean(1) > 0).long()
    return X, y


def _model(**kw):
    torch.manual_seed(0)
    base = dict(n_channels=3, n_steps=32, n_classes=2, depth=1, d_model=16, n_heads=2)
    return SPTTransformer(ModelConfig(**{**base, "patch_len": 4, **kw}))


@pytest.fixture
def step_syncs(monkeypatch):
    """Counts of the syncs inside every training step (the ``train_step`` of
    ``_fit_loop``: batch, mask, forward, loss), one ``dict`` of calls per step."""
    seen: list[dict] = []
    fit_loop = training._fit_loop

    def counting(model, params, train_step, *args, **kwargs):
        def counted(idx, gen):
            with count_host_syncs() as syncs:
                loss = train_step(idx, gen)
            seen.append(dict(syncs.calls))
            return loss

        return fit_loop(model, params, counted, *args, **kwargs)

    monkeypatch.setattr(training, "_fit_loop", counting)
    return seen


@pytest.mark.parametrize("masking", STRATEGIES)
@pytest.mark.parametrize("token_len", [None, 4])
def test_a_pretraining_step_never_waits_for_the_device(step_syncs, masking, token_len):
    X, _ = _windows()
    X[::5, 1, 10:20] = float("nan")  # missing values: the mask must avoid them
    cfg = TrainConfig(epochs=2, batch_size=16, verbose=False)
    hist, _ = pretrain(
        _model(), X, X_val=X[:16], masking=masking, mask_ratio=0.4, token_len=token_len,
        channel_groups=[[0, 2]] if masking == "channel" else None, config=cfg,
    )  # fmt: skip
    assert step_syncs == [{}] * 6  # 2 epochs x 3 steps, none with a sync
    assert all(np.isfinite(r["train_loss"]) and np.isfinite(r["val_loss"]) for r in hist)


@pytest.mark.parametrize(
    "augmentations", [(), ("jitter", "scale"), tuple(AUGMENTATIONS), ("mixup",)]
)
def test_a_fine_tuning_step_never_waits_for_the_device(step_syncs, augmentations):
    X, y = _windows()
    X[::7, :, -6:] = float("nan")  # some windows padded at the end
    cfg = TrainConfig(epochs=2, batch_size=16, verbose=False)
    hist, _ = finetune(
        _model(), X, y, X_val=X[:16], y_val=y[:16], augmentations=augmentations, config=cfg,
        class_weight=torch.tensor([1.0, 2.0]), label_smoothing=0.1,
    )  # fmt: skip
    assert step_syncs == [{}] * 6
    assert all(np.isfinite(r["train_loss"]) for r in hist)


def test_the_loop_reads_the_loss_once_an_epoch_not_once_a_step(monkeypatch):
    """Syncs of a whole fit, torch's optimizer and clipping left out (their reads are of
    host tensors or same-device moves, which look alike on a CPU run): the same for 1 and
    for 4 steps an epoch, so none of them is in the step."""
    counts = []
    for n in (16, 64):  # 1 and 4 steps of 16
        with count_host_syncs() as syncs:
            step, clip = torch.optim.AdamW.step, torch.nn.utils.clip_grad_norm_

            def paused(f):
                def run(*a, **k):
                    with syncs.paused():
                        return f(*a, **k)

                return run

            monkeypatch.setattr(torch.optim.AdamW, "step", paused(step))
            monkeypatch.setattr(torch.nn.utils, "clip_grad_norm_", paused(clip))
            X, y = _windows(n)
            cfg = TrainConfig(epochs=2, batch_size=16, verbose=False)
            finetune(_model(), X, y, config=cfg, monitor="val_loss")
            monkeypatch.undo()
        counts.append(dict(syncs.calls))
    assert counts[0] == counts[1]
    assert counts[0]["__float__"] == 2  # the epoch's loss, once per epoch


def test_masks_are_drawn_without_waiting_for_the_device():
    x = torch.randn(8, 4, 40)
    x[0, :, 30:] = float("nan")
    gen = torch.Generator().manual_seed(0)
    for strategy in STRATEGIES:
        for token_len in (None, 8):
            with count_host_syncs() as syncs:
                m = make_mask(
                    tuple(x.shape), strategy, ratio=0.4, valid=~torch.isnan(x), generator=gen,
                    token_len=token_len, channel_groups=[[1, 3]] if strategy == "channel" else None,
                )  # fmt: skip
            assert syncs.count == 0, (strategy, token_len, dict(syncs.calls))
            assert not bool((m & torch.isnan(x)).any())  # never hides a missing value


# ------------------------------------------------------------------------- the same numbers


def test_the_same_seed_gives_the_same_weights_and_history():
    X, y = _windows()
    X[::5, 1, 10:20] = float("nan")
    runs = []
    for _ in range(2):
        model = _model()
        cfg = TrainConfig(epochs=2, batch_size=16, verbose=False, seed=3)
        pre, _ = pretrain(model, X, X_val=X[:16], masking="span", config=cfg)
        fine, _ = finetune(model, X, y, X_val=X[:16], y_val=y[:16], config=cfg,
                           augmentations=("shift", "mixup"))  # fmt: skip
        runs.append((model.state_dict(), pre, fine))
    (a, pre_a, fine_a), (b, pre_b, fine_b) = runs
    assert all(torch.equal(a[k], b[k]) for k in a)
    drop = ("seconds", "windows_per_s")
    assert [{k: v for k, v in r.items() if k not in drop} for r in pre_a + fine_a] == [
        {k: v for k, v in r.items() if k not in drop} for r in pre_b + fine_b
    ]


def test_masked_mse_is_the_mean_over_the_selection_with_a_gradient_even_when_empty():
    g = torch.Generator().manual_seed(0)
    pred = torch.randn(4, 3, 20, generator=g, requires_grad=True)
    target = torch.randn(4, 3, 20, generator=g)
    target[0, 0, :5] = float("nan")
    hidden = torch.rand(4, 3, 20, generator=g) < 0.3
    sel = hidden & ~torch.isnan(target)
    loss = masked_mse(pred, target, hidden)
    torch.testing.assert_close(loss, F.mse_loss(pred[sel], target[sel]))
    loss.backward()
    assert torch.isfinite(pred.grad).all() and bool((pred.grad[~sel] == 0).all())
    pred.grad = None
    nothing = masked_mse(pred, target, torch.zeros_like(hidden))
    nothing.backward()
    assert nothing.item() == 0.0 and torch.equal(pred.grad, torch.zeros_like(pred))
    # bf16 predictions (autocast) are scored in float32
    assert masked_mse(pred.detach().bfloat16(), target, hidden).dtype == torch.float32


# ------------------------------------------------------------------------- padding


def test_padded_says_whether_attention_gets_the_padding_mask():
    model = _model().eval()
    x, _ = _windows(6)
    with torch.no_grad():
        plain = model(x)
        torch.testing.assert_close(model(x, padded=False), plain)
        torch.testing.assert_close(model(x, padded=True), plain)  # a mask hiding nothing
        x[0, :, -8:] = float("nan")  # two padding tokens
        looked = model(x)
        torch.testing.assert_close(model(x, padded=True), looked)
        assert not torch.allclose(model(x, padded=False)[0], looked[0])
    assert training._has_padding(model, x, chunk=4) and not training._has_padding(model, x[1:])
    x[1:, :, -2:] = float("nan")  # half a token of 4 steps missing at the end: no padding
    assert not training._has_padding(model, x[1:])


def test_which_augmentations_may_leave_windows_padded():
    assert may_pad(("shift",), has_missing=False)
    assert not may_pad(("jitter", "scale", "channel_dropout", "mixup"), has_missing=False)
    assert may_pad(("channel_dropout",), has_missing=True) and may_pad(("mixup",), True)
    assert not may_pad((), has_missing=True)


# ------------------------------------------------------------------------- amp


def test_amp_is_ignored_on_the_cpu():
    X, y = _windows()
    models, histories = [], []
    for amp in (False, True):
        model = _model()
        cfg = TrainConfig(epochs=2, batch_size=16, verbose=False, amp=amp)
        h1, _ = pretrain(model, X, X_val=X[:16], config=cfg)
        h2, _ = finetune(model, X, y, X_val=X[:16], y_val=y[:16], config=cfg)
        models.append(model.state_dict())
        histories.append([r["train_loss"] for r in h1 + h2] + [r["val_loss"] for r in h1 + h2])
    assert all(torch.equal(models[0][k], models[1][k]) for k in models[0])
    assert histories[0] == histories[1]
    assert isinstance(training._autocast(torch.device("cpu"), True), contextlib.nullcontext)


def test_amp_on_cuda_is_bf16_autocast():
    with pytest.warns(UserWarning) if not torch.cuda.is_available() else contextlib.nullcontext():
        ctx = training._autocast(torch.device("cuda"), True)  # only built, never entered
    assert isinstance(ctx, torch.autocast)
    assert ctx.fast_dtype == torch.bfloat16 and ctx.device == "cuda"
    assert isinstance(training._autocast(torch.device("cuda"), False), contextlib.nullcontext)


def test_amp_is_a_checked_and_saved_estimator_parameter(arrays, tmp_path):
    X, y, groups = arrays
    with pytest.raises(InputError, match="amp must be True or False, got 'yes'"):
        SPTClassifier(**FAST, amp="yes").fit(X, y, groups)
    on = SPTClassifier(**FAST, amp=True, device="cpu").fit(X, y, groups)
    off = SPTClassifier(**FAST, device="cpu").fit(X, y, groups)
    np.testing.assert_array_equal(on.predict_proba(X), off.predict_proba(X))
    on.save(tmp_path / "m.safetensors")
    assert medspt.load(tmp_path / "m.safetensors").amp is True
    assert on._train_config(seed=0, epochs=1).amp is True


def test_model_files_without_amp_still_load():
    from pathlib import Path

    clf = medspt.load(Path(__file__).parent / "data" / "fixture_model.safetensors")
    assert clf.amp is False  # written before amp existed: the default


def test_hierarchical_attention_pools_in_float32_and_answers_in_the_input_dtype():
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 2, 64, 8, generator=g) for _ in range(3))
    attn = HierarchicalAttention(levels=3, pool=4, topk=2, tile=4, impl="numba").eval()
    full = attn(q, k, v)
    half = attn(q.bfloat16(), k.bfloat16(), v.bfloat16())  # what autocast hands it
    assert half.dtype == torch.bfloat16
    torch.testing.assert_close(half.float(), full, atol=0.05, rtol=0.05)
    model = _model(attention="hierarchical", attention_options={"impl": "numba"}).eval()
    x, _ = _windows(4)
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        recon = model.reconstruct(x)
        loss = masked_mse(recon, x, torch.ones_like(x, dtype=torch.bool))
    assert recon.dtype == torch.bfloat16 and loss.dtype == torch.float32
