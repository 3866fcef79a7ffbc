"""Where local copies of the public datasets are looked for."""

from __future__ import annotations

import os
from pathlib import Path

from medspt.core.errors import InputError

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


def resolve_root(root, folder: str, is_data_file, hint: str) -> Path:
    """The dataset folder for ``root``: ``None`` searches :func:`candidate_roots`; a folder
    that holds ``<folder>/`` instead of the data files themselves is followed into it.

    ``is_data_file(name) -> bool`` recognizes the dataset's files; ``hint`` says which
    files the folder must hold (for the error message).
    """
    if root is None:
        found = find_dataset(folder)
        if found is None:
            raise InputError(
                f"the {folder!r} dataset is needed but no local copy was found: pass "
                f"root=<folder with the {hint}> or set {ENV_VAR} to a folder holding {folder}/"
            )
        return found
    path = Path(root).expanduser()
    if not path.is_dir():
        raise InputError(f"{folder} folder {str(path)!r} does not exist or is not a folder")
    if not any(is_data_file(p.name) for p in path.iterdir()) and (path / folder).is_dir():
        path = path / folder
    return path
