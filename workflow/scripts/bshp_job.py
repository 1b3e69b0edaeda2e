"""One BSHP/WSHP/baseline job: the figure's methods on one city's salaries, one after another, each
looping ε, r and repetitions (one ε at a time, for progress in the log) and writing its own result
file. Every random stream is keyed by (figure, city, method, ε, …), so the rows do not depend on
how the methods are grouped into jobs."""

from ldprepro.pipeline.jobsetup import done, progress, ready, start

start(snakemake)  # noqa: F821 (before numpy: pins BLAS threads)

import time  # noqa: E402
from pathlib import Path  # noqa: E402

from ldprepro.data.transform import load  # noqa: E402
from ldprepro.papers.bshp.runs import run_job, salary_positions  # noqa: E402
from ldprepro.pipeline.results import output_per_name, tidy_frame, write_results  # noqa: E402

ready()

w = snakemake.wildcards  # noqa: F821
p = snakemake.params  # noqa: F821
df, card = load(w.dataset, root=Path(snakemake.input.parquet).parent)  # noqa: F821
positions = salary_positions(df, card, p.protocol["column"], p.fig.get("max_users"))
progress("%s: %d salaries; %s on %d ε values", w.dataset, len(positions), ", ".join(p.methods), len(p.fig["eps"]))
written = 0
for method, output in output_per_name(p.methods, snakemake.output):  # noqa: F821
    rows = []
    for i, eps in enumerate(p.fig["eps"], 1):
        t0 = time.monotonic()
        rows += run_job({**p.fig, "eps": [eps]}, p.protocol, w.dataset, method, positions, p.seed, p.figure)
        progress("%s: ε = %g done (%d/%d) in %.1f s", method, eps, i, len(p.fig["eps"]), time.monotonic() - t0)
    write_results(tidy_frame(rows, extra_order=["r", "query", "bin"]), output)
    written += len(rows)
done(f"{written} rows written ({len(p.methods)} methods)")
