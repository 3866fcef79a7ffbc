"""`SPTClassifier`: a scikit-learn classifier for windows ``X (N, C, T)``.

With ``pretrain=True`` (the default) it first trains the Transformer to reconstruct masked
parts of its own training windows, then fine-tunes it on the labels; with
``pretrain=False`` it trains the same architecture from scratch with the same budget.
"""

from __future__ import annotations

import dataclasses
import time
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from medspt.core.errors import InputError
from medspt.core.jsonable import to_jsonable
from medspt.core.params import Rule, check, flag, integer, interval, is_integer, is_real, one_of
from medspt.core.splits import validation_split
from medspt.core.stats import balanced_class_weights, channel_stats
from medspt.core.warn import once_per_call, warn
from medspt.data.channels import flat_channel_message
from medspt.data.summary import NOT_LEARNED, DataSummary, case_lengths
from medspt.data.windowing import samples_as_given
from medspt.data.windowset import WindowSet, WindowSpec, make_windows
from medspt.estimator.auto import (
    FEWEST_TOKENS,
    batch_size_for,
    mask_run_for,
    n_estimators_for,
    patch_len_for,
    token_stride_for,
)
from medspt.estimator.cost import estimate_fit
from medspt.estimator.metrics import (
    chance_levels,
    class_report,
    classification_metrics,
    confusion_frame,
    predictions_frame,
    recording_level,
    subject_table,
)
from medspt.estimator.model_file import (
    classes_to_json,
    write_model_file,
)
from medspt.nn.augment import check_augment
from medspt.nn.masking import STRATEGIES, resolve_channel_groups
from medspt.nn.model import MODEL_RULES, ModelConfig, SPTTransformer, check_model_params
from medspt.nn.training import TrainConfig, finetune, pretrain, resolve_device

__all__ = ["SPTClassifier", "FramePredictions", "TrainingData"]


@dataclass
class FramePredictions:
    """Predictions for a long DataFrame.

    Attributes
    ----------
    windows : DataFrame
        One row per window: subject, recording, ``start`` and ``stop`` (sample positions
        in the recording: ``start`` counts samples from the recording's first sample, 0,
        on the grid the windows were cut on, after sorting by time and any resampling to
        the model's rate; ``stop`` is one past the window's last sample), ``start_s`` and
        ``stop_s`` (the same positions in seconds, ``start / fs``, with the same origin;
        add the recording's first time value to read them on its own clock; only when
        the sampling rate is known), ``predicted``, one ``proba_<class>`` column per
        class, and ``label`` when the frame had labels.
    recordings : DataFrame
        One row per recording (subject × recording): the mean class probability over its
        windows and the class with the highest mean (the aggregation rule), plus the
        number of windows and the majority true label when known.
    scores : DataFrame or None
        With labels: one row per level, index ``level``: ``window``, ``recording`` (its
        majority label against its predicted class) and ``subject`` (only when every
        subject has a single label; mean window probability, then argmax). Columns
        ``n``, ``accuracy``, ``balanced_accuracy``, ``macro_f1`` and the accuracy a
        classifier that ignores the signals reaches on that level's true labels:
        ``chance_majority`` (always the most frequent class) and ``chance_uniform``
        (``1/K``). Balanced accuracy's chance is ``1/K`` for both. None without labels.
    confusion : DataFrame or None
        Window-level confusion matrix, ``K × K`` in the model's class order: index = true
        class, columns = predicted class, counts of windows (sklearn's
        :func:`~sklearn.metrics.confusion_matrix`). None without labels.
    per_class : DataFrame or None
        Window-level precision, recall, F1 and support per class (index ``class``).
        None without labels.
    subjects : DataFrame or None
        One row per subject: its ``label`` (empty when its windows carry several),
        ``predicted`` (highest mean window probability), ``probability`` of that class,
        ``correct``, ``n_windows``, windows right and window ``accuracy``, and the mean
        probability of every class (:func:`medspt.estimator.metrics.subject_table`). None without
        labels.
    """

    windows: pd.DataFrame
    recordings: pd.DataFrame
    scores: pd.DataFrame | None = None
    confusion: pd.DataFrame | None = None
    per_class: pd.DataFrame | None = None
    subjects: pd.DataFrame | None = None

    def __repr__(self) -> str:
        head = f"FramePredictions({len(self.windows)} windows, {len(self.recordings)} recordings)"
        if self.scores is None:
            return f"{head}\n{self.recordings.head(10).to_string()}"
        return f"{head}\n{self.scores.to_string(float_format=lambda x: f'{x:.3f}')}"


def _codes(labels, classes: np.ndarray) -> np.ndarray:
    """Positions of ``labels`` in ``classes`` (the model's class order)."""
    index = {c: k for k, c in enumerate(classes.tolist())}
    return np.asarray([index[v] for v in np.asarray(labels).tolist()], dtype=np.int64)


def _level_scores(y: np.ndarray, proba: np.ndarray, n_classes: int) -> dict:
    """Accuracy, balanced accuracy, macro F1 and the accuracy chance levels of one level
    (windows, recordings or subjects): true codes ``y`` against ``proba``'s argmax."""
    with warnings.catch_warnings():
        # new data may lack classes the model knows (all K are passed): not a problem
        warnings.filterwarnings("ignore", message="y_pred contains classes not in y_true")
        warnings.filterwarnings("ignore", message="A single label was found")
        m = classification_metrics(y, proba)
    chance = chance_levels(y, n_classes, "accuracy")
    return {
        "n": len(y),
        "accuracy": m["accuracy"],
        "balanced_accuracy": m["balanced_accuracy"],
        "macro_f1": m["macro_f1"],
        "chance_majority": chance["majority"],
        "chance_uniform": chance["uniform"],
    }


def _frame_report(
    win: pd.DataFrame, rec: pd.DataFrame, proba: np.ndarray, y: np.ndarray, classes: np.ndarray
) -> dict:
    """``scores``, ``confusion``, ``per_class`` and ``subjects`` of labelled frame
    predictions; ``y`` are window codes into ``classes``, ``proba`` is (N, K)."""
    K = len(classes)
    cols = [f"proba_{c}" for c in classes]
    subject = win["subject"].to_numpy()
    pf = predictions_frame(np.arange(len(win)), subject, y, proba, classes, fold=-1)

    long = confusion_frame(pf, classes)
    confusion = pd.DataFrame(
        long["count"].to_numpy().reshape(K, K),  # rows listed true-major, in class order
        index=pd.Index(classes, name="label"),
        columns=pd.Index(classes, name="predicted"),
    )
    per_class = class_report(pf, classes).set_index("class")

    subjects = subject_table(pf).drop(columns="fold")
    # subject_table works on text; give back the frame's own subject ids and class names
    as_text = {str(c): c for c in classes.tolist()}
    subjects["subject"] = subjects["subject"].map(dict(zip(subject.astype(str), subject)))
    subjects["label"] = subjects["label"].map(as_text)
    subjects["predicted"] = subjects["predicted"].map(as_text)
    first = ["subject", "label", "predicted", "probability", "correct", "n_windows"]
    subjects = subjects[first + [c for c in subjects.columns if c not in first]]

    rows = {
        "window": _level_scores(y, proba, K),
        "recording": _level_scores(_codes(rec["label"], classes), rec[cols].to_numpy(), K),
    }
    if subjects["label"].notna().all():  # a subject label exists only if it never changes
        rows["subject"] = _level_scores(
            _codes(subjects["label"], classes), subjects[cols].to_numpy(), K
        )
    scores = pd.DataFrame.from_dict(rows, orient="index").rename_axis("level")
    scores["n"] = scores["n"].astype(int)
    return dict(scores=scores, confusion=confusion, per_class=per_class, subjects=subjects)


def _kept_pretraining_row(history: dict, best: dict, recovery_stage: str | None) -> dict | None:
    """The history row of the pretraining epoch whose weights a member kept (its recovery
    epoch when full-attention recovery ended pretraining), or None without pretraining."""
    stage = "recover" if recovery_stage == "pretrain" and history.get("recover") else "pretrain"
    rows, kept = history.get(stage) or [], best.get(stage, 0)
    if not rows or not kept or "train_relative" not in rows[kept - 1]:
        return None
    return rows[kept - 1]


def _plain_classes(classes: np.ndarray) -> np.ndarray:
    """Text class labels as an object array of Python strings, so that they print as
    ``'a'`` (not ``np.str_('a')``) in lists and messages, as a loaded model's do."""
    if classes.dtype.kind not in "USO":
        return classes
    plain = np.empty(len(classes), dtype=object)
    plain[:] = [c.item() if isinstance(c, np.generic) else c for c in classes]
    return plain


def _is_long_frame(est, X) -> bool:
    return isinstance(X, pd.DataFrame) and getattr(est, "frame_spec_", None) is not None


# The training recipe before the defaults were chosen by inner validation: recorded runs
# (the paper table, the sensitivity sweep, the demo) pin it so they do not move.
PAPER_RECIPE = dict(
    embedding="patch",  # the model before round 4 of the selection (issue 28)
    positional="learned",
    attn_dropout=None,
    mask_unit="step",
    mask_ratio=0.15,
    normalize=True,
    augment=None,
    label_smoothing=0.0,
    min_steps=0,
    no_decay_norms=False,
    encoder_lr_scale=1.0,
)


NORMALIZE = (True, False, "channel", "window", "instance")

# One rule per training parameter (medspt.core.params). The settings passed on to the model
# (depth, d_model, dropout, attention, ...) are checked by medspt.nn.model.MODEL_RULES only.
ESTIMATOR_RULES: dict[str, Rule] = {
    "patch_len": MODEL_RULES["patch_len"].or_auto(),  # "auto" is resolved in fit
    "positional": MODEL_RULES["positional"].or_auto(),
    "batch_size": integer(1).or_auto(),
    "epochs": integer(1),
    "pretrain_epochs": integer(0),
    "recover_epochs": integer(0),
    "min_steps": integer(0),
    "n_estimators": integer(1).or_auto(),  # "auto": five members below 300 windows
    "encoder_lr_scale": interval("(0, 1]"),
    "label_smoothing": interval("[0, 1)"),
    "hierarchical_stages": one_of(("all", "pretrain"), must="be 'all' or 'pretrain'"),
    "masking": Rule(
        lambda v: callable(v) or v in STRATEGIES, f"be one of {STRATEGIES} or a callable"
    ),
    "mask_ratio": Rule(
        lambda v: is_real(v) and 0 < v < 1, "lie strictly between 0 and 1, i.e. in (0, 1)"
    ),
    "normalize": Rule(
        # 1 == True: only a bool or a name counts
        lambda v: isinstance(v, (bool, str)) and v in NORMALIZE,
        "be True, 'channel', 'window', 'instance' or False",
    ),
    "mean_span": Rule(lambda v: is_real(v) and v >= 1, "be >= 1 step"),
    "mask_unit": one_of(("step", "token"), must="be 'step' or 'token'"),
    "lr": Rule(lambda v: is_real(v) and v > 0, "be positive"),
    "weight_decay": Rule(lambda v: is_real(v) and v >= 0, "be >= 0"),
    "warmup": interval("[0, 1)"),
    "grad_clip": Rule(lambda v: v is None or (is_real(v) and v > 0), "be positive or None"),
    "patience": Rule(
        lambda v: v is None or (is_integer(v) and v >= 1), "be a positive integer or None"
    ),
    "val_size": interval("[0, 1)"),
    "min_val_subjects": integer(0),
    "steps_like_spt": flag(),
    "class_weight": Rule(
        lambda v: v in ("balanced", None) or isinstance(v, dict),
        "be 'balanced', a dict {class: weight} or None",
    ),
    "amp": flag(),
}


@dataclass
class TrainingData:
    """What every training stage of :meth:`SPTClassifier.fit` reads.

    Attributes
    ----------
    X_train, X_val : Tensor of shape (n, C, T), float32
        Normalized windows of the training and of the validation subjects (NaN =
        missing); ``X_val`` is empty without validation.
    y_train, y_val : Tensor of shape (n,), int64
        Their class codes, positions in ``classes_``.
    channel_groups : list of list of int, optional
        Channels ``masking="channel"`` hides together, as indices.
    X_unlabelled : Tensor of shape (m, C, T), optional
        Normalized windows without labels: pretraining reconstructs them beside
        ``X_train``; fine-tuning never sees them.
    """

    X_train: torch.Tensor
    y_train: torch.Tensor
    X_val: torch.Tensor
    y_val: torch.Tensor
    channel_groups: list[list[int]] | None = None
    X_unlabelled: torch.Tensor | None = None

    @property
    def X_pretrain(self) -> torch.Tensor:
        """What pretraining reconstructs: the training windows, then the unlabelled ones."""
        if self.X_unlabelled is None or not len(self.X_unlabelled):
            return self.X_train
        return torch.cat([self.X_train, self.X_unlabelled])


class SPTClassifier(ClassifierMixin, BaseEstimator):
    """Transformer classifier with optional self-pretraining on its own training data.

    The defaults came out of seven selection rounds scored on inner validation splits of
    training subjects and cases (``benchmarks/results/select_defaults.md`` and
    ``select_model.md``); some rounds were designed after test-fold reports had been read,
    as ``docs/concepts.md`` tells, and the default is frozen
    (:mod:`medspt.estimator.defaults`): convolutional tokens with learned relative positions and a
    budget of at least 1,500 optimizer steps per stage (round 4), whole-token masks at
    0.4, per-window instance normalization, label smoothing and no augmentation (rounds
    1-3). Token stride and batch size follow the data (``"auto"``, :mod:`medspt.estimator.auto`).

    Parameters
    ----------
    depth : int, default=2
        Number of Transformer blocks.
    d_model : int, default=64
        Token width; must be divisible by ``n_heads``.
    n_heads : int, default=4
    patch_len : int or "auto", default="auto"
        Time steps per token. Patching is what makes training fast. ``"auto"``: from the
        window (or longest case) length, :func:`medspt.estimator.auto.patch_len_for`: 8 for
        windows of
        96 steps or more, less for shorter ones (at least 12 tokens), more for windows over
        4,096 steps (at most 512 tokens). With ``embedding="conv"`` (the default) it is the
        token stride: ``"auto"`` gives the smallest stride that leaves at most 64 tokens
        (:func:`medspt.estimator.auto.token_stride_for`: 1 up to 64 steps, 4 for 200).
    embedding : {"conv", "patch"}, default="conv"
        How steps become tokens. ``"patch"``: each patch is flattened and embedded
        linearly (the SPT paper's setting). ``"conv"``: multi-scale dilated convolutions
        per channel (shapes of 9 to 97 steps) evaluated at each token's centre and a
        pointwise convolution that mixes the channels (:class:`medspt.nn.model.ConvTokenizer`);
        chosen in round 4 of the selection (``benchmarks/results/select_model.md``). With
        ``"conv"`` and ``mask_unit="token"`` a mask hides runs of about a sixteenth of the
        window (:func:`medspt.estimator.auto.mask_run_for`): the convolutions would interpolate
        single hidden steps from their neighbours.
    dropout : float, default=0.1
    attn_dropout : float or None, default=0.0
        Dropout of the attention weights; None = ``dropout``. 0 (the default) keeps
        torch's fused attention kernel on the CPU: several times faster for windows of
        hundreds of tokens.
    positional : {"auto", "relative", "learned", "sinusoidal", "alibi", "none"}, default="auto"
        Where a token sits in the window. ``"alibi"`` adds no embedding but biases every
        attention score by ``-m_h·|i−j|`` (a fixed proximity prior; full attention only).
        ``"relative"`` learns one bias per head and token distance (eRPE-like; distances
        beyond the training length share the last one, so longer cases can be predicted;
        full attention only). ``"auto"``: ``"relative"`` with full attention (chosen in
        round 4 of the selection), ``"learned"`` with hierarchical attention.
    pooling : {"mean", "cls"}, default="mean"
    attention : {"full", "hierarchical"}, default="full"
        Attention module. ``"hierarchical"`` attends over a pooled pyramid of tokens
        (:class:`medspt.nn.attention.HierarchicalAttention`): cost grows about linearly with
        the number of tokens, for long windows. More kinds can be registered in
        :mod:`medspt.nn.model`.
    attention_options : dict, optional
        Keyword arguments of the attention module, e.g. ``{"topk": 8, "tile": 16}``.
    recover_epochs : int, default=0
        With ``attention="hierarchical"``: epochs of *full* attention (same weights) that
        end training, as in Lighthouse Attention; the fitted model then predicts with full
        attention. 0 keeps hierarchical attention throughout.
    hierarchical_stages : {"all", "pretrain"}, default="all"
        Where hierarchical attention is used: ``"all"`` (recovery ends fine-tuning), or
        ``"pretrain"`` only (recovery ends pretraining; fine-tuning uses full attention).
    pretrain : bool, default=True
        Self-pretrain with masked reconstruction before fine-tuning.
    masking : {"random", "span", "channel", "block"} or callable, default="span"
        What is hidden during pretraining (see :mod:`medspt.nn.masking`).
    mask_ratio : float, default=0.4
        Expected fraction of values hidden, strictly between 0 and 1.
    mask_unit : {"step", "token"}, default="token"
        What a mask hides: single time steps (the SPT paper's setting), or whole patch
        tokens (``patch_len`` steps; ``mean_span`` then counts tokens). Step-level masks
        inside a patch are mostly interpolation, since the patch embedding sees the
        hidden step's visible neighbours; token masks make the encoder predict what it
        cannot see at all.
    mean_span : float, default=3.0
        Mean length (in steps) of hidden spans / blocks.
    channel_groups : list or dict, optional
        Channels hidden together by ``masking="channel"`` (indices or names).
    pretrain_epochs, epochs : int, default=10, 15
        Maximum epochs of pretraining and of fine-tuning (early stopping may end sooner),
        raised where needed to reach ``min_steps``.
    batch_size : int or "auto", default="auto"
        ``"auto"``: from the number of training windows,
        :func:`medspt.estimator.auto.batch_size_for`: 64 for 512 or more, down to 8 for small sets,
        so an epoch makes about 8 optimizer steps or more.
    lr : float, default=1e-3
        Peak learning rate (AdamW, linear warm-up then cosine decay).
    weight_decay : float, default=0.01
    warmup : float, default=0.1
        Fraction of steps spent warming up.
    grad_clip : float or None, default=1.0
    patience : int or None, default=10
        Early-stopping patience in epochs, on the balanced accuracy of the validation
        subjects (ties broken by their loss; never before a
        third of ``epochs`` has run). With None all epochs run; the weights of the best
        validation epoch are still kept.
    val_size : float, default=0.2
        Fraction of training *subjects* held out for early stopping and model selection
        (needs at least 4 subjects; 0 disables validation: all epochs, final weights).
    min_val_subjects : int, default=0
        Early stopping and best-epoch weights only when the validation part holds at
        least this many subjects; with fewer, every epoch runs and the final weights are
        kept (validation is still scored). On a handful of validation cases the best epoch
        is mostly noise, and it is often an early one.
    augment : None, str or list of str, default=None
        Augment fine-tuning batches (never the validation or prediction windows):
        ``"jitter"``, ``"scale"``, ``"channel_dropout"``, ``"shift"``, ``"mixup"``
        (:mod:`medspt.nn.augment`), as a list or a comma-separated string; None for none.
        None by default: jitter + scaling + time shift did not help on the protocols'
        inner validation and cost up to 0.4 accuracy on small public sets (time-shape
        classes), see ``benchmarks/results/select_defaults.md``, round 2.
    label_smoothing : float, default=0.1
        Label smoothing of the fine-tuning loss, in [0, 1).
    min_steps : int, default=1500
        Floor on the optimizer steps of each stage: with few training windows, an epoch
        is a handful of steps, so the number of epochs is raised until a stage makes at
        least this many (``epochs`` / ``pretrain_epochs`` still count when larger).
    steps_like_spt : bool, default=False
        With ``pretrain=False``: fine-tune for the whole budget an SPT fit with the same
        parameters would resolve (its pretraining stage's epochs plus its fine-tuning
        stage's epochs, each raised to ``min_steps``), so that the label-only model gets at
        least SPT's optimizer steps by construction: the compute-matched control
        ``scratch-long`` of :func:`medspt.evaluate`. Its early stopping is scratch's
        (``patience``), and an epoch that ends inside its warm-up is never kept.
    no_decay_norms : bool, default=True
        No weight decay on biases, norm weights, positions and the class token.
    encoder_lr_scale : float, default=0.5
        When fine-tuning after pretraining, the encoder trains at ``lr * encoder_lr_scale``
        and the new classification head at ``lr`` (e.g. 0.3: the pretrained encoder moves
        less). Ignored without pretraining.
    n_estimators : int or "auto", default="auto"
        Models trained (seeds ``random_state``, ``random_state + 1``, ...) on the same
        split and averaged in probability; one model file holds them all. ``"auto"``:
        five when ``fit`` gets fewer than 300 labelled windows (a small set, where a fit is
        cheap and one seed's luck moves the score most), else one
        (:func:`medspt.estimator.auto.n_estimators_for`); ``n_estimators_`` holds the
        number used.
    class_weight : {"balanced"} or None, default="balanced"
        Weight the loss by inverse class frequency.
    linear_probe : bool, default=False
        After pretraining, train only the classification head.
    normalize : {True, "channel", "window", "instance", False}, default="instance"
        True or ``"channel"``: standardize each channel with statistics of the training
        windows (NaN ignored). ``"window"``: first subtract each window's own mean per
        channel, then scale each channel by the training windows' spread. This removes
        offsets that differ between subjects (baseline skin conductance, body weight on a
        force sensor) and keeps the dynamics; ``benchmarks/results/paper_table.md``
        compares both on the real protocols. ``"instance"``: the channel scaling, then
        inside the model every window is standardized per channel (RevIN-style) by the
        mean and std of the values the model may see; during pretraining the hidden values
        are left out of those statistics (so they leak neither level nor spread) and the
        reconstruction is scored in that normalized space. False: raw values.
    window_stats : bool, default=True
        Also give the classifier each window's mean and log standard deviation per channel
        (of its observed values), added to the pooled token states through a linear layer
        of the head. Instance normalization takes levels and spreads from the tokens; this
        hands them back to the classification (not to pretraining, which they would leak).
        The default since round 6 of the model choice (inner validation, a round designed
        after NE-1's test folds showed the previous default behind MiniRocket;
        ``benchmarks/results/select_model.md``); False when only shapes may count, and
        read every result next to the window-levels probe, which sees these features alone.
    device : str, default="auto"
        "auto", "cpu", "cuda" or "cuda:1".
    amp : bool, default=False
        Automatic mixed precision on CUDA: forward passes run under bf16 autocast (losses
        in float32, no loss scaling needed), which is faster on recent GPUs. Ignored on the
        CPU, where results are those of ``amp=False``. Prediction runs in float32.
    random_state : int, default=0
        Seed of initialization, masks, shuffling and the validation split.
    verbose : bool, default=False
        Show progress bars.

    Attributes
    ----------
    classes_ : ndarray
    model_ : SPTTransformer
    history_ : dict
        ``{"pretrain": [...], "finetune": [...]}``, one dict per epoch (first member).
        Pretraining rows also hold the loss relative to predicting each window's visible
        mean (1.0 = nothing learned): ``val_relative`` and ``val_relative_channels`` (one
        value per channel, on the validation subjects), ``train_relative`` and
        ``train_relative_channels`` (on the training batches).
    pretrain_relative_ : dict or None
        ``{channel: relative loss}`` at the kept pretraining epoch (on the validation
        subjects; on the training windows without validation), the mean over the
        ensemble's members; NaN for a channel with nothing to predict (constant wherever it
        was hidden). A channel above 0.95 gets a warning at the end of ``fit``. None
        without pretraining.
    members_ : list of SPTTransformer
        The ensemble's models (``model_`` is the first); ``member_histories_`` their
        histories.
    best_epoch_ : dict
        The epoch of each stage whose weights were kept: the best validation epoch, or
        the last epoch when there is no validation (``val_size=0``, < 4 subjects).
    validation_subjects_ : ndarray
        Training subjects held out for early stopping (empty without validation); from
        :func:`medspt.core.splits.validation_split`, as every benchmark uses.
    n_unlabelled_windows_ : int
        Unlabelled windows pretraining reconstructed beside the training windows (0
        without ``X_unlabelled``; those of validation subjects are left out).
    attention_ : str
        Attention the fitted model predicts with (``"full"`` after recovery epochs).
    mean_, std_ : ndarray of shape (C,)
        Per-channel normalization statistics from the training windows.
    n_features_in_ : int
        Number of channels (``X.shape[1]``).
    n_steps_ : int
        Window length the model was trained on.
    channels_ : list of str
    frame_spec_ : WindowSpec or None
        How a long DataFrame is cut into windows (set by :func:`medspt.fit_spt`).
    """

    def __init__(
        self,
        depth: int = 2,
        d_model: int = 64,
        n_heads: int = 4,
        patch_len: int | str = "auto",
        embedding: str = "conv",
        dropout: float = 0.1,
        attn_dropout: float | None = 0.0,
        positional: str = "auto",
        pooling: str = "mean",
        attention: str = "full",
        attention_options: dict | None = None,
        recover_epochs: int = 0,
        hierarchical_stages: str = "all",
        pretrain: bool = True,
        masking="span",
        mask_ratio: float = 0.4,
        mask_unit: str = "token",
        mean_span: float = 3.0,
        channel_groups=None,
        pretrain_epochs: int = 10,
        epochs: int = 15,
        batch_size: int | str = "auto",
        lr: float = 1e-3,
        weight_decay: float = 0.01,
        warmup: float = 0.1,
        grad_clip: float | None = 1.0,
        patience: int | None = 10,
        val_size: float = 0.2,
        min_val_subjects: int = 0,
        augment=None,
        label_smoothing: float = 0.1,
        min_steps: int = 1500,
        steps_like_spt: bool = False,
        no_decay_norms: bool = True,
        encoder_lr_scale: float = 0.5,
        n_estimators: int | str = "auto",
        class_weight: str | None = "balanced",
        linear_probe: bool = False,
        normalize: bool | str = "instance",
        window_stats: bool = True,
        device: str = "auto",
        amp: bool = False,
        random_state: int = 0,
        verbose: bool = False,
    ):
        self.depth = depth
        self.d_model = d_model
        self.n_heads = n_heads
        self.patch_len = patch_len
        self.embedding = embedding
        self.dropout = dropout
        self.attn_dropout = attn_dropout
        self.positional = positional
        self.pooling = pooling
        self.attention = attention
        self.attention_options = attention_options
        self.recover_epochs = recover_epochs
        self.hierarchical_stages = hierarchical_stages
        self.pretrain = pretrain
        self.masking = masking
        self.mask_ratio = mask_ratio
        self.mask_unit = mask_unit
        self.mean_span = mean_span
        self.channel_groups = channel_groups
        self.pretrain_epochs = pretrain_epochs
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.weight_decay = weight_decay
        self.warmup = warmup
        self.grad_clip = grad_clip
        self.patience = patience
        self.val_size = val_size
        self.min_val_subjects = min_val_subjects
        self.augment = augment
        self.label_smoothing = label_smoothing
        self.min_steps = min_steps
        self.steps_like_spt = steps_like_spt
        self.no_decay_norms = no_decay_norms
        self.encoder_lr_scale = encoder_lr_scale
        self.n_estimators = n_estimators
        self.class_weight = class_weight
        self.linear_probe = linear_probe
        self.normalize = normalize
        self.window_stats = window_stats
        self.device = device
        self.amp = amp
        self.random_state = random_state
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.three_d_array = True
        tags.input_tags.allow_nan = True
        tags.non_deterministic = False
        return tags

    # ------------------------------------------------------------------ validation

    def _check_params(self) -> None:
        """Check every parameter once: the model's settings by
        :data:`medspt.nn.model.MODEL_RULES`, the others by :data:`ESTIMATOR_RULES`, then the
        settings that must agree with each other."""
        params = self.get_params()
        check_model_params(
            {k: v for k, v in params.items() if k in MODEL_RULES and k not in ESTIMATOR_RULES}
        )
        check(params, ESTIMATOR_RULES)
        check_augment(self.augment)
        if self.recover_epochs and self.attention == "full":
            raise InputError(
                "recover_epochs > 0 needs attention='hierarchical' (or another non-full "
                f"attention), got attention={self.attention!r}"
            )
        if self.mask_unit == "token" and callable(self.masking):
            raise InputError(
                "mask_unit='token' needs a named masking strategy; a callable draws its own "
                "step-level mask"
            )
        try:
            resolve_device(self.device)
        except (RuntimeError, ValueError) as e:
            raise InputError(f"device={self.device!r}: {e}") from None

    def _prepare_X(self, X, *, reset: bool) -> np.ndarray:
        """Validate X and return float32 (N, C, T)."""
        if isinstance(X, WindowSet):
            X = X.X
        X = validate_data(
            self,
            X,
            reset=reset,
            allow_nd=True,
            ensure_all_finite="allow-nan",
            dtype=np.float32,
            ensure_min_features=1,
        )
        if X.ndim == 2:
            X = X[:, None, :]  # one channel; n_features_in_ is then the length T
        if X.ndim != 3:
            raise InputError(f"X must have shape (N, C, T) or (N, T), got {X.shape}")
        if not reset:
            if X.shape[1] != len(self.channels_) and len(self.channels_) > 1:
                raise InputError(
                    f"X has {X.shape[1]} channels, but the model was fitted on "
                    f"{len(self.channels_)} ({self.channels_})"
                )
        return np.ascontiguousarray(X, dtype=np.float32)

    # ------------------------------------------------------------------ fit

    @once_per_call
    def fit(self, X, y=None, groups=None, X_unlabelled=None, groups_unlabelled=None):
        """Pretrain (optionally) and fine-tune on windows.

        Holds out validation subjects, normalizes, then trains each ensemble member:
        masked-reconstruction pretraining, fine-tuning on the labels and, with
        hierarchical attention, ``recover_epochs`` of full attention.

        Parameters
        ----------
        X : array-like of shape (N, C, T) or (N, T), or WindowSet
            Windows; NaN marks missing values.
        y : array-like of shape (N,)
            Class labels (taken from ``X`` when it is a WindowSet).
        groups : array-like of shape (N,), optional
            Subject of each window. Early stopping then holds out whole subjects;
            without groups every window counts as its own subject.
        X_unlabelled : array-like of shape (M, C, T) or (M, T), or WindowSet, optional
            Windows without labels, of the same channels and length: pretraining
            reconstructs them beside the training windows (and counts them in its
            budget); fine-tuning never sees them. Normalized with the labelled training
            windows' statistics.
        groups_unlabelled : array-like of shape (M,), optional
            Their subjects (taken from a WindowSet): windows of the validation subjects
            are left out, so the held-out subjects stay unseen.
        """
        self._check_params()
        X, y, groups, source = self._validate_training_data(X, y, groups)
        unlabelled, unlabelled_groups = self._validate_unlabelled(
            X_unlabelled, groups_unlabelled, X.shape
        )
        t_start = time.perf_counter()
        # the steps: split -> normalize -> per member pretrain -> fine-tune -> recover
        train, val = self._split(y, groups)
        unlabelled = self._unlabelled_outside_validation(unlabelled, unlabelled_groups)
        self._resolve_sizes(X, n_train=len(train))
        self.data_summary_ = self._summarize(X, y, groups, source)
        if self.verbose:  # what it is trained on, and what that will cost, before it starts
            print(self.data_summary_)
            n_u = 0 if unlabelled is None else len(unlabelled)
            print(estimate_fit(self, X, y, n_unlabelled=n_u))
        data = self._normalize_split(X, y, train, val, unlabelled)
        config = self._model_config(n_channels=X.shape[1], n_steps=X.shape[2])
        seed = int(self.random_state)
        # members differ in weights, masks and batch order (_fit_member runs the stages)
        fitted = [self._fit_member(config, seed + m, data) for m in range(self.n_estimators_)]
        self.members_ = [model for model, _, _ in fitted]
        self.member_histories_ = [history for _, history, _ in fitted]
        self.model_, self.history_, self.best_epoch_ = fitted[0]
        self._report_pretraining(fitted)
        self.attention_ = self.model_.config.attention
        self.fit_time_ = time.perf_counter() - t_start
        self.n_train_windows_, self.n_val_windows_ = len(train), len(val)
        self.frame_spec_ = None  # fit_spt sets it when the windows came from a DataFrame
        self.evaluation_ = None  # a refit (evaluate, study refit) records its choice here
        return self

    def _validate_training_data(self, X, y, groups):
        """Checked ``X (N, C, T)`` float32, labels ``y``, subjects ``groups`` and what the
        WindowSet said about its source (fs, where fs came from, columns left out); sets
        ``channels_``, ``classes_`` and ``n_features_in_``."""
        channels, source = None, {}
        if isinstance(X, WindowSet):
            if y is None:
                y = X.labels
            if groups is None:
                groups = X.groups
            channels = list(X.channels)
            source = {
                "fs": X.fs,
                "fs_source": getattr(X, "fs_source", None),
                "left_out": getattr(X, "left_out", None),
                "dropped": getattr(X, "dropped", None),  # what cutting the table left out
            }
        if y is None:
            raise InputError(
                "SPTClassifier requires y to be passed, but the target y is None "
                "(give one class label per window)"
            )
        X, y = validate_data(
            self,
            X.X if isinstance(X, WindowSet) else X,
            y,
            allow_nd=True,
            ensure_all_finite="allow-nan",
            dtype=np.float32,
            ensure_min_samples=2,
        )
        if X.ndim == 2:
            X = X[:, None, :]
        if X.ndim != 3:
            raise InputError(f"X must have shape (N, C, T) or (N, T), got {X.shape}")
        check_classification_targets(y)
        if channels is None or len(channels) != X.shape[1]:
            channels = [f"ch{i}" for i in range(X.shape[1])]
        self.channels_ = channels
        self.classes_ = _plain_classes(np.unique(y))
        if len(self.classes_) < 2:
            raise InputError(
                f"y has only one class ('{self.classes_[0]}'); a classifier needs samples "
                "of at least 2 classes"
            )
        n = X.shape[0]
        if groups is None:
            groups = np.arange(n)
        groups = np.asarray(groups)
        if groups.shape != (n,):
            raise InputError(f"groups must have one entry per window ({n}), got {groups.shape}")
        if np.isnan(X).all(axis=(0, 2)).any():
            bad = [self.channels_[i] for i in np.flatnonzero(np.isnan(X).all(axis=(0, 2)))]
            raise InputError(f"channel(s) {bad} are entirely missing (all NaN)")
        empty = np.isnan(X).all(axis=(1, 2))
        if empty.any():
            raise InputError(
                f"{int(empty.sum())} window(s) have no observed value (all NaN), e.g. window "
                f"{int(np.flatnonzero(empty)[0])}; drop them"
            )
        self._warn_flat_channels(X)
        return X, y, groups, source

    def _warn_flat_channels(self, X: np.ndarray) -> None:
        """Warn about channels of one value in every training window: they carry no
        information (a DataFrame's channels were checked when it was cut, under the same
        key, so a flat column is named once)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN windows of a channel
            lo, hi = np.nanmin(X, axis=(0, 2)), np.nanmax(X, axis=(0, 2))  # (C,)
        for i in np.flatnonzero(lo == hi):
            name = self.channels_[i]
            fix = "leave it out (channels=[...] when windowing a DataFrame, or drop it from X)"
            warn(
                flat_channel_message(name, float(lo[i]), "training window", fix),
                key=("flat", name),
            )

    def _validate_unlabelled(
        self, X_unlabelled, groups_unlabelled, shape: tuple[int, ...]
    ) -> tuple[np.ndarray | None, np.ndarray | None]:
        """``X_unlabelled`` as float32 ``(M, C, T)`` of the labelled windows' ``C`` and
        ``T`` with its subjects (None when not given), or an error naming what differs."""
        if X_unlabelled is None:
            return None, None
        if isinstance(X_unlabelled, WindowSet):
            if groups_unlabelled is None:
                groups_unlabelled = X_unlabelled.groups
            if list(X_unlabelled.channels) != list(self.channels_):
                raise InputError(
                    f"X_unlabelled has channels {list(X_unlabelled.channels)}, the labelled "
                    f"windows {list(self.channels_)}: cut both from the same columns"
                )
            X_unlabelled = X_unlabelled.X
        Xu = np.asarray(X_unlabelled, dtype=np.float32)
        if Xu.ndim == 2:
            Xu = Xu[:, None, :]
        if Xu.ndim != 3 or Xu.shape[1:] != tuple(shape[1:]) or not len(Xu):
            raise InputError(
                f"X_unlabelled must hold windows of shape (M, {shape[1]}, {shape[2]}) like "
                f"the labelled ones (channels, steps), got {Xu.shape}: cut them with the "
                "same channels and window"
            )
        if np.isinf(Xu).any() or np.isnan(Xu).all(axis=(1, 2)).any():
            raise InputError(
                "X_unlabelled has infinite values or windows with no observed value (all "
                "NaN): drop them"
            )
        if groups_unlabelled is not None:
            groups_unlabelled = np.asarray(groups_unlabelled)
            if groups_unlabelled.shape != (len(Xu),):
                raise InputError(
                    f"groups_unlabelled must have one subject per unlabelled window "
                    f"({len(Xu)}), got shape {groups_unlabelled.shape}"
                )
        return Xu, groups_unlabelled

    def _unlabelled_outside_validation(
        self, Xu: np.ndarray | None, groups_u: np.ndarray | None
    ) -> np.ndarray | None:
        """The unlabelled windows of subjects other than the validation subjects (which
        must stay unseen); sets ``n_unlabelled_windows_``."""
        if Xu is not None and groups_u is not None and len(self.validation_subjects_):
            Xu = Xu[~np.isin(groups_u, self.validation_subjects_)]
        self.n_unlabelled_windows_ = 0 if Xu is None else len(Xu)
        if Xu is not None and not self._pretrains() and not self.steps_like_spt:
            warn(
                "X_unlabelled is used by pretraining only, and this model does not pretrain "
                "(pretrain=False): the unlabelled windows are ignored"
            )
        return Xu

    def _auto_patch_len(self, T: int) -> int:
        """``patch_len="auto"`` for windows of ``T`` steps: the patch length
        (:func:`~medspt.estimator.auto.patch_len_for`) or the conv tokenizer's stride
        (:func:`~medspt.estimator.auto.token_stride_for`)."""
        return token_stride_for(T) if self.embedding == "conv" else patch_len_for(T)

    def _mask_token_len(self) -> int | None:
        """Steps one mask unit hides with ``mask_unit="token"``: a patch, or with the conv
        tokenizer a run of about a sixteenth of the window
        (:func:`~medspt.estimator.auto.mask_run_for`);
        None for step masks."""
        if self.mask_unit != "token":
            return None
        if self.embedding == "conv":
            return mask_run_for(self.n_steps_, self.patch_len_)
        return self.patch_len_

    def _resolve_patch_len(self, T: int) -> int:
        """The patch length for windows of ``T`` steps: refuses a patch longer than the
        windows, warns when the windows make fewer than a few tokens."""
        auto = self._auto_patch_len(T)
        P = auto if self.patch_len == "auto" else int(self.patch_len)
        if P > T:
            raise InputError(
                f"patch_len={P} is longer than the windows ({T} steps): a window must hold "
                f"at least one patch. Use patch_len='auto' (chooses {auto} here) "
                f"or a patch_len of at most {max(1, T // FEWEST_TOKENS)}, or longer windows "
                "(window=...)"
            )
        n_tok = -(-T // P)
        if n_tok < FEWEST_TOKENS:
            fix = (
                "use longer windows (window=...)"
                if P == 1
                else f"use patch_len='auto' (chooses {auto} here) or a patch_len "
                f"of at most {max(1, T // FEWEST_TOKENS)}, or longer windows (window=...)"
            )
            warn(
                f"patch_len={P} cuts windows of {T} steps into only {n_tok} token(s); "
                f"attention has little to work with below {FEWEST_TOKENS}: {fix}"
            )
        return P

    def _resolve_sizes(self, X: np.ndarray, n_train: int) -> None:
        """Set the sizes the data decides: ``n_steps_`` and ``min_length_`` (longest and
        shortest case), ``patch_len_`` and ``batch_size_`` (resolving ``"auto"`` from the
        window length and the ``n_train`` training windows) and ``auto_params_`` (the
        values ``"auto"`` chose)."""
        self.n_steps_ = X.shape[2]
        self.min_length_ = int(case_lengths(X).min())
        self.patch_len_ = self._resolve_patch_len(self.n_steps_)
        self.batch_size_ = (
            batch_size_for(n_train) if self.batch_size == "auto" else int(self.batch_size)
        )
        # relative positions bias token pairs, which hierarchical attention does not have
        auto_positional = "relative" if self.attention == "full" else "learned"
        self.positional_ = auto_positional if self.positional == "auto" else self.positional
        self.n_estimators_ = (
            n_estimators_for(len(X)) if self.n_estimators == "auto" else int(self.n_estimators)
        )
        self.auto_params_ = {
            name: getattr(self, name + "_")
            for name in ("patch_len", "batch_size", "positional", "n_estimators")
            if getattr(self, name) == "auto"
        }

    def _summarize(self, X, y, groups, source: dict) -> DataSummary:
        summary = DataSummary.from_windows(X, y, groups, self.channels_, **source)
        summary.auto = dict(self.auto_params_)
        summary.n_validation_subjects = len(self.validation_subjects_)
        return summary

    def _split(self, y: np.ndarray, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Hold out whole subjects for early stopping and model selection: the window
        indices ``(train, val)`` of :func:`medspt.core.splits.validation_split`, the one
        split every medspt fit and benchmark uses; sets ``validation_subjects_``.
        ``val`` is empty with ``val_size=0`` or too few subjects."""
        train, val = validation_split(y, groups, float(self.val_size), int(self.random_state))
        self.validation_subjects_ = np.unique(groups[val])
        return train, val

    def _normalize_split(
        self,
        X: np.ndarray,
        y: np.ndarray,
        train: np.ndarray,
        val: np.ndarray,
        unlabelled: np.ndarray | None = None,
    ) -> TrainingData:
        """Set the channel statistics ``mean_`` and ``std_`` (of all labelled windows
        ``X``, after per-window centring with ``normalize="window"``) and return the
        normalized training and validation windows with their class codes, and the
        ``unlabelled`` windows normalized alike."""
        self.mean_, self.std_ = channel_stats(self._center(X))
        Xn = torch.from_numpy(self._normalize(X))
        codes = torch.from_numpy(np.searchsorted(self.classes_, y).astype(np.int64))
        Xu = None if unlabelled is None else torch.from_numpy(self._normalize(unlabelled))
        return TrainingData(
            X_train=Xn[train],
            y_train=codes[train],
            X_val=Xn[val],
            y_val=codes[val],
            # resolved here so that a bad group fails before any training
            channel_groups=resolve_channel_groups(self.channel_groups, self.channels_),
            X_unlabelled=Xu,
        )

    def _model_config(self, n_channels: int, n_steps: int) -> ModelConfig:
        """The checked :class:`~medspt.nn.model.ModelConfig` of windows ``(C, T)``."""
        config = ModelConfig(
            n_channels=n_channels,
            n_steps=n_steps,
            n_classes=len(self.classes_),
            depth=int(self.depth),
            d_model=int(self.d_model),
            n_heads=int(self.n_heads),
            patch_len=self.patch_len_,
            embedding=self.embedding,
            dropout=float(self.dropout),
            attn_dropout=None if self.attn_dropout is None else float(self.attn_dropout),
            positional=self.positional_,
            pooling=self.pooling,
            attention=self.attention,
            attention_options=self.attention_options,
            instance_norm=self.normalize == "instance",
            window_stats=bool(self.window_stats),
        )
        config.validate()
        return config

    def _fit_member(
        self, config: ModelConfig, seed: int, data: TrainingData
    ) -> tuple[SPTTransformer, dict, dict]:
        """Train one model with ``seed``: pretrain (optionally), fine-tune, and recover
        full attention at the end of the stage that ends hierarchical attention.

        Returns the model (on CPU, in eval mode), its history and the epoch of each stage
        whose weights were kept (``{"pretrain", "finetune", "recover"}``)."""
        torch.manual_seed(seed)
        model = SPTTransformer(dataclasses.replace(config))  # its own copy: set_attention
        history: dict[str, list[dict]] = {"pretrain": [], "finetune": [], "recover": []}
        best = {"pretrain": 0, "finetune": 0, "recover": 0}
        n_train, n_pretrain = len(data.X_train), len(data.X_pretrain)
        ends_hierarchical = self._recovery_stage()
        if self._pretrains():
            epochs = self._stage_epochs(self.pretrain_epochs, n_pretrain)
            history["pretrain"], best["pretrain"] = self._pretrain(model, data, seed, epochs)
            if ends_hierarchical == "pretrain":
                if self.recover_epochs:
                    history["recover"], best["recover"] = self._recover(model, data, seed)
                model.set_attention("full")  # fine-tuning uses full attention
        epochs = self._finetune_epochs(n_train, n_pretrain)
        desc = "finetune" if self.pretrain else "scratch"
        history["finetune"], best["finetune"] = self._finetune(model, data, seed, epochs, desc)
        if ends_hierarchical == "finetune" and self.recover_epochs:
            history["recover"], best["recover"] = self._recover(model, data, seed)
        return model.to("cpu").eval(), history, best

    def _report_pretraining(self, fitted: list[tuple[SPTTransformer, dict, dict]]) -> None:
        """Set ``pretrain_relative_`` and the data summary's pretraining line from the
        members' kept pretraining epochs, and warn once, naming them, when channels ended
        above :data:`NOT_LEARNED` of the visible-mean baseline."""
        self.pretrain_relative_ = None
        rows = [_kept_pretraining_row(h, b, self._recovery_stage()) for _, h, b in fitted]
        rows = [r for r in rows if r is not None]
        if not rows:
            return
        where = "val" if all("val_relative" in r for r in rows) else "train"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN: nothing to predict
            pooled = float(np.nanmean([r[f"{where}_relative"] for r in rows]))
            per_channel = np.nanmean(
                np.asarray([r[f"{where}_relative_channels"] for r in rows], dtype=float), axis=0
            )
        self.pretrain_relative_ = dict(zip(self.channels_, map(float, per_channel)))
        measured_on = "validation subjects" if where == "val" else "training windows"
        self.data_summary_.pretraining = {
            "relative": to_jsonable(pooled),
            "channels": to_jsonable(self.pretrain_relative_),
            "measured_on": measured_on,
            "members": len(rows),
        }
        stuck = {c: v for c, v in self.pretrain_relative_.items() if v > NOT_LEARNED}
        if stuck:
            message = self._not_learned_message(stuck, measured_on, len(rows))
            # at the user's line; once per evaluate for the same channels, whose values
            # differ from fold to fold
            warn(message, key=("pretraining did not learn", tuple(stuck)))

    def _not_learned_message(self, stuck: dict, measured_on: str, members: int) -> str:
        """The warning for channels whose pretraining learned nothing, with causes and
        fixes in this estimator's parameters."""
        names = list(stuck)
        values = [f"{v:.2f}" for v in stuck.values()]
        if len(names) == 1:
            what = f"{names[0]}: its loss is {values[0]}"
        else:
            listed = ", ".join(names[:-1]) + f" and {names[-1]}"
            what = f"{listed}: their losses are {', '.join(values[:-1])} and {values[-1]}"
        mean_of = f", the mean of {members} ensemble members" if members > 1 else ""
        it = "it" if len(names) == 1 else "them"
        fixes = f"leave {it} out (channels=[...] when windowing a DataFrame, or drop {it} from X)"
        if self.masking != "channel":
            fixes += f', or pretrain with masking="channel" (reconstruct {it} from the others)'
        return (
            f"pretraining did not learn to reconstruct {what} of predicting each window's "
            f"visible mean (1.0 = nothing learned; on the {measured_on} at the kept "
            f"epoch{mean_of}). Likely causes: values held over from a slower sampling rate "
            "or near-constant in most windows, so there is nothing to predict inside a "
            f"window; or masking units longer than the signal's detail (mask_unit="
            f"{self.mask_unit!r}, mean_span={self.mean_span}). Fixes: {fixes}; a shorter "
            "mean_span for fine detail. clf.pretrain_relative_ has every channel's value."
        )

    def _pretrains(self) -> bool:
        """Whether fit pretrains (``pretrain=True`` and ``pretrain_epochs > 0``)."""
        return bool(self.pretrain and self.pretrain_epochs > 0)

    def _recovery_stage(self) -> str | None:
        """The stage that ends hierarchical attention, followed by ``recover_epochs`` of
        full attention: ``"pretrain"`` (``hierarchical_stages="pretrain"`` with
        pretraining), ``"finetune"``, or None when attention is full throughout."""
        if self.attention == "full":
            return None
        if self.hierarchical_stages == "pretrain" and self._pretrains():
            return "pretrain"
        return "finetune"

    def _finetune_epochs(self, n_train: int, n_pretrain: int | None = None) -> int:
        """Fine-tuning epochs; with ``steps_like_spt`` and no pretraining, SPT's whole
        resolved budget: both of its stages as :meth:`_stage_epochs` resolves them, its
        pretraining on ``n_pretrain`` windows (the training windows and any unlabelled
        ones) counted in steps and turned into epochs of ``n_train`` windows."""
        epochs = self._stage_epochs(self.epochs, n_train)
        if self.steps_like_spt and not self._pretrains():
            n_pretrain = n_train if n_pretrain is None else n_pretrain
            spt_steps = self._stage_epochs(self.pretrain_epochs, n_pretrain) * -(
                -n_pretrain // self.batch_size_
            )
            epochs += -(-spt_steps // -(-n_train // self.batch_size_))
        return epochs

    def _stage_epochs(self, epochs: int, n_train: int) -> int:
        """``epochs``, raised until a stage on ``n_train`` windows makes at least
        ``min_steps`` optimizer steps."""
        steps_per_epoch = -(-n_train // self.batch_size_)
        return max(int(epochs), -(-int(self.min_steps) // steps_per_epoch))

    def _train_config(self, seed: int, epochs: int) -> TrainConfig:
        """The optimisation settings of one stage."""
        return TrainConfig(
            epochs=epochs,
            batch_size=self.batch_size_,
            lr=float(self.lr),
            weight_decay=float(self.weight_decay),
            warmup=float(self.warmup),
            grad_clip=self.grad_clip,
            patience=self.patience,
            keep_best=len(self.validation_subjects_) >= int(self.min_val_subjects),
            # the compute-matched control never keeps a checkpoint from inside warm-up
            keep_after_warmup=bool(self.steps_like_spt and not self._pretrains()),
            device=str(resolve_device(self.device)),
            seed=seed,
            verbose=bool(self.verbose),
            no_decay_norms=bool(self.no_decay_norms),
            encoder_lr_scale=float(self.encoder_lr_scale) if self.pretrain else 1.0,
            amp=bool(self.amp),
        )

    def _pretrain(
        self, model: SPTTransformer, data: TrainingData, seed: int, epochs: int
    ) -> tuple[list[dict], int]:
        """Train ``model`` for up to ``epochs`` epochs to reconstruct masked values of the
        training windows (:func:`medspt.nn.training.pretrain`; early stopping on the
        validation windows). Returns the history and the epoch whose weights were kept."""
        return pretrain(
            model,
            data.X_pretrain,
            X_val=data.X_val,
            masking=self.masking,
            mask_ratio=float(self.mask_ratio),
            mean_span=float(self.mean_span),
            token_len=self._mask_token_len(),
            channel_groups=data.channel_groups,
            config=self._train_config(seed, epochs),
        )

    def _finetune(
        self, model: SPTTransformer, data: TrainingData, seed: int, epochs: int, desc: str
    ) -> tuple[list[dict], int]:
        """Train ``model`` for up to ``epochs`` epochs on the labels
        (:func:`medspt.nn.training.finetune`; early stopping on the validation subjects'
        balanced accuracy); ``desc`` names the progress bar. Returns the history and the
        epoch whose weights were kept."""
        return finetune(
            model,
            data.X_train,
            data.y_train,
            X_val=data.X_val,
            y_val=data.y_val,
            class_weight=self._class_weights(data.y_train.numpy()),
            linear_probe=bool(self.linear_probe and self.pretrain),
            config=self._train_config(seed, epochs),
            desc=desc,
            augmentations=check_augment(self.augment),
            label_smoothing=float(self.label_smoothing),
        )

    def _recover(
        self, model: SPTTransformer, data: TrainingData, seed: int
    ) -> tuple[list[dict], int]:
        """Switch ``model`` to full attention and train on for ``recover_epochs`` epochs,
        same weights, in the stage that ended hierarchical attention (as in Lighthouse
        Attention): masked reconstruction or fine-tuning. Returns that history and the
        epoch whose weights were kept."""
        model.set_attention("full")
        epochs = int(self.recover_epochs)
        if self._recovery_stage() == "pretrain":
            return self._pretrain(model, data, seed, epochs)
        return self._finetune(model, data, seed, epochs, "recover (full attention)")

    def _class_weights(self, y_enc: np.ndarray) -> torch.Tensor | None:
        if self.class_weight is None:
            return None
        w = np.ones(len(self.classes_), dtype=np.float32)
        if self.class_weight == "balanced":
            w = balanced_class_weights(y_enc, len(self.classes_))
        else:
            unknown = set(self.class_weight) - set(self.classes_.tolist())
            if unknown:
                raise InputError(f"class_weight names classes not in y: {sorted(unknown, key=str)}")
            for k, c in enumerate(self.classes_.tolist()):
                w[k] = float(self.class_weight.get(c, 1.0))
        return torch.from_numpy(w)

    def _center(self, X: np.ndarray) -> np.ndarray:
        """With ``normalize="window"``, each window minus its own mean per channel over
        its observed steps (missing steps and padding stay NaN); otherwise ``X``."""
        if self.normalize != "window":
            return X
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a channel missing in a window
            return (X - np.nanmean(X, axis=2, keepdims=True)).astype(np.float32)

    def _normalize(self, X: np.ndarray) -> np.ndarray:
        if self.normalize is False:
            return X
        X = self._center(X)
        return ((X - self.mean_[None, :, None]) / self.std_[None, :, None]).astype(np.float32)

    # ------------------------------------------------------------------ predict

    @once_per_call
    def predict_proba(self, X):
        """Class probabilities, shape (N, n_classes); for a long DataFrame see
        :meth:`predict`."""
        check_is_fitted(self, "model_")
        if _is_long_frame(self, X):
            return self._predict_frame(X).windows.filter(like="proba_").to_numpy()
        windows, owner = self.model_windows(X)
        Xn = torch.from_numpy(windows)
        dev = resolve_device(self.device)
        total = 0.0
        members = getattr(self, "members_", None) or [self.model_]
        for model in members:  # an ensemble averages its members' probabilities
            model.to(dev).eval()
            out = []
            with torch.no_grad():
                for i in range(0, len(Xn), 512):
                    out.append(torch.softmax(model(Xn[i : i + 512].to(dev)), dim=1).cpu())
            model.to("cpu")
            total = total + torch.cat(out).numpy().astype(np.float64)
        proba = total / len(members)  # (M, K), one row per window
        if owner is None:
            return proba
        # a case cut into several windows gets the mean of their probabilities
        n_cases = int(owner.max()) + 1  # every case gives at least one window
        out = np.zeros((n_cases, proba.shape[1]))
        np.add.at(out, owner, proba)
        return out / np.bincount(owner, minlength=n_cases)[:, None]

    def model_windows(self, X) -> tuple[np.ndarray, np.ndarray | None]:
        """Cases ``X`` as the fitted model sees them: checked, padded or cut to
        ``n_steps_`` steps (:meth:`fitted_windows`) and normalized.

        Parameters
        ----------
        X : array-like of shape (N, C, T) or (N, T), or WindowSet

        Returns
        -------
        windows : ndarray of shape (M, C, n_steps_), float32
        owner : ndarray of shape (M,) or None
            The case of ``X`` each window comes from; None when each case is one window.
        """
        check_is_fitted(self, "model_")
        windows, owner = self.fitted_windows(self._prepare_X(X, reset=False))
        return self._normalize(windows), owner

    def fitted_windows(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """Windows of the fitted length ``n_steps_`` for cases ``X (N, C, T)`` of any length.

        Shorter cases are padded with NaN at the end (the model never attends to padding).
        A case longer than ``n_steps_`` is cut into sliding windows of ``n_steps_`` steps
        (stride half of that, the last window flush with the case's end); ``owner`` then
        says which case each window belongs to (None when every case is one window)."""
        n = self.n_steps_
        T = X.shape[2]
        lengths = case_lengths(X)
        if (lengths == 0).any():
            raise InputError(
                f"{int((lengths == 0).sum())} case(s) of X have no observed value (all NaN), "
                f"e.g. case {int(np.flatnonzero(lengths == 0)[0])}; drop them before predicting"
            )
        if T < n:
            X = np.concatenate([X, np.full((*X.shape[:2], n - T), np.nan, np.float32)], 2)
        if lengths.min() < self.min_length_:
            warn(
                f"{int((lengths < self.min_length_).sum())} case(s) are shorter than any the "
                f"model was trained on ({int(lengths.min())} < {self.min_length_} steps); "
                "they are padded, but expect less reliable predictions"
            )
        if lengths.max() <= n:
            return np.ascontiguousarray(X[:, :, :n]), None
        stride = max(1, n // 2)
        parts, owner = [], []
        for i, L in enumerate(lengths):
            starts = [0] if L <= n else sorted({*range(0, L - n + 1, stride), L - n})
            parts.extend(X[i, :, s : s + n] for s in starts)
            owner.extend([i] * len(starts))
        long = lengths > n
        warn(
            f"{int(long.sum())} case(s) are longer than the {n} steps the model was fitted on "
            f"(up to {int(lengths.max())}): each was cut into sliding windows of {n} steps "
            f"(stride {stride}) and their class probabilities averaged"
        )
        return np.stack(parts).astype(np.float32), np.asarray(owner)

    @once_per_call
    def predict(self, X):
        """Predicted class of each window.

        For a long DataFrame (models fitted by :func:`medspt.fit_spt`) returns a
        :class:`FramePredictions` with per-window and per-recording predictions, window
        positions in samples and (when the sampling rate is known) seconds, and, when the
        frame has labels, scores per level with their chance levels, the window confusion
        matrix and per-class and per-subject tables. Labels the model was not trained on
        raise an :class:`~medspt.core.errors.InputError` naming them.
        """
        check_is_fitted(self, "model_")
        if _is_long_frame(self, X):
            return self._predict_frame(X)
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

    def frame_windows(self, df: pd.DataFrame) -> WindowSet:
        """Cut a long DataFrame into windows the way this model's training data was cut
        (same channels, window, stride and sampling rate; labels if the frame has them).

        For a model fitted on one case per recording (``window=None``) every recording
        becomes one case of its own length; :meth:`predict_proba` handles cases longer or
        shorter than the fitted length (see :meth:`fitted_windows`)."""
        check_is_fitted(self, "model_")
        spec: WindowSpec | None = self.frame_spec_
        if spec is None:
            raise InputError(
                "this model was fitted on arrays, not a DataFrame: cut new data into "
                f"windows of {self.n_steps_} steps yourself"
            )
        missing = [c for c in spec.channels if c not in df.columns]
        if missing:
            raise InputError(
                f"the DataFrame lacks channel column(s) {missing} that the model was trained "
                f"on; expected channels {list(spec.channels)}"
            )
        with samples_as_given():  # the fitted window and stride, in samples
            return self._cut_like_training(df, spec)

    def _cut_like_training(self, df: pd.DataFrame, spec: WindowSpec) -> WindowSet:
        return make_windows(
            df,
            window=spec.window,
            stride=spec.stride,
            # one case per recording: any length; predict_proba cuts longer ones
            length=None,
            label=spec.label if spec.label in df.columns else None,
            subject=spec.subject,
            recording=spec.recording,
            time=spec.time,
            channels=list(spec.channels),
            fs=spec.fs,
            classes=self.classes_,
        )

    def _predict_frame(self, df: pd.DataFrame) -> FramePredictions:
        ws = self.frame_windows(df)
        proba = self.predict_proba(ws.X)  # (N, K)
        classes = np.asarray(self.classes_)
        win = ws.meta[["subject", "recording", "start", "stop"]].copy()
        fs = ws.fs if ws.fs is not None else self.frame_spec_.fs
        if fs:
            # start/stop count samples from the recording's first sample (WindowSet.meta)
            win["start_s"] = win["start"] / fs
            win["stop_s"] = win["stop"] / fs
        win["predicted"] = classes[proba.argmax(1)]
        for k, c in enumerate(classes):
            win[f"proba_{c}"] = proba[:, k]
        if ws.y is not None:
            win["label"] = ws.labels
        keys = ["subject", "recording"]
        rec = win.groupby(keys, sort=False, dropna=False)[[f"proba_{c}" for c in classes]].mean()
        rec["n_windows"] = win.groupby(keys, sort=False, dropna=False).size()
        rec["predicted"] = classes[rec.filter(like="proba_").to_numpy().argmax(1)]
        if ws.y is not None:
            rec["label"] = win.groupby(keys, sort=False, dropna=False)["label"].agg(
                lambda s: s.mode().iloc[0]
            )
        rec = rec.reset_index()
        if ws.y is None:
            return FramePredictions(windows=win, recordings=rec)
        # frame_windows coded the labels in the model's classes; recode by name to be safe
        report = _frame_report(win, rec, proba, _codes(ws.labels, classes), classes)
        # a recording whose label changes inside it has no recording-level score
        rec, report["scores"], _ = recording_level(win, rec, report["scores"])
        return FramePredictions(windows=win, recordings=rec, **report)

    def score(self, X, y=None, sample_weight=None) -> float:
        """Mean window accuracy: the fraction of windows whose predicted class is their
        label.

        Parameters
        ----------
        X : WindowSet, long DataFrame or array-like of shape (N, C, T) or (N, T)
            A labelled WindowSet (its class names ``ws.labels`` are the truth), a long
            DataFrame with a label column (models fitted by :func:`medspt.fit_spt`; cut
            as in training), or windows.
        y : array-like of shape (N,), optional
            Class labels of array windows, as in ``classes_`` (names, not a WindowSet's
            integer codes ``ws.y``). Not allowed with a WindowSet or a DataFrame.
        sample_weight : array-like of shape (N,), optional
            Weight of each window (arrays and WindowSets only).

        Returns
        -------
        float
        """
        check_is_fitted(self, "model_")
        if isinstance(X, WindowSet) or _is_long_frame(self, X):
            what = "a WindowSet" if isinstance(X, WindowSet) else "a DataFrame"
            if y is not None:
                raise InputError(
                    f"score got {what} and y: the labels come from {what} itself; "
                    "call clf.score(X) without y"
                )
        if isinstance(X, WindowSet):
            if X.y is None:
                raise InputError("the WindowSet has no labels (ws.y is None); nothing to score")
            # class names, not codes: ws.classes may be ordered unlike clf.classes_
            return super().score(X, X.labels, sample_weight=sample_weight)
        if _is_long_frame(self, X):
            if sample_weight is not None:
                raise InputError(
                    "sample_weight is per window; a DataFrame is cut into windows inside "
                    "score: weight clf.frame_windows(df) instead"
                )
            pred = self._predict_frame(X)
            if "label" not in pred.windows:
                raise InputError(
                    f"the DataFrame has no label column {self.frame_spec_.label!r}; "
                    "nothing to score"
                )
            return float((pred.windows["predicted"] == pred.windows["label"]).mean())
        if y is None:
            raise InputError("score needs y, the class label of each window in X")
        self._check_not_codes(y)
        return super().score(X, y, sample_weight=sample_weight)

    def _check_not_codes(self, y) -> None:
        """Refuse integer ``y`` for a model whose classes are names: it is almost surely
        a WindowSet's codes ``ws.y``, which must not be mapped by position."""
        y = np.asarray(y)
        classes = np.asarray(self.classes_)
        named = classes.dtype.kind in "US" or (
            classes.dtype.kind == "O" and any(isinstance(c, str) for c in classes.tolist())
        )
        if named and y.dtype.kind in "iu":
            raise InputError(
                f"y holds integers (e.g. {y[:5].tolist()}) but this model's classes are "
                f"names {classes.tolist()!r}: y looks like WindowSet class codes (ws.y). "
                "Pass the class names (y=ws.labels) or call clf.score(ws); codes are not "
                "mapped by position because ws.classes may be ordered unlike clf.classes_"
            )

    # ------------------------------------------------------------------ persistence

    def save(self, path) -> None:
        """Write the fitted model as JSON config + tensors (safetensors); see
        :func:`medspt.load`."""
        check_is_fitted(self, "model_")
        members = getattr(self, "members_", None) or [self.model_]
        write_model_file(path, self._file_metadata(), members)

    def _file_metadata(self) -> dict:
        """What a model file says about this classifier besides its weights (JSON-able;
        :func:`load` reads it back)."""
        params = self.get_params()
        if callable(params.get("masking")):
            params["masking"] = f"<callable {getattr(params['masking'], '__name__', '?')}>"
        summary = getattr(self, "data_summary_", None)
        return {
            "params": to_jsonable(params),
            "classes": classes_to_json(np.asarray(self.classes_)),
            "channels": list(self.channels_),
            "n_steps": int(self.n_steps_),
            "n_features_in": int(self.n_features_in_),
            "mean": to_jsonable(self.mean_),
            "std": to_jsonable(self.std_),
            "frame_spec": self.frame_spec_.to_dict() if self.frame_spec_ is not None else None,
            "history": to_jsonable(self.history_),
            "best_epoch": to_jsonable(self.best_epoch_),
            "min_length": int(getattr(self, "min_length_", self.n_steps_)),
            "auto_params": to_jsonable(getattr(self, "auto_params_", {})),
            "data_summary": to_jsonable(summary.to_dict()) if summary is not None else None,
            "pretrain_relative": to_jsonable(getattr(self, "pretrain_relative_", None)),
            # how the model was chosen and scored when it came from a refit (evaluate/study)
            "evaluation": to_jsonable(getattr(self, "evaluation_", None)),
        }
