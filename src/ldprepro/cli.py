"""``ldprepro run``: the main command.

Runs Snakemake with ``--keep-going`` so that everything obtainable is built even when some
datasets are not (offline, no IPUMS credentials), then prints a plain summary of what could
not be built and why. Exit status: 0 when every failure is an unavailable dataset (recorded
by the failing rule under logs/unavailable/), 1 when anything else failed.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

from .status import UNAVAILABLE_DIR, read_unavailable

ERROR_BLOCK = re.compile(r"^Error in rule (\S+):\n((?:[ \t]+.*\n?)*)", re.MULTILINE)
OUTPUT_LINE = re.compile(r"^\s+output: (.*)$", re.MULTILINE)


def failed_jobs(log_text: str) -> list[tuple[str, list[str]]]:
    """(rule, output paths) of every failed job in a Snakemake log."""
    jobs = []
    for rule, body in ERROR_BLOCK.findall(log_text):
        outputs = OUTPUT_LINE.search(body)
        jobs.append((rule, [p.strip() for p in outputs.group(1).split(",")] if outputs else []))
    return jobs


def explained_by(outputs: list[str], datasets: set[str]) -> bool:
    """True if some output path belongs to an unavailable dataset (a path segment or file stem)."""
    for path in outputs:
        parts = path.split("/")
        if any(p in datasets or p.split(".")[0] in datasets for p in parts):
            return True
    return False


def _latest_snakemake_log(workdir: Path, before: set[Path]) -> Path | None:
    logs = set((workdir / ".snakemake" / "log").glob("*.snakemake.log")) - before
    return max(logs, key=lambda p: p.stat().st_mtime) if logs else None


def run(cores: str, extra: list[str], workdir: Path = Path(".")) -> int:
    """Run the workflow and summarise; returns the process exit status."""
    shutil.rmtree(workdir / UNAVAILABLE_DIR, ignore_errors=True)
    log_dir = workdir / ".snakemake" / "log"
    before = set(log_dir.glob("*.snakemake.log")) if log_dir.is_dir() else set()
    cmd = [sys.executable, "-m", "snakemake", "--cores", cores, "--keep-going",
           "--rerun-incomplete", *extra]
    print("+", " ".join(cmd), flush=True)
    status = subprocess.call(cmd, cwd=workdir)

    unavailable = read_unavailable(workdir)
    log = _latest_snakemake_log(workdir, before)
    failed = failed_jobs(log.read_text()) if log else []
    missing = {rec["dataset"] for rec in unavailable}
    other = [(rule, outs) for rule, outs in failed if not explained_by(outs, missing)]
    print("\n==== ldprepro summary ====")
    if status == 0 and not unavailable:
        print("Everything was built.")
        return 0
    if unavailable:
        print("Could not build (data not available here):")
        for rec in unavailable:
            print(f"  - {rec['dataset']}: {rec['reason']}")
        print("  (and every table or figure that needs them; the rest was built.)")
    if status != 0 and other:
        print(f"{len(other)} job(s) failed for other reasons; see the Snakemake log"
              f"{' ' + str(log) if log else ''}:")
        for rule, outs in other:
            print(f"  - rule {rule}: {', '.join(outs) or '(no output listed)'}")
        return 1
    if status != 0 and not failed and not unavailable:
        print("Snakemake failed before running any job (see its message above).")
        return status
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ldprepro", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_run = sub.add_parser("run", help="build everything obtainable, then summarise what was not")
    p_run.add_argument("--cores", default="all", help="passed to snakemake --cores (default: all)")
    p_run.add_argument("snakemake_args", nargs=argparse.REMAINDER,
                       help="further arguments for snakemake (after --)")
    args = parser.parse_args(argv)
    if args.command == "run":
        extra = [a for a in args.snakemake_args if a != "--"]
        return run(args.cores, extra)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
