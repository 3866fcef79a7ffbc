"""A choice between configurations warns when a fold's validation subjects are too few to
tell candidates apart (fewer than ``MIN_CHOICE_SUBJECTS``)."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

from medspt.evaluation.choice import (
    MIN_CHOICE_SUBJECTS,
    choose_configuration,
    nested_best,
    validation_subjects_per_fold,
)


def _rows(n_val: list[int]) -> pd.DataFrame:
    """Two configurations on each fold, fold ``k`` holding out ``n_val[k]`` subjects."""
    rows = []
    for fold, n in enumerate(n_val):
        for config, score in (("scratch", 0.6), ("spt-span", 0.7)):
            rows.append(
                dict(
                    fold=fold, config=config, depth=2, seed=0, val_score=score,
                    val_subjects=" ".join(f"s{i}" for i in range(n)), balanced_accuracy=0.5,
                )
            )  # fmt: skip
    return pd.DataFrame(rows)


def test_validation_subjects_are_counted_per_fold():
    assert validation_subjects_per_fold(_rows([3, 7])).tolist() == [3, 7]
    assert validation_subjects_per_fold(_rows([2]).drop(columns="val_subjects")).empty


@pytest.mark.parametrize("choose", [nested_best, choose_configuration])
def test_a_choice_on_few_validation_subjects_warns(choose):
    with pytest.warns(
        UserWarning, match=r"rests on 5 validation subjects in fold 1 \(fewer than 6\)"
    ):
        choose(_rows([8, 5]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        choose(_rows([MIN_CHOICE_SUBJECTS, 9]))  # enough subjects everywhere
        choose(_rows([3, 3])[lambda d: d["config"] == "spt-span"])  # one candidate: no choice


def test_one_validation_subject_is_named_in_the_singular():
    with pytest.warns(UserWarning, match=r"rests on 1 validation subject in fold 0 \(fewer"):
        nested_best(_rows([1, 7]))


def test_the_command_line_shows_a_repeated_warning_once(capsys):
    from medspt.cli.commands import build_parser
    from medspt.cli.messages import show_warnings_as

    show = show_warnings_as("medspt evaluate", build_parser(commands=()))
    for text in (
        "the nested choice rests on 2 subjects",
        "other",
        "the nested choice rests on 2 subjects",
    ):
        show(UserWarning(text), UserWarning, "f.py", 1)
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "medspt evaluate: warning: the nested choice rests on 2 subjects",
        "medspt evaluate: warning: other",
    ]
