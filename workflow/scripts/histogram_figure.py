"""Aggregate one BSHP figure, judge the paper's claims on it, draw it (unavailable cities allowed)."""
import json
from pathlib import Path

from ldprepro.experiments.histograms import claims_for, plot_mse_figure, plot_values_figure
from ldprepro.io import write_parquet
from ldprepro.results import KEY_COLUMNS, aggregate, claims_frame, read_results

p = snakemake.params
raw = read_results(snakemake.input.jobs)
summary = aggregate(raw) if len(raw) else raw.reindex(columns=KEY_COLUMNS)
write_parquet(summary, snakemake.output.summary)
cities = dict(p.cities)
unavailable = dict(p.unavailable)
if len(raw):
    focus = p.fig.get("focus_city")
    claims = claims_for(summary, p.fig, p.figure, focus=cities[focus]["dataset"] if focus else None)
else:
    claims = [{"paper": "bshp", "figure": p.figure, "claim": "(every claim of this figure)", "verdict": "not testable",
               "evidence": "no city's data can be obtained here: " + "; ".join(f"{k}: {v}" for k, v in unavailable.items())}]
write_parquet(claims_frame(claims), snakemake.output.claims)
cards = {Path(c).stem: json.loads(Path(c).read_text()) for c in snakemake.input.cards}
plot = plot_values_figure if p.fig["kind"] == "values" else plot_mse_figure
plot(summary, p.fig, cities, cards, unavailable, p.fig.get("title", f"bshp {p.figure}"), snakemake.output.png,
     snakemake.output.svg, claims=claims)
