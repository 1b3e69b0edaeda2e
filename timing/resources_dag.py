"""The Snakemake side of the resource calibration (timing/resources_fit.py, issue 30): the peak RSS of
the Snakemake process that wraps every cluster job, and the whole-paper DAG (every dataset available)
with each job's rule family, from dry runs of this checkout."""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _snakemake(args: list[str], tmp: str, env: dict) -> str:
    """Run Snakemake on this checkout in ``tmp``; its stdout, or an error carrying its stderr."""
    cmd = [
        sys.executable,
        "-m",
        "snakemake",
        *args,
        "--cores",
        "1",
        "--snakefile",
        str(ROOT / "Snakefile"),
        "--directory",
        tmp,
        "--configfile",
        str(ROOT / "config.yaml"),
        "--config",
        "scale=paper",
        "--workflow-profile",
        "none",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr[-3000:]}")
    return proc.stdout


def snakemake_rss_mb() -> float:
    """Peak RSS (MB) of a Snakemake process parsing this workflow: the wrapper of every cluster job."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    with tempfile.TemporaryDirectory() as tmp:
        _snakemake(["-n", "-q"], tmp, env)
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0


def dag_jobs() -> list[tuple[str, str]]:
    """(rule, first output) of every job of the whole-paper run with every dataset available (IPUMS
    key and WISDM included): a forced dry run of this checkout in an empty directory whose
    availability record says every dataset can be obtained."""
    from ldprepro.data.availability import fingerprint

    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    extract_dir = config.get("ipums", {}).get("extract_dir", "")
    env = {k: v for k, v in os.environ.items() if k != "LDPREPRO_DATA_MIRROR"}
    env["PYTHONPATH"] = str(ROOT / "src")
    record = {
        "datasets": {
            name: {
                "available": True,
                "reason": "",
                "fingerprint": fingerprint(entry, "", extract_dir),
                "decided_at": 1e10,
            }
            for name, entry in config["datasets"].items()
        }
    }
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "results").mkdir()
        (Path(tmp) / "results" / "availability.json").write_text(json.dumps(record))
        out = _snakemake(["-n", "--forceall"], tmp, env)
    jobs, rule = [], None
    for line in out.splitlines():
        if m := re.match(r"^(?:local)?rule (\S+):$", line.strip()):
            rule = m.group(1)
        elif rule and line.strip().startswith("output:"):
            jobs.append((rule, line.split(":", 1)[1].strip().split(",")[0].strip()))
            rule = None
    return jobs


def dag_family(rule: str, output: str, config: dict) -> tuple[str, str] | None:
    """(family, figure key) of a DAG job; None for target-only rules (no resources, run locally)."""
    parts = output.split("/")
    if rule == "figure_job" or rule.startswith("panel_job_"):  # sized as its kind says (experiments.kinds)
        from ldprepro.experiments.kinds import KINDS

        kind = config[parts[1]][parts[2]]["kind"]
        return KINDS[kind].resource_family, f"{parts[1]}/{parts[2]}"
    if rule.startswith("benchmark_job_"):  # benchmark_job_<task>_<dataset>: every panel on the dataset
        return f"benchmark_job.{parts[2]}", f"benchmark/{parts[2]}"
    if rule == "audit_families":  # every audit family in one job
        return "audit_family", "audit_family"
    if rule.startswith("bshp_job_"):
        return "bshp_job", f"bshp/{parts[2]}"
    if rule.startswith("lremh_job_"):
        return "lremh_job", "lremh/" + rule[len("lremh_job_") :]
    if rule in (
        "data_fetch",
        "data_normalise",
        "data_synthetic",
        "data_ipums",
        "ldpfl_fig1_mechanism",
        "ldpfl_fig4",
    ):
        return rule, rule
    if rule.startswith(("figure_", "bshp_figure_", "lremh_figure_")) or rule in (
        "ldpfl_fig1",
        "figures_not_available",
        "audit",
        "benchmark_tables",
    ):
        return "render", "render"
    if rule in ("report_tables", "readme_figures", "data_cards", "report_claims") or rule.startswith(
        ("claims_forest_", "caption")
    ):
        return "tables", "tables"
    return None


def output_dataset(rule: str, output: str) -> str:
    name = output.rsplit("/", 1)[-1].split(".")[0]
    if rule.startswith("data_"):
        return output.split("/")[2].split(".")[0]
    return name.split("__")[0]
