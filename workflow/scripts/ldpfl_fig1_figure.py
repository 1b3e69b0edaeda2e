"""Aggregate Zhao et al. Fig. 1, judge the paper's claims and draw the figure."""

from ldprepro.pipeline.jobsetup import done, ready, start

start(snakemake)  # the job's log, warnings and threads, before the heavy imports

from ldprepro.claims.tables import write_claims
from ldprepro.papers.ldpfl.mechanism_claims import figure_claims
from ldprepro.papers.ldpfl.mechanism_figures import plot_fig1
from ldprepro.pipeline.io import write_parquet
from ldprepro.pipeline.results import aggregate
from ldprepro.pipeline.verify import job_results, ldpfl_fig1_grid
from ldprepro.report.figure_report import write_figure_report

ready()

raw = job_results(snakemake.input.jobs, ldpfl_fig1_grid(snakemake.params.fig))  # the configured grid, or a named error
summary = aggregate(raw)
write_parquet(summary, snakemake.output.summary)
claims = figure_claims(raw, "fig1")
write_claims(claims, snakemake.output.claims, snakemake.output.claim_points)
plot_fig1(summary, snakemake.output.png, snakemake.output.svg, claims=claims)
write_figure_report(snakemake.output, snakemake.params, snakemake.input.report_prose)  # its caption and forest plot
done("ldpfl_fig1_figure: " + ", ".join(map(str, snakemake.output)))
