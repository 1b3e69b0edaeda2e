"""Snakemake script: put one verified raw file at data/raw/{dataset}/{filename}."""
import os

from ldprepro.data.build import exit_if_unavailable, fetch, log_to

sm = snakemake  # noqa: F821 (injected by Snakemake)
# config data_mirror wins; the environment variable LDPREPRO_DATA_MIRROR is the fallback.
mirror = sm.config.get("data_mirror") or os.environ.get("LDPREPRO_DATA_MIRROR") or ""
log = log_to(sm.log[0])
# unavailable: one "NOT AVAILABLE: <reason>" line (recorded in logs/unavailable/), exit 1
exit_if_unavailable(lambda: fetch(sm.wildcards.dataset, sm.params.entry, sm.wildcards.filename,
                                  sm.output[0], mirror, log=log))
