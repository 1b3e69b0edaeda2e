"""Where every CPU-second of one pipeline run went (issue 27.1), for timing/figure_times.py.

The run's CPU is split into parts that add up to it exactly:

* **Snakemake's own process** (DAG, scheduling, file checks, writing each job's script): measured by
  ``timing/run_workflow.py`` as its ``RUSAGE_SELF``;
* **each job's own process**, from the ``resources:`` line every job logs at exit
  (ldprepro.pipeline.jobsetup): its CPU, split into the **fixed cost** (``setup_cpu_s``: the
  interpreter, Snakemake's script preamble and the imports, up to the script's ``ready()``) and its
  **work** (the rest: reading inputs, computing, writing);
* **outside the jobs' own lines**: the run's ``RUSAGE_CHILDREN`` minus the jobs' lines (the shells
  Snakemake starts the jobs in; what a job's process spends after its line, which was the
  interpreter's teardown until ``jobsetup.done`` ended finished jobs without it; any job that logs no
  line).

Beside each rule's work is its **floor** where one is modelled: the random numbers of the Monte-Carlo
jobs (one uniform per reported user per repetition; two per training user per fit for LDP-SGD), one
pass over the training data per fit for LDP-SGD (4·n·d multiply-adds: X·θ and the gradient), and
the EM iterations of LREMH (2·N·m multiply-adds per iteration on m candidates, from the iterations
and candidates its jobs record), and for the cross-paper benchmark's Monte-Carlo jobs, from the rows
they record, one uniform per reported user per repetition (mean) or one random number per support
count per repetition (frequency: the oracles draw their support counts from their exact law), each priced at a rate measured in the same run
(``uniform_seconds_per_draw``, ``seconds_per_multiply_add``; LREMH's at a matrix product's rate,
``seconds_per_matmul_multiply_add``, the fastest way any of its estimators does that arithmetic).
(The ``cost_ops`` of ldprepro.papers.lremh.cost count operations from the paper's algorithms, not
from this implementation, and are not a floor of it: priced at the matrix-vector rate they exceed
the jobs' CPU.)
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from ldprepro.benchmark.naming import job_of_panel_id
from ldprepro.experiments.kinds import KINDS
from ldprepro.pipeline import resources as R
from ldprepro.pipeline.jobsetup import logged_resources

from .bench_common import min_cpu_spread


def read_job_logs(logs: Path) -> pd.DataFrame:
    """One row per job log under ``logs`` with a ``resources:`` line: its path (relative, no
    suffix), rule, CPU, fixed-cost CPU (NaN for a log written before ``ready()`` existed), wall,
    peak RSS and the kernel's part of the CPU (``sys_cpu_s``, NaN in a log from before it was
    logged). The last line counts (a rerun job's log is rewritten)."""
    rows = []
    for path in sorted(logs.rglob("*.log")):
        line = logged_resources(path.read_text(encoding="utf-8", errors="replace"))
        if line is not None:
            rows.append({"log": path.relative_to(logs).with_suffix("").as_posix(), **line})
    return pd.DataFrame(rows, columns=["log", "rule", "cpu_s", "setup_cpu_s", "wall_s", "max_rss_mb", "sys_cpu_s"])


def seconds_per_multiply_add(n: int = 2_000_000, d: int = 32) -> float:
    """CPU seconds per multiply-add of one pass over an n × d float64 matrix (``X @ θ``, numpy's
    BLAS matrix-vector product): the minimum over repeats spread in time (``bench_common.min_cpu_spread``)."""
    X = np.random.default_rng(0).random((n, d))
    theta = np.ones(d)
    return min_cpu_spread(lambda: X @ theta) / (n * d)


def seconds_per_matmul_multiply_add(size: int = 512) -> float:
    """CPU seconds per multiply-add of a float64 matrix product (``A @ B``, size × size, BLAS on one
    thread): the fastest way any of the LREMH estimators does its EM arithmetic (the factorised EM's
    contractions are such products; the explicit EM's matrix-vector products are slower). The
    minimum over repeats spread in time (``bench_common.min_cpu_spread``)."""
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(0)
    a, b = rng.random((size, size)), rng.random((size, size))
    with threadpool_limits(limits=1):
        return min_cpu_spread(lambda: a @ b) / size**3


def lremh_em_multiply_adds(results: Path) -> dict[str, float]:
    """{job log name ('lremh/<experiment>'): the multiply-adds of every EM iteration its runs did},
    from the AVD figures' per-method tables ``results/lremh/<figure>/<experiment>__<method>.parquet``
    (rows ``iterations`` and ``candidates`` per estimate, with ``n_users``). An EM iteration on m
    candidates and N users is at least 2·N·m multiply-adds (the E-step's normalisers Z_i = Σ_ω θ(ω)
    P(T^i|ω) and the M-step's Σ_i P(T^i|ω)/Z_i; docs/papers/lremh.md §4.2), whatever the
    implementation; the likelihood table, the LASSO and everything else are left out, so this
    counts less than the work done (a floor)."""
    out: dict[str, float] = {}
    for path in sorted((results / "lremh").glob("*/*__*.parquet")):
        try:
            table = pd.read_parquet(path)
        except (OSError, ValueError):
            continue
        if not {"metric", "value", "n_users"} <= set(table.columns):
            continue
        keys = [c for c in table.columns if c not in ("metric", "value")]
        wide = table[table["metric"].isin(["iterations", "candidates"])].pivot_table(
            index=keys, columns="metric", values="value", aggfunc="first"
        )
        if not {"iterations", "candidates"} <= set(wide.columns):
            continue
        n_users = wide.index.get_level_values("n_users").to_numpy(dtype=float)
        madds = float((2.0 * n_users * wide["candidates"].to_numpy() * wide["iterations"].to_numpy()).sum())
        if madds > 0:
            experiment = path.stem.split("__")[0]
            out[f"lremh/{experiment}"] = out.get(f"lremh/{experiment}", 0.0) + madds
    return out


def benchmark_draws(results: Path) -> dict[str, float]:
    """{job log name ('benchmark/<task>/<dataset>', or a (k, ε)-plane job's 'benchmark/frequency/plane__<distribution>',
    summed over the job's panels): the random numbers its repetitions need at least},
    from the rows the benchmark's Monte-Carlo jobs record (``results/benchmark/<task>/<panel>.parquet``,
    one ``sq_error`` row per mechanism, ε and repetition): a mean repetition reports ``n_users``
    users (one uniform each), a frequency repetition ``n_attributes`` = k support counts (one random
    number each, drawn from their law)."""
    per_row = {"mean": "n_users", "frequency": "n_attributes"}
    out: dict[str, float] = {}
    for task, column in per_row.items():
        for path in sorted((results / "benchmark" / task).glob("*.parquet")):
            try:
                table = pd.read_parquet(path, columns=["metric", column])
            except (OSError, ValueError, KeyError):
                continue
            draws = float(table.loc[table["metric"] == "sq_error", column].astype(float).sum())
            if draws > 0:
                job = f"benchmark/{task}/{job_of_panel_id(path.stem)}"
                out[job] = out.get(job, 0.0) + draws
    return out


def job_floors(
    jobs: pd.DataFrame,
    job_floor,
    sec_per_draw: float,
    sec_per_madd: float,
    lremh_madds: dict,
    sec_per_mm_madd: float,
    bench_draws: dict | None = None,
) -> pd.Series:
    """Each job's floor CPU seconds (NaN where none is modelled). ``job_floor(log) -> {fits, flops,
    random_numbers} | None`` models the figure jobs (timing/figure_times.py ``job_floor``); the SGD
    jobs' floor is the larger of their random numbers and their passes over the data; an LREMH job's
    is its EM iterations' multiply-adds (``lremh_madds``, :func:`lremh_em_multiply_adds`) at the
    matrix-product rate ``sec_per_mm_madd``; a benchmark Monte-Carlo job's is its random numbers
    (``bench_draws``, :func:`benchmark_draws`)."""
    bench_draws = bench_draws or {}
    floors = []
    for log in jobs["log"]:
        model = job_floor(log)
        if model is not None and (model["random_numbers"] or model["flops"]):  # else drawn from sufficient statistics
            draws = model["random_numbers"] * sec_per_draw
            data_pass = model["flops"] / 4.0 * 2.0 * sec_per_madd  # 4·n·d flops = 2 passes of n·d multiply-adds
            floors.append(max(draws, data_pass))
        elif log in lremh_madds:
            floors.append(lremh_madds[log] * sec_per_mm_madd)
        elif log in bench_draws:
            floors.append(bench_draws[log] * sec_per_draw)
        else:
            floors.append(math.nan)
    return pd.Series(floors, index=jobs.index, dtype=float)


def accounts(jobs: pd.DataFrame, run: dict | None) -> dict:
    """The parts of the run's CPU: per rule (jobs, CPU, fixed cost, work, floor of the modelled
    jobs and their CPU), and the totals with Snakemake's own process and what lies outside the jobs'
    lines (when ``run``, timing/run_workflow.py's record, is given)."""
    jobs = jobs.assign(work_cpu_s=jobs["cpu_s"] - jobs["setup_cpu_s"])
    modelled = jobs.dropna(subset=["floor_s"])
    per_rule = (
        jobs.groupby("family", sort=True)
        .agg(
            jobs=("log", "size"),
            cpu_s=("cpu_s", "sum"),
            setup_cpu_s=("setup_cpu_s", "sum"),
            work_cpu_s=("work_cpu_s", "sum"),
            longest_wall_s=("wall_s", "max"),
            max_rss_mb=("max_rss_mb", "max"),
            sys_cpu_s=("sys_cpu_s", "sum"),
        )
        .join(
            modelled.groupby("family").agg(
                floor_s=("floor_s", "sum"), floor_jobs=("log", "size"), floor_jobs_cpu_s=("cpu_s", "sum")
            )
        )
        .reset_index()
    )
    totals = {
        "jobs": int(len(jobs)),
        "jobs_cpu_s": float(jobs["cpu_s"].sum()),
        "setup_cpu_s": float(jobs["setup_cpu_s"].sum()),
        "jobs_without_setup": int(jobs["setup_cpu_s"].isna().sum()),
        "work_cpu_s": float(jobs["work_cpu_s"].sum()),
        "floor_s": float(modelled["floor_s"].sum()),
        "floor_jobs_cpu_s": float(modelled["cpu_s"].sum()),
        "sys_cpu_s": float(jobs["sys_cpu_s"].sum()),
        "jobs_with_sys": int(jobs["sys_cpu_s"].notna().sum()),
    }
    if run is not None:
        outside = run["children_cpu_s"] - totals["jobs_cpu_s"]
        total = run["snakemake_cpu_s"] + run["children_cpu_s"]
        fixed = run["snakemake_cpu_s"] + totals["setup_cpu_s"] + outside
        totals.update(
            snakemake_cpu_s=run["snakemake_cpu_s"],
            outside_jobs_cpu_s=outside,
            run_cpu_s=total,
            run_wall_s=run["wall_s"],
            fixed_cpu_s=fixed,
            fixed_share=fixed / total if total > 0 else math.nan,
            cores=run["cores"],
            command=run["command"],
            load_before=run.get("load_before"),
        )
    return {"rules": per_rule.to_dict("records"), "totals": totals}


def _s(x, digits=1) -> str:
    return "—" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:,.{digits}f} s"


def markdown(acc: dict, sec_per_draw: float, sec_per_madd: float, sec_per_mm_madd: float | None = None) -> list[str]:
    """The accounting section of figure_times.md."""
    t = acc["totals"]
    lines = ["## Where every CPU-second went", ""]
    if "run_cpu_s" in t:
        share = t["fixed_share"]
        lines += [
            f"`{t['command']}` took {_s(t['run_wall_s'])} wall on {t['cores']} cores"
            + (f" (load average {t['load_before']:.2f} when it started)" if t.get("load_before") is not None else "")
            + f" and {_s(t['run_cpu_s'])} CPU in all: Snakemake's own process "
            f"{_s(t['snakemake_cpu_s'])}, the {t['jobs']} jobs' own processes {_s(t['jobs_cpu_s'])} (of which "
            f"{_s(t['setup_cpu_s'])} fixed cost: interpreter, script preamble and imports up to `ready()`), and "
            f"{_s(t['outside_jobs_cpu_s'])} outside the jobs' own lines (the shells the jobs start in, and each process after its line). Fixed cost "
            f"(Snakemake + the jobs' start-up + outside) is {_s(t['fixed_cpu_s'])}, **{share:.1%} of the run's CPU**; "
            f"the jobs' work is {_s(t['work_cpu_s'])}.",
            "",
        ]
    else:
        lines += [
            f"The {t['jobs']} jobs' own processes took {_s(t['jobs_cpu_s'])} ({_s(t['setup_cpu_s'])} fixed cost); "
            "run the workflow through timing/run_workflow.py to account for Snakemake's own process.",
            "",
        ]
    if t.get("jobs_with_sys"):
        lines += [
            f"Of the jobs' CPU, {_s(t['sys_cpu_s'])} was the kernel's (system time: mapping and zeroing memory, "
            f"reading and writing files; {t['jobs_with_sys']} of {t['jobs']} job logs report it).",
            "",
        ]
    if t.get("jobs_without_setup"):
        lines += [f"{t['jobs_without_setup']} job logs have no fixed-cost mark (written before `ready()`).", ""]
    lines += [
        f"Floors priced at {sec_per_draw * 1e9:.2f} ns per uniform and {sec_per_madd * 1e9:.3f} ns per "
        "multiply-add (one pass of `X @ θ` over 2 M × 32 float64)"
        + (
            ""
            if sec_per_mm_madd is None
            else f"; LREMH's EM iterations (2·N·m multiply-adds each) at {sec_per_mm_madd * 1e9:.3f} ns per "
            "multiply-add (a 512 × 512 matrix product on one thread)"
        )
        + ", all measured in this run. The floor column covers the modelled jobs only; 'CPU / floor' compares like "
        "with like.",
        "",
        "| rule family | jobs | CPU | fixed cost | work | longest job (wall) | max RSS | floor (modelled jobs) | "
        "CPU / floor |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in sorted(acc["rules"], key=lambda r: -r["cpu_s"]):
        floor = r.get("floor_s")
        have = floor is not None and isinstance(floor, float) and math.isfinite(floor) and floor > 0
        floor_txt = _s(floor, 2) + (f" ({int(r['floor_jobs'])}/{r['jobs']} jobs)" if have else "") if have else "—"
        ratio = f"{r['floor_jobs_cpu_s'] / floor:,.1f}×" if have else "—"
        lines.append(
            f"| {r['family']} | {r['jobs']} | {_s(r['cpu_s'])} | {_s(r['setup_cpu_s'])} | {_s(r['work_cpu_s'])} "
            f"| {_s(r['longest_wall_s'])} | {r['max_rss_mb']:,.0f} MB | {floor_txt} | {ratio} |"
        )
    lines += [
        f"| **all jobs** | {t['jobs']} | {_s(t['jobs_cpu_s'])} | {_s(t['setup_cpu_s'])} | {_s(t['work_cpu_s'])} "
        f"| | | {_s(t['floor_s'], 2)} | "
        + (f"{t['floor_jobs_cpu_s'] / t['floor_s']:,.1f}× |" if t["floor_s"] > 0 else "— |"),
    ]
    if "run_cpu_s" in t:
        lines += [
            f"| Snakemake's own process | 1 | {_s(t['snakemake_cpu_s'])} | {_s(t['snakemake_cpu_s'])} | | | | | |",
            f"| outside the jobs' lines | | {_s(t['outside_jobs_cpu_s'])} | {_s(t['outside_jobs_cpu_s'])} | | | | | |",
            f"| **the run** | | {_s(t['run_cpu_s'])} | {_s(t['fixed_cpu_s'])} | {_s(t['work_cpu_s'])} | | | | |",
        ]
    return lines + [""]


def job_families(jobs: pd.DataFrame, config: dict) -> list[str]:
    """Each job's rule family, as the workflow sizes its jobs (ldprepro.pipeline.resources.rule_family;
    a figure job's is its kind's, from its log's ``<paper>/<figure>`` in ``config``): the rules made
    one per figure, dataset or task grouped (``figure_dct_fig2`` → ``render``). A rule that declares no
    resources, a log from before the rule was logged (``?``) or a figure no longer in ``config`` is its
    own group."""
    out = []
    for log, rule in zip(jobs["log"], jobs["rule"]):
        family = None
        if R.runs_a_kind(rule):
            paper, figure = log.split("/")[:2]
            section = config.get(paper) or (config.get("papers") or {}).get(paper) or {}
            kind = (section.get(figure) or {}).get("kind") if isinstance(section, dict) else None
            family = KINDS[kind].resource_family if kind in KINDS else None
        else:
            family = R.rule_family(rule)
        out.append(family or rule)
    return out
