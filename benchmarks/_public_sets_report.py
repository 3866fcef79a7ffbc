"""The Markdown report of ``public_sets.py``, rewritten from its CSV after every set: one
table per (mode, params, seed) and, where several seeds ran, their mean per set."""

from __future__ import annotations

import datetime as dt

import pandas as pd
from _common import fmt_num


def fmt_cell(x, spec: str = ".3f") -> str:
    """A number for the tables; an empty cell where there is none."""
    return fmt_num(x, spec, missing="")


def report(done: pd.DataFrame, machine_info: dict, defaults: str | None = None) -> str:
    """The Markdown report of the runs under ``defaults``, the last row of each run.

    Parameters
    ----------
    done : pandas.DataFrame
        Every row of the CSV; rows of other defaults are counted in the text, not shown
        (the CSV keeps them all).
    machine_info : dict
        :func:`_common.machine` of the machine writing the report.
    defaults : str, optional
        A ``public_sets.defaults_key``; None shows every row.
    """
    older = 0
    if defaults is not None:
        older = int((done["defaults"].astype(str) != defaults).sum())
        done = done[done["defaults"].astype(str) == defaults]
    done = done.drop_duplicates(["set", "mode", "seed", "params"], keep="last")
    lines = [
        "# medspt's defaults against MiniRocket on public UCR/UEA sets",
        "",
        "Written by `benchmarks/public_sets.py` from `public_sets.csv` (all runs; the table "
        "below is rewritten after every set). The sets are the ones bundled with aeon 1.6, "
        "and they were used to choose medspt's defaults, so they are development data: "
        "selection rounds scored the univariate sets' `inner` rows, and the `test` rows of "
        'all eight sets were scored under several defaults (`docs/concepts.md`, "How the '
        'defaults were chosen"). Each case is one recording of its own length, fitted '
        "with `medspt.fit_spt(df, window=None, **params)`; accuracy is per case. MiniRocket "
        "is `medspt.baselines.MiniRocket(random_state=0)` (aeon's `MiniRocketClassifier` with "
        "medspt's input rules; unequal-length cases held at their last value; rows written "
        "before it used aeon's classifier on the archive's equal-length version). `inner` "
        "rows: fitted on 75 % of the train split, "
        "scored on the other 25 % (stratified, seed 0), the numbers selection rounds choose "
        "on. `test` rows: the archive's train/test split; no round scores them, but they "
        "were read after each choice. Multivariate sets are in no round's score; their "
        "`test` rows prompted rounds 3 and 6.",
        "",
        f"Last written {dt.datetime.now().isoformat(timespec='seconds')}; "
        f"{machine_info['cpu']}, {machine_info['cores']} logical cores. "
        "Fit seconds include cutting the frame into cases."
        + (
            f" Runs under the defaults `{defaults}` only; {older} row(s) of other defaults "
            "stay in the CSV."
            if defaults is not None
            else ""
        ),
    ]
    lines += _seed_means(done)
    for (mode, params, seed), part in done.groupby(["mode", "params", "seed"], sort=True):
        lines += [
            "",
            f"## {mode}, params `{params}`, seed {seed}",
            "",
            "| set | kind | train | scored | ch | lengths | medspt | MiniRocket | diff | fit s "
            "| settings | note |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in part.itertuples():
            lines.append(
                f"| {r.set} | {r.kind} | {r.n_train} | {r.n_test} | {r.channels} | "
                f"{r.min_len}-{r.max_len} / {r.test_min_len}-{r.test_max_len} | "
                f"{fmt_cell(r.medspt_accuracy)} | {fmt_cell(r.minirocket_accuracy)} | "
                f"{fmt_cell(r.difference, '+.3f')} | {fmt_cell(r.fit_s, '.0f')} | "
                f"{'' if pd.isna(r.settings) else r.settings} | "
                f"{'' if pd.isna(r.note) else ' '.join(str(r.note).split()).replace('|', '/')} |"
            )
        uni = part[(part["kind"] == "univariate") & part["difference"].notna()]
        if len(uni):
            wins = int((uni["difference"] > 0).sum())
            ties = int((uni["difference"] == 0).sum())
            lines += [
                "",
                f"Univariate sets scored: {len(uni)}; mean difference "
                f"{uni['difference'].mean():+.3f}; medspt ahead on {wins}, tied on {ties}, "
                f"behind on {len(uni) - wins - ties}. Git revision(s): "
                f"{', '.join(sorted(part['git_revision'].astype(str).unique()))}; torch "
                f"threads: {', '.join(sorted(part['threads'].astype(str).unique()))}.",
            ]
    return "\n".join(lines) + "\n"


def _seed_means(done: pd.DataFrame) -> list[str]:
    """Per set, the mean accuracy over the seeds of each (mode, params), where there are
    several: the numbers issue 28's check reads."""
    lines = []
    for (mode, params), part in done.groupby(["mode", "params"], sort=True):
        seeds = sorted(part["seed"].unique().tolist())
        if len(seeds) < 2:
            continue
        per = part.groupby("set", sort=False).agg(
            kind=("kind", "first"), seeds=("seed", "nunique"),
            medspt=("medspt_accuracy", "mean"), minirocket=("minirocket_accuracy", "first"),
        )  # fmt: skip
        per["diff"] = per["medspt"] - per["minirocket"]
        lines += ["", f"## {mode}, params `{params}`: mean over seeds {seeds}", "",
                  "| set | kind | seeds | medspt | MiniRocket | diff |",
                  "|---|---|---:|---:|---:|---:|"]  # fmt: skip
        for name, r in per.iterrows():
            lines.append(f"| {name} | {r.kind} | {r.seeds} | {fmt_cell(r.medspt)} | "
                         f"{fmt_cell(r.minirocket)} | {fmt_cell(r['diff'], '+.3f')} |")  # fmt: skip
        uni = per[per["kind"] == "univariate"]["diff"].dropna()
        if len(uni):
            lines += ["", f"Univariate mean difference over seeds: {uni.mean():+.3f} "
                      f"({len(uni)} sets; worst {uni.min():+.3f})."]  # fmt: skip
    return lines
