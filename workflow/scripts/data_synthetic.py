"""Snakemake script: generate a synthetic dataset (seeded by config seed + its parameters)."""

from ldprepro.data.build import build_synthetic, log_to

sm = snakemake  # noqa: F821 (injected by Snakemake)
card = build_synthetic(sm.wildcards.dataset, sm.params.entry, sm.params.seed, sm.params.scale,
                       sm.output.parquet, sm.output.card)
log_to(sm.log[0])(f"{card['dataset']}: {card['rows_after_cleaning']} rows generated")
