"""One-call entry points: :func:`fit_spt` and :func:`evaluate`."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from time import perf_counter

import numpy as np
import pandas as pd
from sklearn.model_selection import GroupKFold, StratifiedGroupKFold
from tqdm.auto import tqdm

from medspt.data import WindowSet, WindowSpec, _to_samples, from_arrays, make_windows
from medspt.errors import InputError
from medspt.estimator import SPTClassifier
from medspt.metrics import classification_metrics

__all__ = ["fit_spt", "evaluate", "subject_folds", "summarize", "windows_from"]


def _default_window(df: pd.DataFrame, window, fs, time_col) -> int | str:
    if window != "auto":
        return window
    return "10s" if (fs is not None or (time_col and time_col in df.columns)) else 200


def windows_from(
    data,
    y=None,
    groups=None,
    *,
    label: str = "label",
    subject: str = "subject",
    recording: str | None = "recording",
    time: str | None = "time",
    channels: Sequence[str] | None = None,
    fs: float | None = None,
    window: int | str = "auto",
    stride: int | str | None = None,
    max_missing: float = 0.5,
) -> tuple[WindowSet, WindowSpec | None]:
    """Turn a long DataFrame, a WindowSet or arrays into a WindowSet (+ how it was cut)."""
    if isinstance(data, WindowSet):
        return data, None
    if isinstance(data, pd.DataFrame):
        window = _default_window(data, window, fs, time)
        ws = make_windows(
            data,
            window=window,
            stride=stride,
            label=label,
            subject=subject,
            recording=recording,
            time=time,
            channels=channels,
            fs=fs,
            max_missing=max_missing,
        )
        win = ws.X.shape[2]
        step = _to_samples(stride, ws.fs, "stride") if stride is not None else win
        if window is None:  # one case per recording, padded to the longest
            win = step = None
        spec = WindowSpec(
            label=label,
            subject=subject,
            recording=recording if recording in data.columns else None,
            time=time if time in data.columns else None,
            channels=tuple(ws.channels),
            fs=ws.fs,
            window=win,
            stride=step,
            length=ws.X.shape[2] if window is None else None,
        )
        return ws, spec
    if y is None:
        raise InputError(
            "pass a long DataFrame, a WindowSet, or arrays X (N, C, T) with y (and groups)"
        )
    return from_arrays(data, y, groups, channels=channels, fs=fs), None


def fit_spt(
    df,
    *,
    label: str = "label",
    subject: str = "subject",
    recording: str | None = "recording",
    time: str | None = "time",
    channels: Sequence[str] | None = None,
    fs: float | None = None,
    window: int | str = "auto",
    stride: int | str | None = None,
    max_missing: float = 0.5,
    **params,
) -> SPTClassifier:
    """Fit a self-pretrained Transformer classifier on a long DataFrame of recordings.

    Parameters
    ----------
    df : DataFrame
        One row per time sample with columns ``subject``, ``label``, optionally
        ``recording`` and ``time`` (seconds), and one numeric column per channel. Arrays
        ``(X, y, groups)`` or a :class:`~medspt.data.WindowSet` also work via
        ``SPTClassifier().fit``.
    label, subject, recording, time : str
        Column names.
    channels : list of str, optional
        Signal columns; default all numeric columns except the ones above. The ``time``
        column is never used as a feature (position in a recording can leak the label).
    fs : float, optional
        Sampling rate in Hz (inferred from ``time`` when omitted).
    window, stride : int, str or None
        Window length and step in samples (``200``) or seconds (``"10s"``). ``"auto"``:
        10 s when the sampling rate is known, else 200 samples. Stride defaults to the
        window (no overlap). ``None``: one case per recording, each of its own length
        (shorter ones padded; the model never attends to padding).
    **params
        Any :class:`~medspt.SPTClassifier` parameter; ``masking="span"`` and
        ``pretrain=True`` by default.

    Returns
    -------
    SPTClassifier
        Fitted; ``predict(df)`` gives per-window and per-recording predictions. For an
        honest accuracy estimate use :func:`evaluate` (subject-wise cross-validation).
    """
    if isinstance(df, pd.DataFrame):
        ws, spec = windows_from(
            df,
            label=label,
            subject=subject,
            recording=recording,
            time=time,
            channels=channels,
            fs=fs,
            window=window,
            stride=stride,
            max_missing=max_missing,
        )
    elif isinstance(df, WindowSet):
        ws, spec = df, None
    else:
        raise InputError(
            f"fit_spt expects a long pandas DataFrame (or a WindowSet), got {type(df).__name__};"
            " for arrays use SPTClassifier().fit(X, y, groups)"
        )
    if ws.y is None:
        raise InputError(f"label column {label!r} is needed to fit")
    clf = SPTClassifier(**params)
    clf.fit(ws, groups=ws.groups)
    clf.frame_spec_ = spec
    return clf


def subject_folds(
    y: np.ndarray, groups: np.ndarray, n_splits: int = 5, random_state: int = 0
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Subject-wise folds: ``StratifiedGroupKFold`` (shuffled, seeded), or ``GroupKFold``
    when stratification is impossible."""
    n_groups = len(np.unique(groups))
    if n_splits < 2 or n_splits > n_groups:
        raise InputError(
            f"cv={n_splits} folds need between 2 and the number of subjects ({n_groups})"
        )
    X0 = np.zeros(len(y))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        try:
            sgkf = StratifiedGroupKFold(n_splits, shuffle=True, random_state=random_state)
            folds = list(sgkf.split(X0, y, groups))
        except ValueError:
            folds = list(GroupKFold(n_splits).split(X0, y, groups))
    return folds


def _check_folds(folds, groups: np.ndarray, n: int) -> list[tuple[np.ndarray, np.ndarray]]:
    out = []
    for k, (tr, te) in enumerate(folds):
        tr, te = np.asarray(tr), np.asarray(te)
        if len(tr) == 0 or len(te) == 0:
            raise InputError(f"fold {k} has an empty train or test part")
        if tr.max(initial=0) >= n or te.max(initial=0) >= n:
            raise InputError(f"fold {k} has indices beyond the {n} windows")
        shared = np.intersect1d(groups[tr], groups[te])
        if len(shared):
            raise InputError(
                f"fold {k} puts subject(s) {shared[:5].tolist()} in both train and test; "
                "folds must be subject-wise"
            )
        out.append((tr, te))
    return out


def fit_fold(
    ws: WindowSet, train_idx: np.ndarray, test_idx: np.ndarray, params: dict
) -> tuple[dict, SPTClassifier]:
    """Fit an :class:`SPTClassifier` on one fold's training windows and score its test
    windows.

    Returns the row of metrics (window counts, accuracy, balanced_accuracy, macro_f1,
    roc_auc, subject_accuracy, epochs chosen, wall time, training windows per second)
    and the fitted classifier.
    """
    tr, te = np.asarray(train_idx), np.asarray(test_idx)
    clf = SPTClassifier(**{**params, "verbose": False})
    t0 = perf_counter()
    clf.fit(ws.X[tr], ws.classes[ws.y[tr]], groups=ws.groups[tr])
    wall = perf_counter() - t0
    proba = clf.predict_proba(ws.X[te])
    # proba columns follow clf.classes_ (sorted training classes); ws.classes may be in any
    # order (protocols fix theirs), so map by value, never by sorted position
    code = {c: i for i, c in enumerate(ws.classes.tolist())}
    full = np.zeros((len(te), len(ws.classes)))
    full[:, [code[c] for c in clf.classes_.tolist()]] = proba
    metrics = classification_metrics(ws.y[te], full, ws.groups[te])
    epochs = [r for stage in clf.history_.values() for r in stage]
    train_s = sum(r["seconds"] for r in epochs)
    row = {
        "n_train": len(tr),
        "n_test": len(te),
        "n_test_subjects": len(np.unique(ws.groups[te])),
        **metrics,
        "pretrain_epochs": len(clf.history_["pretrain"]),
        "finetune_epoch": clf.best_epoch_["finetune"],
        "wall_time_s": wall,
        "windows_per_s": sum(r["windows"] for r in epochs) / train_s if train_s > 0 else np.nan,
    }
    return row, clf


def evaluate(
    data,
    y=None,
    groups=None,
    *,
    cv: int | Iterable = 5,
    depths: Sequence[int] = (2,),
    maskings: Sequence[str] = ("span",),
    scratch: bool = True,
    seeds: Sequence[int] = (0,),
    label: str = "label",
    subject: str = "subject",
    recording: str | None = "recording",
    time: str | None = "time",
    channels: Sequence[str] | None = None,
    fs: float | None = None,
    window: int | str = "auto",
    stride: int | str | None = None,
    verbose: bool = True,
    **params,
) -> pd.DataFrame:
    """Subject-wise cross-validation of scratch vs SPT on identical folds.

    Parameters
    ----------
    data : DataFrame, WindowSet or array (N, C, T)
        A long DataFrame (cut with ``window``/``stride``), windows, or arrays with ``y``
        and ``groups`` (subject per window).
    cv : int or iterable of (train_idx, test_idx)
        Number of subject-wise folds (``StratifiedGroupKFold``, shuffled with seed 0), or
        explicit folds; every fold is checked to keep each subject on one side.
    depths, maskings, scratch, seeds
        The grid: for each depth, a scratch model (if ``scratch``) and an SPT model per
        masking, each trained with every seed, all on the same folds.
    **params
        Further :class:`~medspt.SPTClassifier` parameters shared by all configurations.

    Returns
    -------
    DataFrame
        One row per fold × configuration × seed: ``config`` ("scratch" or
        "spt-<masking>"), depth, masking, pretrain, seed, fold, window and subject counts,
        metrics (accuracy, balanced_accuracy, macro_f1, roc_auc, subject_accuracy),
        pretrain_epochs and finetune_epoch (epochs chosen by early stopping), wall time
        and training windows per second.
    """
    ws, _ = windows_from(
        data,
        y,
        groups,
        label=label,
        subject=subject,
        recording=recording,
        time=time,
        channels=channels,
        fs=fs,
        window=window,
        stride=stride,
    )
    if ws.y is None:
        raise InputError("evaluation needs labels")
    if len(ws.classes) < 2 or len(np.unique(ws.y)) < 2:
        raise InputError("evaluation needs windows of at least 2 classes")
    if not depths:
        raise InputError("depths is empty")
    configs = []
    for d in depths:
        if scratch:
            configs.append(dict(config="scratch", depth=d, masking=None, pretrain=False))
        for m in maskings:
            name = m if isinstance(m, str) else getattr(m, "__name__", "custom")
            configs.append(dict(config=f"spt-{name}", depth=d, masking=m, pretrain=True))
    if not configs:
        raise InputError("nothing to evaluate: scratch=False and no maskings")
    if isinstance(cv, (int, np.integer)):
        folds = subject_folds(ws.y, ws.groups, int(cv))
    else:
        folds = cv.split(ws.X, ws.y, ws.groups) if hasattr(cv, "split") else cv
    folds = _check_folds(list(folds), ws.groups, len(ws))

    rows = []
    jobs = [(k, c, s) for k in range(len(folds)) for c in configs for s in seeds]
    for k, c, seed in tqdm(jobs, desc="evaluate", disable=not verbose):
        est_params = dict(params, depth=c["depth"], pretrain=c["pretrain"], random_state=seed)
        if c["masking"] is not None:
            est_params["masking"] = c["masking"]
        row, _ = fit_fold(ws, *folds[k], est_params)
        masking = c["masking"]
        if masking is not None and not isinstance(masking, str):
            masking = "custom"
        rows.append({**c, "masking": masking, "seed": seed, "fold": k, **row})
    return pd.DataFrame(rows)


def paired_test(diff: np.ndarray) -> float:
    """Two-sided Wilcoxon signed-rank p-value of paired differences (1.0 when all are
    zero, NaN with fewer than 2 pairs)."""
    from scipy.stats import wilcoxon

    diff = np.asarray(diff, dtype=float)
    diff = diff[np.isfinite(diff)]
    if len(diff) < 2:
        return float("nan")
    if np.all(diff == 0):
        return 1.0
    return float(wilcoxon(diff).pvalue)


def summarize(results: pd.DataFrame, metric: str = "balanced_accuracy") -> pd.DataFrame:
    """Mean ± std of ``metric`` per configuration and depth (rows) over folds × seeds,
    with the gain of each configuration over scratch at the same depth and a paired test.

    Pairs are runs with the same depth, fold and seed; ``gain_vs_scratch`` is the mean of
    the paired differences (the difference of means when rows carry no fold/seed),
    ``n_pairs`` their number and ``p_value`` the two-sided Wilcoxon signed-rank test on
    them. Folds share subjects across seeds, so pairs are not fully independent and the
    p-value is optimistic; read it next to ``n_pairs``.
    """
    if metric not in results.columns:
        raise InputError(f"metric {metric!r} not in the results; have {list(results.columns)}")
    g = results.groupby(["depth", "config"], sort=False)[metric]
    out = g.agg(["mean", "std", "count"]).reset_index()
    out = out.sort_values(["depth"], kind="stable").reset_index(drop=True)
    keys = [k for k in ("fold", "seed") if k in results.columns]
    gains, n_pairs, p_values = [], [], []
    for d, c, m in zip(out["depth"], out["config"], out["mean"]):
        scratch = results[(results["depth"] == d) & (results["config"] == "scratch")]
        if c == "scratch" or scratch.empty:
            gains.append(np.nan), n_pairs.append(0), p_values.append(np.nan)
            continue
        if not keys:
            gains.append(m - scratch[metric].mean()), n_pairs.append(0)
            p_values.append(np.nan)
            continue
        mine = results[(results["depth"] == d) & (results["config"] == c)]
        paired = (
            mine.groupby(keys)[metric]
            .mean()
            .to_frame("a")
            .join(scratch.groupby(keys)[metric].mean().to_frame("b"), how="inner")
        )
        diff = (paired["a"] - paired["b"]).to_numpy()
        gains.append(float(diff.mean()) if len(diff) else np.nan)
        n_pairs.append(len(diff))
        p_values.append(paired_test(diff))
    out["gain_vs_scratch"] = gains
    out["n_pairs"] = n_pairs
    out["p_value"] = p_values
    # attention-proximity diagnostics of the models (studies record them per fold)
    for col in ("attention_distance", "locality_ratio"):
        if col in results.columns:
            means = results.groupby(["depth", "config"], sort=False)[col].mean()
            out[col] = [means.get((d, c), np.nan) for d, c in zip(out["depth"], out["config"])]
    return out


def markdown_table(table: pd.DataFrame, metric: str = "balanced_accuracy") -> str:
    """A :func:`summarize` table as Markdown: mean ± std, runs, gain over scratch, p-value,
    and the models' mean attention distance and locality ratio when the table has them."""
    diag = "attention_distance" in table.columns and table["attention_distance"].notna().any()
    lines = [
        f"| depth | configuration | {metric} (mean ± std) | folds×seeds | gain vs scratch "
        "| p (paired) |" + (" attention distance | locality |" if diag else ""),
        "|---:|---|---:|---:|---:|---:|" + ("---:|---:|" if diag else ""),
    ]
    for r in table.itertuples():
        g = r.gain_vs_scratch
        gain = "" if pd.isna(g) else f"{0.0 if abs(g) < 5e-4 else g:+.3f}"  # no "-0.000"
        p = getattr(r, "p_value", np.nan)
        p = "" if pd.isna(p) else f"{p:.3f} (n={r.n_pairs})"
        std = 0.0 if pd.isna(r.std) else r.std
        depth = "–" if pd.isna(r.depth) else int(r.depth)
        lines.append(
            f"| {depth} | {r.config} | {r.mean:.3f} ± {std:.3f} | {r.count} | {gain} | {p} |"
            + (f" {_num(r.attention_distance)} | {_num(r.locality_ratio)} |" if diag else "")
        )
    return "\n".join(lines) + "\n"


def _num(x) -> str:
    return "" if pd.isna(x) else f"{x:.2f}"
