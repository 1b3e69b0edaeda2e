"""Aggregate one experiment figure, judge the paper's claims, draw it (partial panels allowed);
or, for rule figures_not_available, every figure with nothing to compute here, one after another
(ldprepro.papers.experiment_figure); or a figure of a kind bound to one paper's config
(ldprepro.experiments.kinds.PAPER_KINDS: ldpfl Figs. 1 and 4, lremh), by its kind's own ``render``."""

from types import SimpleNamespace

from ldprepro.pipeline.jobsetup import done, ready, start

start(snakemake)  # the job's log, warnings and threads, before the heavy imports

from ldprepro.experiments import kinds
from ldprepro.papers.experiment_figure import render_experiment_figure

p = snakemake.params
paper_kind = kinds.load(p.kind) if hasattr(p, "kind") else None  # its render (a paper kind's module)
ready()

if paper_kind is not None:
    paper_kind.render(p, snakemake.input, snakemake.output)
elif hasattr(p, "figures"):  # several figures, each with its own params, outputs and prose
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
