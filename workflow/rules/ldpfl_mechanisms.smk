# Mechanism-level figures that need no dataset: paper 002 (ldpfl) Fig. 1 and Fig. 4.
#   results/ldpfl/fig1/<mechanism>.parquet   tidy rows (analytic curve + Monte-Carlo repetitions)
#   results/ldpfl/fig1/summary.parquet       mean, std, 95% CI per (mechanism, ε, kind)
#   results/ldpfl/fig1/claims.parquet        the paper's claims about the figure and our verdicts
#   figures/ldpfl/fig1.png, .svg


if "ldpfl" in config and "fig1" in config["ldpfl"]:
    LDPFL_FIG1 = figure_params("ldpfl", "fig1")
    ALL_TARGETS.extend(["figures/ldpfl/fig1.png", "figures/ldpfl/fig1.svg"])
    register_figure("ldpfl", "fig1", "worst-case noise variance vs ε")

    # one job draws every mechanism's rows (seconds each: one process pays the start-up once)
    rule ldpfl_fig1_mechanism:
        output:
            # in the order of params.mechanisms
            expand("results/ldpfl/fig1/{mechanism}.parquet", mechanism=LDPFL_FIG1["mechanisms"]),
        log:
            "logs/ldpfl/fig1/mechanisms.log",
        group:
            "ldpfl_fig1"
        conda:
            "../../envs/ldprepro.yaml"
        threads: 1
        resources:
            **res("ldpfl_fig1_mechanism", entry={**LDPFL_FIG1, "job_mechanisms": LDPFL_FIG1["mechanisms"]}),
        params:
            fig=compute_params(LDPFL_FIG1),
            mechanisms=LDPFL_FIG1["mechanisms"],
            seed=config["seed"],
            code=code("ldpfl_fig1_mechanism.py"),
        script:
            "../scripts/ldpfl_fig1_mechanism.py"

    rule ldpfl_fig1:
        input:
            **figure_report_inputs("ldpfl", "fig1"),
            jobs=expand("results/ldpfl/fig1/{mechanism}.parquet", mechanism=LDPFL_FIG1["mechanisms"]),
        output:
            **figure_report_outputs("ldpfl", "fig1"),
            summary="results/ldpfl/fig1/summary.parquet",
            claims="results/ldpfl/fig1/claims.parquet",
            claim_points="results/ldpfl/fig1/claim_points.parquet",
            png=report_if_built("figures/ldpfl/fig1.png", caption=figure_caption("ldpfl", "fig1"), category="ldpfl"),
            svg="figures/ldpfl/fig1.svg",
        log:
            "logs/ldpfl/fig1/figure.log",
        group:
            "ldpfl_fig1"
        conda:
            "../../envs/ldprepro.yaml"
        threads: 1
        resources:
            **res("render"),
        params:
            **figure_report_params("ldpfl", "fig1"),
            fig=LDPFL_FIG1,
            code=code("ldpfl_fig1_figure.py"),
            declarations=declarations("ldpfl", "fig1"),
        script:
            "../scripts/ldpfl_fig1_figure.py"


if "ldpfl" in config and "fig4" in config["ldpfl"]:
    LDPFL_FIG4 = figure_params("ldpfl", "fig4")
    ALL_TARGETS.extend(["figures/ldpfl/fig4.png", "figures/ldpfl/fig4.svg"])
    register_figure("ldpfl", "fig4", "PM-OPT output density")

    rule ldpfl_fig4:
        input:
            **figure_report_inputs("ldpfl", "fig4"),
        output:
            **figure_report_outputs("ldpfl", "fig4"),
            results="results/ldpfl/fig4/{}.parquet".format(LDPFL_FIG4["mechanism"]),
            claims="results/ldpfl/fig4/claims.parquet",
            claim_points="results/ldpfl/fig4/claim_points.parquet",
            png=report_if_built("figures/ldpfl/fig4.png", caption=figure_caption("ldpfl", "fig4"), category="ldpfl"),
            svg="figures/ldpfl/fig4.svg",
        log:
            "logs/ldpfl/fig4/figure.log",
        conda:
            "../../envs/ldprepro.yaml"
        threads: 1
        resources:
            **res("ldpfl_fig4", entry=LDPFL_FIG4),
        params:
            **figure_report_params("ldpfl", "fig4"),
            fig=LDPFL_FIG4,
            seed=config["seed"],
            code=code("ldpfl_fig4.py"),
            declarations=declarations("ldpfl", "fig4"),
        script:
            "../scripts/ldpfl_fig4.py"
