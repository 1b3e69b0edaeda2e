"""The report material every figure job writes beside its figure, from the claims it has just
written: the caption generated from its claims table (:mod:`ldprepro.report.captions`) and the forest
plot of its claims' points (:mod:`ldprepro.report.forest`). In the figure's own job: each is well
under a second of work, less than a separate process's start-up and imports."""

from __future__ import annotations

from pathlib import Path

from ldprepro.pipeline.io import atomic_write_text
from ldprepro.pipeline.verify import read_table
from ldprepro.report.captions import figure_caption
from ldprepro.report.forest import draw_forest


def write_figure_report(output, params, prose) -> None:
    """Read ``output.claims`` and ``output.claim_points`` back (verified like any job input) and write
    ``output.caption`` (title ``params.report_figure``, the prose in the file ``prose``, compute
    parameters ``params.report_entry``) and ``output.forest``. ``output`` and ``params``: the
    figure job's Snakemake outputs and params (anything with these attributes)."""
    claims = read_table(output.claims)
    points = read_table(output.claim_points)
    figure = params.report_figure
    text = Path(prose).read_text(encoding="utf-8")
    atomic_write_text(
        output.caption,
        figure_caption(figure["title"], text, claims, params.report_entry, figure["unavailable"]),
        digest=True,
    )
    draw_forest(claims, points, output.forest)
