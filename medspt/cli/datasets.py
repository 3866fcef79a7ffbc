"""``medspt datasets list | info NAME | download NAME | check NAME [DIR]``.

:func:`add_datasets_parser` adds the ``datasets`` command to an argparse sub-parser set;
every handler returns an exit code (0 OK, 1 a check found problems, 2 an error reported as
one line on stderr) and never raises for user mistakes or network failures. A closed
output pipe (``| head``) is left to :func:`medspt.cli.commands.main`, which ends quietly.

No command needs a folder argument: ``download`` and ``check`` default to the dataset's
folder under ``$MEDSPT_DATA`` (without it, the repository's ``datasets/`` folder, where
``download`` saves by default, or another local copy that ``info`` reports).
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import textwrap
from pathlib import Path

from medspt.core.errors import InputError
from medspt.datasets import ENV_VAR, find_dataset
from medspt.datasets.download import (
    SUMS_NAME,
    DownloadError,
    default_root,
    download,
    verify_folder,
)
from medspt.datasets.registry import DATASETS, DatasetInfo, get_info

_WIDTH = 100
_MAX_LISTED = 20


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split()) or type(e).__name__


def _handles_errors(fn):
    @functools.wraps(fn)
    def wrapper(args) -> int:
        try:
            return fn(args)
        except BrokenPipeError:  # the reader of stdout has gone: not an error to report
            raise
        except (InputError, DownloadError, OSError) as e:
            cmd = getattr(args, "datasets_command", None) or "datasets"
            print(f"medspt datasets {cmd}: error: {_one_line(e)}", file=sys.stderr)
            return 2

    return wrapper


# ---------------------------------------------------------------------------------- list


def _wrapped_table(header: list[str], rows: list[list[str]], widths: list[int]) -> str:
    def render(cells: list[str]) -> list[str]:
        cols = [textwrap.wrap(c, w) or [""] for c, w in zip(cells, widths)]
        height = max(len(c) for c in cols)
        return [
            "  ".join(
                (col[i] if i < len(col) else "").ljust(w) for col, w in zip(cols, widths)
            ).rstrip()
            for i in range(height)
        ]

    lines = render(header)
    lines.append("  ".join("-" * w for w in widths))
    for r in rows:
        lines += render(r)
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


@_handles_errors
def cmd_list(args) -> int:
    header = ["name", "title", "subjects", "channels", "rates", "classes", "licence"]
    rows = [
        [
            info.name,
            info.title,
            str(info.subjects),
            info.channel_summary or info.channels,
            info.rates,
            ", ".join(info.classes),
            info.licence,
        ]
        for info in DATASETS.values()
    ]
    print(_wrapped_table(header, rows, [8, 22, 8, 20, 14, 16, 16]), end="")
    print("Details: medspt datasets info NAME. Download (PhysioNet datasets): ", end="")
    print("medspt datasets download NAME.")
    return 0


# ---------------------------------------------------------------------------------- info


def _field(label: str, text: str) -> str:
    indent = " " * 14
    return textwrap.fill(
        text,
        _WIDTH,
        initial_indent=f"  {label + ':':<12}",
        subsequent_indent=indent,
        break_on_hyphens=False,
    )


def _how_to_get(info: DatasetInfo) -> list[str]:
    if info.downloadable:
        subset = ' [--files "*_01.txt"]' if info.name == "gaitpd" else ' [--files "Subject1_*"]'
        return [
            _field(
                "download",
                f"medspt datasets download {info.name} [--dest DIR]{subset} fetches the files "
                f"from {info.files_url} and verifies each against {info.sha256_url} "
                f"(resumable; files already verified are skipped). Default DIR: "
                f"${ENV_VAR} if set, else the repository's datasets/ folder.",
            ),
            _field(
                "verify",
                f"medspt datasets check {info.name} [DIR/{info.folder}] checks a local copy "
                f"against its {SUMS_NAME} (default: the local copy above).",
            ),
        ]
    parts = ", ".join(info.get_from[1:])
    return [
        _field(
            "get it",
            f"not downloadable by medspt. Download it from the Georgia Tech EPIC lab page "
            f"{info.get_from[0]} (Dropbox) or from Mendeley Data, where it is split into "
            f"three parts: {parts}. Unpack so that the files sit as "
            f"DIR/{info.layout}.",
        ),
        _field(
            "verify",
            f"medspt datasets check {info.name} [DIR] validates a local copy (DIR is the "
            f"{info.folder} folder or the root holding it; default: the local copy above).",
        ),
    ]


@_handles_errors
def cmd_info(args) -> int:
    info = get_info(args.name)
    local = find_dataset(info.folder)
    lines = [f"{info.name}: {info.title}, version {info.version}"]
    if info.aliases:
        lines.append(_field("aliases", ", ".join(info.aliases)))
    lines += [
        _field("subjects", f"{info.subjects} - {info.subjects_detail}"),
        _field("channels", info.channels),
        _field("rates", info.rates),
        _field("classes", ", ".join(info.classes)),
        _field("licence", info.licence),
        _field("citation", info.citation),
        _field("page", info.url),
        _field("layout", f"<root>/{info.layout}"),
        _field(
            "<root>",
            f"${ENV_VAR} if set, then shared/data beside a source checkout, then the "
            "repository's datasets/ folder: the first that holds the dataset",
        ),
        _field("local copy", str(local) if local else "not found"),
        *_how_to_get(info),
        _field("protocol", info.protocol),
    ]
    if info.notes:
        lines.append("  notes:")
        for note in info.notes:
            lines.append(
                textwrap.fill(note, _WIDTH, initial_indent="    - ", subsequent_indent=" " * 6)
            )
    print("\n".join(lines))
    return 0


# ------------------------------------------------------------------------------ download


@_handles_errors
def cmd_download(args) -> int:
    info = get_info(args.name)
    if not info.downloadable:
        print("\n".join(_how_to_get(info)))
        print(
            f"medspt datasets download: error: {info.name} cannot be downloaded by medspt; "
            "see above for where to get it",
            file=sys.stderr,
        )
        return 2
    dest = Path(args.dest) if args.dest else default_root()
    try:
        folder = download(
            info,
            dest,
            base_url=args.base_url,
            files=args.files,
            progress=not args.quiet,
            timeout=args.timeout,
            retries=args.retries,
        )
    except KeyboardInterrupt:
        print(
            "medspt datasets download: interrupted; run the same command again to resume",
            file=sys.stderr,
        )
        return 130
    print(f"{info.name}: files in {folder} match {SUMS_NAME}")
    print(f"check the copy again with: medspt datasets check {info.name} {folder}")
    return 0


# --------------------------------------------------------------------------------- check


def _check_camargo(root: Path) -> int:
    try:
        from medspt.datasets.camargo import check_camargo
    except ImportError as e:
        print(
            f"medspt datasets check: error: camargo checks not available ({_one_line(e)})",
            file=sys.stderr,
        )
        return 2
    if (root / "camargo2021").is_dir():
        root = root / "camargo2021"
    problems = list(check_camargo(root))
    for p in problems:
        print(f"PROBLEM   {p}")
    if problems:
        print(f"{root}: {len(problems)} problem(s) found")
        return 1
    print(f"{root}: camargo copy OK")
    return 0


def _default_folder(info: DatasetInfo) -> Path:
    """The folder ``check`` verifies when none is given: ``$MEDSPT_DATA/<folder>`` when
    the variable is set (where ``download`` saves), else the local copy ``info`` reports."""
    env = os.environ.get(ENV_VAR)
    how = (
        f"pass the folder (medspt datasets check {info.name} DIR) or set "
        f"{ENV_VAR} to the folder holding {info.folder}/"
    )
    if env:
        folder = Path(env).expanduser() / info.folder
        if not folder.is_dir():
            raise InputError(
                f"no folder given and {folder} (${ENV_VAR}/{info.folder}) does not "
                f"exist; {how}"
                + (
                    f", or fetch it: medspt datasets download {info.name}"
                    if info.downloadable
                    else ""
                )
            )
        return folder
    found = find_dataset(info.folder)
    if found is None:
        raise InputError(
            f"no folder given, {ENV_VAR} is not set and no local copy of "
            f"{info.folder}/ was found; {how}"
        )
    return found


@_handles_errors
def cmd_check(args) -> int:
    info = get_info(args.name)
    root = _default_folder(info) if args.dir is None else Path(args.dir).expanduser()
    if not root.is_dir():
        raise InputError(f"{root} is not a folder")
    if not info.downloadable:
        return _check_camargo(root)
    if (root / SUMS_NAME).is_file():
        folder = root
    elif (root / info.folder / SUMS_NAME).is_file():
        folder = root / info.folder
    else:
        raise InputError(
            f"no {SUMS_NAME} in {root} (nor in {root / info.folder}); "
            f"it comes with the dataset: medspt datasets download {info.name} saves it"
        )
    always = info.always_files if args.files else ()
    report = verify_folder(folder, args.files, always=always)
    for name, expected, actual in sorted(report.mismatched):
        print(f"MISMATCH  {name}: expected sha256 {expected}, got {actual}")
    for name in sorted(report.missing)[:_MAX_LISTED]:
        print(f"MISSING   {name}")
    if len(report.missing) > _MAX_LISTED:
        print(f"MISSING   ... and {len(report.missing) - _MAX_LISTED} more")
    checked = len(report.ok) + len(report.missing) + len(report.mismatched)
    print(
        f"{folder}: {len(report.ok)} OK, {len(report.missing)} missing, "
        f"{len(report.mismatched)} mismatched (of {checked} checked)"
    )
    if report.missing and not report.mismatched and args.files is None:
        print(
            "a partial copy? check only the files you fetched with --files, e.g. "
            + ('--files "*_01.txt"' if info.name == "gaitpd" else '--files "Subject1_*"')
        )
    return 0 if report.passed else 1


# -------------------------------------------------------------------------------- parser


def add_datasets_parser(subparsers) -> argparse.ArgumentParser:
    """Add ``datasets`` with sub-commands ``list``, ``info``, ``download``, ``check`` to
    ``subparsers`` (from ``parser.add_subparsers()``); each sets ``func``, which takes the
    parsed arguments and returns an exit code."""
    names = ", ".join(DATASETS)
    p = subparsers.add_parser(
        "datasets",
        help="list, describe, download and verify the public datasets",
        description=f"The public datasets medspt knows ({names}).",
    )
    sub = p.add_subparsers(dest="datasets_command", required=True, metavar="COMMAND")

    q = sub.add_parser("list", help="table of the known datasets")
    q.set_defaults(func=cmd_list)

    q = sub.add_parser("info", help="facts, citation, layout and where to get a dataset")
    q.add_argument("name", help=f"dataset ({names}; aliases gaitpdb, camargo2021)")
    q.set_defaults(func=cmd_info)

    q = sub.add_parser(
        "download",
        help="download a PhysioNet dataset and verify it against SHA256SUMS.txt",
        description="Download gaitpd or noneeg into DIR/gaitpdb or DIR/noneeg, verifying "
        "every file's SHA-256; interrupted downloads resume, verified files are skipped.",
    )
    q.add_argument("name", help="gaitpd (alias gaitpdb) or noneeg")
    q.add_argument(
        "--dest",
        default=None,
        help=f"data root (default: ${ENV_VAR} if set, else the repository's datasets/)",
    )
    q.add_argument(
        "--files",
        action="append",
        default=None,
        metavar="GLOB",
        help="only files matching GLOB (repeatable or comma-separated), e.g. '*_01.txt'; "
        "the small metadata files are always fetched (default: every file)",
    )
    q.add_argument(
        "--base-url",
        default=None,
        help="folder URL holding SHA256SUMS.txt, a mirror (default: the dataset's PhysioNet page)",
    )
    q.add_argument("--timeout", type=float, default=60, help="seconds per request (default: 60)")
    q.add_argument(
        "--retries", type=int, default=2, help="resume a broken-off file this often (default: 2)"
    )
    q.add_argument(
        "--quiet", action="store_true", help="no progress bars or messages (default: shown)"
    )
    q.set_defaults(func=cmd_download)

    q = sub.add_parser(
        "check",
        help="verify a local copy (checksums; for camargo, the layout)",
        description="gaitpd/noneeg: compare the files in DIR with DIR/SHA256SUMS.txt "
        "(DIR may also be the data root holding gaitpdb/ or noneeg/). camargo: check the "
        "<subject>/<date>/<mode>/<sensor>/<trial>.mat layout. Without DIR: the dataset's "
        f"folder under ${ENV_VAR}. Exit code 0 when OK, 1 when problems were found, "
        "2 on errors.",
    )
    q.add_argument("name", help=f"dataset ({names})")
    q.add_argument(
        "dir",
        nargs="?",
        default=None,
        metavar="DIR",
        help=f"the dataset folder (default: ${ENV_VAR}/<folder> if {ENV_VAR} "
        "is set, else the local copy medspt datasets info NAME reports)",
    )
    q.add_argument(
        "--files",
        action="append",
        default=None,
        metavar="GLOB",
        help="check only files matching GLOB (plus the metadata files), e.g. '*_01.txt' "
        "(default: every file listed in SHA256SUMS.txt)",
    )
    q.set_defaults(func=cmd_check)
    return p
