"""``compact_storage`` and ``medspt study compact``: a real journal of a real (tiny) study
copied into a small journal file that reports and resumed runs read as they read the
source."""

from __future__ import annotations

import optuna
import pandas as pd
import pytest
from optuna.trial import TrialState
from study_helpers import demo_study

from medspt.cli.commands import main
from medspt.core.errors import InputError
from medspt.study import compact_storage, make_storage, results_frame
from medspt.study.grid import Cell
from medspt.study.trials import finished_folds


@pytest.fixture(scope="module")
def journal(tmp_path_factory):
    """A demo study's journal: two completed cells (two folds each); a third completed
    trial with an attribute of its own named like a fold row's; a stopped trial with its
    first fold finished and a running one with its second."""
    path = tmp_path_factory.mktemp("compact") / "s.log"
    study = demo_study(f"journal:{path}", "c", depths=(1,), seeds=(0,))
    first = study.get_trials(states=(TrialState.COMPLETE,))[0]
    rows = first.user_attrs["folds"]
    study.set_user_attr("note", "kept")

    def add(config: str, state, value=None, **attrs) -> None:
        params = {"depth": 1, "config": config, "seed": 0}
        study.add_trial(
            optuna.trial.create_trial(
                params=params, distributions=first.distributions, value=value,
                state=state, user_attrs=attrs,
            )
        )  # fmt: skip

    add("scratch", TrialState.COMPLETE, first.value, folds=rows, fold_0=rows[0], fold_note="mine")
    add("spt-span", TrialState.FAIL, fold_0=rows[0], error="stopped while running")
    add("spt-span", TrialState.RUNNING, fold_1=rows[1], heartbeat="2026-01-01T00:00:00")
    # a second study, minimizing, whose completed trial has fold rows but no "folds"
    other = optuna.create_study(study_name="other", storage=study._storage)
    other.add_trial(optuna.trial.create_trial(value=1.0, user_attrs={"fold_0": rows[0]}))
    return path


def _trials(path, name="c"):
    storage = make_storage(f"journal:{path}", heartbeat=None)
    return optuna.load_study(study_name=name, storage=storage)


def test_the_copy_reads_as_the_source_without_the_repeated_fold_rows(journal, tmp_path):
    source_bytes = journal.read_bytes()
    out = tmp_path / "small.log"
    assert compact_storage(f"journal:{journal}", out) == {"c": 5, "other": 1}
    assert journal.read_bytes() == source_bytes  # the source is left as it was
    assert out.stat().st_size < len(source_bytes)
    src, dst = _trials(journal), _trials(out)
    assert dst.user_attrs == src.user_attrs == {**src.user_attrs, "note": "kept"}
    system = [s._storage.get_study_system_attrs(s._study_id) for s in (src, dst)]
    assert system[0] == system[1]
    assert src.direction == dst.direction == optuna.study.StudyDirection.MAXIMIZE
    before, after = src.get_trials(), dst.get_trials()
    assert [(t.number, t.state, t.params, t.value) for t in after] == [
        (t.number, t.state, t.params, t.value) for t in before
    ]
    assert [t.state for t in after] == [TrialState.COMPLETE] * 3 + [
        TrialState.FAIL,
        TrialState.RUNNING,
    ]
    for a, b in zip(before, after):
        dropped = {k for k in a.user_attrs if k.removeprefix("fold_").isdigit()}
        if a.state == TrialState.COMPLETE:
            assert dropped and dropped <= {"fold_0", "fold_1"}  # they repeat "folds"
            assert b.user_attrs == {k: v for k, v in a.user_attrs.items() if k not in dropped}
            assert [b.user_attrs["folds"][k] for k in (0, 1)] == a.user_attrs["folds"]
            assert a.user_attrs["folds"][0] == a.user_attrs["fold_0"]
        else:  # a stopped cell resumes from these
            assert b.user_attrs == a.user_attrs and dropped
    assert after[2].user_attrs["fold_note"] == "mine"  # not a fold row: kept
    # what a resumed run and a report read is unchanged
    cell = Cell(1, "spt-span", 0)
    resumed = {0: (3, before[0].user_attrs["fold_0"])}  # trial 3 stopped after fold 0
    assert finished_folds(dst, cell) == finished_folds(src, cell) == resumed
    res_src, res_dst = results_frame(src), results_frame(dst)
    pd.testing.assert_frame_equal(res_dst, res_src)
    pd.testing.assert_frame_equal(res_dst.predictions, res_src.predictions)
    assert len(res_dst) == 6  # three completed cells' two folds
    # without "folds" beside them, a completed trial's fold rows are its only copy
    (kept,) = _trials(out, "other").get_trials()
    assert kept.user_attrs == {"fold_0": before[0].user_attrs["fold_0"]}
    assert _trials(out, "other").direction == optuna.study.StudyDirection.MINIMIZE


def test_in_place_copy_replaces_the_journal_and_is_stable(journal, tmp_path):
    path = tmp_path / "in_place.log"
    path.write_bytes(journal.read_bytes())
    compact_storage(f"journal:{path}")
    once = path.read_bytes()
    assert len(once) < journal.stat().st_size
    assert list(tmp_path.iterdir()) == [path]  # no partial copy left behind
    trials = _trials(path).get_trials()
    compact_storage(str(path), out=path)  # a path ending in .log is a journal too
    assert len(path.read_bytes()) == len(once)  # nothing more to leave out
    assert _trials(path).get_trials() == trials and trials[-1].state == TrialState.RUNNING
    assert list(tmp_path.iterdir()) == [path]


def test_other_storages_copy_into_a_journal(journal, tmp_path):
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    optuna.copy_study(
        from_study_name="c", from_storage=make_storage(f"journal:{journal}", heartbeat=None),
        to_storage=make_storage(url, heartbeat=None),
    )  # fmt: skip
    assert compact_storage(url, tmp_path / "from_db.log") == {"c": 5}
    assert len(results_frame(_trials(tmp_path / "from_db.log"))) == 6
    with pytest.raises(InputError, match=r"from_db.log already exists"):
        compact_storage(url, tmp_path / "from_db.log")


def test_bad_arguments_are_named_before_anything_is_written(journal, tmp_path):
    taken = tmp_path / "taken.log"
    taken.write_text("mine\n")
    with pytest.raises(InputError, match=r"taken.log already exists: give a new file"):
        compact_storage(f"journal:{journal}", taken)
    assert taken.read_text() == "mine\n"
    with pytest.raises(InputError, match=r"is a database, not a journal file.*out=\.\.\."):
        compact_storage(f"sqlite:///{tmp_path / 'x.db'}")
    with pytest.raises(InputError, match=r"no database file .*missing.db"):
        compact_storage(f"sqlite:///{tmp_path / 'missing.db'}", tmp_path / "o.log")
    with pytest.raises(InputError, match=r"no journal file .*none.log"):
        compact_storage(f"journal:{tmp_path / 'none.log'}", tmp_path / "o.log")
    with pytest.raises(InputError, match=r"storage must be a URL string .* got PosixPath"):
        compact_storage(journal, tmp_path / "o.log")
    empty = tmp_path / "empty.log"
    empty.touch()
    with pytest.raises(InputError, match=r"holds no study; nothing to copy"):
        compact_storage(f"journal:{empty}", tmp_path / "o.log")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.log", "taken.log"]


def test_cli_prints_the_studies_and_sizes_and_names_its_flags(journal, tmp_path, capsys):
    out = tmp_path / "cli.log"
    assert main(["study", "compact", "--storage", f"journal:{journal}", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "c " in printed and "5 trials" in printed
    before, after = journal.stat().st_size / 1e6, out.stat().st_size / 1e6
    assert f"2 studies -> {out}: {after:.2f} MB (was {before:.2f} MB)" in printed
    assert main(["study", "compact", "--storage", f"sqlite:///{tmp_path / 'x.db'}"]) == 2
    assert "(--out ...)" in capsys.readouterr().err
