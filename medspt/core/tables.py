"""Reading a long table of recordings from a file (shared by the command line and the
study workers, which load a study's data file themselves)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from medspt.core.errors import InputError

__all__ = ["read_table"]


def read_table(path: str, flag: str = "--data") -> pd.DataFrame:
    """A ``.csv``, ``.tsv`` or ``.parquet`` file as a DataFrame; clear errors naming the
    file and its option ``flag`` (``--data``, ``--unlabelled``) when it is missing,
    unreadable or of another kind."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{flag} file {path!r} does not exist")
    suffix = p.suffix.lower()
    try:
        if suffix in (".csv", ".txt", ".tsv"):
            return pd.read_csv(p, sep="\t" if suffix == ".tsv" else ",")
        if suffix in (".parquet", ".pq"):
            return pd.read_parquet(p)
    except (ValueError, OSError, pd.errors.ParserError) as e:
        raise InputError(f"could not read {flag} file {path!r}: {e}") from None
    raise InputError(f"{flag} file {path!r}: expected a .csv, .tsv or .parquet file")
