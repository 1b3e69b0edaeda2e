"""Aggregate one experiment figure, judge the paper's claims, draw it (partial panels allowed).

The curve is drawn from the paper's repetitions (``reps``); the claims are tested on every
repetition run (``test_reps`` adds ours, for power)."""

from ldprepro.pipeline.jobsetup import done, ready, start

start(snakemake)  # the job's log, warnings and threads, before the heavy imports

from ldprepro.claims.tables import write_claims
from ldprepro.experiments.mean_figures import plot_mean_figure
from ldprepro.papers import decide_figure
from ldprepro.pipeline.io import write_parquet
from ldprepro.pipeline.results import KEY_COLUMNS, aggregate
from ldprepro.pipeline.verify import experiment_grid, job_results
from ldprepro.report.figure_report import write_figure_report

ready()

p = snakemake.params
raw = job_results(snakemake.input.jobs, experiment_grid(p.fig))  # the configured grid, exactly, or a named error
paper_reps = int(p.fig["reps"]) if "reps" in p.fig else None
drawn = raw[raw["rep"] < paper_reps] if paper_reps is not None and len(raw) else raw
summary = aggregate(drawn) if len(drawn) else raw.reindex(columns=KEY_COLUMNS)
write_parquet(summary, snakemake.output.summary)
claims = decide_figure(p.paper, p.figure, raw, p.fig, dict(p.unavailable))
write_claims(claims, snakemake.output.claims, snakemake.output.claim_points)
plot_mean_figure(
    summary,
    p.fig,
    dict(p.unavailable),
    p.fig.get("title", f"{p.paper} {p.figure}"),
    snakemake.output.png,
    snakemake.output.svg,
    claims=claims,
)
write_figure_report(snakemake.output, snakemake.params, snakemake.input.report_prose)  # its caption and forest plot
done("experiment_figure: " + ", ".join(map(str, snakemake.output)))
