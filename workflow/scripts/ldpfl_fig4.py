"""Zhao et al. Fig. 4: PM-OPT's output density (exact pdf and a histogram of its outputs)."""
from ldprepro.experiments.worst_case import fig4_claims, fig4_rows, plot_fig4
from ldprepro.io import write_parquet
from ldprepro.results import tidy_frame, write_results

fig = snakemake.params.fig
df = tidy_frame(fig4_rows(fig["eps"], fig["inputs"], fig["users"], fig["bins"], snakemake.params.seed,
                          mechanism=fig["mechanism"]))
write_results(df, snakemake.output.results)
claims = fig4_claims(df, fig["eps"], mechanism=fig["mechanism"])
write_parquet(claims, snakemake.output.claims)
plot_fig4(df, fig["eps"], snakemake.output.png, snakemake.output.svg, claims=claims)
