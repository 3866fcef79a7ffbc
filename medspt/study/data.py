"""A study's data: the spec it stores, and the windows and folds every worker loads from it.

The spec (``attrs["data"]``) names where the data come from (a protocol, a file, the
built-in demo, or a DataFrame of the creating process) and how a table is cut, so that
workers joining the study, its report and its refit all load identical windows and
folds.
"""

from __future__ import annotations

from pathlib import Path

from medspt.api import DATA_DEFAULTS, windows_from
from medspt.core.errors import InputError
from medspt.core.splits import check_folds, subject_folds
from medspt.core.tables import read_table
from medspt.data.synthetic import make_demo_frame
from medspt.data.windowset import WindowSet, WindowSpec
from medspt.datasets.protocols import protocol as load_protocol

__all__ = ["DATA_OPTIONS", "data_spec", "load_study_data"]

# How a study's table is read and cut besides window and stride (fit_spt's data keywords).
# A data spec stores the ones that differ from their defaults (window and stride always),
# so a study started before an option existed resumes unchanged.
DATA_OPTIONS = {k: v for k, v in DATA_DEFAULTS.items() if k not in ("window", "stride")}


def data_spec(data, protocol, cv, window, stride, options: dict | None = None) -> dict:
    """How workers load the study's data; ``options`` are the data keywords
    (``subject``, ``channels``, ...; see ``DATA_OPTIONS``)."""
    options = dict(options or {})
    unknown = sorted(set(options) - set(DATA_OPTIONS))
    if unknown:
        raise InputError(f"unknown data options {unknown}; known: {sorted(DATA_OPTIONS)}")
    if options.get("channels") is not None:
        options["channels"] = [str(c) for c in options["channels"]]
    given = {k: v for k, v in options.items() if v != DATA_OPTIONS[k]}
    if protocol is not None:
        return _protocol_spec(data, protocol, window, stride, given)
    if data is None:
        raise InputError("run_study needs data (a DataFrame, a file, 'demo') or protocol=...")
    cut = {"cv": cv, "window": window, "stride": stride, **given}
    if isinstance(data, str) and data == "demo":
        return {"kind": "demo", **cut}
    if isinstance(data, (str, Path)):
        path = Path(data).expanduser().resolve()
        if not path.is_file():
            raise InputError(f"data file {str(data)!r} does not exist")
        return {"kind": "file", "path": str(path), **cut}
    return {"kind": "memory", **cut}


def _protocol_spec(data, protocol: str, window, stride, given: dict) -> dict:
    """A protocol fixes its columns, windows and folds: none of them may be given."""
    if data is not None and not isinstance(data, (str, Path)):
        raise InputError("give either protocol=... or data=..., not both")
    cut = {"window": window, "stride": stride} if window != "auto" or stride else {}
    if given or cut:
        shown = ", ".join(f"{k}={v!r}" for k, v in {**given, **cut}.items())
        raise InputError(
            f"{shown}: protocol={protocol!r} fixes its own columns, windows and folds; "
            "leave these out, or give data=... (a file) instead of protocol=..."
        )
    return {"kind": "protocol", "name": str(protocol), "root": None if data is None else str(data)}


def load_study_data(
    spec: dict, data=None, with_spec: bool = False
) -> tuple[WindowSet, list] | tuple[WindowSet, list, WindowSpec | None]:
    """Windows and subject-wise folds a study's data spec describes; ``with_spec``: also
    how a DataFrame was cut (a :class:`~medspt.data.windowset.WindowSpec`, None for protocols), so
    a model refitted on them predicts new recordings cut the same way."""
    kind = spec["kind"]
    if kind == "protocol":
        p = load_protocol(spec["name"], root=spec.get("root"))
        return (p.windows, list(p.folds)) + ((None,) if with_spec else ())
    if kind == "memory" and data is None:
        raise InputError(
            "this study's data was given in memory (a DataFrame) and cannot be loaded by "
            "another worker; start studies that workers join with a data file, 'demo' or "
            "a protocol name"
        )
    if kind == "demo":
        data = make_demo_frame()
    elif kind == "file":
        data = read_table(spec["path"])
    options = {k: spec.get(k, default) for k, default in DATA_OPTIONS.items()}
    ws, cut = windows_from(
        data, window=spec.get("window", "auto"), stride=spec.get("stride"), **options
    )
    if ws.y is None:
        raise InputError("the study's data has no labels")
    folds = subject_folds(ws.y, ws.groups, int(spec.get("cv", 5)))
    return (ws, check_folds(folds, ws.groups, len(ws))) + ((cut,) if with_spec else ())
