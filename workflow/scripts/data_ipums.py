"""Snakemake script: locate (user extract) or obtain (IPUMS API) an IPUMS extract and normalise."""

from ldprepro.pipeline.jobsetup import done, progress, ready, start

start(snakemake)  # noqa: F821

from ldprepro.data.build import build_ipums, exit_if_unavailable  # noqa: E402

ready()

sm = snakemake  # noqa: F821 (injected by Snakemake)


def main() -> None:
    card = build_ipums(
        sm.wildcards.dataset, sm.params.entry, sm.output.parquet, sm.output.card, sm.params.extract_dir, log=progress
    )
    done(f"{card['dataset']}: {card['rows_before_cleaning']} rows read, {card['rows_after_cleaning']} kept")


# unavailable (no extract, no key, or the API failed): one "NOT AVAILABLE: <reason>" line
# (recorded in logs/unavailable/), exit status 1, no traceback
exit_if_unavailable(main)
