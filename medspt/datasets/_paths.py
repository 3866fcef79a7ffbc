"""Where local copies of the public datasets are looked for."""

from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "MEDSPT_DATA"
_REPO = Path(__file__).resolve().parents[2]


def candidate_roots() -> list[Path]:
    """Folders that may hold ``gaitpdb/``, ``noneeg/``, ``camargo2021/``: ``$MEDSPT_DATA``,
    then ``shared/data`` beside the checkout, then the repository's ``datasets/`` folder
    (the default download location)."""
    roots = []
    if os.environ.get(ENV_VAR):
        roots.append(Path(os.environ[ENV_VAR]).expanduser())
    roots += [_REPO.parent / "shared" / "data", _REPO / "datasets"]
    return roots


def find_dataset(folder: str) -> Path | None:
    """First existing ``<root>/<folder>`` among :func:`candidate_roots`, else None."""
    for root in candidate_roots():
        if (root / folder).is_dir() and any((root / folder).iterdir()):
            return root / folder
    return None
