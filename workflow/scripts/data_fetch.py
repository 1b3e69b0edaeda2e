"""Snakemake script: put one verified raw file at data/raw/{dataset}/{filename} (kept when it is
already there and verifies) and record it in data/verified/{dataset}/{filename}.json."""

from ldprepro.pipeline.jobsetup import done, progress, ready, start

start(snakemake)  # noqa: F821

import os  # noqa: E402

from ldprepro.data.entries import RAW_ROOT  # noqa: E402
from ldprepro.data.obtain import exit_if_unavailable, fetch  # noqa: E402

ready()

sm = snakemake  # noqa: F821 (injected by Snakemake)
# config data_mirror wins; the environment variable LDPREPRO_DATA_MIRROR is the fallback.
mirror = sm.config.get("data_mirror") or os.environ.get("LDPREPRO_DATA_MIRROR") or ""
# unavailable: one "NOT AVAILABLE: <reason>" line (recorded in logs/unavailable/), exit 1
exit_if_unavailable(
    lambda: fetch(
        sm.wildcards.dataset,
        sm.params.entry,
        sm.wildcards.filename,
        RAW_ROOT / sm.wildcards.dataset / sm.wildcards.filename,
        mirror,
        log=progress,
        verified=sm.output[0],
    )
)
done()
