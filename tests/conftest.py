"""Shared fixtures. Keep models tiny: these tests check behaviour, not accuracy."""

import os

# The CUDA simulator must be chosen before numba is first imported (CI has no GPU).
os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
# Benchmark scripts refuse to record rows of uncommitted code; the rows tests write are
# never results, so a developer's uncommitted changes must not fail them.
os.environ.setdefault("MEDSPT_BENCH_UNCOMMITTED", "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(1)  # tiny models: one thread is fastest and never oversubscribes

# Small, fast settings for SPTClassifier in tests.
# min_steps=0: tiny test sets would otherwise train for the default step floor;
# n_estimators=1: they would otherwise train five seeds (the small-set ensemble)
FAST = dict(
    d_model=16, n_heads=2, depth=1, patch_len=8, pretrain_epochs=2, epochs=3, batch_size=32,
    min_steps=0, n_estimators=1,
)  # fmt: skip


def subject_frame(
    n_per_class: int = 3,
    fs: float = 20.0,
    seconds: float = 30.0,
    seed: int = 0,
    noise: float = 0.3,
) -> pd.DataFrame:
    """Long frame where the class is a property of the subject (like PD vs control):
    class "slow" oscillates at ~1 Hz, class "fast" at ~2.5 Hz; amplitude and offset
    vary per subject so only the temporal structure separates them."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * fs)) / fs
    rows = []
    for cls, f0 in (("slow", 1.0), ("fast", 2.5)):
        for i in range(n_per_class):
            f = f0 * rng.uniform(0.9, 1.1)
            amp, off = rng.uniform(0.8, 1.5), rng.normal(0, 0.5)
            ph = rng.uniform(0, 2 * np.pi)
            rows.append(
                pd.DataFrame(
                    {
                        "subject": f"{cls}{i}",
                        "recording": "r1",
                        "time": t,
                        "label": cls,
                        "a": amp * np.sin(2 * np.pi * f * t + ph)
                        + off
                        + noise * rng.standard_normal(len(t)),
                        "b": amp * np.cos(2 * np.pi * f * t + ph)
                        + noise * rng.standard_normal(len(t)),
                    }
                )
            )
    return pd.concat(rows, ignore_index=True)


@pytest.fixture
def frame() -> pd.DataFrame:
    return subject_frame()


@pytest.fixture
def arrays():
    """Windows (N, C, T) with labels and subjects, 8 subjects x 10 windows."""
    rng = np.random.default_rng(1)
    n_sub, per = 8, 10
    X = rng.standard_normal((n_sub * per, 3, 32)).astype(np.float32)
    y = np.repeat(np.arange(n_sub) % 2, per)
    X[y == 1, 0] += 2 * np.sin(np.linspace(0, 6 * np.pi, 32))  # a learnable pattern
    groups = np.repeat([f"s{i}" for i in range(n_sub)], per)
    return X, np.where(y == 1, "pd", "control"), groups


def real_dataset(folder: str):
    """Path of a local copy of a public dataset, or skip the test saying how to get one."""
    from medspt.datasets._paths import ENV_VAR, find_dataset

    path = find_dataset(folder)
    if path is None:
        pytest.skip(
            f"real data folder {folder!r} not found: set {ENV_VAR} to a folder holding it "
            "(or place it in shared/data beside the checkout)"
        )
    return path
