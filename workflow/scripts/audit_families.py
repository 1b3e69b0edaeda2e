"""Audit every family of mechanisms at every configured ε, family after family (one ε at a time,
for progress), each family's rows written to its own output as soon as it is done."""

from ldprepro.pipeline.jobsetup import done, progress, ready, start

start(snakemake)  # noqa: F821 (before numpy: pins BLAS threads)

import pandas as pd  # noqa: E402

from ldprepro.audit.empirical import run_family  # noqa: E402
from ldprepro.pipeline.io import write_parquet  # noqa: E402

ready()

cfg = snakemake.params.cfg  # noqa: F821
families = snakemake.params.families  # noqa: F821
if len(families) != len(snakemake.output):  # noqa: F821
    raise RuntimeError(f"audit: families {families} do not match outputs {list(snakemake.output)}")  # noqa: F821
total = 0
for family, output in zip(families, snakemake.output):  # noqa: F821
    rows = []
    for i, eps in enumerate(cfg["eps"], 1):
        # RR-LDP (frequency family) is parameterised by (f, p, q), not ε: run it once, with the last ε
        part = {**cfg, "eps": [eps]} if i == len(cfg["eps"]) else {**cfg, "eps": [eps], "rappor": []}
        rows += run_family(family, part, snakemake.params.seed)  # noqa: F821
        progress("%s: ε = %g audited (%d/%d)", family, eps, i, len(cfg["eps"]))
    write_parquet(pd.DataFrame(rows), output)
    total += len(rows)
done(f"{total} rows written for {len(families)} families")
