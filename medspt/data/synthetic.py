"""A built-in, deterministic *synthetic* dataset for the demo and the tests.

Each subject wears three sensors and moves in a rhythm of its own (0.6-1.4 Hz, drifting
slowly within a recording). ``acc_x`` traces every cycle as a ramp up and a ramp down,
and ``acc_y`` traces the same cycle, weaker and a subject-specific part of a cycle
later; the class is the *shape* of that cycle:

- ``rise``: a slow rise and a fast drop (a rising sawtooth);
- ``fall``: a fast rise and a slow fall (a falling sawtooth);
- ``even``: rise and fall at the same pace (a triangle).

A ramp wave takes every value between its low and high points equally often whatever
its shape, so the classes have the same distribution of values and only the temporal
shape tells them apart. A convolution that compares neighbouring samples sees it, so
both the Transformer and a convolutional baseline such as MiniRocket can in principle
solve the task (MiniRocket scores 0.96-0.99 balanced accuracy on held-out subjects).
Subjects differ in rhythm, amplitude, sensor offsets and a slight lean of every cycle,
so a model must generalise across subjects, which subject-wise cross-validation
measures. ``emg`` is bursty noise that carries no class. Labels change inside a
recording (segments of 20-40 s), like activities or stress phases do.

:func:`make_phase_frame` keeps the earlier demo task (the class is the sign of a phase
shift between ``acc_x`` and ``acc_y``), on which model files saved for the tests were
fitted. Multivariate MiniRocket cannot solve that one: it adds channels before each
kernel, and ``acc_x + acc_y`` has the same distribution for a lead and a lag.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

CLASSES = ("even", "fall", "rise")
PHASE_CLASSES = ("lag", "lead", "sync")  # the classes of make_phase_frame

# the fraction of a cycle acc_x and acc_y spend rising, per class (before the subject's own lean)
RISE_FRACTION = {"even": 0.5, "fall": 0.15, "rise": 0.85}


def make_demo_frame(
    n_subjects: int = 12,
    recordings_per_subject: int = 2,
    seconds_per_recording: float = 120.0,
    fs: float = 20.0,
    noise: float = 0.25,
    seed: int = 0,
) -> pd.DataFrame:
    """The demo data: the class is the shape of each movement cycle (module docstring).

    Parameters
    ----------
    n_subjects, recordings_per_subject : int
        Subjects ``S01, S02, ...``, each with recordings ``R1, R2, ...``.
    seconds_per_recording, fs : float
        Length of every recording and its sampling rate in Hz.
    noise : float
        Standard deviation of the white noise added to ``acc_x`` and ``acc_y``; 0 gives
        clean waves.
    seed : int
        The frame is the same for the same arguments.

    Returns
    -------
    DataFrame
        Long format (``subject, recording, time, label, acc_x, acc_y, emg``), labels
        ``rise``, ``fall`` and ``even`` (module docstring) in segments of 20-40 s.
        ``df.attrs["synthetic"]`` is True and ``df.attrs["fs"]`` holds the sampling rate.
    """
    rng = np.random.default_rng(seed)
    n = int(round(seconds_per_recording * fs))
    t = np.arange(n) / fs
    rise = np.array([RISE_FRACTION[c] for c in CLASSES])
    frames = []
    for s in range(n_subjects):
        # the same draws, in the same order, as make_phase_frame: both tasks share their
        # subjects' rhythm and their label segments (so window counts stay as documented)
        freq = rng.uniform(0.6, 1.4)  # Hz, subject's rhythm
        # amplitudes in 0.9-1.3 (from the shared draw): MiniRocket's features are not
        # scale-free, so a weak mover would look like another class to it
        amp = 0.9 + 0.5 * (rng.uniform(0.7, 1.5) - 0.7)
        offset = rng.normal(0, 0.5, size=3)
        # a subject's own manner, drawn apart so that the shared draws above stay aligned:
        # a slight lean of every cycle (never enough to reach another class's shape) and
        # how strongly and when acc_y swings
        own = np.random.default_rng([seed, s])
        lean = own.uniform(-0.05, 0.05)
        y_gain, y_phase = own.uniform(0.4, 1.0), own.uniform(0.0, 1.0)
        for r in range(recordings_per_subject):
            codes = _segments(rng, n, fs, len(CLASSES))
            f_t = freq * (1 + 0.05 * np.sin(2 * np.pi * t / rng.uniform(15, 30)))
            cycles = np.cumsum(f_t) / fs + rng.uniform(0, 1)
            shape = rise[codes] + lean
            x = amp * _ramp(cycles % 1.0, shape)
            y = y_gain * amp * _ramp((cycles + y_phase) % 1.0, shape)
            bursts = (rng.random(n) < 0.02).astype(float)
            emg = np.convolve(bursts, np.hanning(int(fs)), mode="same") + rng.gamma(1, 0.2, n)
            frames.append(
                pd.DataFrame(
                    {
                        "subject": f"S{s + 1:02d}",
                        "recording": f"R{r + 1}",
                        "time": t,
                        "label": np.asarray(CLASSES, dtype=object)[codes],
                        "acc_x": x + offset[0] + noise * rng.standard_normal(n),
                        "acc_y": y + offset[1] + noise * rng.standard_normal(n),
                        "emg": emg + offset[2],
                    }
                )
            )
    return _finish(frames, fs)


def make_phase_frame(
    n_subjects: int = 12,
    recordings_per_subject: int = 2,
    seconds_per_recording: float = 120.0,
    fs: float = 20.0,
    noise: float = 0.5,
    seed: int = 0,
) -> pd.DataFrame:
    """The earlier demo data: the class is the timing between ``acc_x`` and ``acc_y``.

    ``acc_x`` is an oscillation with a subject-specific frequency, amplitude and offset;
    ``acc_y`` is the same oscillation a quarter period ahead (``lead``), behind
    (``lag``) or in step (``sync``); ``emg`` is independent bursty noise. Every channel
    has the same distribution of values in every class, and so has ``acc_x + acc_y`` for
    ``lead`` and ``lag``: multivariate MiniRocket, which adds channels before each
    kernel, cannot exceed about 2/3 balanced accuracy here. Kept because model files
    saved for the tests were fitted on it.

    Parameters and returned frame as in :func:`make_demo_frame` (labels ``lag``,
    ``lead``, ``sync``; the same subjects' rhythms and label segments for the same
    arguments).
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
            codes = _segments(rng, n, fs, len(PHASE_CLASSES))
            shift = np.array([-0.25, 0.25, 0.0])[codes]  # lag, lead, sync
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
                        "label": np.asarray(PHASE_CLASSES, dtype=object)[codes],
                        "acc_x": x + offset[0] + noise * rng.standard_normal(n),
                        "acc_y": y + offset[1] + noise * rng.standard_normal(n),
                        "emg": emg + offset[2],
                    }
                )
            )
    return _finish(frames, fs)


def _segments(rng: np.random.Generator, n: int, fs: float, n_classes: int) -> np.ndarray:
    """Class codes of ``n`` samples: segments of 20-40 s, each of a random class."""
    codes = np.empty(n, dtype=np.intp)
    pos = 0
    while pos < n:
        length = int(rng.uniform(20, 40) * fs)
        codes[pos : pos + length] = rng.integers(n_classes)
        pos += length
    return codes


def _ramp(u: np.ndarray, rising: np.ndarray) -> np.ndarray:
    """A ramp wave in [-1, 1]: up from -1 to 1 during the first ``rising`` fraction of
    each cycle (``u`` is the position in the cycle, in [0, 1)), then back down."""
    rising = np.clip(rising, 0.05, 0.95)
    up = u < rising
    return 2 * np.where(up, u / rising, (1 - u) / (1 - rising)) - 1


def _finish(frames: list[pd.DataFrame], fs: float) -> pd.DataFrame:
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
