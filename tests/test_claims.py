"""The docs claim no more than the history supports.

The defaults were chosen in selection rounds after test results of earlier defaults had
been read, and the public sets were used to choose them (``docs/concepts.md``, "How the
defaults were chosen"). Phrases that said otherwise are retired: this test finds them in
the docs, the benchmark scripts and reports, and the package, and names file and line.
"""

from __future__ import annotations

import re
from pathlib import Path

from medspt.estimator.defaults import FROZEN_HASH

ROOT = Path(__file__).resolve().parents[1]

# Claims the history contradicts (case-insensitive).
RETIRED = [
    r"nobody tuned",
    r"never chosen by a test",
    r"never by a test[- ]fold score",
    r"for checking only",
    r"kept for checking",
    r"never used to choose defaults",
    r"\b(stay|are|is|as|a) check sets?\b",
    r"used for nothing but the report",
]
PATTERN = re.compile("|".join(f"(?:{p})" for p in RETIRED), re.IGNORECASE)


def scanned_files() -> list[Path]:
    """The docs, the README, the benchmark scripts and reports, and the package's modules."""
    files = [
        *sorted((ROOT / "docs").rglob("*.md")),
        ROOT / "README.md",
        *sorted((ROOT / "benchmarks").glob("*.py")),
        ROOT / "benchmarks" / "README.md",
        *sorted((ROOT / "benchmarks" / "results").glob("*.md")),
        *sorted((ROOT / "medspt").rglob("*.py")),
    ]
    return [f for f in files if f.is_file()]


def retired_claims(files: list[Path]) -> list[str]:
    """``path:line: text`` of every line that holds a retired phrase."""
    found = []
    for path in files:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if PATTERN.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:160]}")
    return found


def test_the_scan_covers_the_places_claims_live():
    names = {f.relative_to(ROOT).as_posix() for f in scanned_files()}
    assert "docs/concepts.md" in names
    assert "README.md" in names
    assert "benchmarks/public_sets.py" in names
    assert "benchmarks/results/public_sets.md" in names
    assert "medspt/estimator/auto.py" in names


def test_the_pattern_finds_a_retired_phrase():
    assert PATTERN.search("Public UCR/UEA sets that Nobody tuned medspt on.")
    assert PATTERN.search("The multivariate sets stay check sets.")
    assert PATTERN.search("and never by a test-fold score")
    assert not PATTERN.search("They are development data, not an untouched check.")


def test_no_retired_claims():
    found = retired_claims(scanned_files())
    assert not found, (
        "claims the history contradicts (see docs/concepts.md, 'How the defaults were "
        "chosen'); reword them:\n" + "\n".join(found)
    )


def test_concepts_names_the_frozen_default():
    text = (ROOT / "docs" / "concepts.md").read_text(encoding="utf-8")
    start = text.index("## How the defaults were chosen")
    end = text.find("\n## ", start + 1)
    section = text[start : end if end > 0 else None]
    assert FROZEN_HASH in section, (
        f"docs/concepts.md ('How the defaults were chosen') must name FROZEN_HASH "
        f"{FROZEN_HASH!r} of medspt/estimator/defaults.py"
    )
    assert "medspt/estimator/defaults.py" in section
    assert "tests/test_defaults_frozen.py" in section
