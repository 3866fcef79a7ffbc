"""The archived default's comparisons on the seeds never scored before its choice.

The previous default (``default_model_P.md``: patch tokens, learned positions, no
augmentation) had its seed 0 scored on the GPD-1 and NE-1 test folds as an ablation row
before the selection round that chose it; seeds 1 and 2 were never scored before the
choice. This script recomputes the declared comparisons (SPT against scratch, the
compute-matched scratch-long and MiniRocket) from the stored run files of those seeds only
and writes ``results/default_model_P_fresh.md``. It fits nothing.

    python benchmarks/fresh_seeds.py
"""

from __future__ import annotations

import sys

import pandas as pd
from _common import RESULTS, parser, write_report

from medspt.api import Results, comparison_table, markdown_comparisons
from medspt.estimator.metrics import read_predictions

RUNS = RESULTS / "default_model_P"
MD = RESULTS / "default_model_P_fresh.md"
FRESH = (1, 2)  # seed 0 was scored on the test folds before the choice
SPT, DEPTH = "spt-span", 2.0
BASELINE = "tsai-minirocket"


def load(protocol: str, seeds: tuple[int, ...] = FRESH) -> Results:
    """The archived default's rows and predictions of ``seeds`` with MiniRocket's."""
    rows, preds = [], []
    for seed in seeds:
        csv = RUNS / protocol / f"default_seed{seed}.csv"
        rows.append(pd.read_csv(csv))
        preds.append(read_predictions(csv.with_name(csv.stem + "_predictions.csv.gz")))
    base = RESULTS / f"baselines_{protocol}_minirocket-oof.csv"
    rows.append(pd.read_csv(base))
    preds.append(read_predictions(base.with_name(base.stem + "_predictions.csv.gz")))
    out = Results(pd.concat(rows, ignore_index=True))
    out.predictions = pd.concat(preds, ignore_index=True)
    return out


def section(protocol: str, seeds: tuple[int, ...]) -> list[str]:
    """The declared comparisons of one protocol on ``seeds``, as Markdown lines."""
    res = load(protocol, seeds)
    nan = float("nan")
    pairs = [
        ((SPT, DEPTH), ("scratch", DEPTH)),
        ((SPT, DEPTH), ("scratch-long", DEPTH)),
        ((SPT, DEPTH), (BASELINE, nan)),
    ]
    mean = res.groupby("config")["balanced_accuracy"].mean()
    return [
        f"## {protocol}, seeds {list(seeds)}",
        "",
        f"Mean balanced accuracy: SPT {mean[SPT]:.3f}, scratch {mean['scratch']:.3f}, "
        f"scratch-long {mean['scratch-long']:.3f}, MiniRocket {mean[BASELINE]:.3f}.",
        "",
        markdown_comparisons(comparison_table(res, pairs)).rstrip(),
        "",
    ]


def report(seeds: tuple[int, ...]) -> str:
    lines = [
        "# The archived default on its fresh seeds",
        "",
        "The previous default's seed 0 was scored on these test folds before the selection "
        "round that chose it (an ablation row of `default_model_R.md`), so only seeds "
        f"{list(seeds)} answer its comparisons without a test look. Seeds averaged within "
        "folds and subjects; subject-level sign-flip test and bootstrap interval; Holm over "
        "each table. Run files: `default_model_P/`; written by `python "
        "benchmarks/fresh_seeds.py` (fits nothing).",
        "",
    ]
    for protocol in ("GPD-1", "NE-1"):
        lines += section(protocol, seeds)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = parser(__doc__)
    ap.add_argument(
        "--seeds", type=int, nargs="+", default=list(FRESH), help="seeds (default: 1 2)"
    )
    args = ap.parse_args(argv)
    write_report(MD, report(tuple(args.seeds)))
    print(MD.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
