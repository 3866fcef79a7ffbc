"""Command line: ``medspt demo | fit | predict | evaluate | diagnose``."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

from medspt.augment import AUGMENTATIONS, check_augment
from medspt.errors import InputError, ModelFileError
from medspt.estimator import PAPER_RECIPE, SPTClassifier
from medspt.tables import read_table

# one source of truth: the command line's defaults are the estimator's
DEFAULTS = SPTClassifier().get_params()

DEMO_MASKINGS = ("random", "span", "channel", "block")


def _window_arg(value: str | None):
    if value is None or value == "auto":
        return "auto" if value else None
    if value.lower() == "none":  # one case per recording
        return None
    return int(value) if value.isdigit() else value


def _add_data_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", required=True, help="long-format .csv or .parquet file")
    p.add_argument("--label", default="label", help="label column (default: label)")
    p.add_argument("--subject", default="subject", help="subject column (default: subject)")
    p.add_argument("--recording", default="recording", help="recording column, if any")
    p.add_argument("--time", default="time", help="time column in seconds, if any")
    p.add_argument(
        "--channels",
        default=None,
        help="comma-separated signal columns (default: all other numeric columns)",
    )
    p.add_argument("--fs", type=float, default=None, help="sampling rate in Hz")
    p.add_argument(
        "--window",
        default="auto",
        help="window: samples (200), seconds (10s), or none (one case per recording)",
    )
    p.add_argument("--stride", default=None, help="stride: samples or seconds (default: window)")


def _add_model_args(p: argparse.ArgumentParser, grid: bool = False) -> None:
    """Model options; with ``grid`` (``evaluate``) depth, masking and seed come as lists
    (``--depths``, ``--maskings``, ``--seeds``) instead, so no single-value twin is
    accepted and silently ignored."""
    if not grid:
        p.add_argument("--depth", type=int, default=DEFAULTS["depth"])
    p.add_argument("--d-model", type=int, default=DEFAULTS["d_model"])
    p.add_argument("--n-heads", type=int, default=DEFAULTS["n_heads"])
    p.add_argument("--patch-len", type=int, default=DEFAULTS["patch_len"])
    if not grid:
        p.add_argument("--masking", default=DEFAULTS["masking"], choices=DEMO_MASKINGS)
    p.add_argument("--mask-ratio", type=float, default=DEFAULTS["mask_ratio"])
    p.add_argument("--mean-span", type=float, default=DEFAULTS["mean_span"])
    p.add_argument(
        "--augment",
        nargs="+",
        default=list(check_augment(DEFAULTS["augment"])) or ["none"],
        choices=(*AUGMENTATIONS, "none"),
        help="augment fine-tuning batches (never evaluation); none: no augmentation "
        f"(default: {' '.join(check_augment(DEFAULTS['augment'])) or 'none'})",
    )
    p.add_argument("--label-smoothing", type=float, default=DEFAULTS["label_smoothing"])
    p.add_argument(
        "--n-estimators",
        type=int,
        default=DEFAULTS["n_estimators"],
        help="models (seeds) averaged in probability; one model file holds them all",
    )
    p.add_argument(
        "--min-steps",
        type=int,
        default=DEFAULTS["min_steps"],
        help="floor on optimizer steps per training stage (small datasets)",
    )
    p.add_argument(
        "--mask-unit",
        default=DEFAULTS["mask_unit"],
        choices=("step", "token"),
        help="hide single time steps (the SPT paper) or whole patch tokens",
    )
    p.add_argument("--pretrain-epochs", type=int, default=DEFAULTS["pretrain_epochs"])
    p.add_argument("--epochs", type=int, default=DEFAULTS["epochs"])
    p.add_argument(
        "--attention",
        default="full",
        choices=("full", "hierarchical"),
        help="hierarchical: about linear cost in the number of tokens, for long windows",
    )
    p.add_argument(
        "--recover-epochs",
        type=int,
        default=0,
        help="with --attention hierarchical: epochs of full attention that end training",
    )
    p.add_argument(
        "--normalize",
        default={True: "channel", False: "none"}.get(DEFAULTS["normalize"], DEFAULTS["normalize"]),
        choices=("channel", "window", "instance", "none"),
        help="channel: standardize with training statistics; window: also subtract each "
        "window's own mean per channel (removes per-subject offsets); instance: also "
        "standardize each window inside the model by the values it may see (RevIN)",
    )
    p.add_argument("--device", default="auto")
    if not grid:
        p.add_argument("--seed", type=int, default=DEFAULTS["random_state"])


def normalize_value(option: str) -> bool | str:
    """``--normalize`` choice -> ``SPTClassifier(normalize=...)``."""
    return {"channel": True, "none": False}.get(option, option)


def _model_params(a) -> dict:
    return dict(
        d_model=a.d_model,
        n_heads=a.n_heads,
        patch_len=a.patch_len,
        mask_ratio=a.mask_ratio,
        mean_span=a.mean_span,
        mask_unit=a.mask_unit,
        augment=None if "none" in a.augment else a.augment,
        label_smoothing=a.label_smoothing,
        min_steps=a.min_steps,
        n_estimators=a.n_estimators,
        pretrain_epochs=a.pretrain_epochs,
        epochs=a.epochs,
        attention=a.attention,
        recover_epochs=a.recover_epochs,
        normalize=normalize_value(a.normalize),
        device=a.device,
    )


def _data_kwargs(a) -> dict:
    return dict(
        label=a.label,
        subject=a.subject,
        recording=a.recording,
        time=a.time,
        channels=a.channels.split(",") if a.channels else None,
        fs=a.fs,
        window=_window_arg(a.window),
        stride=_window_arg(a.stride),
    )


def _write_results(results: pd.DataFrame, out: Path, metric: str, title: str) -> pd.DataFrame:
    from medspt.api import comparison_table, markdown_comparisons, summarize
    from medspt.plots import plot_accuracy_vs_depth

    out.mkdir(parents=True, exist_ok=True)
    results.to_csv(out / "results.csv", index=False)
    predictions = getattr(results, "predictions", None)
    if predictions is not None:  # out-of-fold predictions of every window, fit and seed
        from medspt.metrics import subject_table

        predictions.to_csv(out / "predictions.csv", index=False)
        subject_table(predictions).to_csv(out / "subjects.csv", index=False)
    table = summarize(results, metric)
    (out / "summary.md").write_text(_markdown(table, metric))
    (out / "comparisons.md").write_text(
        markdown_comparisons(comparison_table(results, metric=metric), metric)
    )
    plot_accuracy_vs_depth(results, out / "accuracy_vs_depth.png", metric, title)
    return table


def _markdown(table: pd.DataFrame, metric: str) -> str:
    from medspt.api import TABLE_NOTE, markdown_table

    return markdown_table(table, metric) + "\n" + TABLE_NOTE + "\n"


def cmd_demo(a) -> int:
    from medspt.api import evaluate
    from medspt.synthetic import make_demo_frame

    t0 = time.perf_counter()
    banner = "=" * 78
    print(banner)
    print("medspt demo — SYNTHETIC DATA (built in, deterministic; not real recordings)")
    print("3 sensors, 12 subjects; the class (lag / lead / sync) is the timing between two")
    print("channels, so only temporal structure separates the classes.")
    print(banner)
    df = make_demo_frame(seed=a.seed)
    maskings = DEMO_MASKINGS if not a.quick else ("span",)
    depths = tuple(a.depths)
    print(
        f"Subject-wise {a.folds}-fold CV: scratch vs SPT ({', '.join(maskings)}) "
        f"at depths {depths}; 4-s windows."
    )
    results = evaluate(
        df,
        window="4s",
        cv=a.folds,
        depths=depths,
        maskings=maskings,
        seeds=(a.seed,),
        pretrain_epochs=10,
        epochs=30,
        batch_size=128,
        lr=3e-3,
        d_model=32,
        n_heads=4,
        patch_len=8,
        mean_span=4.0,
        # the demo's own recipe, fixed so its table does not move with the defaults
        **{**PAPER_RECIPE, "mask_ratio": 0.3},
        verbose=not a.quiet,
    )
    out = Path(a.out)
    table = _write_results(
        results, out, "balanced_accuracy", "SYNTHETIC demo data: balanced accuracy vs depth"
    )
    print()
    print(_markdown(table, "balanced_accuracy"))
    print(f"(synthetic data) per-fold rows: {out / 'results.csv'}")
    print(f"plot: {out / 'accuracy_vs_depth.png'}   table: {out / 'summary.md'}")
    print(f"finished in {time.perf_counter() - t0:.0f} s")
    return 0


def cmd_fit(a) -> int:
    from medspt.api import fit_spt
    from medspt.plots import plot_history

    df = read_table(a.data)
    clf = fit_spt(
        df,
        **_data_kwargs(a),
        depth=a.depth,
        masking=a.masking,
        pretrain=not a.no_pretrain,
        random_state=a.seed,
        verbose=True,
        **_model_params(a),
    )
    out = Path(a.out)
    clf.save(out)
    plot_history(clf, out.with_suffix(".history.png"))
    print(f"saved model to {out}; training curves: {out.with_suffix('.history.png')}")
    print(
        f"chosen epochs: {clf.best_epoch_}; for an honest accuracy estimate run "
        "`medspt evaluate` (subject-wise cross-validation)"
    )
    return 0


def cmd_predict(a) -> int:
    from medspt.persistence import load

    clf = load(a.model)
    if clf.frame_spec_ is None:
        raise InputError(
            f"model {a.model!r} was fitted on arrays, not a DataFrame; "
            "use the Python API to predict"
        )
    pred = clf.predict(read_table(a.data))
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    pred.windows.to_csv(out, index=False)
    rec = out.with_name(out.stem + ".recordings.csv")
    pred.recordings.to_csv(rec, index=False)
    print(f"{len(pred.windows)} window predictions -> {out}; per recording -> {rec}")
    return 0


def cmd_evaluate(a) -> int:
    from medspt.api import evaluate, windows_from
    from medspt.probes import probe_markdown
    from medspt.splits import subject_folds

    ws, _ = windows_from(read_table(a.data), **_data_kwargs(a))  # cut once, for both
    if ws.y is None:
        raise InputError(f"--data file {a.data!r} has no labels (--label {a.label})")
    folds = subject_folds(ws.y, ws.groups, a.cv)
    results = evaluate(
        ws,
        cv=folds,
        depths=tuple(a.depths),
        maskings=tuple(a.maskings),
        seeds=tuple(a.seeds),
        scratch_long=not a.no_scratch_long,
        **_model_params(a),
    )
    table = _write_results(results, Path(a.out), a.metric, None)
    print(_markdown(table, a.metric))
    probes = probe_markdown(ws, folds)  # the confound probes on the same folds
    (Path(a.out) / "probes.md").write_text(probes)
    print(probes)
    print(f"per-fold rows, out-of-fold predictions, paired comparisons and plot in {a.out}")
    return 0


def cmd_diagnose(a) -> int:
    from medspt.diagnostics import write_diagnostics
    from medspt.persistence import load

    names = a.names or [Path(m).name.split(".")[0] for m in a.models]
    if len(names) != len(a.models):
        raise InputError(f"--names gives {len(names)} names for {len(a.models)} models")
    if len(set(names)) != len(names):
        raise InputError(f"model names must differ, got {names}; pass --names")
    models = {n: load(m) for n, m in zip(names, a.models)}
    if a.data == "demo":
        from medspt.synthetic import make_demo_frame

        df = make_demo_frame()
    else:
        df = read_table(a.data)
    for n, m in zip(names, a.models):
        if models[n].frame_spec_ is None:
            raise InputError(
                f"model {m!r} was fitted on arrays, not a DataFrame; use "
                "medspt.diagnostics.write_diagnostics with its windows"
            )
    table = write_diagnostics(models, df, a.out, w=a.w, max_windows=a.max_windows)
    cols = ["model", "depth", "attention_distance", "uniform_distance", "locality_ratio"]
    cols += [c for c in ("positional_spearman",) if c in table]
    print(table[cols].to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    print(f"tables and figures in {a.out} (summary.md, distance_profiles.png, positional_*.png)")
    return 0


def build_parser() -> argparse.ArgumentParser:
    from medspt._version import __version__

    parser = argparse.ArgumentParser(
        prog="medspt", description="Self-pretrained Transformers for medical time series."
    )
    parser.add_argument("--version", action="version", version=f"medspt {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("demo", help="scratch vs SPT on built-in synthetic data (~2 min)")
    p.add_argument("--out", default="medspt-demo", help="output folder (default: medspt-demo)")
    p.add_argument("--folds", type=int, default=3)
    p.add_argument("--depths", type=int, nargs="+", default=[1, 2])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true", help="span masking only")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("fit", help="fit_spt on a long-format table and save the model")
    _add_data_args(p)
    _add_model_args(p)
    p.add_argument("--no-pretrain", action="store_true", help="train from scratch")
    p.add_argument("--out", default="model.safetensors", help="model file to write")
    p.set_defaults(func=cmd_fit)

    p = sub.add_parser("predict", help="per-window and per-recording predictions")
    p.add_argument("--model", required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--out", default="predictions.csv")
    p.set_defaults(func=cmd_predict)

    p = sub.add_parser("evaluate", help="subject-wise CV of scratch vs SPT")
    _add_data_args(p)
    _add_model_args(p, grid=True)
    p.add_argument("--cv", type=int, default=5)
    p.add_argument("--depths", type=int, nargs="+", default=[2])
    p.add_argument("--maskings", nargs="+", default=["span"], choices=DEMO_MASKINGS)
    p.add_argument("--seeds", type=int, nargs="+", default=[0])
    p.add_argument(
        "--no-scratch-long",
        action="store_true",
        help="leave out scratch-long, the compute-matched control (label-only training for "
        "SPT's whole budget of optimizer steps)",
    )
    p.add_argument("--metric", default="balanced_accuracy")
    p.add_argument("--out", default="medspt-evaluation")
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser(
        "diagnose", help="attention-proximity diagnostics of fitted models (scratch vs SPT)"
    )
    p.add_argument("models", nargs="+", help="model files, e.g. a scratch and an SPT model")
    p.add_argument(
        "--data", required=True, help="long-format .csv/.parquet file (cut as in training) or demo"
    )
    p.add_argument("--names", nargs="+", help="a name per model (default: file names)")
    p.add_argument("--out", default="medspt-diagnostics", help="output folder")
    p.add_argument("--w", type=int, default=1, help="locality radius in tokens (default 1)")
    p.add_argument("--max-windows", type=int, default=512, help="windows to average over")
    p.set_defaults(func=cmd_diagnose)

    from medspt.datasets.cli import add_datasets_parser

    add_datasets_parser(sub)
    from medspt.study.cli import add_study_parser

    add_study_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (InputError, ModelFileError, FileNotFoundError) as e:
        print(f"medspt {args.command}: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
