"""Per-figure cost of a pipeline run, beside its random-number floor (not a test).

    .venv/bin/python -m timing.figure_times [--logs logs] [--run RUN.json] [--before DIR|JSON]
        [--config config.yaml] [--cards data/processed] [--out-dir timing]

Reads the ``resources:`` line every job writes at the end of its log (``logs/<paper>/<fig>/...log``:
its own getrusage CPU seconds, wall seconds and peak RSS in MB, ldprepro.pipeline.jobsetup) and sums
them per figure. Beside each figure of the
Monte-Carlo kinds it puts the floor an exact per-user sampler cannot beat: one uniform per reported
user per repetition (mean figures: users × repetitions × ε × sweep values per job; LDP-SGD figures:
training users × fits), priced at the CPU time of ``Generator.random`` measured in this run (minimum
of repeats spread over seconds, after a warm-up). A mechanism whose mean estimate is drawn from exact sufficient
statistics (Laplace, graded Laplace, Duchi's and Harmony's ±C counts, HierA's level counts on large
data) has no such floor and counts none; its job's CPU still counts, so a panel job that runs it
beside per-user mechanisms reads a little above its per-user mechanisms' ratio.

``--before DIR|JSON`` adds the CPU sums of an earlier run, from its job logs (copy ``logs`` aside
before re-running) or from the ``figure_times.json`` written for it, and the speed-up. ``--run``
adds timing/run_workflow.py's record of the same run (Snakemake's own process, the run's wall).
Writes ``figure_times.json`` and the generated ``figure_times.md``; no number in it is typed by hand.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from ldprepro.pipeline.jobsetup import logged_resources
from ldprepro.pipeline.repetitions import repetitions_run

from . import papers_reps
from .bench_common import min_cpu_spread, pin_allocator
from .cpu_accounts import (
    accounts,
    benchmark_draws,
    job_families,
    job_floors,
    lremh_em_multiply_adds,
    read_job_logs,
    seconds_per_matmul_multiply_add,
    seconds_per_multiply_add,
)
from .cpu_accounts import markdown as cpu_accounts_markdown
from .machine import describe


def job_resources(log: Path) -> tuple[float, float, float] | None:
    """(CPU s, max RSS MB, wall s) from the job's own ``resources:`` log line, if the log has one."""
    if not log.exists():
        return None
    line = logged_resources(log.read_text(encoding="utf-8", errors="replace"))
    return (line["cpu_s"], line["max_rss_mb"], line["wall_s"]) if line else None


def read_jobs(logs: Path) -> pd.DataFrame:
    """One row per job log under ``logs`` that ends in a ``resources:`` line (every job's own
    getrusage record, ldprepro.pipeline.jobsetup): figure key (first two path parts: ``hiera/fig2``,
    ``data/normalise``; a log directly under a stage, ``lremh/adult``, is its own figure), job name,
    wall s, CPU s, max RSS MB."""
    table = read_job_logs(logs)
    rows = []
    for rec in table.to_dict("records"):
        parts = rec["log"].split("/")
        rows.append(
            {
                "paper": parts[0],
                "figure": parts[1] if len(parts) > 2 else parts[-1],
                "job": "/".join(parts[2:]) if len(parts) > 2 else parts[-1],
                "wall_s": rec["wall_s"],
                "cpu_s": rec["cpu_s"],
                "max_rss_mb": rec["max_rss_mb"],
                "cpu_source": "job",
            }
        )
    return pd.DataFrame(rows, columns=["paper", "figure", "job", "wall_s", "cpu_s", "max_rss_mb", "cpu_source"])


def _users(cards: Path, dataset: str, cap) -> int | None:
    card = cards / f"{dataset}.json"
    if not card.exists():
        return None
    n = int(json.loads(card.read_text())["rows_after_cleaning"])
    return min(n, int(cap)) if cap else n


def _combos(entry: dict, mechanism: str) -> int:
    sweep = entry.get("sweep", {})
    default = entry["mechanisms"] if entry.get("kind") == "mean" else ["hiera"]  # as the job runners
    if not sweep or mechanism not in entry.get("sweep_mechanisms", default):
        return 1
    return math.prod(len(v) for v in sweep.values())


def _count(value) -> int:
    return len(value) if isinstance(value, list) else 1


def job_floor(entry: dict, mechanism: str, n_users: int, d: int = 1) -> dict:
    """The floor of one (figure, dataset, mechanism) job at ``entry``'s scale: ``fits``, ``flops``
    and ``random_numbers`` an exact per-user implementation cannot go below.

    - mean estimation: one uniform per reported user per repetition (the job runs
      max(reps, test_reps) repetitions at each ε, sweep value and size), for a mechanism whose
      estimate draws every user's report (none for one drawn from sufficient statistics);
    - LDP-SGD: fits = folds × CV repetitions × |ε| × |discretisations| × |sweep values| × |group
      rules|; per fit 4·n_train·d flops (X·θ and the gradient) and 2 uniforms per training user (an
      attribute index and a report: at least one sampled attribute each).
    """
    eps = len(entry["eps"])
    combos = _combos(entry, mechanism)
    if entry.get("kind") == "sgd":
        folds = int(entry.get("folds", 5))
        fits = folds * int(entry.get("cv_repetitions", 1)) * eps * combos
        fits *= _count(entry.get("discretize")) * _count(entry.get("group_rule", "paper"))
        n_train = n_users * (folds - 1) // folds
        return {"fits": fits, "flops": fits * 4.0 * n_train * d, "random_numbers": fits * n_train * 2.0}
    reps = repetitions_run(entry)
    sizes = [min(int(s), n_users) for s in entry.get("sizes") or [n_users]]
    users = sum(size for e in entry["eps"] for size in sizes if _draws_every_report(entry, mechanism, size, d, e))
    return {"fits": 0, "flops": 0.0, "random_numbers": float(users * reps * combos)}


def _draws_every_report(entry: dict, mechanism: str, n_users: int, d: int, eps: float) -> bool:
    """Whether the mean estimate of ``mechanism`` at ``eps`` draws every user's report on ``n_users``
    (its floor is then a uniform per user); one drawn from sufficient statistics (Laplace's Gamma
    sums, the ±C counts of Duchi and Harmony, the uniform-mixture sums of PM and DCT, HierA's level
    counts on large data, graded Laplace) has no such floor and counts none (``experiments.mean``'s
    ``draws_every_report``)."""
    from ldprepro.experiments.mean import make_collector

    params = (entry.get("mechanism_params") or {}).get(mechanism)
    return make_collector(mechanism, float(eps), d, params).draws_every_report(n_users)


def job_floor_draws(entry: dict, dataset: str, mechanism: str, cards: Path) -> int | None:
    """Uniforms the job of (figure, dataset, mechanism) needs at the configured scale (see
    :func:`job_floor`), or None when the kind is not modelled or the dataset has no card."""
    n = _users(cards, dataset, entry.get("max_users"))
    if n is None or entry.get("kind") not in ("mean", "sgd"):
        return None
    return int(job_floor(entry, mechanism, n)["random_numbers"]) or None  # none drawn per user: no floor


def uniform_seconds_per_draw(n: int = 1_000_000) -> float:
    """CPU seconds per ``Generator.random`` draw: the minimum over repeats spread in time
    (``bench_common.min_cpu_spread``), on a heap that keeps what is freed (``bench_common.pin_allocator``,
    as the jobs' ``keep_freed_memory``), so that the floor does not count page faults: unpinned, the
    same call measured 2.18 and 2.38 ns per draw in two runs of this script."""
    pin_allocator()
    rng = np.random.default_rng(0)
    return min_cpu_spread(lambda: rng.random(n)) / n


def _figure_jobs(config: dict):
    """(paper, figure, entry, panel, mechanism) of every mean / SGD job of ``config``."""
    for paper, section in config.items():
        if not isinstance(section, dict):
            continue
        for figure, entry in section.items():
            if not isinstance(entry, dict) or entry.get("kind") not in ("mean", "sgd"):
                continue
            for panel, mech in itertools.product(entry.get("panels", []), entry.get("mechanisms", [])):
                yield paper, figure, entry, panel, mech


def floors(config: dict, cards: Path) -> dict[tuple[str, str, str], int]:
    """{(paper, figure, job name): floor draws} for every mean / SGD job of ``config``: a job of one
    mechanism (``<dataset>__<mechanism>``) and a panel job of all of them (``<dataset>``, the sum)."""
    out = {}
    for paper, figure, entry, panel, mech in _figure_jobs(config):
        draws = job_floor_draws(entry, panel["dataset"], mech, cards)
        if draws is not None:
            out[(paper, figure, f"{panel['dataset']}__{mech}")] = draws
            key = (paper, figure, panel["dataset"])
            out[key] = out.get(key, 0) + draws
    return out


def _dims(card: dict, entry: dict, panel: dict) -> int:
    """The job's data dimension: LDP-SGD's encoded D ≈ numeric + Σ (k − 1) (an upper bound for
    one-hot), a mean job's attribute count."""
    if entry.get("kind") == "sgd":
        return sum(
            1 if c.get("type") == "numeric" else max(1, len(c.get("categories") or [0, 0]) - 1)
            for c in card.get("columns", [])
        )
    return len(panel.get("columns", [1]))


def floor_models(config: dict, cards: Path) -> dict[str, dict]:
    """{job log name: :func:`job_floor`} for every mean / SGD job of ``config`` whose dataset has a
    card under ``cards``: ``<paper>/<figure>/<dataset>__<mechanism>`` (one mechanism) and
    ``<paper>/<figure>/<dataset>`` (a panel job: the sum over the figure's mechanisms)."""
    out = {}
    for paper, figure, entry, panel, mech in _figure_jobs(config):
        card_path = cards / f"{panel['dataset']}.json"
        if not card_path.exists():
            continue
        card = json.loads(card_path.read_text())
        n = int(card["rows_after_cleaning"])
        n = min(n, int(entry["max_users"])) if entry.get("max_users") else n
        model = job_floor(entry, mech, n, _dims(card, entry, panel))
        out[f"{paper}/{figure}/{panel['dataset']}__{mech}"] = model
        panel_key = f"{paper}/{figure}/{panel['dataset']}"
        before = out.get(panel_key, {"fits": 0, "flops": 0.0, "random_numbers": 0.0})
        out[panel_key] = {k: before[k] + model[k] for k in ("fits", "flops", "random_numbers")}
    return out


def summarise(jobs: pd.DataFrame, floor_draws: dict, sec_per_draw: float) -> pd.DataFrame:
    jobs = jobs.copy()
    jobs["floor_draws"] = [floor_draws.get((p, f, j)) for p, f, j in zip(jobs.paper, jobs.figure, jobs.job)]
    g = jobs.groupby(["paper", "figure"], sort=True)
    out = g.agg(
        jobs=("job", "size"),
        cpu_s=("cpu_s", "sum"),
        wall_s=("wall_s", "sum"),
        longest_job_wall_s=("wall_s", "max"),
        max_rss_mb=("max_rss_mb", "max"),
    )
    modelled = jobs.dropna(subset=["floor_draws"]).groupby(["paper", "figure"])
    out["floor_draws"] = modelled["floor_draws"].sum()
    out["floor_jobs"] = modelled.size().astype("Int64")
    out["floor_cpu_s"] = out["floor_draws"] * sec_per_draw
    # the modelled jobs' CPU over their floor (partially modelled figures compare like with like)
    out["cpu_over_floor"] = modelled["cpu_s"].sum() / out["floor_cpu_s"]
    return out.reset_index()


def before_cpu(before: Path) -> pd.DataFrame:
    """CPU and summed job wall seconds per figure of an earlier run: from its job logs (a directory) or from the
    ``figure_times.json`` this script wrote for it."""
    if before.is_dir():
        sums = read_jobs(before).groupby(["paper", "figure"])[["cpu_s", "wall_s"]].sum()
        return sums.rename(columns={"cpu_s": "before_cpu_s", "wall_s": "before_wall_s"}).reset_index()
    figures = json.loads(before.read_text())["figures"]
    return pd.DataFrame(
        [
            {"paper": f["paper"], "figure": f["figure"], "before_cpu_s": f["cpu_s"], "before_wall_s": f.get("wall_s")}
            for f in figures
        ],
        columns=["paper", "figure", "before_cpu_s", "before_wall_s"],
    )


def before_cpu_exact(before: Path) -> bool:
    """Whether every job of the earlier run has its own getrusage CPU (else some are sampled)."""
    if before.is_dir():
        return True  # a job's log line is its own getrusage total
    totals = json.loads(before.read_text()).get("totals", {})
    return "jobs" in totals and totals.get("jobs_cpu_from_log") == totals["jobs"]


def _fmt(x, unit="", digits=1):
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    return f"{x:,.{digits}f}{unit}"


def markdown(result: dict) -> str:
    lines = [
        "<!-- generated by timing/figure_times.py; do not edit by hand -->",
        "# Per-figure cost of a pipeline run",
        "",
        f"Run read from `{result['logs']}` (each job's own `resources:` log line); floor priced at "
        f"{result['ns_per_uniform']:.2f} ns CPU per `Generator.random` draw, measured "
        f"{result['measured_at']} on {result['machine']}. CPU and wall are sums over the figure's jobs; "
        "the floor is one uniform per reported user per repetition (mean figures; none for a mechanism whose "
        "estimate is drawn from sufficient statistics) or per training user "
        "per fit, plus its attribute index (LDP-SGD figures; `results.md` gives the per-fit RNG and "
        "data-pass floors) for the jobs it models.",
        "",
    ]
    if result.get("note"):
        lines += [f"**Conditions of this run:** {result['note']}", ""]
    has_before = any("before_cpu_s" in r for r in result["figures"])
    if has_before and result["totals"].get("before_cpu_exact"):
        lines += ["The earlier run's CPU is each job's own getrusage total, as is this run's.", ""]
    elif has_before:
        lines += [
            "The earlier run's CPU is Snakemake's sampled value, a lower bound for its jobs longer than "
            "15 s (its logs had no getrusage line); its summed job wall is exact, as is this run's.",
            "",
        ]
    head = "| figure | jobs | CPU | wall (sum) | longest job | max RSS | floor CPU | CPU / floor |"
    sep = "|---|---|---|---|---|---|---|---|"
    if has_before:
        head += " CPU before | wall (sum) before | speed-up (CPU) |"
        sep += "---|---|---|"
    lines += [head, sep]
    for r in result["figures"]:
        floor = r.get("floor_cpu_s")
        ratio = r.get("cpu_over_floor")
        floor_txt = _fmt(floor, " s") + (
            f" ({r['floor_jobs']}/{r['jobs']} jobs)" if floor is not None and r["floor_jobs"] < r["jobs"] else ""
        )
        row = (
            f"| {r['paper']}/{r['figure']} | {r['jobs']} | {_fmt(r['cpu_s'], ' s')} | {_fmt(r['wall_s'], ' s')} "
            f"| {_fmt(r['longest_job_wall_s'], ' s')} | {_fmt(r['max_rss_mb'], ' MB', 0)} | {floor_txt} "
            f"| {_fmt(ratio, '×')} |"
        )
        if has_before:
            before = r.get("before_cpu_s")
            row += (
                f" {_fmt(before, ' s')} | {_fmt(r.get('before_wall_s'), ' s')} "
                f"| {_fmt(before / r['cpu_s'] if before else None, '×')} |"
            )
        lines.append(row)
    t = result["totals"]
    lines += [
        "",
        f"Total: {t['jobs']} jobs, {_fmt(t['cpu_s'], ' s')} CPU, {_fmt(t['wall_s'], ' s')} summed job wall, "
        f"largest job {_fmt(t['max_rss_mb'], ' MB', 0)} RSS; on {result['cpus']} cores the run cannot take less "
        f"than CPU / cores = {_fmt(t['cpu_s'] / result['cpus'] / 60, ' min')}. The cheapest job took "
        f"{_fmt(t['min_job_cpu_s'], ' s')} CPU, a bound on the start-up (interpreter, imports, inputs) "
        f"every job pays: at most {_fmt(t['jobs'] * t['min_job_cpu_s'], ' s')} of the total."
        + (
            f" CPU of {t['jobs_cpu_from_log']} of the {t['jobs']} jobs is their own getrusage total (job log); the "
            "others' is Snakemake's sampled value, which can miss up to 30 s per job."
            if "jobs_cpu_from_log" in t and t["jobs_cpu_from_log"] < t["jobs"]
            else " Every job's CPU is its own getrusage total (its log's resources: line)."
        )
        + (
            f" Before: {_fmt(t['before_cpu_s'], ' s')} CPU, {_fmt(t.get('before_wall_s'), ' s')} summed job wall."
            if "before_cpu_s" in t
            else ""
        ),
        "",
    ]
    return "\n".join(lines)


def _accounts_markdown(result: dict, sec_per_draw: float) -> str:
    acc = result.get("accounts")
    if not acc:
        return ""
    acc = {"rules": acc["rules"], "totals": acc["totals"]}
    mm = result["accounts"].get("ns_per_matmul_multiply_add")
    return "\n" + "\n".join(
        cpu_accounts_markdown(
            acc, sec_per_draw, result["accounts"]["ns_per_multiply_add"] / 1e9, None if mm is None else mm / 1e9
        )
    )


def _extra_markdown(account: dict | None) -> str:
    """The extra repetitions' paragraph (papers_reps.py), when the run's accounts exist."""
    if not account or "extra_repetitions" not in account:
        return ""
    totals = account.get("totals", {})
    return papers_reps.markdown(account["extra_repetitions"], totals.get("run_cpu_s"), totals.get("cores"))


def _clean(v):
    if isinstance(v, (np.integer, int)) and not isinstance(v, bool):
        return int(v)
    if isinstance(v, (np.floating, float)):
        return None if not math.isfinite(float(v)) else float(v)
    return v


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--logs", default="logs", type=Path, help="the run's job logs (their resources: lines)")
    ap.add_argument("--before", type=Path)
    ap.add_argument("--config", default="config.yaml", type=Path)
    ap.add_argument("--cards", default="data/processed", type=Path)
    ap.add_argument("--out-dir", default="timing", type=Path)
    ap.add_argument("--name", default="figure_times", help="output file stem (figure_times.json/.md)")
    ap.add_argument("--note", default="", help="the conditions of the run, printed under the title")
    ap.add_argument("--run", type=Path, help="timing/run_workflow.py's record of the same run")
    ap.add_argument("--results", default="results", type=Path, help="the run's results (LREMH's cost_ops)")
    args = ap.parse_args(argv)

    config = yaml.safe_load(args.config.read_text())
    jobs = read_jobs(args.logs)
    if jobs.empty:
        raise SystemExit(f"{args.logs}: no job log with a resources: line (run the pipeline first)")
    sec = uniform_seconds_per_draw()
    table = summarise(jobs, floors(config, args.cards), sec)
    before = before_cpu(args.before) if args.before else None
    if before is not None:
        table = table.merge(before, on=["paper", "figure"], how="left")
    figures = [
        {k: _clean(v) for k, v in r.items() if not (isinstance(v, float) and math.isnan(v))}
        for r in table.to_dict("records")
    ]
    totals = {
        "jobs": int(table["jobs"].sum()),
        # every job pays the interpreter + imports; the cheapest job of the run bounds that cost
        "min_job_cpu_s": float(jobs["cpu_s"].min()),
        "cpu_s": float(table["cpu_s"].sum()),
        "wall_s": float(table["wall_s"].sum()),
        "max_rss_mb": float(table["max_rss_mb"].max()),
        "jobs_cpu_from_log": int((jobs["cpu_source"] == "job").sum()),
    }
    if before is not None:
        # the earlier run's totals, every figure of it: a figure whose jobs have since been regrouped
        # under another name (the benchmark's per-dataset jobs, the figures drawn together) counts too
        totals["before_cpu_s"] = float(before["before_cpu_s"].sum())
        totals["before_wall_s"] = float(before["before_wall_s"].sum())
        totals["before_cpu_exact"] = before_cpu_exact(args.before)
        # the earlier run's machine, when its record names one (a log directory does not)
        earlier = json.loads(args.before.read_text()).get("machine") if args.before.is_file() else None
        if earlier:
            totals["before_machine"] = earlier
    job_logs = read_job_logs(args.logs)
    account = None
    if not job_logs.empty:
        models = floor_models(config, args.cards)
        sec_madd, sec_mm = seconds_per_multiply_add(), seconds_per_matmul_multiply_add()
        job_logs["family"] = job_families(job_logs, config)
        job_logs["floor_s"] = job_floors(
            job_logs,
            models.get,
            sec,
            sec_madd,
            lremh_em_multiply_adds(args.results),
            sec_mm,
            benchmark_draws(args.results),
        )
        run = json.loads(args.run.read_text()) if args.run else None
        account = {
            **accounts(job_logs, run),
            "ns_per_multiply_add": sec_madd * 1e9,
            "ns_per_matmul_multiply_add": sec_mm * 1e9,
        }
        account["extra_repetitions"] = papers_reps.price(config, job_logs)
    result = {
        "accounts": account,
        "logs": str(args.logs),
        "measured_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": describe(numpy=np.__version__),
        "cpus": os.cpu_count(),
        "ns_per_uniform": sec * 1e9,
        "note": args.note,
        "figures": figures,
        "totals": totals,
    }
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for name, text in (
        (f"{args.name}.json", json.dumps(result, indent=1) + "\n"),
        (f"{args.name}.md", markdown(result) + _accounts_markdown(result, sec) + _extra_markdown(account)),
    ):
        tmp = args.out_dir / f".{name}.tmp"
        tmp.write_text(text)
        tmp.replace(args.out_dir / name)
    return result


if __name__ == "__main__":
    main()
