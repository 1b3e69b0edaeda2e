"""One mean-estimation job: a mechanism on one panel's dataset, looping ε, sweeps and repetitions."""
from pathlib import Path

from ldprepro.data.transform import load
from ldprepro.experiments.mean_figures import run_job
from ldprepro.results import tidy_frame, write_results

w = snakemake.wildcards
df, card = load(w.dataset, root=Path(snakemake.input.parquet).parent)
rows = run_job(snakemake.params.fig, snakemake.params.panel, w.mechanism, df, card, snakemake.params.seed,
               w.paper, w.figure)
write_results(tidy_frame(rows), snakemake.output[0])
