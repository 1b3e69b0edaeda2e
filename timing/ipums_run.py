"""Run the IPUMS figures on SYNTHETIC IPUMS-format extracts (timing/ipums_scale.py) and record,
per figure, wall time and peak memory beside the floor arithmetic (flops and random draws per job).

    .venv/bin/python -m timing.ipums_run [--fraction 1] [--scale paper]
        [--figures hiera/fig1 ldpfl/fig8 ...] [--jobs-only DATASET MECHANISM] [--workdir DIR] [--cores 2]
    .venv/bin/python -m timing.ipums_run --render [--out-dir DIR]   (markdown from the JSON)
    .venv/bin/python -m timing.ipums_run --everything [--workdir DIR] [--cores 2]
        (one run of the whole workflow, IPUMS-sized panels included: ipums_everything.json / .md)

WISDM panels run on SYNTHETIC records in the raw WISDM file's format at its size × the fraction
(timing/wisdm_scale.py), read by the real reader. ``--jobs-only`` runs of single jobs accumulate in
``ipums_jobs_fraction_F.json`` / ``.md`` (one row per job, the latest run of each; the full-run files
are left alone).

The workflow runs in its own working directory (default /tmp/ldprepro_ipums_scale; the repository's
results/ are untouched) with an overlay config pointing ``datasets.ipums_*.options.extract`` at the
synthetic files. Per-job CPU, wall time and peak RSS come from the ``resources:`` line each job
writes at the end of its log (runs before the rules dropped their ``benchmark:`` files took the wall
time from those; ``meta.wall_source`` says which). Writes ``ipums_results.json`` and ``ipums_results.md`` next to this file
(``--out-dir``). The full run (fraction 1, scale paper) is long: run it on a machine you own.
Set ``LDPREPRO_DATA_MIRROR`` so that the figures' other panels (Vehicle) run too; the workflow
records which datasets it can obtain in the workdir's results/availability.json on its first run,
and a panel it could not obtain is listed under its figure as not run.

Floor arithmetic per job (the physical limit the measured time is compared with):
``figure_times.job_floor``: mean estimation, one uniform per user and repetition (HierA on integer
data needs only ~#distinct values binomials, so it can run below it); LDP-SGD, fits = folds × CV
repetitions × |ε| × |discretisations| × |sweeps| × |group rules|, per fit ~4·n_train·D flops and two
uniforms (attribute index and report) per training user.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import yaml

from ldprepro.pipeline.mechanism_names import EXPERIMENT_PAPERS
from ldprepro.pipeline.shared_jobs import shared_sources

from . import ipums_scale, wisdm_scale
from .figure_times import job_floor, job_resources
from .ipums_render import render
from .machine import describe

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

IPUMS = {"ipums_br": "br", "ipums_mx": "mx", "ipums_us": "us"}
#: Panels run on SYNTHETIC data scaled with --fraction: the IPUMS extracts and the WISDM raw file.
SCALED = (*IPUMS, "wisdm")


def ipums_figures(cfg: dict) -> dict[str, dict]:
    """{'paper/figN': figure entry} of every figure with an IPUMS or WISDM panel."""
    out = {}
    for paper, figs in cfg.items():
        # not papers: the data layer, and the cross-paper benchmark (whose IPUMS panel is a
        # benchmark job, not a figure)
        if not isinstance(figs, dict) or paper in ("datasets", "ipums", "benchmark"):
            continue
        for fig, entry in figs.items():
            if isinstance(entry, dict) and any(p.get("dataset") in SCALED for p in entry.get("panels", [])):
                out[f"{paper}/{fig}"] = entry
    return out


def workflow_shared_jobs(cfg: dict, scale: str) -> dict:
    """The jobs the workflow does not compute twice (``ldprepro.pipeline.shared_jobs``), from the
    experiment figures in the workflow's order, the scale's overrides applied as the workflow does."""
    sections = {p: cfg.get(p) or {} for p in EXPERIMENT_PAPERS} | (cfg.get("papers") or {})
    figures = {}
    for paper, section in sections.items():
        for fig, entry in section.items():
            if isinstance(entry, dict) and entry.get("kind") in ("mean", "sgd"):
                entry = dict(entry)
                smoke = entry.pop("smoke", {})
                figures[(paper, fig)] = {**entry, **smoke} if scale == "smoke" else entry
    return shared_sources(figures)


def job_startup_cpu_s() -> float:
    """CPU seconds a job spends importing the package and its dependencies (fixed per job)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import ldprepro.experiments.sgd_figures, ldprepro.experiments.mean_figures, "
            "ldprepro.data.transform, ldprepro.pipeline.results",
        ],
        check=True,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def projected_cpu_s(cpu_s: float, startup: float, fraction: float, scaled: bool) -> float:
    """A job's CPU at the papers' sizes: on an IPUMS panel (``scaled``, run on ``fraction`` of the
    users) the fixed start-up + the rest × 1/fraction (at fraction 1, the measurement itself); a
    panel that ran at its paper size (synthetic families, Vehicle) as measured. Not a bound: at a
    small fraction the data sit in cache and the per-user cost is lower than at full size."""
    return startup + max(0.0, cpu_s - startup) / fraction if scaled else cpu_s


def _write(path: Path, text: str) -> None:
    """Write whole or not at all (a temporary file, then a rename)."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    tmp.replace(path)


def _snakemake(args, targets: list[str], what: str) -> tuple[float, float]:
    """Run the workflow in the workdir (the repository's config + the overlay) for ``targets`` (none:
    its default target, everything); its wall time and the CPU time of Snakemake and every job it
    ran, in seconds. Exits naming ``what`` when Snakemake fails."""
    cmd = [
        sys.executable,
        "-m",
        "snakemake",
        "-s",
        str(REPO / "Snakefile"),
        "-d",
        str(args.workdir),
        "--configfile",
        str(REPO / "config.yaml"),
        str(args.workdir / "overlay.yaml"),
        "-c",
        str(args.cores),
        "--rerun-triggers",
        "mtime",
        "--rerun-incomplete",
        *(["--", *targets] if targets else []),
    ]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=args.workdir)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        print(proc.stderr[-3000:], file=sys.stderr)
        raise SystemExit(f"{what}: snakemake failed (exit {proc.returncode}); log above")
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return wall, cpu


def read_job_logs_of(workdir: Path, fig: str) -> list[dict]:
    """The jobs of ``fig`` (``paper/figN`` or ``data/<stage>``) in ``workdir``: name, wall ``s``,
    CPU and peak RSS, from each job's own ``resources:`` log line (figure_times.job_resources)."""
    rows = []
    for log in sorted((workdir / "logs" / fig).glob("*.log")):
        exact = job_resources(log)
        if exact is None:  # not finished (or failed before its exit line): no record
            continue
        rows.append(
            {"job": log.stem, "s": exact[2], "max_rss_mb": exact[1], "cpu_time_s": exact[0], "cpu_source": "job"}
        )
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fraction", type=float, default=1.0)
    parser.add_argument("--scale", default="paper", choices=["paper", "smoke"])
    parser.add_argument("--figures", nargs="*", default=None, help="paper/figN (default: every IPUMS figure)")
    parser.add_argument(
        "--jobs-only",
        nargs=2,
        metavar=("DATASET", "MECHANISM"),
        default=None,
        help="run one job of each listed figure instead of the figures",
    )
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/ldprepro_ipums_scale"))
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--out-dir", type=Path, default=HERE)
    parser.add_argument("--render", action="store_true", help="only rewrite ipums_results.md from ipums_results.json")
    parser.add_argument(
        "--combine",
        type=Path,
        nargs="+",
        default=None,
        metavar="JSON",
        help="run nothing: merge earlier runs' JSON files (later ones win per job) into --out-dir's ipums_results",
    )
    parser.add_argument(
        "--collect",
        action="store_true",
        help="run nothing: read what the workdir's jobs logged (a figure whose figure job has not run is left out)",
    )
    parser.add_argument(
        "--also-workdir",
        type=Path,
        nargs="*",
        default=[],
        help="with --collect: further workdirs of the same data (figures run there, e.g. at the same time)",
    )
    parser.add_argument(
        "--together",
        action="store_true",
        help="one Snakemake run for all the figures (as a user runs them), not one run per figure; each "
        "figure's wall is then its jobs' summed wall, and the run's own wall is recorded",
    )
    parser.add_argument(
        "--everything",
        action="store_true",
        help="one Snakemake run of the whole workflow (its default target: every figure of the five papers, "
        "the benchmark, the audit, the report), the IPUMS-sized panels included, as a user with the data runs "
        "it; records that run's wall and CPU, and the IPUMS figures' jobs as --together does "
        "(writes ipums_everything.json / .md)",
    )
    args = parser.parse_args(argv)
    if args.everything:
        if args.figures or args.fraction != 1 or args.scale != "paper":
            parser.error("--everything runs every figure at the papers' sizes: not with --figures, --fraction, --scale")
        args.together = True
    if args.together and (args.jobs_only or args.collect):
        parser.error("--together runs whole figures: not with --jobs-only or --collect")
    if args.render:
        out = json.loads((args.out_dir / "ipums_results.json").read_text())
        _write(args.out_dir / "ipums_results.md", render(out))
        return
    if args.combine:
        records = [json.loads(p.read_text()) for p in args.combine]
        if len({(r["meta"]["fraction"], r["meta"]["scale"]) for r in records}) != 1:
            raise SystemExit("--combine: the runs' fraction/scale differ")
        out = records[0]
        for record in records[1:]:
            out = merged(out, record)
        # a record that is itself a combination names its own parts
        out["meta"]["combined_from"] = [
            part
            for p, r in zip(args.combine, records)
            for part in r["meta"].get("combined_from") or [f"{p.parent.name}/{p.name}"]
        ]
        args.out_dir.mkdir(parents=True, exist_ok=True)
        _write(args.out_dir / "ipums_results.json", json.dumps(out, indent=1))
        _write(args.out_dir / "ipums_results.md", render(out))
        return

    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    figs = ipums_figures(cfg)
    chosen = args.figures or sorted(figs)
    extracts = args.workdir / "extracts"
    needed = sorted({p["dataset"] for f in chosen for p in figs[f]["panels"] if p["dataset"] in SCALED})
    if args.jobs_only:
        needed = [args.jobs_only[0]] if args.jobs_only[0] in SCALED else []
    overlay = {"scale": args.scale, "datasets": {}}
    sizes = {}
    for ds in needed:
        if ds == "wisdm":  # the raw file through its reader: a configured path, checked by its sha256
            n = max(1, round(wisdm_scale.PAPER_SIZE * args.fraction))
            raw = wisdm_scale.generate(extracts, n)
            spec = {"name": "WISDM_ar_latest.tar.gz", "path": str(raw), "sha256": _sha256(raw)}
            overlay["datasets"][ds] = {"files": [spec]}
        else:
            n = max(1, round(ipums_scale.PAPER_SIZES[IPUMS[ds]] * args.fraction))
            dat, ddi = ipums_scale.generate(extracts, IPUMS[ds], n)
            overlay["datasets"][ds] = {"options": {"extract": {"data": str(dat), "ddi": str(ddi)}}}
        sizes[ds] = n
    args.workdir.mkdir(parents=True, exist_ok=True)
    _write(args.workdir / "overlay.yaml", yaml.safe_dump(overlay))
    startup = job_startup_cpu_s()
    shared = workflow_shared_jobs(cfg, args.scale)
    results, not_run = [], []
    together_wall = everything = None
    if args.everything:
        wall_s, cpu_s = _snakemake(args, [], "the whole workflow")
        together_wall, everything = wall_s, {"wall_s": wall_s, "cpu_s": cpu_s}
    elif args.together:
        together_wall, _ = _snakemake(args, [f"figures/{fig}.png" for fig in chosen], "the figures together")
    for fig in chosen:
        paper, figure = fig.split("/")
        if args.jobs_only:
            targets = [f"results/{paper}/{figure}/{args.jobs_only[0]}__{args.jobs_only[1]}.parquet"]
        else:
            targets = [f"figures/{paper}/{figure}.png"]
        if args.together:
            jobs = read_job_logs_of(args.workdir, fig)
            wall = sum(j["s"] for j in jobs)  # summed job wall: the figures ran in one run
        elif args.collect:  # what earlier (possibly interrupted) runs of these workdirs logged
            for workdir in [args.workdir, *args.also_workdir]:
                jobs = read_job_logs_of(workdir, fig)
                if any(j["job"] == "figure" for j in jobs):
                    break
            if not any(j["job"] == "figure" for j in jobs):
                print(f"{fig}: not complete in any workdir, left out", flush=True)
                not_run.append(fig)
                continue
            wall = sum(j["s"] for j in jobs)  # summed job wall: the figure's own run is not known
        else:
            wall, _ = _snakemake(args, targets, fig)
            jobs = read_job_logs_of(args.workdir, fig)
        entry = figs[fig]
        for job in jobs:
            if job["job"] == "figure":  # the figure's own job (tables, plot): does not scale with n
                job.update(n_users=0, dims=0, fits=0, flops=0.0, random_numbers=0.0)
                job["projected_cpu_s_full_size"] = job["cpu_time_s"]
                continue
            # '<dataset>__<mechanism>' (one mechanism) or '<dataset>' (a panel job: all of them)
            ds, _, mech = job["job"].partition("__")
            card_path = args.workdir / "data" / "processed" / f"{ds}.json"
            card = json.loads(card_path.read_text()) if card_path.exists() else {}
            n = int(card.get("rows_after_cleaning") or 0)
            panel = next(p for p in entry["panels"] if p["dataset"] == ds)
            if entry.get("kind") == "sgd":  # encoded dimension D ≈ numeric + Σ (k − 1) (an upper bound for one-hot)
                d = sum(
                    1 if c.get("type") == "numeric" else max(1, len(c.get("categories") or [0, 0]) - 1)
                    for c in card.get("columns", [])
                )
            else:
                d = len(panel.get("columns", [1]))
            # projection (fraction < 1): an IPUMS panel ran on 1/fraction of its users, so fixed
            # start-up + the rest scaled linearly in n; the figure's other panels (synthetic families,
            # Vehicle) already ran at their paper size and count as measured
            scaled = ds in SCALED
            # a job whose rows an earlier figure's job computes copies them: no floor of its own
            source = shared.get((paper, figure, ds, mech))
            if source:
                job["shared_from"] = "/".join(source)
            computed = [m for m in ([mech] if mech else entry["mechanisms"]) if not source]
            floors = [job_floor(entry, m, n, d) for m in computed] or [
                dict.fromkeys(("fits", "flops", "random_numbers"), 0)
            ]
            job.update(
                n_users=n,
                dims=d,
                scaled=scaled,
                **{k: sum(f[k] for f in floors) for k in ("fits", "flops", "random_numbers")},
                projected_cpu_s_full_size=projected_cpu_s(job["cpu_time_s"], startup, args.fraction, scaled),
            )
        ran = {j["job"].split("__")[0] for j in jobs if j["job"] != "figure"}
        results.append(
            {
                "figure": fig,
                "wall_s": wall,
                "panels_not_run": sorted({p["dataset"] for p in entry["panels"]} - ran),
                "jobs": jobs,
                "peak_rss_mb": max((j["max_rss_mb"] for j in jobs), default=float("nan")),
            }
        )
        print(f"{fig}: {wall:.1f} s wall, {len(jobs)} jobs, peak {results[-1]['peak_rss_mb']:.0f} MB", flush=True)
    meta = {
        "startup_cpu_s": startup,
        "fraction": args.fraction,
        "scale": args.scale,
        "records": sizes,
        "synthetic": True,
        "note": "SYNTHETIC IPUMS-format data (timing/ipums_scale.py), not IPUMS",
        "figures_not_run": not_run,
        "collected": bool(args.collect),
        "wall_source": "job log",
        **({"together_wall_s": together_wall} if together_wall is not None else {}),
        # --everything: the whole workflow's one run (Snakemake and every job it ran)
        **({"everything": everything} if everything is not None else {}),
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": describe(),
    }
    # reading the extracts and the WISDM file, linear in n
    data_jobs = read_job_logs_of(args.workdir, "data/ipums")
    data_jobs += [
        j for j in read_job_logs_of(args.workdir, "data/normalise") if j["job"] == "wisdm" and "wisdm" in sizes
    ]
    for job in data_jobs:
        job["projected_cpu_s_full_size"] = projected_cpu_s(job["cpu_time_s"], startup, args.fraction, True)
    projected = sum(j["projected_cpu_s_full_size"] for r in results for j in r["jobs"])
    projected += sum(j["projected_cpu_s_full_size"] for j in data_jobs)
    # what IPUMS-sized data add to an offline paper-scale run: the IPUMS panels' jobs and reading the
    # extracts (the figures' other panels and figure jobs are part of the offline run already)
    ipums_only = sum(j["projected_cpu_s_full_size"] for r in results for j in r["jobs"] if j.get("scaled"))
    ipums_only += sum(j["projected_cpu_s_full_size"] for j in data_jobs)
    totals = {
        "ipums_panels_projected_cpu_s": ipums_only,
        "measured_cpu_s": sum(j["cpu_time_s"] for r in results for j in r["jobs"])
        + sum(j["cpu_time_s"] for j in data_jobs),
        "projected_cpu_s_full_size": projected,
        "projected_hours_on_cores": projected / args.cores / 3600,
        "cores": args.cores,
        "peak_rss_mb": max([r["peak_rss_mb"] for r in results] + [j["max_rss_mb"] for j in data_jobs]),
    }
    out = {"meta": meta, "figures": results, "data_jobs": data_jobs, "totals": totals}
    args.out_dir.mkdir(parents=True, exist_ok=True)
    stem = "ipums_everything" if args.everything else "ipums_results"
    if args.jobs_only:  # single jobs: merged into the fraction's jobs file, the latest run of each job
        stem = f"ipums_jobs_fraction_{args.fraction:g}"
        out = merge_jobs(args.out_dir / f"{stem}.json", out)
    _write(args.out_dir / f"{stem}.json", json.dumps(out, indent=1))
    text = render(out)
    _write(args.out_dir / f"{stem}.md", text)
    print(text)


def _sha256(path: Path) -> str:
    import hashlib

    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def merge_jobs(path: Path, new: dict) -> dict:
    """``new`` (a --jobs-only run) merged into the jobs file at ``path``: per figure the union of
    the jobs, a job measured again replacing its earlier row; the totals recomputed from the rows."""
    if not path.exists():
        return new
    old = json.loads(path.read_text())
    if (old["meta"]["fraction"], old["meta"]["scale"]) != (new["meta"]["fraction"], new["meta"]["scale"]):
        raise SystemExit(f"{path}: fraction/scale differ from this run's; use another --out-dir")
    return merged(old, new)


def _panels(record: dict) -> tuple[set, set]:
    """(every panel dataset of a figure record, the ones its jobs ran)."""
    ran = {j["job"].split("__")[0] for j in record["jobs"] if j["job"] != "figure"}
    return ran | set(record.get("panels_not_run", [])), ran


def merged(old: dict, new: dict) -> dict:
    """Two runs' records as one: per figure the union of the jobs (a job measured again replaces
    its earlier row), its panels not run recomputed; the totals recomputed from the rows."""
    figures = {r["figure"]: r for r in old["figures"]}
    for r in new["figures"]:
        before = figures.get(r["figure"], {"jobs": [], "panels_not_run": []})
        kept = [j for j in before["jobs"] if j["job"] not in {x["job"] for x in r["jobs"]}]
        jobs = sorted(kept + r["jobs"], key=lambda j: j["job"])
        datasets = _panels(before)[0] | _panels(r)[0]
        ran = {j["job"].split("__")[0] for j in jobs if j["job"] != "figure"}
        figures[r["figure"]] = {
            **r,
            "wall_s": sum(j["s"] for j in jobs),
            "jobs": jobs,
            "panels_not_run": sorted(datasets - ran),
            "peak_rss_mb": max(j["max_rss_mb"] for j in jobs),
        }
    data = {j["job"]: j for j in old["data_jobs"]} | {j["job"]: j for j in new["data_jobs"]}
    results, data_jobs = [figures[f] for f in sorted(figures)], [data[k] for k in sorted(data)]
    rows = [j for r in results for j in r["jobs"]] + data_jobs
    # the machine's cores: a run of single jobs may have used fewer (--jobs-only ... --cores 1)
    cores = max(old["totals"]["cores"], new["totals"]["cores"])
    projected = sum(j["projected_cpu_s_full_size"] for j in rows)
    meta = {**new["meta"], "records": old["meta"]["records"] | new["meta"]["records"], "collected": True}
    if old["meta"].get("wall_source") != new["meta"].get("wall_source"):
        meta["wall_source"] = "mixed"
    # a figure not run in one record but run in the other is run
    meta["figures_not_run"] = sorted(
        (set(old["meta"].get("figures_not_run", [])) | set(new["meta"].get("figures_not_run", []))) - set(figures)
    )
    totals = {
        "ipums_panels_projected_cpu_s": sum(j["projected_cpu_s_full_size"] for j in rows if j.get("scaled"))
        + sum(j["projected_cpu_s_full_size"] for j in data_jobs),
        "measured_cpu_s": sum(j["cpu_time_s"] for j in rows),
        "projected_cpu_s_full_size": projected,
        "projected_hours_on_cores": projected / cores / 3600,
        "cores": cores,
        "peak_rss_mb": max(j["max_rss_mb"] for j in rows),
    }
    return {"meta": meta, "figures": results, "data_jobs": data_jobs, "totals": totals}


if __name__ == "__main__":
    main()
