"""One paper-004 experiment: every run × f × k × subset × method on one dataset (timings in one process)."""
import sys
from pathlib import Path

from ldprepro.data.transform import load
from ldprepro.experiments.joint import dataset_codes, run_experiment
from ldprepro.results import tidy_frame, write_results

exp = snakemake.params.exp
log = open(snakemake.log[0], "w")
sys.stderr = log
df, card = load(exp["dataset"], root=Path(snakemake.input.parquet).parent)
codes, sizes, names = dataset_codes(exp["dataset"], df, card)
print(f"{exp['dataset']}: {codes.shape[0]} records, attributes {list(zip(names, sizes))}", file=log, flush=True)
time_rows, rows = run_experiment(exp, codes, sizes, snakemake.params.seed,
                                 log=lambda m: print(m, file=log, flush=True))
order = ["f", "k", "n_users"]
for kind, data in (("time", time_rows), ("avd", rows)):
    frame = tidy_frame(data, extra_order=order)
    for path, method in zip(snakemake.output[kind], exp["methods"]):
        write_results(frame[frame["mechanism"] == method].reset_index(drop=True), path)
