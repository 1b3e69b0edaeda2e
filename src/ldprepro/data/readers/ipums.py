"""IPUMS extracts (USA or International): a data file (fixed-width ``.dat``/``.dat.gz`` or
``.csv``/``.csv.gz``) and its DDI codebook (``.xml``).

The DDI (DDI-Codebook 2.5, as IPUMS writes it) gives each variable's name, columns
(``<location StartPos EndPos width>``), implied decimals (``dcml``) and value labels
(``<catgry><catValu>..</catValu><labl>..</labl></catgry>``).

When the ``ipums`` extra is installed, the data file is read with IPUMS' own reader
(``ipumspy.readers.read_ipums_ddi`` + ``read_microdata``, which applies the implied decimals);
otherwise (or when ipumspy cannot parse the codebook) with the built-in reader below, which
needs only the standard library and pandas. Both give the same table, and the data card says
which one was used. Either way a fixed-width record shorter than the codebook's record length
and a CSV row with missing fields are errors naming the file and row. The API route (ipumspy)
is in :mod:`ldprepro.data.ipums_api`.

``options.numeric``: ``{VAR: {domain: [L, U] | observed, missing_codes: [...]}}``;
``options.categorical``: ``{VAR: {missing_codes: [...]}}``. Rows whose value is a missing/NIU
code of any selected variable are dropped and counted per variable.
"""

from __future__ import annotations

import csv
import gzip
import importlib.metadata
import warnings
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ldprepro.pipeline.errors import BadInput
from ldprepro.data.table import Column, Table
from ldprepro.data.readers.common import check_field_counts, read_csv

try:  # the `ipums` extra
    from ipumspy import readers as ipumspy_readers
except ImportError:  # pragma: no cover - depends on the environment
    ipumspy_readers = None


@dataclass
class DdiVar:
    name: str
    start: int  # 1-based
    end: int
    decimals: int = 0
    label: str = ""
    codes: dict = field(default_factory=dict)


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def read_ddi(path: Path) -> dict[str, DdiVar]:
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as exc:
        raise BadInput(f"{path}: not a readable DDI codebook: {exc}") from exc
    out = {}
    for el in root.iter():
        if _local(el.tag) != "var":
            continue
        name = el.get("name") or el.get("ID")
        loc = next((c for c in el if _local(c.tag) == "location"), None)
        if loc is None:
            continue
        try:
            start = int(loc.get("StartPos"))
            end = int(loc.get("EndPos") or start + int(loc.get("width")) - 1)
        except (TypeError, ValueError) as exc:
            raise BadInput(f"{path}: variable {name}: bad <location>") from exc
        labl = next((c.text or "" for c in el if _local(c.tag) == "labl"), "")
        codes = {}
        for cat in (c for c in el if _local(c.tag) == "catgry"):
            val = next((c.text for c in cat if _local(c.tag) == "catValu"), None)
            lab = next((c.text for c in cat if _local(c.tag) == "labl"), "")
            if val is not None:
                codes[val.strip()] = (lab or "").strip()
        out[name.upper()] = DdiVar(name.upper(), start, end, int(el.get("dcml") or 0),
                                   labl.strip(), codes)
    if not out:
        raise BadInput(f"{path}: no <var> with a <location> in the DDI codebook")
    return out


def _is_csv(data: Path) -> bool:
    return data.name.lower().endswith((".csv", ".csv.gz"))


def _check_records(data: Path, ddi: dict[str, DdiVar]) -> None:
    """A fixed-width record shorter than the codebook's record length is a truncated file; a
    CSV row with fewer fields than the header likewise."""
    opener = gzip.open if data.name.lower().endswith(".gz") else open
    if _is_csv(data):
        try:
            with opener(data, "rt", newline="") as fh:
                header = next(csv.reader(fh), [])
        except (OSError, EOFError) as exc:
            raise BadInput(f"{data}: cannot be read: {exc}") from exc
        check_field_counts(data, [h.upper() for h in header], 2, {})
        return
    width = max(v.end for v in ddi.values())
    try:
        with opener(data, "rt") as fh:
            for i, line in enumerate(fh, start=1):
                if len(line.rstrip("\r\n")) < width:
                    raise BadInput(f"{data}: row {i}: record is {len(line.rstrip())} characters, "
                                   f"the codebook needs {width} (truncated file?)")
    except (OSError, EOFError) as exc:
        raise BadInput(f"{data}: cannot be read (truncated or corrupt?): {exc}") from exc


def _read_builtin(data: Path, ddi: dict[str, DdiVar], wanted: list[str]) -> pd.DataFrame:
    if _is_csv(data):
        df = read_csv(data, dtype=str)
        df.columns = [c.upper() for c in df.columns]
        miss = [v for v in wanted if v not in df.columns]
        if miss:
            raise BadInput(f"{data}: missing column(s) {miss}; found {list(df.columns)}")
        return df[wanted]
    specs = [(ddi[v].start - 1, ddi[v].end) for v in wanted]
    try:
        df = pd.read_fwf(data, colspecs=specs, names=wanted, dtype=str, header=None,
                         compression="infer")
    except (ValueError, OSError, EOFError) as exc:
        raise BadInput(f"{data}: cannot be read as fixed-width: {exc}") from exc
    for v in wanted:
        if ddi[v].decimals:
            num = pd.to_numeric(df[v], errors="coerce") / 10 ** ddi[v].decimals
            df[v] = num.astype("string")
    return df


def _read_ipumspy(data: Path, ddi_path: Path, wanted: list[str]) -> tuple[pd.DataFrame, str]:
    """(data as strings, citation) through ipumspy; raises LookupError when ipumspy cannot
    parse the codebook (the caller then uses the built-in reader)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ipumspy_readers.CitationWarning)
            codebook = ipumspy_readers.read_ipums_ddi(ddi_path)
    except Exception as exc:  # noqa: BLE001 - ipumspy raises AttributeError etc. on odd DDIs
        raise LookupError(f"{type(exc).__name__}: {exc}") from exc
    names = {d.name.upper(): d.name for d in codebook.data_description}
    try:
        df = ipumspy_readers.read_microdata(codebook, data, subset=[names[v] for v in wanted],
                                            dtype={names[v]: "string" for v in wanted})
    except (ValueError, KeyError, OSError, EOFError, TypeError) as exc:
        raise BadInput(f"{data}: ipumspy cannot read it with {ddi_path}: {exc}") from exc
    df.columns = [c.upper() for c in df.columns]
    return df[wanted], (codebook.ipums_citation or "").strip()


def read_data(data: Path, ddi: dict[str, DdiVar], wanted: list[str],
              ddi_path: Path | None = None) -> tuple[pd.DataFrame, dict]:
    """(the wanted variables as strings, indexed by row, {reader, citation} for the card)."""
    missing = [v for v in wanted if v not in ddi]
    if missing:
        raise BadInput(f"the DDI codebook has no variable(s) {missing}; it has {sorted(ddi)}")
    _check_records(data, ddi)
    info: dict = {}
    df = None
    if ipumspy_readers is not None and ddi_path is not None:
        try:
            df, citation = _read_ipumspy(data, ddi_path, wanted)
            info = {"reader": f"ipumspy {importlib.metadata.version('ipumspy')}"}
            if citation:
                info["citation"] = citation
        except LookupError as exc:
            info = {"reader": f"built-in (ipumspy could not parse the codebook: {exc})"}
    if df is None:
        df = _read_builtin(data, ddi, wanted)
        info.setdefault("reader", "built-in (DDI via xml.etree, data via pandas)")
    first = 2 if _is_csv(data) else 1
    df.index = pd.RangeIndex(first, first + len(df), name="row")
    return df, info


def read(data: Path, ddi_path: Path, options: dict) -> Table:
    ddi = read_ddi(ddi_path)
    numeric = options.get("numeric", {}) or {}
    categorical = options.get("categorical", {}) or {}
    wanted = list(numeric) + list(categorical)
    df, info = read_data(data, ddi, [v.upper() for v in wanted], ddi_path)
    df.columns = wanted
    t = Table(df, [], str(data), len(df))
    t.extra["ipums_reader"] = info
    for var, cfg in {**numeric, **categorical}.items():
        codes = [str(c) for c in (cfg or {}).get("missing_codes", [])]
        if codes:
            val = pd.to_numeric(t.df[var], errors="coerce")
            is_missing = val.isin([float(c) for c in codes]).to_numpy()
            t.drop(is_missing, f"{var} is a missing/not-in-universe code {codes}")
    for var, cfg in numeric.items():
        cfg = cfg or {}
        t.columns.append(Column(var, "numeric", cfg.get("domain", "observed"),
                                integer=ddi[var.upper()].decimals == 0,
                                description=ddi[var.upper()].label))
    for var, cfg in categorical.items():
        labels = ddi[var.upper()].codes
        t.columns.append(Column(var, "categorical", description=ddi[var.upper()].label))
        t.df[var] = pd.to_numeric(t.df[var], errors="coerce").astype("Int64")
        if labels:
            t.extra.setdefault("value_labels", {})[var] = {
                k: v for k, v in labels.items() if k.lstrip("-").isdigit()}
    return t
