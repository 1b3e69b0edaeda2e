"""Collect the audit rows into results/audit/audit.parquet and draw the audit figure."""

from ldprepro.pipeline.jobsetup import done, ready, start

start(snakemake)  # noqa: F821

import pandas as pd  # noqa: E402

from ldprepro.audit.figure import plot_audit  # noqa: E402
from ldprepro.pipeline.io import write_parquet  # noqa: E402

ready()

df = pd.concat([pd.read_parquet(p) for p in snakemake.input], ignore_index=True)  # noqa: F821
write_parquet(df, snakemake.output.table)  # noqa: F821
plot_audit(df, snakemake.output.png, snakemake.output.svg)  # noqa: F821
done(f"{len(df)} audit rows")
