"""Snakemake script: put one verified raw file at data/raw/{dataset}/{filename}."""
import os

from ldprepro.data.build import fetch, log_to

sm = snakemake  # noqa: F821 (injected by Snakemake)
# config data_mirror wins; the environment variable LDPREPRO_DATA_MIRROR is the fallback.
mirror = sm.config.get("data_mirror") or os.environ.get("LDPREPRO_DATA_MIRROR") or ""
fetch(sm.wildcards.dataset, sm.params.entry, sm.wildcards.filename, sm.output[0], mirror,
      log=log_to(sm.log[0]))
