"""One experiment job: a mechanism on one panel's dataset, looping ε, sweeps and repetitions.
Dispatches on the figure's kind: mean estimation or LDP-SGD. Runs one ε at a time (every
random stream is keyed by ε, so the rows are the same as in one call) to log progress per ε."""

from ldprepro.jobsetup import done, progress, start

start(snakemake)  # noqa: F821 (before numpy: pins BLAS threads)

import time  # noqa: E402
from pathlib import Path  # noqa: E402

from ldprepro.data.transform import load  # noqa: E402
from ldprepro.experiments import mean_figures, sgd_figures  # noqa: E402
from ldprepro.results import tidy_frame, write_results  # noqa: E402

RUNNERS = {"mean": mean_figures.run_job, "sgd": sgd_figures.run_job}

w = snakemake.wildcards  # noqa: F821
fig = snakemake.params.fig  # noqa: F821 (compute parameters only: no titles or labels)
df, card = load(w.dataset, root=Path(snakemake.input.parquet).parent)  # noqa: F821
progress("%s: %d rows loaded; %s on %d ε values", w.dataset, len(df), w.mechanism, len(fig["eps"]))
rows = []
for i, eps in enumerate(fig["eps"], 1):
    t0 = time.monotonic()
    rows += RUNNERS[fig["kind"]](
        {**fig, "eps": [eps]},
        snakemake.params.panel,
        w.mechanism,
        df,
        card,  # noqa: F821
        snakemake.params.seed,
        w.paper,
        w.figure,
    )  # noqa: F821
    progress("ε = %g done (%d/%d) in %.1f s", eps, i, len(fig["eps"]), time.monotonic() - t0)
write_results(tidy_frame(rows), snakemake.output[0])  # noqa: F821
done(f"{len(rows)} rows written")
