"""Export the UCR/UEA sets bundled with aeon to ``.npz`` files and score aeon's MiniRocket.

Runs in medspt's environment (aeon is one of its dependencies)::

    python benchmarks/export_public_sets.py            # all bundled sets
    python benchmarks/export_public_sets.py --sets GunPoint --cache DIR

``benchmarks/public_sets.py`` reads the cache and runs this script itself when the cache
lacks a set.

Nothing is downloaded: the sets are read from the ``.ts`` files inside the aeon wheel
(``aeon/datasets/data/<name>/``), and aeon's download function is replaced by one that
raises, so a set that is not bundled fails instead of being fetched.

For each set the cache folder (``--cache``, default ``~/.cache/medspt/public_sets``) gets

- ``<name>.npz``: ``X_train``, ``X_test`` as float32 ``(n, channels, longest)`` with NaN
  after each case's end, ``len_train``, ``len_test`` (per-case lengths), ``y_train``,
  ``y_test`` (class labels as strings); the train/test split of the archive.
- an entry in ``minirocket.json``: test accuracy of ``medspt.baselines.MiniRocket
  (random_state=0)`` (aeon's ``MiniRocketClassifier`` with medspt's input rules, the
  baseline ``medspt.evaluate`` runs) fitted on the train split, and its *inner* accuracy:
  fitted on 75 % of the train cases and scored on the other 25 % (:func:`inner_split`, the
  same split ``public_sets.py --inner`` uses; the held-out case indices are stored so that
  it can check). Unequal-length cases are given as they are (NaN after their end); the
  baseline holds each at its last value, recorded as ``input`` in the JSON. Entries
  computed otherwise (``via`` missing: aeon's classifier on the archive's equal-length
  version, before MiniRocket was part of medspt) are recomputed.

This module imports neither aeon nor medspt at import time: ``public_sets.py`` and the
tests import :func:`inner_split` and :data:`SETS` from it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

DEFAULT_CACHE = Path("~/.cache/medspt/public_sets").expanduser()
MINIROCKET_FILE = "minirocket.json"
SPLIT_SEED = 0  # the inner split is a fixed partition of each train split
INNER_SIZE = 0.25

# The classification sets aeon 1.6 bundles (aeon/datasets/data); "multivariate" ones are
# in no selection round's score, but their test splits prompted rounds 3 and 6, so they
# are development data like the univariate ones.
UNIVARIATE = (
    "GunPoint",
    "ArrowHead",
    "ItalyPowerDemand",
    "OSULeaf",
    "PickupGestureWiimoteZ",  # unequal lengths
    "ACSF1",
)
MULTIVARIATE = ("BasicMotions", "JapaneseVowels")  # JapaneseVowels: unequal lengths
SETS = UNIVARIATE + MULTIVARIATE
GROUPS = {"univariate": UNIVARIATE, "multivariate": MULTIVARIATE, "all": SETS}


def resolve_sets(names) -> list[str]:
    """Set names with the group names ``univariate``, ``multivariate``, ``all`` expanded,
    in order, without repeats."""
    out: list[str] = []
    for name in names or ["all"]:
        for s in GROUPS.get(name, (name,)):
            if s not in out:
                out.append(s)
    return out


def inner_split(y, seed: int = SPLIT_SEED, size: float = INNER_SIZE):
    """Stratified hold-out of a train split: ``(fit_idx, val_idx)``, both sorted.

    ``StratifiedShuffleSplit(n_splits=1, test_size=size, random_state=seed)`` over the
    case labels: every class keeps about its share on both sides; the same labels and seed
    always give the same split.
    """
    from sklearn.model_selection import StratifiedShuffleSplit

    y = np.asarray(y)
    sss = StratifiedShuffleSplit(n_splits=1, test_size=size, random_state=seed)
    fit, val = next(sss.split(np.zeros((len(y), 1)), y))
    return np.sort(fit), np.sort(val)


def pad_cases(cases) -> tuple[np.ndarray, np.ndarray]:
    """A list of ``(channels, length_i)`` arrays (or a 3-D array) as float32
    ``(n, channels, longest)`` with NaN after each case's end, plus the lengths."""
    if isinstance(cases, np.ndarray) and cases.ndim == 3:
        lengths = np.full(len(cases), cases.shape[2], dtype=np.int64)
        return cases.astype(np.float32), lengths
    lengths = np.array([c.shape[1] for c in cases], dtype=np.int64)
    n_ch = {c.shape[0] for c in cases}
    if len(n_ch) != 1:
        raise ValueError(f"cases have different channel counts {sorted(n_ch)}")
    out = np.full((len(cases), n_ch.pop(), lengths.max()), np.nan, dtype=np.float32)
    for i, c in enumerate(cases):
        out[i, :, : c.shape[1]] = c
    return out, lengths


# ---------------------------------------------------------------- aeon side


def _bundled_dir() -> Path:
    import aeon

    return Path(aeon.__file__).parent / "datasets" / "data"


def _no_downloads() -> None:
    from aeon.datasets import _data_loaders

    def refuse(url, *args, **kwargs):
        raise RuntimeError(f"refusing to download {url}: only sets bundled with aeon are used")

    _data_loaders._download_and_extract = refuse


def bundled_sets() -> list[str]:
    """Names of the bundled sets that have both a ``_TRAIN.ts`` and a ``_TEST.ts`` file."""
    root = _bundled_dir()
    return sorted(
        d.name
        for d in root.iterdir()
        if (d / f"{d.name}_TRAIN.ts").is_file() and (d / f"{d.name}_TEST.ts").is_file()
    )


def load(name: str, split: str, equal_length: bool = False):
    """``(X, y)`` of one split of a bundled set, read from the wheel's files only."""
    from aeon.datasets import load_classification

    root = _bundled_dir()
    if not (root / name / f"{name}_{split.upper()}.ts").is_file():
        raise SystemExit(f"{name} is not bundled with this aeon ({root}); nothing is downloaded")
    X, y = load_classification(
        name, split=split, extract_path=str(root), load_equal_length=equal_length
    )
    return X, np.asarray(y).astype(str)


def export_set(name: str, cache: Path) -> dict:
    """Write ``<cache>/<name>.npz``; returns a summary."""
    arrays = {}
    for split in ("train", "test"):
        X, y = load(name, split)
        Xp, lengths = pad_cases(X)
        arrays |= {f"X_{split}": Xp, f"len_{split}": lengths, f"y_{split}": y}
    np.savez_compressed(cache / f"{name}.npz", **arrays)
    return {
        "n_train": len(arrays["y_train"]),
        "n_test": len(arrays["y_test"]),
        "channels": arrays["X_train"].shape[1],
        "lengths": f"{arrays['len_train'].min()}-{arrays['len_train'].max()} / "
        f"{arrays['len_test'].min()}-{arrays['len_test'].max()}",
    }


VIA = "medspt.baselines.MiniRocket"


def _minirocket_accuracy(X_fit, y_fit, X_eval, y_eval) -> tuple[float, float]:
    from medspt.baselines import MiniRocket

    t0 = time.perf_counter()
    clf = MiniRocket(random_state=0)
    clf.fit(X_fit, y_fit)
    acc = float(np.mean(clf.predict(X_eval) == y_eval))
    return acc, time.perf_counter() - t0


def same_length(*arrays: np.ndarray) -> list[np.ndarray]:
    """Arrays ``(n, C, T_i)`` NaN-padded at the end to their longest ``T_i``: each split
    is padded to its own longest case, and MiniRocket needs one length for fit and
    predict (it holds a case at its last value over the NaN tail)."""
    T = max(a.shape[2] for a in arrays)
    return [
        np.pad(a, ((0, 0), (0, 0), (0, T - a.shape[2])), constant_values=np.nan) for a in arrays
    ]


def minirocket_scores(name: str, cache: Path) -> dict:
    """MiniRocket's test accuracy and inner-split accuracy on one set, from the exported
    arrays (NaN after each case's end)."""
    with np.load(cache / f"{name}.npz") as f:
        X_tr, y_tr, X_te, y_te = f["X_train"], f["y_train"], f["X_test"], f["y_test"]
        lengths = np.concatenate([f["len_train"], f["len_test"]])
    unequal = lengths.min() != lengths.max()
    X_tr, X_te = same_length(X_tr, X_te)
    test_acc, test_s = _minirocket_accuracy(X_tr, y_tr, X_te, y_te)
    fit, val = inner_split(y_tr)
    inner_acc, inner_s = _minirocket_accuracy(X_tr[fit], y_tr[fit], X_tr[val], y_tr[val])
    return {
        "via": VIA,
        "input": (
            f"unequal lengths {lengths.min()}-{lengths.max()}, each case held at its last value"
            if unequal
            else f"as bundled (length {X_tr.shape[2]})"
        ),
        "test": {"accuracy": test_acc, "seconds": round(test_s, 2)},
        "inner": {
            "accuracy": inner_acc,
            "seconds": round(inner_s, 2),
            "split_seed": SPLIT_SEED,
            "val_index": val.tolist(),
        },
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--sets", nargs="+", default=["all"], help="names or univariate/multivariate/all"
    )
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    ap.add_argument("--no-minirocket", action="store_true", help="only export the data")
    ap.add_argument("--force", action="store_true", help="redo sets already in the cache")
    ap.add_argument("--list", action="store_true", help="list the bundled sets and exit")
    args = ap.parse_args(argv)

    import aeon

    _no_downloads()
    if args.list:
        print("\n".join(bundled_sets()))
        return
    cache = args.cache.expanduser()
    cache.mkdir(parents=True, exist_ok=True)
    score_file = cache / MINIROCKET_FILE
    scores = json.loads(score_file.read_text()) if score_file.exists() else {"sets": {}}
    for name in resolve_sets(args.sets):
        if args.force or not (cache / f"{name}.npz").exists():
            info = export_set(name, cache)
            print(f"{name}: exported {info}", flush=True)
        entry = scores["sets"].get(name)
        if args.no_minirocket or (
            entry
            and entry.get("aeon") == aeon.__version__
            and entry.get("via") == VIA
            and not args.force
        ):
            continue
        entry = {"aeon": aeon.__version__, **minirocket_scores(name, cache)}
        scores["sets"][name] = entry
        tmp = score_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(scores, indent=1))
        os.replace(tmp, score_file)
        print(
            f"{name}: MiniRocket test {entry['test']['accuracy']:.4f} "
            f"({entry['test']['seconds']:.1f} s), inner {entry['inner']['accuracy']:.4f}"
            f" ({entry['inner']['seconds']:.1f} s); input {entry['input']}",
            flush=True,
        )


if __name__ == "__main__":
    sys.exit(main())
