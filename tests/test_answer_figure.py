"""The study's one-page answer: its sentences, its figure and the committed page agree
with the stored comparison tables they come from."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import answer_figure as af  # noqa: E402


def _rows(control_depth, rocket_depth, control_share=(), rocket_share=()):
    """Answer rows from (x, diff, low, high) tuples per series, on GPD-1."""
    out = []
    for axis, role, pts in (("depth", "control", control_depth),
                            ("depth", "minirocket", rocket_depth),
                            ("share", "control", control_share),
                            ("share", "minirocket", rocket_share)):  # fmt: skip
        for x, d, lo, hi in pts:
            out.append(dict(protocol="GPD-1", axis=axis, x=x, role=role,
                            versus="scratch" if role == "control" else "minirocket",
                            diff=d, low=lo, high=hi, n_subjects=165, cells=15,
                            pending=False, p_holm=0.01 if lo > 0 else 0.5))  # fmt: skip
    return pd.DataFrame(out, columns=af._COLUMNS)


def test_the_sentences_follow_the_intervals():
    rows = _rows(
        [(1, 0.03, 0.003, 0.058), (2, -0.004, -0.03, 0.02), (8, 0.02, -0.01, 0.05)],
        [(2, 0.006, -0.04, 0.05)],
        [(0.1, 0.04, 0.01, 0.07), (0.25, 0.02, -0.01, 0.05)],
        [(0.1, -0.02, -0.06, 0.01), (0.25, -0.05, -0.09, -0.01)],
    )
    first, second, third = af.sentences(rows)
    assert "largest difference was +0.030 (95 % CI +0.003 to +0.058) at depth 1 on GPD-1." in first
    assert first.startswith("With every training subject labelled, self-pretraining (SPT, "
                            "span masking) beat the better of the two label-only Transformers "
                            "(trained from scratch, or for SPT's whole budget) at GPD-1 at "
                            "depth 1 on")  # fmt: skip
    uncorrected = _rows([(1, 0.03, 0.003, 0.058), (2, 0.0, -0.01, 0.01)], []).assign(p_holm=0.2)
    assert "was not shown to beat" in af.sentences(uncorrected)[0]
    assert (
        "GPD-1 at depth 1 has an interval above zero, but not after Holm's"
        in (af.sentences(uncorrected)[0])
    )
    assert second.startswith("With labels from only 10%, 25% of the training subjects")
    assert (
        "control ranged from +0.020 to +0.040 (above zero after Holm's correction over both "
        "protocols' comparisons: GPD-1 at 10% labelled)" in second
    )
    assert "from -0.050 to -0.020 (never ahead with an interval above zero)" in second
    assert third.startswith("At the default depth 2 with all labels, the default Transformer "
                            "was level with MiniRocket")  # fmt: skip
    ahead = _rows([(2, 0.0, -0.01, 0.01)], [(2, 0.05, 0.01, 0.09)])
    assert "SPT was ahead of MiniRocket on GPD-1" in af.sentences(ahead)[-1]
    behind = _rows([(2, 0.0, -0.01, 0.01)], [(2, -0.05, -0.09, -0.01)])
    assert "MiniRocket was ahead on GPD-1" in af.sentences(behind)[-1]
    none = _rows([(1, -0.01, -0.03, 0.01)], [])
    assert af.sentences(none)[0].endswith("and no interval lies above zero.")
    # an interval whose lower end prints as +0.000 does not lie above zero
    edge = _rows([(1, 0.02, 0.0004, 0.04)], [])
    assert af.sentences(edge)[0].endswith("and no interval lies above zero.")
    # while the compute-matched control is rerun, the sentence says the control is scratch
    pending = _rows([(2, 0.0, -0.01, 0.01)], [], [(0.1, 0.04, 0.01, 0.07)]).assign(pending=True)
    assert "(so far scratch alone" in af.sentences(pending)[1]


def test_the_figure_draws_the_rows_the_sentences_read(tmp_path):
    rows = _rows([(1, 0.03, 0.003, 0.058), (8, 0.02, -0.01, 0.05)], [(2, 0.006, -0.04, 0.05)],
                 [(0.1, 0.04, 0.01, 0.07)], [(0.1, -0.02, -0.06, 0.01)])  # fmt: skip
    drawn = af.figure(rows, tmp_path / "a.png")
    assert (tmp_path / "a.png").stat().st_size > 0
    np.testing.assert_allclose(drawn[("GPD-1", "depth", "control")],
                               [[1, 0.03, 0.003, 0.058], [8, 0.02, -0.01, 0.05]])  # fmt: skip
    np.testing.assert_allclose(drawn[("GPD-1", "share", "minirocket")], [[0.1, -0.02, -0.06, 0.01]])
    # the largest plotted difference is the one the first sentence names
    best = drawn[("GPD-1", "depth", "control")][:, 1].max()
    assert f"largest difference was {best:+.3f}" in af.sentences(rows)[0]


def test_the_committed_page_is_built_from_the_committed_tables():
    rows = af.answer_rows()
    if rows.empty:
        pytest.skip("no stored comparisons in benchmarks/results")
    page = af.DOC.read_text()
    assert af.block(rows) in page, (
        "docs/studies.md's answer differs from the stored tables: run "
        "python benchmarks/answer_figure.py"
    )
    assert page.index(af.START) < page.index("## What the study asks")  # the page opens with it
    assert len(af.sentences(rows)) == 3
