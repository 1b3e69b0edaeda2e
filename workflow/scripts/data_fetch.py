"""Snakemake script: put one verified raw file at data/raw/{dataset}/{filename}."""

from ldprepro.data.build import fetch, log_to

sm = snakemake  # noqa: F821 (injected by Snakemake)
fetch(sm.wildcards.dataset, sm.params.entry, sm.wildcards.filename, sm.output[0],
      sm.params.mirror, log=log_to(sm.log[0]))
