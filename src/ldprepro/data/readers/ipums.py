"""IPUMS extracts (USA or International): a data file (fixed-width ``.dat``/``.dat.gz`` or
``.csv``/``.csv.gz``) and its DDI codebook (``.xml``).

The DDI (DDI-Codebook 2.5, as IPUMS writes it) gives each variable's name, columns
(``<location StartPos EndPos width>``), implied decimals (``dcml``) and value labels
(``<catgry><catValu>..</catValu><labl>..</labl></catgry>``). We parse it with the standard library
so that reading a user's extract needs no extra package; the API route (ipumspy) is in
:mod:`ldprepro.data.ipums_api`.

``options.numeric``: ``{VAR: {domain: [L, U] | observed, missing_codes: [...]}}``;
``options.categorical``: ``{VAR: {missing_codes: [...]}}``. Rows whose value is a missing/NIU
code of any selected variable are dropped and counted per variable.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ...errors import BadInput
from ..table import Column, Table
from .common import read_csv


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


def read_data(data: Path, ddi: dict[str, DdiVar], wanted: list[str]) -> pd.DataFrame:
    missing = [v for v in wanted if v not in ddi]
    if missing:
        raise BadInput(f"the DDI codebook has no variable(s) {missing}; it has {sorted(ddi)}")
    name = data.name.lower()
    if name.endswith((".csv", ".csv.gz")):
        df = read_csv(data, dtype=str)
        df.columns = [c.upper() for c in df.columns]
        miss = [v for v in wanted if v not in df.columns]
        if miss:
            raise BadInput(f"{data}: missing column(s) {miss}; found {list(df.columns)}")
        df = df[wanted]
    else:
        specs = [(ddi[v].start - 1, ddi[v].end) for v in wanted]
        width = max(ddi[v].end for v in ddi)
        try:
            df = pd.read_fwf(data, colspecs=specs, names=wanted, dtype=str, header=None,
                             compression="infer")
        except (ValueError, OSError, EOFError) as exc:
            raise BadInput(f"{data}: cannot be read as fixed-width: {exc}") from exc
        # a truncated last record is shorter than the record length
        import gzip
        opener = gzip.open if name.endswith(".gz") else open
        with opener(data, "rt") as fh:
            for i, line in enumerate(fh, start=1):
                if len(line.rstrip("\r\n")) < width:
                    raise BadInput(f"{data}: row {i}: record is {len(line.rstrip())} characters, "
                                   f"the codebook needs {width} (truncated file?)")
    df.index = pd.RangeIndex(1 if not name.endswith((".csv", ".csv.gz")) else 2,
                             len(df) + (1 if not name.endswith((".csv", ".csv.gz")) else 2),
                             name="row")
    for v in wanted:
        if ddi[v].decimals and not name.endswith((".csv", ".csv.gz")):
            num = pd.to_numeric(df[v], errors="coerce") / 10 ** ddi[v].decimals
            df[v] = num.astype("string")
    return df


def read(data: Path, ddi_path: Path, options: dict) -> Table:
    ddi = read_ddi(ddi_path)
    numeric = options.get("numeric", {}) or {}
    categorical = options.get("categorical", {}) or {}
    wanted = list(numeric) + list(categorical)
    df = read_data(data, ddi, [v.upper() for v in wanted])
    df.columns = wanted
    t = Table(df, [], str(data), len(df))
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
