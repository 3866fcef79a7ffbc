import numpy as np
import torch

from medspt.nn.model import ModelConfig, SPTTransformer
from medspt.nn.training import TrainConfig, _warmup_cosine, finetune, masked_mse, pretrain


def test_masked_mse_counts_only_hidden_observed_entries():
    target = torch.tensor([[[1.0, 2.0, float("nan"), 4.0]]])
    pred = torch.tensor([[[0.0, 0.0, 100.0, 0.0]]])
    hidden = torch.tensor([[[True, False, True, True]]])
    # entries 0 and 3 count: ((1)^2 + (4)^2) / 2
    assert masked_mse(pred, target, hidden).item() == 8.5
    nothing = masked_mse(pred, target, torch.zeros_like(hidden))
    assert nothing.item() == 0.0


def test_warmup_then_cosine():
    f = _warmup_cosine(100, 0.1)
    assert f(0) == 0.1 and f(9) == 1.0
    assert f(10) == 1.0 and abs(f(55) - 0.5) < 0.02 and f(99) < 0.01


def _smooth_windows(n=256, seed=0):
    g = torch.Generator().manual_seed(seed)
    t = torch.linspace(0, 1, 64)
    freq = 2 + 3 * torch.rand(n, 1, 1, generator=g)
    phase = 6.28 * torch.rand(n, 2, 1, generator=g)
    return torch.sin(6.28 * freq * t + phase)  # (n, 2, 64)


def test_pretraining_learns_to_reconstruct():
    X = _smooth_windows()
    torch.manual_seed(0)
    m = SPTTransformer(ModelConfig(2, 64, 2, depth=2, d_model=32, n_heads=4, dropout=0.0))
    cfg = TrainConfig(epochs=15, lr=3e-3, patience=None, verbose=False)
    hist, _ = pretrain(
        m, X, X_val=_smooth_windows(64, seed=1), masking="random", mask_ratio=0.3, config=cfg
    )
    first, last = hist[0]["val_loss"], hist[-1]["val_loss"]
    assert last < 0.5 * first, (first, last)
    assert all(np.isfinite(h["train_loss"]) for h in hist)


def test_pretrain_leaves_classifier_head_untouched():
    X = _smooth_windows(64)
    m = SPTTransformer(ModelConfig(2, 64, 2, depth=1, d_model=16, n_heads=2))
    head = m.head.weight.detach().clone()
    emb = m.embed.weight.detach().clone()
    pretrain(m, X, config=TrainConfig(epochs=1, verbose=False))
    assert torch.equal(m.head.weight, head)
    assert not torch.equal(m.embed.weight, emb)


def test_linear_probe_trains_only_the_head():
    X = _smooth_windows(64)
    y = (X[:, 0, 0] > 0).long()
    m = SPTTransformer(ModelConfig(2, 64, 2, depth=1, d_model=16, n_heads=2))
    emb = m.embed.weight.detach().clone()
    head = m.head.weight.detach().clone()
    finetune(m, X, y, linear_probe=True, config=TrainConfig(epochs=2, verbose=False))
    assert torch.equal(m.embed.weight, emb)
    assert not torch.equal(m.head.weight, head)
    assert all(p.requires_grad for p in m.parameters())  # restored afterwards


def test_early_stopping_restores_the_best_epoch():
    X = _smooth_windows(128)
    y = torch.randint(0, 2, (128,), generator=torch.Generator().manual_seed(0))  # noise
    m = SPTTransformer(ModelConfig(2, 64, 2, depth=1, d_model=32, n_heads=2))
    hist, best = finetune(
        m,
        X[:96],
        y[:96],
        X_val=X[96:],
        y_val=y[96:],
        config=TrainConfig(epochs=40, lr=5e-3, patience=3, verbose=False),
        monitor="val_loss",
    )
    losses = [h["val_loss"] for h in hist]
    assert best == int(np.argmin(losses)) + 1
    # stopped after `patience` epochs without improvement, but not in the first third
    assert len(hist) == max(best + 3, 40 // 3 + 1) or len(hist) == 40
    m.eval()
    with torch.no_grad():
        val = torch.nn.functional.cross_entropy(m(X[96:]), y[96:]).item()
    assert abs(val - min(losses)) < 1e-5


def test_default_monitor_is_balanced_accuracy_with_loss_tiebreak():
    X = _smooth_windows(128)
    y = (X[:, 0, :8].mean(1) > 0).long()
    m = SPTTransformer(ModelConfig(2, 64, 2, depth=1, d_model=32, n_heads=2))
    hist, best = finetune(
        m,
        X[:96],
        y[:96],
        X_val=X[96:],
        y_val=y[96:],
        config=TrainConfig(epochs=12, lr=5e-3, patience=None, verbose=False),
    )
    keys = [(-round(h["val_balanced_accuracy"], 6), h["val_loss"]) for h in hist]
    assert best == keys.index(min(keys)) + 1


def test_without_validation_the_kept_epoch_is_the_last_one():
    from medspt.nn.training import _fit_loop

    model = torch.nn.Linear(2, 1)
    losses = iter([3.0, 1.0, 2.0, 5.0])  # lowest training loss in epoch 2

    def step(idx, gen):
        return model(torch.ones(len(idx), 2)).sum() * 0 + next(losses)

    cfg = TrainConfig(epochs=4, batch_size=8, verbose=False)
    history, kept = _fit_loop(model, list(model.parameters()), step, None, 8, cfg, "t")
    assert [r["train_loss"] for r in history] == [3.0, 1.0, 2.0, 5.0]
    assert kept == 4  # the final weights are the ones kept, so the last epoch is reported
    assert [r["steps"] for r in history] == [1, 1, 1, 1]


def test_parameter_groups_for_decay_and_the_encoder_learning_rate():
    from medspt.nn.training import _param_groups

    cfg = ModelConfig(n_channels=2, n_steps=16, n_classes=2, d_model=8, n_heads=2, patch_len=4)
    model = SPTTransformer(cfg)
    params = list(model.parameters())
    plain = _param_groups(model, params, TrainConfig(lr=1e-3, weight_decay=0.05))
    assert {g["weight_decay"] for g in plain} == {0.05} and {g["lr"] for g in plain} == {1e-3}
    assert sum(len(g["params"]) for g in plain) == len(params)
    groups = _param_groups(
        model,
        params,
        TrainConfig(lr=1e-3, weight_decay=0.05, no_decay_norms=True, encoder_lr_scale=0.25),
    )
    by_id = {id(p): g for g in groups for p in g["params"]}
    named = dict(model.named_parameters())
    assert by_id[id(named["pos"])]["weight_decay"] == 0.0
    assert by_id[id(named["ln_f.weight"])]["weight_decay"] == 0.0
    assert by_id[id(named["embed.bias"])]["weight_decay"] == 0.0
    assert by_id[id(named["embed.weight"])]["weight_decay"] == 0.05
    assert by_id[id(named["embed.weight"])]["lr"] == 0.25e-3
    assert by_id[id(named["head.weight"])]["lr"] == 1e-3
    assert by_id[id(named["head.weight"])]["weight_decay"] == 0.05
    # only the parameters asked for (a linear probe trains the head alone)
    head_only = _param_groups(model, list(model.head.parameters()), TrainConfig())
    assert sum(len(g["params"]) for g in head_only) == 2


def test_no_decay_on_norms_changes_only_what_it_says():
    torch.manual_seed(0)
    X = torch.randn(32, 2, 16)
    y = (X[:, 0].mean(1) > 0).long()
    cfg = ModelConfig(
        n_channels=2, n_steps=16, n_classes=2, d_model=8, n_heads=2, patch_len=4, dropout=0.0
    )
    torch.manual_seed(1)
    a = SPTTransformer(cfg)
    b = SPTTransformer(cfg)
    b.load_state_dict(a.state_dict())
    base = dict(epochs=2, batch_size=8, verbose=False, weight_decay=0.5)
    finetune(a, X, y, config=TrainConfig(**base))
    finetune(b, X, y, config=TrainConfig(**base, no_decay_norms=True))
    pa, pb = dict(a.named_parameters()), dict(b.named_parameters())
    assert not torch.allclose(pa["ln_f.weight"], pb["ln_f.weight"])  # decayed only in a
