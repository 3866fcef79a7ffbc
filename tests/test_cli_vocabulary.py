"""One vocabulary for the Python API and every command: the same option names, the
estimator's defaults, help texts that state them, clear errors for wrong keywords, and
command-line messages in command-line syntax."""

import argparse
import ast
import inspect
from pathlib import Path

import numpy as np
import optuna
import pandas as pd
import pytest
from conftest import subject_frame
from optuna.trial import TrialState

import medspt
from medspt import SPTClassifier, evaluate, fit_spt
from medspt.api import windows_from
from medspt.cli.args import DEFAULTS, model_params
from medspt.cli.commands import build_parser, main
from medspt.cli.messages import cli_hints, command_parser
from medspt.core.errors import InputError
from medspt.nn.augment import check_augment
from medspt.study import load_study_data, make_storage, results_frame, run_study

ESTIMATOR = list(inspect.signature(SPTClassifier.__init__).parameters)[1:]

# Deliberate differences between the Python names and the command line, with the reason.
API_ONLY = {
    "attention_options": "a dict of keyword arguments: Python API only",
    "channel_groups": "lists of channel names or indices: Python API only",
    "params": "run_study's dict of estimator parameters: the model options themselves",
}
# Python name -> option (the option's dest is given where it differs from the name)
RENAMED = {
    "random_state": "--seed",  # "seed" is what people type; dest stays random_state
    "verbose": "--quiet",  # inverted: progress is shown unless --quiet
    "scratch": "--no-scratch",  # inverted flags of the grids: on unless switched off
    "scratch_long": "--no-scratch-long",
    "diagnostics": "--no-diagnostics",
    "probes": "--no-probes",
    "study_name": "--study",  # as in `medspt study worker --study NAME`
}
# the grids (evaluate, study run) set these per cell; they take lists instead
GRID = {
    "depth": "depths",
    "masking": "maskings",
    "random_state": "seeds",
    "pretrain": None,
    "steps_like_spt": None,  # scratch-long's, set by the grid
}
# options that are not arguments of the function: the command line's own
CLI_ONLY = {"fit": {"data", "out"}, "evaluate": {"data", "out"}, "study run": set()}
# option dest -> Python name, where they differ
DEST_TO_API = {
    "quiet": "verbose",
    "no_scratch": "scratch",
    "no_scratch_long": "scratch_long",
    "no_diagnostics": "diagnostics",
    "no_probes": "probes",
    "study": "study_name",
}


def _subparser(*path: str) -> argparse.ArgumentParser:
    p = build_parser()
    for name in path:
        (sub,) = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
        p = sub.choices[name]
    return p


def _options(p: argparse.ArgumentParser) -> dict[str, list[str]]:
    """dest -> option strings of every option except -h."""
    out = {}
    for a in p._actions:
        if a.option_strings and a.dest != "help":
            out.setdefault(a.dest, []).extend(a.option_strings)
    return out


def _keywords(function) -> set[str]:
    return {
        n
        for n, prm in inspect.signature(function).parameters.items()
        if prm.kind in (prm.KEYWORD_ONLY, prm.POSITIONAL_OR_KEYWORD)
    }


COMMANDS = {
    "fit": (("fit",), (_keywords(fit_spt) - {"df"}) | set(ESTIMATOR)),
    "evaluate": (
        ("evaluate",),
        (_keywords(evaluate) - {"data", "y", "groups"}) | (set(ESTIMATOR) - set(GRID)),
    ),
    "study run": (("study", "run"), _keywords(run_study) | (set(ESTIMATOR) - set(GRID))),
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_api_argument_has_its_option_and_no_option_is_unexplained(command):
    path, names = COMMANDS[command]
    options = _options(_subparser(*path))
    as_api = {DEST_TO_API.get(d, d): d for d in options}
    expected = names - set(API_ONLY)
    assert expected - set(as_api) == set(), "API arguments without an option"
    # every option is an API argument (or the command line's own, like --out)
    assert set(as_api) - expected == CLI_ONLY[command]
    for name in sorted(expected):
        spelt = RENAMED.get(name, "--" + name.replace("_", "-"))
        assert spelt in options[as_api[name]], (name, options[as_api[name]])
    if command != "fit":  # the grids: lists, with the singular spelling as their alias
        for single, plural in (("depth", "depths"), ("masking", "maskings"), ("seed", "seeds")):
            assert options[plural][:2] == [f"--{plural}", f"--{single}"]
        assert not {"depth", "masking", "random_state", "pretrain", "steps_like_spt"} & set(options)


def _walk(p: argparse.ArgumentParser, prog: str = "medspt"):
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, sub in a.choices.items():
                yield from _walk(sub, f"{prog} {name}")
        elif a.dest not in ("help", "version"):
            yield prog, a


def test_every_option_of_every_command_states_its_default():
    seen = set()
    for prog, a in _walk(build_parser()):
        seen.add(prog)
        where = f"{prog} {'/'.join(a.option_strings) or a.dest}"
        assert a.help and a.help.strip(), f"{where} has no help"
        if a.option_strings and not a.required and a.nargs != 0:
            assert "(default: " in a.help, f"{where}: help does not state the default"
        if a.option_strings and a.nargs == 0:  # a flag says what happens without it
            assert "default" in a.help, f"{where}: flag help does not say the default"
        if a.required and a.option_strings:
            assert "(required)" in a.help, where
    for prog in ("medspt datasets download", "medspt study report", "medspt study worker"):
        assert prog in seen


def test_command_line_defaults_are_the_estimators(capsys):
    a = build_parser().parse_args(["fit", "--data", "x.csv"])
    params = model_params(a)
    assert set(params) == set(ESTIMATOR) - set(API_ONLY) - {"verbose"}
    for name, value in params.items():
        if name == "augment":
            assert check_augment(value) == check_augment(DEFAULTS["augment"])
        else:
            assert value == DEFAULTS[name], name
    # and the help shows them
    text = _subparser("fit").format_help()
    assert f"(default: {DEFAULTS['d_model']})" in text
    # study run stores only what is given (a study resumes unchanged when defaults move)
    s = build_parser().parse_args(["study", "run", "--data", "demo"])
    assert model_params(s) == {}


def test_value_parsers_auto_none_and_switches(capsys):
    parse = build_parser().parse_args
    base = ["fit", "--data", "x.csv"]
    a = parse([*base, "--patch-len", "auto", "--batch-size", "32", "--patience", "none"])
    assert (a.patch_len, a.batch_size, a.patience) == ("auto", 32, None)
    a = parse([*base, "--patch-len", "4", "--grad-clip", "none", "--attn-dropout", "0"])
    assert (a.patch_len, a.grad_clip, a.attn_dropout) == (4, None, 0.0)
    a = parse([*base, "--decay-norms", "--linear-probe", "--no-pretrain", "--class-weight", "none"])
    p = model_params(a)
    assert (p["no_decay_norms"], p["linear_probe"], p["pretrain"]) == (False, True, False)
    assert p["class_weight"] is None
    assert model_params(parse([*base, "--no-decay-norms"]))["no_decay_norms"] is True
    s = parse(["study", "run", "--data", "demo", "--batch-size", "auto", "--lr", "0.003"])
    assert model_params(s) == {"batch_size": "auto", "lr": 0.003}
    for bad in ("0", "-3", "eight"):
        with pytest.raises(SystemExit):
            parse([*base, "--patch-len", bad])
        assert "expected auto or a positive integer" in capsys.readouterr().err


# ---------------------------------------------------------------- wrong keywords, API side


def test_seed_keyword_is_told_its_name(frame):
    with pytest.raises(InputError) as e:
        fit_spt(frame, seed=0)
    assert str(e.value) == (
        "seed=0: the seed is called random_state here (--seed on the command line)"
    )
    assert isinstance(e.value, ValueError)
    with pytest.raises(InputError, match=r"seed=3: the seeds of evaluate are called seeds"):
        evaluate(frame, seed=3)


def test_misspelt_keywords_name_the_right_one(frame, tmp_path):
    with pytest.raises(InputError) as e:
        fit_spt(frame, n_head=2)
    assert str(e.value) == (
        "fit_spt() got an unknown keyword argument 'n_head'; did you mean 'n_heads'?"
    )
    with pytest.raises(InputError, match=r"'windw'; did you mean 'window'"):
        fit_spt(frame, windw="2s")  # fit_spt's own keyword
    with pytest.raises(InputError, match=r"evaluate\(\) got an unknown keyword argument 'cvs'"):
        evaluate(frame, cvs=3)
    with pytest.raises(InputError, match=r"it takes the SPTClassifier parameters"):
        fit_spt(frame, zzzz=1)  # nothing close: say what is accepted


def test_run_study_params_are_checked_before_anything_runs(tmp_path):
    url = f"sqlite:///{tmp_path / 's.db'}"
    with pytest.raises(InputError) as e:
        run_study("demo", storage=url, params={"d_modle": 8}, verbose=False)
    assert str(e.value) == (
        "unknown entry 'd_modle' in params of run_study(); did you mean 'd_model'?"
    )
    with pytest.raises(InputError, match=r"seed=1: the seeds of run_study are called seeds"):
        run_study("demo", storage=url, params={"seed": 1}, verbose=False)
    with pytest.raises(InputError, match=r"'cv' is an argument of run_study\(\) itself"):
        run_study("demo", storage=url, params={"cv": 3}, verbose=False)
    assert not (tmp_path / "s.db").exists()  # refused before a storage was made


def test_drop_short_and_strict_are_arguments_of_the_api(frame):
    short = frame[~((frame["subject"] == "slow0") & (frame["time"] >= 1.0))]
    with pytest.raises(InputError, match="use a shorter window or drop_short=True"):
        windows_from(short, window="2s", strict=True)
    with pytest.warns(UserWarning, match="1 subject.*dropped"):
        ws, _ = windows_from(short, window="2s", drop_short=True, strict=True)
    assert "slow0" not in set(ws.groups) and len(np.unique(ws.groups)) == 5
    with pytest.warns(UserWarning, match="1 subject.*dropped: 'slow0'"):  # not strict
        ws, _ = windows_from(short, window="2s")
    assert "slow0" not in set(ws.groups) and len(np.unique(ws.groups)) == 5


# ---------------------------------------------------------------- command-line messages


def _csv(tmp_path: Path, df: pd.DataFrame, name: str = "rec.csv") -> str:
    path = tmp_path / name
    df.to_csv(path, index=False)
    return str(path)


def test_cli_error_hints_use_options_not_python(tmp_path, capsys):
    df = subject_frame(n_per_class=2, seconds=5).drop(columns=["time"])
    df["t"] = df.groupby("subject").cumcount()  # a sample counter under a clock's name
    assert main(["fit", "--data", _csv(tmp_path, df)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("medspt fit: error: column(s) ['t'] are named like an index")
    assert "pass --channels a,b naming the signal columns" in err
    assert "channels=[" not in err and "Traceback" not in err

    data = _csv(tmp_path, subject_frame(n_per_class=2, seconds=5), "ok.csv")
    assert main(["evaluate", "--data", data, "--subject", "patient"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("medspt evaluate: error: subject column 'patient' not found")
    assert "(set --subject COLUMN to name yours)" in err and "subject=" not in err

    # 5-s recordings: 100 steps
    assert main(["fit", "--data", data, "--window", "200", "--strict"]) == 2
    err = capsys.readouterr().err
    assert "use a shorter window or --drop-short" in err and "drop_short" not in err


def test_cli_warnings_have_no_source_paths(tmp_path, capsys):
    df = subject_frame(n_per_class=2, seconds=5)
    df["elapsed"] = df.groupby("subject").cumcount() * 0.5  # a clock under another name
    # --fs contradicts the time column (20 Hz): a second warning; --window 3.5 then stops
    argv = ["fit", "--data", _csv(tmp_path, df), "--fs", "25", "--window", "3.5"]
    assert main(argv) == 2
    err = capsys.readouterr().err.splitlines()
    warn = [line for line in err if line.startswith("medspt fit: warning: ")]
    assert len(warn) == 2, err
    assert "channel(s) ['elapsed'] only ever increase" in warn[0]
    assert warn[0].endswith("drop them or pass --channels a,b")
    assert "not at --fs 25 Hz" in warn[1]
    assert "medspt.data.timing.regularize(df, fs=...)" in warn[1]  # Python code stays Python
    assert err[-1] == (
        "medspt fit: error: --window 3.5: use an int (samples) or a string like '10s'"
    )
    text = "\n".join(err)
    assert ".py:" not in text and "UserWarning" not in text


def test_hint_translation_follows_the_commands_options():
    parser = build_parser()
    fit = command_parser(parser, parser.parse_args(["fit", "--data", "x"]))
    grid = command_parser(parser, parser.parse_args(["study", "run", "--data", "x"]))
    msg = "depth=4, masking='span', random_state=2, pretrain=False; label_smoothing < 1"
    assert cli_hints(msg, fit) == (
        "--depth 4, --masking span, --seed 2, --no-pretrain; --label-smoothing < 1"
    )
    assert cli_hints(msg, grid).startswith("--depths 4, --maskings span, --seeds 2, pretrain")
    assert cli_hints("nothing to run: scratch=False", grid) == "nothing to run: --no-scratch"
    assert cli_hints("window=None: one case", fit) == "--window none: one case"
    assert cli_hints("channels=['a', 'b']", fit) == "--channels a,b"
    assert cli_hints("give fs=125.", fit) == "give --fs 125."
    assert cli_hints("f(fs=1) or unknown_name=3", fit) == "f(fs=1) or unknown_name=3"


# ---------------------------------------------------------------- study run data options


def test_study_run_cuts_windows_with_the_data_options(tmp_path, capsys):
    df = subject_frame(n_per_class=2, seconds=12).rename(
        columns={"subject": "patient", "label": "diagnosis", "recording": "session"}
    )
    df = df.rename(columns={"time": "secs"})
    df["noise"] = np.random.default_rng(0).standard_normal(len(df))  # not a channel here
    data = _csv(tmp_path, df)
    url = f"sqlite:///{tmp_path / 's.db'}"
    argv = ["study", "run", "--data", data, "--storage", url, "--study", "cols"]
    argv += ["--subject", "patient", "--label", "diagnosis", "--recording", "session"]
    argv += ["--time", "secs", "--channels", "a,b", "--window", "2s", "--stride", "1s"]
    argv += ["--depths", "1", "--seeds", "0", "--maskings", "span", "--cv", "2"]
    argv += ["--no-scratch-long", "--no-diagnostics", "--no-baselines", "--quiet"]
    argv += ["--epochs", "1", "--pretrain-epochs", "1", "--min-steps", "0"]
    argv += ["--d-model", "16", "--n-heads", "2", "--batch-size", "64"]
    assert main(argv) == 0
    err = capsys.readouterr().err  # 2 training subjects per fold: warned, in CLI form
    assert all(line.startswith("medspt study run: warning: ") for line in err.splitlines())
    study = optuna.load_study(study_name="cols", storage=make_storage(url, heartbeat=None))
    attrs = study.user_attrs["medspt"]
    spec = attrs["data"]
    assert (spec["subject"], spec["label"], spec["recording"], spec["time"]) == (
        "patient",
        "diagnosis",
        "session",
        "secs",
    )
    assert (spec["channels"], spec["window"], spec["stride"]) == (["a", "b"], "2s", "1s")
    assert attrs["params"] == {
        "epochs": 1, "pretrain_epochs": 1, "min_steps": 0, "d_model": 16, "n_heads": 2,
        "batch_size": 64,
    }  # fmt: skip
    assert set(attrs["classes"]) == {"fast", "slow"}
    # a worker joining the study cuts the same windows from the spec alone
    ws, folds = load_study_data(spec)
    assert ws.channels == ["a", "b"] and ws.fs == pytest.approx(20.0)
    assert set(ws.groups) == set(df["patient"]) and len(folds) == 2
    assert len(ws) == 4 * ((240 - 40) // 20 + 1)  # 4 patients, 2-s windows every 1 s
    done = study.get_trials(states=(TrialState.COMPLETE,))
    assert sorted(t.params["config"] for t in done) == ["scratch", "spt-span"]
    res = results_frame(study)
    assert res.groupby("config")["n_test"].sum().eq(len(ws)).all()
    # the same data options with a protocol are refused, naming them as options
    bad = ["study", "run", "--protocol", "GPD-1", "--subject", "patient", "--storage", url]
    assert main(bad) == 2
    err = capsys.readouterr().err
    assert err.startswith("medspt study run: error: --subject patient: --protocol GPD-1 fixes")


# ---------------------------------------------------------------- import direction


def test_no_library_module_imports_a_command_line_module():
    root = Path(medspt.__file__).parent
    cli = {
        "medspt.cli.commands",
        "medspt.cli.args",
        "medspt.cli.messages",
        "medspt.cli.study",
        "medspt.cli.datasets",
        "medspt.__main__",
        "medspt.cli.__init__",
    }
    offenders = []
    for path in root.rglob("*.py"):
        module = ".".join(path.relative_to(root.parent).with_suffix("").parts)
        imported = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
                imported |= {f"{node.module}.{a.name}" for a in node.names}
            elif isinstance(node, ast.Import):
                imported |= {a.name for a in node.names}
        if module == "medspt.cli.args":
            assert not imported & {"medspt.cli.commands", "medspt.cli.study"}, imported
        elif module not in cli and imported & cli:
            offenders.append((module, sorted(imported & cli)))
    assert offenders == []
