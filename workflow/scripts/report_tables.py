"""Render the report's tables from pipeline outputs: claims, audit, data cards, provenance (the
stage timings come from the logs of the jobs upstream, listed in the rule's params, not from a glob)."""

from ldprepro.pipeline.jobsetup import done, ready, start

start(snakemake)  # noqa: F821


from ldprepro.papers import declarations_by_figure  # noqa: E402
from ldprepro.pipeline.io import atomic_write_text  # noqa: E402
from ldprepro.pipeline.verify import read_json, read_table  # noqa: E402
from ldprepro.report import cards  # noqa: E402
from ldprepro.report import tables as report  # noqa: E402

ready()

sm = snakemake  # noqa: F821
out = sm.output
atomic_write_text(out.claims, report.claims_html(sm.input.claims), digest=True)
atomic_write_text(out.audit, report.audit_html(read_table(sm.input.audit)), digest=True)
atomic_write_text(
    out.cards,
    report.data_cards_html([read_json(p) for p in sm.input.cards], dict(sm.params.unavailable)),
    digest=True,
)
atomic_write_text(
    out.provenance,
    report.provenance_html(dict(sm.config), list(sm.params.job_logs), list(sm.params.figures)),
    digest=True,
)
claims = report.claims_table(sm.input.claims)
for paper, path in zip(sm.params.card_papers, out.reproduction):  # a reproduction card per paper
    card = cards.reproduction_card(
        paper,
        list(sm.params.figures),
        claims,
        declarations_by_figure(paper, [f["figure"] for f in sm.params.figures if f["paper"] == paper]),
        sm.config["scale"],
        sm.config["seed"],
    )
    atomic_write_text(path, card, digest=True)
done()
