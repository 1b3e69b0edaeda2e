"""Snakemake script: raw files -> data/processed/{dataset}.parquet + .json (data card)."""

from ldprepro.data.build import build_from_files, log_to

sm = snakemake  # noqa: F821 (injected by Snakemake)
log = log_to(sm.log[0])
card = build_from_files(sm.wildcards.dataset, sm.params.entry, dict(sm.input.items()),
                        sm.output.parquet, sm.output.card, log=log)
log(f"{card['dataset']}: {card['rows_before_cleaning']} rows read, "
    f"{card['rows_after_cleaning']} kept")
