"""The report caption of one figure, generated from its claims table (ldprepro.report.captions)."""

from ldprepro.pipeline.jobsetup import done, ready, start

start(snakemake)  # noqa: F821

from ldprepro.pipeline.io import atomic_write_text  # noqa: E402
from ldprepro.pipeline.verify import read_table  # noqa: E402
from ldprepro.report.captions import figure_caption  # noqa: E402

ready()

sm = snakemake  # noqa: F821
fig = sm.params.figure
claims = read_table(sm.input.claims)
atomic_write_text(
    sm.output[0],
    figure_caption(fig["title"], sm.params.prose, claims, sm.params.entry, fig["unavailable"]),
    digest=True,
)
done(f"{len(claims)} claims")
