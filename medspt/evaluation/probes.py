"""Confound probes: how far a trivial feature alone predicts the label.

A model's score means little until it is read next to what a shortcut achieves on the
same folds. Each probe fits a small scikit-learn model on one feature that is *not* the
physiology you want to classify, on each fold's training windows only, and predicts the
fold's test windows:

``"position"``
    Only the window's start in its recording (seconds). When every subject goes through
    the conditions in the same order (stress protocols, exercise sessions), this clock
    alone predicts the label, and so does anything that tracks it: a time or sample
    column, the window index, a signal that drifts through the session.
``"channel-means"``
    Only the mean level of each channel in the window. Offsets (sensor placement, body
    weight, calibration, recording site) and slow drift (skin temperature rising through
    a session) show up here.
``"window-levels"``
    Each channel's mean *and* log standard deviation over the window: exactly what
    :class:`~medspt.SPTClassifier` with ``window_stats=True`` (its default) hands its
    classification head beside the tokens. What this probe scores, the model can score
    without reading any shape.

A probe far above chance is not an error in itself, but a model's score must then be
read next to the probe's: part of it may come from the shortcut.

Usage, on a protocol's folds or your own subject-wise folds::

    from medspt.datasets import protocol

    p = protocol("NE-1")
    pred = confound_probes(p.windows, p.folds)
    summary = probe_summary(pred, p.windows.classes)
    for line in probe_warnings(summary):
        print(line)

or every probe at once, with a row saying why for one that cannot run on these windows
(what :func:`medspt.evaluate` stores as ``results.probes``)::

    table = probe_table(p.windows, p.folds)

The predictions frame has the columns of :func:`medspt.api.evaluate`'s out-of-fold
predictions (``config, depth, seed, fold, window, subject, y, pred, proba_<class>``),
so the paired subject-level tests of :mod:`medspt.evaluation.statistics` can compare a model
with a probe.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import SplineTransformer, StandardScaler

from medspt.core.errors import InputError
from medspt.core.splits import check_folds
from medspt.core.stats import channel_stats
from medspt.data.windowset import WindowSet
from medspt.estimator.metrics import classification_metrics, predictions_frame

__all__ = [
    "PROBES",
    "LEAK_MARGIN",
    "confound_probes",
    "probe_markdown",
    "probe_summary",
    "probe_table",
    "probe_table_markdown",
    "probe_warnings",
    "window_levels",
]

PROBES = ("position", "channel-means", "window-levels")
# the metrics a probe's per-fold scores are averaged for (``<metric>_fold_mean``)
FOLD_METRICS = ("accuracy", "balanced_accuracy", "macro_f1", "roc_auc")
_BA = "balanced_accuracy"  # its fold mean and std have their own columns
# the model's floor under a window's variance (SPTTransformer.visible_stats)
VAR_FLOOR = 1e-5
# A probe "leaks" when its pooled balanced accuracy beats chance by more than this.
LEAK_MARGIN = 0.10
# Cubic B-splines on 20 uniform knots: the position range is cut into 19 pieces, fine
# enough for phases of a few percent of a session (on NE-1, 10 knots blur the 40 s
# emotional-stress segment and score 0.95 instead of 0.98), still one smooth curve per
# class, so labels independent of position stay at chance.
POSITION_KNOTS = 20

Fold = tuple[np.ndarray, np.ndarray]


# --------------------------------------------------------------------------- features


def _positions(ws: WindowSet) -> np.ndarray:
    """Start of each window in its recording: seconds when known, else samples."""
    meta = ws.meta
    fix = (
        "build the windows with medspt.make_windows (it records them), or set "
        "ws.meta['start_time'] to each window's start in seconds; or leave the position "
        "probe out with probes=('channel-means',)"
    )
    if meta is None or len(meta) != len(ws):
        rows = 0 if meta is None else len(meta)
        raise InputError(
            f"ws.meta has {rows} rows but ws holds {len(ws)} windows, so the position "
            f"probe has no start positions; {fix}"
        )
    if "start_time" not in meta.columns and "start" not in meta.columns:
        raise InputError(
            "the position probe needs each window's start: ws.meta has neither "
            f"'start_time' (seconds) nor 'start' (samples) (columns: {list(meta.columns)}); "
            f"{fix}"
        )
    pos = np.full(len(ws), np.nan)
    if "start_time" in meta.columns:
        pos = pd.to_numeric(meta["start_time"], errors="coerce").to_numpy(dtype=float)
    if "start" in meta.columns and np.isnan(pos).any():
        start = pd.to_numeric(meta["start"], errors="coerce").to_numpy(dtype=float)
        # Mixing seconds and samples would make the feature meaningless, so samples are
        # used only when no window has a time in seconds.
        if ws.fs:
            pos = np.where(np.isnan(pos), start / float(ws.fs), pos)
        elif np.isnan(pos).all():
            pos = start
    missing = int((~np.isfinite(pos)).sum())
    if missing:
        raise InputError(
            f"the position probe needs each window's start, but {missing} of {len(ws)} "
            f"windows have none in ws.meta['start_time'] / ws.meta['start']; {fix}"
        )
    if np.ptp(pos) == 0:
        raise InputError(
            f"every window starts at the same position ({pos[0]:g}), so ws.meta holds no "
            "start positions (windows made by from_arrays, or one window per recording); "
            f"{fix}"
        )
    return pos[:, None]


def _channel_means(ws: WindowSet) -> np.ndarray:
    """Per-channel mean of each window over its observed values (NaN if none)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-missing channel: NaN, filled later
        return np.nanmean(np.asarray(ws.X), axis=2, dtype=np.float64)


def window_levels(X: np.ndarray, mean: np.ndarray, std: np.ndarray) -> np.ndarray:
    """Each window's per-channel mean and log standard deviation, ``(N, 2C)``, as the
    classifier's head receives them with ``window_stats=True``.

    The windows are first scaled per channel by the training fold's ``mean`` and ``std``
    (:func:`medspt.core.stats.channel_stats`, the classifier's channel scaling); then, over
    each channel's observed values, the mean and ``log(sqrt(var + 1e-5))`` (population
    variance), and 0 and 0 (a std of 1) for a channel with fewer than 2 observed values,
    as ``SPTTransformer.visible_stats`` computes them.
    """
    Z = (np.asarray(X, dtype=np.float64) - mean[None, :, None]) / std[None, :, None]
    seen = ~np.isnan(Z)
    n = seen.sum(axis=2)  # (N, C)
    values = np.where(seen, Z, 0.0)
    mu = values.sum(axis=2) / np.maximum(n, 1)
    var = np.where(seen, (Z - mu[..., None]) ** 2, 0.0).sum(axis=2) / np.maximum(n, 1)
    log_std = np.log(np.sqrt(var + VAR_FLOOR))
    few = n < 2
    return np.concatenate([np.where(few, 0.0, mu), np.where(few, 0.0, log_std)], axis=1)


def _windows(ws: WindowSet) -> np.ndarray:
    """The windows themselves: the window-levels probe scales them per fold."""
    return np.asarray(ws.X)


_FEATURES = {"position": _positions, "channel-means": _channel_means, "window-levels": _windows}


def _model(probe: str) -> Pipeline:
    if probe == "position":
        # Phases sit at fixed times, possibly several intervals per class: a smooth
        # multi-modal curve of one variable, not a single threshold.
        return make_pipeline(
            SplineTransformer(n_knots=POSITION_KNOTS, degree=3),
            LogisticRegression(class_weight="balanced", max_iter=2000),
        )
    return make_pipeline(
        StandardScaler(), LogisticRegression(class_weight="balanced", max_iter=2000)
    )


# --------------------------------------------------------------------------- checks


def _check_probes(probes: str | Iterable[str]) -> list[str]:
    names = [probes] if isinstance(probes, str) else list(probes)
    if not names:
        raise InputError(f"probes is empty; choose one or more of {list(PROBES)}")
    unknown = [p for p in names if p not in PROBES]
    if unknown:
        raise InputError(f"unknown probe(s) {unknown} in probes=; choose from {list(PROBES)}")
    return list(dict.fromkeys(names))  # keep order, drop repeats


def _labels(ws: WindowSet) -> np.ndarray:
    if ws.y is None:
        raise InputError(
            "ws has no labels (ws.y is None), and a probe predicts the label: build the "
            "windows from a frame with a label column (make_windows(df, label=...)) or "
            "pass y to from_arrays(X, y, groups)"
        )
    y = np.asarray(ws.y)
    if len(y) != len(ws):
        raise InputError(f"ws.y has {len(y)} labels but ws holds {len(ws)} windows")
    return y.astype(np.int64)


def _index(idx, n: int, k: int, side: str) -> np.ndarray:
    a = np.asarray(idx)
    if a.dtype == bool:
        if a.shape != (n,):
            raise InputError(f"folds[{k}] {side} mask has shape {a.shape}, expected ({n},)")
        a = np.flatnonzero(a)
    if a.ndim != 1 or (len(a) and not np.issubdtype(a.dtype, np.integer)):
        raise InputError(f"folds[{k}] {side} indices must be a 1-D integer array")
    if len(a) == 0:
        raise InputError(f"folds[{k}] has no {side} windows")
    if a.min() < 0 or a.max() >= n:
        raise InputError(f"folds[{k}] {side} indices must lie in 0..{n - 1} (windows of ws)")
    return a.astype(np.int64)


def _check_folds(ws: WindowSet, folds: Iterable[Fold]) -> list[Fold]:
    """Index arrays, subject-wise: a subject on both sides of a fold inflates a probe
    exactly as it inflates a model."""
    try:
        pairs = [tuple(f) for f in folds]
    except TypeError:
        raise InputError(
            "folds must be a list of (train_idx, test_idx) pairs, e.g. protocol(...).folds "
            "or medspt.subject_folds(ws.y, ws.groups)"
        ) from None
    if not pairs or any(len(p) != 2 for p in pairs):
        raise InputError("folds must be a non-empty list of (train_idx, test_idx) pairs")
    indices = [
        (_index(tr, len(ws), k, "train"), _index(te, len(ws), k, "test"))
        for k, (tr, te) in enumerate(pairs)
    ]
    return check_folds(indices, np.asarray(ws.groups).astype(str), len(ws))


# --------------------------------------------------------------------------- probes


def _fit_predict(
    probe: str, feats: np.ndarray, y: np.ndarray, tr: np.ndarray, te: np.ndarray, k: int
) -> np.ndarray:
    """Test-window probabilities (len(te), k) of a model fitted on the training windows."""
    x_tr, x_te = feats[tr], feats[te]
    if probe == "window-levels":
        # scaled by the training windows' channel statistics, as the classifier does
        mean, std = channel_stats(x_tr)
        x_tr, x_te = window_levels(x_tr, mean, std), window_levels(x_te, mean, std)
    if probe == "channel-means":
        # Fill windows without observed values by the training mean (0 for a channel never
        # observed in training): test statistics never enter the fit.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            fill = np.nan_to_num(np.nanmean(x_tr, axis=0), nan=0.0)
        x_tr = np.where(np.isnan(x_tr), fill, x_tr)
        x_te = np.where(np.isnan(x_te), fill, x_te)
    proba = np.zeros((len(te), k))
    seen = np.unique(y[tr])
    if len(seen) == 1:  # nothing to discriminate: the constant model
        proba[:, seen[0]] = 1.0
        return proba
    model = _model(probe).fit(x_tr, y[tr])
    proba[:, model.classes_] = model.predict_proba(x_te)  # unseen classes keep 0
    return proba


def confound_probes(
    ws: WindowSet,
    folds: Sequence[Fold],
    *,
    probes: str | Sequence[str] = PROBES,
) -> pd.DataFrame:
    """Out-of-fold predictions of models that see only a confound, never the signal shape.

    Parameters
    ----------
    ws : WindowSet
        Labelled windows. The position probe reads ``ws.meta["start_time"]`` (seconds);
        where it is missing, ``ws.meta["start"] / ws.fs``, or ``ws.meta["start"]`` in
        samples when ``ws.fs`` is None.
    folds : list of (train_idx, test_idx)
        Subject-wise folds, e.g. ``protocol("NE-1").folds``: each probe is fitted on a
        fold's training windows only and predicts its test windows. Boolean masks work
        too. A subject on both sides of a fold raises :class:`InputError`.
    probes : str or sequence of str
        Any of ``"position"``, ``"channel-means"`` and ``"window-levels"``:

        - ``"position"``: the window's start in its recording; cubic B-splines on
          20 uniform knots (``SplineTransformer``, constant beyond the training range)
          and ``LogisticRegression(class_weight="balanced")``. One smooth curve per class
          lets the label come back several times at fixed times (NE-1: relax between
          every stress phase), which a linear model on the start time cannot express.
        - ``"channel-means"``: each channel's mean over the window's observed values,
          missing means filled with the training fold's mean; ``StandardScaler`` and
          ``LogisticRegression(class_weight="balanced")``.
        - ``"window-levels"``: each channel's mean and log standard deviation over the
          window (:func:`window_levels`, the features of ``window_stats=True``), with the
          model of ``"channel-means"``.

    Returns
    -------
    DataFrame
        One row per test window per probe, with the columns ``config``
        (``"probe-position"``, ``"probe-channel-means"``, ``"probe-window-levels"``),
        ``depth`` (NaN), ``seed`` (0),
        ``fold``, ``window`` (index into ``ws``), ``subject`` (``str`` of ``ws.groups``),
        ``y`` and ``pred`` (class codes), then ``proba_<class>`` for every class of
        ``ws.classes`` in order (0 for a class the fold's training windows lack).

    Raises
    ------
    InputError
        ``ws`` has no labels, ``probes`` names an unknown probe, the position probe finds
        no start positions in ``ws.meta``, or ``folds`` are not subject-wise index pairs.
    """
    names = _check_probes(probes)
    y = _labels(ws)
    k = len(ws.classes)
    if len(y) and y.max() >= k:
        raise InputError(f"ws.y has class code {y.max()} but ws.classes holds only {k} classes")
    # Features first: a missing position fails before any fitting, with its own message.
    feats = {name: _FEATURES[name](ws) for name in names}
    pairs = _check_folds(ws, folds)
    subjects = np.asarray(ws.groups).astype(str)
    frames = []
    for name in names:
        for f, (tr, te) in enumerate(pairs):
            proba = _fit_predict(name, feats[name], y, tr, te, k)
            frames.append(
                predictions_frame(
                    te,
                    subjects[te],
                    y[te],
                    proba,
                    ws.classes,
                    config=f"probe-{name}",
                    depth=np.nan,
                    seed=0,
                    fold=f,
                )  # fmt: skip
            )
    return pd.concat(frames, ignore_index=True)


# --------------------------------------------------------------------------- summary


def _metrics(y: np.ndarray, proba: np.ndarray) -> dict[str, float]:
    with warnings.catch_warnings():
        # A test fold may lack a class that the model predicts; balanced accuracy then
        # averages the classes present, which is what we want.
        warnings.filterwarnings("ignore", message=".*y_pred contains classes not in y_true.*")
        return classification_metrics(y, proba)


def probe_summary(predictions: pd.DataFrame, classes: Sequence) -> pd.DataFrame:
    """Scores of each probe next to chance.

    Parameters
    ----------
    predictions : DataFrame
        From :func:`confound_probes` (any out-of-fold predictions frame with the columns
        ``config, fold, subject, label_code`` and ``proba_<class>`` works).
    classes : sequence
        The class labels, in the order of the codes (``ws.classes``); they name the
        ``proba_<class>`` columns.

    Returns
    -------
    DataFrame
        One row per ``config`` with ``probe`` (the name without ``probe-``),
        ``n_windows``, ``n_subjects``, ``n_folds``; ``balanced_accuracy`` and
        ``accuracy`` of the pooled out-of-fold predictions; ``balanced_accuracy_fold_mean``
        and ``balanced_accuracy_fold_std`` (over folds, ddof 1); ``accuracy_fold_mean``,
        ``macro_f1_fold_mean`` and ``roc_auc_fold_mean`` (NaN without two classes in a
        fold), the means over folds that a summary table's ``mean`` is set against;
        ``chance`` = 1/K with K
        the classes present in ``y``: the uniform guess's expected score on both metrics,
        and the balanced accuracy of always predicting the majority class;
        ``majority_accuracy``, the accuracy of always predicting the majority class; and
        ``leak``: pooled balanced accuracy above ``chance + LEAK_MARGIN`` (0.10).
    """
    classes = list(classes)
    cols = [f"proba_{c}" for c in classes]
    need = ["config", "fold", "subject", "label_code", *cols]
    missing = [c for c in need if c not in predictions.columns]
    if missing:
        raise InputError(
            f"predictions lacks the column(s) {missing}: pass the frame confound_probes "
            "returned, with classes=ws.classes of the same windows"
        )
    rows = []
    for config, g in predictions.groupby("config", sort=False):
        y = g["label_code"].to_numpy(dtype=np.int64)
        pooled = _metrics(y, g[cols].to_numpy(dtype=float))
        folds = pd.DataFrame(
            [
                _metrics(f["label_code"].to_numpy(dtype=np.int64), f[cols].to_numpy(dtype=float))
                for _, f in g.groupby("fold", sort=True)
            ]
        )
        per_fold = folds["balanced_accuracy"].astype(float)
        counts = np.bincount(y, minlength=len(classes))
        chance = 1.0 / max(int((counts > 0).sum()), 1)
        rows.append(
            {
                "config": config,
                "probe": str(config).removeprefix("probe-"),
                "n_windows": len(g),
                "n_subjects": g["subject"].nunique(),
                "n_folds": len(per_fold),
                "balanced_accuracy": pooled["balanced_accuracy"],
                "accuracy": pooled["accuracy"],
                "balanced_accuracy_fold_mean": per_fold.mean(),
                "balanced_accuracy_fold_std": per_fold.std(ddof=1),
                **{f"{m}_fold_mean": float(folds[m].mean()) for m in FOLD_METRICS if m != _BA},
                "chance": chance,
                "majority_accuracy": counts.max() / counts.sum(),
                "leak": bool(pooled["balanced_accuracy"] > chance + LEAK_MARGIN),
            }
        )
    return pd.DataFrame(rows)


_ADVICE = {
    "position": (
        "the window's position in its recording alone predicts the label (balanced "
        "accuracy {ba:.2f}, chance {chance:.2f}): labels follow a fixed timeline, so "
        "anything that tracks time can stand in for them (a time or sample column, the "
        "window index, signals that drift through a session). Never give the model time, "
        "window index or anything derived from position; read its accuracy next to this "
        "ceiling, and vary the order of conditions between subjects when you design a study."
    ),
    "channel-means": (
        "the mean level of each channel in a window alone predicts the label (balanced "
        "accuracy {ba:.2f}, chance {chance:.2f}): the label shows in offsets (sensor "
        "placement, body weight, calibration, recording site) or in slow drift (a skin "
        "temperature that rises through a session acts as a clock), not only in the "
        "signal's shape. Check that this level is something you mean to measure, compare "
        'with per-window centring (normalize="window"), which removes it, and read '
        "accuracy next to this baseline."
    ),
    "window-levels": (
        "each channel's mean and spread in a window alone predict the label (balanced "
        "accuracy {ba:.2f}, chance {chance:.2f}): these are exactly the window statistics "
        "the model's head receives (window_stats=True, the default), so the model can "
        "reach this score without reading any shape of the signals. Read its accuracy "
        "next to this baseline, and fit with window_stats=False (--no-window-stats) when "
        "only shapes may count."
    ),
}


def probe_warnings(summary: pd.DataFrame) -> list[str]:
    """One plain-English warning per leaking probe of :func:`probe_summary`'s table.

    Returns an empty list when no probe beats chance by more than ``LEAK_MARGIN``.
    """
    need = ["config", "balanced_accuracy", "chance", "leak"]
    missing = [c for c in need if c not in summary.columns]
    if missing:
        raise InputError(
            f"summary lacks the column(s) {missing}: pass the table probe_summary returned"
        )
    out = []
    for row in summary.itertuples(index=False):
        if not bool(row.leak):
            continue
        probe = str(row.config).removeprefix("probe-")
        scores = dict(ba=row.balanced_accuracy, chance=row.chance)
        if probe in _ADVICE:
            out.append(_ADVICE[probe].format(**scores))
        else:  # a frame of other configs: say the same without the probe's explanation
            out.append(
                f"{row.config} predicts the label far above chance (balanced accuracy "
                f"{row.balanced_accuracy:.2f}, chance {row.chance:.2f}); find out what it "
                "reads before trusting a model."
            )
    return out


def probe_table(
    ws: WindowSet, folds: Sequence[Fold], probes: str | Sequence[str] = PROBES
) -> pd.DataFrame:
    """Every probe in ``probes`` on ``folds``: :func:`probe_summary`'s row for each that
    runs, and for each that cannot run on these windows (no start positions, ...) a row
    with its reason in ``not_run`` (empty for the ones that ran) and no scores.

    What :func:`medspt.evaluate` keeps as ``results.probes`` and what
    :func:`probe_table_markdown` shows; a few seconds on thousands of windows. A probe
    that :func:`confound_probes` refuses (windows without start positions or without
    labels, folds that are not subject-wise) gets the refusal as its ``not_run``; an
    unknown name in ``probes`` raises :class:`InputError`.
    """
    names = _check_probes(probes)
    runnable, not_run = [], {}
    for probe in names:
        try:
            runnable.append(confound_probes(ws, folds, probes=probe))
        except InputError as e:  # e.g. windows without start positions
            not_run[probe] = str(e)
    table = (
        probe_summary(pd.concat(runnable, ignore_index=True), ws.classes)
        if runnable
        else pd.DataFrame(columns=["config", "probe", "leak"])
    )
    table["not_run"] = ""
    missing = pd.DataFrame(
        {"config": [f"probe-{p}" for p in not_run], "probe": list(not_run), "leak": False,
         "not_run": list(not_run.values())}
    )  # fmt: skip
    table = pd.concat([table, missing], ignore_index=True) if len(missing) else table
    order = {p: k for k, p in enumerate(names)}
    return table.sort_values("probe", key=lambda p: p.map(order), kind="stable").reset_index(
        drop=True
    )


def probe_table_markdown(table: pd.DataFrame) -> str:
    """A report section from :func:`probe_table`: the probes' scores next to chance, a
    line saying why for a probe that did not run, and the warnings."""
    lines = [
        "## Confound probes",
        "",
        "Models that see only the window's position in its recording, only each channel's "
        "mean level, or each channel's mean and log standard deviation (the window "
        "statistics the model's head receives), scored on the same subject-wise folds. A "
        "model's score means little until it is read next to these.",
        "",
    ]
    reasons = table["not_run"].fillna("") if "not_run" in table else pd.Series("", table.index)
    lines += [f"- {r.probe}: not run ({why})" for r, why in zip(table.itertuples(), reasons) if why]
    ran = table[reasons == ""]
    if len(ran):
        lines += [
            "| probe | balanced accuracy (pooled) | fold mean ± std | chance | far above chance |",
            "|---|---:|---:|---:|---|",
        ]
        for r in ran.itertuples(index=False):
            lines.append(
                f"| {r.probe} | {r.balanced_accuracy:.3f} | "
                f"{r.balanced_accuracy_fold_mean:.3f} ± {r.balanced_accuracy_fold_std:.3f} | "
                f"{r.chance:.3f} | {'**yes**' if r.leak else 'no'} |"
            )
        warnings_ = probe_warnings(ran)
        if warnings_:
            lines += ["", *[f"**Warning:** {w}" for w in warnings_]]
    return "\n".join(lines) + "\n"


def probe_markdown(ws: WindowSet, folds) -> str:
    """A report section: every probe on ``folds``, their scores next to chance, and the
    warnings; a line saying why when a probe cannot run on these windows (no start
    positions) (:func:`probe_table_markdown` of :func:`probe_table`)."""
    return probe_table_markdown(probe_table(ws, folds))
