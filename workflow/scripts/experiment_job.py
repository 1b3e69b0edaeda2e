"""One experiment job: a mechanism on one panel's dataset, looping ε, sweeps and repetitions.
Dispatches on the figure's kind. Mean estimation runs one ε at a time (every random stream is
keyed by ε, so the rows are the same as in one call) to log progress per ε; LDP-SGD runs every ε
in one call, fit after fit (each fit's rows are gathered once for all ε), and logs progress per fit."""

from ldprepro.pipeline.jobsetup import done, progress, ready, start

start(snakemake)  # noqa: F821 (before numpy: pins BLAS threads)

import time  # noqa: E402
from pathlib import Path  # noqa: E402

from ldprepro.data.transform import load  # noqa: E402
from ldprepro.pipeline.results import tidy_frame, write_results  # noqa: E402

w = snakemake.wildcards  # noqa: F821
fig = snakemake.params.fig  # noqa: F821 (compute parameters only: no titles or labels)
if fig["kind"] == "sgd":  # only the kind's own modules: the other kind's imports are fixed cost
    from ldprepro.experiments import sgd_figures
else:
    from ldprepro.experiments import mean_figures
ready()

df, card = load(w.dataset, root=Path(snakemake.input.parquet).parent)  # noqa: F821
progress("%s: %d rows loaded; %s on %d ε values", w.dataset, len(df), w.mechanism, len(fig["eps"]))
rows = []
if fig["kind"] == "sgd":
    t0 = time.monotonic()

    def fit_done(done_fits, total):
        progress("fit %d/%d done (every ε) after %.1f s", done_fits, total, time.monotonic() - t0)

    rows = sgd_figures.run_job(
        fig, snakemake.params.panel, w.mechanism, df, card, snakemake.params.seed, w.paper, w.figure, fit_done
    )  # noqa: F821
else:
    for i, eps in enumerate(fig["eps"], 1):
        t0 = time.monotonic()
        rows += mean_figures.run_job(
            {**fig, "eps": [eps]},
            snakemake.params.panel,
            w.mechanism,
            df,
            card,
            snakemake.params.seed,
            w.paper,
            w.figure,
        )  # noqa: F821
        progress("ε = %g done (%d/%d) in %.1f s", eps, i, len(fig["eps"]), time.monotonic() - t0)
write_results(tidy_frame(rows), snakemake.output[0])  # noqa: F821
done(f"{len(rows)} rows written")
