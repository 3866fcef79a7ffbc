"""Attention-proximity diagnostics, ALiBi positions and `medspt diagnose`."""

import numpy as np
import pandas as pd
import pytest
import torch
from conftest import FAST

from medspt import SPTClassifier
from medspt.cli.commands import main
from medspt.core.errors import InputError
from medspt.estimator.persistence import load
from medspt.evaluation.diagnostics import (
    attention_maps,
    attention_profile,
    positional_score,
    profile_from_maps,
    score_statistics,
    uniform_distance,
    write_diagnostics,
)
from medspt.nn.model import ModelConfig, SPTTransformer, alibi_bias, alibi_slopes


def _dist(n):
    i = np.arange(n)
    return np.abs(i[:, None] - i[None, :])


def _rows(a):
    return a / a.sum(-1, keepdims=True)


# ----------------------------------------------------------------- constructed maps


@pytest.mark.parametrize("n", [5, 16, 40])
def test_uniform_attention_has_uniform_distance_and_ratio_near_one(n):
    prof = profile_from_maps(np.full((n, n), 1.0 / n), w=1)
    assert prof.mean_distance[0, 0] == pytest.approx((n * n - 1) / (3 * n), rel=1e-12)
    assert prof.uniform_distance == pytest.approx(uniform_distance(n))
    np.testing.assert_allclose(prof.profile[0, 0], 1.0 / n, rtol=1e-12)
    # edge queries have fewer than 2w+1 neighbours: exactly (3n-2)/n / 3 for w = 1
    assert prof.locality_ratio[0, 0] == pytest.approx((3 * n - 2) / n / 3, rel=1e-12)
    assert 0.85 < prof.locality_ratio[0, 0] <= 1.0


def test_local_attention_has_high_ratio_and_decreasing_profile():
    n = 30
    local = _rows(np.exp(-_dist(n) / 1.5))
    prof = profile_from_maps(local[None, None], w=2)
    assert prof.locality_ratio[0, 0] > 3.0
    assert np.all(np.diff(prof.profile[0, 0]) < 0)  # strictly decreasing with distance
    assert prof.mean_distance[0, 0] < 0.2 * uniform_distance(n)
    # a "far" map (attending away from the diagonal) is the opposite
    far = _rows(np.exp(_dist(n) / 5.0))
    pfar = profile_from_maps(far[None, None], w=2)
    assert pfar.locality_ratio[0, 0] < 1.0
    assert pfar.mean_distance[0, 0] > uniform_distance(n)


def test_profile_keeps_layers_and_heads_apart():
    n = 12
    maps = np.stack([np.stack([np.full((n, n), 1 / n), np.eye(n)])])  # (1, 2, n, n)
    prof = profile_from_maps(maps, w=0)
    assert prof.mean_distance[0, 1] == 0.0
    assert prof.locality_ratio[0, 1] == pytest.approx(n)  # all mass at Δ = 0: n times 1/n
    s = prof.summary()
    assert list(s.columns[:2]) == ["layer", "head"] and len(s) == 2
    assert s["distance_ratio"].iloc[0] == pytest.approx(1.0)


def test_proximity_biased_positions_give_spearman_near_one():
    """p_i = [cos ωi, sin ωi, −cos ωi, −sin ωi, 0…] and W_Q = W_K = I: LayerNorm only
    rescales, so S(i, j) ∝ cos(ω(i − j)), decreasing in |i − j| while ω(N−1) < π."""
    cfg = ModelConfig(n_channels=2, n_steps=64, n_classes=2, depth=2, d_model=8, n_heads=1)
    net = SPTTransformer(cfg)
    n = cfg.n_patches
    w = 0.9 * np.pi / (n - 1)
    ang = w * np.arange(n)
    pos = np.zeros((n, 8))
    pos[:, 0], pos[:, 1], pos[:, 2], pos[:, 3] = (
        np.cos(ang),
        np.sin(ang),
        -np.cos(ang),
        -np.sin(ang),
    )
    with torch.no_grad():
        net.pos.copy_(torch.tensor(pos, dtype=torch.float32)[None])
        for b in net.blocks:
            W = torch.zeros(24, 8)
            W[:8], W[8:16] = torch.eye(8), torch.eye(8)
            b.attn.qkv.weight.copy_(W)
    score = positional_score(net)
    assert score.scores.shape == (2, 1, n, n)
    assert np.all(score.spearman > 0.99)
    assert np.all(score.slope < 0)
    # and random positions carry no such bias (seeded: an unlucky draw can reach 0.3)
    torch.manual_seed(0)
    rand = positional_score(SPTTransformer(cfg))
    assert np.all(np.abs(rand.spearman) < 0.3)


def test_relative_positions_score_is_their_learned_bias():
    cfg = ModelConfig(n_channels=1, n_steps=48, n_classes=2, d_model=8, n_heads=2, depth=2,
                      patch_len=4, positional="relative", embedding="conv")  # fmt: skip
    net = SPTTransformer(cfg)
    with torch.no_grad():
        for b, block in enumerate(net.blocks):  # head 0 prefers near tokens, head 1 far ones
            dist = torch.arange(-11, 12).abs().float()
            block.attn.rel.table.copy_(torch.stack([-dist * (b + 1), dist]))
    score = positional_score(net)
    assert score.scores.shape == (2, 2, 12, 12) and score.positional == "relative"
    assert score.scores[1, 0, 3, 5] == pytest.approx(-4.0)  # layer 1, distance 2, slope -2
    np.testing.assert_allclose(score.slope, [[-1.0, 1.0], [-2.0, 1.0]], atol=1e-9)
    assert score.spearman[0, 0] == pytest.approx(1.0) and score.spearman[0, 1] == pytest.approx(
        -1.0
    )


def test_score_statistics_on_known_matrices():
    n = 10
    rho, slope = score_statistics((-2.0 * _dist(n))[None, None])
    assert rho[0, 0] == pytest.approx(1.0) and slope[0, 0] == pytest.approx(-2.0)
    rho, slope = score_statistics((0.5 * _dist(n))[None, None])
    assert rho[0, 0] == pytest.approx(-1.0) and slope[0, 0] == pytest.approx(0.5)


# ----------------------------------------------------------------- ALiBi


def test_alibi_bias_values_and_class_token():
    slopes = alibi_slopes(4)
    np.testing.assert_allclose(slopes.numpy(), [2**-2, 2**-4, 2**-6, 2**-8])
    b = alibi_bias(4, 6, has_cls=True)
    assert b.shape == (4, 6, 6)
    assert torch.all(b[:, 0, :] == 0) and torch.all(b[:, :, 0] == 0)
    assert b[1, 2, 5].item() == pytest.approx(-(2**-4) * 3)  # tokens 1 and 4: distance 3


@pytest.mark.parametrize("pooling", ["mean", "cls"])
def test_alibi_attention_equals_explicit_softmax_with_bias(pooling):
    cfg = ModelConfig(
        n_channels=2,
        n_steps=40,
        n_classes=2,
        d_model=16,
        n_heads=2,
        positional="alibi",
        pooling=pooling,
        dropout=0.0,
    )
    net = SPTTransformer(cfg).eval()
    assert net.pos is None
    att = net.blocks[0].attn.attend
    N = cfg.n_patches + (pooling == "cls")
    g = torch.Generator().manual_seed(0)
    q, k, v = torch.randn(3, 2, 2, N, 8, generator=g).unbind(0)
    pad = torch.zeros(2, N, dtype=torch.bool)
    pad[1, -2:] = True
    s = q @ k.transpose(-2, -1) / np.sqrt(8) + alibi_bias(2, N, pooling == "cls")
    s = s.masked_fill(pad[:, None, None, :], float("-inf"))
    ref = torch.softmax(s, -1) @ v
    torch.testing.assert_close(att(q, k, v, pad), ref, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(att.attention_weights(q, k, pad) @ v, ref, atol=1e-5, rtol=1e-5)
    score = positional_score(net)
    assert np.allclose(score.spearman, 1.0)
    np.testing.assert_allclose(score.slope[0], -alibi_slopes(2).numpy(), rtol=1e-9)


def test_alibi_with_hierarchical_attention_is_refused_by_name():
    with pytest.raises(InputError, match="alibi.*attention='full'"):
        ModelConfig(
            n_channels=1, n_steps=64, n_classes=2, positional="alibi", attention="hierarchical"
        ).validate()
    X = np.random.default_rng(0).normal(size=(8, 1, 64)).astype("float32")
    with pytest.raises(InputError, match="alibi"):
        SPTClassifier(**FAST, positional="alibi", attention="hierarchical").fit(X, [0, 1] * 4)


def test_alibi_classifier_fits_and_round_trips(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2, 64)).astype("float32")
    y = np.repeat([0, 1], 20)
    X[y == 1, 0] += np.sin(np.arange(64) / 3)
    clf = SPTClassifier(**FAST, positional="alibi", random_state=0).fit(X, y)
    clf.save(tmp_path / "m.safetensors")
    back = load(tmp_path / "m.safetensors")
    assert back.model_.config.positional == "alibi"
    np.testing.assert_allclose(back.predict_proba(X), clf.predict_proba(X), atol=1e-6)


# ----------------------------------------------------------------- maps of real models


@pytest.mark.parametrize(
    "attention,options", [("full", None), ("hierarchical", {"topk": 2, "tile": 8})]
)
def test_attention_weights_reproduce_the_module_output(attention, options):
    cfg = ModelConfig(
        n_channels=1,
        n_steps=64,
        n_classes=2,
        patch_len=1,
        attention=attention,
        attention_options=options,
    )
    att = SPTTransformer(cfg).eval().blocks[0].attn.attend
    g = torch.Generator().manual_seed(1)
    q, k, v = torch.randn(3, 2, 4, 64, 8, generator=g).unbind(0)
    pad = torch.zeros(2, 64, dtype=torch.bool)
    pad[0, 50:] = True
    A = att.attention_weights(q, k, pad)
    assert A.shape == (2, 4, 64, 64)
    out = att(q, k, v, pad)
    torch.testing.assert_close(A @ v, out, atol=1e-5, rtol=1e-5)
    np.testing.assert_allclose(A[1].sum(-1).numpy(), 1.0, atol=1e-5)
    assert torch.all(A[0, :, :, 50:] == 0)  # padding is never attended to


def test_hierarchical_with_everything_selected_profiles_like_full():
    base = dict(n_channels=2, n_steps=128, n_classes=2, patch_len=4, depth=2, dropout=0.0)
    full = SPTTransformer(ModelConfig(**base)).eval()
    hier = SPTTransformer(
        ModelConfig(**base, attention="hierarchical", attention_options={"topk": 64, "tile": None})
    ).eval()
    hier.load_state_dict(full.state_dict())
    X = np.random.default_rng(2).normal(size=(20, 2, 128)).astype("float32")
    np.testing.assert_allclose(attention_maps(hier, X), attention_maps(full, X), atol=1e-5)


def test_attention_profile_of_a_fitted_classifier_on_its_windows():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2, 64)).astype("float32")
    clf = SPTClassifier(**{**FAST, "pooling": "cls"}, random_state=0).fit(X, [0, 1] * 15)
    prof = attention_profile(clf, X, w=1, max_windows=10)
    n = clf.model_.config.n_patches  # class token left out
    assert prof.profile.shape == (1, 2, n) and prof.n_windows == 10
    maps = attention_maps(clf, X, max_windows=None)
    np.testing.assert_allclose(maps.sum(-1), 1.0, atol=1e-6)
    assert 0 < prof.mean_distance.max() < n


def test_bad_inputs_are_named():
    cfg = ModelConfig(n_channels=2, n_steps=32, n_classes=2)
    net = SPTTransformer(cfg)
    with pytest.raises(InputError, match=r"X must have shape \(N, 2, 32\)"):
        attention_profile(net, np.zeros((3, 3, 32), dtype="float32"))
    with pytest.raises(InputError, match="no windows"):
        attention_profile(net, np.zeros((0, 2, 32), dtype="float32"))
    with pytest.raises(InputError, match="not fitted"):
        attention_profile(SPTClassifier(), np.zeros((3, 2, 32)))
    with pytest.raises(InputError, match="SPTClassifier or an SPTTransformer"):
        positional_score("model.safetensors")
    with pytest.raises(InputError, match="positional='none'"):
        positional_score(SPTTransformer(ModelConfig(2, 32, 2, positional="none")))
    with pytest.raises(InputError, match=r"maps must have shape \(L, H, N, N\)"):
        profile_from_maps(np.zeros((2, 3, 4)))
    with pytest.raises(InputError, match="w must be a non-negative integer"):
        profile_from_maps(np.eye(3), w=-1)


# ----------------------------------------------------------------- report and CLI


def _demo_models(tmp_path):
    from medspt.data.synthetic import make_demo_frame

    df = make_demo_frame(n_subjects=6)
    path = tmp_path / "demo.csv"
    df.to_csv(path, index=False)
    paths = []
    for name, pretrain in (("scratch", False), ("spt", True)):
        p = tmp_path / f"{name}.safetensors"
        args = ["fit", "--data", str(path), "--window", "4s", "--depth", "2", "--d-model", "16"]
        args += ["--epochs", "2", "--pretrain-epochs", "1", "--min-steps", "0", "--out", str(p)]
        assert main(args + (["--no-pretrain"] if not pretrain else [])) == 0
        paths.append(p)
    return df, path, paths


def test_diagnose_cli_writes_tables_and_figures_that_match_the_api(tmp_path, capsys):
    df, data, (scratch, spt) = _demo_models(tmp_path)
    out = tmp_path / "diag"
    code = main(["diagnose", str(scratch), str(spt), "--data", str(data), "--out", str(out)])
    assert code == 0
    assert "distance_profiles.png" in capsys.readouterr().out
    for f in (
        "summary.md",
        "attention_profile.csv",
        "distance_profile.csv",
        "positional_score.csv",
        "distance_profiles.png",
        "positional_scratch.png",
        "positional_spt.png",
    ):
        assert (out / f).stat().st_size > 0, f
    heads = pd.read_csv(out / "attention_profile.csv")
    assert set(heads["model"]) == {"scratch", "spt"} and len(heads) == 2 * 2 * 4
    clf = load(spt)
    direct = attention_profile(clf, clf.frame_windows(pd.read_csv(data)), max_windows=512)
    mine = heads[heads["model"] == "spt"].sort_values(["layer", "head"])
    np.testing.assert_allclose(mine["mean_distance"], direct.mean_distance.ravel(), rtol=1e-6)
    pos = pd.read_csv(out / "positional_score.csv")
    score = positional_score(clf)
    np.testing.assert_allclose(
        pos[pos["model"] == "spt"]["spearman"], score.spearman.ravel(), rtol=1e-6
    )
    md = (out / "summary.md").read_text()
    assert "| spt | 2 | relative |" in md  # the default positions
    # a second call with a mismatching name list is a named error, not a traceback
    code = main(["diagnose", str(spt), "--data", str(data), "--names", "a", "b"])
    assert code == 2
    assert "--names gives 2 names for 1 models" in capsys.readouterr().err


def test_write_diagnostics_returns_one_row_per_model(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(24, 2, 64)).astype("float32")
    y = [0, 1] * 12
    models = {
        "learned": SPTClassifier(**FAST, positional="learned", random_state=0).fit(X, y),
        "alibi": SPTClassifier(**FAST, positional="alibi", random_state=0).fit(X, y),
    }
    table = write_diagnostics(models, X, tmp_path, w=1)
    assert list(table["model"]) == ["learned", "alibi"]
    assert table.loc[1, "positional_spearman"] == pytest.approx(1.0)
    for name, clf in models.items():
        row = table[table["model"] == name].iloc[0]
        assert row["locality_ratio"] == pytest.approx(
            attention_profile(clf, X).locality_ratio.mean()
        )
    # ALiBi makes attention local from the start; learned positions at init do not
    assert table.loc[1, "locality_ratio"] > table.loc[0, "locality_ratio"]


def test_padding_is_left_out_of_the_maps():
    """Cases of 40 steps padded to 96 give the maps of the 40-step model."""
    from test_unequal_lengths import _pair

    for attention, options in (("full", None), ("hierarchical", {"topk": 2, "tile": 4})):
        short, long = _pair(attention, options, "mean", "learned")
        x = torch.randn(6, 3, 40, generator=torch.Generator().manual_seed(3))
        x[2, :, 21:] = float("nan")  # one case is shorter still
        padded = torch.full((6, 3, 96), float("nan"))
        padded[:, :, :40] = x
        a = attention_maps(short, x.numpy())
        b = attention_maps(long, padded.numpy())
        assert np.isnan(b[:, :, 10:, :]).all()  # tokens that were never real
        np.testing.assert_allclose(b[:, :, :10, :10], a, atol=1e-5)
        np.testing.assert_allclose(a.sum(-1), 1.0, atol=1e-5)
        pa, pb = profile_from_maps(a), profile_from_maps(b)
        assert pb.n_tokens == 10
        np.testing.assert_allclose(pb.mean_distance, pa.mean_distance, atol=1e-5)
