"""Snakemake script: raw files -> data/processed/{dataset}.parquet + .json (data card).

Its inputs are the download jobs' records (data/verified/...); the raw files they name live under
data/raw/{dataset}/, outside Snakemake's outputs, and are verified again before they are read."""

from ldprepro.pipeline.jobsetup import done, progress, ready, start

start(snakemake)  # noqa: F821

from ldprepro.data.build import build_from_files  # noqa: E402
from ldprepro.data.workflow import raw_paths  # noqa: E402

ready()

sm = snakemake  # noqa: F821 (injected by Snakemake)
card = build_from_files(
    sm.wildcards.dataset,
    sm.params.entry,
    raw_paths(sm.wildcards.dataset, sm.input.keys()),
    sm.output.parquet,
    sm.output.card,
    log=progress,
)
done(f"{card['dataset']}: {card['rows_before_cleaning']} rows read, {card['rows_after_cleaning']} kept")
