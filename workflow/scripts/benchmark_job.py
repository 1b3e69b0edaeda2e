"""One benchmark job: one task on one panel's dataset, every mechanism, ε and repetition."""

from ldprepro.pipeline.jobsetup import done, progress, ready, start

start(snakemake)  # noqa: F821 (before numpy: pins BLAS threads)

from pathlib import Path  # noqa: E402

from ldprepro.benchmark import runs  # noqa: E402
from ldprepro.data.transform import load  # noqa: E402
from ldprepro.pipeline.results import tidy_frame, write_results  # noqa: E402

ready()

sm = snakemake  # noqa: F821
entry, panel = sm.params.entry, sm.params.panel
if "synthetic" in panel:  # a (k, ε)-plane panel: its counts are generated (runs.synthetic_counts)
    df, card = None, None
else:
    df, card = load(panel["dataset"], root=Path(sm.input.parquet).parent)
    progress("%s: %d rows loaded; task %s", panel["dataset"], len(df), sm.wildcards.task)
if sm.wildcards.task == "mean":
    rows = runs.mean_job(entry, panel, df, card, sm.params.seed)
elif sm.wildcards.task == "sgd":
    rows = runs.sgd_job(entry, panel, df, card, sm.params.seed)
else:
    rows = runs.frequency_job(entry, panel, df, sm.params.seed)
write_results(tidy_frame(rows), sm.output[0])
done(f"{len(rows)} rows written")
