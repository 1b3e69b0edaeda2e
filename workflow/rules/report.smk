# The report's tables (issue 8): claims and verdicts, the privacy audit, data cards, provenance,
# and the README's generated "Results at a glance" (docs/figures/at_a_glance.md; splice it into
# README.md with `python -m ldprepro.report docs/figures/at_a_glance.md README.md`).
#   snakemake --cores all && snakemake --report report.html


REPORT_CLAIMS = [f"results/{f['paper']}/{f['figure']}/claims.parquet" for f in FIGURE_REGISTRY]
REPORT_CARDS = sorted({f"data/processed/{ds}.json"
                       for (_p, _f), _e in MEAN_FIGURES.items() for ds in [p["dataset"] for p in _e["panels"]]
                       if ds not in UNAVAILABLE})
ALL_TARGETS.extend(["results/report/claims.html", "results/report/provenance.html", "docs/figures/at_a_glance.md"])


rule report_tables:
    input:
        claims=REPORT_CLAIMS,
        audit="results/audit/audit.parquet",
        cards=REPORT_CARDS,
    output:
        claims=report("results/report/claims.html", caption="../report/tables.rst", category="tables"),
        audit=report("results/report/audit.html", caption="../report/audit.rst", category="audit"),
        cards=report("results/report/data_cards.html", caption="../report/tables.rst", category="data"),
        provenance=report("results/report/provenance.html", caption="../report/tables.rst", category="provenance"),
        glance="docs/figures/at_a_glance.md",
    params:
        figures=FIGURE_REGISTRY,
    log:
        "logs/report/tables.log",
    conda:
        "../../envs/ldprepro.yaml"
    script:
        "../scripts/report_tables.py"


# README material for every registered figure: thumbnails and the verdict table (committed after a
# paper-scale run: `snakemake --cores all readme_figures`).
rule readme_figures:
    input:
        figures=[f"figures/{f['paper']}/{f['figure']}.png" for f in FIGURE_REGISTRY],
        claims=REPORT_CLAIMS,
    output:
        thumbnails=[f"docs/figures/{f['paper']}_{f['figure']}.png" for f in FIGURE_REGISTRY],
        verdicts="docs/figures/verdicts.md",
    log:
        "logs/readme_figures.log",
    conda:
        "../../envs/ldprepro.yaml"
    script:
        "../scripts/readme_figures.py"
