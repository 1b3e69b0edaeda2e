"""Snakemake script: locate (user extract) or obtain (IPUMS API) an IPUMS extract and normalise."""
from ldprepro.jobsetup import done, progress, start

start(snakemake)  # noqa: F821

from ldprepro.data.build import build_ipums  # noqa: E402

sm = snakemake  # noqa: F821 (injected by Snakemake)
card = build_ipums(sm.wildcards.dataset, sm.params.entry, sm.output.parquet, sm.output.card,
                   sm.params.extract_dir, log=progress)
done(f"{card['dataset']}: {card['rows_before_cleaning']} rows read, {card['rows_after_cleaning']} kept")
