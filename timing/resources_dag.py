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

from ldprepro.experiments.kinds import KINDS
from ldprepro.pipeline import resources as R

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
    """(family, figure key) of a DAG job; None for target-only rules (no resources, run locally). The
    family is the workflow's (ldprepro.pipeline.resources.rule_family; a figure job's is its kind's);
    the figure key groups the jobs a measured job of the same figure can stand for."""
    parts = output.split("/")
    kind_family = KINDS[config[parts[1]][parts[2]]["kind"]].resource_family if R.runs_a_kind(rule) else None
    family = R.rule_family(rule, kind_family)
    if family is None:
        return None
    if kind_family or family.startswith(("benchmark_job.", "bshp_job")):  # results/<paper or task>/<figure>/...
        return family, f"{parts[1]}/{parts[2]}"
    if family == "lremh_job":
        return family, "lremh/" + rule[len("lremh_job_") :]
    return family, family


def output_dataset(rule: str, output: str) -> str:
    name = output.rsplit("/", 1)[-1].split(".")[0]
    if rule.startswith("data_"):
        return output.split("/")[2].split(".")[0]
    return name.split("__")[0]
