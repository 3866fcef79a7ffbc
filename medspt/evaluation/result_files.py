"""Out-of-fold results as files a clinical reader opens: per-window predictions, a
per-subject table, confusion matrices and per-class recall/precision, with figures.
Written by ``medspt evaluate`` and the study report alike."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from medspt.evaluation.plots import plot_confusion, plot_subjects

__all__ = ["per_class_markdown", "write_oof_files"]


def _slug(config: str, depth) -> str:
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", str(config)).strip("_")
    return name if pd.isna(depth) else f"{name}_depth{int(depth)}"


def write_oof_files(results, out, compress: bool = False) -> dict[str, Path]:
    """Write the out-of-fold views of ``results`` (an :class:`~medspt.api.Results`) into
    ``out``: ``predictions.csv`` (every window, fit and seed; ``.csv.gz`` with
    ``compress``), ``subjects.csv``, ``confusion.csv``, ``per_class.csv``, and per
    configuration ``confusion/<config>_depth<d>.png`` and ``subjects/<config>_depth<d>.png``.
    Returns the paths by name; nothing when the results hold no predictions."""
    pred = getattr(results, "predictions", None)
    if pred is None or not len(pred):
        return {}
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "predictions": out / ("predictions.csv.gz" if compress else "predictions.csv"),
        "subjects": out / "subjects.csv",
        "confusion": out / "confusion.csv",
        "per_class": out / "per_class.csv",
    }
    subjects, confusion = results.subjects, results.confusion
    pred.to_csv(paths["predictions"], index=False)
    subjects.to_csv(paths["subjects"], index=False)
    confusion.to_csv(paths["confusion"], index=False)
    results.per_class.to_csv(paths["per_class"], index=False)
    for (config, depth), g in confusion.groupby(["config", "depth"], sort=False, dropna=False):
        what = f"{config}" + ("" if pd.isna(depth) else f", depth {int(depth)}")
        name = _slug(config, depth)
        paths[f"confusion/{name}"] = plot_confusion(
            g, out / "confusion" / f"{name}.png", title=f"{what}: out-of-fold windows"
        )
    skipped = []
    for (config, depth), g in subjects.groupby(["config", "depth"], sort=False, dropna=False):
        what = f"{config}" + ("" if pd.isna(depth) else f", depth {int(depth)}")
        if g["label"].notna().any():  # subjects with one label each
            name = _slug(config, depth)
            paths[f"subjects/{name}"] = plot_subjects(
                g, out / "subjects" / f"{name}.png", title=f"{what}: held-out subjects"
            )
        else:
            skipped.append(what)
    if skipped:  # say why the promised figures are not there, where they would be
        paths["subjects/README"] = _write_no_subject_figures(out / "subjects", skipped)
    return paths


def _write_no_subject_figures(folder: Path, skipped: list[str]) -> Path:
    """A note in ``subjects/`` saying why a configuration has no per-subject figure."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "README.md"
    path.write_text(
        "# No per-subject figure for: " + "; ".join(skipped) + "\n\n"
        "A per-subject figure shows one true class per subject against the class predicted "
        "for that subject. Every held-out subject of these configurations has windows of "
        "more than one class (the label changes inside the subjects' recordings), so a "
        "subject has no single true class to plot. The per-subject numbers are in "
        "`subjects.csv` (the `label` column is empty for such subjects); per-window "
        "results are in `predictions.csv` and the confusion matrices in `confusion/`.\n"
    )
    return path


def per_class_markdown(per_class: pd.DataFrame) -> str:
    """Recall and precision of each class per configuration and depth (seeds averaged),
    as Markdown."""
    keys = [k for k in ("depth", "config") if k in per_class.columns]
    mean = per_class.groupby([*keys, "class"], sort=False, dropna=False)[
        ["recall", "precision"]
    ].mean()
    classes = list(dict.fromkeys(per_class["class"]))
    head = " | ".join(f"recall {c}" for c in classes)
    head += " | " + " | ".join(f"precision {c}" for c in classes)
    lines = [
        f"| depth | configuration | {head} |",
        "|---:|---|" + "---:|" * (2 * len(classes)),
    ]
    for key, g in mean.groupby(level=list(range(len(keys))), sort=False, dropna=False):
        depth, config = key if len(keys) == 2 else (np.nan, key)
        g = g.droplevel(list(range(len(keys))))
        cells = [f"{g.loc[c, 'recall']:.2f}" for c in classes]
        cells += [f"{g.loc[c, 'precision']:.2f}" for c in classes]
        shown = "–" if pd.isna(depth) else int(depth)
        lines.append(f"| {shown} | {config} | " + " | ".join(cells) + " |")
    return (
        "\n".join(lines)
        + "\n\n*recall*: share of the windows of a class that the model named correctly "
        "(sensitivity); *precision*: share of the windows the model gave a class that "
        "truly belong to it. Out-of-fold windows, seeds averaged.\n"
    )
