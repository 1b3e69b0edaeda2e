# The report's tables (issue 8): claims and verdicts, the privacy audit, data cards, provenance.
#   snakemake --cores N && snakemake --report report.html
# README material (thumbnails, verdict table, "Results at a glance") rewrites tracked files under
# docs/figures/, so it is not part of `rule all`: build it explicitly with
#   snakemake --cores N readme_figures


REPORT_CLAIMS = [f"results/{f['paper']}/{f['figure']}/claims.parquet" for f in FIGURE_REGISTRY]
# A data card for every dataset a figure uses (experiment panels, BSHP cities included; LREMH experiments).
REPORT_DATASETS = sorted(
    {p["dataset"] for _e in MEAN_FIGURES.values() for p in _e["panels"]}
    | {_e["dataset"] for _e in LREMH_EXPERIMENTS.values()}
)
REPORT_CARDS = [f"data/processed/{ds}.json" for ds in REPORT_DATASETS if ds not in UNAVAILABLE_ALL]
ALL_TARGETS.extend(["results/report/claims.html", "results/report/provenance.html"])
# A reproduction card per paper (ldprepro.report.cards), written by report_tables: one job for every
# table that collects claims, so that a claim edit reruns its figure and this job only.
CARD_PAPERS = [p for p in ("hiera", "bshp", "ldpfl", "dct", "lremh") if any(f["paper"] == p for f in FIGURE_REGISTRY)]
ALL_TARGETS.extend(f"results/{p}/reproduction.md" for p in CARD_PAPERS)

# Stage timings come from the logs of the jobs upstream of the report's tables: each job's log ends
# with its own `resources:` line (ldprepro.pipeline.jobsetup). Logs are not products Snakemake tracks,
# so their paths are a parameter; the claims the rule reads come after those jobs in the DAG.
REPORT_JOB_LOGS = []
for (_paper, _fig), _entry in MEAN_FIGURES.items():
    for _p in _entry["panels"]:
        if _p["dataset"] in UNAVAILABLE:
            continue
        if _p["dataset"] in PER_MECHANISM:  # rule figure_job
            REPORT_JOB_LOGS += [f"logs/{_paper}/{_fig}/{_p['dataset']}__{m}.log" for m in _entry["mechanisms"]]
        else:  # rule panel_job_<paper>_<fig> (bshp_job_<fig>: KindSpec.job_rule)
            REPORT_JOB_LOGS.append(f"logs/{_paper}/{_fig}/{_p['dataset']}.log")
REPORT_JOB_LOGS += [
    f"logs/lremh/{name}.log" for name, e in LREMH_EXPERIMENTS.items() if e["dataset"] not in LREMH_UNAVAILABLE
]
if "audit" in config:
    REPORT_JOB_LOGS.append("logs/audit/families.log")  # rule audit_families: every family
if "ldpfl" in config and "fig1" in config["ldpfl"]:
    REPORT_JOB_LOGS.append("logs/ldpfl/fig1/mechanisms.log")
if "ldpfl" in config and "fig4" in config["ldpfl"]:
    REPORT_JOB_LOGS.append("logs/ldpfl/fig4/figure.log")


rule report_tables:
    input:
        claims=REPORT_CLAIMS,
        audit="results/audit/audit.parquet",
        cards=REPORT_CARDS,
    output:
        claims=report_if_built("results/report/claims.html", caption="../report/tables.rst", category="tables"),
        audit=report_if_built("results/report/audit.html", caption="../report/audit.rst", category="audit"),
        cards=report_if_built("results/report/data_cards.html", caption="../report/tables.rst", category="data"),
        provenance=report_if_built(
            "results/report/provenance.html", caption="../report/tables.rst", category="provenance"
        ),
        reproduction=[
            report_if_built(
                f"results/{p}/reproduction.md",
                caption="../report/reproduction.rst",
                category="reproduction cards",
                labels={"paper": p},
            )
            for p in CARD_PAPERS
        ],
    log:
        "logs/report/tables.log",
    conda:
        "../../envs/ldprepro.yaml"
    threads: 1
    resources:
        **res("tables"),
    params:
        figures=FIGURE_REGISTRY,
        job_logs=REPORT_JOB_LOGS,
        unavailable={ds: UNAVAILABLE_ALL[ds] for ds in REPORT_DATASETS if ds in UNAVAILABLE_ALL},
        card_papers=CARD_PAPERS,
        # the cards read the declared readings: a declaration's edit reruns this job
        declarations=[declarations(f["paper"], f["figure"]) for f in FIGURE_REGISTRY],
        code=code("report_tables.py"),
    script:
        "../scripts/report_tables.py"


# Paper 004's time figures: the rank agreement of the cost model with CPU time (docs/papers/lremh.md links it).
LREMH_AGREEMENT = [
    f"results/lremh/{fig}/cost_time_agreement.json" for fig, (_, k) in LREMH_FIGURES.items() if k == "time"
]


# README material for every registered figure: thumbnails, the verdict table and the "Results at a
# glance" block (committed after a paper-scale run: `snakemake --cores N readme_figures`; splice the
# block into README.md with `python -m ldprepro.report docs/figures/at_a_glance.md README.md`).
rule readme_figures:
    input:
        figures=[f"figures/{f['paper']}/{f['figure']}.png" for f in FIGURE_REGISTRY],
        claims=REPORT_CLAIMS,
        benchmark=["results/benchmark/winners.md"] if BENCHMARK else [],
        benchmark_figures=[f"figures/benchmark/{t}_winners.png" for t in BENCHMARK],
        cards=REPORT_CARDS,
        lremh_agreement=LREMH_AGREEMENT,
    output:
        thumbnails=[f"docs/figures/{f['paper']}_{f['figure']}.png" for f in FIGURE_REGISTRY],
        verdicts="docs/figures/verdicts.md",
        glance="docs/figures/at_a_glance.md",
        benchmark=["docs/benchmark.md"] if BENCHMARK else [],
        benchmark_thumbnails=[f"docs/figures/benchmark_{t}_winners.png" for t in BENCHMARK],
        datasets="docs/figures/datasets.md",
        lremh_agreement=["docs/figures/lremh_cost_agreement.md"] if LREMH_AGREEMENT else [],
    log:
        "logs/readme_figures.log",
    conda:
        "../../envs/ldprepro.yaml"
    threads: 1
    resources:
        **res("tables"),
    params:
        figures=FIGURE_REGISTRY,
        code=code("readme_figures.py"),
    script:
        "../scripts/readme_figures.py"


# Report captions generated from each figure's claims table (ldprepro.report.captions): its title, the
# paper's claim, our verdict and test per claim, the parameters, the panels not available here.
CAPTIONS = {(f["paper"], f["figure"]): f for f in FIGURE_REGISTRY}
ALL_TARGETS.extend(f"results/{p}/{fig}/caption.rst" for p, fig in CAPTIONS)


# Every figure rule also writes its report caption and the forest plot of its claims
# (common.smk figure_report_outputs, ldprepro.report.figure_report).
ALL_TARGETS.extend(f"results/{p}/{fig}/claims_forest.png" for p, fig in CAPTIONS)


localrules:
    report_tables,
    readme_figures,
