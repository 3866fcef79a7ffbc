"""Starting medspt costs nothing it does not need: ``import medspt`` and the command line's
``--help`` and dataset commands load no PyTorch, scikit-learn or Numba; ``python -m medspt``
is the ``medspt`` command; the lazily loaded names are the public API."""

from __future__ import annotations

import subprocess
import sys

import pytest

import medspt
from medspt.cli.commands import COMMANDS, build_parser

HEAVY = ("torch", "sklearn", "numba", "scipy", "mne", "optuna", "aeon", "pandas")


def _loaded_after(code: str) -> set[str]:
    """The heavy top-level packages a fresh interpreter holds after running ``code``."""
    probe = (
        "import sys, contextlib, io\n"
        f"with contextlib.redirect_stdout(io.StringIO()):\n    {code}\n"
        f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    return set(out.split())


@pytest.mark.parametrize(
    "code",
    [
        "import medspt",
        "import medspt.cli.commands",
        "from medspt.cli import main\n    try: main(['--help'])\n    except SystemExit: pass",
        "from medspt.cli import main; main(['datasets', 'list'])",
        "from medspt.cli import main; main(['datasets', 'info', 'gaitpd'])",
        "from medspt.cli import main\n    try: main(['study', '--help'])\n"
        "    except SystemExit: pass",
        "from medspt.cli import main\n    try: main(['study', 'report', '--help'])\n"
        "    except SystemExit: pass",
    ],
)
def test_start_loads_no_heavy_package(code):
    assert _loaded_after(code) == set()


def test_reading_stored_results_loads_no_model():
    # metrics, predictions tables and Results read stored results: no PyTorch
    loaded = _loaded_after("import medspt.estimator.metrics, medspt.evaluation.results")
    assert "torch" not in loaded and "pandas" in loaded


def test_study_builds_only_the_named_sub_command():
    from medspt.cli.commands import _named_command

    assert _named_command(["study", "report", "--study", "s"]) == ("study", "study report")
    assert _named_command(["study", "--help"]) == ("study",)
    assert _named_command(["--help"]) == ()
    parser = build_parser(_named_command(["study", "report"]))
    study = next(a for a in parser._actions if a.dest == "command").choices["study"]
    sub = next(a for a in study._actions if a.dest == "study_command").choices
    assert any(a.dest == "baselines" for a in sub["report"]._actions)
    assert not any(a.dest == "depths" for a in sub["run"]._actions)  # help line only
    everything = build_parser()
    study = next(a for a in everything._actions if a.dest == "command").choices["study"]
    sub = next(a for a in study._actions if a.dest == "study_command").choices
    assert any(a.dest == "depths" for a in sub["run"]._actions)
    helps = {
        c.dest: c.help
        for c in next(a for a in study._actions if a.dest == "study_command")._choices_actions
    }
    from medspt.cli.study import STUDY_HELP

    assert helps == STUDY_HELP


def test_the_first_model_name_loads_the_library():
    loaded = _loaded_after("import medspt; medspt.SPTClassifier")
    assert {"torch", "sklearn"} <= loaded


def test_python_dash_m_is_the_medspt_command():
    out = subprocess.run(
        [sys.executable, "-m", "medspt", "--version"], capture_output=True, text=True
    )
    assert out.returncode == 0 and out.stdout.strip() == f"medspt {medspt.__version__}"
    bad = subprocess.run([sys.executable, "-m", "medspt", "fitt"], capture_output=True, text=True)
    assert bad.returncode == 2 and "invalid choice: 'fitt'" in bad.stderr


def test_lazy_names_are_the_public_api():
    for name in medspt.__all__:
        assert getattr(medspt, name) is not None, name
        assert name in dir(medspt)
    from medspt.api import fit_spt
    from medspt.core.errors import InputError

    assert medspt.fit_spt is fit_spt and medspt.InputError is InputError
    assert medspt.datasets.protocol.__module__ == "medspt.datasets.protocols"  # a submodule
    with pytest.raises(AttributeError, match="module 'medspt' has no attribute 'fit_sptt'"):
        medspt.fit_sptt  # noqa: B018


def test_hierarchical_attention_needs_no_import_of_its_own():
    # it used to register itself when medspt.nn.attention was imported
    out = subprocess.run(
        [sys.executable, "-c", "from medspt.nn.model import ATTENTION; print(sorted(ATTENTION))"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "['full', 'hierarchical']"


def test_every_command_lists_the_same_help_line_built_or_not():
    full = build_parser()
    shell = build_parser(commands=())

    def lines(parser):
        sub = next(a for a in parser._actions if a.dest == "command")
        return {c.dest: c.help for c in sub._choices_actions}

    assert lines(shell) == lines(full) == COMMANDS
    # only the named command has its options built
    only_fit = build_parser(commands=("fit",))
    sub = next(a for a in only_fit._actions if a.dest == "command")
    assert any(a.dest == "d_model" for a in sub.choices["fit"]._actions)
    assert not any(a.dest == "cv" for a in sub.choices["evaluate"]._actions)


def test_old_module_paths_import_with_a_deprecation_warning():
    import importlib
    import importlib.util

    from medspt._moved import MOVED

    sys.modules.pop("medspt.stats", None)
    with pytest.warns(DeprecationWarning, match="medspt.stats moved to medspt.evaluation.stat"):
        old = importlib.import_module("medspt.stats")
    new = importlib.import_module("medspt.evaluation.statistics")
    assert old is new and new.__spec__.name == "medspt.evaluation.statistics"
    from medspt.stats import compare_subjects  # the from-form works as before

    assert compare_subjects is new.compare_subjects
    # every old path names a module that exists at its new place
    assert all(importlib.util.find_spec(target) for target in MOVED.values())
    # the packages that kept their names keep their public names
    from medspt.data import WindowSet, make_windows
    from medspt.estimator import SPTClassifier

    assert medspt.make_windows is make_windows and medspt.WindowSet is WindowSet
    assert medspt.SPTClassifier is SPTClassifier
