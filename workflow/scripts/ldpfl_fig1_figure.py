"""Aggregate Zhao et al. Fig. 1, judge the paper's claims and draw the figure."""
from ldprepro.experiments.worst_case import fig1_claims, plot_fig1
from ldprepro.io import write_parquet
from ldprepro.results import aggregate, claims_frame, read_results

summary = aggregate(read_results(snakemake.input))
write_parquet(summary, snakemake.output.summary)
claims = fig1_claims(summary)
write_parquet(claims_frame(claims), snakemake.output.claims)
plot_fig1(summary, snakemake.output.png, snakemake.output.svg, claims=claims)
