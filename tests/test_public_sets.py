"""benchmarks/public_sets.py and export_public_sets.py: cases become a long frame without
losing a sample, the inner split is stratified and fixed, finished runs are skipped.
Synthetic arrays only: no aeon, no downloads."""

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import FAST

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import export_public_sets as ex  # noqa: E402
import public_sets as ps  # noqa: E402


def ragged(n=7, n_ch=3, seed=0):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(3, 12, size=n)
    cases = [rng.standard_normal((n_ch, L)) for L in lengths]
    return cases, lengths


def test_pad_cases_and_to_long_keep_every_sample_label_and_length():
    cases, lengths = ragged()
    X, lens = ex.pad_cases(cases)
    assert X.dtype == np.float32 and X.shape == (7, 3, lengths.max())
    assert np.array_equal(lens, lengths)
    for i, L in enumerate(lengths):
        assert np.isnan(X[i, :, L:]).all() and not np.isnan(X[i, :, :L]).any()
    y = np.array(list("abcabca"))
    ids = ps.case_ids("train", len(y))
    df = ps.to_long(X, lens, y, ids)
    assert list(df.columns) == ["subject", "recording", "label", "dim_0", "dim_1", "dim_2"]
    assert len(df) == lengths.sum() and not df.isna().any().any()
    for i, (cid, g) in enumerate(df.groupby("recording", sort=False)):
        assert cid == ids[i] and (g["subject"] == cid).all()
        assert len(g) == lengths[i]
        assert (g["label"] == y[i]).all()
        # exact: float32 values survive the float64 frame unchanged, in time order
        got = g[["dim_0", "dim_1", "dim_2"]].to_numpy().T
        assert np.array_equal(got, X[i, :, : lengths[i]].astype(np.float64))
        assert np.array_equal(got.astype(np.float32), cases[i].astype(np.float32))
    assert "label" not in ps.to_long(X, lens, None, ids).columns  # test frames: no labels


def test_equal_length_array_passes_through():
    X = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    Xp, lens = ex.pad_cases(X)
    assert np.array_equal(Xp, X.astype(np.float32)) and list(lens) == [4, 4]
    df = ps.to_long(Xp, lens, ["u", "v"])
    assert len(df) == 8 and df["subject"].nunique() == 2


def test_inner_split_is_stratified_disjoint_and_deterministic():
    y = np.repeat(["a", "b", "c", "d"], [8, 12, 20, 5])
    fit, val = ex.inner_split(y)
    assert set(fit).isdisjoint(val) and sorted([*fit, *val]) == list(range(len(y)))
    assert len(val) == int(np.ceil(0.25 * len(y)))
    for c in np.unique(y):  # every class keeps about its share on both sides
        share = np.mean(y == c)
        assert np.mean(y[val] == c) == pytest.approx(share, abs=1 / len(val))
        assert (y[fit] == c).any() and (y[val] == c).any()
    again = ex.inner_split(y.copy())
    assert np.array_equal(fit, again[0]) and np.array_equal(val, again[1])
    assert not np.array_equal(val, ex.inner_split(y, seed=1)[1])


def test_resolve_sets_expands_groups():
    assert ex.resolve_sets(["univariate"]) == list(ex.UNIVARIATE)
    assert ex.resolve_sets(["GunPoint", "all"])[0] == "GunPoint"
    assert len(ex.resolve_sets(["all", "GunPoint"])) == len(ex.SETS)


def _row(set_="GunPoint", mode="inner", seed=0, params="{}", acc=0.9, rev="abc", note="",
         defaults="d1"):  # fmt: skip
    return dict(set=set_, mode=mode, seed=seed, params=params, medspt_accuracy=acc,
                git_revision=rev, note=note, defaults=defaults)  # fmt: skip


def test_resume_skips_finished_runs_and_retries_refusals_at_new_revisions(tmp_path):
    done = ps.append_row(None, _row())
    done = ps.append_row(done, _row("JapaneseVowels", acc=np.nan, note="refused: too long"))
    csv = tmp_path / "r.csv"
    done.to_csv(csv, index=False)
    done = ps.read_results(csv)  # as a resumed run sees it
    assert ps.is_done(done, "GunPoint", "inner", 0, "{}", "other", defaults="d1")
    assert not ps.is_done(done, "GunPoint", "inner", 0, "{}", "other", True, defaults="d1")
    assert not ps.is_done(done, "GunPoint", "test", 0, "{}", "abc")  # other mode
    assert not ps.is_done(done, "GunPoint", "inner", 1, "{}", "abc")  # other seed
    assert not ps.is_done(done, "GunPoint", "inner", 0, '{"patch_len": 2}', "abc")
    assert not ps.is_done(done, "ArrowHead", "inner", 0, "{}", "abc")
    assert ps.is_done(done, "JapaneseVowels", "inner", 0, "{}", "abc")  # same revision
    assert not ps.is_done(done, "JapaneseVowels", "inner", 0, "{}", "def")
    assert not ps.is_done(None, "GunPoint", "inner", 0, "{}", "abc")
    # the same params under other defaults: another run, never done
    assert not ps.is_done(done, "GunPoint", "inner", 0, "{}", "abc", defaults="d2")
    # a rerun is appended: the history stays, the report reads the last row
    done = ps.append_row(done, _row("JapaneseVowels", acc=0.8, rev="def"))
    assert len(done) == 3 and list(done.columns) == ps.COLUMNS
    jv = done[done["set"] == "JapaneseVowels"]
    assert jv["medspt_accuracy"].isna().iloc[0] and jv["medspt_accuracy"].iloc[-1] == 0.8
    assert ps.params_key({"b": 1, "a": 2}) == ps.params_key({"a": 2, "b": 1})


def test_rows_are_appended_and_rows_before_the_defaults_column_never_count(tmp_path):
    csv = tmp_path / "r.csv"
    old = pd.DataFrame([_row(acc=0.123456789012345678)]).drop(columns="defaults")
    old.to_csv(csv, index=False)  # the layout before the defaults column
    before = ps.read_results(csv)
    assert not ps.is_done(before, "GunPoint", "inner", 0, "{}", "abc", defaults="d1")
    ps.save_row(csv, _row(acc=0.5))  # rewritten once in today's columns, every row kept
    rows = ps.read_results(csv)
    assert list(rows.columns) == ps.COLUMNS and len(rows) == 2
    assert rows["medspt_accuracy"].iloc[0] == before["medspt_accuracy"].iloc[0]
    assert pd.isna(rows["defaults"].iloc[0]) and rows["defaults"].iloc[1] == "d1"
    text = csv.read_text()
    ps.save_row(csv, _row("ArrowHead", acc=0.7))  # appended: earlier lines untouched
    assert csv.read_text().startswith(text) and len(ps.read_results(csv)) == 3


def test_defaults_key_follows_the_resolved_parameters():
    assert ps.defaults_key({}) == ps.defaults_key({"depth": 2})  # 2 is the default
    assert ps.defaults_key({}) != ps.defaults_key({"depth": 3})
    assert len(ps.defaults_key({})) == 8


def _cache(tmp_path, name="Tiny"):
    rng = np.random.default_rng(0)
    y_tr, y_te = np.repeat(["p", "q"], 8), np.repeat(["p", "q"], 3)

    def cases(y):
        lengths = rng.integers(24, 33, size=len(y))
        freq = {"p": 0.3, "q": 1.2}
        return [
            np.sin(np.arange(L) * freq[c])[None] + 0.1 * rng.standard_normal((1, L))
            for c, L in zip(y, lengths)
        ]

    arrays = {}
    for split, y in (("train", y_tr), ("test", y_te)):
        X, lens = ex.pad_cases(cases(y))
        arrays |= {f"X_{split}": X, f"len_{split}": lens, f"y_{split}": y}
    np.savez_compressed(tmp_path / f"{name}.npz", **arrays)
    val = ex.inner_split(y_tr)[1]
    inner = {"accuracy": 0.75, "split_seed": 0, "val_index": val.tolist()}
    scores = {"sets": {name: {"test": {"accuracy": 1.0}, "inner": inner, "via": ex.VIA}}}
    (tmp_path / ex.MINIROCKET_FILE).write_text(json.dumps(scores))


def test_main_writes_rows_and_skips_them_when_resumed(tmp_path, capsys):
    _cache(tmp_path)
    params = json.dumps(FAST)
    argv = ["--sets", "Tiny", "--cache", str(tmp_path), "--out", str(tmp_path / "o.md"),
            "--params", params]  # fmt: skip
    ps.main([*argv, "--inner"])
    ps.main(argv)
    rows = pd.read_csv(tmp_path / "o.csv")
    assert list(rows["mode"]) == ["inner", "test"]
    inner, test = rows.iloc[0], rows.iloc[1]
    assert (inner["n_train"], inner["n_test"], test["n_train"], test["n_test"]) == (12, 4, 16, 6)
    assert inner["minirocket_accuracy"] == 0.75 and test["minirocket_accuracy"] == 1.0
    assert 0 <= test["medspt_accuracy"] <= 1
    assert test["difference"] == pytest.approx(test["medspt_accuracy"] - 1.0)
    assert json.loads(test["settings"])["patch_len"] == FAST["patch_len"]
    capsys.readouterr()
    ps.main(argv)  # resumed: nothing refitted
    assert "skipped" in capsys.readouterr().out
    assert len(pd.read_csv(tmp_path / "o.csv")) == 2
    assert "| Tiny |" in (tmp_path / "o.md").read_text()
    assert rows["defaults"].nunique() == 1
    # a second seed: the report gains the mean over seeds
    ps.main([*argv, "--seed", "1"])
    rows = pd.read_csv(tmp_path / "o.csv")
    md = (tmp_path / "o.md").read_text()
    assert "mean over seeds [0, 1]" in md
    mean = rows[rows["mode"] == "test"]["medspt_accuracy"].mean()
    assert f"| Tiny | univariate | 2 | {mean:.3f} | 1.000 |" in md
    # a row another process appended reaches the report of a run that only skips
    extra = rows[rows["mode"] == "test"].iloc[[0]].assign(seed=2, medspt_accuracy=0.0)
    extra.to_csv(tmp_path / "o.csv", mode="a", header=False, index=False)
    (tmp_path / "o.md").write_text("stale")
    ps.main(argv)  # every set skipped
    assert "mean over seeds [0, 1, 2]" in (tmp_path / "o.md").read_text()


def test_minirocket_scores_unequal_split_lengths(tmp_path):
    """Each split is padded to its own longest case (here train 32, test shorter):
    MiniRocket must still fit on one and predict the other."""
    _cache(tmp_path)
    with np.load(tmp_path / "Tiny.npz") as f:
        arrays = dict(f)
    arrays["X_test"] = arrays["X_test"][:, :, :20]
    arrays["len_test"] = np.minimum(arrays["len_test"], 20)
    np.savez_compressed(tmp_path / "Tiny.npz", **arrays)
    scores = ex.minirocket_scores("Tiny", tmp_path)
    assert scores["input"].startswith("unequal lengths 20-")
    assert scores["test"]["accuracy"] >= 5 / 6  # sine frequencies 0.3 vs 1.2 rad/step
    a, b = ex.same_length(np.zeros((2, 1, 3)), np.ones((1, 1, 5)))
    assert a.shape == (2, 1, 5) and np.isnan(a[:, :, 3:]).all() and (b == 1).all()
