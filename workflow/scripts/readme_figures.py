"""README material, an explicit target (`snakemake --cores N readme_figures`), never part of
`rule all` (it rewrites tracked files): thumbnails of the built figures, the generated verdicts page
(docs/figures/verdicts.md) and the "Results at a glance" block (docs/figures/at_a_glance.md; splice
it into README.md with `python -m ldprepro.report docs/figures/at_a_glance.md README.md`)."""

from ldprepro.pipeline.jobsetup import done, ready, start

start(snakemake)  # noqa: F821

import json  # noqa: E402

from PIL import Image  # noqa: E402

from ldprepro.pipeline.io import atomic_path, atomic_write_text  # noqa: E402
from ldprepro.report import tables as report  # noqa: E402
from ldprepro.report.verdicts_page import verdicts_markdown  # noqa: E402

ready()

sm = snakemake  # noqa: F821
for src, dest in zip(
    [*sm.input.figures, *sm.input.benchmark_figures], [*sm.output.thumbnails, *sm.output.benchmark_thumbnails]
):
    with Image.open(src) as im:
        im.thumbnail((1100, 1100))
        with atomic_path(dest, suffix=".png") as tmp:
            im.save(tmp, format="PNG", optimize=True)

claims = report.claims_table(sm.input.claims)
atomic_write_text(sm.output.verdicts, verdicts_markdown(claims, sm.config["scale"], sm.config["seed"]))
atomic_write_text(sm.output.glance, report.glance_markdown(list(sm.params.figures), claims))
cards = []
for path in sm.input.cards:
    with open(path, encoding="utf-8") as fh:
        cards.append(json.load(fh))
atomic_write_text(sm.output.datasets, report.datasets_markdown(cards))
if sm.input.lremh_agreement:  # paper 004: how the cost model ranks the estimates against CPU time
    from ldprepro.papers.lremh.agreement import agreement_markdown

    records = []
    for path in sm.input.lremh_agreement:
        with open(path, encoding="utf-8") as fh:
            records.append(json.load(fh))
    atomic_write_text(sm.output.lremh_agreement[0], agreement_markdown(records, sm.config["scale"], sm.config["seed"]))
for src, dest in zip(sm.input.benchmark, sm.output.benchmark):  # the generated benchmark page
    with open(src, encoding="utf-8") as fh:
        atomic_write_text(dest, fh.read())
done()
