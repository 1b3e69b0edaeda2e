"""Thumbnails of the built figures and the generated verdicts page, for the README
(docs/figures/, committed after a paper-scale run; regenerate with `snakemake readme_figures`)."""
import pandas as pd
from PIL import Image

from ldprepro.io import atomic_path, atomic_write_text
from ldprepro.verdict_tables import verdicts_markdown

for src, dest in zip(snakemake.input.figures, snakemake.output.thumbnails):
    with Image.open(src) as im:
        im.thumbnail((1100, 1100))
        with atomic_path(dest, suffix=".png") as tmp:
            im.save(tmp, format="PNG", optimize=True)

claims = pd.concat([pd.read_parquet(p) for p in snakemake.input.claims], ignore_index=True)
atomic_write_text(snakemake.output.verdicts,
                  verdicts_markdown(claims, snakemake.config["scale"], snakemake.config["seed"]))
