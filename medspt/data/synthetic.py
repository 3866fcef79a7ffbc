"""A built-in, deterministic *synthetic* dataset for the demo and the tests.

Each subject wears three sensors. ``acc_x`` is an oscillation with a subject-specific
frequency, amplitude and offset; ``acc_y`` is the same oscillation shifted in time; ``emg``
is independent bursty noise. The class is the *timing* between the two first channels:

- ``lead``: ``acc_y`` runs a quarter period ahead of ``acc_x``;
- ``lag``: ``acc_y`` runs a quarter period behind;
- ``sync``: no shift.

Every channel has the same distribution of values in every class, so only a model that
looks at temporal structure across channels can tell them apart. Labels change inside a
recording (segments of 20–40 s), like activities or stress phases do.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

CLASSES = ("lag", "lead", "sync")


def make_demo_frame(
    n_subjects: int = 12,
    recordings_per_subject: int = 2,
    seconds_per_recording: float = 120.0,
    fs: float = 20.0,
    noise: float = 0.5,
    seed: int = 0,
) -> pd.DataFrame:
    """Long DataFrame (``subject, recording, time, label, acc_x, acc_y, emg``).

    Deterministic for a given ``seed``. ``df.attrs["synthetic"]`` is True and
    ``df.attrs["fs"]`` holds the sampling rate.
    """
    rng = np.random.default_rng(seed)
    frames = []
    n = int(round(seconds_per_recording * fs))
    t = np.arange(n) / fs
    for s in range(n_subjects):
        freq = rng.uniform(0.6, 1.4)  # Hz, subject's rhythm
        amp = rng.uniform(0.7, 1.5)
        offset = rng.normal(0, 0.5, size=3)
        for r in range(recordings_per_subject):
            # segments of 20-40 s with a random class each
            labels = np.empty(n, dtype=object)
            shift = np.zeros(n)
            pos = 0
            while pos < n:
                length = int(rng.uniform(20, 40) * fs)
                k = rng.integers(len(CLASSES))
                labels[pos : pos + length] = CLASSES[k]
                shift[pos : pos + length] = {"lag": -0.25, "lead": 0.25, "sync": 0.0}[CLASSES[k]]
                pos += length
            f_t = freq * (1 + 0.05 * np.sin(2 * np.pi * t / rng.uniform(15, 30)))
            phase = 2 * np.pi * np.cumsum(f_t) / fs + rng.uniform(0, 2 * np.pi)
            x = amp * np.sin(phase)
            y = amp * np.sin(phase + 2 * np.pi * shift)
            bursts = (rng.random(n) < 0.02).astype(float)
            emg = np.convolve(bursts, np.hanning(int(fs)), mode="same") + rng.gamma(1, 0.2, n)
            frames.append(
                pd.DataFrame(
                    {
                        "subject": f"S{s + 1:02d}",
                        "recording": f"R{r + 1}",
                        "time": t,
                        "label": labels,
                        "acc_x": x + offset[0] + noise * rng.standard_normal(n),
                        "acc_y": y + offset[1] + noise * rng.standard_normal(n),
                        "emg": emg + offset[2],
                    }
                )
            )
    df = pd.concat(frames, ignore_index=True)
    df["label"] = df["label"].astype(str)
    df.attrs.update(synthetic=True, fs=fs)
    return df


# ----------------------------------------------------------------------- development tasks

TASKS = ("echo", "frequency", "shape")


def make_task(
    name: str,
    n_subjects: int = 16,
    windows_per_subject: int = 40,
    fs: float = 50.0,
    seconds: float = 4.0,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A synthetic two-class task with subjects, for choosing defaults on data that is
    not the protocols': windows ``X (N, C, T)`` float32, labels ``y`` and ``groups``.

    Every subject has its own gain and offset per channel and both classes (balanced).

    - ``"echo"``: two channels of band-limited noise; channel 1 is channel 0 delayed by 12
      samples (class ``"echo"``) or by 0 (class ``"sync"``), plus its own noise. Only the
      timing *between* channels tells the classes apart.
    - ``"frequency"``: one noisy sine of 2.0 Hz (``"low"``) or 2.6 Hz (``"high"``) with a
      subject-specific amplitude and a random phase.
    - ``"shape"``: noise with one 0.4 s event at a random position: a smooth bump
      (``"bump"``) or a square pulse of the same energy (``"square"``).

    Deterministic for a given ``seed``.
    """
    if name not in TASKS:
        raise ValueError(f"name must be one of {TASKS}, got {name!r}")
    rng = np.random.default_rng(seed)
    T = int(round(fs * seconds))
    t = np.arange(T) / fs
    X, y, groups = [], [], []
    for s in range(n_subjects):
        gain = rng.uniform(0.6, 1.6, size=2)
        offset = rng.normal(0.0, 1.0, size=2)
        for w in range(windows_per_subject):
            k = w % 2
            X.append(_task_window(name, k, T, t, fs, rng) * gain[:, None] + offset[:, None])
            y.append(_TASK_CLASSES[name][k])
            groups.append(f"s{s:02d}")
    X = np.stack(X).astype(np.float32)
    C = 2 if name == "echo" else 1
    return X[:, :C], np.asarray(y), np.asarray(groups)


_TASK_CLASSES = {
    "echo": ("sync", "echo"),
    "frequency": ("low", "high"),
    "shape": ("bump", "square"),
}


def _smooth_noise(n: int, rng: np.random.Generator, width: int = 5) -> np.ndarray:
    """Unit-variance noise smoothed by a moving average of ``width`` samples."""
    z = np.convolve(rng.normal(size=n + width), np.ones(width) / width, mode="valid")[:n]
    return z / z.std()


def _task_window(name: str, k: int, T: int, t: np.ndarray, fs: float, rng) -> np.ndarray:
    """One window ``(2, T)`` of task ``name``, class index ``k``."""
    if name == "echo":
        lag = 12 * k
        src = _smooth_noise(T + 12, rng)
        a = src[12:]
        b = 0.8 * src[12 - lag : 12 - lag + T] + 0.4 * rng.normal(size=T)
        return np.stack([a, b])
    if name == "frequency":
        f = (2.0, 2.6)[k]
        x = np.sin(2 * np.pi * f * t + rng.uniform(0, 2 * np.pi)) + 0.5 * rng.normal(size=T)
        return np.stack([x, np.zeros(T)])
    width = int(0.4 * fs)
    start = int(rng.integers(0, T - width))
    u = np.linspace(-1, 1, width)
    event = np.exp(-4 * u**2) if k == 0 else np.ones(width)
    event = 2.0 * event / np.sqrt((event**2).mean())
    x = 0.5 * rng.normal(size=T)
    x[start : start + width] += event
    return np.stack([x, np.zeros(T)])
