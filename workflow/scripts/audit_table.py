"""Collect the audit rows into results/audit/audit.parquet and draw the audit figure."""
import pandas as pd

from ldprepro.audit import plot_audit
from ldprepro.io import write_parquet

df = pd.concat([pd.read_parquet(p) for p in snakemake.input], ignore_index=True)
write_parquet(df, snakemake.output.table)
plot_audit(df, snakemake.output.png, snakemake.output.svg)
