"""Calibrate every rule's declared ``mem_mb`` / ``runtime`` on measured runs (issue 30).

    .venv/bin/python -m timing.resources_fit --run /tmp/paper/repo --run /tmp/smk/repo \
        [--ipums timing/ipums_results.json --ipums timing/ipums_jobs_fraction_1.json] [--no-dag]

Reads, per run directory, every job log's last line ``resources: cpu_s=… wall_s=… max_rss_mb=…`` (written
by ldprepro.pipeline.jobsetup for every job), the job's data card (data/processed/<dataset>.json) and the
run's config.yaml (its ``scale``), and the IPUMS-sized runs on SYNTHETIC data (timing/ipums_run.py's JSON;
their cards' widths come from timing/ipums_scale.py's variables, checked against a real card of that run
when --ipums-card is given). It measures the peak RSS of the Snakemake process that wraps a job on a
cluster node (a dry-run parse of this checkout), fits each family's envelope lines
(ldprepro.pipeline.resources.fit_envelope) and writes

- ``timing/resources.json``: meta, the model (lines per family, the Snakemake RSS; also written alone to
  ``src/ldprepro/pipeline/resource_model.json``, where the workflow reads it), every measured
  job (rule, family, dataset rows × width, size, work, peak RSS, wall, CPU, declared mem_mb / runtime),
  and the cards and config entries they used (tests/test_resources.py re-evaluates the rules' resource
  callables on them);
- ``timing/resources.md``: declared vs measured per family, and the whole-paper SLURM estimate (job
  count from a dry-run DAG with every dataset available, core-hours from the measured CPU), also
  spliced into docs/cluster.md between ``<!-- resources:begin -->`` and ``<!-- resources:end -->``.

``--render`` rewrites the markdown (and the docs block) from the JSON alone.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import yaml

from ldprepro.audit.subjects import FAMILIES as AUDIT_FAMILIES
from ldprepro.benchmark.naming import job_of_panel_id, panel_id, plane_panels
from ldprepro.experiments.kinds import KINDS
from ldprepro.pipeline import resources as R
from ldprepro.pipeline.jobsetup import logged_resources
from ldprepro.pipeline.parse import experiment_params

from .resources_dag import dag_family, dag_jobs, output_dataset, snakemake_rss_mb
from .resources_report import cluster_block, render, splice

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def figure_entry(config: dict, section: str, figure: str | None, scale: str) -> dict:
    """A config entry with the scale's ``smoke`` overrides (as common.smk's figure_params)."""
    entry = dict(config[section] if figure is None else config[section][figure])
    smoke = entry.pop("smoke", {})
    if scale == "smoke":
        entry.update(smoke)
    return entry


def synthetic_entry(config: dict, dataset: str, scale: str) -> dict:
    """The size a data_synthetic job draws (as common.smk passes it)."""
    return R.synthetic_entry(config["datasets"], dataset, scale)


def classify(rel: str, rule: str, config: dict, scale: str):
    """(family, dataset or None, entry key, entry, card needed) of a job log path under logs/ and its
    rule (the log's ``resources:`` line), or None for a rule that declares no resources. The family is
    the one the workflow sizes the rule's jobs as (ldprepro.pipeline.resources.rule_family; a figure
    job's is its kind's); the rest comes from the log's path and the run's config. A log from before
    the rule was logged (``rule=?``) names no family: skipped."""
    parts = rel[:-4].split("/")
    head = parts[0]
    kind_family = None
    if R.runs_a_kind(rule):
        kind_family = KINDS[figure_entry(config, head, parts[1], scale)["kind"]].resource_family
    fam = R.rule_family(rule, kind_family)
    if fam is None:
        return None
    if fam == "data_synthetic":
        return fam, parts[2], f"data_synthetic:{parts[2]}", synthetic_entry(config, parts[2], scale), False
    if fam.startswith("data_"):
        return fam, parts[2], None, None, False
    if fam in ("render", "tables"):
        return fam, None, None, None, False
    if fam == "audit_family":  # one job for every family (audit.smk)
        entry = figure_entry(config, "audit", None, scale)
        entry["job_families"] = len(AUDIT_FAMILIES)  # ldprepro.audit.subjects.FAMILIES
        return fam, None, "audit", entry, False
    if head == "benchmark":
        task, job = parts[1], parts[2]
        bench = config["benchmark"]
        entry = {k: v for k, v in bench[task].items() if k not in ("smoke", "panels")}
        if scale == "smoke":
            entry.update(bench[task].get("smoke", {}))
        entry.update(eps=bench["eps"])
        # one job per task × dataset (its log named by the dataset), every panel on it; a run from
        # before that has one log per panel (named by the panel id), each one panel's work
        panels = [panel_id(p) for p in bench[task]["panels"] + plane_panels(entry)]
        per_panel = job in panels and job not in {job_of_panel_id(pid) for pid in panels}
        entry["job_panels"] = 1 if per_panel else max(1, sum(job_of_panel_id(pid) == job for pid in panels))
        job = job_of_panel_id(job)
        key = f"benchmark:{task}:{job}:{entry['job_panels']}"  # the entry differs by its panel count
        if job.startswith("plane__"):  # one distribution's synthetic (k, ε)-plane panels: no dataset, no card
            return fam, None, key, entry, False
        return fam, job, key, entry, True
    if head == "bshp":
        entry = figure_entry(config, "bshp", parts[1], scale)
        if "__" not in parts[2]:  # one job per (figure, city): every method of the figure
            entry = {**entry, "job_mechanisms": entry.get("mechanisms") or entry["methods"]}
            return fam, parts[2], f"bshp:{parts[1]}:city", entry, True
        return fam, parts[2].split("__")[0], f"bshp:{parts[1]}", entry, True
    if head == "lremh":
        exp = experiment_params(config["lremh"], parts[1], scale)
        return fam, exp["dataset"], f"lremh:{parts[1]}", exp, True
    if fam == "ldpfl_fig1_mechanism":  # one job draws every mechanism's rows
        entry = figure_entry(config, "ldpfl", "fig1", scale)
        if parts[2] == "mechanisms":
            return fam, None, "ldpfl:fig1:all", {**entry, "job_mechanisms": entry["mechanisms"]}, False
        return fam, None, "ldpfl:fig1", entry, False
    if fam == "ldpfl_fig4":
        return fam, None, "ldpfl:fig4", figure_entry(config, "ldpfl", "fig4", scale), False
    entry = figure_entry(config, head, parts[1], scale)  # a figure job of a kind
    if "__" not in parts[2]:  # a panel job (every mechanism of the figure on one dataset)
        entry = {**entry, "job_mechanisms": entry["mechanisms"]}
        return fam, parts[2], f"{head}:{parts[1]}:panel", entry, True
    return fam, parts[2].split("__")[0], f"{head}:{parts[1]}", entry, True


def raw_mb(run: Path, dataset: str) -> float:
    """Size of a dataset's raw input files (data_normalise's ``input.size_mb``)."""
    files = [p for p in (run / "data" / "raw" / dataset).glob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files) / 1e6


def read_run(run: Path, label: str):
    """Every measured job of a run directory, with its card and entry (see module docstring)."""
    config = yaml.safe_load((run / "config.yaml").read_text())
    scale = config["scale"]
    jobs, cards, entries = [], {}, {}
    for log in sorted((run / "logs").rglob("*.log")):
        rel = log.relative_to(run / "logs").as_posix()
        line = logged_resources(log.read_text(errors="replace"))
        got = classify(rel, line["rule"], config, scale) if line else None
        if not got:
            continue
        fam, ds, key, entry, needs_card = got
        card = None
        if needs_card:
            path = run / "data" / "processed" / f"{ds}.json"
            card = R.card_summary(json.loads(path.read_text()), str(path))
            cards[ds] = list(card)
        if key:
            entries[key] = entry
        input_mb = raw_mb(run, ds) if fam == "data_normalise" else 0.0
        size, work = R.job_sizes(fam, entry, card, input_mb)
        cpu, wall, rss = line["cpu_s"], line["wall_s"], line["max_rss_mb"]
        jobs.append(
            dict(
                source=label,
                scale=scale,
                job=rel,
                family=fam,
                dataset=ds,
                entry=key,
                input_mb=round(input_mb, 3),
                rows=card[0] if card else None,
                width=card[1] if card else None,
                size=size,
                work=work,
                max_rss_mb=rss,
                wall_s=wall,
                cpu_s=cpu,
            )
        )
    return jobs, {label: {"cards": cards, "entries": entries, "scale": scale}}


def ipums_cards(config: dict, card_check: list[Path]) -> dict:
    """(rows unknown, width) of the synthetic IPUMS datasets from timing/ipums_scale.py's variables."""
    from . import ipums_scale

    widths = {}
    for ds, entry in config["datasets"].items():
        if entry.get("kind") != "ipums":
            continue
        opts = entry["options"]
        width = len(opts.get("numeric") or {})
        for var, cfg in (opts.get("categorical") or {}).items():
            cats = ipums_scale.VARIABLES[var][1] or {}
            missing = set((cfg or {}).get("missing_codes", []))
            width += max(1, len([c for c in cats if c not in missing]))
        widths[ds] = width
    for path in card_check:
        card = json.loads(path.read_text())
        got = R.card_summary(card, str(path))[1]
        if widths.get(card["dataset"]) != got:
            raise SystemExit(f"{path}: width {got} != {widths.get(card['dataset'])} from ipums_scale.py")
    return widths


def read_ipums(paths: list[Path], card_check: list[Path]):
    """The IPUMS-sized jobs (figure jobs and data_ipums) of timing/ipums_run.py's JSON files."""
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    widths = ipums_cards(config, card_check)
    jobs, cards, entries = [], {}, {}
    for path in paths:
        data = json.loads(path.read_text())
        label = f"ipums:{path.name}"
        for fig in data["figures"]:
            paper, figure = fig["figure"].split("/")
            for j in fig["jobs"]:
                if j["job"] == "figure":  # the figure's render rule
                    fam, ds, key, entry, card = R.rule_family(f"figure_{paper}_{figure}"), None, None, None, None
                else:
                    ds = j["job"].split("__")[0]
                    entry = figure_entry(config, paper, figure, "paper")
                    fam, key = KINDS[entry["kind"]].resource_family, f"{paper}:{figure}"
                    if "__" not in j["job"]:  # a panel job: every mechanism of the figure
                        entry, key = {**entry, "job_mechanisms": entry["mechanisms"]}, f"{key}:panel"
                    card = (int(j["n_users"]), widths.get(ds, 1))
                    cards[ds] = list(card)
                    entries[key] = entry
                size, work = R.job_sizes(fam, entry, card)
                name = f"{fig['figure']}/{j['job']}"
                jobs.append(
                    dict(
                        source=label,
                        scale="paper",
                        job=name,
                        family=fam,
                        dataset=ds,
                        entry=key,
                        input_mb=0.0,
                        rows=card[0] if card else None,
                        width=card[1] if card else None,
                        size=size,
                        work=work,
                        max_rss_mb=j["max_rss_mb"],
                        wall_s=j["s"],
                        cpu_s=j["cpu_time_s"],
                    )
                )
        for j in data.get("data_jobs", []):
            if not j["job"].startswith("ipums_"):
                continue
            jobs.append(
                dict(
                    source=label,
                    scale="paper",
                    job=f"data/ipums/{j['job']}",
                    family="data_ipums",
                    dataset=j["job"],
                    entry=None,
                    input_mb=0.0,
                    rows=None,
                    width=None,
                    size=0,
                    work=0,
                    max_rss_mb=j["max_rss_mb"],
                    wall_s=j["s"],
                    cpu_s=j["cpu_time_s"],
                )
            )
    return jobs, {"ipums": {"cards": cards, "entries": entries, "scale": "paper"}}


def declare_jobs(jobs: list[dict], model, inputs: dict) -> None:
    """Each job's declaration under ``model``, as the workflow's resource callables make it: the
    calibrated lines plus what its repetitions hold and take (``resources.repetitions_held``)."""
    for j in jobs:
        run = "ipums" if j["source"].startswith("ipums:") else j["source"]
        entry = inputs.get(run, {}).get("entries", {}).get(j["entry"]) if j["entry"] else None
        reps = R.repetitions_held(j["family"], entry)
        j["declared_mem_mb"], j["declared_runtime_min"] = model.declare(j["family"], j["size"], j["work"], 1, reps)


def fit(jobs: list[dict], rss_mb: float, inputs: dict | None = None) -> dict:
    """Envelope lines per family and each job's declaration under them."""
    by_family = defaultdict(list)
    for j in jobs:
        by_family[j["family"]].append(j)
    lines = {}
    for fam, js in sorted(by_family.items()):
        am, bm = R.fit_envelope([(j["size"], j["max_rss_mb"]) for j in js])
        at, bt = R.fit_envelope([(j["work"], j["wall_s"]) for j in js])
        lines[fam] = {"mem": [round(am, 3), float(f"{bm:.6g}")], "time": [round(at, 3), float(f"{bt:.6g}")]}
        # rounding must not move the line under a point
        for key, ys, xs in (("mem", "max_rss_mb", "size"), ("time", "wall_s", "work")):
            a, b = lines[fam][key]
            short = max(j[ys] - (a + b * j[xs]) for j in js)
            if short > 0:
                lines[fam][key][0] = round(a + short + 0.001, 3)
    declare_jobs(jobs, R.Model(lines, rss_mb), inputs or {})
    return {
        "lines": lines,
        "snakemake_rss_mb": round(rss_mb, 1),
        "safety_mem": R.SAFETY_MEM,
        "safety_time": R.SAFETY_TIME,
        "runtime_allowance_min": R.RUNTIME_ALLOWANCE_MIN,
    }


def cluster_estimate(jobs: list[dict], dag: list[tuple[str, str]]) -> list[dict]:
    """Per family of the whole-paper DAG: job count, core-hours (each job's CPU: a measured job of the
    same figure and dataset class at paper size, else the family's), peak memory measured/declared."""
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    paper = [j for j in jobs if j["scale"] == "paper"]

    def cls(ds):
        return "ipums" if ds and ds.startswith("ipums_") else "other"

    def mean(xs):
        return sum(xs) / len(xs) if xs else None

    keyed = defaultdict(list)
    for j in paper:
        fig = "/".join(j["job"].split("/")[:2])
        keyed[(j["family"], fig, cls(j["dataset"]))].append(j["cpu_s"])
        keyed[(j["family"], cls(j["dataset"]))].append(j["cpu_s"])
        keyed[(j["family"],)].append(j["cpu_s"])
    rows = defaultdict(lambda: {"jobs": 0, "cpu_s": 0.0, "estimated": 0})
    for rule, output in dag:
        got = dag_family(rule, output, config)
        if not got:
            continue
        fam, fig = got
        c = cls(output_dataset(rule, output))
        for key in ((fam, fig, c), (fam, c), (fam,), (R.FALLBACK.get(fam, fam),)):
            if keyed.get(key):
                cpu = mean(keyed[key])
                break
        else:
            cpu = 0.0
        row = rows[fam]
        row["jobs"] += 1
        row["cpu_s"] += cpu
        row["estimated"] += key != (fam, fig, c)
    out = []
    for fam, row in sorted(rows.items()):
        measured = [j for j in jobs if j["family"] == fam]
        out.append(
            dict(
                family=fam,
                jobs=row["jobs"],
                core_hours=round(row["cpu_s"] / 3600, 2),
                from_family_mean=row["estimated"],
                peak_rss_mb=max((j["max_rss_mb"] for j in measured), default=None),
                declared_mem_mb=max((j["declared_mem_mb"] for j in measured), default=None),
            )
        )
    return out


def write_model(path: Path, model: dict) -> None:
    """The model part alone, where the workflow reads it at every parse (resources.MODEL_FILE)."""
    note = (
        "the resource model the workflow reads at every parse: the 'model' part of timing/resources.json, "
        "written with it by timing/resources_fit.py; do not edit"
    )
    path.write_text(json.dumps({"note": note, "model": model}, indent=1) + "\n")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", type=Path, action="append", default=[], help="a run directory (logs/, config.yaml)")
    ap.add_argument("--ipums", type=Path, action="append", default=[], help="timing/ipums_run.py JSON")
    ap.add_argument("--ipums-card", type=Path, action="append", default=[], help="a card of that run, to check widths")
    ap.add_argument("--out", type=Path, default=HERE / "resources.json")
    ap.add_argument("--model-out", type=Path, default=R.MODEL_FILE, help="the model the workflow reads")
    ap.add_argument("--doc", type=Path, default=ROOT / "docs" / "cluster.md")
    ap.add_argument("--render", action="store_true", help="only rewrite the markdown from the JSON")
    ap.add_argument(
        "--redeclare",
        action="store_true",
        help="recompute the jobs' declarations from the JSON's own lines and entries (after a change of the "
        "declaration's logic in ldprepro.pipeline.resources; the measurements are not touched), then render",
    )
    args = ap.parse_args(argv)
    if args.render or args.redeclare:
        data = json.loads(args.out.read_text())
        if args.redeclare:
            m = data["model"]
            declare_jobs(data["jobs"], R.Model(m["lines"], m["snakemake_rss_mb"]), data["inputs"])
            for row in data.get("cluster", []):
                measured = [j["declared_mem_mb"] for j in data["jobs"] if j["family"] == row["family"]]
                row["declared_mem_mb"] = max(measured, default=row["declared_mem_mb"])
            args.out.write_text(json.dumps(data, indent=1) + "\n")
    else:
        jobs, inputs, sources = [], {}, []
        for run in args.run:
            js, inp = read_run(run, str(run))
            print(f"{run}: {len(js)} jobs", flush=True)
            jobs += js
            inputs.update(inp)
            sources.append(f"{run} ({len(js)} jobs, scale {inp[str(run)]['scale']})")
        if args.ipums:
            js, inp = read_ipums(args.ipums, args.ipums_card)
            jobs += js
            inputs.update(inp)
            sources.append(
                ", ".join(f"timing/{p.name}" for p in args.ipums) + f" ({len(js)} IPUMS-sized jobs, SYNTHETIC data)"
            )
        meta = {"sources": sources, "note": "generated by timing/resources_fit.py; do not edit"}
        # the workflow parses only with a calibration file: first one without the wrapper's RSS
        # (when none exists yet), then measure that RSS on the parse and fit again
        if not args.out.exists():
            args.out.write_text(json.dumps({"meta": meta, "model": fit(jobs, 0.0), "jobs": []}) + "\n")
        if not args.model_out.exists():
            write_model(args.model_out, fit(jobs, 0.0))
        rss = snakemake_rss_mb()
        print(f"snakemake wrapper peak RSS {rss:.0f} MB", flush=True)
        data = {"meta": meta, "model": fit(jobs, rss, inputs), "inputs": inputs, "jobs": jobs}
        data["cluster"] = cluster_estimate(jobs, dag_jobs())
        args.out.write_text(json.dumps(data, indent=1) + "\n")
        write_model(args.model_out, data["model"])
    args.out.with_suffix(".md").write_text(render(data))
    splice(args.doc, cluster_block(data))
    print(f"wrote {args.out}, {args.out.with_suffix('.md')}, {args.doc}")


if __name__ == "__main__":
    main()
