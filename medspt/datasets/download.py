"""Download and verify the PhysioNet datasets (``gaitpd``, ``noneeg``).

PhysioNet publishes a ``SHA256SUMS.txt`` beside every dataset's files. :func:`download`
fetches that list, then each file it names (or a selected subset), and keeps a file under
its final name only after its SHA-256 matches the list:

- every file is written to ``<name>.part`` first and renamed once verified; a file that
  fails verification is renamed to ``<name>.corrupt`` and a :class:`ChecksumError` names
  it with the expected and actual hash;
- an existing ``.part`` is resumed with an HTTP ``Range: bytes=N-`` request (a server that
  ignores ``Range`` and answers 200 makes the file start again from byte 0); a transfer
  that breaks off is resumed the same way, up to ``retries`` times, and a later run
  resumes it too;
- files already present with the right hash are skipped.

Only the standard library (``urllib.request``) talks to the network; tqdm draws progress.
:func:`verify_folder` checks a local copy against its ``SHA256SUMS.txt`` without any
network access.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import re
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.client import HTTPException
from pathlib import Path, PurePosixPath
from urllib.parse import quote

from tqdm.auto import tqdm

from medspt._version import __version__
from medspt.core.errors import InputError
from medspt.datasets import _paths
from medspt.datasets.registry import DatasetInfo, get_info

SUMS_NAME = "SHA256SUMS.txt"
CHUNK = 1 << 20
_MAX_SUMS_BYTES = 16 << 20
_HEX64 = re.compile(r"^[0-9a-fA-F]{64}$")


class DownloadError(RuntimeError):
    """A transfer failed: HTTP error, unreachable server, or an interrupted download."""


class ChecksumError(DownloadError):
    """A downloaded file does not match its SHA-256 in ``SHA256SUMS.txt``."""

    def __init__(self, filename: str, expected: str, actual: str, kept_as: Path | None = None):
        self.filename, self.expected, self.actual, self.kept_as = (
            filename,
            expected,
            actual,
            kept_as,
        )
        where = f"; the downloaded bytes were kept as {kept_as}" if kept_as else ""
        super().__init__(
            f"checksum mismatch for {filename}: expected sha256 {expected}, got {actual}{where}"
        )


class _Interrupted(Exception):
    """A transfer that stopped early; the ``.part`` file holds what arrived."""


class _Restart(Exception):
    """The server answered a resume request with bytes we cannot append."""


# ----------------------------------------------------------------------------- checksums


def parse_sha256sums(text: str, source: str = SUMS_NAME) -> dict[str, str]:
    """``{file name: lowercase hex digest}`` from ``sha256sum`` output (``HASH  NAME`` or
    ``HASH *NAME`` lines; blank lines and ``#`` comments are ignored). Names that would
    leave the dataset folder (absolute, ``..``) are refused."""
    sums: dict[str, str] = {}
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split(None, 1)
        if len(parts) != 2 or not _HEX64.match(parts[0]):
            raise InputError(f"{source} line {lineno}: expected 'SHA256  NAME', got {raw!r}")
        digest, name = parts[0].lower(), parts[1].strip()
        if name.startswith("*"):
            name = name[1:]
        _check_relative(name, source)
        sums[name] = digest
    return sums


def _check_relative(name: str, source: str) -> None:
    p = PurePosixPath(name)
    if not name or "\\" in name or p.is_absolute() or any(s in ("", "..") for s in p.parts):
        raise InputError(f"{source}: refusing unsafe file name {name!r}")


def read_sha256sums(path: str | os.PathLike) -> dict[str, str]:
    """Parse a local ``SHA256SUMS.txt``."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"no checksum list at {path}")
    return parse_sha256sums(path.read_text(encoding="utf-8", errors="replace"), str(path))


def sha256_file(path: str | os.PathLike) -> str:
    """Hex SHA-256 of a file, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            h.update(chunk)
    return h.hexdigest()


def select_files(
    names: Iterable[str],
    files: str | Iterable[str] | None = None,
    always: Iterable[str] = (),
) -> list[str]:
    """The names to fetch or check, in list order.

    ``files=None`` selects all. Otherwise ``files`` is one glob (``"*_01.txt"``), a
    comma-separated string of globs, or a list of globs/names; each must match at least
    one name. Names in ``always`` that the list holds are added to any selection."""
    names = list(names)
    if files is None:
        return names
    patterns = [files] if isinstance(files, str) else list(files)
    patterns = [p.strip() for item in patterns for p in str(item).split(",") if p.strip()]
    if not patterns:
        raise InputError("files: give at least one file name or glob")
    chosen: set[str] = set()
    for pat in patterns:
        hits = [n for n in names if fnmatch.fnmatchcase(n, pat)]
        if not hits:
            raise InputError(
                f"files: {pat!r} matches none of the {len(names)} files in {SUMS_NAME}"
            )
        chosen.update(hits)
    chosen.update(a for a in always if a in names)
    return [n for n in names if n in chosen]


@dataclass
class VerifyReport:
    """Result of :func:`verify_folder`."""

    folder: Path
    ok: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    mismatched: list[tuple[str, str, str]] = field(default_factory=list)  # name, exp, got

    @property
    def passed(self) -> bool:
        return not self.missing and not self.mismatched


def verify_folder(
    folder: str | os.PathLike,
    files: str | Iterable[str] | None = None,
    *,
    always: Iterable[str] = (),
    sums: dict[str, str] | None = None,
) -> VerifyReport:
    """Check the files of a local copy against ``folder/SHA256SUMS.txt`` (or ``sums``).

    ``files`` selects a subset as in :func:`select_files`; every selected file is hashed.
    """
    folder = Path(folder)
    if sums is None:
        sums = read_sha256sums(folder / SUMS_NAME)
    report = VerifyReport(folder)
    for name in select_files(sums, files, always):
        path = folder / name
        if not path.is_file():
            report.missing.append(name)
            continue
        actual = sha256_file(path)
        if actual == sums[name]:
            report.ok.append(name)
        else:
            report.mismatched.append((name, sums[name], actual))
    return report


# ------------------------------------------------------------------------------ download


def default_root() -> Path:
    """Where :func:`download` puts data when no ``dest`` is given: ``$MEDSPT_DATA`` when
    set (the first place the loaders look), else the ``datasets/`` folder of a source
    checkout of medspt. An installed copy has no such folder: pass ``dest`` then."""
    env = os.environ.get(_paths.ENV_VAR)
    if env:
        return Path(env).expanduser()
    if (_paths._REPO / "pyproject.toml").is_file():
        return _paths._REPO / "datasets"
    raise InputError(
        f"no default data folder outside a source checkout: pass dest (--dest) or set "
        f"{_paths.ENV_VAR}"
    )


def _user_agent() -> str:
    return f"medspt/{__version__} (python urllib)"


class _Session:
    """One download run: an opener, options, and where messages go."""

    def __init__(self, timeout: float, retries: int, progress: bool):
        self.timeout = timeout
        self.retries = retries
        self.progress = progress
        self.opener = urllib.request.build_opener()
        self.headers = {"User-Agent": _user_agent(), "Accept-Encoding": "identity"}

    def say(self, msg: str) -> None:
        if self.progress:
            tqdm.write(msg, file=sys.stderr)

    def open(self, url: str, start: int = 0):
        headers = dict(self.headers)
        if start:
            headers["Range"] = f"bytes={start}-"
        req = urllib.request.Request(url, headers=headers)
        try:
            return self.opener.open(req, timeout=self.timeout)
        except urllib.error.HTTPError as e:
            e.close()
            if e.code == 416 and start:
                return None  # range past the end: the .part may already be complete
            raise DownloadError(f"HTTP {e.code} {e.reason} for {url}") from None
        except urllib.error.URLError as e:
            raise _Interrupted(f"could not reach {url}: {e.reason}") from None
        except (OSError, HTTPException) as e:
            raise _Interrupted(f"could not reach {url}: {e}") from None

    def fetch_small(self, url: str) -> bytes:
        for attempt in range(self.retries + 1):
            try:
                resp = self.open(url)
                with resp:
                    length = _content_length(resp)
                    data = resp.read(_MAX_SUMS_BYTES + 1)
                if len(data) > _MAX_SUMS_BYTES:
                    raise DownloadError(f"{url} is larger than a checksum list should be")
                if length is not None and len(data) < length:
                    raise _Interrupted(f"got {len(data)} of {length} bytes from {url}")
                return data
            except (_Interrupted, OSError, HTTPException) as e:
                if attempt == self.retries:
                    msg = str(e) if isinstance(e, _Interrupted) else f"{url} failed: {e!r}"
                    raise DownloadError(msg) from None
                time.sleep(0.5 * (attempt + 1))
        raise AssertionError("unreachable")  # pragma: no cover

    def transfer(self, url: str, part: Path, label: str) -> tuple[str, bool]:
        """Append the rest of ``url`` to ``part`` (or start it); return (sha256 of the
        whole part file, whether earlier bytes were reused)."""
        start = part.stat().st_size if part.exists() else 0
        resp = self.open(url, start)
        if resp is None:  # 416: nothing left to fetch
            return sha256_file(part), True
        with resp:
            status = getattr(resp, "status", None) or resp.getcode()
            h = hashlib.sha256()
            if start and status == 206:
                m = re.match(r"bytes\s+(\d+)-", resp.headers.get("Content-Range", ""))
                if not m or int(m.group(1)) != start:
                    raise _Restart(f"server sent a different range than asked for {url}")
                with open(part, "rb") as f:
                    while chunk := f.read(CHUNK):
                        h.update(chunk)
                mode = "ab"
            elif status == 200:
                if start:
                    self.say(f"{label}: server ignored the Range request; starting again")
                start, mode = 0, "wb"
            else:
                raise DownloadError(f"HTTP {status} (unexpected) for {url}")
            length = _content_length(resp)
            received = 0
            bar = tqdm(
                total=start + length if length is not None else None,
                initial=start,
                unit="B",
                unit_scale=True,
                unit_divisor=1024,
                desc=label,
                leave=False,
                disable=not self.progress,
                file=sys.stderr,
            )
            with bar, open(part, mode) as f:
                while True:
                    try:
                        chunk = resp.read(CHUNK)
                    except (OSError, HTTPException) as e:
                        raise _Interrupted(
                            f"{url} broke off after {start + received} bytes ({e!r})"
                        ) from None
                    if not chunk:
                        break
                    f.write(chunk)
                    h.update(chunk)
                    received += len(chunk)
                    bar.update(len(chunk))
            if length is not None and received < length:
                raise _Interrupted(
                    f"{url} broke off after {start + received} of {start + length} bytes"
                )
        return h.hexdigest(), start > 0

    def fetch_file(self, url: str, final: Path, expected: str, label: str) -> str:
        """Download ``url`` to ``final`` via ``final.part``; return ``"downloaded"`` or
        ``"resumed"``. Raises :class:`ChecksumError` or :class:`DownloadError`."""
        part = final.with_name(final.name + ".part")
        part.parent.mkdir(parents=True, exist_ok=True)
        failures = 0
        restarted = False
        while True:
            try:
                actual, reused = self.transfer(url, part, label)
            except _Restart as e:
                if restarted:
                    raise DownloadError(str(e)) from None
                self.say(f"{label}: {e}; starting again from byte 0")
                part.unlink(missing_ok=True)
                restarted = True
                continue
            except _Interrupted as e:
                size = part.stat().st_size if part.exists() else 0
                if failures >= self.retries:
                    hint = f"; {size} bytes kept in {part}, run again to resume" if size else ""
                    raise DownloadError(f"{e}{hint}") from None
                failures += 1
                self.say(f"{label}: {e}; retrying ({failures}/{self.retries})")
                time.sleep(0.5 * failures)
                continue
            if actual == expected:
                os.replace(part, final)
                return "resumed" if reused else "downloaded"
            if reused and not restarted:
                # the old partial bytes may be stale (e.g. a different file version)
                self.say(f"{label}: checksum mismatch after resuming; starting again")
                part.unlink(missing_ok=True)
                restarted = True
                continue
            corrupt = final.with_name(final.name + ".corrupt")
            os.replace(part, corrupt)
            raise ChecksumError(label, expected, actual, kept_as=corrupt)


def _content_length(resp) -> int | None:
    value = resp.headers.get("Content-Length")
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _resolve(name: str | DatasetInfo) -> DatasetInfo:
    info = name if isinstance(name, DatasetInfo) else get_info(name)
    if not info.downloadable:
        where = "\n  ".join(info.get_from) or info.url
        raise InputError(
            f"{info.name} cannot be downloaded by medspt; get it from:\n  {where}\n"
            f"and place it as {info.layout}"
        )
    return info


def download(
    name: str | DatasetInfo,
    dest: str | os.PathLike | None = None,
    *,
    base_url: str | None = None,
    files: str | Iterable[str] | None = None,
    progress: bool = True,
    timeout: float = 60,
    retries: int = 2,
    on_file: Callable[[str, str], None] | None = None,
) -> Path:
    """Download a PhysioNet dataset into ``dest/<folder>`` and verify every file.

    Parameters
    ----------
    name : ``"gaitpd"`` (alias ``"gaitpdb"``) or ``"noneeg"``.
    dest : data root; the files go to ``dest/gaitpdb`` or ``dest/noneeg``. Default:
        ``$MEDSPT_DATA`` if set, else the repository's ``datasets/`` folder.
    base_url : folder URL holding ``SHA256SUMS.txt`` and the files (default: the
        PhysioNet URL of the dataset; point it at a mirror or a local server).
    files : a glob (``"*_01.txt"``), comma-separated globs, or a list of names/globs;
        only matching files from ``SHA256SUMS.txt`` are fetched, plus the dataset's small
        metadata files (gaitpd: ``demographics.txt``, ``demographics.xls``,
        ``format.txt``; noneeg: ``RECORDS``, ``ANNOTATORS``, ``subjectinfo.csv``).
        Default: every file listed.
    progress : draw tqdm progress bars and print messages (retries, restarts, a summary
        with the number of files skipped because they were already verified) on stderr;
        False is quiet.
    timeout : seconds to wait for the server on each request.
    retries : how often a broken-off transfer is resumed before giving up (a later call
        resumes it as well).
    on_file : called as ``on_file(file_name, status)`` with status ``"skipped"``,
        ``"downloaded"`` or ``"resumed"``.

    Returns the dataset folder. ``SHA256SUMS.txt`` is saved there too (the complete list,
    even when ``files`` selects a subset), so the copy can be checked later with
    :func:`verify_folder` or ``medspt datasets check``.

    Raises :class:`ChecksumError` for a file whose hash does not match (it is left as
    ``<name>.corrupt``, never under its final name), :class:`DownloadError` for HTTP errors
    (naming the URL and status) and broken-off transfers, :class:`InputError` for an
    unknown dataset or a ``files`` pattern that matches nothing.
    """
    info = _resolve(name)
    base = base_url or info.files_url
    if not base.endswith("/"):
        base += "/"
    sums_url = base + SUMS_NAME if base_url else info.sha256_url
    root = Path(dest).expanduser() if dest is not None else default_root()
    folder = root / info.folder
    folder.mkdir(parents=True, exist_ok=True)

    session = _Session(timeout=timeout, retries=max(0, int(retries)), progress=progress)
    raw = session.fetch_small(sums_url)
    sums = parse_sha256sums(raw.decode("utf-8", errors="replace"), sums_url)
    if not sums:
        raise DownloadError(f"{sums_url} lists no files")
    tmp = folder / (SUMS_NAME + ".part")
    tmp.write_bytes(raw)  # the dataset's own list, verbatim
    os.replace(tmp, folder / SUMS_NAME)

    names = select_files(sums, files, info.always_files)
    counts = {"skipped": 0, "downloaded": 0, "resumed": 0}
    outer = tqdm(
        names,
        desc=f"{info.folder}",
        unit="file",
        disable=not progress,
        file=sys.stderr,
    )
    with outer:
        for fname in outer:
            final = folder / fname
            expected = sums[fname]
            if final.is_file():
                actual = sha256_file(final)
                if actual == expected:
                    status = "skipped"
                    final.with_name(final.name + ".part").unlink(missing_ok=True)
                else:
                    aside = final.with_name(final.name + ".corrupt")
                    os.replace(final, aside)
                    session.say(
                        f"{fname}: present but its checksum differs; moved to {aside.name} "
                        "and downloading again"
                    )
                    status = session.fetch_file(base + quote(fname), final, expected, fname)
            else:
                status = session.fetch_file(base + quote(fname), final, expected, fname)
            counts[status] += 1
            if on_file is not None:
                on_file(fname, status)
    fetched = counts["downloaded"] + counts["resumed"]
    session.say(
        f"{info.folder}: {fetched} downloaded ({counts['resumed']} resumed); "
        f"{counts['skipped']} already present with a matching checksum, skipped -> {folder}"
    )
    return folder
