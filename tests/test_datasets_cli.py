"""``medspt datasets list | info | download | check`` through argparse, with a real local
HTTP server for downloads (see test_download.py)."""

from __future__ import annotations

import argparse
import importlib.util
import io
import os
import subprocess
import sys

import pytest
from conftest import real_dataset
from test_download import FileServer, _no_proxy, generated_files, publish  # noqa: F401

from medspt.cli.datasets import add_datasets_parser


def run(capsys, *argv: str) -> tuple[int, str, str]:
    p = argparse.ArgumentParser(prog="medspt")
    sub = p.add_subparsers(dest="command", required=True)
    add_datasets_parser(sub)
    args = p.parse_args(["datasets", *argv])
    rc = args.func(args)
    out, err = capsys.readouterr()
    return rc, out, err


def assert_one_line_error(err: str) -> None:
    assert len(err.strip().splitlines()) == 1, err
    assert "error:" in err and "Traceback" not in err


@pytest.fixture
def server(tmp_path):
    root = tmp_path / "server"
    root.mkdir()
    srv = FileServer(root)
    yield srv
    srv.close()


@pytest.fixture
def copy(server, tmp_path, capsys):
    """A downloaded copy of generated gaitpd-like files: (data root, files)."""
    files = generated_files(seed=3)
    publish(server.root, files)
    dest = tmp_path / "data"
    rc, out, err = run(capsys, "download", "gaitpd", "--dest", str(dest), "--base-url", server.url)
    assert rc == 0, err
    return dest, files


# ------------------------------------------------------------------------------ list/info


def test_list_table(capsys):
    rc, out, err = run(capsys, "list")
    assert rc == 0 and err == ""
    for fact in ("gaitpd", "noneeg", "camargo", "165", "20", "22", "100 Hz", "8 Hz", "CC-BY"):
        assert fact in out, fact
    assert out.splitlines()[0].split() == [
        "name",
        "title",
        "subjects",
        "channels",
        "rates",
        "classes",
        "licence",
    ]


def test_info_gaitpd(capsys):
    rc, out, _ = run(capsys, "info", "gaitpd")
    assert rc == 0
    for fact in (
        "165",
        "93 PD, 72 control",
        "100 Hz",
        "control, PD",
        "Goldberger",
        "https://physionet.org/files/gaitpdb/1.0.0/SHA256SUMS.txt",
        "GPD-1",
        "CRLF",
        "Juc010",
        "medspt datasets check gaitpd",
    ):
        assert fact in out, fact


def test_info_noneeg_and_alias(capsys):
    rc, out, _ = run(capsys, "info", "noneeg")
    assert rc == 0
    for fact in ("8 Hz", "1 Hz", "Relax, PhysicalStress, CognitiveStress, EmotionalStress",
                 "Birjandtalab", "NE-1", "aux_note"):  # fmt: skip
        assert fact in out, fact
    rc, alias_out, _ = run(capsys, "info", "gaitpdb")
    assert rc == 0 and alias_out.startswith("gaitpd:")


def test_info_camargo(capsys):
    rc, out, _ = run(capsys, "info", "camargo2021")
    assert rc == 0
    flat = " ".join(out.split())
    for fact in (
        "CC-BY 4.0",
        "Mendeley",
        "EPIC lab",
        "10.17632/fcgm3chfff.2",
        "10.17632/k9kvm5tn3f.2",
        "10.17632/jj3r5f9pnf.2",
        "<subject>/<date>/<mode>/<sensor>/<trial>.mat",
        "medspt datasets check camargo [DIR]",
        "22",
        "200 Hz",
        "doi:10.1016/j.jbiomech.2021.110320",
    ):
        assert fact in flat, fact


def test_unknown_name_is_one_line_exit_2(capsys):
    rc, out, err = run(capsys, "info", "nosuch")
    assert rc == 2 and out == ""
    assert_one_line_error(err)
    assert "nosuch" in err and "gaitpd" in err and "noneeg" in err and "camargo" in err


@pytest.mark.parametrize("argv", [(), ("fetch",), ("download",)])
def test_bad_command_lines_are_usage_errors(capsys, argv):
    with pytest.raises(SystemExit) as exc:
        run(capsys, *argv)
    assert exc.value.code == 2


# ------------------------------------------------------------------------------ download


def test_download_camargo_says_where_and_exits_2(capsys, tmp_path):
    rc, out, err = run(capsys, "download", "camargo", "--dest", str(tmp_path))
    assert rc == 2
    assert "Mendeley" in out and "10.17632" in out
    assert_one_line_error(err)
    assert list(tmp_path.iterdir()) == []


def test_download_then_check_ok(copy, capsys):
    dest, files = copy
    folder = dest / "gaitpdb"
    for name, content in files.items():
        assert (folder / name).read_bytes() == content
    rc, out, err = run(capsys, "check", "gaitpd", str(folder))
    assert rc == 0, out + err
    assert f"{len(files)} OK, 0 missing, 0 mismatched" in out
    # the data root works too
    rc, out, _ = run(capsys, "check", "gaitpdb", str(dest))
    assert rc == 0


def test_check_reports_modified_and_missing_files(copy, capsys):
    dest, files = copy
    folder = dest / "gaitpdb"
    (folder / "GaPt03_01.txt").write_bytes(b"tampered")
    (folder / "JuCo02_02.txt").unlink()
    rc, out, err = run(capsys, "check", "gaitpd", str(folder))
    assert rc == 1 and err == ""
    assert "MISMATCH  GaPt03_01.txt" in out
    assert "MISSING   JuCo02_02.txt" in out
    assert "1 missing, 1 mismatched" in out
    # --files limits the check to a subset (plus the metadata files)
    rc, out, _ = run(capsys, "check", "gaitpd", str(folder), "--files", "GaCo*")
    assert rc == 0 and "4 OK" in out


def test_download_subset_and_quiet(server, tmp_path, capsys):
    publish(server.root, generated_files(seed=4))
    dest = tmp_path / "data"
    argv = ["download", "gaitpd", "--dest", str(dest), "--base-url", server.url]
    rc, out, err = run(capsys, *argv, "--files", "*_02.txt", "--quiet")
    assert rc == 0 and err == ""
    got = sorted(p.name for p in (dest / "gaitpdb").iterdir())
    assert got == sorted(
        ["JuCo02_02.txt", "demographics.txt", "demographics.xls", "format.txt", "SHA256SUMS.txt"]
    )
    # a second run without --quiet says the files were skipped
    rc, out, err = run(capsys, *argv, "--files", "*_02.txt")
    assert rc == 0 and "4 already present with a matching checksum, skipped" in err


def test_download_404_is_one_line_naming_the_url(server, tmp_path, capsys):
    publish(server.root, generated_files())
    (server.root / "data" / "format.txt").unlink()
    argv = ["download", "gaitpd", "--dest", str(tmp_path / "d"), "--base-url", server.url]
    rc, out, err = run(capsys, *argv, "--quiet")
    assert rc == 2
    assert_one_line_error(err)
    assert "404" in err and server.url + "format.txt" in err


def test_check_without_checksum_list_is_an_error(tmp_path, capsys):
    rc, _, err = run(capsys, "check", "noneeg", str(tmp_path))
    assert rc == 2
    assert_one_line_error(err)
    assert "SHA256SUMS.txt" in err
    rc, _, err = run(capsys, "check", "noneeg", str(tmp_path / "absent"))
    assert rc == 2 and "not a folder" in err


# --------------------------------------------------------------------------------- camargo


def test_check_camargo_without_the_module(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "medspt.datasets.camargo", None)  # import fails
    rc, _, err = run(capsys, "check", "camargo", str(tmp_path))
    assert rc == 2
    assert_one_line_error(err)
    assert "camargo checks not available" in err


@pytest.mark.skipif(
    importlib.util.find_spec("medspt.datasets.camargo") is None,
    reason="medspt.datasets.camargo not present",
)
def test_check_camargo_reports_problems(tmp_path, capsys):
    (tmp_path / "camargo2021").mkdir()
    rc, out, _ = run(capsys, "check", "camargo", str(tmp_path))
    assert rc == 1
    assert "PROBLEM" in out and "problem(s) found" in out


# ------------------------------------------------------------------------------ real data


def test_check_real_noneeg_copy(capsys):
    folder = real_dataset("noneeg")
    rc, out, _ = run(capsys, "check", "noneeg", str(folder))
    assert rc == 0, out
    assert "103 OK, 0 missing, 0 mismatched" in out


def test_check_real_gaitpd_walk01_subset(capsys):
    folder = real_dataset("gaitpdb")
    rc, _, err = run(capsys, "check", "gaitpd", str(folder), "--files", "Subject*,Ga*_01.txt")
    # "Subject*" matches nothing in gaitpdb: a clear error, not a silent pass
    assert rc == 2 and "'Subject*' matches none" in err
    rc, out, _ = run(capsys, "check", "gaitpd", str(folder), "--files", "GaCo*_01.txt")
    assert rc == 0, out
    assert "21 OK, 0 missing, 0 mismatched" in out  # 18 Ga controls + 3 metadata files


# -------------------------------------------------------------------- check without DIR


def test_check_without_folder_uses_medspt_data(copy, capsys, monkeypatch):
    dest, files = copy
    monkeypatch.setenv("MEDSPT_DATA", str(dest))
    rc, out, err = run(capsys, "check", "gaitpd")
    assert rc == 0, out + err
    assert str(dest / "gaitpdb") in out
    assert f"{len(files)} OK, 0 missing, 0 mismatched" in out
    # the optional folder and --files combine
    rc, out, _ = run(capsys, "check", "gaitpd", "--files", "GaCo*")
    assert rc == 0 and "4 OK" in out


def test_check_without_folder_when_medspt_data_lacks_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MEDSPT_DATA", str(tmp_path))
    rc, out, err = run(capsys, "check", "noneeg")
    assert rc == 2 and out == ""
    assert_one_line_error(err)
    for fact in (str(tmp_path / "noneeg"), "MEDSPT_DATA", "DIR", "download noneeg"):
        assert fact in err, fact


def test_check_without_folder_or_medspt_data_is_one_line_error(capsys, monkeypatch):
    import medspt.cli.datasets as datasets_cli

    monkeypatch.delenv("MEDSPT_DATA", raising=False)
    monkeypatch.setattr(datasets_cli, "find_dataset", lambda folder: None)
    for name in ("noneeg", "camargo"):
        rc, out, err = run(capsys, "check", name)
        assert rc == 2 and out == ""
        assert_one_line_error(err)
        assert "no folder given" in err and "DIR" in err and "MEDSPT_DATA" in err, err


def test_no_datasets_command_requires_a_folder(capsys):
    """list and info take none; download and check default to $MEDSPT_DATA."""
    p = argparse.ArgumentParser(prog="medspt")
    add_datasets_parser(p.add_subparsers(dest="command", required=True))
    for argv in (["list"], ["info", "noneeg"], ["download", "noneeg"], ["check", "noneeg"]):
        args = p.parse_args(["datasets", *argv])  # no SystemExit: nothing else is required
        assert getattr(args, "dest", None) is None and getattr(args, "dir", None) is None
    rc, out, _ = run(capsys, "info", "noneeg")
    assert rc == 0 and "medspt datasets check noneeg [DIR/noneeg]" in " ".join(out.split())


def test_check_real_noneeg_copy_without_folder(capsys, monkeypatch):
    folder = real_dataset("noneeg")
    monkeypatch.setenv("MEDSPT_DATA", str(folder.parent))
    rc, out, _ = run(capsys, "check", "noneeg")
    assert rc == 0, out
    assert f"{folder}: 103 OK, 0 missing, 0 mismatched" in out


# ------------------------------------------------------------------- a closed output pipe

CLI = [sys.executable, "-m", "medspt.cli.commands"]


def _run_into_closed_pipe(argv: list[str], lines: int) -> tuple[int, str]:
    """Run ``python -m medspt.cli.commands ARGV`` with stdout into a real pipe whose reader takes
    ``lines`` lines and closes it (``| head -1`` for 1; 0: closed before the command
    writes anything, so its first write meets the closed pipe). Returns the exit code and
    stderr."""
    read_fd, write_fd = os.pipe()
    if lines == 0:
        os.close(read_fd)
    proc = subprocess.Popen(CLI + argv, stdout=write_fd, stderr=subprocess.PIPE, text=True)
    os.close(write_fd)
    if lines:
        with os.fdopen(read_fd, "rb", buffering=0) as reader:
            got = b""
            while got.count(b"\n") < lines:  # byte by byte: leave the rest in the pipe
                byte = reader.read(1)
                if not byte:
                    break
                got += byte
        assert got, f"no output from {argv}"
    _, err = proc.communicate(timeout=120)
    return proc.returncode, err


@pytest.mark.parametrize("lines", [1, 0])
@pytest.mark.parametrize(
    "argv",
    [["datasets", "info", "gaitpd"], ["datasets", "list"], ["fit", "--help"]],
    ids=" ".join,
)
def test_closed_pipe_ends_quietly(argv, lines):
    rc, err = _run_into_closed_pipe(argv, lines)
    assert "Traceback" not in err and "Broken pipe" not in err and "error" not in err, err
    if lines == 0 and argv[-1] != "--help":  # argparse itself ignores a failed help write
        assert rc == 1, err
    else:  # the reader may have taken everything before it closed
        assert rc in (0, 1), err


def test_closed_pipe_in_a_datasets_command_is_not_an_error(capsys, monkeypatch):
    """The datasets handlers report OSError as one-line errors, but not a closed pipe."""
    from medspt.cli.commands import main

    class ClosedPipe:
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self) -> None:
            raise BrokenPipeError(32, "Broken pipe")

        def fileno(self) -> int:
            raise io.UnsupportedOperation("fileno")

    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    assert main(["datasets", "info", "gaitpd"]) == 1
    assert capsys.readouterr().err == ""
