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
