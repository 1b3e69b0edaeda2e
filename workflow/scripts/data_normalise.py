"""Snakemake script: raw files -> data/processed/{dataset}.parquet + .json (data card)."""

from ldprepro.pipeline.jobsetup import done, progress, ready, start

start(snakemake)  # noqa: F821

from ldprepro.data.build import build_from_files  # noqa: E402

ready()

sm = snakemake  # noqa: F821 (injected by Snakemake)
card = build_from_files(
    sm.wildcards.dataset, sm.params.entry, dict(sm.input.items()), sm.output.parquet, sm.output.card, log=progress
)
done(f"{card['dataset']}: {card['rows_before_cleaning']} rows read, {card['rows_after_cleaning']} kept")
