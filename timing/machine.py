"""The machine a measurement ran on, for the records of the timing scripts.

Timings from different sessions may come from different hardware of the same machine kind (the same
cores and memory, another processor): a record that names its processor says which numbers compare.
"""

from __future__ import annotations

import platform
from pathlib import Path


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The processor's model name (Linux's /proc/cpuinfo), else what ``platform`` knows, else
    "unknown processor"."""
    try:
        for line in cpuinfo.read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and value.strip():
                return value.strip()
    except OSError:
        pass
    return platform.processor() or "unknown processor"


def describe(**versions: str) -> str:
    """'x86_64, <model> (CPython 3.11.7[, name version ...])'."""
    extra = "".join(f", {name} {version}" for name, version in versions.items())
    return f"{platform.machine()}, {cpu_model()} (CPython {platform.python_version()}{extra})"
