"""The command line that runs this checkout's workflow, shared by the end-to-end tests."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def snakemake_cmd(*args: str, workdir: Path | None = None) -> list[str]:
    """``python -m snakemake --snakefile <repo>/Snakefile [--directory <workdir>] <args>``."""
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile")]
    if workdir is not None:
        cmd += ["--directory", str(workdir)]
    return cmd + list(args)
