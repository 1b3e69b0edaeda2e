"""One benchmark job: one task on one dataset, every panel on it (its data loaded once), or the
(k, ε)-plane panels of one distribution, k after k; every mechanism, ε and repetition of each panel,
written to the panel's own output as soon as it is done."""

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
if [panel_id(p) for p in panels] != [Path(o).stem for o in sm.output]:
    raise RuntimeError(f"benchmark job: panels {[panel_id(p) for p in panels]} do not match outputs {list(sm.output)}")
df, card = None, None  # a (k, ε)-plane panel's counts are generated (runs.synthetic_counts)
if "parquet" in sm.input.keys():
    df, card = load(panels[0]["dataset"], root=Path(sm.input.parquet).parent)
    progress("%s: %d rows loaded; task %s, %d panels", panels[0]["dataset"], len(df), task, len(panels))
written = 0
for panel, output in zip(panels, sm.output):
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
