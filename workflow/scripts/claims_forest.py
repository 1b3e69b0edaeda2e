"""One figure's report material, from its claims: the caption generated from its claims table
(ldprepro.report.captions) and the forest plot of its claims (ldprepro.report.forest)."""

from ldprepro.pipeline.jobsetup import done, ready, start

start(snakemake)  # noqa: F821

from ldprepro.pipeline.io import atomic_write_text  # noqa: E402
from ldprepro.pipeline.verify import read_table  # noqa: E402
from ldprepro.report.captions import figure_caption  # noqa: E402
from ldprepro.report.forest import draw_forest  # noqa: E402

ready()

sm = snakemake  # noqa: F821
fig = sm.params.figure
claims = read_table(sm.input.claims)
points = read_table(sm.input.points)
atomic_write_text(
    sm.output.caption,
    figure_caption(fig["title"], sm.params.prose, claims, sm.params.entry, fig["unavailable"]),
    digest=True,
)
draw_forest(claims, points, sm.output.png)
done(f"caption and forest plot: {len(points)} points of {len(claims)} claims")
