"""Records of datasets found unobtainable while their job ran.

A rule that cannot build its output because a dataset is unavailable (e.g. the IPUMS API refused
the extract) writes one JSON record under ``logs/unavailable/`` (atomically) and then fails. The
workflow's availability decision (ldprepro.data.availability.decide, read at every parse) treats a
record newer than the decision as "not available", so the next run draws those panels as such; the
Snakefile's ``onerror`` says so. Nothing deletes these records: a refresh of the decision
(``--config refresh_availability=true``) simply outdates them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ldprepro.pipeline.io import atomic_write_text

UNAVAILABLE_DIR = Path("logs") / "unavailable"


def record_unavailable(dataset: str, reason: str, target: str | None = None, root: str | os.PathLike = ".") -> Path:
    """Write ``logs/unavailable/<dataset>.json`` with the reason."""
    path = Path(root) / UNAVAILABLE_DIR / f"{dataset}.json"
    record = {"dataset": dataset, "reason": reason, "target": target}
    atomic_write_text(path, json.dumps(record, indent=2, sort_keys=True) + "\n")
    return path


def read_unavailable(root: str | os.PathLike = ".") -> list[dict]:
    """All unavailability records under ``root``, sorted by dataset name."""
    folder = Path(root) / UNAVAILABLE_DIR
    if not folder.is_dir():
        return []
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]
