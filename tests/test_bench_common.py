"""What the benchmark scripts share (``benchmarks/_common.py``): rows name a commit, never
uncommitted code; result files are appended to, never rewritten; numbers read the same in
every report."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import _common  # noqa: E402


def _repo(tmp_path: Path) -> Path:
    """A git repository with a committed ``medspt/x.py`` and ``benchmarks/b.py``."""
    run = lambda *a: subprocess.run(["git", "-C", str(tmp_path), *a], check=True,  # noqa: E731
                                    capture_output=True)  # fmt: skip
    run("init", "-q")
    for f in ("medspt/x.py", "benchmarks/b.py", "benchmarks/results/r.csv"):
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text("a = 1\n")
    run("add", "-A")
    run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    return tmp_path


def test_rows_name_a_commit_and_refuse_uncommitted_code(tmp_path, monkeypatch):
    monkeypatch.delenv("MEDSPT_BENCH_UNCOMMITTED", raising=False)
    root = _repo(tmp_path)
    rev = _common.git_revision(root=root)
    assert len(rev) >= 7 and " " not in rev
    (root / "benchmarks/results/r.csv").write_text("new results\n")  # results: not code
    assert _common.git_revision(root=root) == rev
    (root / "medspt/x.py").write_text("a = 2\n")
    with pytest.raises(SystemExit, match=r"uncommitted changes \(medspt/x.py\)\. Commit them"):
        _common.git_revision(root=root)
    assert _common.git_revision(strict=False, root=root) == rev + " + uncommitted changes"
    monkeypatch.setenv("MEDSPT_BENCH_UNCOMMITTED", "1")
    assert _common.git_revision(root=root) == rev + " + uncommitted changes"
    monkeypatch.delenv("MEDSPT_BENCH_UNCOMMITTED")
    (root / "medspt/x.py").write_text("a = 1\n")
    (root / "benchmarks/b.py").write_text("b = 1\n")
    with pytest.raises(SystemExit, match=r"benchmarks/b.py"):
        _common.git_revision(root=root)
    assert _common.git_revision(root=tmp_path / "medspt") != "unknown"  # inside the checkout
    outside = tmp_path.parent / (tmp_path.name + "-plain")
    outside.mkdir()
    assert _common.git_revision(root=outside) == "unknown"


def test_append_csv_keeps_every_row_and_widens_the_header(tmp_path):
    path = tmp_path / "r" / "rows.csv"
    _common.append_csv(path, pd.DataFrame({"a": [1], "b": [2]}))
    _common.append_csv(path, pd.DataFrame({"b": [4], "a": [3]}))  # other column order
    _common.append_csv(path, pd.DataFrame({"a": [5], "c": ["x"]}))  # a new column
    back = pd.read_csv(path)
    assert back.columns.tolist() == ["a", "b", "c"]
    assert back["a"].tolist() == [1, 3, 5] and back["b"].tolist()[:2] == [2, 4]
    assert back["b"].isna().tolist() == [False, False, True]


def test_numbers_read_the_same_everywhere():
    assert _common.fmt_pm(0.5, 0.25) == "0.500 ± 0.250"
    assert _common.fmt_pm(0.5, float("nan")) == "0.500"
    assert _common.fmt_pm(float("nan")) == "–"
    assert _common.fmt_series_pm([0.4, 0.6, None]) == "0.500 ± 0.141"
    assert _common.fmt_series_pm([0.4]) == "0.400" and _common.fmt_series_pm([]) == "–"
    assert _common.fmt_p(0.0004) == "<0.001" and _common.fmt_p(0.0123) == "0.012"
    assert _common.fmt_p(float("nan")) == "–"
    assert _common.fmt_num(1234.5, ",.0f") == "1,234" and _common.fmt_num(None) == "–"
    shown = _common.command_line("x.py", ["--data", "/a/b/c", "--out", "/x/y"], ("--out",))
    assert shown == "python benchmarks/x.py --data c --out PATH"


def test_a_sub_interpreter_cell_returns_its_json_or_its_error(tmp_path):
    script = tmp_path / "cell.py"
    script.write_text(
        "import sys\n"
        "if sys.argv[1] == 'fail':\n    raise SystemExit('out of luck')\n"
        "print('noise')\nprint('@@M@@' + '{\"n\": ' + sys.argv[1] + '}')\n"
    )
    payload, error, wall = _common.run_script(script, ["3"], "@@M@@")
    assert payload == {"n": 3} and error == "" and wall > 0
    payload, error, _ = _common.run_script(script, ["fail"], "@@M@@")
    assert payload is None and error == "out of luck"


def test_a_report_ends_with_its_run_section(tmp_path):
    path = _common.write_report_with_run(
        tmp_path / "r.md", "# Title\n\n| a |\n", "x.py", ["--out", "o"], 125.0, 2
    )
    text = path.read_text()
    assert text.startswith("# Title\n\n| a |\n\n## Run\n")
    assert "- command: `python benchmarks/x.py --out o`" in text
    assert "wall time 2.1 min" in text and "torch threads 2" in text


def test_resolved_hash_keys_one_member_fits_like_n_estimators_1():
    from _common import params_hash, resolved_hash

    assert resolved_hash(300) == resolved_hash(5000) == params_hash({"n_estimators": 1})
    assert resolved_hash(299) == params_hash({"n_estimators": 5}) != resolved_hash(300)
    assert params_hash() not in (resolved_hash(299), resolved_hash(300))  # "auto" itself
