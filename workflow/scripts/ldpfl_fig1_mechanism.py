"""Zhao et al. Fig. 1's rows, one result file per mechanism (analytic curve + Monte-Carlo
repetitions; each mechanism's stream is keyed by its name, so one job can draw them all)."""

from ldprepro.pipeline.jobsetup import done, ready, start

start(snakemake)  # noqa: F821

import numpy as np  # noqa: E402

from ldprepro.papers.ldpfl.mechanism_figures import fig1_rows  # noqa: E402
from ldprepro.pipeline.results import output_per_name, tidy_frame, write_results  # noqa: E402

ready()

fig = snakemake.params.fig  # noqa: F821
grid = fig["eps_grid"]
eps_grid = np.round(np.arange(grid["start"], grid["stop"] + grid["step"] / 2, grid["step"]), 10)
written = 0
for mechanism, output in output_per_name(snakemake.params.mechanisms, snakemake.output):  # noqa: F821
    rows = fig1_rows(mechanism, eps_grid, fig["mc_eps"], fig["mc_users"], fig["mc_reps"], snakemake.params.seed)  # noqa: F821
    write_results(tidy_frame(rows), output)
    written += len(rows)
done(f"{written} rows written ({len(snakemake.params.mechanisms)} mechanisms)")  # noqa: F821
