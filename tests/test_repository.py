"""The repository keeps its promises: one test command in README and CI, lint clean."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    setup = text.split("## Set-up", 1)[1].split("\n## ", 1)[0]
    return [c.strip() for c in re.findall(r"```bash\n(.+?)\n\s*```", setup)]


def test_readme_has_exactly_two_setup_commands_and_ci_runs_the_test_one():
    cmds = _readme_commands()
    assert len(cmds) == 2, cmds
    assert cmds[0].strip().endswith("medspt demo")
    assert "pytest" in cmds[1]
    ci = (ROOT / ".ci" / "run").read_text()
    assert cmds[1].strip() in ci


def test_constraints_pin_the_cpu_torch():
    pins = (ROOT / "constraints.txt").read_text()
    assert re.search(r"^torch==2\.13\.0$", pins, re.M)
    assert not re.search(r"^torchvision", pins, re.M)


def test_lint_is_clean():
    ruff = Path(sys.executable).parent / "ruff"
    exe = str(ruff) if ruff.exists() else shutil.which("ruff")
    if exe is None:
        pytest.skip("ruff is not installed (pip install -e '.[test]')")
    r = subprocess.run([exe, "check", str(ROOT)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
