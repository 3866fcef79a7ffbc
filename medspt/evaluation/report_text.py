"""Sentences for readers of medspt's tables: what each column and configuration means,
and settings as a readable table. Shared by ``medspt evaluate``'s files and the study
report, so both explain the same numbers the same way."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

__all__ = ["column_notes", "config_notes", "settings_table"]

# one sentence per column of a summarize() table, in the words of a clinical reader
COLUMN_NOTES = {
    "depth": "number of Transformer blocks stacked in the model (its capacity).",
    "configuration": "how the model was trained (see the list of configurations).",
    "mean ± std": "the score on subjects the model never saw, averaged over the "
    "cross-validation folds and seeds, with its spread.",
    "folds×seeds": "how many models were fitted for the row.",
    "steps/fit": "optimizer steps per model, pretraining included (the training budget).",
    "gain vs scratch": "how much better (positive) or worse (negative) the row scores than "
    "the model trained from scratch on the labels at the same depth.",
    "95 % CI": "the range the gain lies in with 95 % confidence; a range that contains 0 "
    "means no demonstrated difference.",
    "p (unit)": "the probability of a gain at least this large if training made no "
    "difference, tested over subjects (or folds), with the number of them.",
    "p (Holm)": "the same p-value corrected for the number of comparisons in the table.",
    "attention distance": "how far apart, in tokens, the moments are that the model "
    "relates to each other (smaller: it looks more at nearby moments).",
    "locality": "how much more attention goes to neighbouring tokens than if the model "
    "spread it evenly (1 = no preference for nearby moments).",
    "chance": "the score of a rule that ignores the signals: always naming the most "
    "frequent class (majority), or guessing each class equally often (uniform).",
}

CONFIG_NOTES = {
    "scratch": "*scratch*: trained on the labels only.",
    "scratch-long": "*scratch-long*: trained on the labels only, for as many optimizer "
    "steps as SPT's pretraining and fine-tuning together — the compute-matched control "
    'for "SPT helps", which otherwise could just mean "SPT trained longer". SPT is said '
    "to help only where it beats the better of scratch and scratch-long at its depth.",
    "scratch-alibi": "*scratch-alibi*: trained on the labels only, with a built-in "
    "preference for nearby moments (ALiBi: -m·|i−j| added to the attention scores) "
    "instead of learned positions.",
    "spt": "*spt-X*: self-pretrained — first learns to reconstruct parts of the training "
    "recordings hidden by masking strategy X (no labels), then trains on the labels.",
    "nested-best": "*nested-best*: in each fold, the configuration with the best score "
    "on that fold's validation subjects — the honest estimate of choosing a "
    "configuration and then using it.",
    "minirocket": "*minirocket*: aeon's MiniRocket, the strong cheap baseline (random "
    "convolution features and a ridge classifier; no Transformer), fitted on the same "
    "folds and seeds; it has no depth.",
    "multirocket-hydra": "*multirocket-hydra*: aeon's MultiRocket-Hydra, a stronger "
    "convolution-feature baseline, fitted on the same folds and seeds; it has no depth.",
}


def config_notes(configs: Iterable[str]) -> list[str]:
    """One sentence per kind of configuration that was actually run."""
    names = {str(c).rpartition(": ")[2] for c in configs}
    kinds = {"spt" if n.startswith("spt-") else n for n in names}
    return [text for kind, text in CONFIG_NOTES.items() if kind in kinds]


def column_notes(columns: Iterable[str]) -> list[str]:
    """``- **column**: sentence`` for each known column among ``columns``, in table order."""
    return [f"- **{c}**: {COLUMN_NOTES[c]}" for c in columns if c in COLUMN_NOTES]


def settings_table(settings: Mapping, title: str = "setting") -> str:
    """A Markdown table of ``settings`` (nested mappings flattened as ``a.b``); lists and
    tuples shown comma-separated, None as "—"."""
    rows: list[tuple[str, str]] = []

    def walk(prefix: str, value) -> None:
        if isinstance(value, Mapping) and value:
            for k, v in value.items():
                walk(f"{prefix}.{k}" if prefix else str(k), v)
        else:
            rows.append((prefix, _show(value)))

    walk("", dict(settings))
    lines = [f"| {title} | value |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in rows]
    return "\n".join(lines)


def _show(value) -> str:
    if value is None or value == {}:
        return "—"
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value)) if value else "—"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value).replace("|", "\\|")
