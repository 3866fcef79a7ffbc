"""Every code block of ``docs/*.md`` runs as written.

A page's ```` ```python ```` blocks run in order in one fresh namespace, in a subprocess
whose working folder is a temporary one (files the examples write land there); its
```` ```bash ```` blocks of ``medspt ...`` lines run in the same folder, in page order.
``$MEDSPT_DATA`` points at the real data when a local copy is found. A ``medspt ...`` line
runs ``medspt.cli.commands.main`` (the console script's function) in the page's process, so that
medspt is imported once per page.

A block is excluded only by an HTML comment on the line before its fence, so that every
exclusion is visible in the page and has a reason:

* ``<!-- docs-test: skip (REASON) -->``: never run (a server, a package install, a
  command for a cluster, a fragment of the reader's own code);
* ``<!-- docs-test: needs-data FOLDER [FOLDER ...] -->``: runs when a local copy of each
  dataset folder (``gaitpdb``, ``noneeg``, ...) is found, else is skipped saying so.

Each excluded block is reported as a skipped test with its reason. Run as a script,
``python tests/test_docs.py BLOCKS.json`` executes the blocks of one page (the
subprocess the page test starts).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
import traceback
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGES = sorted(p.name for p in DOCS.glob("*.md"))
RUN_LANGS = {"python": "python", "bash": "shell", "sh": "shell", "shell": "shell"}
SHOWN_LANGS = {"text", "", "markdown", "md", "json", "toml", "yaml", "console"}
MARKER = re.compile(r"^\s*<!--\s*docs-test:\s*(?P<kind>[\w-]+)\s*(?P<arg>.*?)\s*-->\s*$")
PAGE_TIMEOUT_S = 1200  # a page uses up to about 300 s of CPU; room for a busy machine
# CPU seconds per page measured on a 2-core machine, to start the slowest pages first
SLOW_FIRST = {
    "quickstart.md": 500,
    "leakage.md": 700,
    "diagnostics.md": 90,
    "your-data.md": 20,
    "concepts.md": 15,
    "datasets.md": 12,
    "long-recordings.md": 8,
}


@dataclass
class Block:
    """One fenced code block of a page.

    Attributes
    ----------
    page : str
        File name in ``docs/``.
    number : int
        1-based position among the page's fenced blocks (shown output blocks included).
    line : int
        Line of the opening fence (1-based).
    lang : str
        The fence's info string, lower case (``python``, ``bash``, ``text``, ...).
    code : str
        The block's text.
    marker : str
        ``""``, ``"skip"`` or ``"needs-data"``.
    arg : str
        The skip reason, or the dataset folders needed (space-separated).
    """

    page: str
    number: int
    line: int
    lang: str
    code: str
    marker: str = ""
    arg: str = ""

    @property
    def kind(self) -> str:
        """``"python"``, ``"shell"`` or ``"shown"`` (output and signatures, never run)."""
        return RUN_LANGS.get(self.lang, "shown")

    @property
    def name(self) -> str:
        return f"{self.page} block {self.number} (line {self.line}, {self.lang or 'plain'})"


def parse_page(path: Path) -> list[Block]:
    """The fenced code blocks of a markdown page, with their ``docs-test`` markers.

    Parameters
    ----------
    path : Path
        The markdown file.

    Returns
    -------
    list of Block
        In page order. Raises ``ValueError`` for an unclosed fence or an unknown marker.
    """
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        opening = re.match(r"^(\s*)(`{3,})\s*([\w+-]*)\s*$", lines[i])
        if not opening:
            i += 1
            continue
        indent, fence, lang = opening.groups()
        start = i
        body = []
        i += 1
        while i < len(lines) and not re.match(rf"^\s*{fence}\s*$", lines[i]):
            line = lines[i]
            body.append(line[len(indent) :] if line.startswith(indent) else line.lstrip())
            i += 1
        if i == len(lines):
            raise ValueError(f"{path.name}: the fence opened on line {start + 1} is never closed")
        i += 1
        marker = arg = ""
        m = MARKER.match(lines[start - 1]) if start > 0 else None
        if m:
            marker, arg = m["kind"], m["arg"]
            if marker == "skip":
                arg = arg.strip().removeprefix("(").removesuffix(")").strip()
            if marker not in ("skip", "needs-data") or not arg:
                raise ValueError(
                    f"{path.name} line {start}: unknown or incomplete marker {lines[start - 1]!r}"
                    "; use <!-- docs-test: skip (REASON) --> or "
                    "<!-- docs-test: needs-data FOLDER -->"
                )
        blocks.append(
            Block(path.name, len(blocks) + 1, start + 1, lang.lower(), "\n".join(body), marker, arg)
        )
    return blocks


def shell_commands(block: Block) -> list[list[str]]:
    """The ``medspt`` commands of a shell block, as argument lists (``\\`` continues a
    line, ``#`` starts a comment). Raises ``ValueError`` naming any other line."""
    commands = []
    for line in block.code.replace("\\\n", " ").splitlines():
        args = shlex.split(line, comments=True)
        if not args:
            continue
        if args[0] != "medspt":
            raise ValueError(
                f"{block.name}: {line.strip()!r} is not a medspt command; mark the block "
                "with <!-- docs-test: skip (REASON) --> on the line before its fence"
            )
        commands.append(args)
    return commands


def data_root(folders: list[str]) -> Path | None:
    """The root holding every dataset folder in ``folders`` (and so the value for
    ``$MEDSPT_DATA``), or None when one of them has no local copy."""
    from medspt.datasets._paths import find_dataset

    found = [find_dataset(f) for f in folders]
    if any(f is None for f in found):
        return None
    return found[0].parent if found else None


def available_root() -> Path | None:
    """A root holding any of the real datasets, for ``$MEDSPT_DATA`` of every page."""
    for folder in ("gaitpdb", "noneeg", "camargo2021"):
        root = data_root([folder])
        if root is not None:
            return root
    return None


def runnable(blocks: list[Block]) -> tuple[list[Block], list[tuple[Block, str]]]:
    """Split a page's runnable blocks into those to run now and those excluded, with the
    reason of each exclusion."""
    run, excluded = [], []
    for b in blocks:
        if b.kind == "shown":
            continue
        if b.marker == "skip":
            excluded.append((b, b.arg))
        elif b.marker == "needs-data" and data_root(b.arg.split()) is None:
            excluded.append(
                (
                    b,
                    f"needs a local copy of {b.arg} (set MEDSPT_DATA to the folder "
                    "holding it; see docs/datasets.md)",
                )
            )
        else:
            run.append(b)
    return run, excluded


# ----------------------------------------------------------------------------------- tests


def _all_blocks() -> list[Block]:
    return [b for page in PAGES for b in parse_page(DOCS / page)]


def test_every_block_is_runnable_or_marked():
    """Fast check without running anything: fences are closed, markers are known, shell
    blocks hold only medspt commands unless marked, and no fence language is unknown."""
    problems = []
    for b in _all_blocks():
        if b.lang not in RUN_LANGS and b.lang not in SHOWN_LANGS:
            problems.append(f"{b.name}: unknown fence language {b.lang!r}")
        if b.kind == "shown" and b.marker:
            problems.append(f"{b.name}: a marker on a block that is never run")
        if b.kind == "shell" and b.marker != "skip":
            try:
                shell_commands(b)
            except ValueError as e:
                problems.append(str(e))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    "block",
    [b for b in _all_blocks() if b.marker and b.kind != "shown"],
    ids=lambda b: f"{b.page}-block{b.number}",
)
def test_excluded_block_is_reported(block):
    """One result per marked block: skipped with its reason, or passed when it needs data
    that is present (it then runs with its page)."""
    _, excluded = runnable([block])
    if excluded:
        pytest.skip(f"{block.name}: {excluded[0][1]}")


@dataclass
class PageRun:
    """What running one page's blocks gave: exit code, output and seconds."""

    returncode: int
    stdout: str
    stderr: str
    seconds: float
    blocks: int


def _run_page(page: str, folder: Path) -> PageRun | None:
    """Run the runnable blocks of ``page`` in a subprocess whose working folder is
    ``folder``; None when the page has nothing to run here."""
    run, _ = runnable(parse_page(DOCS / page))
    if not run:
        return None
    spec = folder / "blocks.json"
    spec.write_text(json.dumps([asdict(b) for b in run]))
    work = folder / "work"
    work.mkdir()
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONUNBUFFERED": "1"}
    # pages run two at a time; the examples' small models gain nothing from a second
    # thread, and two threads per page on two cores would only contend
    env.setdefault("OMP_NUM_THREADS", "1")
    root = available_root()
    if root is not None:
        env["MEDSPT_DATA"] = str(root)
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), str(spec)],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=PAGE_TIMEOUT_S,
        )
        code, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as e:
        code = -1
        out = (
            (e.stdout or b"").decode(errors="replace")
            if isinstance(e.stdout, bytes)
            else e.stdout or ""
        )
        stacks = (
            (e.stderr or b"").decode(errors="replace")
            if isinstance(e.stderr, bytes)
            else e.stderr or ""
        )
        err = f"the page ran longer than {PAGE_TIMEOUT_S} s\n{stacks[-6000:]}"
    return PageRun(code, out, err, time.perf_counter() - t0, len(run))


@pytest.fixture(scope="module")
def page_runs(request, tmp_path_factory) -> Iterator[dict[str, Future]]:
    """Start the selected pages at once, two at a time, the slowest first; each page test
    waits for its own."""
    selected = [
        item.callspec.params["page"]
        for item in request.session.items
        if getattr(item, "originalname", "") == "test_page_runs_as_written"
    ]
    selected.sort(key=lambda page: -SLOW_FIRST.get(page, 0))
    pool = ThreadPoolExecutor(max_workers=min(2, os.cpu_count() or 1))
    futures = {
        page: pool.submit(_run_page, page, tmp_path_factory.mktemp(page.removesuffix(".md")))
        for page in selected
    }
    yield futures
    pool.shutdown(wait=True, cancel_futures=True)


@pytest.mark.parametrize("page", PAGES)
def test_page_runs_as_written(page, page_runs):
    """The page's blocks run in order without an error (the message names the block)."""
    result = page_runs[page].result()
    if result is None:
        pytest.skip(f"{page}: no block to run here")
    print(f"{page}: {result.blocks} blocks in {result.seconds:.0f} s")
    print("\n".join(re.findall(r"^(?:--- .*|    \(.* s\)|PAGE .*)$", result.stdout, flags=re.M)))
    failed = re.findall(r"^FAILED (.*)$", result.stdout, flags=re.M)
    assert result.returncode == 0, (
        f"{failed[0] if failed else page} did not run as written "
        f"(exit code {result.returncode}):\n{result.stdout[-6000:]}\n{result.stderr[-6000:]}"
    )


# ------------------------------------------------------------------- the page subprocess


def _cpu_seconds() -> float:
    """CPU time of this process and its finished children (user + system)."""
    try:
        import resource
    except ImportError:  # Windows: this process only
        return time.process_time()
    own, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _medspt_command(argv: list[str]) -> int:
    """Exit code of ``medspt ARGV``: the console script's own function,
    ``medspt.cli.commands.main``,
    called in this process (a new interpreter per command would import medspt again,
    several seconds each)."""
    from medspt.cli.commands import main

    try:
        return main(argv)
    except SystemExit as e:  # argparse: --version, --help and usage errors
        return e.code if isinstance(e.code, int) else int(e.code is not None)
    finally:
        sys.stdout.flush()


def _run_blocks(spec: Path) -> int:
    """Run the blocks listed in ``spec`` (JSON) in order, printing each one's wall and CPU
    seconds; print ``FAILED <block>`` and return 1 at the first failure."""
    blocks = [Block(**b) for b in json.loads(spec.read_text())]
    namespace: dict = {"__name__": "__main__"}
    start, start_cpu = time.perf_counter(), _cpu_seconds()
    for b in blocks:
        print(f"--- {b.name}", flush=True)
        t0, cpu0 = time.perf_counter(), _cpu_seconds()
        try:
            if b.kind == "python":
                # line numbers in tracebacks are those of the markdown file
                source = "\n" * b.line + b.code
                exec(compile(source, str(DOCS / b.page), "exec"), namespace)
            else:
                for args in shell_commands(b):
                    print("$ " + shlex.join(args), flush=True)
                    rc = _medspt_command(args[1:])
                    if rc != 0:
                        raise RuntimeError(f"{shlex.join(args)} exited with {rc}")
        except BaseException:  # noqa: BLE001 - report any failure with the block's name
            traceback.print_exc(file=sys.stdout)
            print(f"FAILED {b.name}", flush=True)
            return 1
        sys.stdout.flush()
        wall, cpu = time.perf_counter() - t0, _cpu_seconds() - cpu0
        print(f"    ({wall:.1f} s, CPU {cpu:.1f} s)", flush=True)
    wall, cpu = time.perf_counter() - start, _cpu_seconds() - start_cpu
    print(f"PAGE {blocks[0].page if blocks else ''}: {wall:.0f} s, CPU {cpu:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    import faulthandler

    # a page that hangs shows where: every thread's stack shortly before the page's limit
    faulthandler.dump_traceback_later(PAGE_TIMEOUT_S - 30, exit=False)
    sys.exit(_run_blocks(Path(sys.argv[1])))
