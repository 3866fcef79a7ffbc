"""benchmarks/select_defaults.py and benchmarks/default_model.py: the selection rule never
reads test subjects, ties go to the earlier candidate, and the default's report
aggregates exactly the stored runs."""

import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import FAST

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import default_model as dm  # noqa: E402
import select_defaults as sd  # noqa: E402
import select_model as sm  # noqa: E402

from medspt import evaluate, from_arrays, subject_folds  # noqa: E402


@pytest.fixture
def windows(arrays):
    X, y, groups = arrays
    return from_arrays(X, y, groups)


def test_inner_split_uses_training_subjects_only():
    rng = np.random.default_rng(0)
    groups = np.repeat([f"s{i}" for i in range(20)], 5)
    y = np.repeat(np.arange(20) % 2, 5)
    windows = from_arrays(rng.standard_normal((100, 2, 16)), y, groups)
    folds = subject_folds(windows.y, windows.groups, n_splits=4)
    for k, (train, test) in enumerate(folds):
        fit, val = sd.inner_split(windows, np.asarray(train), k)
        g = windows.groups
        assert set(g[fit]).isdisjoint(g[val])  # whole subjects on one side
        assert set(fit) | set(val) == set(train)  # every training window, nothing else
        assert set(g[val]).isdisjoint(g[test]) and set(g[fit]).isdisjoint(g[test])
        assert set(windows.y[val]) == set(windows.y[fit]) == {0, 1}  # stratified
        assert len(set(g[val])) == pytest.approx(0.25 * len(set(g[train])), abs=1)


def test_choose_weighs_protocols_equally_and_breaks_ties_toward_earlier_candidates():
    names = list(sd.CANDIDATES)
    rows = []
    # GPD-1 has three folds, NE-1 one: a protocol's mean counts once, whatever its folds
    scores = {names[0]: (0.70, 0.60), names[1]: (0.703, 0.601), names[2]: (0.60, 0.75)}
    for name, (gpd, ne) in scores.items():
        rows += [dict(protocol="GPD-1", fold=f, candidate=name, balanced_accuracy=gpd, fit_s=1)
                 for f in range(3)]  # fmt: skip
        rows.append(dict(protocol="NE-1", fold=0, candidate=name, balanced_accuracy=ne, fit_s=2))
    per, winner = sd.choose(pd.DataFrame(rows))
    assert per.loc[names[2], "score"] == pytest.approx((0.60 + 0.75) / 2)
    assert winner == names[2]  # 0.675 beats 0.650 and 0.652
    # within the tie margin, the earlier (simpler) candidate wins over a slightly better one
    rows = [r for r in rows if r["candidate"] != names[2]]
    per, winner = sd.choose(pd.DataFrame(rows))
    assert per.loc[names[1], "score"] > per.loc[names[0], "score"]
    assert winner == names[0]
    assert list(per.index) == names[:2] and (per["folds"] == 3).all()


def test_default_model_report_aggregates_the_stored_runs(windows, tmp_path, monkeypatch):
    monkeypatch.setattr(dm, "OUT", tmp_path)
    monkeypatch.setattr(dm, "RESULTS", tmp_path)
    folds = subject_folds(windows.y, windows.groups, n_splits=4)
    params = {k: v for k, v in FAST.items() if k != "depth"}
    res = evaluate(windows, cv=folds, seeds=(0,), verbose=False, **params)
    (tmp_path / "NE-1").mkdir()
    rows_csv, pred_csv = dm._paths("NE-1", "default", 0)
    res.predictions.to_csv(pred_csv, index=False)
    pd.DataFrame(res).assign(revision="abc1234").to_csv(rows_csv, index=False)
    # a baseline on the same folds: rows and predictions as benchmarks/baselines.py writes
    base = pd.DataFrame(res[res["config"] == "scratch"]).assign(config="tsai-minirocket")
    base["depth"] = np.nan
    base["balanced_accuracy"] = 0.5
    base.to_csv(tmp_path / "baselines_NE-1_minirocket-oof.csv", index=False)
    bp = res.predictions[res.predictions["config"] == "scratch"].assign(config="tsai-minirocket")
    bp["depth"] = np.nan
    bp.to_csv(tmp_path / "baselines_NE-1_minirocket-oof_predictions.csv.gz", index=False)

    loaded = dm.load("NE-1")
    assert len(loaded) == len(res) + len(base)
    assert len(loaded.predictions) == len(res.predictions) + len(bp)
    lines = dm.section("NE-1")
    text = "\n".join(lines)
    spt = res[res["config"] == "spt-span"]
    mean_ba = spt["balanced_accuracy"].mean()
    shown = re.search(r"\| mean \| \*\*([0-9.]+)\*\* \|", text)
    assert float(shown.group(1)) == pytest.approx(mean_ba, abs=6e-4)
    assert f"seeds [0], {len(folds)} subject-wise folds" in text
    assert f"| **{0.5:.3f}** |" in text  # MiniRocket's mean in the last columns
    row0 = spt[spt["fold"] == 0].iloc[0]
    assert f"| 0 | {row0['balanced_accuracy']:.3f} | {row0['subject_accuracy']:.3f} |" in text
    goal = dm.TARGETS["NE-1"]["balanced_accuracy"]
    verdict = "(met)" if mean_ba >= goal else "(**not met**, short by"
    assert f"balanced accuracy target {goal:.2f}: {shown.group(1)} {verdict}" in text
    assert "| spt-span | scratch-long |" in text and "| spt-span | tsai-minirocket |" in text
    assert "- code revisions of these fits: abc1234" in text
    steps = res.pivot_table(index="fold", columns="config", values="optimizer_steps")
    short = int((steps["scratch-long"] < steps["spt-span"]).sum())
    assert (
        f"scratch-long made fewer optimizer steps than SPT in {short} of {len(folds)} fits" in text
    )


def test_the_plan_runs_the_default_with_every_seed_first():
    assert dm._plan() == [("default", s) for s in dm.SEEDS]
    plan = dm._plan(ablation=True)
    assert plan[: len(dm.SEEDS)] == [("default", s) for s in dm.SEEDS]
    assert plan[len(dm.SEEDS) :] == [(v, 0) for v in dm.ABLATION]
    assert len(set(plan)) == len(plan)
    # every ablation removes something the default has
    from medspt import SPTClassifier

    defaults = SPTClassifier().get_params()
    for name, change in dm.ABLATION.items():
        assert any(defaults[k] != v for k, v in change.items()), name


def _model_rows(scores: dict, revision: str = "abc1234", n_items=None) -> list[dict]:
    """Rows of select_model: every item of every part, one score per candidate and part."""
    rows = []
    for name, per_part in scores.items():
        for part, score in per_part.items():
            for i in range((n_items or sm.N_ITEMS)[part]):
                rows.append(dict(part=part, item=f"{part}-{i}", candidate=name, score=score,
                                 fit_s=1.0, params="{}", revision=revision))  # fmt: skip
    return rows


def test_select_model_weighs_parts_equally_and_needs_every_item():
    a, b = list(sm.CANDIDATES)[:2]
    parts = {
        a: dict(zip(sm.PARTS, (0.8, 0.6, 0.7, 1.0))),
        b: dict(zip(sm.PARTS, (0.7, 0.6, 0.9, 1.0))),
    }
    rows = pd.DataFrame(_model_rows(parts))
    per, winner = sm.choose(rows, {a: {}, b: {}})
    assert per.loc[a, "score"] == pytest.approx(0.775) and per.loc[b, "score"] == pytest.approx(0.8)
    assert winner == b
    # a public set missing: that part, the score and the choice do not exist yet
    partial = rows.drop(rows.index[(rows["candidate"] == b) & (rows["item"] == "public-5")])
    per, winner = sm.choose(partial, {a: {}, b: {}})
    assert np.isnan(per.loc[b, "public"]) and winner is None


def test_select_model_ties_go_to_the_earlier_candidate_and_old_launches_do_not_count():
    a, b = list(sm.CANDIDATES)[:2]
    parts = {a: dict.fromkeys(sm.PARTS, 0.700), b: dict.fromkeys(sm.PARTS, 0.704)}
    rows = pd.DataFrame(_model_rows(parts))
    assert sm.choose(rows, {a: {}, b: {}})[1] == a
    # a row of a launch that is not counted cannot move the choice
    stale = pd.DataFrame(_model_rows({a: {"GPD-1": 0.0}}, revision=sm.NOT_COUNTED[0]))
    rows = sm.counted(pd.concat([stale, rows], ignore_index=True))
    assert len(rows) == 2 * sum(sm.N_ITEMS.values())
    assert sm.choose(rows, {a: {}, b: {}})[1] == a


def test_default_model_runs_resume_at_the_next_fold(windows, tmp_path, monkeypatch):
    """A run keeps each fold as it finishes; an interrupted run redoes no finished fold,
    and the finished run's files hold every fold, numbered as the protocol numbers them."""
    from types import SimpleNamespace

    monkeypatch.setattr(dm, "OUT", tmp_path)
    folds = subject_folds(windows.y, windows.groups, n_splits=3)
    p = SimpleNamespace(name="NE-1", windows=windows, folds=folds)
    with pytest.raises(SystemExit, match="fewer than 300 windows"):
        dm.run_one(p, "default", 0)  # 53 training windows: the default trains five members
    monkeypatch.setattr(dm, "SMALL_SET", 50)
    params = {k: v for k, v in FAST.items() if k != "depth"}
    calls = []

    def fast_fold(p, variant, seed, k):  # the real evaluate, with tiny models
        calls.append(k)
        if k == 1 and calls.count(1) == 1:
            raise KeyboardInterrupt  # the run stops after fold 0
        res = evaluate(p.windows, cv=[p.folds[k]], seeds=(seed,), baselines=(), verbose=False,
                       **params)  # fmt: skip
        res["fold"] = res.predictions["fold"] = k
        return res

    monkeypatch.setattr(dm, "_evaluate_fold", fast_fold)
    with pytest.raises(KeyboardInterrupt):
        dm.run_one(p, "default", 0)
    rows_csv, pred_csv = dm._paths("NE-1", "default", 0)
    assert not rows_csv.exists() and dm._fold_paths(rows_csv, 0)[0].exists()
    dm.run_one(p, "default", 0)
    assert calls == [0, 1, 1, 2]  # fold 0 was not fitted again
    rows, pred = pd.read_csv(rows_csv), pd.read_csv(pred_csv)
    assert sorted(rows["fold"].unique()) == [0, 1, 2]
    assert set(rows["config"]) == {"scratch", "scratch-long", "spt-span"}  # no baseline
    for k, (_, te) in enumerate(folds):
        assert set(pred[pred["fold"] == k]["subject"]) == set(windows.groups[te])
    assert not list(tmp_path.glob("NE-1/*_fold*"))  # the fold files are folded in


def test_synthetic_check_report_means_seeds_and_judges_the_echo_target():
    import synthetic_check as sc

    rows = pd.DataFrame(
        [
            {
                "task": "echo",
                "data_seed": 1,
                "seed": s,
                "balanced_accuracy": v,
                "fit_s": 10.0,
                "defaults": "aaa",
                "revision": "r1",
            }  # fmt: skip
            for s, v in enumerate([1.0, 0.9, 0.94])
        ]
        + [
            {
                "task": "echo",
                "data_seed": 1,
                "seed": 0,
                "balanced_accuracy": 0.5,
                "fit_s": 1.0,
                "defaults": "old",
                "revision": "r0",
            }
        ]  # fmt: skip
        + [
            {
                "task": "shape",
                "data_seed": 1,
                "seed": 0,
                "balanced_accuracy": 0.8,
                "fit_s": 1.0,
                "defaults": "aaa",
                "revision": "r1",
            }
        ]  # fmt: skip
    )
    text = sc.report(rows, "aaa")
    echo = next(line for line in text.splitlines() if line.startswith("| echo"))
    assert "| 0 1 2 |" in echo and "| 0.947 | 0.95 | **no** |" in echo  # old defaults left out
    shape = next(line for line in text.splitlines() if line.startswith("| shape"))
    assert shape.endswith("| 0.800 | – | – |")
    rows.loc[1, "balanced_accuracy"] = 0.96
    assert "| 0.967 | 0.95 | yes |" in sc.report(rows, "aaa")
    with pytest.raises(SystemExit):
        sc.main(["--data-seed", "0", "--report-only"])


def test_fold_fit_time_report_judges_the_target_per_protocol():
    import fold_fit_time as ft

    row = {"fold": 0, "threads": 2, "windows": 2785, "batch_size": 64, "pretrain_steps": 1500,
           "finetune_steps": 600, "ms_per_step": 57.1, "other_cpu": 0.02,
           "defaults": "aaa", "revision": "r1"}  # fmt: skip
    rows = pd.DataFrame([
        {**row, "protocol": "GPD-1", "fit_s": 120.0},
        {**row, "protocol": "GPD-1", "fit_s": 59.0},
        {**row, "protocol": "NE-1", "fit_s": 300.0},
    ])  # fmt: skip
    lines = [
        r for r in ft.report(rows).splitlines() if r.startswith("| GPD-1") or r.startswith("| NE-1")
    ]
    assert "| 1500 + 600 | 57 | 120 | 60 (**not met**) | 2% |" in lines[0]
    assert "| 59 | 60 | 2% |" in lines[1]
    assert "| 300 | – | 2% |" in lines[2] and "2,785" in lines[2]


def test_select_model_round6_needs_three_inner_folds_and_ties_keep_the_default():
    a, b = list(sm.ROUND6)
    assert sm.ROUND6[a] == {} and sm.ROUND6[b] == {"window_stats": True}
    parts = {a: dict.fromkeys(sm.PARTS, 0.700), b: dict.fromkeys(sm.PARTS, 0.704)}
    one_fold = pd.DataFrame(_model_rows(parts))  # rounds 4-5: one item per protocol
    assert sm.choose(one_fold, sm.ROUND6, sm.N_ITEMS6)[1] is None
    rows = pd.DataFrame(_model_rows(parts, n_items=sm.N_ITEMS6))
    assert sm.choose(rows, sm.ROUND6, sm.N_ITEMS6)[1] == a  # within 0.005: the default stays
    parts[b]["NE-1"] = 0.800  # +0.096 on one of four parts
    rows = pd.DataFrame(_model_rows(parts, n_items=sm.N_ITEMS6))
    per, winner = sm.choose(rows, sm.ROUND6, sm.N_ITEMS6)
    assert winner == b and per.loc[b, "score"] == pytest.approx(0.728)
    assert "## Round 6" in sm.report(rows)


def _store_run(res, variant: str, key: str, defaults: dict, seed_as: int = 0) -> None:
    """``res`` as the stored run of ``variant`` under ``key``, its seed renamed ``seed_as``
    and ``defaults`` as the settings its rows recorded (what run_one writes)."""
    import json

    stem = dm.OUT / "NE-1" / f"{variant.replace(' ', '-')}_seed{seed_as}_{key}"
    stem.parent.mkdir(exist_ok=True)
    res.predictions.assign(seed=seed_as).to_csv(f"{stem}_predictions.csv.gz", index=False)
    rows = pd.DataFrame(res).assign(seed=seed_as, revision="abc1234")
    rows.assign(defaults=json.dumps(defaults, sort_keys=True)).to_csv(f"{stem}.csv", index=False)


def test_the_ablation_chains_through_the_earlier_default_when_it_differs_in_window_stats(
    windows, tmp_path, monkeypatch
):
    monkeypatch.setattr(dm, "OUT", tmp_path)
    monkeypatch.setattr(dm, "RESULTS", tmp_path)
    monkeypatch.setattr(dm, "params_hash", lambda: "today000")
    monkeypatch.setattr(dm, "ABLATION_BASE", "base0000")
    folds = subject_folds(windows.y, windows.groups, n_splits=4)
    params = {k: v for k, v in FAST.items() if k != "depth"}
    today = evaluate(windows, cv=folds, seeds=(0,), verbose=False, **params)
    base = evaluate(windows, cv=folds, seeds=(1,), verbose=False, **params)  # other scores
    lever = evaluate(windows, cv=folds, seeds=(2,), verbose=False, scratch=False,
                     scratch_long=False, **params)  # fmt: skip
    lever["config"] = lever.predictions["config"] = "spt-span - patch tokens"
    settings = {"window_stats": True, "depth": 2, "n_estimators": 1}
    _store_run(today, "default", "today000", settings)
    _store_run(base, "default", "base0000", {**settings, "window_stats": False} | {"old": 1})
    _store_run(lever, "patch tokens", "base0000", {**settings, "window_stats": False})
    assert dm.base_differences("NE-1") == {"window_stats": (False, True)}

    text = "\n".join(dm.section("NE-1"))
    spt = lambda r: r.loc[r["config"] == "spt-span", "balanced_accuracy"].mean()  # noqa: E731
    cells = lambda line: [c.strip() for c in line.split("|")]  # noqa: E731
    row = next(x for x in text.splitlines() if x.startswith("| 2 | spt-span - no window stats"))
    assert "Ablation of window statistics, seeds [0]" in text
    assert float(cells(row)[4]) == pytest.approx(spt(base), abs=6e-4)  # the lever removed
    assert float(cells(row)[5]) == pytest.approx(spt(today), abs=6e-4)  # today's default
    assert float(cells(row)[6]) == pytest.approx(spt(base) - spt(today), abs=1.1e-3)
    row = next(x for x in text.splitlines() if x.startswith("| 2 | spt-span - patch tokens"))
    assert "each removed from round 5's default" in text
    assert float(cells(row)[5]) == pytest.approx(spt(base), abs=6e-4)  # against the base
    # the previous (patch) default's archived runs, paired with today's on the same seeds
    assert "Against the previous default" not in text
    archived = tmp_path / "default_model_P" / "NE-1"
    archived.mkdir(parents=True)
    base.predictions.assign(seed=0).to_csv(archived / "default_seed0_predictions.csv.gz")
    pd.DataFrame(base).assign(seed=0).to_csv(archived / "default_seed0.csv", index=False)
    text = "\n".join(dm.section("NE-1"))
    row = next(x for x in text.splitlines() if "| spt-span (patch default) |" in x)
    assert cells(row)[2:4] == ["spt-span", "spt-span (patch default)"]
    assert float(cells(row)[4]) == pytest.approx(spt(today), abs=6e-4)
    assert float(cells(row)[5]) == pytest.approx(spt(base), abs=6e-4)
    assert "its runs of seeds [0] on the same folds" in text
    # the earlier default's own report shows its own ablation, no chain
    text = "\n".join(dm.section("NE-1", "base0000"))
    assert "Ablation of this default, seed 0" in text and "window statistics" not in text

    # a base that differs in another setting too is no one-lever ablation
    _store_run(base, "default", "base0000", {**settings, "window_stats": False, "depth": 4})
    text = "\n".join(dm.section("NE-1"))
    assert "differ from today's default in depth, window_stats" in text
    assert "spt-span - no window stats" not in text and "spt-span - patch tokens" not in text
    # today's own ablation run of the lever replaces the chain
    _store_run(base, "default", "base0000", {**settings, "window_stats": False})
    off = dm._rows(base, lambda f: f["config"] == "spt-span")
    off["config"] = off.predictions["config"] = "spt-span - no window stats"
    _store_run(off, "no window stats", "today000", settings)
    text = "\n".join(dm.section("NE-1"))
    assert "Ablation of this default, seed 0" in text
    assert "Ablation of window statistics" not in text and "- patch tokens" not in text


def test_default_model_report_names_the_folds_of_unfinished_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(dm, "OUT", tmp_path)
    (tmp_path / "NE-1").mkdir()
    names = ["default_seed1_abc_fold0", "default_seed1_abc_fold3", "default_seed0_abc",
             "600-step-floor_seed0_abc_fold2", "default_seed1_other_fold1"]  # fmt: skip
    for name in names:
        (tmp_path / "NE-1" / f"{name}.csv").write_text("x\n")
    text = dm.in_progress("NE-1", "abc")
    assert text.endswith("600-step floor, seed 0: folds [2]; default, seed 1: folds [0, 3].")
    assert dm.in_progress("NE-1", "none") == ""
    assert dm.in_progress("NE-1", "abc", ["600-step floor"]).endswith("folds [2].")


def test_ensemble_scores_score_each_member_and_the_first_k_means():
    import ensemble_check as ec

    classes = np.array(["a", "b"])
    y = np.array(["a", "b", "a", "b"])
    p = [
        np.array([[0.9, 0.1], [0.6, 0.4], [0.8, 0.2], [0.3, 0.7]]),  # wrong on case 1
        np.array([[0.4, 0.6], [0.1, 0.9], [0.7, 0.3], [0.2, 0.8]]),  # wrong on case 0
        np.array([[0.6, 0.4], [0.45, 0.55], [0.2, 0.8], [0.4, 0.6]]),  # wrong on case 2
    ]
    s = ec.ensemble_scores(p, classes, y)
    assert s["single_mean"] == pytest.approx(0.75) and s["single_min"] == s["single_max"] == 0.75
    assert s["ensemble_1"] == 0.75  # the first member alone
    assert s["ensemble_2"] == 1.0  # (0.65, 0.35) / (0.35, 0.65) / (0.75, 0.25) / (0.25, 0.75)
    assert s["ensemble_3"] == 1.0
    assert [x.tolist() for x in p][0][0] == [0.9, 0.1]  # inputs left as they were


def test_member_probas_are_what_the_ensemble_averages(arrays):
    import ensemble_check as ec

    from medspt import SPTClassifier

    X, y, groups = arrays
    clf = SPTClassifier(**{**FAST, "n_estimators": 2}, random_state=0).fit(X, y, groups=groups)
    members = list(clf.members_)
    probas = ec.member_probas(clf, X[:20])
    assert clf.members_ == members  # restored
    assert len(probas) == 2 and probas[0].shape == (20, len(clf.classes_))
    assert not np.allclose(probas[0], probas[1])  # the seeds differ
    np.testing.assert_allclose((probas[0] + probas[1]) / 2, clf.predict_proba(X[:20]), atol=1e-6)


def test_ensemble_report_averages_split_seeds_and_tests_over_items():
    import ensemble_check as ec

    def row(item, seed, single, ens, part="public", defaults="aaa"):
        return dict(part=part, item=item, split_seed=seed, n_members=5, single_mean=single,
                    single_min=single, single_max=single, ensemble_1=single, ensemble_2=ens,
                    ensemble_3=ens, ensemble_4=ens, ensemble_5=ens, fit_s=10.0, n_val=10,
                    defaults=defaults, revision="r1")  # fmt: skip

    rows = pd.DataFrame(
        [row("A", 0, 0.6, 0.7), row("A", 1, 0.8, 0.8), row("B", 0, 0.5, 0.52)]
        + [row("C", 0, 0.9, 0.94), row("fold 0", 0, 0.7, 0.69, part="GPD-1")]
        + [row("A", 2, 0.0, 1.0, defaults="old")]
    )
    per_item = ec.gains(rows[rows["defaults"] == "aaa"], 5)
    a = per_item[per_item["item"] == "A"].iloc[0]
    assert a["splits"] == 2 and a["gain"] == pytest.approx(0.05)  # (0.1 + 0.0) / 2
    text = ec.report(rows, "aaa")
    assert "| public | A | 2 | 0.700 | 0.750 | 0.750 | +0.050 |" in text
    line = next(x for x in text.splitlines() if x.startswith("| public | 3 |"))
    assert "+0.037" in line and line.endswith("| [+0.020, +0.050] | 0.250 |")  # exact: 2 of 8 flips
    assert "| GPD-1 | 1 | -0.010 | – |" in text
    assert "No rows" in ec.report(rows, "zzz")


def test_select_model_round7_reads_ensembles_and_needs_three_splits_per_set():
    sets = ["A", "B", "C", "D", "E", "F"]

    def ens(item, seed, single, ensemble, defaults="d5cfae1b"):
        return dict(part="public", item=item, split_seed=seed, n_members=5,
                    single_mean=single, ensemble_5=ensemble, fit_s=50.0,
                    defaults=defaults)  # fmt: skip

    ensembles = pd.DataFrame(
        [ens(s, k, 0.6, 0.7) for s in sets for k in (0, 1, 2)]
        + [ens("A", 0, 0.0, 0.0, defaults="old")]  # other defaults: not read
    )
    r6 = pd.DataFrame(
        [dict(part=p, item=i, candidate=c, score=v, fit_s=10.0)
         for p, items in (("GPD-1", 3), ("NE-1", 3), ("synthetic", 3))
         for i in range(items)
         for c, v in (("default", 0.1), ("default + window stats", 0.8))]
        + [dict(part="public", item="A", candidate="default + window stats", score=0.0,
                fit_s=1.0)]
    )  # fmt: skip
    r7 = sm.round7_rows(r6, ensembles, "d5cfae1b")
    pub = r7[r7["part"] == "public"].set_index(["item", "candidate"])["score"]
    assert pub[("A", "default")] == pytest.approx(0.6)
    assert pub[("A", "default + small-set ensemble")] == pytest.approx(0.7)
    assert (r7.loc[r7["part"] == "GPD-1", "score"] == 0.8).all()  # window-stats rows, both
    per, winner = sm.choose(r7, sm.ROUND7, sm.N_ITEMS6)
    assert per.loc["default", "public"] == pytest.approx(0.6)
    assert per.loc["default + small-set ensemble", "score"] - per.loc["default", "score"] == (
        pytest.approx(0.1 / 4)
    )
    assert winner == "default + small-set ensemble"
    # a set with two of its three splits is not an item yet: no choice
    _, winner = sm.choose(
        sm.round7_rows(r6, ensembles.iloc[1:], "d5cfae1b"), sm.ROUND7, sm.N_ITEMS6
    )
    assert winner is None
    # a public gain of 0.01 is 0.0025 on the score: a tie keeps the default
    ensembles["ensemble_5"] = 0.61
    _, winner = sm.choose(sm.round7_rows(r6, ensembles, "d5cfae1b"), sm.ROUND7, sm.N_ITEMS6)
    assert winner == "default"
