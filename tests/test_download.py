"""medspt.datasets.download against a real HTTP server on 127.0.0.1 (no internet).

The server honours ``Range: bytes=N-`` with 206 (the standard library handler does not),
can ignore Range, can cut responses off halfway, and records every request.
"""

from __future__ import annotations

import hashlib
import http.server
import random
import re
import shutil
import threading
import urllib.parse
from pathlib import Path

import pytest
from conftest import real_dataset

from medspt.core.errors import InputError
from medspt.datasets.download import (
    SUMS_NAME,
    ChecksumError,
    DownloadError,
    download,
    parse_sha256sums,
    select_files,
    verify_folder,
)
from medspt.datasets.registry import DATASETS, get_info


class RangeHandler(http.server.BaseHTTPRequestHandler):
    """Serves ``server.root``; honours ``Range: bytes=N-`` unless ``server.ignore_range``;
    sends only the first half of a file's body while ``server.cut[name] > 0``."""

    protocol_version = "HTTP/1.0"

    def do_GET(self):  # noqa: N802 (stdlib naming)
        srv = self.server
        rng = self.headers.get("Range")
        rel = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path).lstrip("/")
        srv.requests.append((rel, rng))
        path = srv.root / rel
        if not rel or not path.is_file():
            self.send_error(404, "Not Found")
            return
        data = path.read_bytes()
        start, status = 0, 200
        m = re.fullmatch(r"bytes=(\d+)-", rng.strip()) if rng else None
        if m and not srv.ignore_range:
            start = int(m.group(1))
            if start >= len(data):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(data)}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            status = 206
        body = data[start:]
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        self.end_headers()
        if srv.cut.get(rel, 0) > 0:
            srv.cut[rel] -= 1
            self.wfile.write(body[: len(body) // 2])  # then the connection closes
            return
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class FileServer:
    """A ThreadingHTTPServer on 127.0.0.1, port 0, in a daemon thread."""

    def __init__(self, root: Path):
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), RangeHandler)
        self.httpd.root = root
        self.httpd.requests = []
        self.httpd.ignore_range = False
        self.httpd.cut = {}
        self.root = root
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/data/"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    @property
    def requests(self) -> list[tuple[str, str | None]]:
        return self.httpd.requests

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


GENERATED = {  # gaitpd-like names: three walks plus the metadata files
    "GaCo01_01.txt": 150_000,
    "GaPt03_01.txt": 90_001,
    "JuCo02_02.txt": 40_000,
    "demographics.txt": 3_000,
    "demographics.xls": 5_000,
    "format.txt": 2_339,
}


def publish(root: Path, files: dict[str, bytes]) -> dict[str, str]:
    """Write ``files`` under ``root/data`` with a SHA256SUMS.txt; return the sums."""
    data = root / "data"
    data.mkdir(parents=True, exist_ok=True)
    sums = {}
    for name, content in files.items():
        (data / name).write_bytes(content)
        sums[name] = hashlib.sha256(content).hexdigest()
    lines = "".join(f"{d}  {n}\n" for n, d in sums.items())
    (data / SUMS_NAME).write_text(lines)
    return sums


def generated_files(seed: int = 0) -> dict[str, bytes]:
    rng = random.Random(seed)
    return {name: rng.randbytes(size) for name, size in GENERATED.items()}


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch):
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


@pytest.fixture
def server(tmp_path):
    root = tmp_path / "server"
    root.mkdir()
    srv = FileServer(root)
    yield srv
    srv.close()


@pytest.fixture
def published(server):
    files = generated_files()
    sums = publish(server.root, files)
    return server, files, sums


def _get(server, dest, **kw):
    kw.setdefault("progress", False)
    kw.setdefault("timeout", 10)
    return download("gaitpd", dest, base_url=server.url, **kw)


def _file_requests(server):
    return [r for r in server.requests if r[0] != f"data/{SUMS_NAME}"]


# -------------------------------------------------------------------------- happy path


def test_download_all_files_verified(published, tmp_path):
    server, files, _ = published
    dest = tmp_path / "dest"
    folder = _get(server, dest)
    assert folder == dest / "gaitpdb"
    for name, content in files.items():
        assert (folder / name).read_bytes() == content
    assert (folder / SUMS_NAME).is_file()
    assert not list(folder.glob("*.part")) and not list(folder.glob("*.corrupt"))
    assert verify_folder(folder).passed
    # no Range on fresh downloads
    assert all(rng is None for _, rng in server.requests)


def test_alias_and_trailing_slash_free_base_url(published, tmp_path):
    server, files, _ = published
    folder = download("gaitpdb", tmp_path / "d", base_url=server.url.rstrip("/"), progress=False)
    assert sorted(p.name for p in folder.iterdir()) == sorted([*files, SUMS_NAME])


def test_subset_glob_always_brings_metadata(published, tmp_path):
    server, files, _ = published
    folder = _get(server, tmp_path / "d", files="*_01.txt")
    got = sorted(p.name for p in folder.iterdir())
    assert got == sorted(
        [
            "GaCo01_01.txt",
            "GaPt03_01.txt",
            "demographics.txt",
            "demographics.xls",
            "format.txt",
            SUMS_NAME,
        ]
    )
    assert ("data/JuCo02_02.txt", None) not in server.requests
    # the saved list is the complete one, so a later full download or check sees everything
    assert len(parse_sha256sums((folder / SUMS_NAME).read_text())) == len(files)


def test_glob_that_matches_nothing_is_an_input_error(published, tmp_path):
    server, _, _ = published
    with pytest.raises(InputError, match=r"'\*_99.txt' matches none"):
        _get(server, tmp_path / "d", files="*_99.txt")


# ------------------------------------------------------------------------------ resume


def test_part_file_is_resumed_with_range(published, tmp_path):
    server, files, _ = published
    folder = tmp_path / "d" / "gaitpdb"
    folder.mkdir(parents=True)
    name = "GaCo01_01.txt"
    (folder / (name + ".part")).write_bytes(files[name][:1000])
    seen = {}
    _get(server, tmp_path / "d", on_file=lambda f, s: seen.__setitem__(f, s))
    assert (f"data/{name}", "bytes=1000-") in server.requests
    assert (folder / name).read_bytes() == files[name]
    assert not (folder / (name + ".part")).exists()
    assert seen[name] == "resumed" and seen["GaPt03_01.txt"] == "downloaded"


def test_complete_part_file_416_is_verified_and_kept(published, tmp_path):
    server, files, _ = published
    folder = tmp_path / "d" / "gaitpdb"
    folder.mkdir(parents=True)
    name = "format.txt"
    (folder / (name + ".part")).write_bytes(files[name])
    _get(server, tmp_path / "d")
    assert (f"data/{name}", f"bytes={len(files[name])}-") in server.requests
    assert (folder / name).read_bytes() == files[name]


def test_server_ignoring_range_restarts_from_zero(published, tmp_path):
    server, files, _ = published
    server.httpd.ignore_range = True
    folder = tmp_path / "d" / "gaitpdb"
    folder.mkdir(parents=True)
    name = "GaPt03_01.txt"
    # garbage in the .part: appending to it would give a wrong file
    (folder / (name + ".part")).write_bytes(b"x" * 5000)
    _get(server, tmp_path / "d")
    assert (f"data/{name}", "bytes=5000-") in server.requests
    assert (folder / name).read_bytes() == files[name]


def test_stale_part_gives_mismatch_then_one_clean_restart(published, tmp_path):
    server, files, _ = published
    folder = tmp_path / "d" / "gaitpdb"
    folder.mkdir(parents=True)
    name = "GaCo01_01.txt"
    (folder / (name + ".part")).write_bytes(b"y" * 777)  # bytes of another file version
    _get(server, tmp_path / "d")
    mine = [r for r in server.requests if r[0] == f"data/{name}"]
    assert mine == [(f"data/{name}", "bytes=777-"), (f"data/{name}", None)]
    assert (folder / name).read_bytes() == files[name]


def test_interrupted_download_keeps_part_and_rerun_resumes(published, tmp_path):
    server, files, _ = published
    name = "GaCo01_01.txt"
    server.httpd.cut[f"data/{name}"] = 1
    folder = tmp_path / "d" / "gaitpdb"
    with pytest.raises(DownloadError, match="broke off.*run again to resume"):
        _get(server, tmp_path / "d", retries=0)
    part = folder / (name + ".part")
    assert not (folder / name).exists()
    half = len(files[name]) // 2
    assert part.stat().st_size == half
    assert part.read_bytes() == files[name][:half]

    server.requests.clear()
    _get(server, tmp_path / "d", retries=0)
    assert (f"data/{name}", f"bytes={half}-") in server.requests
    assert (folder / name).read_bytes() == files[name]
    assert not part.exists()


def test_interruption_is_resumed_within_one_call(published, tmp_path):
    server, files, _ = published
    name = "GaPt03_01.txt"
    server.httpd.cut[f"data/{name}"] = 1
    folder = _get(server, tmp_path / "d", retries=1)
    half = len(files[name]) // 2
    assert [r for r in server.requests if r[0] == f"data/{name}"] == [
        (f"data/{name}", None),
        (f"data/{name}", f"bytes={half}-"),
    ]
    assert (folder / name).read_bytes() == files[name]


# ----------------------------------------------------------------------------- failures


def test_corrupted_file_on_server_raises_and_is_not_kept(published, tmp_path):
    server, files, sums = published
    name = "GaPt03_01.txt"
    bad = bytearray(files[name])
    bad[100] ^= 0xFF
    (server.root / "data" / name).write_bytes(bytes(bad))
    folder = tmp_path / "d" / "gaitpdb"
    with pytest.raises(ChecksumError) as exc:
        _get(server, tmp_path / "d")
    msg = str(exc.value)
    actual = hashlib.sha256(bytes(bad)).hexdigest()
    assert name in msg and sums[name] in msg and actual in msg
    assert (exc.value.filename, exc.value.expected, exc.value.actual) == (
        name,
        sums[name],
        actual,
    )
    assert not (folder / name).exists()
    assert not (folder / (name + ".part")).exists()
    assert (folder / (name + ".corrupt")).read_bytes() == bytes(bad)


def test_404_names_the_url(published, tmp_path):
    server, _, _ = published
    (server.root / "data" / "format.txt").unlink()
    with pytest.raises(DownloadError, match=r"HTTP 404") as exc:
        _get(server, tmp_path / "d")
    assert server.url + "format.txt" in str(exc.value)
    assert not (tmp_path / "d" / "gaitpdb" / "format.txt").exists()


def test_missing_checksum_list_names_its_url(server, tmp_path):
    with pytest.raises(DownloadError, match="404") as exc:
        _get(server, tmp_path / "d")
    assert server.url + SUMS_NAME in str(exc.value)


def test_unreachable_server_is_a_download_error(tmp_path):
    srv = FileServer(tmp_path)
    url = srv.url
    srv.close()  # nothing listens on that port any more
    with pytest.raises(DownloadError, match="could not reach"):
        download("noneeg", tmp_path / "d", base_url=url, progress=False, retries=0)


def test_camargo_and_unknown_names_are_refused(tmp_path):
    with pytest.raises(InputError, match="Mendeley|doi"):
        download("camargo", tmp_path)
    with pytest.raises(InputError, match="gaitpd.*noneeg.*camargo"):
        download("nope", tmp_path)


# ------------------------------------------------------------------- skipping, progress


def test_rerun_skips_verified_files_and_says_so(published, tmp_path, capsys):
    server, files, _ = published
    _get(server, tmp_path / "d")
    server.requests.clear()
    seen = {}
    _get(server, tmp_path / "d", progress=True, on_file=lambda f, s: seen.__setitem__(f, s))
    assert _file_requests(server) == []
    assert set(seen.values()) == {"skipped"} and len(seen) == len(files)
    err = capsys.readouterr().err
    assert f"{len(files)} already present with a matching checksum, skipped" in err


def test_locally_modified_file_is_moved_aside_and_fetched_again(published, tmp_path):
    server, files, _ = published
    folder = _get(server, tmp_path / "d")
    name = "demographics.txt"
    (folder / name).write_bytes(b"edited")
    server.requests.clear()
    _get(server, tmp_path / "d")
    assert _file_requests(server) == [(f"data/{name}", None)]
    assert (folder / name).read_bytes() == files[name]
    assert (folder / (name + ".corrupt")).read_bytes() == b"edited"


def test_progress_bar_can_be_silenced(published, tmp_path, capsys):
    server, _, _ = published
    _get(server, tmp_path / "quiet", progress=False)
    assert capsys.readouterr().err == ""
    _get(server, tmp_path / "loud", progress=True)
    err = capsys.readouterr().err
    assert "gaitpdb" in err and "downloaded" in err


# ---------------------------------------------------------------------------- helpers


def test_parse_sha256sums_formats_and_unsafe_names():
    d = "ab" * 32
    sums = parse_sha256sums(f"{d}  a.txt\r\n\r\n# note\n{d.upper()} *sub/b.dat\n")
    assert sums == {"a.txt": d, "sub/b.dat": d}
    for bad in ("../x", "/etc/passwd", "a/../../b"):
        with pytest.raises(InputError, match="unsafe"):
            parse_sha256sums(f"{d}  {bad}\n")
    with pytest.raises(InputError, match="line 1"):
        parse_sha256sums("nothex  a.txt\n")


def test_select_files_lists_and_commas():
    names = ["a_01.txt", "b_02.txt", "format.txt"]
    assert select_files(names) == names
    assert select_files(names, "a_*,b_*") == ["a_01.txt", "b_02.txt"]
    assert select_files(names, ["b_02.txt"], always=["format.txt", "absent"]) == [
        "b_02.txt",
        "format.txt",
    ]


def test_registry_facts():
    assert get_info("gaitpdb") is DATASETS["gaitpd"] and get_info("CAMARGO2021").name == "camargo"
    g, n, c = DATASETS["gaitpd"], DATASETS["noneeg"], DATASETS["camargo"]
    assert g.files_url == "https://physionet.org/files/gaitpdb/1.0.0/"
    assert g.sha256_url == g.files_url + SUMS_NAME and g.subjects == 165
    assert n.files_url == "https://physionet.org/files/noneeg/1.0.0/"
    assert n.sha256_url == n.files_url + SUMS_NAME and n.subjects == 20
    assert "8 Hz" in n.rates and len(n.classes) == 4
    assert not c.downloadable and c.licence.startswith("CC-BY") and c.subjects == 22
    assert sum("10.17632" in u for u in c.get_from) == 3


# ------------------------------------------------------------------------- real files


def test_real_noneeg_subset_through_the_server(server, tmp_path):
    real = real_dataset("noneeg")
    sums_text = (real / SUMS_NAME).read_text()
    wanted = select_files(
        parse_sha256sums(sums_text), "Subject1_*", DATASETS["noneeg"].always_files
    )
    data = server.root / "data"
    data.mkdir()
    for name in wanted:
        shutil.copy2(real / name, data / name)
    shutil.copy2(real / SUMS_NAME, data / SUMS_NAME)  # the real, complete list
    folder = download(
        "noneeg", tmp_path / "d", base_url=server.url, files="Subject1_*", progress=False
    )
    got = sorted(p.name for p in folder.iterdir() if p.name != SUMS_NAME)
    assert got == sorted(wanted)
    assert "Subject1_AccTempEDA.atr" in got and "Subject10_SpO2HR.dat" not in got
    for name in wanted:
        assert (folder / name).read_bytes() == (real / name).read_bytes()
    assert (folder / SUMS_NAME).read_bytes() == (real / SUMS_NAME).read_bytes()
    assert verify_folder(folder, "Subject1_*", always=DATASETS["noneeg"].always_files).passed


def test_default_destination_is_medspt_data(published, tmp_path, monkeypatch):
    server, files, _ = published
    monkeypatch.setenv("MEDSPT_DATA", str(tmp_path / "env-root"))
    folder = download("gaitpd", base_url=server.url, progress=False, files="format.txt")
    assert folder == tmp_path / "env-root" / "gaitpdb"
    assert (folder / "format.txt").read_bytes() == files["format.txt"]
