"""Audit one family of mechanisms at every configured ε."""
import pandas as pd

from ldprepro.audit import run_family
from ldprepro.io import write_parquet

rows = run_family(snakemake.wildcards.family, snakemake.params.cfg, snakemake.params.seed)
write_parquet(pd.DataFrame(rows), snakemake.output[0])
