# The calibration page (issues 26.6, 52): docs/calibration.md, the claim engine's false-verdict rates
# per direction on A/A comparisons and at TOST margins for every test path on the figures' error laws,
# the coverage of its intervals and its power, measured (ldprepro.claims.calibration, _laws). An
# explicit target, never part of `rule all` (it rewrites a tracked file):
#   snakemake --cores 1 calibration
# It takes about 12 minutes on one core (696 s measured on the 2-core development machine under load).
# smoke: a handful of replications at two n, to exercise the target (the tests call the module).
CALIBRATION = {
    "paper": {"replications": 1000, "points": 5, "coverage_replications": 1000, "users": 2000},
    "smoke": {
        "replications": 20,
        "points": 5,
        "coverage_replications": 20,
        "users": 300,
        "ns": [10, 20],
        "law_replications": 10,
        "heavy_replications": 4,
    },
}


rule calibration:
    output:
        "docs/calibration.md",
    log:
        "logs/calibration.log",
    conda:
        "../../envs/ldprepro.yaml"
    threads: 1
    resources:
        mem_mb=800,
        runtime=30,
    params:
        settings=CALIBRATION["smoke" if config["scale"] == "smoke" else "paper"],
        code=code("calibration.py", plugins=False),
    script:
        "../scripts/calibration.py"
