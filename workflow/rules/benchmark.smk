# The cross-paper benchmark (issue 18): every registered mechanism on every dataset obtainable
# here, at one ε grid, under common random numbers (docs/benchmark.md).
#   results/benchmark/<task>/<panel>.parquet   one job per task × panel: every mechanism, ε, repetition
#   results/benchmark/{benchmark,privacy,ranked,winners}.parquet, winners.md
#   figures/benchmark/<task>_winners.png|svg, <task>_ratio.png|svg
#   frequency with a `plane`: synthetic panels over oracle_k (one job per distribution, every k),
#   figures/benchmark/frequency_plane*.png|svg and results/benchmark/frequency_claims.parquet
import re

from ldprepro.benchmark.naming import panel_id, plane_job_id, plane_job_panels, plane_panels

BENCHMARK_TASKS = ["mean", "frequency", "sgd"]
BENCHMARK = {}
BENCHMARK_UNAVAILABLE = {}
if "benchmark" in config:
    _bench = config["benchmark"]
    for _task in BENCHMARK_TASKS:
        if _task not in _bench:
            continue
        _entry = {k: v for k, v in _bench[_task].items() if k != "smoke"}
        if config["scale"] == "smoke":
            _entry.update(_bench[_task].get("smoke", {}))
        _entry.update(eps=_bench["eps"], mechanisms=_bench.get("mechanisms", "all"))
        _entry["panels"] = {panel_id(p): p for p in _bench[_task]["panels"] + plane_panels(_entry)}
        BENCHMARK[_task] = _entry
        BENCHMARK_UNAVAILABLE.update(
            unavailable_datasets({p["dataset"] for p in _entry["panels"].values() if "dataset" in p})
        )
    BENCHMARK_JOBS = [
        f"results/benchmark/{task}/{pid}.parquet"
        for task, entry in BENCHMARK.items()
        for pid, p in entry["panels"].items()
        if p.get("dataset") not in BENCHMARK_UNAVAILABLE
    ]
    BENCHMARK_FIGURES = [
        f"figures/benchmark/{task}_{kind}.{ext}"
        for task in BENCHMARK
        for kind in ("winners", "ratio")
        for ext in ("png", "svg")
    ] + [
        f"figures/benchmark/frequency_{kind}.{ext}"
        for kind in ("plane", "plane_theory")
        for ext in ("png", "svg")
        if BENCHMARK.get("frequency", {}).get("plane")
    ]
    ALL_TARGETS.extend(["results/benchmark/winners.parquet", *BENCHMARK_FIGURES])
    PRODUCT_NEEDS.append(("results/benchmark/winners.parquet", BENCHMARK_UNAVAILABLE))

    rule benchmark_job:
        input:
            # synthetic (k, ε)-plane panels need no data
            parquet=lambda w: benchmark_panel_data(BENCHMARK, w, "parquet"),
            card=lambda w: benchmark_panel_data(BENCHMARK, w, "json"),
        output:
            "results/benchmark/{task}/{panel}.parquet",
        log:
            "logs/benchmark/{task}/{panel}.log",
        wildcard_constraints:
            task="|".join(BENCHMARK_TASKS),
            panel=r"(?!plane__)[A-Za-z0-9_\-]+",  # not a (k, ε)-plane panel: benchmark_plane_job
        # long chains (the benchmark and audit tables, LREMH's EM fits) start first, so that
        # the run does not end on one of them with a core idle
        priority: 1
        conda:
            "../../envs/ldprepro.yaml"
        threads: 1
        resources:
            **res(lambda w: f"benchmark_job.{w.task}", entry=lambda w: BENCHMARK[w.task], card="card"),
        params:
            entry=lambda w: compute_params({k: v for k, v in BENCHMARK[w.task].items() if k != "panels"}),
            task=lambda w: w.task,
            panels=lambda w: [BENCHMARK[w.task]["panels"][w.panel]],
            seed=config["seed"],
            code=code("benchmark_job.py"),
        script:
            "../scripts/benchmark_job.py"

    if BENCHMARK.get("frequency", {}).get("plane"):

        # The (k, ε)-plane panels of one distribution in one job, k after k: a panel at small k is a
        # fraction of a second of work, under the ~0.4 CPU-s every job process costs to start
        rule benchmark_plane_job:
            output:
                [
                    f"results/benchmark/frequency/{pid}.parquet"
                    for pid in plane_job_panels(BENCHMARK["frequency"], "{distribution}")
                ],
            log:
                f"logs/benchmark/frequency/{plane_job_id('{distribution}')}.log",
            wildcard_constraints:
                distribution="|".join(map(re.escape, BENCHMARK["frequency"]["plane"]["distributions"])),
            priority: 1
            conda:
                "../../envs/ldprepro.yaml"
            threads: 1
            resources:
                **res("benchmark_job.frequency", entry=lambda w: BENCHMARK["frequency"]),
            params:
                entry=compute_params({k: v for k, v in BENCHMARK["frequency"].items() if k != "panels"}),
                task="frequency",
                panels=lambda w: list(plane_job_panels(BENCHMARK["frequency"], w.distribution).values()),
                seed=config["seed"],
                code=code("benchmark_job.py"),
            script:
                "../scripts/benchmark_job.py"

    rule benchmark_tables:
        input:
            jobs=BENCHMARK_JOBS,
            audit="results/audit/audit.parquet" if "audit" in config else [],
        output:
            results="results/benchmark/benchmark.parquet",
            privacy="results/benchmark/privacy.parquet",
            ranked="results/benchmark/ranked.parquet",
            winners="results/benchmark/winners.parquet",
            claims="results/benchmark/frequency_claims.parquet",
            markdown="results/benchmark/winners.md",
            figures=[
                (
                    report_if_built(f, caption="../report/benchmark.rst", category="benchmark")
                    if f.endswith(".png")
                    else f
                )
                for f in BENCHMARK_FIGURES
            ],
        log:
            "logs/benchmark/tables.log",
        # long chains (the benchmark and audit tables, LREMH's EM fits) start first, so that
        # the run does not end on one of them with a core idle
        priority: 1
        conda:
            "../../envs/ldprepro.yaml"
        threads: 1
        resources:
            **res("render"),
        params:
            tasks=list(BENCHMARK),
            plane=bool(BENCHMARK.get("frequency", {}).get("plane")),
            oracle_k=BENCHMARK.get("frequency", {}).get("oracle_k", []),
            unavailable=BENCHMARK_UNAVAILABLE,
            scale=config["scale"],
            seed=config["seed"],
            code=code("benchmark_tables.py"),
        script:
            "../scripts/benchmark_tables.py"

    rule benchmark:
        input:
            "results/benchmark/winners.parquet",
            BENCHMARK_FIGURES,

    localrules:
        benchmark,
