"""One-call entry points: :func:`fit_spt` and :func:`evaluate`.

Also the steps they share with the study and the command line: reading a table into
windows (:func:`windows_from`), checking keyword arguments (:func:`check_params`) and
fitting one fold (:func:`fit_fold`). The tables, comparisons and the choice of a
configuration live in their own modules and are re-exported here, so
``from medspt.api import summarize`` keeps working.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from time import perf_counter

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from medspt.baselines import BASELINES, RocketBaseline, check_baselines, make_baseline
from medspt.core.errors import InputError
from medspt.core.splits import check_folds, subject_folds
from medspt.core.warn import once_per_call, warn
from medspt.data.summary import NOT_LEARNED
from medspt.data.windowing import samples_as_given, to_samples
from medspt.data.windowset import WindowSet, WindowSpec, from_arrays, make_windows
from medspt.estimator.classifier import SPTClassifier
from medspt.estimator.metrics import classification_metrics, predictions_frame
from medspt.evaluation.comparisons import COMPARISON_COLUMNS, compare, comparison_table, summarize
from medspt.evaluation.configs import CONTROLS, config_params
from medspt.evaluation.markdown_tables import (
    TABLE_NOTE,
    markdown_comparisons,
    markdown_table,
)
from medspt.evaluation.probes import probe_table
from medspt.evaluation.results import Results
from medspt.evaluation.run_cost import evaluation_estimate
from medspt.evaluation.selection import (
    SELECTION_RULE,
    choose_configuration,
    nested_best,
    refit_best,
)

__all__ = [
    "COMPARISON_COLUMNS",
    "CONTROLS",
    "DATA_DEFAULTS",
    "Results",
    "SELECTION_RULE",
    "TABLE_NOTE",
    "check_params",
    "choose_configuration",
    "compare",
    "comparison_table",
    "config_params",
    "evaluate",
    "fit_baseline_fold",
    "fit_fold",
    "fit_spt",
    "markdown_comparisons",
    "markdown_table",
    "nested_best",
    "oof_frame",
    "refit_best",
    "subject_folds",
    "summarize",
    "val_score",
    "windows_from",
]


def _keywords(function) -> tuple[str, ...]:
    """The keyword arguments a function names (not ``data`` or ``**params``)."""
    return tuple(
        name
        for name, p in inspect.signature(function).parameters.items()
        if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and name not in ("data", "df")
    )


def check_params(
    params: Mapping, function: Callable, *, grid: bool = False, in_params: bool = False
) -> None:
    """Refuse keywords that are neither :class:`SPTClassifier` parameters nor keyword
    arguments of ``function``.

    The one check behind ``fit_spt(**params)``, ``evaluate(**params)`` and
    ``run_study(params=...)``: an :class:`~medspt.InputError` names each bad keyword
    and suggests the closest known ones (``n_head`` -> ``n_heads``); ``seed`` is told
    that the seed is ``random_state`` (``--seed`` on the command line), or ``seeds`` for
    the grids (``grid=True``). ``in_params``: ``params`` is a dict argument of
    ``function``, so a keyword of ``function`` itself belongs outside it.
    """
    estimator = set(inspect.signature(SPTClassifier.__init__).parameters) - {"self"}
    where, own = function.__name__, _keywords(function)
    problems = []
    for key, value in params.items():
        if key in estimator:
            continue
        if key == "seed":
            if grid:
                problems.append(
                    f"seed={value!r}: the seeds of {where} are called seeds here (--seeds on "
                    f"the command line), e.g. seeds=({value!r},)"
                )
            else:
                problems.append(
                    f"seed={value!r}: the seed is called random_state here (--seed on the "
                    "command line)"
                )
            continue
        if in_params and key in own:
            problems.append(
                f"{key!r} is an argument of {where}() itself, not an SPTClassifier parameter: "
                f"pass {key}=... to {where}() rather than in params"
            )
            continue
        close = difflib.get_close_matches(str(key), sorted(estimator | set(own)), n=3)
        what = (
            f"unknown entry {key!r} in params of {where}()"
            if in_params
            else (f"{where}() got an unknown keyword argument {key!r}")
        )
        problems.append(
            what
            + (
                f"; did you mean {' or '.join(map(repr, close))}?"
                if close
                else "; it takes the SPTClassifier parameters (help(medspt.SPTClassifier))"
                + (f" and {', '.join(own)}" if own and not in_params else "")
            )
        )
    if problems:
        raise InputError("; ".join(problems))


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
    drop_short: bool = False,
    strict: bool = False,
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
            drop_short=drop_short,
            strict=strict,
        )
        win = ws.X.shape[2]
        step = to_samples(stride, ws.fs, "stride") if stride is not None else win
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


@once_per_call
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
    drop_short: bool = False,
    strict: bool = False,
    unlabelled=None,
    **params,
) -> SPTClassifier:
    """Fit a self-pretrained Transformer classifier on a long DataFrame of recordings.

    Parameters
    ----------
    df : DataFrame
        One row per time sample with columns ``subject``, ``label``, optionally
        ``recording`` and ``time`` (seconds), and one numeric column per channel. Arrays
        ``(X, y, groups)`` or a :class:`~medspt.data.windowset.WindowSet` also work via
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
    max_missing : float, default=0.5
        Windows (or cases) with a larger fraction of missing values (of all their values)
        are dropped, with one warning naming the subjects and the time left out; isolated
        missing values within it pass (the model treats them as hidden). A recording is
        split at a stretch of a window or more without any value (rows missing, or every
        channel NaN), with one warning; a subject left without any window is dropped with
        a warning naming it. ``clf.data_summary_`` counts all that.
    drop_short : bool, default=False
        With ``strict=True``: drop subjects left without any window (with a warning)
        instead of stopping with an error (without ``strict`` they are always dropped).
    strict : bool, default=False
        Stop with an error instead of splitting a recording at a stretch of a window or
        more without a value (in any channel) and instead of dropping a subject left
        without any window.
    unlabelled : DataFrame or WindowSet, optional
        Recordings of the same kind without labels (same channel and subject columns; a
        label column, if any, is ignored): cut into windows like ``df``, pretraining
        reconstructs them beside the labelled windows; fine-tuning never sees them.
    **params
        Any :class:`~medspt.SPTClassifier` parameter; ``masking="span"`` and
        ``pretrain=True`` by default. The seed is ``random_state`` (``--seed`` on the
        command line). An unknown keyword is an :class:`~medspt.InputError` naming the
        closest parameter.

    Returns
    -------
    SPTClassifier
        Fitted; ``predict(df)`` gives per-window and per-recording predictions. For an
        honest accuracy estimate use :func:`evaluate` (subject-wise cross-validation).
    """
    check_params(params, fit_spt)
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
            drop_short=drop_short,
            strict=strict,
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
    uws = unlabelled_windows(unlabelled, ws, spec, label=label, subject=subject,
                             recording=recording, time=time, max_missing=max_missing,
                             drop_short=drop_short, strict=strict)  # fmt: skip
    clf = SPTClassifier(**params)
    if uws is None:
        clf.fit(ws, groups=ws.groups)
    else:
        clf.fit(ws, groups=ws.groups, X_unlabelled=uws.X, groups_unlabelled=uws.groups)
    clf.frame_spec_ = spec
    clf.data_summary_.set_dropped(ws.dropped)  # what cutting the table left out or split
    return clf


def unlabelled_windows(
    unlabelled,
    ws: WindowSet,
    spec: WindowSpec | None,
    **read,
) -> WindowSet | None:
    """Unlabelled recordings cut into windows exactly like the labelled ``ws``: the same
    channels, sampling rate, window length and stride (``spec``); ``read`` holds the
    column names and cleaning options of :func:`fit_spt`. None when ``unlabelled`` is.
    """
    if unlabelled is None:
        return None
    if isinstance(unlabelled, WindowSet):
        uws = unlabelled
    elif isinstance(unlabelled, pd.DataFrame):
        if spec is None or spec.window is None:
            raise InputError(
                "unlabelled recordings are cut into windows of the labelled ones' length: "
                "give a window length (e.g. window='10s') and a long DataFrame, not "
                "window=None"
            )
        label = read.get("label", "label")
        frame = unlabelled if label in unlabelled.columns else unlabelled.assign(**{label: "?"})
        read = {**read, "channels": list(spec.channels), "fs": spec.fs}
        with samples_as_given():  # the labelled windows' lengths, in samples
            uws, _ = windows_from(frame, window=spec.window, stride=spec.stride, **read)
    else:
        raise InputError(
            f"unlabelled must be a long DataFrame or a WindowSet, got {type(unlabelled).__name__}"
        )
    if uws.X.shape[1:] != ws.X.shape[1:] or list(uws.channels) != list(ws.channels):
        raise InputError(
            f"unlabelled windows have channels {list(uws.channels)} and {uws.X.shape[2]} "
            f"steps, the labelled ones {list(ws.channels)} and {ws.X.shape[2]}: cut both the "
            "same way"
        )
    return uws


# How a long table is read and cut: the keyword arguments of fit_spt, shared by evaluate,
# run_study and the command line's data options, with their defaults.
DATA_DEFAULTS = {
    name: p.default
    for name, p in inspect.signature(fit_spt).parameters.items()
    if p.kind is p.KEYWORD_ONLY and name != "unlabelled"  # data, not how data is read
}


def fit_fold(
    ws: WindowSet,
    train_idx: np.ndarray,
    test_idx: np.ndarray,
    params: dict,
    unlabelled: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[dict, SPTClassifier, np.ndarray]:
    """Fit an :class:`SPTClassifier` on one fold's training windows (and ``unlabelled``
    windows with their subjects, for pretraining) and score its test windows.

    Returns
    -------
    row : dict
        Window counts, metrics (accuracy, balanced_accuracy, macro_f1, roc_auc,
        subject_accuracy), epochs (``finetune_epoch`` is the epoch whose weights were
        kept), optimizer steps, the validation subjects and their score (``val_score``,
        :func:`val_score`), wall time and training windows per second.
    clf : SPTClassifier
    proba : ndarray (n_test, n_classes)
        Test-window probabilities, columns in the order of ``ws.classes``.
    """
    tr, te = np.asarray(train_idx), np.asarray(test_idx)
    clf = SPTClassifier(**{**params, "verbose": False})
    t0 = perf_counter()
    Xu, gu = unlabelled if unlabelled is not None else (None, None)
    # the windows with their channel names, so that warnings and the summary name them
    clf.fit(ws.subset(tr), X_unlabelled=Xu, groups_unlabelled=gu)
    wall = perf_counter() - t0
    full, metrics = _score_test(ws, te, clf.classes_, clf.predict_proba(ws.X[te]))
    histories = getattr(clf, "member_histories_", None) or [clf.history_]
    epochs = [r for history in histories for stage in history.values() for r in stage]
    train_s = sum(r["seconds"] for r in epochs)
    row = {
        "n_train": len(tr),
        "n_test": len(te),
        "n_test_subjects": len(np.unique(ws.groups[te])),
        **metrics,
        "pretrain_epochs": len(clf.history_["pretrain"]),
        "finetune_epoch": clf.best_epoch_["finetune"],
        "optimizer_steps": int(sum(r.get("steps", 0) for r in epochs)),
        "val_subjects": " ".join(map(str, clf.validation_subjects_)),
        "val_score": val_score(clf),
        "n_unlabelled": clf.n_unlabelled_windows_,
        **_pretraining_columns(clf),
        "wall_time_s": wall,
        "windows_per_s": sum(r["windows"] for r in epochs) / train_s if train_s > 0 else np.nan,
    }
    return row, clf, full


def _pretraining_columns(clf: SPTClassifier) -> dict:
    """Did pretraining learn? The kept epoch's reconstruction loss relative to predicting
    each window's visible mean (1.0 = nothing learned), pooled, and the channels left above
    0.95 of it (NaN and "" for models that did not pretrain)."""
    info = getattr(getattr(clf, "data_summary_", None), "pretraining", None) or {}
    channels = info.get("channels") or {}
    stuck = [c for c, v in channels.items() if v is not None and v > NOT_LEARNED]
    relative = info.get("relative")
    return {
        "pretrain_relative": np.nan if relative is None else float(relative),
        "not_learned": " ".join(map(str, stuck)),
    }


def fit_baseline_fold(
    ws: WindowSet, train_idx: np.ndarray, test_idx: np.ndarray, name: str, seed: int = 0
) -> tuple[dict, RocketBaseline, np.ndarray]:
    """Fit baseline ``name`` (:data:`medspt.baselines.BASELINES`) on one fold's training
    windows and score its test windows: the same row, model and probabilities as
    :func:`fit_fold` (no epochs, optimizer steps or validation subjects)."""
    tr, te = np.asarray(train_idx), np.asarray(test_idx)
    clf = make_baseline(name, random_state=seed)
    t0 = perf_counter()
    clf.fit(ws.X[tr], ws.classes[ws.y[tr]])
    wall = perf_counter() - t0
    full, metrics = _score_test(ws, te, clf.classes_, clf.predict_proba(ws.X[te]))
    row = {
        "n_train": len(tr),
        "n_test": len(te),
        "n_test_subjects": len(np.unique(ws.groups[te])),
        **metrics,
        "pretrain_epochs": 0,
        "finetune_epoch": np.nan,
        "optimizer_steps": 0,
        "val_subjects": "",
        "val_score": np.nan,  # nothing held out: a baseline is never "chosen"
        "n_unlabelled": 0,
        "wall_time_s": wall,
        "windows_per_s": len(tr) / wall if wall > 0 else np.nan,
    }
    return row, clf, full


def _score_test(
    ws: WindowSet, te: np.ndarray, classes: np.ndarray, proba: np.ndarray
) -> tuple[np.ndarray, dict]:
    """Test probabilities over all of ``ws.classes`` and their metrics."""
    # proba columns follow the model's classes (sorted training classes); ws.classes may be
    # in any order (protocols fix theirs), so map by value, never by sorted position
    code = {c: i for i, c in enumerate(ws.classes.tolist())}
    full = np.zeros((len(te), len(ws.classes)))
    full[:, [code[c] for c in np.asarray(classes).tolist()]] = proba
    return full, classification_metrics(ws.y[te], full, ws.groups[te])


def val_score(clf: SPTClassifier) -> float:
    """Balanced accuracy of the kept epoch on the validation subjects (NaN without
    validation): what nested selection may look at, never the test folds."""
    # the kept epoch's score, not the best over epochs: a configuration that runs more
    # epochs must not get its maximum over more draws
    stage = "recover" if clf.history_.get("recover") else "finetune"
    rows, kept = clf.history_[stage], clf.best_epoch_.get(stage, 0)
    if not kept or "val_balanced_accuracy" not in rows[kept - 1]:
        return float("nan")
    return float(rows[kept - 1]["val_balanced_accuracy"])


def oof_frame(ws: WindowSet, test_idx: np.ndarray, proba: np.ndarray, **keys) -> pd.DataFrame:
    """Window-level out-of-fold predictions of one fit on ``ws``
    (:func:`medspt.estimator.metrics.predictions_frame`)."""
    te = np.asarray(test_idx)
    return predictions_frame(te, ws.groups[te], ws.y[te], proba, ws.classes, **keys)


@once_per_call
def evaluate(
    data,
    y=None,
    groups=None,
    *,
    cv: int | Iterable = 5,
    depths: Sequence[int] = (2,),
    maskings: Sequence[str] = ("span",),
    scratch: bool = True,
    scratch_long: bool = True,
    baselines: Sequence[str] = ("minirocket",),
    seeds: Sequence[int] = (0,),
    label: str = "label",
    subject: str = "subject",
    recording: str | None = "recording",
    time: str | None = "time",
    channels: Sequence[str] | None = None,
    fs: float | None = None,
    window: int | str = "auto",
    stride: int | str | None = None,
    max_missing: float = 0.5,
    drop_short: bool = False,
    strict: bool = False,
    unlabelled=None,
    refit: bool = False,
    metric: str = "balanced_accuracy",
    probes: bool = True,
    verbose: bool = True,
    **params,
) -> Results:
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
    scratch_long : bool, default=True
        With ``scratch`` and at least one masking, also train ``scratch-long``: label-only
        training for SPT's whole budget (pretraining + fine-tuning epochs, the same number
        of optimizer steps), the compute-matched control for "SPT helps".
    baselines : sequence of str, default=("minirocket",)
        Baselines fitted on the same folds with every seed (:mod:`medspt.baselines`:
        ``"minirocket"``, ``"multirocket-hydra"``; ``()`` for none). Their rows are named
        after them, with no depth; summaries and comparison tables set the configuration
        chosen by validation subjects against them, paired over subjects
        (:func:`medspt.evaluation.versus.versus_baseline`).
    label, subject, recording, time, channels, fs, window, stride, max_missing, drop_short, strict
        How a DataFrame is read and cut, as in :func:`fit_spt`; ``results.dropped``
        counts what cutting left out or split (``WindowSet.dropped``).
    unlabelled : DataFrame or WindowSet, optional
        Recordings without labels, cut like ``data``: in every fold, SPT pretrains on the
        training windows and the unlabelled ones (``scratch-long`` counts them in its
        budget; scratch and the baselines ignore them). The unlabelled windows of a fold's
        test subjects are left out of that fold, with a warning naming the subjects.
    refit : bool, default=False
        After the cross-validation, fit the configuration with the best validation score
        (validation subjects inside the training parts; test folds never looked at) on
        all subjects: ``results.best_estimator_`` (ready to ``save``), with the choice
        and the numbers behind it in ``results.chosen_`` and in the model's
        ``evaluation_`` (:func:`refit_best`).
    metric : str, default="balanced_accuracy"
        The metric recorded with the refitted model.
    probes : bool, default=True
        Also run the confound probes on the same folds (a few seconds): models that see
        only a window's position in its recording, its channel means, or its channel
        means and log standard deviations (the window statistics the model's head
        receives). Kept as ``results.probes``
        (:func:`medspt.evaluation.probes.probe_table`) and shown by :func:`summarize`.
    **params
        Further :class:`~medspt.SPTClassifier` parameters shared by all configurations
        (an unknown keyword is an :class:`~medspt.InputError`; the seeds are ``seeds``,
        ``--seeds`` on the command line).

    Returns
    -------
    Results
        A DataFrame with one row per fold × configuration × seed: ``config``
        ("scratch", "scratch-long", "spt-<masking>" or a baseline's name), depth (NaN for
        baselines), masking, pretrain, seed,
        fold, window and subject counts, metrics (accuracy, balanced_accuracy, macro_f1,
        roc_auc, subject_accuracy), pretrain_epochs, finetune_epoch (the epoch whose
        weights were kept), optimizer_steps, val_subjects (held out for early stopping),
        n_unlabelled (unlabelled windows pretrained on beside the fold's own),
        pretrain_relative and not_learned (the kept pretraining epoch's loss relative to
        predicting each window's visible mean, and the channels left above 0.95), wall time
        and training windows per second. ``results.predictions`` holds the
        out-of-fold predictions of every window, fit and seed (see :class:`Results`);
        :func:`summarize` uses them to test over subjects. ``results.probes``: the
        confound probes (None with ``probes=False``).
    """
    check_params(params, evaluate, grid=True)
    baselines = check_baselines(baselines)
    read = dict(label=label, subject=subject, recording=recording, time=time,
                max_missing=max_missing, drop_short=drop_short, strict=strict)  # fmt: skip
    cut = dict(channels=channels, fs=fs, window=window, stride=stride)
    ws, spec = windows_from(data, y, groups, **cut, **read)
    _check_labels(ws)
    uws = unlabelled_windows(unlabelled, ws, spec, **read)
    configs = _configurations(depths, maskings, scratch, scratch_long, baselines)
    folds = _resolve_folds(cv, ws)
    results = _run_fits(ws, folds, configs, seeds, params, uws, verbose)
    results.dropped = dict(ws.dropped)  # what cutting the table left out or split
    # the shortcuts' scores on the very folds the models were scored on
    results.probes = probe_table(ws, folds) if probes else None
    if refit:
        custom = {c["config"]: c["masking"] for c in configs if callable(c["masking"])}
        best = refit_best(
            ws, results, params, spec=spec, metric=metric, maskings=custom, verbose=verbose,
            unlabelled=uws,
        )  # fmt: skip
        results.best_estimator_, results.chosen_ = best, best.evaluation_
    return results


def _run_fits(
    ws: WindowSet,
    folds: list,
    configs: list[dict],
    seeds: Sequence[int],
    params: dict,
    uws: WindowSet | None,
    verbose: bool,
) -> Results:
    """Every configuration with every seed on every fold, after saying what it will
    cost; the rows and out-of-fold predictions as :class:`Results`."""
    extra = [fold_unlabelled(uws, ws.groups[te], k) for k, (_, te) in enumerate(folds)]
    jobs = [(k, c, s) for k in range(len(folds)) for c in configs for s in seeds]
    if verbose:  # the cost before it is spent
        n_u = 0 if uws is None else len(uws.X)
        print(evaluation_estimate(ws, folds, configs, seeds, params, n_u))
    fits = [
        _fit_job(ws, folds[k], k, c, seed, params, extra[k])
        for k, c, seed in tqdm(jobs, desc="evaluate", disable=not verbose)
    ]
    return _collect(fits, ws)


def fold_unlabelled(
    uws: WindowSet | None, test_groups: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray] | None:
    """The unlabelled windows (and their subjects) fold ``k`` may pretrain on: none of a
    test subject's, which are left out with a warning naming them."""
    if uws is None:
        return None
    held = np.isin(uws.groups, np.unique(test_groups))
    if held.any():
        names = ", ".join(map(str, np.unique(uws.groups[held])))
        warn(
            f"fold {k}: unlabelled windows of test subject(s) {names} left out of its "
            f"pretraining ({int(held.sum())} windows), so no test subject is seen"
        )
    return uws.X[~held], uws.groups[~held]


def _check_labels(ws: WindowSet) -> None:
    """An evaluation scores predictions of labels: it needs them, of two classes at least."""
    if ws.y is None:
        raise InputError("evaluation needs labels")
    if len(ws.classes) < 2 or len(np.unique(ws.y)) < 2:
        raise InputError("evaluation needs windows of at least 2 classes")


def _configurations(
    depths: Sequence[int],
    maskings: Sequence,
    scratch: bool,
    scratch_long: bool,
    baselines: Sequence[str] = (),
) -> list[dict]:
    """The grid's configurations at every depth, in the order of the results' rows:
    scratch, scratch-long, then SPT with each masking (a callable is named after itself);
    then the baselines, without a depth."""
    if not depths:
        raise InputError("depths is empty")
    configs = []
    for d in depths:
        if scratch:
            configs.append(dict(config="scratch", depth=d, masking=None, pretrain=False))
            if scratch_long and maskings:
                configs.append(dict(config="scratch-long", depth=d, masking=None, pretrain=False))
        for m in maskings:
            name = m if isinstance(m, str) else getattr(m, "__name__", "custom")
            configs.append(dict(config=f"spt-{name}", depth=d, masking=m, pretrain=True))
    if not configs:
        raise InputError("nothing to evaluate: scratch=False and no maskings")
    for name in baselines:
        configs.append(dict(config=name, depth=np.nan, masking=None, pretrain=False))
    return configs


def _resolve_folds(cv: int | Iterable, ws: WindowSet) -> list:
    """Subject-wise folds from a number, a splitter or explicit index pairs, each checked
    to keep every subject on one side."""
    if isinstance(cv, (int, np.integer)):
        folds = subject_folds(ws.y, ws.groups, int(cv))
    else:
        folds = cv.split(ws.X, ws.y, ws.groups) if hasattr(cv, "split") else cv
    return check_folds(list(folds), ws.groups, len(ws))


def _fit_job(
    ws: WindowSet,
    fold: tuple,
    k: int,
    config: dict,
    seed: int,
    params: dict,
    unlabelled: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[dict, pd.DataFrame]:
    """Fit one configuration with one seed on fold ``k``: its result row and its
    out-of-fold predictions. ``unlabelled`` (windows, subjects) go to the configurations
    that pretrain or count SPT's budget."""
    keys = dict(config=config["config"], depth=config["depth"], seed=seed, fold=k)
    if config["config"] in BASELINES:
        row, _, proba = fit_baseline_fold(ws, *fold, config["config"], seed)
        return {**config, "seed": seed, "fold": k, **row}, oof_frame(ws, fold[1], proba, **keys)
    masking = config["masking"]
    shared = dict(params) if masking is None else dict(params, masking=masking)
    est_params = config_params(config["config"], config["depth"], seed, shared)
    uses = est_params.get("pretrain", True) or est_params.get("steps_like_spt")
    row, _, proba = fit_fold(ws, *fold, est_params, unlabelled if uses else None)
    if masking is not None and not isinstance(masking, str):
        masking = "custom"
    row = {**config, "masking": masking, "seed": seed, "fold": k, **row}
    return row, oof_frame(ws, fold[1], proba, **keys)


def _collect(fits: list[tuple[dict, pd.DataFrame]], ws: WindowSet) -> Results:
    """The rows of every fit as :class:`Results`, with their out-of-fold predictions."""
    results = Results([row for row, _ in fits])
    results.predictions = pd.concat([pred for _, pred in fits], ignore_index=True)
    results.classes = np.asarray(ws.classes)
    results.best_estimator_ = results.chosen_ = results.probes = None
    return results
