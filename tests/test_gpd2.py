"""GPD-2: whole gaitpdb walks, one case per subject, on GPD-1's folds (real data when
present; small format-faithful copies otherwise), and padding that neither the model nor
the pretraining loss ever sees."""

import re

import numpy as np
import pandas as pd
import pytest
import torch
from conftest import real_dataset
from model_pairs import same_weights
from test_protocols import check_folds, small_gait  # noqa: F401  (small_gait: fixture)

from medspt.core.errors import InputError
from medspt.datasets.protocols import protocol
from medspt.nn.masking import make_mask
from medspt.nn.model import ModelConfig, SPTTransformer
from medspt.nn.training import masked_mse


def raw_forces(path) -> np.ndarray:
    """The 18 force columns of one gaitpdb file, read with numpy alone (float64)."""
    return np.loadtxt(path, delimiter="\t", dtype=np.float64)[:, 1:]


def block_means(values: np.ndarray, block: int) -> np.ndarray:
    n = len(values) // block
    return values[: n * block].reshape(n, block, values.shape[1]).mean(axis=1)


def file_of(root, subject):
    return next(iter(root.glob(f"{subject}_01.txt")))


def same_subjects_fold_by_fold(p1, p2):
    """Fold k of ``p2`` trains and tests exactly the subjects fold k of ``p1`` does."""
    assert len(p1.folds) == len(p2.folds) == 5
    g1, g2 = p1.windows.groups, p2.windows.groups
    for (tr1, te1), (tr2, te2) in zip(p1.folds, p2.folds):
        assert set(g1[te1]) == set(g2[te2])
        assert set(g1[tr1]) == set(g2[tr2])


def check_cases(p, root, block: int, subjects=None):
    """Each case: kept length = the file's rows // block, NaN after it, block means
    before it (all subjects, or those named)."""
    ws = p.windows
    assert ws.X.dtype == np.float32 and ws.X.shape[1] == 18
    assert ws.fs == 100.0 / block
    meta = ws.meta.set_index("subject")
    assert ws.X.shape[2] == meta["length"].max()
    for i, subj in enumerate(ws.groups):
        if subjects is not None and subj not in subjects:
            continue
        forces = raw_forces(file_of(root, subj))
        n = len(forces) // block
        assert meta.at[subj, "length"] == n and meta.at[subj, "stop"] == n
        assert meta.at[subj, "duration_s"] == pytest.approx(n * block / 100.0)
        assert np.isnan(ws.X[i, :, n:]).all()
        assert not np.isnan(ws.X[i, :, :n]).any()
        np.testing.assert_allclose(ws.X[i, :, :n], block_means(forces, block).T, rtol=1e-6)


# --------------------------------------------------------------------------- synthetic


def test_gpd2_rules_on_small_files(small_gait):  # noqa: F811
    root, lengths = small_gait
    p1, p2 = protocol("GPD-1", root), protocol("GPD-2", root)
    assert p2.name == "GPD-2" and len(p2.windows) == len(lengths)
    assert list(p2.windows.groups) == sorted(lengths)  # file-name order, one case each
    assert (p2.windows.y == np.array([1 if "Pt" in s else 0 for s in p2.windows.groups])).all()
    check_folds(p2)
    same_subjects_fold_by_fold(p1, p2)
    check_cases(p2, root / "gaitpdb", 5)
    p100 = protocol("gpd2@100", root)
    assert p100.name == "GPD-2@100" and p100.windows.X.shape[2] == max(lengths.values())
    check_cases(p100, root / "gaitpdb", 1)
    same_subjects_fold_by_fold(p1, p100)
    assert protocol("GPD-2@50Hz", root).windows.fs == 50.0


def test_gpd2_rate_names_are_checked(small_gait):  # noqa: F811
    root, _ = small_gait
    with pytest.raises(InputError, match="whole blocks"):
        protocol("GPD-2@30", root)
    with pytest.raises(InputError, match="only GPD-2 takes a rate"):
        protocol("GPD-1@100", root)
    with pytest.raises(InputError, match="only GPD-2 takes a rate"):
        protocol("GPD-2@fast", root)
    with pytest.raises(InputError, match=re.escape("'GPD-2@100'")):
        protocol("GPD-3")


# --------------------------------------------------------------------------- real data


@pytest.fixture(scope="module")
def real():
    root = real_dataset("gaitpdb")
    return root, protocol("GPD-1", root), protocol("GPD-2", root)


def test_real_gpd2_holds_gpd1s_subjects_fold_by_fold(real):
    _, p1, p2 = real
    ws = p2.windows
    assert ws.X.shape == (165, 18, 5273)
    assert np.bincount(ws.y).tolist() == [72, 93]
    assert len(np.unique(ws.groups)) == 165  # one case per subject
    check_folds(p2)
    same_subjects_fold_by_fold(p1, p2)
    assert sorted(len(te) for _, te in p2.folds) == [32, 33, 33, 33, 34]
    assert p2.metrics == ("accuracy", "balanced_accuracy", "roc_auc")


def test_real_gpd2_cases_are_whole_walks_at_20_hz(real):
    root, _, p2 = real
    check_cases(p2, root, 5)
    lengths = p2.windows.meta["length"]
    assert (lengths.min(), lengths.max()) == (806, 5273)


def test_real_gpd2_labels_are_the_subjects_groups(real):
    root, _, p2 = real
    demo = pd.read_csv(root / "demographics.txt", sep="\t", usecols=["ID", "Group"])
    group = dict(zip(demo["ID"], demo["Group"]))  # 1 = PD, 2 = control
    ws = p2.windows
    for subj, label in zip(ws.groups, ws.labels):
        assert label == ("PD" if "Pt" in subj else "control")
        if subj in group:
            assert label == ("PD" if group[subj] == 1 else "control")


def test_real_gpd2_at_100_hz(real):
    root, p1, p2 = real
    p = protocol("GPD-2@100", root)
    ws = p.windows
    assert p.name == "GPD-2@100" and ws.fs == 100.0 and ws.X.shape == (165, 18, 26366)
    assert np.array_equal(ws.groups, p2.windows.groups) and np.array_equal(ws.y, p2.windows.y)
    for (tr, te), (tr2, te2) in zip(p.folds, p2.folds):
        assert np.array_equal(tr, tr2) and np.array_equal(te, te2)
    same_subjects_fold_by_fold(p1, p)
    short = ws.groups[np.argmin(ws.meta["length"])]
    check_cases(p, root, 1, subjects={short, "GaCo01", "JuPt18", "SiPt40"})
    # every kept length is the file's row count
    rows = {s: sum(1 for line in open(file_of(root, s), "rb") if line.strip()) for s in ws.groups}
    assert ws.meta.set_index("subject")["length"].to_dict() == rows
    assert (p2.windows.meta["length"].to_numpy() == ws.meta["length"].to_numpy() // 5).all()


# ----------------------------------------------------------------- padding is never seen


def _models(attention, options, short: int, long: int):
    """Two tiny models with the same weights, for GPD-2 cases padded to ``short`` and
    to ``long`` steps."""
    return same_weights(
        short,
        long,
        n_channels=18,
        n_classes=2,
        patch_len=8,
        d_model=16,
        n_heads=2,
        depth=2,
        dropout=0.0,
        attention=attention,
        attention_options=options,
    )


@pytest.fixture(scope="module")
def few_cases(real):
    """The shortest walk, a 12,119-row walk and the longest (no padding), standardized
    per channel over their real samples."""
    _, _, p2 = real
    ws = p2.windows
    lengths = ws.meta["length"].to_numpy()
    pick = [int(np.argmin(lengths)), int(np.flatnonzero(lengths == 2423)[0])]
    pick.append(int(np.argmax(lengths)))
    X = ws.X[pick].copy()
    mu, sd = np.nanmean(X, axis=(0, 2)), np.nanstd(X, axis=(0, 2))
    X = (X - mu[None, :, None]) / sd[None, :, None]
    return torch.from_numpy(X.astype(np.float32)), lengths[pick]


@pytest.mark.parametrize(
    "attention,options",
    [("full", None), ("hierarchical", None), ("hierarchical", {"topk": 2, "tile": 4})],
)
def test_more_padding_leaves_a_gpd2_case_unchanged(few_cases, attention, options):
    x, lengths = few_cases
    T = x.shape[2]
    assert torch.isnan(x[0, :, lengths[0] :]).all() and not torch.isnan(x[2]).any()
    extra = 517  # not a whole number of patches
    padded = torch.cat([x, torch.full((3, 18, extra), float("nan"))], dim=2)
    short, long = _models(attention, options, T, T + extra)
    with torch.no_grad():
        assert (short(x) - long(padded)).abs().max() < 1e-5
        h, pad = short.encode(x, return_padding=True)
        h2, pad2 = long.encode(padded, return_padding=True)
    n_real = -(-lengths // 8)  # tokens that hold a real sample
    for i, n in enumerate(n_real):
        assert not pad[i, :n].any() and pad[i, n:].all() and pad2[i, n:].all()
        assert (h[i, :n] - h2[i, :n]).abs().max() < 1e-5


def test_gpd2_padding_is_never_masked_or_scored(few_cases):
    x, lengths = few_cases
    valid = ~torch.isnan(x)
    gen = torch.Generator().manual_seed(0)
    hidden = make_mask(tuple(x.shape), "span", ratio=0.4, valid=valid, token_len=8, generator=gen)
    assert not (hidden & ~valid).any()
    frac = hidden[valid].float().mean()
    assert 0.25 < frac < 0.55
    pred = torch.randn_like(x)
    garbage = pred.clone()
    garbage[~valid] = 1e6  # whatever the model predicts on padding is not scored
    assert masked_mse(pred, x, hidden) == masked_mse(garbage, x, hidden)
    model = SPTTransformer(
        ModelConfig(n_steps=x.shape[2], n_channels=18, n_classes=2, d_model=16, n_heads=2)
    ).eval()
    with torch.no_grad():
        rec = model.reconstruct(x, hidden)
    assert torch.isfinite(rec[valid]).all() and torch.isfinite(masked_mse(rec, x, hidden))
