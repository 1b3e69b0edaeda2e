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

With neither, :func:`locate_extract` raises DataUnavailable with the exact steps.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import DataUnavailable
from .fetch import check, lock_path, read_lock, sha256_file, write_lock

KEY_ENV = "IPUMS_API_KEY"


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
        expected = read_lock(data)
        actual = check(data, expected, str(data))
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
    client = IpumsApiClient(key)
    extract = MicrodataExtract(collection=o["collection"], samples=[o["sample"]],
                               variables=variables, data_format=o.get("data_format",
                                                                      "fixed_width"),
                               description=f"ldprepro {dataset}")
    client.submit_extract(extract)
    log(f"{dataset}: submitted IPUMS extract {extract.extract_id}; waiting for it")
    client.wait_for_extract(extract)
    raw_dir.mkdir(parents=True, exist_ok=True)
    client.download_extract(extract, download_dir=raw_dir)
    ddis = sorted(raw_dir.glob("*.xml"), key=lambda p: p.stat().st_mtime)
    if not ddis:
        raise DataUnavailable(dataset, f"the IPUMS download in {raw_dir} has no DDI (.xml)")
    ddi = ddis[-1]
    stem = ddi.name[:-4]
    for ext in (".dat.gz", ".dat", ".csv.gz", ".csv"):
        if (raw_dir / (stem + ext)).exists():
            return raw_dir / (stem + ext), ddi
    raise DataUnavailable(dataset, f"the IPUMS download in {raw_dir} has no data file for {ddi}")
