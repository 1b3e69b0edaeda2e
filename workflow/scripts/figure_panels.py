"""Aggregate one experiment figure, judge the paper's claims, draw it (partial panels allowed)."""
from ldprepro.experiments.claims import claims_for
from ldprepro.experiments.mean_figures import plot_mean_figure
from ldprepro.io import write_parquet
from ldprepro.results import KEY_COLUMNS, aggregate, claims_frame, read_results

p = snakemake.params
raw = read_results(snakemake.input)
summary = aggregate(raw) if len(raw) else raw.reindex(columns=KEY_COLUMNS)
write_parquet(summary, snakemake.output.summary)
claims = claims_for(p.paper, p.figure, summary, p.fig) if len(raw) else [
    {"paper": p.paper, "figure": p.figure, "claim": "(every claim of this figure)", "verdict": "not testable",
     "evidence": "no panel's data can be obtained here: " + "; ".join(f"{k}: {v}" for k, v in dict(p.unavailable).items())}]
write_parquet(claims_frame(claims), snakemake.output.claims)
plot_mean_figure(summary, p.fig, dict(p.unavailable), p.fig.get("title", f"{p.paper} {p.figure}"),
                 snakemake.output.png, snakemake.output.svg, claims=claims)
