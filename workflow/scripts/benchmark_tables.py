"""The benchmark's combined table, privacy table, per-cell ranking, winners, generated markdown
and figures (ldprepro.benchmark)."""

from ldprepro.pipeline.jobsetup import done, ready, start

start(snakemake)  # noqa: F821


from ldprepro.benchmark import plots, tables  # noqa: E402
from ldprepro.pipeline.io import atomic_write_text  # noqa: E402
from ldprepro.pipeline.results import write_results  # noqa: E402
from ldprepro.pipeline.verify import Grid, job_results, read_table  # noqa: E402

ready()

sm = snakemake  # noqa: F821
results = tables.combine([job_results([p], Grid(named=None)) for p in sm.input.jobs])  # whole, or a named error
audit = read_table(sm.input.audit) if sm.input.audit else None
privacy, ranked, win = tables.analyse(results, audit)
for frame, path in (
    (results, sm.output.results),
    (privacy, sm.output.privacy),
    (ranked, sm.output.ranked),
    (win, sm.output.winners),
):
    write_results(frame, path)
atomic_write_text(
    sm.output.markdown,
    tables.markdown(win, ranked, dict(sm.params.unavailable), sm.params.scale, sm.params.seed),
    digest=True,
)
for task in sm.params.tasks:
    plots.plot_winner_map(win, task, f"figures/benchmark/{task}_winners.png", f"figures/benchmark/{task}_winners.svg")
    plots.plot_ratio_to_best(ranked, task, f"figures/benchmark/{task}_ratio.png", f"figures/benchmark/{task}_ratio.svg")
done(f"{len(win)} cells ranked")
