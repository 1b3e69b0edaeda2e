"""Build one processed dataset: files -> reader -> typed table -> parquet + data card.

Entry points used by the Snakemake scripts (workflow/scripts/data_*.py; the download jobs import
the light :mod:`ldprepro.data.obtain`, re-exported here):
:func:`needed_files` (which raw files a config entry needs), :func:`fetch`, :func:`build_from_files`,
:func:`build_synthetic`, :func:`build_ipums`. Unavailable data is recorded with
``ldprepro.pipeline.status.record_unavailable`` before DataUnavailable propagates.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ldprepro.data import synthetic
from ldprepro.data.fetch import verify_raw
from ldprepro.data.readers import READERS
from ldprepro.data.entries import RAW_ROOT, needed_files  # noqa: F401 (re-exported)
from ldprepro.data.obtain import exit_if_unavailable, fetch, file_spec, unavailable_recorded  # noqa: F401 (re-exported)
from ldprepro.data.table import data_card, finalise, write_outputs

FILE_KINDS = set(READERS)
# RAW_ROOT and needed_files live in the light module .entries (the workflow reads them at parse
# time without importing pandas); re-exported here for the scripts and tests that use them.


def _provenance(spec: dict, path: Path) -> dict:
    """The data card's record of one raw file, after verifying it against its expected sha256
    (raises RawFileChanged when it no longer matches)."""
    info = {"name": spec["name"], **verify_raw(path, spec)}
    for key in ("url", "mirror", "mirror_sha256", "path"):
        if spec.get(key):
            info[key] = spec[key]
    if spec.get("socrata"):
        info["socrata"] = spec["socrata"]
    return info


def build_from_files(dataset: str, entry: dict, raw: dict[str, str | Path], parquet, card_path,
                     log=print) -> dict:
    """Read the raw files of a file-backed dataset and write parquet + data card."""
    files = needed_files(entry)
    paths = {f["name"]: Path(raw[f["name"]]) for f in files}
    provenance = [_provenance(f, paths[f["name"]]) for f in files]  # verify before reading
    table = READERS[entry["kind"]](paths, entry.get("options", {}) or {}, files, log)
    finalise(table)
    card = data_card(dataset, entry, table, provenance)
    write_outputs(table, card, parquet, card_path)
    return card


def build_synthetic(dataset: str, entry: dict, seed: int, scale: str, parquet, card_path) -> dict:
    table = finalise(synthetic.generate(dataset, entry["options"], seed, scale))
    card = data_card(dataset, entry, table, [])
    write_outputs(table, card, parquet, card_path)
    return card


def build_ipums(dataset: str, entry: dict, parquet, card_path, extract_dir: str = "",
                log=print) -> dict:
    # imported here: only the IPUMS job needs the API client and the reader (and ipumspy behind them)
    from ldprepro.data import ipums_api
    from ldprepro.data.readers import ipums as ipums_reader

    with unavailable_recorded(dataset, str(parquet), log=log):
        data, ddi, prov = ipums_api.locate_extract(dataset, entry, RAW_ROOT / dataset,
                                                   extract_dir, log=log)
    table = finalise(ipums_reader.read(data, ddi, entry["options"]))
    card = data_card(dataset, entry, table, [prov])
    write_outputs(table, card, parquet, card_path)
    return card


def log_to(path: str | Path | None):
    """A ``log`` function appending to ``path`` (and echoing to stderr)."""
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    fh = open(path, "a") if path else None

    def log(msg: str) -> None:
        print(msg, file=sys.stderr)
        if fh:
            fh.write(msg + "\n")
            fh.flush()
    return log
