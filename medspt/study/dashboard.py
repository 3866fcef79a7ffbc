"""optuna-dashboard: serve a study, and keep a note with the capacity table on it.

The note's text (:func:`capacity_note`) is built from a study's results alone, so it can be
read and tested where optuna-dashboard is not installed.
"""

from __future__ import annotations

import socket

import optuna
import pandas as pd
import plotly.graph_objects as go

from medspt.core.errors import InputError
from medspt.core.urls import redact
from medspt.evaluation.comparisons import spt_comparisons
from medspt.evaluation.markdown_tables import markdown_table
from medspt.evaluation.plots import gain_caption, gain_points
from medspt.study.grid import study_cells
from medspt.study.report import capacity_table, results_frame
from medspt.study.storage import make_storage

__all__ = [
    "accuracy_figure",
    "capacity_note",
    "gain_figure",
    "refresh_note",
    "serve",
    "free_port",
]


def refresh_note(study: optuna.Study) -> None:
    """Write the current capacity table as the study's note and its figures as plotly
    graphs, both shown by optuna-dashboard (called after every completed trial)."""
    import optuna_dashboard  # takes seconds to import: only when a note is written

    attrs = study.user_attrs.get("medspt", {})
    metric = attrs.get("metric", "balanced_accuracy")
    results = results_frame(study)
    if results.empty:
        return
    table = capacity_table(results, metric)
    optuna_dashboard.save_note(study, capacity_note(study.study_name, attrs, results, table))

    acc = accuracy_figure(table, metric)
    optuna_dashboard.save_plotly_graph_object(study, acc, graph_object_id="accuracy_vs_depth")
    gain = gain_figure(results, metric)
    optuna_dashboard.save_plotly_graph_object(study, gain, graph_object_id="gain_vs_depth")


def accuracy_figure(table: pd.DataFrame, metric: str = "balanced_accuracy") -> go.Figure:
    """The dashboard's ``accuracy_vs_depth``: mean ± std of ``metric`` per configuration
    against depth, from a :func:`medspt.study.capacity_table`."""
    acc = go.Figure()
    for config, g in table.groupby("config", sort=False):
        acc.add_trace(
            go.Scatter(
                x=g["depth"],
                y=g["mean"],
                error_y=dict(array=g["std"].fillna(0)),
                mode="lines+markers",
                name=config,
            )
        )
    acc.update_layout(title=f"{metric} vs depth", xaxis_title="depth", yaxis_title=metric)
    return acc


def gain_figure(
    results: pd.DataFrame,
    metric: str = "balanced_accuracy",
    comparisons: pd.DataFrame | None = None,
) -> go.Figure:
    """The dashboard's ``gain_vs_depth``: the comparisons the study report states and
    draws in ``gain_vs_depth.png``, each SPT configuration against the better label-only
    control at its depth (:func:`medspt.evaluation.comparisons.spt_comparisons`).

    Parameters
    ----------
    results : DataFrame
        The study's rows (:func:`medspt.study.results_frame`).
    metric : str
        The metric compared.
    comparisons : DataFrame, optional
        The declared comparisons of ``results``
        (:func:`medspt.evaluation.comparisons.comparison_table`), when already computed.

    Returns
    -------
    go.Figure
        One trace per SPT configuration: the tested difference (``y``) against depth with
        its 95 % interval as error bars, a star marker where ``gain_vs_depth.png`` stars
        the point, the control of each point in ``customdata`` and its hover text, and the
        title of ``gain_vs_depth.png``, which names the control.
    """
    rows = spt_comparisons(results, metric, comparisons)
    points = gain_points(rows)
    head, ylabel = gain_caption(rows, metric)
    fig = go.Figure()
    for config, g in points.groupby("config", sort=False):
        fig.add_trace(
            go.Scatter(
                x=g["depth"],
                y=g["diff"],
                error_y=dict(
                    type="data",
                    symmetric=False,
                    array=(g["high"] - g["diff"]).clip(lower=0).fillna(0),
                    arrayminus=(g["diff"] - g["low"]).clip(lower=0).fillna(0),
                ),
                customdata=g["versus"],
                hovertemplate="depth %{x}: %{y:+.3f} vs %{customdata}",
                # a star where the report's figure stars the point (a claimed direction)
                marker=dict(symbol=["star" if s else "circle" for s in g["star"]], size=9),
                mode="lines+markers",
                name=config,
            )
        )
    fig.add_hline(y=0, line_dash="dash", line_color="black")
    fig.update_layout(title=head.replace("\n", "<br>"), xaxis_title="depth", yaxis_title=ylabel)
    return fig


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def serve(storage: str, host: str = "127.0.0.1", port: int | None = 8080) -> None:
    """Start optuna-dashboard on ``host:port`` for a storage URL (blocks until stopped)."""
    import optuna_dashboard  # takes seconds to import: only when the dashboard is served

    if port is None or port == 0:
        port = free_port(host)
    st = make_storage(storage, heartbeat=None)
    try:
        with socket.socket() as s:
            s.bind((host, port))
    except OSError as e:
        raise InputError(f"cannot listen on {host}:{port} ({e}); pick another --port") from None
    where = redact(storage)
    print(f"optuna-dashboard for {where} at http://{host}:{port}/  (Ctrl-C stops it)", flush=True)
    optuna_dashboard.run_server(st, host=host, port=port)


def capacity_note(study_name: str, attrs: dict, results: pd.DataFrame, table: pd.DataFrame) -> str:
    """Markdown for the dashboard: how many cells are done, the capacity ``table``
    (:func:`medspt.study.capacity_table` of ``results``) and how to write the full
    report. ``attrs`` is the study's ``medspt`` user attribute."""
    metric = attrs.get("metric", "balanced_accuracy")
    n_cells = len(results.groupby(["depth", "config", "seed"]))
    total = len(study_cells(attrs)) if attrs.get("grid") else n_cells
    return (
        f"## Capacity vs pretraining — {n_cells} of {total} cells done\n\n"
        f"{metric} on held-out subjects (mean ± std over folds × seeds); gain = paired "
        "difference to scratch at the same depth; seeds averaged, then tested over "
        "subjects (sign-flip permutation, 95 % bootstrap CI) or over folds where no "
        "predictions were kept; Holm across the table.\n\n"
        + markdown_table(table, metric)
        + "\nFull report: `medspt study report --storage URL --study "
        + f"{study_name} --out DIR`\n"
    )
