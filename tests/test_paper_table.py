"""benchmarks/paper_table.py and benchmarks/sensitivity.py: variant studies, baseline
budgets and the sweep's table, on real journal storage and the demo data."""

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import paper_table as pt  # noqa: E402
import sensitivity  # noqa: E402

from medspt.study import run_study  # noqa: E402

TINY = dict(d_model=8, n_heads=2, epochs=1, pretrain_epochs=1, batch_size=128)


def test_variant_names_follow_the_settings_that_differ():
    assert pt._suffix(TINY) == ""
    assert pt._suffix({**TINY, "normalize": "window"}) == "-window"
    both = {**TINY, "normalize": "window", "pooling": "cls", "lr": 0.003}
    assert pt._suffix(both) == "-window-cls-lr0.003"
    assert pt._variant(TINY) == "channel scaling"
    assert pt._variant(both) == "per-window centring, cls pooling, lr 0.003"
    assert pt._suffix({**TINY, "normalize": "window", "val_size": 0.0}) == "-window-val0"
    assert pt._variant({"val_size": 0.0}) == "channel scaling, no validation split"


def test_baseline_rows_carry_their_training_budget(tmp_path, monkeypatch):
    monkeypatch.setattr(pt, "RESULTS", tmp_path)
    row = dict(seed=0, balanced_accuracy=0.5)
    pd.DataFrame([{**row, "config": "tsai-minirocket", "fold": f} for f in range(2)]).to_csv(
        tmp_path / "baselines_X.csv", index=False
    )
    (tmp_path / "baselines_X.md").write_text("- Networks: fit_one_cycle, 30 epochs (MVP 20)\n")
    nets = pd.DataFrame(
        [
            {**row, "config": "tsai-tstplus", "fold": 0, "balanced_accuracy": 0.6},
            {**row, "config": "tsai-tstplus-mvp", "fold": 0, "balanced_accuracy": 0.7},
        ]
    )
    nets.to_csv(tmp_path / "baselines_X_long.csv", index=False)
    (tmp_path / "baselines_X_long.md").write_text(
        "- Networks: fit_one_cycle, 15 epochs (MVP pretraining 10), lr_max 0.001\n"
    )
    nets.to_csv(tmp_path / "baselines_X_short.csv", index=False)
    (tmp_path / "baselines_X_short.md").write_text(
        "- Networks: fit_one_cycle, 6 epochs (MVP pretraining 6), lr_max 0.001\n"
    )
    b = pt._read_baselines("X")
    assert b["config"].tolist() == [
        "tsai-minirocket",
        "tsai-minirocket",
        "tsai-tstplus (15 epochs)",
        "tsai-tstplus-mvp (15 epochs, MVP 10)",
        "tsai-tstplus (6 epochs)",
        "tsai-tstplus-mvp (6 epochs, MVP 6)",
    ]
    assert pt._read_baselines("nothing") is None


def test_report_finds_every_study_of_a_protocol(tmp_path):
    url = f"journal:{tmp_path / 'p.log'}"
    grid = dict(depths=(1,), maskings=(), cv=2, window="4s", verbose=False, storage=url)
    for name, extra in [("paper-X", {}), ("paper-X-window", {"normalize": "window"})]:
        run_study("demo", study_name=name, params={**TINY, **extra}, **grid)
    run_study("demo", study_name="paper-XY", params=TINY, **grid)  # another protocol
    studies = pt._studies("X", url)
    assert [s.study_name for s in studies] == ["paper-X", "paper-X-window"]

    base = pd.DataFrame(
        {"config": ["tsai-minirocket"] * 2 + ["tsai-tstplus"], "balanced_accuracy": [0.4, 0.6, 0.3]}
    )
    rows = pt._summary_rows("X", studies, base, "balanced_accuracy")
    assert len(rows) == 2
    assert rows[0].startswith("| X | channel scaling | scratch, depth 1 (of 1 rows) |")
    assert rows[1].startswith("| X | per-window centring | scratch, depth 1 (of 1 rows) |")
    assert all(r.endswith("| 0.500 (tsai-minirocket) |") for r in rows)
    # each row's score is the study's completed cell
    for study, r in zip(studies, rows):
        assert f"| {study.best_value:.3f} |" in r


def test_sensitivity_rows_and_differences_match_the_fits(tmp_path):
    variants = ["base", "window", "window+cls"]
    args = ["--protocol", "demo", "--variants", *variants, "--seeds", "0"]
    args += ["--reference", "window+cls", "--tag", "t", "--out", str(tmp_path)]
    assert sensitivity.main(args) == 0
    df = pd.read_csv(tmp_path / "sensitivity_demo_t.csv")
    assert df.groupby("variant").size().to_dict() == {v: 3 for v in variants}  # 3 demo folds
    md = (tmp_path / "sensitivity_demo_t.md").read_text()
    assert "| vs window+cls |" in md
    ref = df[df["variant"] == "window+cls"].set_index("fold")["balanced_accuracy"]
    for v in variants:
        acc = df[df["variant"] == v].set_index("fold")["balanced_accuracy"]
        line = next(ln for ln in md.splitlines() if ln.startswith(f"| {v} |"))
        assert f"| {acc.mean():.3f} ± {acc.std(ddof=1):.3f} |" in line
        if v != "window+cls":
            assert f"| {(acc - ref).mean():+.3f} |" in line
    assert "pooling='cls'" in md and np.isfinite(df["wall_time_s"]).all()


def test_sensitivity_refuses_a_reference_it_does_not_run(capsys):
    with pytest.raises(SystemExit):
        sensitivity.main(["--variants", "base", "window", "--reference", "window+cls"])
    assert "--reference 'window+cls' is not among --variants" in capsys.readouterr().err
