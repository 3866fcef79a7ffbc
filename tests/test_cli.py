import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from conftest import subject_frame

import medspt
from medspt import SPTClassifier
from medspt.cli.commands import main


def test_fit_then_predict_from_csv(tmp_path, capsys):
    data = tmp_path / "rec.csv"
    subject_frame().to_csv(data, index=False)
    model = tmp_path / "out" / "m.safetensors"
    rc = main(
        [
            "fit",
            "--data",
            str(data),
            "--window",
            "2s",
            "--depth",
            "1",
            "--d-model",
            "16",
            "--n-heads",
            "2",
            "--pretrain-epochs",
            "1",
            "--epochs",
            "2",
            "--min-steps",
            "0",
            "--masking",
            "block",
            "--out",
            str(model),
        ]
    )
    assert rc == 0 and model.is_file()
    assert model.with_suffix(".history.png").read_bytes()[:4] == b"\x89PNG"
    clf = medspt.load(model)
    assert clf.masking == "block" and clf.depth == 1 and clf.frame_spec_.window == 40
    preds = tmp_path / "p.csv"
    assert main(["predict", "--model", str(model), "--data", str(data), "--out", str(preds)]) == 0
    win = pd.read_csv(preds)
    rec = pd.read_csv(tmp_path / "p.recordings.csv")
    assert len(win) == 6 * (600 // 40) and len(rec) == 6
    assert set(win["predicted"]) <= {"fast", "slow"}


def test_parquet_input(tmp_path):
    pytest.importorskip("pyarrow")
    data = tmp_path / "rec.parquet"
    subject_frame().to_parquet(data)
    out = tmp_path / "m.safetensors"
    assert (
        main(
            [
                "fit",
                "--data",
                str(data),
                "--window",
                "40",
                "--depth",
                "1",
                "--d-model",
                "16",
                "--n-heads",
                "2",
                "--pretrain-epochs",
                "1",
                "--epochs",
                "1",
                "--min-steps",
                "0",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert medspt.load(out).n_steps_ == 40


@pytest.mark.parametrize(
    "argv, message",
    [
        (["fit", "--data", "nope.csv"], "--data file 'nope.csv' does not exist"),
        (["predict", "--model", "nope.safetensors", "--data", "x.csv"], "nope.safetensors"),
    ],
)
def test_cli_errors_are_one_line(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_cli_bad_extension_and_bad_column(tmp_path, capsys):
    bad = tmp_path / "data.xlsx"
    bad.write_text("x")
    assert main(["fit", "--data", str(bad)]) == 2
    assert "expected a .csv, .tsv or .parquet" in capsys.readouterr().err
    data = tmp_path / "rec.csv"
    subject_frame().to_csv(data, index=False)
    assert main(["fit", "--data", str(data), "--label", "diagnosis"]) == 2
    assert "label column 'diagnosis' not found" in capsys.readouterr().err


def test_demo_quick_writes_table_and_plot(tmp_path, capsys):
    out = tmp_path / "demo"
    assert (
        main(["demo", "--quick", "--depths", "1", "--folds", "2", "--quiet", "--out", str(out)])
        == 0
    )
    text = capsys.readouterr().out
    assert "SYNTHETIC" in text and "| 1 | spt-span |" in text and "| 1 | scratch |" in text
    res = pd.read_csv(out / "results.csv")
    assert len(res) == 8
    assert set(res["config"]) == {"scratch", "scratch-long", "spt-span", "minirocket"}
    assert "## medspt or MiniRocket?" in text  # the paired answer, printed
    # the SPT answer is printed as summary.md states it, and after the numbers the demo
    # says again that they are about synthetic data and where the others are
    summary = (out / "summary.md").read_text()
    answer = next(line for line in text.splitlines() if "**Did self-pretraining help?**" in line)
    assert answer in summary
    versus = text[text.index("## medspt or MiniRocket?") :].splitlines()[2]
    assert versus in summary
    tail = " ".join(text[text.rindex("| – | minirocket |") :].split())  # lines wrapped at 78
    assert "benchmarks/results/public_sets.md" in tail and "MiniRocket leads or ties" in tail
    pred = pd.read_csv(out / "predictions.csv")
    assert len(pred) == res["n_test"].sum()
    subjects = pd.read_csv(out / "subjects.csv")
    assert subjects["n_windows"].sum() == len(pred)
    assert "Holm" in (out / "comparisons.md").read_text()
    assert set(res["fold"]) == {0, 1}
    assert (out / "accuracy_vs_depth.png").read_bytes()[:4] == b"\x89PNG"
    assert "gain vs scratch" in (out / "summary.md").read_text()


def test_evaluate_takes_grid_options_not_single_ones():
    # evaluate runs a grid: a single --depth / --seed / --masking must reach the grid (as
    # an abbreviation of --depths / --seeds / --maskings), never be accepted and ignored
    from medspt.cli.commands import build_parser

    a = build_parser().parse_args(
        ["evaluate", "--data", "x.csv", "--depth", "4", "--seed", "3", "--masking", "channel"]
    )
    assert (a.depths, a.seeds, a.maskings) == ([4], [3], ["channel"])
    assert not any(hasattr(a, k) for k in ("depth", "seed", "random_state", "masking"))
    f = build_parser().parse_args(["fit", "--data", "x.csv", "--depth", "4", "--seed", "3"])
    assert (f.depth, f.random_state, f.masking) == (4, 3, "span")  # --seed is random_state
    from medspt.cli.args import model_params as _model_params

    # the command line's defaults are the estimator's
    assert _model_params(f)["normalize"] == SPTClassifier().normalize == "instance"
    assert _model_params(f)["augment"] is None is SPTClassifier().augment
    assert _model_params(f)["min_steps"] == SPTClassifier().min_steps
    some = build_parser().parse_args(["fit", "--data", "x.csv", "--augment", "jitter", "shift"])
    assert _model_params(some)["augment"] == ["jitter", "shift"]
    none = build_parser().parse_args(["fit", "--data", "x.csv", "--augment", "none"])
    assert _model_params(none)["augment"] is None
    w = build_parser().parse_args(["fit", "--data", "x.csv", "--normalize", "window"])
    assert _model_params(w)["normalize"] == "window"


def test_console_script_is_installed():
    exe = Path(sys.executable).parent / "medspt"
    exe = str(exe) if exe.exists() else shutil.which("medspt")
    if exe is None:
        pytest.skip("the medspt console script is not installed (pip install -e .)")
    r = subprocess.run([exe, "--version"], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == f"medspt {medspt.__version__}"


def test_study_run_passes_normalize_only_when_given():
    # absent by default, so a study started before the option existed resumes unchanged
    from medspt.cli.args import model_params as _model_params
    from medspt.cli.commands import build_parser

    a = build_parser().parse_args(["study", "run", "--data", "demo", "--d-model", "32"])
    assert _model_params(a) == {"d_model": 32}
    a = build_parser().parse_args(["study", "run", "--data", "demo", "--normalize", "window"])
    assert _model_params(a) == {"normalize": "window"}
