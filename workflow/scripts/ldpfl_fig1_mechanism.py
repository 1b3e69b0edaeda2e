"""One mechanism's rows of Zhao et al. Fig. 1 (analytic curve + Monte-Carlo repetitions)."""

from ldprepro.pipeline.jobsetup import done, ready, start

start(snakemake)  # noqa: F821

import numpy as np  # noqa: E402

from ldprepro.papers.ldpfl.mechanism_figures import fig1_rows  # noqa: E402
from ldprepro.pipeline.results import tidy_frame, write_results  # noqa: E402

ready()

fig = snakemake.params.fig  # noqa: F821
grid = fig["eps_grid"]
eps_grid = np.round(np.arange(grid["start"], grid["stop"] + grid["step"] / 2, grid["step"]), 10)
rows = fig1_rows(
    snakemake.wildcards.mechanism,
    eps_grid,
    fig["mc_eps"],
    fig["mc_users"],
    fig["mc_reps"],  # noqa: F821
    snakemake.params.seed,
)  # noqa: F821
write_results(tidy_frame(rows), snakemake.output[0])  # noqa: F821
done(f"{len(rows)} rows written")
