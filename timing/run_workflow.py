"""Run the workflow with Snakemake inside this process and record where its CPU went (not a test).

    .venv/bin/python -m timing.run_workflow --out timing/run_paper.json [-- SNAKEMAKE ARGS]

Snakemake's own process (building the DAG, scheduling, checking files, writing each job's script) is
this process, so ``getrusage(RUSAGE_SELF)`` at the end is its CPU exactly; ``RUSAGE_CHILDREN`` is the
CPU of every process it started and waited for (the jobs, and the shells Snakemake starts them in).
Each job's own share is the ``resources:`` line of its log (ldprepro.pipeline.jobsetup), which
``timing/figure_times.py`` reads beside this file. Writes the JSON atomically; exits with
Snakemake's exit code. The default arguments are the README's main command on this machine's cores.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import resource
import sys
import time
from pathlib import Path

from .machine import describe


def _cpu(usage) -> float:
    return usage.ru_utime + usage.ru_stime


def run(snakemake_args: list[str]) -> tuple[int, dict]:
    """Run ``snakemake SNAKEMAKE_ARGS`` here; (exit code, the record)."""
    from snakemake.cli import main as snakemake_main

    started = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    t0 = time.monotonic()
    code = 0
    try:
        snakemake_main(snakemake_args)
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    record = {
        "command": "snakemake " + " ".join(snakemake_args),
        "exit_code": code,
        "started_at": started,
        "wall_s": time.monotonic() - t0,
        "snakemake_cpu_s": _cpu(resource.getrusage(resource.RUSAGE_SELF)),
        "children_cpu_s": _cpu(resource.getrusage(resource.RUSAGE_CHILDREN)),
        "cores": os.cpu_count(),
        "machine": describe(),
        "load_before": os.getloadavg()[0],
    }
    return code, record


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True, help="the JSON record to write")
    ap.add_argument("--note", default="", help="the run's conditions, recorded with it (e.g. fresh clone at <commit>)")
    ap.add_argument("snakemake_args", nargs="*", help="after --: Snakemake's arguments (default: --cores all)")
    args = ap.parse_args(argv)
    load = os.getloadavg()[0]
    code, record = run(args.snakemake_args or ["--cores", "all"])
    record["load_before"] = load
    if args.note:
        record["note"] = args.note
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_name(f".{args.out.name}.tmp")
    tmp.write_text(json.dumps(record, indent=1) + "\n")
    tmp.replace(args.out)
    print(
        f"{args.out}: wall {record['wall_s']:.1f} s, Snakemake {record['snakemake_cpu_s']:.1f} CPU-s, "
        f"jobs {record['children_cpu_s']:.1f} CPU-s",
        file=sys.stderr,
    )
    return code


if __name__ == "__main__":
    raise SystemExit(main())
