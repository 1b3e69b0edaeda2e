"""Snakemake script: locate (user extract) or obtain (IPUMS API) an IPUMS extract and normalise."""

from ldprepro.data.build import build_ipums, exit_if_unavailable, log_to

sm = snakemake  # noqa: F821 (injected by Snakemake)
log = log_to(sm.log[0])


def main() -> None:
    card = build_ipums(sm.wildcards.dataset, sm.params.entry, sm.output.parquet,
                       sm.output.card, sm.params.extract_dir, log=log)
    log(f"{card['dataset']}: {card['rows_before_cleaning']} rows read, "
        f"{card['rows_after_cleaning']} kept")


# unavailable (no extract, no key, or the API failed): one "NOT AVAILABLE: <reason>" line
# (recorded in logs/unavailable/), exit status 1, no traceback
exit_if_unavailable(main)
