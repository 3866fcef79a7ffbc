"""The study's answer on one page: three sentences and one figure, from the stored tables.

Reads the per-depth headline rows of the capacity report (``results/paper_table_headline.csv``,
written by ``paper_table.py --report-only``) and the declared comparisons of the label-
efficiency report (``results/label_efficiency_comparisons.csv``, written by
``label_efficiency.py --report-only``), and writes

- ``results/spt_answer.png``: SPT's balanced accuracy minus the better label-only control
  and minus MiniRocket, with 95 % subject-bootstrap intervals, by depth (full labels) and by
  share of labelled training subjects, one row per protocol;
- ``results/spt_answer.md``: the three sentences, built from the same rows;
- the block between ``<!-- answer:start -->`` and ``<!-- answer:end -->`` in
  ``docs/studies.md``: those sentences and the figure.

The figure and the sentences come from one table (:func:`answer_rows`), so they cannot
disagree; ``tests/test_answer_figure.py`` checks the committed page against the CSVs.

    python benchmarks/answer_figure.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from _common import RESULTS, parser

from medspt.evaluation.markdown_tables import format_signed
from medspt.evaluation.statistics import holm

DOC = Path(__file__).resolve().parents[1] / "docs" / "studies.md"
START, END = "<!-- answer:start -->", "<!-- answer:end -->"
PROTOCOLS = {"GPD-1": "Parkinson's gait (GPD-1)", "NE-1": "stress (NE-1)"}


def answer_rows(results: Path = RESULTS) -> pd.DataFrame:
    """One row per point of the figure: ``protocol``, ``axis`` ("depth" or "share"), ``x``
    (depth, or share of labelled subjects), ``role`` ("control": the better label-only
    control; "minirocket"), ``versus`` (the control's name), ``diff``, ``low``, ``high``,
    ``n_subjects`` and ``cells`` (seed × fold cells behind a share's point; NaN by depth)."""
    frames = []
    depth = results / "paper_table_headline.csv"
    if depth.exists():
        d = pd.read_csv(depth)
        # Holm over each series of the depth axis (the 8 SPT-vs-control comparisons, the 8
        # SPT-vs-MiniRocket ones): the family these sentences draw on
        d["p_holm"] = d.groupby("role")["p"].transform(lambda p: holm(p.to_numpy(dtype=float)))
        frames.append(d.assign(cells=np.nan, pending=False)[_COLUMNS])
    share = results / "label_efficiency_comparisons.csv"
    if share.exists():
        s = pd.read_csv(share)
        arm = s["versus"].str.rsplit(" @ ", n=1).str[0]
        has_long = {(p, f) for p, f, a in zip(s["protocol"], s["fraction"], arm)
                    if a == "scratch-long"}  # fmt: skip
        s = s[s["better_control"].astype(bool) | (arm == "minirocket")].copy()
        s["pending"] = [(p, f) not in has_long for p, f in zip(s["protocol"], s["fraction"])]
        s["role"] = np.where(arm[s.index] == "minirocket", "minirocket", "control")
        s["versus"] = arm[s.index]
        by_subjects = s["n_subjects"] > 0
        s["diff"] = s["subject_diff"].where(by_subjects, s["fold_diff"])
        s["low"] = s["subject_ci_low"].where(by_subjects, s["fold_ci_low"])
        s["high"] = s["subject_ci_high"].where(by_subjects, s["fold_ci_high"])
        frames.append(s.assign(axis="share", x=s["fraction"])[_COLUMNS])
    # "pending": scratch-long not yet run at that share, so the control is scratch alone
    if not frames:
        return pd.DataFrame(columns=_COLUMNS)
    return pd.concat(frames, ignore_index=True)


_COLUMNS = ["protocol", "axis", "x", "role", "versus", "diff", "low", "high", "n_subjects",
            "cells", "pending", "p_holm"]  # fmt: skip


def _ci(r) -> str:
    d, lo, hi = (format_signed(r[k]) for k in ("diff", "low", "high"))
    return f"{d} (95 % CI {lo} to {hi})"


def _where(rows: pd.DataFrame, corrected: bool = False) -> str:
    """The points whose interval lies above zero as printed (with ``corrected``: and whose
    Holm p is below 0.05), named (e.g. "GPD-1 at 25% labelled")."""
    up = rows[rows["low"].round(3) > 0]
    if corrected:
        up = up[up["p_holm"] < 0.05]
    return ", ".join(f"{r.protocol} at {_x(r.axis, r.x)}" for r in up.itertuples())


def _x(axis: str, x: float) -> str:
    return f"depth {x:g}" if axis == "depth" else f"{x:.0%} labelled"


def sentences(rows: pd.DataFrame) -> list[str]:
    """The three sentences of the page, from :func:`answer_rows` only."""
    out = []
    ctrl = rows[(rows["axis"] == "depth") & (rows["role"] == "control")]
    if len(ctrl):
        best = ctrl.loc[ctrl["diff"].idxmax()]
        up, won = _where(ctrl), _where(ctrl, corrected=True)
        out.append(
            "With every training subject labelled, self-pretraining (SPT, span masking) "
            + (f"beat the better of the two label-only Transformers (trained from scratch, "
               f"or for SPT's whole budget) at {won}" if won else
               "was not shown to beat the better of the two label-only Transformers "
               "(trained from scratch, or for SPT's whole budget)")
            + " on " + " or ".join(PROTOCOLS[p] for p in ctrl["protocol"].unique())
            + " at depths " + ", ".join(f"{d:g}" for d in sorted(ctrl["x"].unique()))
            + f": its largest difference was {_ci(best)} at depth {best['x']:g} on "
            f"{best['protocol']}"
            + (f"; {up} has an interval above zero, but not after Holm's correction over "
               "both protocols' depths" if up and not won else "" if up else
               ", and no interval lies above zero")
            + "."
        )  # fmt: skip
    share = rows[(rows["axis"] == "share") & (rows["x"] < 1)]  # labels scarce
    ctrl = share[share["role"] == "control"]
    rocket = share[share["role"] == "minirocket"]
    if len(ctrl):
        up = _where(ctrl)
        shares = ", ".join(f"{x:.0%}" for x in sorted(ctrl["x"].unique()))
        pending = bool(ctrl["pending"].astype(bool).any())
        out.append(
            f"With labels from only {shares} of the training subjects and the others' "
            "recordings used for pretraining, SPT's difference from the better label-only "
            + ("control" if not pending else
               "control (so far scratch alone: the compute-matched control is being rerun "
               "under its new rule)")
            + f" ranged from {format_signed(ctrl['diff'].min())} to "
            f"{format_signed(ctrl['diff'].max())}"
            + (f" (above zero after Holm's correction over both protocols' comparisons: "
               f"{_where(ctrl, True)})" if _where(ctrl, True) else
               f" (intervals above zero at {up}, none after Holm's correction over both "
               "protocols' comparisons)" if up else " (no interval above zero)")
            + (
                f", and from MiniRocket fitted on the labelled subjects alone from "
                f"{format_signed(rocket['diff'].min())} to {format_signed(rocket['diff'].max())}"
                + (f" (SPT ahead with an interval above zero: {_where(rocket)})"
                   if _where(rocket) else " (never ahead with an interval above zero)")
                if len(rocket)
                else ", MiniRocket not yet run at these shares"
            )
            + "."
        )  # fmt: skip
    full = rows[(rows["role"] == "minirocket") & (rows["axis"] == "depth")]
    if len(full):
        d2 = full.loc[(full["x"] - 2).abs().idxmin(), "x"]  # the default depth
        at = full[full["x"] == d2]
        ahead, behind = at[at["low"] > 0], at[at["high"] < 0]
        verdict = (
            "SPT was ahead of MiniRocket on " + ", ".join(ahead["protocol"])
            if len(ahead)
            else "MiniRocket was ahead on " + ", ".join(behind["protocol"])
            if len(behind)
            else "the default Transformer was level with MiniRocket"
        )
        out.append(
            f"At the default depth {d2:g} with all labels, {verdict}: SPT minus MiniRocket "
            "on the same folds was "
            + "; ".join(f"{_ci(r)} on {r['protocol']}" for _, r in at.iterrows())
            + "."
        )
    return out


def figure(rows: pd.DataFrame, path: Path) -> dict:
    """Draw :func:`answer_rows`; returns what was drawn, per panel and series, for tests."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    protocols = [p for p in PROTOCOLS if p in set(rows["protocol"])]
    fig, axes = plt.subplots(len(protocols), 2, figsize=(10, 3.2 * len(protocols)),
                             squeeze=False, sharey=True)  # fmt: skip
    drawn = {}
    style = {"control": ("C0", "o", "SPT − better label-only control"),
             "minirocket": ("C3", "s", "SPT − MiniRocket")}  # fmt: skip
    for i, protocol in enumerate(protocols):
        for j, axis in enumerate(("depth", "share")):
            ax = axes[i][j]
            part = rows[(rows["protocol"] == protocol) & (rows["axis"] == axis)]
            xs = sorted(part["x"].unique())
            pos = {x: k for k, x in enumerate(xs)}
            for k, (role, (color, marker, label)) in enumerate(style.items()):
                r = part[part["role"] == role].sort_values("x")
                if r.empty:
                    continue
                at = np.array([pos[x] for x in r["x"]]) + (k - 0.5) * 0.15
                ax.errorbar(at, r["diff"], yerr=[r["diff"] - r["low"], r["high"] - r["diff"]],
                            fmt=marker, color=color, capsize=3, label=label)  # fmt: skip
                drawn[(protocol, axis, role)] = r[["x", "diff", "low", "high"]].to_numpy()
            ax.axhline(0, color="grey", lw=1)
            if part["pending"].astype(bool).any():  # as the sentence says
                ax.set_title("control: scratch alone (scratch-long being rerun)", fontsize=8)
            ax.set_xticks(range(len(xs)), [f"{x:g}" if axis == "depth" else f"{x:.0%}"
                                           for x in xs])  # fmt: skip
            ax.set_xlabel("depth (all labels)" if axis == "depth"
                          else "share of training subjects labelled")  # fmt: skip
            if j == 0:
                ax.set_ylabel(f"{protocol}\nbalanced accuracy difference")
            ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8, loc="lower left")
    fig.suptitle("Self-pretraining against the better label-only control and MiniRocket "
                 "(95 % intervals over subjects)", fontsize=10)  # fmt: skip
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return drawn


def block(rows: pd.DataFrame) -> str:
    """The page's block: the sentences, the figure and where the numbers live."""
    return "\n".join(
        [
            START,
            " ".join(sentences(rows)),
            "",
            "![SPT against the better label-only control and MiniRocket, by depth and by "
            "labelled share](../benchmarks/results/spt_answer.png)",
            "",
            "The numbers, with every masking, depth, share and test: "
            "[capacity](../benchmarks/results/paper_table.md), "
            "[label efficiency](../benchmarks/results/label_efficiency.md), "
            "[the default against MiniRocket](../benchmarks/results/default_model.md), "
            "[confound probes](../benchmarks/results/probes.md). Built by "
            "`python benchmarks/answer_figure.py` from the reports' CSV files.",
            END,
        ]
    )


def write_doc(text: str, doc: Path = DOC) -> None:
    page = doc.read_text()
    if START not in page or END not in page:
        raise SystemExit(f"{doc}: add the markers {START} and {END} where the answer goes")
    head, rest = page.split(START, 1)
    doc.write_text(head + text + rest.split(END, 1)[1])


def main(argv: list[str] | None = None) -> int:
    ap = parser(__doc__)
    ap.parse_args(argv)
    rows = answer_rows()
    if rows.empty:
        print("no stored comparisons yet: run the capacity and label-efficiency reports")
        return 1
    figure(rows, RESULTS / "spt_answer.png")
    text = block(rows)
    (RESULTS / "spt_answer.md").write_text("\n".join(sentences(rows)) + "\n")
    write_doc(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
