"""One paper-004 experiment: every run × f × k × subset × method on one dataset (timings in one process)."""

from ldprepro.pipeline.jobsetup import done, progress, start

start(snakemake)  # noqa: F821 (before numpy: pins BLAS threads)

from pathlib import Path  # noqa: E402

from ldprepro.data.transform import load  # noqa: E402
from ldprepro.papers.lremh.experiment import dataset_codes, run_experiment  # noqa: E402
from ldprepro.pipeline.results import tidy_frame, write_results  # noqa: E402

exp = snakemake.params.exp  # noqa: F821
df, card = load(exp["dataset"], root=Path(snakemake.input.parquet).parent)  # noqa: F821
codes, sizes, names = dataset_codes(exp["dataset"], df, card)
progress(f"{exp['dataset']}: {codes.shape[0]} records, attributes {list(zip(names, sizes))}")
time_rows, rows = run_experiment(exp, codes, sizes, snakemake.params.seed, log=progress)  # noqa: F821
order = ["f", "k", "n_users"]
for kind, data in (("time", time_rows), ("avd", rows)):
    frame = tidy_frame(data, extra_order=order)
    for path, method in zip(snakemake.output[kind], exp["methods"]):  # noqa: F821
        write_results(frame[frame["mechanism"] == method].reset_index(drop=True), path)
done()
