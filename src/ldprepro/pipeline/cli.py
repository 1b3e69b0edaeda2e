"""``ldprepro run``: a thin convenience for ``snakemake --cores N [args]``.

The product is plain Snakemake: ``snakemake --cores N`` builds everything obtainable here and its
``onsuccess`` prints what was not built and why (workflow/rules/common.smk, Snakefile). This
command only spells that for users who installed the package: it runs Snakemake with the given
cores and passes every further argument through unchanged (including a later ``--``, which
Snakemake uses to separate targets from options). It holds no state, deletes nothing, reads no
log: its exit status is Snakemake's. After a killed run, the workflow itself says what to run
(``snakemake --unlock``; see ldprepro.pipeline.parse.lock_hint).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path


def command(cores: str, extra: list[str]) -> list[str]:
    return [sys.executable, "-m", "snakemake", "--cores", cores, *extra]


def run(cores: str, extra: list[str], workdir: Path = Path(".")) -> int:
    """Run Snakemake in ``workdir``; returns its exit status."""
    cmd = command(cores, extra)
    print("+", " ".join(cmd), flush=True)
    return subprocess.call(cmd, cwd=workdir)


def main(argv: list[str] | None = None) -> int:
    """``ldprepro run [--cores N] [--] [snakemake arguments ...]``."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = argparse.ArgumentParser(
        prog="ldprepro",
        description=__doc__.splitlines()[0],
        usage="ldprepro run [--cores N] [--] [snakemake arguments ...]",
    )
    if not argv or argv[0] != "run":
        parser.error("the only command is `run`")
    rest, cores = argv[1:], "all"
    while rest and (rest[0] in ("--cores", "-c") or rest[0].startswith("--cores=")):
        if "=" in rest[0]:
            cores, rest = rest[0].split("=", 1)[1], rest[1:]
        elif len(rest) < 2:
            parser.error("--cores needs a value")
        else:
            cores, rest = rest[1], rest[2:]
    if rest[:1] == ["--"]:  # the separator between our options and Snakemake's; later ones pass through
        rest = rest[1:]
    return run(cores, rest)


if __name__ == "__main__":
    raise SystemExit(main())
