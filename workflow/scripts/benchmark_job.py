"""One benchmark job: one task on one panel's dataset, every mechanism, ε and repetition; or the
(k, ε)-plane panels of one distribution, k after k (each its own output, written when it is done)."""

from ldprepro.pipeline.jobsetup import done, progress, ready, start

start(snakemake)  # noqa: F821 (before numpy: pins BLAS threads)

from pathlib import Path  # noqa: E402

from ldprepro.benchmark import runs  # noqa: E402
from ldprepro.benchmark.naming import panel_id  # noqa: E402
from ldprepro.data.transform import load  # noqa: E402
from ldprepro.pipeline.results import tidy_frame, write_results  # noqa: E402

ready()

sm = snakemake  # noqa: F821
entry, task, panels = sm.params.entry, sm.params.task, sm.params.panels
if len(panels) != len(sm.output) or any(Path(o).stem != panel_id(p) for p, o in zip(panels, sm.output)):
    raise RuntimeError(f"benchmark job: panels {[panel_id(p) for p in panels]} do not match outputs {list(sm.output)}")
written = 0
for panel, output in zip(panels, sm.output):
    if "synthetic" in panel:  # a (k, ε)-plane panel: its counts are generated (runs.synthetic_counts)
        df, card = None, None
    else:
        df, card = load(panel["dataset"], root=Path(sm.input.parquet).parent)
        progress("%s: %d rows loaded; task %s", panel["dataset"], len(df), task)
    if task == "mean":
        rows = runs.mean_job(entry, panel, df, card, sm.params.seed)
    elif task == "sgd":
        rows = runs.sgd_job(entry, panel, df, card, sm.params.seed)
    else:
        rows = runs.frequency_job(entry, panel, df, sm.params.seed)
    write_results(tidy_frame(rows), output)
    progress("%s: %d rows written", panel_id(panel), len(rows))
    written += len(rows)
done(f"{written} rows written")
