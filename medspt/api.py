"""One-call entry points: :func:`fit_spt` and :func:`evaluate`."""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from time import perf_counter

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from medspt.core.durations import to_samples
from medspt.core.splits import check_folds, subject_folds
from medspt.data import WindowSet, WindowSpec, from_arrays, make_windows
from medspt.errors import InputError
from medspt.estimator import SPTClassifier
from medspt.metrics import (
    CHANCE_METRICS,
    chance_table,
    class_report,
    classification_metrics,
    confusion_frame,
    predictions_frame,
    subject_table,
)
from medspt.stats import SUBJECT_METRICS, compare_folds, compare_subjects, holm

__all__ = [
    "CONTROLS",
    "DATA_DEFAULTS",
    "Results",
    "check_params",
    "choose_configuration",
    "config_params",
    "evaluate",
    "fit_fold",
    "fit_spt",
    "nested_best",
    "oof_frame",
    "refit_best",
    "subject_folds",
    "summarize",
    "windows_from",
]

# Label-only configurations: ``scratch`` has the fine-tuning budget of SPT;
# ``scratch-long`` trains for SPT's whole budget (pretraining + fine-tuning epochs, same
# batch size: the same number of optimizer steps), so "SPT helps" cannot mean "SPT
# trained longer"; ``scratch-alibi`` adds ALiBi's proximity bias.
CONTROLS = ("scratch", "scratch-long", "scratch-alibi")


class Results(pd.DataFrame):
    """:func:`evaluate`'s result rows (one per fold × configuration × seed), a DataFrame
    that also carries the window-level out-of-fold predictions as ``.predictions``
    (columns ``config, depth, seed, fold, window, subject, y, pred, proba_<class>``;
    ``y``/``pred`` are codes into ``.classes``). :func:`summarize` tests over subjects
    when they are there.

    Views of the out-of-fold predictions (None without them): ``.subjects`` (one row per
    configuration, depth, seed and subject: label, predicted class, its mean probability,
    windows), ``.confusion`` (confusion matrices in long form: true, predicted, count of
    windows) and ``.per_class`` (precision, recall, F1, support per class);
    :meth:`chance` gives the chance levels of a metric. With ``evaluate(refit=True)``,
    ``.best_estimator_`` is the chosen configuration refitted on all subjects and
    ``.chosen_`` says how it was chosen."""

    _metadata = ["predictions", "classes", "best_estimator_", "chosen_"]

    @property
    def _constructor(self):
        return Results

    @property
    def subjects(self) -> pd.DataFrame | None:
        pred = getattr(self, "predictions", None)
        return None if pred is None else subject_table(pred)

    @property
    def confusion(self) -> pd.DataFrame | None:
        pred = getattr(self, "predictions", None)
        return None if pred is None else confusion_frame(pred, self._class_names(pred))

    @property
    def per_class(self) -> pd.DataFrame | None:
        pred = getattr(self, "predictions", None)
        return None if pred is None else class_report(pred, self._class_names(pred))

    @staticmethod
    def _class_names(pred: pd.DataFrame) -> list[str]:
        return [str(c).removeprefix("proba_") for c in pred.columns if str(c).startswith("proba_")]

    def chance(self, metric: str = "balanced_accuracy") -> dict:
        """Chance levels of ``metric`` on the evaluated windows (subjects for
        ``subject_accuracy``): ``{"majority": ..., "uniform": ...}``
        (:func:`medspt.metrics.chance_levels`); NaN without out-of-fold predictions or
        for a metric without a chance level."""
        pred = getattr(self, "predictions", None)
        if pred is None or not len(pred) or metric not in CHANCE_METRICS:
            return {"majority": np.nan, "uniform": np.nan}  # e.g. wall_time_s has none
        return chance_table(pred, len(self._class_names(pred)), metric)


def config_params(config: str, depth: int, seed: int, params: dict | None = None) -> dict:
    """Estimator parameters of one configuration of the capacity-versus-pretraining grid.

    ``config`` is ``"scratch"``, ``"scratch-long"``, ``"scratch-alibi"`` or
    ``"spt-<masking>"``; ``params`` are the settings every configuration shares (the
    estimator's defaults fill the rest).
    """
    params = dict(params or {})
    out = dict(params, depth=int(depth), random_state=int(seed))
    if config in CONTROLS:
        out["pretrain"] = False
        if config == "scratch-long":
            # every epoch runs (no early stop; the best validation epoch's weights are
            # still kept), so the control never gets fewer steps than SPT, whose
            # fine-tuning may stop early
            defaults = SPTClassifier().get_params()
            out["epochs"] = int(params.get("epochs", defaults["epochs"])) + int(
                params.get("pretrain_epochs", defaults["pretrain_epochs"])
            )
            # SPT's two stages each get the step floor, so the control gets it twice
            out["min_steps"] = 2 * int(params.get("min_steps", defaults["min_steps"]))
            out["patience"] = None
        if config == "scratch-alibi":
            out["positional"] = "alibi"
        return out
    if not config.startswith("spt-"):
        raise InputError(f"configuration {config!r} is not one of {CONTROLS} or 'spt-<masking>'")
    out["pretrain"] = True
    out.setdefault("masking", config.removeprefix("spt-"))
    return out


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
    max_missing : float, default=0.5
        Windows (or cases) with a larger fraction of missing values are dropped.
    drop_short : bool, default=False
        Drop subjects without one complete window within a label (with a warning)
        instead of stopping with an error.
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


# How a long table is read and cut: the keyword arguments of fit_spt, shared by evaluate,
# run_study and the command line's data options, with their defaults.
DATA_DEFAULTS = {
    name: p.default
    for name, p in inspect.signature(fit_spt).parameters.items()
    if p.kind is p.KEYWORD_ONLY
}


def fit_fold(
    ws: WindowSet, train_idx: np.ndarray, test_idx: np.ndarray, params: dict
) -> tuple[dict, SPTClassifier, np.ndarray]:
    """Fit an :class:`SPTClassifier` on one fold's training windows and score its test
    windows.

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
    clf.fit(ws.X[tr], ws.classes[ws.y[tr]], groups=ws.groups[tr])
    wall = perf_counter() - t0
    proba = clf.predict_proba(ws.X[te])
    # proba columns follow clf.classes_ (sorted training classes); ws.classes may be in any
    # order (protocols fix theirs), so map by value, never by sorted position
    code = {c: i for i, c in enumerate(ws.classes.tolist())}
    full = np.zeros((len(te), len(ws.classes)))
    full[:, [code[c] for c in clf.classes_.tolist()]] = proba
    metrics = classification_metrics(ws.y[te], full, ws.groups[te])
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
        "wall_time_s": wall,
        "windows_per_s": sum(r["windows"] for r in epochs) / train_s if train_s > 0 else np.nan,
    }
    return row, clf, full


def val_score(clf: SPTClassifier) -> float:
    """Balanced accuracy of the kept epoch on the validation subjects (NaN without
    validation): what nested selection may look at, never the test folds."""
    rows = clf.history_["finetune"] + clf.history_.get("recover", [])
    vals = [r["val_balanced_accuracy"] for r in rows if "val_balanced_accuracy" in r]
    return float(max(vals)) if vals else float("nan")


def oof_frame(ws: WindowSet, test_idx: np.ndarray, proba: np.ndarray, **keys) -> pd.DataFrame:
    """Window-level out-of-fold predictions of one fit on ``ws``
    (:func:`medspt.metrics.predictions_frame`)."""
    te = np.asarray(test_idx)
    return predictions_frame(te, ws.groups[te], ws.y[te], proba, ws.classes, **keys)


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
    refit: bool = False,
    metric: str = "balanced_accuracy",
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
    label, subject, recording, time, channels, fs, window, stride, max_missing, drop_short
        How a DataFrame is read and cut, as in :func:`fit_spt`.
    refit : bool, default=False
        After the cross-validation, fit the configuration with the best validation score
        (validation subjects inside the training parts; test folds never looked at) on
        all subjects: ``results.best_estimator_`` (ready to ``save``), with the choice
        and the numbers behind it in ``results.chosen_`` and in the model's
        ``evaluation_`` (:func:`refit_best`).
    metric : str, default="balanced_accuracy"
        The metric recorded with the refitted model.
    **params
        Further :class:`~medspt.SPTClassifier` parameters shared by all configurations
        (an unknown keyword is an :class:`~medspt.InputError`; the seeds are ``seeds``,
        ``--seeds`` on the command line).

    Returns
    -------
    Results
        A DataFrame with one row per fold × configuration × seed: ``config``
        ("scratch", "scratch-long" or "spt-<masking>"), depth, masking, pretrain, seed,
        fold, window and subject counts, metrics (accuracy, balanced_accuracy, macro_f1,
        roc_auc, subject_accuracy), pretrain_epochs, finetune_epoch (the epoch whose
        weights were kept), optimizer_steps, val_subjects (held out for early stopping),
        wall time and training windows per second. ``results.predictions`` holds the
        out-of-fold predictions of every window, fit and seed (see :class:`Results`);
        :func:`summarize` uses them to test over subjects.
    """
    check_params(params, evaluate, grid=True)
    ws, spec = windows_from(
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
        max_missing=max_missing,
        drop_short=drop_short,
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
            if scratch_long and maskings:
                configs.append(dict(config="scratch-long", depth=d, masking=None, pretrain=False))
        for m in maskings:
            name = m if isinstance(m, str) else getattr(m, "__name__", "custom")
            configs.append(dict(config=f"spt-{name}", depth=d, masking=m, pretrain=True))
    if not configs:
        raise InputError("nothing to evaluate: scratch=False and no maskings")
    if isinstance(cv, (int, np.integer)):
        folds = subject_folds(ws.y, ws.groups, int(cv))
    else:
        folds = cv.split(ws.X, ws.y, ws.groups) if hasattr(cv, "split") else cv
    folds = check_folds(list(folds), ws.groups, len(ws))

    rows, predictions = [], []
    jobs = [(k, c, s) for k in range(len(folds)) for c in configs for s in seeds]
    for k, c, seed in tqdm(jobs, desc="evaluate", disable=not verbose):
        shared = dict(params) if c["masking"] is None else dict(params, masking=c["masking"])
        est_params = config_params(c["config"], c["depth"], seed, shared)
        row, _, proba = fit_fold(ws, *folds[k], est_params)
        masking = c["masking"]
        if masking is not None and not isinstance(masking, str):
            masking = "custom"
        rows.append({**c, "masking": masking, "seed": seed, "fold": k, **row})
        keys = dict(config=c["config"], depth=c["depth"], seed=seed, fold=k)
        predictions.append(oof_frame(ws, folds[k][1], proba, **keys))
    results = Results(rows)
    results.predictions = pd.concat(predictions, ignore_index=True)
    results.classes = np.asarray(ws.classes)
    results.best_estimator_ = results.chosen_ = None
    if refit:
        custom = {c["config"]: c["masking"] for c in configs if callable(c["masking"])}
        best = refit_best(
            ws, results, params, spec=spec, metric=metric, maskings=custom, verbose=verbose
        )
        results.best_estimator_, results.chosen_ = best, best.evaluation_
    return results


def _rows(results: pd.DataFrame, config: str, depth) -> pd.DataFrame:
    same_depth = results["depth"].isna() if pd.isna(depth) else results["depth"] == depth
    return results[same_depth & (results["config"] == config)]


def _predictions_of(results: pd.DataFrame, config: str, depth) -> pd.DataFrame | None:
    pred = getattr(results, "predictions", None)
    if pred is None or not len(pred):
        return None
    same_depth = pred["depth"].isna() if pd.isna(depth) else pred["depth"] == depth
    sel = pred[same_depth & (pred["config"] == config)]
    return sel if len(sel) else None


COMPARISON_COLUMNS = (
    "config", "depth", "versus", "mean", "versus_mean",
    "fold_diff", "fold_ci_low", "fold_ci_high", "fold_p", "n_folds",
    "pooled", "versus_pooled", "subject_diff", "subject_ci_low", "subject_ci_high",
    "subject_p", "n_subjects",
)  # fmt: skip


def compare(
    results: pd.DataFrame,
    a: tuple[str, float],
    b: tuple[str, float],
    metric: str = "balanced_accuracy",
    seed: int = 0,
) -> dict:
    """Paired comparison of configuration ``a = (config, depth)`` with ``b`` on identical
    folds.

    Fold level: seeds averaged within each fold, exact sign-flip test and t interval over
    folds. Subject level (when ``results.predictions`` holds both): each subject's share
    of the pooled out-of-fold metric, seeds averaged within the subject, sign-flip
    permutation test and 95 % bootstrap interval over subjects
    (:func:`medspt.stats.compare_subjects`).
    """
    ra, rb = _rows(results, *a), _rows(results, *b)
    fold = compare_folds(ra, rb, metric) if len(ra) and len(rb) else {}
    out = {
        "config": a[0],
        "depth": a[1],
        "versus": b[0],
        "mean": float(ra[metric].mean()) if len(ra) else np.nan,
        "versus_mean": float(rb[metric].mean()) if len(rb) else np.nan,
        "fold_diff": fold.get("diff", np.nan),
        "fold_ci_low": fold.get("ci_low", np.nan),
        "fold_ci_high": fold.get("ci_high", np.nan),
        "fold_p": fold.get("p_value", np.nan),
        "n_folds": fold.get("n_folds", 0),
        "pooled": np.nan,
        "versus_pooled": np.nan,
        "subject_diff": np.nan,
        "subject_ci_low": np.nan,
        "subject_ci_high": np.nan,
        "subject_p": np.nan,
        "n_subjects": 0,
    }
    pa, pb = _predictions_of(results, *a), _predictions_of(results, *b)
    if pa is not None and pb is not None and metric in SUBJECT_METRICS:
        try:
            subj = compare_subjects(pa, pb, metric, seed=seed)
        except ValueError:  # e.g. subject_accuracy on subjects with several labels
            return out
        out.update(
            pooled=subj["metric_a"],
            versus_pooled=subj["metric_b"],
            subject_diff=subj["diff"],
            subject_ci_low=subj["ci_low"],
            subject_ci_high=subj["ci_high"],
            subject_p=subj["p_value"],
            n_subjects=subj["n_subjects"],
        )
    return out


def comparison_table(
    results: pd.DataFrame,
    pairs: Sequence[tuple[tuple[str, float], tuple[str, float]]] | None = None,
    metric: str = "balanced_accuracy",
) -> pd.DataFrame:
    """Declared paired comparisons, one row each, with Holm's correction across the table.

    ``pairs`` default: at each depth, every configuration against ``scratch``, and every
    SPT configuration against ``scratch-long`` (the compute-matched control) when present.
    ``p_holm`` adjusts the subject-level p-values (the fold-level ones where no
    predictions exist) for the number of comparisons in this table;
    ``chance_majority`` / ``chance_uniform`` are the metric's chance levels.
    """
    if metric not in results.columns:
        raise InputError(f"metric {metric!r} not in the results; have {list(results.columns)}")
    if pairs is None:
        pairs = []
        for (d, c), _ in results.groupby(["depth", "config"], sort=False, dropna=False):
            # "<variant>: <config>" names (several studies side by side) pair within
            # their variant
            variant, sep, base = c.rpartition(": ")
            scratch, long = f"{variant}{sep}scratch", f"{variant}{sep}scratch-long"
            if base != "scratch" and len(_rows(results, scratch, d)):
                pairs.append(((c, d), (scratch, d)))
            if base.startswith("spt-") and len(_rows(results, long, d)):
                pairs.append(((c, d), (long, d)))
    rows = [compare(results, a, b, metric) for a, b in pairs]
    table = pd.DataFrame(rows, columns=COMPARISON_COLUMNS)
    primary = table["subject_p"].where(table["n_subjects"] > 0, table["fold_p"])
    table["test"] = np.where(table["n_subjects"] > 0, "subjects", "folds")
    table["p_holm"] = holm(primary.to_numpy(dtype=float))
    chance = _chance_of(results, metric)
    table["chance_majority"], table["chance_uniform"] = chance["majority"], chance["uniform"]
    return table


def nested_best(results: pd.DataFrame, name: str = "nested-best") -> Results:
    """The configuration chosen inside each outer fold by its validation subjects only.

    For every fold, each configuration (config × depth) is scored by ``val_score`` (the
    balanced accuracy of its kept epoch on the validation subjects held out of that fold's
    training part), averaged over seeds; the highest wins (ties: the first in the rows'
    order). Test scores are never looked at, so the returned rows — the winner's rows of
    each fold, renamed ``name`` with the winner in ``chosen`` — are an honest estimate of
    "pick the best configuration", to be compared with baselines on the same folds.
    Configurations without validation scores (``val_size=0``) cannot take part.
    """
    if "val_score" not in results.columns:
        raise InputError(
            "nested selection needs validation scores (a val_score column): fit with val_size > 0"
        )
    rows, preds = [], []
    for k, g in results.groupby("fold", sort=True):
        scores = (
            g.groupby(["config", "depth"], sort=False, dropna=False)["val_score"].mean().dropna()
        )
        if scores.empty:
            raise InputError(f"fold {k} has no configuration with a validation score")
        config, depth = scores.idxmax()
        win = _rows(g, config, depth)
        rows.append(win.assign(config=name, depth=np.nan, chosen=f"{config} (depth {depth})"))
        sel = _predictions_of(results, config, depth)
        if sel is not None:
            preds.append(sel[sel["fold"] == k].assign(config=name, depth=np.nan))
    out = Results(pd.concat(rows, ignore_index=True))
    out.predictions = pd.concat(preds, ignore_index=True) if preds else None
    out.classes = getattr(results, "classes", None)
    return out


SELECTION_RULE = (
    "the configuration (config × depth) with the highest validation score (balanced "
    "accuracy of its kept epoch on the validation subjects held out of each training "
    "part), averaged over folds and seeds; test folds are never looked at; ties go to "
    "the first configuration in the grid's order"
)


def choose_configuration(results: pd.DataFrame) -> dict:
    """The configuration a refit uses, chosen by validation subjects only
    (:data:`SELECTION_RULE`).

    Returns ``{"config", "depth", "val_score", "candidates"}`` (``candidates``: every
    configuration's mean validation score, in the grid's order).
    """
    if "val_score" not in results.columns or results["val_score"].notna().sum() == 0:
        raise InputError(
            "choosing a configuration needs validation scores (val_score): fit with "
            "val_size > 0 and at least 4 training subjects per fold"
        )
    scores = results.groupby(["config", "depth"], sort=False, dropna=False)["val_score"]
    scores = scores.mean().dropna()
    config, depth = scores.idxmax()  # first maximum: ties go to the earlier configuration
    return {
        "config": str(config),
        "depth": int(depth),
        "val_score": float(scores.max()),
        "candidates": {f"{c} (depth {int(d)})": float(v) for (c, d), v in scores.items()},
    }


def _selection_record(
    results: pd.DataFrame, chosen: dict, metric: str, source: str, params: dict
) -> dict:
    """What a refitted model keeps of the evaluation it came from (saved in its file)."""
    rows = _rows(results, chosen["config"], chosen["depth"])
    per_fold = rows.groupby("fold")[metric].mean()  # seeds of a fold averaged
    record = {
        "source": source,
        "rule": SELECTION_RULE,
        "chosen": {**{k: chosen[k] for k in ("config", "depth")}, "params": params},
        "val_score": chosen["val_score"],
        "candidates": chosen["candidates"],
        "metric": metric,
        "cv_mean": float(per_fold.mean()),
        "cv_std": float(per_fold.std(ddof=1)) if len(per_fold) > 1 else None,
        "n_folds": int(len(per_fold)),
        "n_seeds": int(rows["seed"].nunique()),
        "chance": _chance_of(results, metric),
    }
    try:  # the honest estimate of "choose, then fit": the choice made inside each fold
        nested = nested_best(results)
        fold_means = nested.groupby("fold")[metric].mean()
        record["nested_mean"] = float(fold_means.mean())
        record["nested_chosen"] = nested.groupby("fold")["chosen"].first().tolist()
    except InputError:
        record["nested_mean"] = None
    return record


def refit_best(
    ws: WindowSet,
    results: pd.DataFrame,
    params: dict | None = None,
    *,
    spec: WindowSpec | None = None,
    metric: str = "balanced_accuracy",
    source: str = "evaluate",
    maskings: Mapping | None = None,
    verbose: bool = False,
) -> SPTClassifier:
    """Fit the configuration chosen by :func:`choose_configuration` on all of ``ws``.

    ``params`` are the settings every configuration shared; the seed is the smallest of
    the evaluation; ``maskings`` maps ``spt-<name>`` to a custom masking callable. The
    model keeps in ``evaluation_`` (and in its file) the choice, the rule, every
    candidate's validation score, the chosen configuration's cross-validated ``metric``
    (``cv_mean``, seeds averaged within folds), the nested estimate of choosing then
    fitting (``nested_mean``, :func:`nested_best`) and the chance levels.
    """
    chosen = choose_configuration(results)
    shared = dict(params or {})
    if chosen["config"].startswith("spt-") and maskings and chosen["config"] in maskings:
        shared["masking"] = maskings[chosen["config"]]
    seed = int(results["seed"].min())
    est_params = config_params(chosen["config"], chosen["depth"], seed, shared)
    clf = SPTClassifier(**{**est_params, "verbose": verbose})
    clf.fit(ws, groups=ws.groups)
    clf.frame_spec_ = spec
    saved = {k: v for k, v in est_params.items() if not callable(v)}
    clf.evaluation_ = _selection_record(results, chosen, metric, source, saved)
    return clf


def summarize(results: pd.DataFrame, metric: str = "balanced_accuracy") -> pd.DataFrame:
    """Mean ± std of ``metric`` per configuration and depth (rows) over folds × seeds,
    with the gain of each configuration over scratch at the same depth and a paired test.

    Seeds of one fold share its subjects, so they are averaged before any test.
    ``gain_vs_scratch`` is the mean over folds of the seed-averaged paired differences.
    With out-of-fold predictions (``evaluate``'s :class:`Results`, a study's
    ``results_frame``) the test runs over subjects: ``subject_gain`` is the difference of
    the pooled out-of-fold metric, with its 95 % bootstrap interval
    (``ci_low``, ``ci_high``) and sign-flip permutation ``p_value`` over ``n_pairs``
    subjects; without them over folds (``n_pairs`` folds; 5 folds cannot give p below
    0.0625). ``p_holm`` is Holm-adjusted across the rows of this table; ``test`` says
    which unit was used. ``steps`` is the mean number of optimizer steps per fit.
    ``chance_majority`` / ``chance_uniform``: what the metric scores by always predicting
    the most frequent class / by guessing (:meth:`Results.chance`; NaN without
    out-of-fold predictions).
    """
    if metric not in results.columns:
        raise InputError(f"metric {metric!r} not in the results; have {list(results.columns)}")
    g = results.groupby(["depth", "config"], sort=False, dropna=False)[metric]
    out = g.agg(["mean", "std", "count"]).reset_index()
    out = out.sort_values(["depth"], kind="stable").reset_index(drop=True)
    if "optimizer_steps" in results.columns:
        steps = results.groupby(["depth", "config"], sort=False, dropna=False)["optimizer_steps"]
        means = steps.mean()
        out["steps"] = [means.get((d, c), np.nan) for d, c in zip(out["depth"], out["config"])]
    compared = [
        c != "scratch" and len(_rows(results, "scratch", d)) > 0
        for d, c in zip(out["depth"], out["config"])
    ]
    pairs = [
        ((c, d), ("scratch", d))
        for (d, c), keep in zip(zip(out["depth"], out["config"]), compared)
        if keep
    ]
    for col in ("gain_vs_scratch", "subject_gain", "ci_low", "ci_high", "p_value", "p_holm"):
        out[col] = np.nan
    out["n_pairs"], out["test"] = 0, ""
    if pairs:  # one comparison per row that has a scratch row at its depth, in row order
        comp = comparison_table(results, pairs, metric)
        subjects = (comp["n_subjects"] > 0).to_numpy()
        at = out.index[compared]
        out.loc[at, "gain_vs_scratch"] = comp["fold_diff"].to_numpy()
        out.loc[at, "subject_gain"] = comp["subject_diff"].to_numpy()
        for col, subj, fold in (
            ("ci_low", "subject_ci_low", "fold_ci_low"),
            ("ci_high", "subject_ci_high", "fold_ci_high"),
            ("p_value", "subject_p", "fold_p"),
            ("n_pairs", "n_subjects", "n_folds"),
        ):
            out.loc[at, col] = np.where(subjects, comp[subj], comp[fold])
        out.loc[at, "p_holm"] = comp["p_holm"].to_numpy()
        out.loc[at, "test"] = comp["test"].to_numpy()
        out["n_pairs"] = out["n_pairs"].astype(int)
    # what the metric scores without the signals, the same for every row
    chance = _chance_of(results, metric)
    out["chance_majority"], out["chance_uniform"] = chance["majority"], chance["uniform"]
    # attention-proximity diagnostics of the models (studies record them per fold)
    for col in ("attention_distance", "locality_ratio"):
        if col in results.columns:
            means = results.groupby(["depth", "config"], sort=False, dropna=False)[col].mean()
            out[col] = [means.get((d, c), np.nan) for d, c in zip(out["depth"], out["config"])]
    return out


def _chance_of(results: pd.DataFrame, metric: str) -> dict:
    """Chance levels of ``metric`` from a results frame's out-of-fold predictions."""
    if isinstance(results, Results) and metric in CHANCE_METRICS:
        return results.chance(metric)
    pred = getattr(results, "predictions", None)
    if pred is None or not len(pred) or metric not in CHANCE_METRICS:
        return {"majority": np.nan, "uniform": np.nan}
    return chance_table(pred, len(Results._class_names(pred)), metric)


def _signed(x) -> str:
    return "" if pd.isna(x) else f"{0.0 if abs(x) < 5e-4 else x:+.3f}"  # no "-0.000"


def _ci(lo, hi) -> str:
    return "" if pd.isna(lo) else f"[{_signed(lo)}, {_signed(hi)}]"


def _p(p) -> str:
    return "" if pd.isna(p) else ("<0.001" if p < 0.001 else f"{p:.3f}")


def markdown_table(table: pd.DataFrame, metric: str = "balanced_accuracy") -> str:
    """A :func:`summarize` table as Markdown: mean ± std, runs, optimizer steps, gain over
    scratch with its 95 % interval, p-value and Holm-adjusted p, and the models' mean
    attention distance and locality ratio when the table has them."""
    diag = "attention_distance" in table.columns and table["attention_distance"].notna().any()
    steps = "steps" in table.columns
    lines = [
        f"| depth | configuration | {metric} (mean ± std) | folds×seeds |"
        + (" steps/fit |" if steps else "")
        + " gain vs scratch | 95 % CI | p (unit) | p (Holm) |"
        + (" attention distance | locality |" if diag else ""),
        "|---:|---|---:|---:|"
        + ("---:|" if steps else "")
        + "---:|---:|---:|---:|"
        + ("---:|---:|" if diag else ""),
    ]
    for r in table.itertuples():
        p = getattr(r, "p_value", np.nan)
        unit = {"subjects": "subjects", "folds": "folds"}.get(getattr(r, "test", ""), "")
        p = "" if pd.isna(p) else f"{_p(p)} (n={r.n_pairs} {unit})".replace(" )", ")")
        gain = r.subject_gain if getattr(r, "test", "") == "subjects" else r.gain_vs_scratch
        std = 0.0 if pd.isna(r.std) else r.std
        depth = "–" if pd.isna(r.depth) else int(r.depth)
        lines.append(
            f"| {depth} | {r.config} | {r.mean:.3f} ± {std:.3f} | {r.count} |"
            + (f" {_count(r.steps)} |" if steps else "")
            + f" {_signed(gain)} | {_ci(r.ci_low, r.ci_high)} | {p} | {_p(r.p_holm)} |"
            + (f" {_num(r.attention_distance)} | {_num(r.locality_ratio)} |" if diag else "")
        )
    lines += _chance_rows(table, 1 + steps + 4 + 2 * diag)  # cells after the score
    return "\n".join(lines) + "\n"


def _chance_rows(table: pd.DataFrame, n_empty: int) -> list[str]:
    """Chance levels as the table's last rows, so no score is read without them."""
    if "chance_majority" not in table.columns or not len(table):
        return []
    major, uniform = table["chance_majority"].iloc[0], table["chance_uniform"].iloc[0]
    if pd.isna(major):
        return []
    rest = " |" * n_empty
    if np.isclose(major, uniform):
        return [f"| – | *chance* (majority class = uniform guess) | {major:.3f} |{rest}"]
    return [
        f"| – | *chance: majority class* | {major:.3f} |{rest}",
        f"| – | *chance: uniform guess* | {uniform:.3f} |{rest}",
    ]


TABLE_NOTE = (
    "Seeds of one fold share its subjects, so they are averaged before any test. *gain* is "
    "the difference to scratch at the same depth: with out-of-fold predictions, of the "
    "metric pooled over all held-out windows, tested over subjects (each subject's share "
    "of the metric, seeds averaged; two-sided sign-flip permutation test, 95 % subject "
    "bootstrap interval); otherwise the mean over folds of seed-averaged differences, "
    "tested over folds (exact sign-flip test, t interval; 5 folds cannot give p below "
    "0.0625). *p (Holm)* adjusts for the number of comparisons in the table."
)


def markdown_comparisons(table: pd.DataFrame, metric: str = "balanced_accuracy") -> str:
    """A :func:`comparison_table` as Markdown: fold-level and subject-level differences,
    intervals and p-values side by side, then Holm's adjusted p."""
    lines = [
        f"| depth | configuration | versus | {metric} (folds) | versus | diff (folds) "
        "| 95 % CI (folds) | p (folds) | diff (subjects, pooled) | 95 % CI (subjects) "
        "| p (subjects) | p (Holm) |",
        "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in table.itertuples():
        depth = "–" if pd.isna(r.depth) else int(r.depth)
        subj = r.n_subjects > 0
        lines.append(
            f"| {depth} | {r.config} | {r.versus} | {r.mean:.3f} | {r.versus_mean:.3f} | "
            f"{_signed(r.fold_diff)} | {_ci(r.fold_ci_low, r.fold_ci_high)} | "
            f"{_p(r.fold_p)} (n={r.n_folds}) | "
            + (
                f"{_signed(r.subject_diff)} | {_ci(r.subject_ci_low, r.subject_ci_high)} | "
                f"{_p(r.subject_p)} (n={r.n_subjects}) | "
                if subj
                else "– | – | – | "
            )
            + f"{_p(r.p_holm)} |"
        )
    n = int(table["p_holm"].notna().sum())
    lines += [
        "",
        f"Holm's correction over the {n} comparisons of this table, on the subject-level "
        "p-values (fold-level where no out-of-fold predictions exist).",
    ]
    if "chance_majority" in table.columns and len(table) and table["chance_majority"].notna().any():
        major, uniform = table["chance_majority"].iloc[0], table["chance_uniform"].iloc[0]
        lines.append(
            f"Chance level of {metric}: {major:.3f} (always the majority class), "
            f"{uniform:.3f} (uniform guess)."
        )
    return "\n".join(lines) + "\n"


def _count(x) -> str:
    return "" if pd.isna(x) else f"{x:,.0f}"


def _num(x) -> str:
    return "" if pd.isna(x) else f"{x:.2f}"
