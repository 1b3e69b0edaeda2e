"""Typed tables, validation against declared column domains, and the data card.

Every reader returns a :class:`Table`: a DataFrame whose index is the row number in the source
file (so error messages can name it), the declared :class:`Column` of each output column, and
the rows it dropped and why. :func:`finalise` checks and types the columns; :func:`data_card`
describes the result; :func:`write_outputs` writes ``{dataset}.parquet`` and ``{dataset}.json``
atomically.

Column types:
- ``numeric``: float64 (or int64 when ``integer``), raw values kept; ``domain`` [L, U] declared,
  or ``"observed"`` (the data's own min and max, as in the salary paper's Sec. 3.1). A value
  outside a declared domain or a NaN is an error naming the file, column and row.
- ``categorical``: pandas Categorical with sorted (or declared) categories; missing allowed.
- ``binary``: a categorical with categories [0, 1].
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ldprepro import __version__
from ldprepro.pipeline.errors import BadInput
from ldprepro.pipeline.integrity import sha256_file
from ldprepro.pipeline.io import atomic_write_text, write_parquet

OBSERVED = "observed"


@dataclass
class Column:
    name: str
    type: str  # numeric | categorical
    domain: Any = OBSERVED  # [L, U] or "observed" (numeric)
    categories: Sequence | None = None  # declared categories (categorical); None = sorted values
    integer: bool = False
    description: str = ""
    allow_missing: bool = False  # numeric only; categorical always may be missing

    @classmethod
    def from_config(cls, name: str, cfg: dict) -> "Column":
        return cls(name=name, type=cfg["type"], domain=cfg.get("domain", OBSERVED),
                   categories=cfg.get("categories"), integer=bool(cfg.get("integer", False)),
                   description=cfg.get("description", ""))


@dataclass
class Drop:
    reason: str
    rows: int
    examples: list = field(default_factory=list)  # up to 10 source row numbers / lines


@dataclass
class Table:
    df: pd.DataFrame
    columns: list[Column]
    source_file: str  # named in error messages
    rows_raw: int
    drops: list[Drop] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    extra: dict = field(default_factory=dict)  # reader-specific card fields (e.g. views, sample)

    def drop(self, mask: pd.Series | np.ndarray, reason: str) -> None:
        """Drop the rows where ``mask`` is true and record why."""
        mask = np.asarray(mask, dtype=bool)
        n = int(mask.sum())
        if n:
            examples = [_plain(i) for i in self.df.index[mask][:10]]
            self.drops.append(Drop(reason, n, examples))
            self.df = self.df.loc[~mask]


def _plain(v):
    return v.item() if isinstance(v, np.generic) else v


def _bad(table: Table, column: str, row, what: str) -> BadInput:
    return BadInput(f"{table.source_file}: column '{column}', row {row}: {what}")


def finalise(table: Table) -> Table:
    """Check every declared column and give it its dtype; returns the table with typed columns."""
    df = table.df
    names = [c.name for c in table.columns]
    missing = [n for n in names if n not in df.columns]
    if missing:
        raise BadInput(f"{table.source_file}: missing column(s) {missing}; found {list(df.columns)}")
    if len(df) == 0:
        why = ("the file has no data rows" if table.rows_raw == 0 else
               f"all {table.rows_raw} rows were dropped ("
               + "; ".join(f"{d.rows}: {d.reason}" for d in table.drops) + ")")
        first = names[0] if names else "?"
        raise BadInput(f"{table.source_file}: column '{first}', row 1: no rows to normalise: "
                       f"{why}")
    out = {}
    for col in table.columns:
        s = df[col.name]
        if col.type == "numeric":
            out[col.name] = _numeric(table, col, s)
        elif col.type in ("categorical", "binary"):
            out[col.name] = _categorical(table, col, s)
        else:  # pragma: no cover - the config schema forbids it
            raise BadInput(f"{table.source_file}: column '{col.name}': unknown type {col.type}")
    table.df = pd.DataFrame(out, index=df.index)
    return table


def _first(mask) -> int:
    return int(np.flatnonzero(np.asarray(mask, dtype=bool))[0])


def _numeric(table: Table, col: Column, s: pd.Series) -> pd.Series:
    v = pd.to_numeric(s, errors="coerce")
    bad = (v.isna() & ~s.isna()).to_numpy()
    if bad.any():
        i = _first(bad)
        raise _bad(table, col.name, s.index[i], f"not a number: {_plain(s.iloc[i])!r}")
    if v.isna().any() and not col.allow_missing:
        raise _bad(table, col.name, s.index[_first(v.isna())],
                   "missing value (NaN) in a numeric column")
    arr = v.to_numpy(dtype="float64")
    inf = np.isinf(arr)
    if inf.any():
        i = _first(inf)
        raise _bad(table, col.name, s.index[i], f"non-finite value {float(arr[i])!r}")
    if col.domain != OBSERVED:
        lo, hi = col.domain
        out = (arr < lo) | (arr > hi)
        if out.any():
            i = _first(out)
            raise _bad(table, col.name, s.index[i], f"value {_plain(arr[i])!r} outside the "
                                                    f"declared domain [{lo}, {hi}]")
    if col.integer:
        frac = np.round(arr) != arr
        if frac.any():
            i = _first(frac)
            raise _bad(table, col.name, s.index[i], f"value {_plain(arr[i])!r} is not an integer")
        return pd.Series(arr.astype("int64"), index=s.index)
    return pd.Series(arr, index=s.index, dtype="float64")


def _categorical(table: Table, col: Column, s: pd.Series) -> pd.Series:
    cats = [0, 1] if col.type == "binary" else col.categories
    values = s
    if cats is not None and len(cats) and all(isinstance(c, (int, np.integer)) for c in cats):
        num = pd.to_numeric(s, errors="coerce")
        bad = (num.isna() & ~s.isna()).to_numpy()
        if bad.any():
            i = _first(bad)
            raise _bad(table, col.name, s.index[i], f"not an integer code: {_plain(s.iloc[i])!r}")
        values = num.astype("Int64")
    if cats is None:
        cats = sorted(pd.unique(values.dropna()).tolist())
    present = values.notna().to_numpy()
    unknown = present & ~values.isin(cats).to_numpy()
    if unknown.any():
        i = _first(unknown)
        raise _bad(table, col.name, s.index[i], f"value {_plain(values.iloc[i])!r} is not one "
                                                f"of the declared categories {list(cats)[:20]}")
    if all(isinstance(c, (int, np.integer)) for c in cats):
        values = values.astype("float64")  # Int64 -> plain values for Categorical
    return pd.Series(pd.Categorical(values, categories=list(cats)), index=s.index)


def observed_domain(s: pd.Series) -> list[float]:
    return [_num(s.min()), _num(s.max())]


def _num(x):
    x = _plain(x)
    if isinstance(x, float) and x.is_integer() and abs(x) < 2**53:
        return int(x) if math.isfinite(x) else x
    return x


def _refuse_degenerate(dataset: str, table: Table, col: Column, domain: list) -> None:
    """A numeric column's domain [L, U] must have U > L: every experiment maps it to [-1, 1] by
    2(v - L)/(U - L) - 1. A constant column (observed domain [c, c]) or a declared [c, c] is refused
    here, when the data are normalised, instead of failing every job that uses the dataset later."""
    lo, hi = domain
    if hi > lo:
        return
    what = (f"every value is {lo!r}, so its observed domain [{lo}, {hi}] has no width" if col.domain == OBSERVED
            else f"its declared domain [{lo}, {hi}] has no width")
    raise BadInput(f"{table.source_file}: dataset '{dataset}', column '{col.name}': {what}, and a "
                   f"numeric column with domain [L, U] needs U > L to be mapped to [-1, 1]. Declare a "
                   f"domain [L, U] with L < U for '{col.name}' (config.yaml datasets.{dataset}, its "
                   f"column's `domain`), declare it categorical, or leave the column out.")


def data_card(dataset: str, entry: dict, table: Table, fetched: list[dict]) -> dict:
    """The data card: source, checksums, rows before/after cleaning, drops, columns."""
    cols = []
    for col in table.columns:
        s = table.df[col.name]
        info: dict[str, Any] = {"name": col.name, "type": col.type, "dtype": str(s.dtype),
                                "missing": int(s.isna().sum())}
        if col.type == "numeric":
            if not np.isfinite(s.to_numpy(dtype="float64", na_value=np.nan)).any():
                raise BadInput(f"{table.source_file}: column '{col.name}': no finite value in any "
                               f"of its {len(s)} rows, so it has no observed domain")
            info["domain"] = observed_domain(s) if col.domain == OBSERVED else list(col.domain)
            _refuse_degenerate(dataset, table, col, info["domain"])
            info["domain_from"] = "data (min, max)" if col.domain == OBSERVED else "declared"
            if len(s):
                info["observed"] = observed_domain(s)
        else:
            cats = [_plain(c) for c in s.cat.categories]
            cats = [_num(c) if isinstance(c, float) else c for c in cats]
            info["categories"] = cats if len(cats) <= 60 else cats[:60] + ["..."]
            info["n_categories"] = len(cats)
        if col.description:
            info["description"] = col.description
        cols.append(info)
    card = {
        "dataset": dataset,
        "kind": entry["kind"],
        "description": entry.get("description", ""),
        "source": entry.get("source", ""),
        "licence": entry.get("licence", ""),
        "files": fetched,
        "rows_before_cleaning": int(table.rows_raw),
        "rows_after_cleaning": int(len(table.df)),
        "dropped": [{"reason": d.reason, "rows": d.rows, "examples": d.examples}
                    for d in table.drops],
        "columns": cols,
        "notes": list(entry.get("notes", [])) + table.notes,
        "options": entry.get("options", {}),
        "ldprepro_version": __version__,
    }
    card.update(table.extra)
    dropped = sum(d.rows for d in table.drops)
    if table.rows_raw - dropped != len(table.df):
        raise AssertionError(f"{dataset}: row accounting is off: {table.rows_raw} - {dropped} "
                             f"!= {len(table.df)}")
    return card


def parquet_dtypes(path: str | Path) -> dict[str, str]:
    """{column: dtype} of a parquet file's columns as ``pandas.read_parquet`` gives them back (read
    one column at a time). Not always the dtype written: a categorical with integer categories
    (``binary``, integer-coded ``categorical``) comes back as its integer (or, with missing values,
    float) values, not as ``category``."""
    import pyarrow.parquet as pq

    return {name: str(pd.read_parquet(path, columns=[name])[name].dtype)
            for name in pq.read_schema(path).names}


def write_outputs(table: Table, card: dict, parquet: str | Path, card_path: str | Path) -> None:
    """Write the parquet (index dropped, row order kept) and then the card, both atomically. The
    card's column ``dtype`` is then set to what the parquet holds (:func:`parquet_dtypes`), which is
    what every reader of the parquet gets, and its ``parquet`` field records the parquet's file
    name, sha256 and row count, checked on every load (:func:`ldprepro.data.transform.load`).

    The card is strict JSON (``allow_nan=False``); nothing is written when it is not."""
    df = table.df.reset_index(drop=True)
    try:  # strict JSON: a NaN or infinity anywhere in the card is an error, never written
        json.dumps(card, default=_plain, allow_nan=False)
    except ValueError as exc:
        raise BadInput(f"{card_path}: the data card of '{card.get('dataset')}' holds a NaN or "
                       f"infinite value ({exc}); not written") from exc
    write_parquet(df, parquet)
    # what every load checks (ldprepro.data.transform.load): the parquet's bytes and row count
    card["parquet"] = {"file": Path(parquet).name, "sha256": sha256_file(parquet), "rows": int(len(df))}
    held = parquet_dtypes(parquet)
    for col in card.get("columns", []):
        if col.get("name") in held:
            col["dtype"] = held[col["name"]]
    text = json.dumps(card, indent=2, sort_keys=False, default=_plain, allow_nan=False)
    atomic_write_text(card_path, text + "\n", digest=True)
