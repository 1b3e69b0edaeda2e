"""One BSHP/WSHP/baseline job: one method on one city's salaries, looping ε, r and repetitions."""
from pathlib import Path

from ldprepro.data.transform import load
from ldprepro.experiments.histograms import run_job, salary_positions
from ldprepro.results import tidy_frame, write_results

w = snakemake.wildcards
p = snakemake.params
df, card = load(w.dataset, root=Path(snakemake.input.parquet).parent)
positions = salary_positions(df, card, p.protocol["column"], p.fig.get("max_users"))
rows = run_job(p.fig, p.protocol, w.dataset, w.method, positions, p.seed, w.figure)
write_results(tidy_frame(rows, extra_order=["r", "query", "bin"]), snakemake.output[0])
