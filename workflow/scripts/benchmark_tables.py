"""The benchmark's combined table, privacy table, per-cell ranking, winners, generated markdown
and figures (ldprepro.benchmark)."""

from ldprepro.pipeline.jobsetup import done, ready, start

start(snakemake)  # noqa: F821


from ldprepro.benchmark import plots, tables, theory  # noqa: E402
from ldprepro.claims.verdicts import judge  # noqa: E402
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
# the frequency oracles' (k, ε) plane in exact theory, and its declared claims (every point exact)
freq_eps = sorted(results.loc[results["task"] == "frequency", "eps"].unique())
exact_win, claims = None, None
if sm.params.plane:  # the oracles the benchmark ran (benchmark.frequency.oracles), nothing left out
    ran = set(results.loc[results["task"] == "frequency", "mechanism"])
    oracles = [o for o in theory.EPS_ORACLES if o in ran]
    exact_win = theory.exact_winners(theory.exact_plane(sm.params.oracle_k, freq_eps, oracles))
    claims = theory.theory_claims(list(sm.params.claims), sm.params.oracle_k, freq_eps, oracles)
claims_out = (claims if claims is not None else judge([])).copy()
claims_out.attrs = {}  # the per-point evidence stays in memory (exact points; the evidence column summarises)
write_results(claims_out, sm.output.claims)
atomic_write_text(
    sm.output.markdown,
    tables.markdown(win, ranked, dict(sm.params.unavailable), sm.params.scale, sm.params.seed, exact_win, claims),
    digest=True,
)
if sm.params.plane:
    plots.plot_plane(win, exact_win, "figures/benchmark/frequency_plane.png", "figures/benchmark/frequency_plane.svg")
    plots.plot_plane_theory(
        results, "figures/benchmark/frequency_plane_theory.png", "figures/benchmark/frequency_plane_theory.svg"
    )
for task in sm.params.tasks:
    plots.plot_winner_map(win, task, f"figures/benchmark/{task}_winners.png", f"figures/benchmark/{task}_winners.svg")
    plots.plot_ratio_to_best(ranked, task, f"figures/benchmark/{task}_ratio.png", f"figures/benchmark/{task}_ratio.svg")
done(f"{len(win)} cells ranked")
