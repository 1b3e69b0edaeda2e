"""Which datasets can be obtained here: decided once, recorded in ``results/availability.json``.

The workflow reads the record at every parse, so the job graph is the same in the main process
and in every cluster job that re-parses the Snakefile on its own node. A dataset is decided when
it first appears (or when its config entry, the mirror or the IPUMS settings change); the whole
record is decided again on request (``--config refresh_availability=true``, or delete the file).

A dataset is obtainable when

- it is synthetic;
- IPUMS: an extract is configured, an earlier API download exists, or IPUMS_API_KEY is set *and*
  the API host resolves (offline, a key alone does not make IPUMS obtainable: the figures are the
  same with or without a key);
- file-backed: every file it needs is already under data/raw, at its user ``path``, in the
  mirror, or its download host resolves (one DNS lookup per host, cached; offline this fails at
  once).

A dataset that was decided obtainable but whose job then raised DataUnavailable (e.g. the IPUMS
API refused the request) leaves a record under ``logs/unavailable/`` (ldprepro.pipeline.status); records
newer than the decision override it, so the next run draws its panels as "not available".

Imports nothing heavy: this module runs at every parse of the workflow.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import socket
import time
from pathlib import Path
from urllib.parse import urlparse

from ldprepro.data.entries import RAW_ROOT, needed_files

KEY_ENV = "IPUMS_API_KEY"  # the same name as ldprepro.data.ipums_api.KEY_ENV
IPUMS_API_HOST = "api.ipums.org"
RECORD = Path("results") / "availability.json"
UNAVAILABLE_DIR = Path("logs") / "unavailable"  # the same folder as ldprepro.pipeline.status.UNAVAILABLE_DIR


@functools.lru_cache(maxsize=None)
def host_resolves(host: str, timeout: float = 3.0) -> bool:
    previous = socket.getdefaulttimeout()
    socket.setdefaulttimeout(timeout)
    try:
        socket.getaddrinfo(host, 443)
        return True
    except OSError:
        return False
    finally:
        socket.setdefaulttimeout(previous)


def _file_source(dataset: str, spec: dict, mirror: str) -> str | None:
    """None if the file can be had, else why not."""
    if (RAW_ROOT / dataset / spec["name"]).exists():
        return None
    if spec.get("path") and Path(spec["path"]).expanduser().exists():
        return None
    if spec.get("mirror") and mirror and (Path(mirror) / spec["mirror"]).exists():
        return None
    url = spec.get("url") or (spec.get("socrata") or {}).get("url") or (spec.get("socrata") or {}).get("domain")
    if url:
        host = urlparse(url).hostname or url
        if host_resolves(host):
            return None
        if _no_mirror_folder(spec, mirror):
            return (f"{spec['name']}: the mirror folder {mirror} does not exist (fix data_mirror / "
                    f"LDPREPRO_DATA_MIRROR), and it is not downloadable here (cannot resolve {host}: no network)")
        where = "not in the mirror and " if spec.get("mirror") else ""
        return f"{spec['name']} is {where}not downloadable here (cannot resolve {host}: no network)"
    if _no_mirror_folder(spec, mirror):
        return (f"{spec['name']} has no source here: the mirror folder {mirror} does not exist (fix "
                "data_mirror / LDPREPRO_DATA_MIRROR, or set the file's path)")
    return f"{spec['name']} has no source here (set its path, or put it in the mirror)"


def _no_mirror_folder(spec: dict, mirror: str) -> bool:
    """The file is to come from the mirror, a mirror is configured, but its folder does not exist."""
    return bool(spec.get("mirror") and mirror and not Path(mirror).is_dir())


def availability(dataset: str, entry: dict, mirror: str = "", extract_dir: str = "") -> str | None:
    """None if ``dataset`` can be obtained here, else a short reason for a 'not available' panel."""
    kind = entry.get("kind")
    if kind == "synthetic":
        return None
    if kind == "ipums":
        extract = (entry.get("options") or {}).get("extract") or {}
        if extract.get("data") and extract.get("ddi"):
            return None
        if (RAW_ROOT / dataset).is_dir() and any((RAW_ROOT / dataset).glob("*.xml")):
            return None
        if os.environ.get(KEY_ENV):
            if host_resolves(IPUMS_API_HOST):
                return None
            return f"{KEY_ENV} is set but the IPUMS API ({IPUMS_API_HOST}) cannot be reached: no network"
        return (f"IPUMS extract not configured (set {KEY_ENV} or datasets.{dataset}.options.extract; "
                "IPUMS forbids redistribution, see docs/data.md 'IPUMS')")
    for spec in needed_files(entry):
        reason = _file_source(dataset, spec, mirror)
        if reason:
            return reason
    return None


def fingerprint(entry: dict, mirror: str, extract_dir: str) -> str:
    """What the decision depends on besides the network: the entry, the mirror, the IPUMS settings
    (whether a key is set, never the key itself)."""
    blob = json.dumps({"entry": entry, "mirror": mirror, "extract_dir": extract_dir,
                       "key_set": bool(os.environ.get(KEY_ENV))}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _read(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def decide(datasets: dict, mirror: str = "", extract_dir: str = "", refresh: bool = False,
           record: Path = RECORD, write: bool = True) -> dict[str, str]:
    """{dataset: reason} of every unobtainable dataset in ``datasets`` (a config's ``datasets:``).

    Reads ``record``; decides the datasets it lacks (or whose fingerprint changed, or all of them
    when ``refresh``); writes the record back when anything was decided and ``write`` is true
    (only the main Snakemake process writes; cluster jobs read). Job-time DataUnavailable records
    newer than a decision override it.
    """
    from ldprepro.pipeline.io import atomic_write_text  # light: os/tempfile only

    record = Path(record)
    old = {} if refresh else _read(record).get("datasets", {})
    out, changed = {}, refresh
    for name in sorted(datasets):
        fp = fingerprint(datasets[name], mirror, extract_dir)
        rec = old.get(name)
        if rec is None or rec.get("fingerprint") != fp:
            reason = availability(name, datasets[name], mirror, extract_dir)
            rec = {"available": reason is None, "reason": reason or "", "fingerprint": fp,
                   "decided_at": time.time()}
            changed = True
        out[name] = rec
    for path in sorted(UNAVAILABLE_DIR.glob("*.json")) if UNAVAILABLE_DIR.is_dir() else []:
        job = _read(path)
        name = job.get("dataset")
        if name in out and out[name]["available"] and path.stat().st_mtime > out[name]["decided_at"]:
            out[name] = {**out[name], "available": False, "decided_at": path.stat().st_mtime,
                         "reason": f"{job.get('reason', 'not available')} (found when its job ran)"}
            changed = True
    if write and (changed or not record.exists()):
        text = json.dumps({"note": "Which datasets can be obtained here. Decided once; refresh with "
                                   "`snakemake --config refresh_availability=true -n` or delete this file.",
                           "datasets": out}, indent=2, sort_keys=True)
        atomic_write_text(record, text + "\n")
    return {name: rec["reason"] for name, rec in out.items() if not rec["available"]}
