"""Aggregate one BSHP figure, judge the paper's claims on it, draw it (unavailable cities allowed).

The summary (and so the plotted curves) uses the paper's T repetitions only; the claims are
decided on every repetition, the extra ones run for the tests (``claim_reps``) included."""

from ldprepro.pipeline.jobsetup import done, ready, start

start(snakemake)  # the job's log, warnings and threads, before the heavy imports

from pathlib import Path

from ldprepro.claims.tables import write_claims
from ldprepro.papers.bshp.claims import figure_claims, judge_figure, paper_repetitions
from ldprepro.papers.bshp.plots import plot_mse_figure, plot_values_figure
from ldprepro.pipeline.io import write_parquet
from ldprepro.pipeline.results import KEY_COLUMNS, aggregate
from ldprepro.pipeline.verify import bshp_grid, job_results, read_json
from ldprepro.report.figure_report import write_figure_report

ready()

p = snakemake.params
raw = job_results(snakemake.input.jobs, bshp_grid(p.fig))  # the configured grid, exactly, or a named error
paper_raw = paper_repetitions(raw)
summary = aggregate(paper_raw) if len(paper_raw) else paper_raw.reindex(columns=KEY_COLUMNS)
write_parquet(summary, snakemake.output.summary)
cities = dict(p.cities)
unavailable = dict(p.unavailable)
# the consumers' queries (bshp.protocol.folds) for the closed-form claims; the rule may pass the
# protocol, else the folds are read from the results (or the paper's 3, 5, 7 when there are none)
protocol = dict(getattr(p, "protocol", None) or {})
claims = judge_figure(raw, p.fig, p.figure, cities, unavailable, folds=protocol.get("folds", (3, 5, 7)))
write_claims(claims, snakemake.output.claims, snakemake.output.claim_points)
cards = {Path(c).stem: read_json(c) for c in snakemake.input.cards}
plot = plot_values_figure if p.fig["kind"] == "values" else plot_mse_figure
plot(
    summary,
    p.fig,
    cities,
    cards,
    unavailable,
    p.fig.get("title", f"bshp {p.figure}"),
    snakemake.output.png,
    snakemake.output.svg,
    claims=figure_claims(claims),
)
write_figure_report(snakemake.output, snakemake.params, snakemake.input.report_prose)  # its caption and forest plot
done("bshp_figure: " + ", ".join(map(str, snakemake.output)))
