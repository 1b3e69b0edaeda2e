"""Which datasets can be obtained here, decided when the workflow is loaded.

Figures whose data is partly unavailable are still drawn: their rules depend only on the
datasets that can be obtained, and get an explicit "not available: <reason>" panel for the rest.
A dataset is obtainable when

- it is synthetic;
- IPUMS: an extract is configured, an earlier API download exists, or IPUMS_API_KEY is set;
- file-backed: every file it needs is already under data/raw, at its user ``path``, in the
  mirror, or its download host resolves (one DNS lookup per host, cached; offline this fails at
  once). A host that resolves but then fails the download still fails its rule, which the main
  command's summary reports.
"""

from __future__ import annotations

import functools
import os
import socket
from pathlib import Path
from urllib.parse import urlparse

from .build import RAW_ROOT, needed_files
from .ipums_api import KEY_ENV


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
        where = "not in the mirror and " if spec.get("mirror") else ""
        return f"{spec['name']} is {where}not downloadable here (cannot resolve {host}: no network)"
    return f"{spec['name']} has no source here (set its path, or put it in the mirror)"


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
            return None
        return (f"IPUMS extract not configured (set {KEY_ENV} or datasets.{dataset}.options.extract; "
                "IPUMS forbids redistribution, see README 'IPUMS')")
    for spec in needed_files(entry):
        reason = _file_source(dataset, spec, mirror)
        if reason:
            return reason
    return None
