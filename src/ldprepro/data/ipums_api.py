"""Obtain an IPUMS extract: a user-supplied one, or one submitted through the IPUMS API.

IPUMS forbids anonymous download and redistribution of extracts, so there is no mirror route.
Two real routes, tried in this order:

1. A user-supplied extract: ``options.extract.data`` (data file) and ``options.extract.ddi``
   (DDI codebook) in the dataset's config entry, or the same names under the top-level
   ``ipums.extract_dir``.
2. With the environment variable ``IPUMS_API_KEY`` set: submit the extract described by the
   entry (``collection``, ``sample``, variables) through the IPUMS API with ``ipumspy``, wait for
   it, and download it to ``data/raw/<dataset>/``. The sha256 of the downloaded data file is
   recorded in a lock file on first download and verified afterwards.

With neither, :func:`locate_extract` raises DataUnavailable with the exact steps. A failing API
call (offline, key refused, extract failed) is DataUnavailable too, with a one-line reason: the
key never appears in it (nor in any log line), and no exception holding the API's own message
is chained to it.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import tempfile
from pathlib import Path
from urllib.parse import urlparse

from ldprepro.pipeline.errors import DataUnavailable
from ldprepro.data.fetch import RawFileChanged, lock_path, read_lock, sha256_file, short_reason, write_lock

KEY_ENV = "IPUMS_API_KEY"
API_URL = "https://api.ipums.org"


def scrub(text: str, key: str | None) -> str:
    """``text`` with every occurrence of the API key replaced by '***'."""
    return text.replace(key, "***") if key else text


def api_failure_reason(exc: BaseException, key: str | None) -> str:
    """A one-line reason for a failed IPUMS API call, without the key."""
    name = type(exc).__name__
    text = f"{exc!r} {exc.__cause__!r} {exc.__context__!r}"
    if "NameResolution" in text or "Name or service not known" in text or \
            "Temporary failure in name resolution" in text or "Failed to resolve" in text:
        detail = short_reason(exc)
        if not detail.startswith("cannot resolve") or "the host" in detail:
            detail = f"cannot resolve {urlparse(API_URL).hostname} (no network?)"
        reason = f"cannot reach the IPUMS API: {detail}"
    elif "NewConnectionError" in text or "Max retries exceeded" in text or \
            "ConnectionError" in name or "Timeout" in name:
        reason = f"cannot reach the IPUMS API at {API_URL} (connection failed or timed out)"
    elif "Authentication" in name:
        first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
        reason = (f"the IPUMS API refused the key in {KEY_ENV} ({first}); check it at "
                  f"https://account.ipums.org/api_keys")
    else:
        first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
        reason = f"the IPUMS API call failed ({name}: {first})"
    return " ".join(scrub(reason, key).split())


def probe() -> str | None:
    """Why the API route cannot work here (no ipumspy, API host does not resolve), or None.

    Cheap and key-free: meant for deciding availability once, before the workflow runs.
    """
    if importlib.util.find_spec("ipumspy") is None:
        return (f"{KEY_ENV} is set but the 'ipumspy' package is not installed "
                f"(pip install -e '.[ipums]')")
    host = urlparse(API_URL).hostname
    try:
        socket.getaddrinfo(host, 443)
    except OSError:
        return f"cannot reach the IPUMS API (cannot resolve {host}: no network?)"
    return None


def _instructions(dataset: str, entry: dict, raw_dir: Path) -> str:
    o = entry["options"]
    variables = ", ".join(list(o.get("numeric", {})) + list(o.get("categorical", {})))
    site = "https://usa.ipums.org/" if o["collection"] == "usa" else \
        "https://international.ipums.org/"
    return (
        f"no IPUMS extract is configured and {KEY_ENV} is not set. Either (1) get an API key at "
        f"https://account.ipums.org/api_keys (free registration at {site}), run "
        f"`pip install ipumspy` and `export {KEY_ENV}=<your key>`, then rerun: the pipeline "
        f"submits and downloads the extract itself; or (2) request an extract yourself at "
        f"{site} (collection '{o['collection']}', sample '{o['sample']}', variables {variables}; "
        f"fixed-width or CSV data), download the data file and its DDI codebook (.xml), and set "
        f"datasets.{dataset}.options.extract.data and .ddi in config.yaml to their paths (or put "
        f"them in the directory named by ipums.extract_dir).")


def locate_extract(dataset: str, entry: dict, raw_dir: str | Path, extract_dir: str = "",
                   log=print) -> tuple[Path, Path, dict]:
    """(data file, DDI file, provenance for the data card)."""
    raw_dir = Path(raw_dir)
    o = entry["options"]
    ex = o.get("extract") or {}
    if ex.get("data") or ex.get("ddi"):
        base = Path(extract_dir) if extract_dir else Path(".")
        data, ddi = (base / Path(ex["data"]).expanduser()), (base / Path(ex["ddi"]).expanduser())
        for p in (data, ddi):
            if not p.exists():
                raise DataUnavailable(dataset, f"the configured IPUMS extract file {p} does not "
                                      f"exist. Fix datasets.{dataset}.options.extract in "
                                      f"config.yaml (paths are relative to ipums.extract_dir "
                                      f"or the working directory).")
        return data, ddi, {"route": "user-supplied extract", "data": str(data),
                           "ddi": str(ddi), "sha256": sha256_file(data)}
    prev = _downloaded(raw_dir)
    if prev:
        data, ddi = prev
        actual = sha256_file(data)  # a mismatch leaves the extract in place (it took hours to obtain)
        if actual != read_lock(data):
            raise RawFileChanged(str(data), read_lock(data), actual, f"lock file {lock_path(data)}")
        return data, ddi, {"route": "IPUMS API (earlier download)", "data": str(data),
                           "ddi": str(ddi), "sha256": actual}
    key = os.environ.get(KEY_ENV)
    if not key:
        raise DataUnavailable(dataset, _instructions(dataset, entry, raw_dir))
    data, ddi = submit_and_download(dataset, entry, raw_dir, key, log=log)
    sha = sha256_file(data)
    write_lock(data, sha, f"IPUMS API extract ({o['collection']}, {o['sample']})")
    return data, ddi, {"route": "IPUMS API", "data": str(data), "ddi": str(ddi), "sha256": sha}


def _downloaded(raw_dir: Path) -> tuple[Path, Path] | None:
    if not raw_dir.is_dir():
        return None
    ddis = sorted(raw_dir.glob("*.xml"))
    for ddi in ddis:
        stem = ddi.name[:-4]
        for ext in (".dat.gz", ".dat", ".csv.gz", ".csv"):
            data = raw_dir / (stem + ext)
            if data.exists() and lock_path(data).exists():
                return data, ddi
    return None


def submit_and_download(dataset: str, entry: dict, raw_dir: Path, key: str,
                        log=print) -> tuple[Path, Path]:
    """Submit the extract with ipumspy, wait, download; returns (data file, DDI file)."""
    try:
        from ipumspy import IpumsApiClient, MicrodataExtract
    except ImportError as exc:
        raise DataUnavailable(dataset, f"{KEY_ENV} is set but the 'ipumspy' package is not "
                              f"installed. Run `pip install ipumspy` (or "
                              f"`pip install -e '.[ipums]'`) and rerun.") from exc
    o = entry["options"]
    variables = [v.upper() for v in list(o.get("numeric", {})) + list(o.get("categorical", {}))]
    reason = None
    try:
        client = IpumsApiClient(key, base_url=API_URL)
        extract = MicrodataExtract(collection=o["collection"], samples=[o["sample"]],
                                   variables=variables, data_format=o.get("data_format",
                                                                          "fixed_width"),
                                   description=f"ldprepro {dataset}")
        client.submit_extract(extract)
        log(f"{dataset}: submitted IPUMS extract {extract.extract_id}; waiting for it")
        client.wait_for_extract(extract)
        raw_dir.mkdir(parents=True, exist_ok=True)
        # into a hidden folder beside the raw files, moved in only once the download is complete
        staging = Path(tempfile.mkdtemp(prefix=".download.", dir=raw_dir))
        try:
            client.download_extract(extract, download_dir=staging)
            for part in sorted(staging.iterdir()):
                os.replace(part, raw_dir / part.name)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    except Exception as exc:  # noqa: BLE001 - ipumspy and requests raise many types
        reason = api_failure_reason(exc, key)
    if reason is not None:  # raised outside the handler: no chained exception to leak the key
        raise DataUnavailable(dataset, f"{reason}. Or supply an extract yourself "
                              f"(datasets.{dataset}.options.extract; docs/data.md 'IPUMS').")
    ddis = sorted(raw_dir.glob("*.xml"), key=lambda p: p.stat().st_mtime)
    if not ddis:
        raise DataUnavailable(dataset, f"the IPUMS download in {raw_dir} has no DDI (.xml)")
    ddi = ddis[-1]
    stem = ddi.name[:-4]
    for ext in (".dat.gz", ".dat", ".csv.gz", ".csv"):
        if (raw_dir / (stem + ext)).exists():
            return raw_dir / (stem + ext), ddi
    raise DataUnavailable(dataset, f"the IPUMS download in {raw_dir} has no data file for {ddi}")
