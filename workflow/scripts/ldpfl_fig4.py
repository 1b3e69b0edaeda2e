"""Zhao et al. Fig. 4: PM-OPT's output density (exact pdf and a histogram of its outputs)."""

from ldprepro.pipeline.jobsetup import done, ready, start

start(snakemake)  # noqa: F821

from ldprepro.claims.tables import write_claims  # noqa: E402
from ldprepro.papers.ldpfl.mechanism_claims import figure_claims  # noqa: E402
from ldprepro.papers.ldpfl.mechanism_figures import fig4_rows, plot_fig4  # noqa: E402
from ldprepro.pipeline.results import tidy_frame, write_results  # noqa: E402
from ldprepro.report.figure_report import write_figure_report  # noqa: E402

ready()

fig = snakemake.params.fig  # noqa: F821
df = tidy_frame(
    fig4_rows(
        fig["eps"],
        fig["inputs"],
        fig["users"],
        fig["bins"],
        snakemake.params.seed,  # noqa: F821
        mechanism=fig["mechanism"],
    )
)
write_results(df, snakemake.output.results)  # noqa: F821
claims = figure_claims(df, "fig4", fig)
write_claims(claims, snakemake.output.claims, snakemake.output.claim_points)  # noqa: F821
plot_fig4(df, fig["eps"], snakemake.output.png, snakemake.output.svg, claims=claims)  # noqa: F821
write_figure_report(snakemake.output, snakemake.params, snakemake.input.report_prose)  # noqa: F821  # its caption and forest plot
done()
