"""One experiment job: a mechanism on one panel's dataset, looping ε, sweeps and repetitions.
Dispatches on the figure's kind: mean estimation or LDP-SGD."""
from pathlib import Path

from ldprepro.data.transform import load
from ldprepro.experiments import mean_figures, sgd_figures
from ldprepro.results import tidy_frame, write_results

RUNNERS = {"mean": mean_figures.run_job, "sgd": sgd_figures.run_job}

w = snakemake.wildcards
fig = snakemake.params.fig
df, card = load(w.dataset, root=Path(snakemake.input.parquet).parent)
rows = RUNNERS[fig["kind"]](fig, snakemake.params.panel, w.mechanism, df, card, snakemake.params.seed,
                            w.paper, w.figure)
write_results(tidy_frame(rows), snakemake.output[0])
