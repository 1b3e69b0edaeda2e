"""One experiment job: the figure's mechanisms on one panel's dataset (every mechanism, or one on a
dataset marked one_job_per_mechanism), each looping ε, sweeps and repetitions and writing its own
result file as soon as it is done. Every random stream is keyed by (paper, figure, dataset,
mechanism, ε, …), so the rows do not depend on how the mechanisms are grouped into jobs. A mechanism
whose computation an earlier figure's job already does (``params.shared``: Figs. 11-13 of paper 002
repeating curves of Figs. 6, 8 and 9; ldprepro.pipeline.shared_jobs) is not run again: its file is
that job's rows, checked against this figure's grid and relabelled. Dispatches
on the figure's kind. Mean estimation runs one ε at a time (the rows are the same as in one call)
to log progress per ε; LDP-SGD runs every ε in one call, fit after fit (each fit's rows are
gathered once for all ε), and logs progress per fit."""

from ldprepro.pipeline.jobsetup import done, progress, ready, start

start(snakemake)  # noqa: F821 (before numpy: pins BLAS threads)

import time  # noqa: E402
from pathlib import Path  # noqa: E402

from ldprepro.data.transform import load  # noqa: E402
from ldprepro.pipeline.results import output_per_name, shared_rows, tidy_frame, write_results  # noqa: E402
from ldprepro.pipeline.verify import experiment_grid  # noqa: E402

w = snakemake.wildcards  # noqa: F821
params = snakemake.params  # noqa: F821
fig = params.fig  # compute parameters only: no titles or labels
if fig["kind"] == "sgd":  # only the kind's own modules: the other kind's imports are fixed cost
    from ldprepro.experiments import sgd_figures
else:
    from ldprepro.experiments import mean_figures
ready()

mechanisms = list(params.mechanisms)
shared = dict(params.shared)  # {mechanism: the earlier figure's result file with its rows}
written = 0
if len(shared) < len(mechanisms):  # the data only when something is computed
    df, card = load(w.dataset, root=Path(snakemake.input.parquet).parent)  # noqa: F821
    progress("%s: %d rows loaded; %s on %d ε values", w.dataset, len(df), ", ".join(mechanisms), len(fig["eps"]))
for mechanism, output in output_per_name(mechanisms, snakemake.output):  # noqa: F821
    if mechanism in shared:
        rows = shared_rows(shared[mechanism], params.paper, params.figure, experiment_grid(fig))
        write_results(rows, output)
        written += len(rows)
        progress("%s: the %d rows of %s (the same computation)", mechanism, len(rows), shared[mechanism])
        continue
    rows = []
    if fig["kind"] == "sgd":
        t0 = time.monotonic()

        def fit_done(done_fits, total, mechanism=mechanism, t0=t0):
            progress("%s: fit %d/%d done (every ε) after %.1f s", mechanism, done_fits, total, time.monotonic() - t0)

        rows = sgd_figures.run_job(
            fig, params.panel, mechanism, df, card, params.seed, params.paper, params.figure, fit_done, params.split_of
        )
    else:
        for i, eps in enumerate(fig["eps"], 1):
            t0 = time.monotonic()
            rows += mean_figures.run_job(
                {**fig, "eps": [eps]}, params.panel, mechanism, df, card, params.seed, params.paper, params.figure
            )
            progress("%s: ε = %g done (%d/%d) in %.1f s", mechanism, eps, i, len(fig["eps"]), time.monotonic() - t0)
    write_results(tidy_frame(rows), output)
    written += len(rows)
done(f"{written} rows written ({len(mechanisms)} mechanism(s))")
