"""The command line's vocabulary, shared by ``medspt fit | evaluate | study run``.

One option per argument of the Python API, spelt the same way in kebab case
(``fit_spt(df, subject="id", d_model=32)`` is ``--subject id --d-model 32``); the defaults
are the estimator's own (``SPTClassifier().get_params()``). Deliberate differences:

* ``random_state`` is ``--seed``; the grids (``evaluate``, ``study run``) take
  ``--depths``, ``--maskings`` and ``--seeds`` instead of ``--depth``, ``--masking`` and
  ``--seed`` (the singular spellings are accepted there as aliases of the lists);
* ``verbose`` is ``--quiet``; booleans are switch pairs (``--pretrain`` /
  ``--no-pretrain``, ``--decay-norms`` / ``--no-decay-norms``);
* ``attention_options`` (a dict) and ``channel_groups`` (lists of channels) need the API.

This module is a leaf of the command line: it imports library modules only, never
``medspt.cli.commands`` or ``medspt.cli.study`` (both import it), and no library module imports it.
"""

from __future__ import annotations

import argparse
import inspect
from collections.abc import Callable, Sequence

from medspt.api import DATA_DEFAULTS
from medspt.estimator.classifier import SPTClassifier
from medspt.nn.augment import AUGMENTATIONS, check_augment
from medspt.nn.masking import STRATEGIES
from medspt.nn.model import ATTENTION, EMBEDDING, POOLING, POSITIONAL

__all__ = [
    "DEFAULTS",
    "NORMALIZE_CHOICES",
    "add_data_args",
    "add_grid_args",
    "add_model_args",
    "auto_or_int",
    "data_kwargs",
    "model_params",
    "normalize_value",
    "window_arg",
]

# one source of truth: the command line's defaults are the estimator's
DEFAULTS = SPTClassifier().get_params()

NORMALIZE_CHOICES = ("channel", "window", "instance", "none")


# ------------------------------------------------------------------------ value parsers


def auto_or_int(value: str) -> int | str:
    """``auto`` or a positive integer (``--patch-len``, ``--batch-size``)."""
    if value.strip().lower() == "auto":
        return "auto"
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected auto or a positive integer, got {value!r}")
    return n


def positive_int(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value!r}")
    return n


def _or_none(kind: Callable, what: str) -> Callable:
    def parse(value: str):
        if value.strip().lower() == "none":
            return None
        try:
            return kind(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what} or none, got {value!r}") from None

    parse.__name__ = f"{kind.__name__}_or_none"
    return parse


float_or_none = _or_none(float, "a number")
int_or_none = _or_none(int, "an integer")


def normalize_value(option: str) -> bool | str:
    """``--normalize`` choice -> ``SPTClassifier(normalize=...)``."""
    return {"channel": True, "none": False}.get(option, option)


def window_arg(value: str | None):
    """``--window`` / ``--stride``: samples (``200``), seconds (``10s``), ``auto``, or
    ``none`` (one case per recording)."""
    if value is None or value == "auto":
        return value
    if value.lower() == "none":
        return None
    return int(value) if value.isdigit() else value


# ------------------------------------------------------------------------ help texts


def _shown(value) -> str:
    """A default as it is written on the command line."""
    if value is None:
        return "none"
    if isinstance(value, (list, tuple)):
        return " ".join(map(str, value)) or "none"
    return str(value)


def _with_default(text: str, default: str) -> str:
    return f"{text} (default: {default})"


def _switch(p, dest: str, on: str, off: str, default, help: str, suppress: bool) -> None:
    """Two flags setting ``dest`` to True (``on``) or False (``off``); version-independent
    (argparse.BooleanOptionalAction writes its own default into the help on Python 3.10)."""
    state = {True: on, False: off}.get(default, _shown(default))
    if suppress:
        state += ", the estimator's"
    argdefault = argparse.SUPPRESS if suppress else default
    p.add_argument(
        on, dest=dest, action="store_const", const=True, default=argdefault,
        help=_with_default(help, state),
    )  # fmt: skip
    p.add_argument(
        off, dest=dest, action="store_const", const=False, default=argdefault,
        help=_with_default(f"the opposite of {on}", state),
    )  # fmt: skip


# ------------------------------------------------------------------------ data options


def add_data_args(p: argparse.ArgumentParser, *, data: bool = True) -> None:
    """``--data --label --subject --recording --time --channels --fs --window --stride
    --max-missing --drop-short --strict``: how a long table is read and cut into windows, as the
    arguments of ``fit_spt`` / ``evaluate`` / ``run_study``. ``data=False`` leaves out
    ``--data`` (``study run`` puts it beside ``--protocol``)."""
    if data:
        p.add_argument(
            "--data", required=True, metavar="FILE",
            help="long-format .csv, .tsv or .parquet file, one row per sample (required)",
        )  # fmt: skip
    for name, text in (
        ("label", "label column"),
        ("subject", "subject column (folds and validation keep subjects apart)"),
        ("recording", "recording column, used when the file has it"),
        ("time", "time column in seconds, used when the file has it; never a feature"),
    ):
        p.add_argument(
            f"--{name}", default=DATA_DEFAULTS[name], metavar="COLUMN",
            help=_with_default(text, DATA_DEFAULTS[name]),
        )  # fmt: skip
    p.add_argument(
        "--channels", default=None, metavar="A,B",
        help=_with_default("comma-separated signal columns", "all other numeric columns"),
    )  # fmt: skip
    p.add_argument(
        "--fs", type=float, default=None, metavar="HZ",
        help=_with_default("sampling rate in Hz", "inferred from the time column"),
    )  # fmt: skip
    p.add_argument(
        "--window", default="auto",
        help=_with_default(
            "window length: samples (200), seconds (10s), or none (one case per recording)",
            "auto: 10s when the sampling rate is known, else 200 samples",
        ),
    )  # fmt: skip
    p.add_argument(
        "--stride", default=None,
        help=_with_default("step between windows: samples or seconds", "the window: no overlap"),
    )  # fmt: skip
    p.add_argument(
        "--max-missing", type=float, default=DATA_DEFAULTS["max_missing"], metavar="FRACTION",
        help=_with_default(
            "windows with a larger fraction of missing values are dropped, with a warning "
            "naming the subjects and the time left out",
            _shown(DATA_DEFAULTS["max_missing"]),
        ),
    )  # fmt: skip
    p.add_argument(
        "--drop-short", action="store_true",
        help=_with_default(
            "with --strict: drop subjects without any window instead of stopping (without "
            "--strict they are always dropped, with a warning)",
            "off",
        ),
    )  # fmt: skip
    p.add_argument(
        "--strict", action="store_true",
        help=_with_default(
            "stop with an error at a stretch of a window or more without a value (rows "
            "missing, or NaN in any channel) and at a subject left without any window, "
            "instead of splitting the recording there or dropping the subject with a warning",
            "off",
        ),
    )  # fmt: skip


def add_unlabelled_arg(p: argparse.ArgumentParser) -> None:
    """``--unlabelled FILE``: recordings without labels for pretraining."""
    p.add_argument(
        "--unlabelled", default=None, metavar="FILE",
        help="long-format file of recordings without labels (same channel and subject "
        "columns), cut like --data: SPT pretrains on them too, fine-tuning never sees them; "
        "a test subject's are left out of its fold (default: none)",
    )  # fmt: skip


def read_kwargs(a) -> dict:
    """The data options that say how a table is read (columns, cleaning), without how it
    is cut: unlabelled recordings are cut like the labelled ones."""
    keep = ("label", "subject", "recording", "time", "max_missing", "drop_short", "strict")
    return {k: v for k, v in data_kwargs(a).items() if k in keep}


def data_kwargs(a) -> dict:
    """The data options as keyword arguments of ``fit_spt`` / ``evaluate`` /
    ``run_study`` / ``windows_from``."""
    return dict(
        label=a.label,
        subject=a.subject,
        recording=a.recording,
        time=a.time,
        channels=[c.strip() for c in a.channels.split(",") if c.strip()] if a.channels else None,
        fs=a.fs,
        window=window_arg(a.window),
        stride=window_arg(a.stride),
        max_missing=a.max_missing,
        drop_short=a.drop_short,
        strict=a.strict,
    )


# ----------------------------------------------------------------------- model options

# SPTClassifier parameter -> (argparse keywords, help). Every scalar parameter is here;
# attention_options (a dict), channel_groups (lists) and verbose (--quiet) are not.
_MODEL: dict[str, tuple[dict, str]] = {
    "depth": (dict(type=positive_int), "Transformer blocks"),
    "d_model": (dict(type=positive_int), "token width; divisible by --n-heads"),
    "n_heads": (dict(type=positive_int), "attention heads"),
    "patch_len": (
        dict(type=auto_or_int, metavar="{auto,N}"),
        "time steps per token (the pooling stride with --embedding conv); auto: from the "
        "window length",
    ),
    "embedding": (
        dict(choices=EMBEDDING),
        "how steps become tokens: conv (multi-scale convolutions) or patch (the paper's)",
    ),
    "dropout": (dict(type=float), "dropout rate"),
    "attn_dropout": (
        dict(type=float_or_none, metavar="{none,P}"),
        "dropout of the attention weights; none: as --dropout",
    ),
    "positional": (
        dict(choices=("auto", *POSITIONAL)),
        "where a token sits (relative: learned bias per distance; alibi: fixed proximity "
        "bias; auto: relative with full attention, learned with hierarchical)",
    ),
    "pooling": (dict(choices=POOLING), "how tokens become one vector"),
    "attention": (
        dict(choices=None),  # filled in when the parser is built (registered kinds)
        "hierarchical: about linear cost in the number of tokens, for long windows",
    ),
    "recover_epochs": (
        dict(type=int),
        "with --attention hierarchical: epochs of full attention that end training",
    ),
    "hierarchical_stages": (
        dict(choices=("all", "pretrain")),
        "where hierarchical attention is used",
    ),
    "masking": (dict(choices=STRATEGIES), "what pretraining hides"),
    "mask_ratio": (dict(type=float), "expected fraction of values hidden, in (0, 1)"),
    "mask_unit": (
        dict(choices=("step", "token")),
        "hide single time steps (the SPT paper) or whole patch tokens",
    ),
    "mean_span": (dict(type=float), "mean length of hidden spans and blocks"),
    "pretrain_epochs": (dict(type=int), "most epochs of pretraining"),
    "epochs": (dict(type=int), "most epochs of fine-tuning"),
    "batch_size": (
        dict(type=auto_or_int, metavar="{auto,N}"),
        "windows per batch; auto: from the number of training windows",
    ),
    "lr": (dict(type=float), "peak learning rate (AdamW, warm-up, cosine decay)"),
    "weight_decay": (dict(type=float), "AdamW weight decay"),
    "warmup": (dict(type=float), "fraction of steps spent warming up"),
    "grad_clip": (
        dict(type=float_or_none, metavar="{none,X}"),
        "gradient norm clipping; none: no clipping",
    ),
    "patience": (
        dict(type=int_or_none, metavar="{none,N}"),
        "early-stopping patience in epochs; none: every epoch runs",
    ),
    "val_size": (
        dict(type=float),
        "fraction of training subjects held out for early stopping; 0: none",
    ),
    "min_val_subjects": (
        dict(type=int),
        "early stopping only with at least this many validation subjects; fewer: every "
        "epoch runs, the final weights are kept",
    ),
    "augment": (
        dict(nargs="+", choices=(*AUGMENTATIONS, "none"), metavar="KIND"),
        f"augment fine-tuning batches (never evaluation): {', '.join(AUGMENTATIONS)}; "
        "none: no augmentation",
    ),
    "label_smoothing": (dict(type=float), "label smoothing of the fine-tuning loss"),
    "min_steps": (dict(type=int), "floor on optimizer steps per training stage (small data)"),
    "encoder_lr_scale": (
        dict(type=float),
        "after pretraining the encoder learns at lr times this, in (0, 1]",
    ),
    "n_estimators": (
        dict(type=auto_or_int, metavar="{auto,N}"),
        "models (seeds) averaged in probability; one model file holds them all; auto: 5 "
        "below 300 labelled windows, else 1",
    ),
    "class_weight": (
        dict(choices=("balanced", "none")),
        "weight the loss by inverse class frequency, or not",
    ),
    "normalize": (
        dict(choices=NORMALIZE_CHOICES),
        "channel: standardize with training statistics; window: also subtract each "
        "window's own mean per channel; instance: also standardize each window inside "
        "the model by the values it may see (RevIN); none: raw values",
    ),
    "device": (dict(), "auto, cpu, cuda or cuda:1"),
    "random_state": (
        dict(type=int, metavar="SEED"),
        "seed of initialization, masks, shuffling and the validation split "
        "(random_state in the Python API)",
    ),
}
_SWITCHES = {  # boolean parameters: (option for True, option for False, help)
    "pretrain": ("--pretrain", "--no-pretrain", "self-pretrain before fine-tuning"),
    "no_decay_norms": (
        "--no-decay-norms",
        "--decay-norms",
        "no weight decay on biases, norms, positions and the class token",
    ),
    "linear_probe": (
        "--linear-probe",
        "--no-linear-probe",
        "after pretraining train only the classification head",
    ),
    "window_stats": (
        "--window-stats",
        "--no-window-stats",
        "give the classifier each window's per-channel mean and log-std (the levels "
        "instance normalization removes)",
    ),
    "steps_like_spt": (
        "--steps-like-spt",
        "--no-steps-like-spt",
        "with --no-pretrain: train for the whole budget SPT would resolve (the "
        "compute-matched control scratch-long)",
    ),
    "amp": (
        "--amp",
        "--no-amp",
        "bf16 mixed precision on CUDA (forward passes under autocast, losses in float32); "
        "ignored on CPU",
    ),
}
# set per cell by the grid of evaluate / study run, which take lists instead
GRID_SET = ("depth", "masking", "random_state", "pretrain", "steps_like_spt")
# the estimator's own order (get_params sorts the names)
_ORDER = [
    n for n in inspect.signature(SPTClassifier.__init__).parameters if n in {**_MODEL, **_SWITCHES}
]


def _cli_default(name: str):
    """The estimator's default as the command line writes it."""
    v = DEFAULTS[name]
    if name == "normalize":
        return {True: "channel", False: "none"}.get(v, v)
    if name == "augment":
        return list(check_augment(v)) or ["none"]
    if name == "class_weight":
        return "none" if v is None else v
    return v


def add_model_args(
    p: argparse.ArgumentParser, *, grid: bool = False, given_only: bool = False
) -> None:
    """An option for every scalar ``SPTClassifier`` parameter, defaults the estimator's.

    ``grid`` (``evaluate``, ``study run``): depth, masking, seed and pretraining are set
    per cell by ``--depths`` / ``--maskings`` / ``--seeds`` (:func:`add_grid_args`), so no
    single-value twin is accepted and silently ignored. ``given_only`` (``study run``):
    options the user does not give stay out of the parsed namespace, so a study stores
    only what was set and resumes unchanged when the estimator's defaults move.
    """
    for name in _ORDER:
        if grid and name in GRID_SET:
            continue
        default = _cli_default(name)
        if name in _SWITCHES:
            on, off, text = _SWITCHES[name]
            _switch(p, name, on, off, default, text, given_only)
            continue
        kw, text = _MODEL[name]
        kw = dict(kw)
        if name == "attention":
            kw["choices"] = tuple(ATTENTION)
        option = "--seed" if name == "random_state" else "--" + name.replace("_", "-")
        shown = _shown(default) + (", the estimator's" if given_only else "")
        p.add_argument(
            option,
            dest=name,
            default=argparse.SUPPRESS if given_only else default,
            help=_with_default(text, shown),
            **kw,
        )


def add_grid_args(
    p: argparse.ArgumentParser,
    *,
    depths: Sequence[int],
    maskings: Sequence[str],
    seeds: Sequence[int] = (0,),
) -> None:
    """``--depths`` / ``--maskings`` / ``--seeds`` (aliases ``--depth`` / ``--masking`` /
    ``--seed``): the grid of ``evaluate`` and ``study run``."""
    p.add_argument(
        "--depths", "--depth", type=positive_int, nargs="+", default=list(depths), metavar="N",
        help=_with_default("Transformer depths of the grid", _shown(depths)),
    )  # fmt: skip
    p.add_argument(
        "--maskings", "--masking", nargs="+", default=list(maskings), choices=STRATEGIES,
        help=_with_default("SPT masking strategies of the grid", _shown(maskings)),
    )  # fmt: skip
    p.add_argument(
        "--seeds", "--seed", type=int, nargs="+", default=list(seeds), metavar="SEED",
        help=_with_default(
            "seeds of the grid: every cell is trained with each (random_state in the Python "
            "API)",
            _shown(seeds),
        ),
    )  # fmt: skip
    p.add_argument(
        "--no-scratch", action="store_true",
        help=_with_default("leave out the label-only scratch models", "off: scratch included"),
    )  # fmt: skip
    p.add_argument(
        "--no-scratch-long", action="store_true",
        help=_with_default(
            "leave out scratch-long, the compute-matched control (label-only training for "
            "SPT's whole budget of optimizer steps)",
            "off: included",
        ),
    )  # fmt: skip


def add_baseline_args(p: argparse.ArgumentParser) -> None:
    """``--baselines NAME ...`` / ``--no-baselines``: the baselines fitted beside the grid
    on the same folds (:mod:`medspt.baselines`)."""
    from medspt.baselines import BASELINES

    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--baselines", "--baseline", nargs="+", default=["minirocket"], choices=sorted(BASELINES),
        metavar="NAME",
        help=_with_default(
            "baselines fitted on the same folds and seeds, each set against the medspt "
            f"configuration chosen by validation subjects (choices: {', '.join(BASELINES)})",
            "minirocket",
        ),
    )  # fmt: skip
    g.add_argument(
        "--no-baselines", dest="baselines", action="store_const", const=[],
        help=_with_default("fit no baseline", "off: MiniRocket is fitted"),
    )  # fmt: skip


def model_params(a) -> dict:
    """``SPTClassifier`` parameters of the model options in the namespace ``a`` (those
    present: ``study run`` holds only the given ones)."""
    given = vars(a)
    out = {}
    for name in _ORDER:
        if name not in given:
            continue
        v = given[name]
        if name == "normalize":
            v = normalize_value(v)
        elif name == "augment":
            v = None if "none" in v else list(v)
        elif name == "class_weight":
            v = None if v == "none" else v
        out[name] = v
    return out
