"""medspt's defaults against aeon's MiniRocket on public UCR/UEA sets.

These sets were used to choose the defaults: selection rounds 2-7 scored the six
univariate sets' inner splits (held out of their train parts), and the test splits of all
eight sets were scored under several defaults before the default was frozen (each under
four, GunPoint's under five). They are development data, not an untouched check
(``docs/concepts.md``, "How the defaults were chosen").

The sets are the small ones bundled with aeon 1.6, exported once to ``.npz`` files by
``benchmarks/export_public_sets.py`` (it also writes MiniRocket's accuracies, through
``medspt.baselines``; this script runs it when a set is missing). medspt is used the
way a new user would: each set's cases become a long DataFrame (one row per sample;
``subject`` and ``recording`` = the case id, ``label``, channels ``dim_0``, ``dim_1``, ...;
no time column; each case as long as it really is), ``medspt.fit_spt(train_df,
window=None, **params)`` fits one model with the package defaults (``params`` empty unless
``--params`` gives JSON overrides), and ``clf.predict(test_df).recordings`` gives one
prediction per case (the test frame has no label column).

Two modes:

- default: fit on the archive's train split, score on its test split (no selection
  round scores these numbers, but they were read after each choice and prompted later
  rounds);
- ``--inner``: hold out 25 % of the *train* cases (stratified, seed 0,
  ``export_public_sets.inner_split``), fit on the rest and score on the held-out ones;
  MiniRocket's inner score comes from the same split. Selection rounds score this mode.
  The multivariate sets (BasicMotions, JapaneseVowels) are in no round's score, but
  their test splits prompted rounds 3 and 6: they are development data too.

Rows accumulate in a CSV beside ``--out`` (default ``benchmarks/results/public_sets.md``),
appended and never overwritten. A (set, mode, seed, params) run is skipped unless
``--force`` when a row of it exists under the same resolved defaults (the ``defaults``
column, a hash of every estimator parameter: ``"{}"`` under older defaults is another
run); a run medspt refused (an ``InputError``, recorded as ``refused: ...``) is retried
when the git revision has changed. The Markdown report is rewritten from the CSV after
every set, for the current defaults, with the mean over seeds where several ran.

    python benchmarks/public_sets.py --sets univariate --inner
    python benchmarks/public_sets.py --sets GunPoint
    python benchmarks/public_sets.py --sets ArrowHead --inner --params '{"patch_len": 4}'
"""

from __future__ import annotations

import datetime as dt
import json
import math
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from _common import RESULTS, append_csv, git_revision, machine, params_hash, parser
from _public_sets_report import fmt_cell, report
from export_public_sets import (
    DEFAULT_CACHE,
    MINIROCKET_FILE,
    MULTIVARIATE,
    SPLIT_SEED,
    VIA,
    inner_split,
    resolve_sets,
)

HERE = Path(__file__).resolve().parent
MD = RESULTS / "public_sets.md"
KEY = ("set", "mode", "seed", "params")
COLUMNS = [
    "set",
    "kind",
    "mode",
    "seed",
    "params",
    "defaults",
    "n_train",
    "n_test",
    "channels",
    "classes",
    "min_len",
    "max_len",
    "test_min_len",
    "test_max_len",
    "medspt_accuracy",
    "minirocket_accuracy",
    "difference",
    "fit_s",
    "predict_s",
    "settings",
    "note",
    "threads",
    "git_revision",
    "date",
]


# ---------------------------------------------------------------- pure helpers


def load_set(cache: Path, name: str) -> dict[str, np.ndarray]:
    """The arrays ``export_public_sets.py`` wrote for one set."""
    with np.load(Path(cache) / f"{name}.npz") as f:
        return {k: f[k] for k in f.files}


def case_ids(prefix: str, n: int) -> np.ndarray:
    """``n`` case ids ``<prefix>0``, ``<prefix>1``, ... zero-padded to one width."""
    width = len(str(max(n - 1, 0)))
    return np.array([f"{prefix}{i:0{width}d}" for i in range(n)])


def to_long(X: np.ndarray, lengths, y=None, ids=None) -> pd.DataFrame:
    """Cases ``(n, channels, longest)`` (NaN after each case's end) as a long DataFrame.

    One row per real time sample, in order: ``subject`` and ``recording`` (both the case
    id), ``label`` (when ``y`` is given) and one column per channel, ``dim_0``, ``dim_1``,
    ...; padding is dropped, so each case keeps its own length.
    """
    X = np.asarray(X)
    lengths = np.asarray(lengths, dtype=np.int64)
    n, n_ch, _ = X.shape
    ids = case_ids("case", n) if ids is None else np.asarray(ids)
    values = np.concatenate([X[i, :, : lengths[i]].T for i in range(n)]).astype(np.float64)
    rows = np.repeat(np.arange(n), lengths)
    df = pd.DataFrame({"subject": ids[rows], "recording": ids[rows]})
    if y is not None:
        df["label"] = np.asarray(y)[rows]
    for c in range(n_ch):
        df[f"dim_{c}"] = values[:, c]
    return df


def params_key(params: dict) -> str:
    """Canonical JSON of the settings (the ``params`` column and part of the run key)."""
    return json.dumps(params, sort_keys=True)


def defaults_key(params: dict) -> str:
    """A short hash of every estimator parameter ``params`` resolve to (the ``defaults``
    column, part of the run key): ``"{}"`` means other settings under other defaults, so a
    row from older defaults never counts as done."""
    return params_hash(params)


def is_done(done: pd.DataFrame, set_name: str, mode: str, seed: int, params: str,
            revision: str, force: bool = False, defaults: str | None = None) -> bool:  # fmt: skip
    """Whether a run is already in the results and can be skipped.

    A run with an accuracy is done when its settings resolved to the same ``defaults``
    (rows written before that column existed never are, unless ``defaults`` is None). A run
    medspt refused is done only at the git revision that refused it (a later revision may
    accept the set). ``force`` reruns everything.
    """
    if force or done is None or done.empty:
        return False
    same = done[
        (done["set"] == set_name)
        & (done["mode"] == mode)
        & (done["seed"].astype(int) == int(seed))
        & (done["params"] == params)
    ]
    if defaults is not None:
        if "defaults" not in same:  # a file from before the column: older defaults
            return False
        same = same[same["defaults"].astype(str) == defaults]
    if same.empty:
        return False
    row = same.iloc[-1]
    if pd.notna(row["medspt_accuracy"]):
        return True
    return str(row["git_revision"]) == revision


def append_row(done: pd.DataFrame | None, row: dict) -> pd.DataFrame:
    """The results with ``row`` appended: rows are never overwritten, so a rerun's
    history stays (the report reads the last row of each run)."""
    new = pd.DataFrame([row]).reindex(columns=COLUMNS)
    if done is None or done.empty:
        return new
    return pd.concat([done.reindex(columns=COLUMNS), new], ignore_index=True)


def read_results(path: Path) -> pd.DataFrame | None:
    """Every row of the results CSV (None before the first run), numbers read exactly."""
    if not path.exists():
        return None
    return pd.read_csv(
        path,
        dtype={"params": str, "defaults": str, "git_revision": str, "note": str},
        float_precision="round_trip",  # a rewrite in a new layout keeps every digit
    )


def save_row(path: Path, row: dict) -> None:
    """Add ``row`` to the results CSV at ``path``: appended under the header, so no
    earlier row is ever rewritten. A file in an older column layout (before the
    ``defaults`` column) is rewritten once in today's columns, every row kept."""
    if path.is_file() and pd.read_csv(path, nrows=0).columns.tolist() != COLUMNS:
        append_row(read_results(path), row).to_csv(path, index=False)
    else:
        append_csv(path, pd.DataFrame([row]).reindex(columns=COLUMNS))


# ---------------------------------------------------------------- one run


def fitted_settings(clf) -> dict:
    """What the fitted model resolved: ``auto_params_`` when the estimator records it, else
    the patch length and batch size it was given; plus the case length it pads to and the
    epochs it trained."""
    out = dict(getattr(clf, "auto_params_", None) or {})
    params = clf.get_params()
    for name in ("patch_len", "batch_size"):
        out.setdefault(name, getattr(clf, name + "_", params.get(name)))
    if hasattr(clf, "n_steps_"):
        out["n_steps"] = int(clf.n_steps_)
    history = getattr(clf, "history_", None) or {}
    for stage in ("pretrain", "finetune"):
        if history.get(stage):
            out[f"{stage}_epochs"] = len(history[stage])
    return {k: (v.item() if hasattr(v, "item") else v) for k, v in out.items()}


def minirocket_accuracy(scores: dict, name: str, mode: str, val_idx=None) -> float:
    """MiniRocket's stored accuracy of ``name`` in ``mode`` (NaN when it has none); the
    inner score only when it was computed on the same held-out cases ``val_idx``."""
    entry = scores.get("sets", {}).get(name)
    if entry is None:
        return math.nan
    if mode == "inner":
        stored = entry["inner"]
        if stored.get("split_seed") != SPLIT_SEED or list(stored["val_index"]) != list(val_idx):
            raise SystemExit(
                f"{name}: MiniRocket's inner score was computed on another split; rerun "
                "export_public_sets.py --force"
            )
        return float(stored["accuracy"])
    return float(entry["test"]["accuracy"])


def run_set(name: str, data: dict, mode: str, seed: int, params: dict, scores: dict) -> dict:
    """Fit medspt on one set and score it; returns the result row."""
    import medspt
    from medspt.core.errors import InputError

    X, lens, y = data["X_train"], data["len_train"], data["y_train"].astype(str)
    ids = case_ids("train", len(y))
    if mode == "inner":
        fit, ev = inner_split(y)
        tr = (X[fit], lens[fit], y[fit], ids[fit])
        te = (X[ev], lens[ev], y[ev], ids[ev])
        mr = minirocket_accuracy(scores, name, mode, ev)
    else:
        tr = (X, lens, y, ids)
        y_test = data["y_test"].astype(str)
        te = (data["X_test"], data["len_test"], y_test, case_ids("test", len(y_test)))
        mr = minirocket_accuracy(scores, name, mode)
    row = {
        "set": name,
        "kind": "multivariate" if name in MULTIVARIATE else "univariate",
        "mode": mode,
        "seed": seed,
        "params": params_key(params),
        "n_train": len(tr[2]),
        "n_test": len(te[2]),
        "channels": X.shape[1],
        "classes": len(np.unique(y)),
        "min_len": int(tr[1].min()),
        "max_len": int(tr[1].max()),
        "test_min_len": int(te[1].min()),
        "test_max_len": int(te[1].max()),
        "minirocket_accuracy": mr,
        "medspt_accuracy": math.nan,
        "difference": math.nan,
        "note": "",
    }
    train_df = to_long(tr[0], tr[1], tr[2], tr[3])
    test_df = to_long(te[0], te[1], None, te[3])  # no labels: predictions only
    notes: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        try:
            clf = medspt.fit_spt(train_df, window=None, **{"random_state": seed, **params})
        except InputError as e:
            row |= {"fit_s": time.perf_counter() - t0, "note": f"refused: {e}"}
            return row
        row["fit_s"] = time.perf_counter() - t0
        row["settings"] = json.dumps(fitted_settings(clf), sort_keys=True)
        t0 = time.perf_counter()
        try:
            rec = clf.predict(test_df).recordings
        except InputError as e:
            row |= {"predict_s": time.perf_counter() - t0, "note": f"refused: {e}"}
            return row
        row["predict_s"] = time.perf_counter() - t0
    for w in caught:  # medspt's warnings say what it did to the data: keep them
        msg = f"{w.category.__name__}: {w.message}"
        if issubclass(w.category, UserWarning) and msg not in notes:
            notes.append(msg)
    pred = dict(zip(rec["recording"].astype(str), rec["predicted"].astype(str)))
    missing = [i for i in te[3] if i not in pred]
    if missing:
        notes.append(f"{len(missing)} case(s) without a prediction (counted wrong)")
    row["note"] = "; ".join(notes)
    acc = float(np.mean([pred.get(i) == lab for i, lab in zip(te[3], te[2])]))
    row["medspt_accuracy"] = acc
    row["difference"] = acc - mr
    return row


# ---------------------------------------------------------------- main


def ensure_cache(cache: Path, sets: list[str]) -> dict:
    """MiniRocket scores; runs the exporter (this interpreter: aeon is a dependency of
    medspt) first when sets or their medspt.baselines scores are missing."""
    score_file = cache / MINIROCKET_FILE
    scores = json.loads(score_file.read_text()) if score_file.exists() else {"sets": {}}
    missing = [
        s
        for s in sets
        if not (cache / f"{s}.npz").exists() or scores["sets"].get(s, {}).get("via") != VIA
    ]
    if missing:
        cmd = [sys.executable, str(HERE / "export_public_sets.py"), "--cache", str(cache),
               "--sets", *missing]  # fmt: skip
        subprocess.run(cmd, check=True)
        scores = json.loads(score_file.read_text())
    return scores


def main(argv: list[str] | None = None) -> None:
    """Fit and score each set not yet done; after each, save its row and the report."""
    ap = parser(__doc__, "threads")
    ap.add_argument("--sets", nargs="+", default=["all"],
                    help="set names or univariate / multivariate / all")  # fmt: skip
    ap.add_argument("--seed", type=int, default=0, help="medspt's random_state")
    ap.add_argument("--params", default="{}", help="JSON of SPTClassifier settings")
    ap.add_argument("--inner", action="store_true", help="score on 25%% of the train cases")
    ap.add_argument("--out", type=Path, default=MD, help="Markdown report; the CSV goes beside it")
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    ap.add_argument("--force", action="store_true", help="rerun runs already in the CSV")
    args = ap.parse_args(argv)

    params = json.loads(args.params)
    if not isinstance(params, dict):
        raise SystemExit("--params must be a JSON object")
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    sets = resolve_sets(args.sets)
    cache = args.cache.expanduser()
    scores = ensure_cache(cache, sets)
    mode = "inner" if args.inner else "test"
    csv = args.out.with_suffix(".csv")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    done = read_results(csv)
    revision = git_revision()
    info = machine()
    pkey = params_key(params)
    dkey = defaults_key(params)
    print(f"{mode} mode, params {pkey}, seed {args.seed}; revision {revision}", flush=True)
    print(f"{'set':24s} {'medspt':>7s} {'MiniR':>7s} {'diff':>7s} {'fit s':>7s}  settings / note")
    for name in sets:
        if is_done(done, name, mode, args.seed, pkey, revision, args.force, defaults=dkey):
            print(f"{name:24s} already in {csv.name}, skipped", flush=True)
            continue
        row = run_set(name, load_set(cache, name), mode, args.seed, params, scores)
        row |= {
            "defaults": dkey,
            "threads": torch.get_num_threads(),
            "git_revision": revision,
            "date": dt.date.today().isoformat(),
        }
        save_row(csv, row)
        done = append_row(done, row)
        # the report from the file, not this process's rows: another process may have appended
        args.out.write_text(report(read_results(csv), info, dkey))
        print(
            f"{name:24s} {fmt_cell(row['medspt_accuracy']):>7s} "
            f"{fmt_cell(row['minirocket_accuracy']):>7s} "
            f"{fmt_cell(row['difference'], '+.3f'):>7s} "
            f"{fmt_cell(row['fit_s'], '.0f'):>7s}  {row.get('settings', '')} {row['note']}",
            flush=True,
        )
    if csv.exists():  # also when every set was skipped: the report follows the file
        args.out.write_text(report(read_results(csv), info, dkey))


if __name__ == "__main__":
    sys.exit(main())
