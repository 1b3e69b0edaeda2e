"""One mechanism's rows of Zhao et al. Fig. 1 (analytic curve + Monte-Carlo repetitions)."""
import numpy as np

from ldprepro.experiments.worst_case import fig1_rows
from ldprepro.results import tidy_frame, write_results

fig = snakemake.params.fig
grid = fig["eps_grid"]
eps_grid = np.round(np.arange(grid["start"], grid["stop"] + grid["step"] / 2, grid["step"]), 10)
rows = fig1_rows(snakemake.wildcards.mechanism, eps_grid, fig["mc_eps"], fig["mc_users"], fig["mc_reps"],
                 snakemake.params.seed)
write_results(tidy_frame(rows), snakemake.output[0])
