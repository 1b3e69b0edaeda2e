"""Render the report's tables and the README's 'Results at a glance' from pipeline outputs."""
import glob
import json

import pandas as pd

from ldprepro import report
from ldprepro.io import atomic_write_text

out = snakemake.output
atomic_write_text(out.claims, report.claims_html(snakemake.input.claims))
atomic_write_text(out.audit, report.audit_html(pd.read_parquet(snakemake.input.audit)))
atomic_write_text(out.cards, report.data_cards_html([json.loads(open(p).read()) for p in snakemake.input.cards]))
benchmarks = sorted(glob.glob("logs/benchmarks/**/*.tsv", recursive=True))
atomic_write_text(out.provenance, report.provenance_html(dict(snakemake.config), benchmarks))
glance = report.glance_markdown(list(snakemake.params.figures), report.claims_table(snakemake.input.claims))
atomic_write_text(out.glance, glance)
