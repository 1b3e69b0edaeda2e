"""Aggregate one experiment figure, judge the paper's claims, draw it (partial panels allowed);
or, for rule figures_not_available, every figure with nothing to compute here, one after another
(ldprepro.papers.experiment_figure)."""

from types import SimpleNamespace

from ldprepro.pipeline.jobsetup import done, ready, start

start(snakemake)  # the job's log, warnings and threads, before the heavy imports

from ldprepro.papers.experiment_figure import render_experiment_figure

ready()

p = snakemake.params
if hasattr(p, "figures"):  # several figures, each with its own params, outputs and prose
    stray = {path for figure in p.figures for path in figure["output"].values()} - set(map(str, snakemake.output))
    if stray:
        raise RuntimeError(f"figures_not_available: {sorted(stray)} are not among the rule's outputs")
    for figure in p.figures:
        render_experiment_figure(
            SimpleNamespace(**figure["params"]), SimpleNamespace(**figure["output"]), [], figure["report_prose"]
        )
else:
    cards = getattr(snakemake.input, "cards", [])  # a kind whose plot reads the cards (render_cards)
    render_experiment_figure(p, snakemake.output, snakemake.input.jobs, snakemake.input.report_prose, cards)
done("experiment_figure: " + ", ".join(map(str, snakemake.output)))
