"""Snakemake script: generate a synthetic dataset (seeded by config seed + its parameters)."""

from ldprepro.pipeline.jobsetup import done, ready, start

start(snakemake)  # noqa: F821

from ldprepro.data.build import build_synthetic  # noqa: E402

ready()

sm = snakemake  # noqa: F821 (injected by Snakemake)
card = build_synthetic(
    sm.wildcards.dataset, sm.params.entry, sm.params.seed, sm.params.scale, sm.output.parquet, sm.output.card
)
done(f"{card['dataset']}: {card['rows_after_cleaning']} rows generated")
