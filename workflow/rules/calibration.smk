# The calibration page (issue 26.6): docs/calibration.md, the claim engine's false-verdict rates on
# A/A comparisons and the coverage of its intervals, measured (ldprepro.claims.calibration). An
# explicit target, never part of `rule all` (it rewrites a tracked file):
#   snakemake --cores 1 calibration
# smoke: a handful of replications at two n, to exercise the target (the tests call the module).
CALIBRATION = {
    "paper": {"replications": 1000, "points": 5, "coverage_replications": 1000, "users": 2000},
    "smoke": {"replications": 20, "points": 5, "coverage_replications": 20, "users": 300, "ns": [10, 20]},
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
