"""One experiment job: the figure's mechanisms on one panel's dataset (every mechanism, or one on a
dataset marked one_job_per_mechanism), each looping ε, sweeps and repetitions and writing its own
result file as soon as it is done. Every random stream is keyed by (paper, figure, dataset,
mechanism, ε, …), so the rows do not depend on how the mechanisms are grouped into jobs. A mechanism
whose computation an earlier figure's job already does (``params.shared``: Figs. 11-13 of paper 002
repeating curves of Figs. 6, 8 and 9; ldprepro.pipeline.shared_jobs) is not run again: its file is
that job's rows, checked against this figure's grid and relabelled. What a job of each kind
computes is its kind's ``run_job`` (ldprepro.experiments.kinds: mean, sgd, frequency, variance,
histogram); a
panel of a data-free kind (synthetic counts, a worst-case input) reads no dataset. A kind bound to one
paper's config (kinds.PAPER_KINDS) runs here too: shape ``mechanisms`` (one data-free job, a file per
mechanism: ldpfl Fig. 1) through its ``run_job``, shape ``experiment`` (one job feeding several
figures: lremh) through its own ``run_experiment``."""

from ldprepro.pipeline.jobsetup import done, progress, ready, start

start(snakemake)  # noqa: F821 (before numpy: pins BLAS threads)

from pathlib import Path  # noqa: E402

from ldprepro.data.transform import load  # noqa: E402
from ldprepro.experiments import kinds  # noqa: E402
from ldprepro.pipeline.results import output_per_name, shared_rows, tidy_frame, write_results  # noqa: E402

w = snakemake.wildcards  # noqa: F821
params = snakemake.params  # noqa: F821
# a paper kind names itself (ldprepro.experiments.kinds.PAPER_KINDS); a figure entry's kind is its entry's
name = params.kind if hasattr(params, "kind") else params.fig["kind"]
spec = kinds.get_kind(name)
kind = kinds.load(name)  # only the kind's own modules: the other kinds' imports are fixed cost
ready()


def run_mechanisms() -> str:
    """Every mechanism of the job (shapes panel and mechanisms), each into its own result file."""
    fig = params.fig  # compute parameters only: no titles or labels
    mechanisms = list(params.mechanisms)
    shared = dict(params.shared)  # {mechanism: the earlier figure's result file with its rows}
    written = 0
    df = card = None  # a data-free panel (synthetic counts, a worst-case input) or shape reads none
    if spec.shape == "panel" and len(shared) < len(mechanisms) and kinds.needs_data(fig, params.panel):
        df, card = load(w.dataset, root=Path(snakemake.input.parquet).parent)  # noqa: F821
        progress("%s: %d rows loaded; %s on %d ε values", w.dataset, len(df), ", ".join(mechanisms), len(fig["eps"]))
    for mechanism, output in output_per_name(mechanisms, snakemake.output):  # noqa: F821
        if mechanism in shared:
            rows = shared_rows(shared[mechanism], params.paper, params.figure, kind.grid(fig))
            write_results(rows, output)
            written += len(rows)
            progress("%s: the %d rows of %s (the same computation)", mechanism, len(rows), shared[mechanism])
            continue
        rows = kind.run_job(
            fig, params.panel, mechanism, df, card, params.seed, params.paper, params.figure, progress, params.split_of
        )
        write_results(tidy_frame(rows, extra_order=getattr(kind, "COLUMN_ORDER", None)), output)
        written += len(rows)
    return f"{written} rows written ({len(mechanisms)} mechanism(s))"


if spec.shape == "experiment":  # one job feeds several figures: the kind's own job function
    kind.run_experiment(params, snakemake.input, snakemake.output, progress)  # noqa: F821
    message = f"{name}: " + ", ".join(map(str, snakemake.output))  # noqa: F821
else:
    message = run_mechanisms()
done(message)
