# Privacy audit (issue 8): every mechanism and protocol the pipeline runs, at a grid of ε.
#   results/audit/<family>.parquet   one per family (numeric, multidim, frequency, graded, histogram),
#                                    all from one job (each family is seconds of work)
#   results/audit/audit.parquet      all rows; figures/audit/audit.png, .svg


if "audit" in config:
    AUDIT = figure_params("audit")
    AUDIT_FAMILIES = ["numeric", "multidim", "frequency", "graded", "histogram"]
    ALL_TARGETS.extend(["results/audit/audit.parquet", "figures/audit/audit.png", "figures/audit/audit.svg"])

    rule audit_families:
        output:
            expand("results/audit/{family}.parquet", family=AUDIT_FAMILIES),
        log:
            "logs/audit/families.log",
        # long chains (the benchmark and audit tables, LREMH's EM fits) start first, so that
        # the run does not end on one of them with a core idle
        priority: 1
        group:
            "audit"
        conda:
            "../../envs/ldprepro.yaml"
        threads: 1
        resources:
            **res("audit_family", entry=AUDIT | {"job_families": len(AUDIT_FAMILIES)}),
        params:
            cfg=AUDIT,
            families=AUDIT_FAMILIES,
            seed=config["seed"],
            code=code("audit_families.py"),
        script:
            "../scripts/audit_families.py"

    rule audit:
        input:
            expand("results/audit/{family}.parquet", family=AUDIT_FAMILIES),
        output:
            table="results/audit/audit.parquet",
            png=report_if_built("figures/audit/audit.png", caption="../report/audit.rst", category="audit"),
            svg="figures/audit/audit.svg",
        log:
            "logs/audit/table.log",
        # long chains (the benchmark and audit tables, LREMH's EM fits) start first, so that
        # the run does not end on one of them with a core idle
        priority: 1
        group:
            "audit"
        conda:
            "../../envs/ldprepro.yaml"
        threads: 1
        resources:
            **res("render"),
        params:
            code=code("audit_table.py"),
        script:
            "../scripts/audit_table.py"
