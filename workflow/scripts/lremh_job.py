"""One paper-004 experiment: every run × f × k × subset × method on one dataset (timings in one process)."""

from ldprepro.pipeline.jobsetup import done, progress, ready, start

start(snakemake)  # noqa: F821 (before numpy: pins BLAS threads)

from pathlib import Path  # noqa: E402

from ldprepro.data.transform import load  # noqa: E402
from ldprepro.papers.lremh.experiment import dataset_codes, run_experiment, write_job_results  # noqa: E402

ready()

exp = snakemake.params.exp  # noqa: F821
df, card = load(exp["dataset"], root=Path(snakemake.input.parquet).parent)  # noqa: F821
codes, sizes, names = dataset_codes(exp["dataset"], df, card)
progress(f"{exp['dataset']}: {codes.shape[0]} records, attributes {list(zip(names, sizes))}")
time_rows, rows = run_experiment(exp, codes, sizes, snakemake.params.seed, log=progress)  # noqa: F821
write_job_results(exp, time_rows, rows, {"time": snakemake.output.time, "avd": snakemake.output.avd})  # noqa: F821
done()
