# The cross-paper benchmark (issue 18): every registered mechanism on every dataset obtainable
# here, at one ε grid, under common random numbers (docs/benchmark.md).
#   results/benchmark/<task>/<panel>.parquet   every mechanism, ε, repetition; one job per task × dataset
#   results/benchmark/{benchmark,privacy,ranked,winners}.parquet, winners.md
#   figures/benchmark/<task>_winners.png|svg, <task>_ratio.png|svg
#   frequency with a `plane`: synthetic panels over oracle_k (one job per distribution, every k),
#   figures/benchmark/frequency_plane*.png|svg and results/benchmark/frequency_claims.parquet (the
#   plane's claims, declared under benchmark.frequency.claims, checked now naming their file)
from ldprepro.benchmark.declared import claim_oracle_problems
from ldprepro.benchmark.naming import job_panels, panel_id, plane_panels

BENCHMARK_TASKS = ["mean", "frequency", "sgd"]
BENCHMARK = {}
BENCHMARK_UNAVAILABLE = {}
BENCHMARK_CLAIMS = []
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
    if BENCHMARK.get("frequency", {}).get("claims"):
        _key = "benchmark.frequency.claims"
        _where = f"{CONFIG_ORIGIN.of(_key)} {_key}"
        BENCHMARK_CLAIMS = validate_claims(BENCHMARK["frequency"]["claims"], _where, import_functions=False)
        claims_in_scope(BENCHMARK_CLAIMS, {"eps": _bench["eps"]}, _where)  # an `eps` scope selecting no ε
        _problems = claim_oracle_problems(BENCHMARK_CLAIMS, _where)
        if _problems:
            raise ValueError("\n".join(_problems))
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

    # One job per task × dataset: every panel of the task on that dataset, the data loaded once (a
    # panel is often under a second of work, under the ~0.4 CPU-s a job process costs to start); the
    # synthetic (k, ε)-plane panels one job per distribution, every k. Unobtainable datasets too:
    # `rule all` does not ask for them, asked for explicitly their data rule says what to do.
    for _task, _entry in BENCHMARK.items():
        _compute = compute_params({k: v for k, v in _entry.items() if k != "panels"})
        for _job, _panels in job_panels(_entry["panels"]).items():
            _dataset = next(iter(_panels.values())).get("dataset")  # none: synthetic, generated

            rule:
                name:
                    f"benchmark_job_{_task}_{_job}"
                input:
                    **(
                        {"parquet": f"data/processed/{_dataset}.parquet", "card": f"data/processed/{_dataset}.json"}
                        if _dataset
                        else {}
                    ),
                output:
                    [f"results/benchmark/{_task}/{pid}.parquet" for pid in _panels],
                log:
                    f"logs/benchmark/{_task}/{_job}.log",
                # long chains (the benchmark and audit tables, LREMH's EM fits) start first, so that
                # the run does not end on one of them with a core idle
                priority: 1
                conda:
                    "../../envs/ldprepro.yaml"
                threads: 1
                resources:
                    **res(
                        f"benchmark_job.{_task}",
                        entry={k: v for k, v in _entry.items() if k != "panels"} | {"job_panels": len(_panels)},
                        card="card",
                    ),
                params:
                    entry=_compute,
                    task=_task,
                    panels=list(_panels.values()),
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
            claims=BENCHMARK_CLAIMS,
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
