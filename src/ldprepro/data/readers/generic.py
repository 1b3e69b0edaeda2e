"""A user-added table: one CSV or parquet file described entirely by its config entry.

``options``: ``format`` (csv | parquet; default from the file name), ``sep``, ``header``
(true: the first line names the columns; false: give ``names``), ``na_values``, ``columns``
(``{name: {type: numeric|categorical|binary, domain: [L, U] | observed, categories, integer}}``:
only these columns are kept, in this order), ``dropna`` (drop rows with a missing value in the
listed columns, or in any declared column when true; counted in the data card).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ldprepro.pipeline.errors import BadInput
from ldprepro.data.table import Column, Table
from ldprepro.data.readers.common import one_based_index, read_csv, require_columns


def read(paths: dict[str, Path], options: dict) -> Table:
    if len(paths) != 1:
        raise BadInput(f"kind 'table' takes exactly one file, got {list(paths)}")
    path = next(iter(paths.values()))
    fmt = options.get("format") or ("parquet" if path.name.endswith(".parquet") else "csv")
    if fmt == "parquet":
        try:
            df = pd.read_parquet(path)
        except Exception as exc:  # pyarrow raises many types
            raise BadInput(f"{path}: cannot be read as parquet: {exc}") from exc
        df.index = pd.RangeIndex(1, len(df) + 1, name="row")
    else:
        header = options.get("header", True)
        df = read_csv(path, sep=options.get("sep", ","), header=0 if header else None,
                      names=options.get("names"), na_values=options.get("na_values"),
                      skipinitialspace=True, dtype=str)
        one_based_index(df, 2 if header else 1)
    spec = options["columns"]
    require_columns(df, list(spec), path)
    cols = [Column.from_config(name, cfg) for name, cfg in spec.items()]
    t = Table(df[list(spec)], cols, str(path), len(df))
    dropna = options.get("dropna", False)
    if dropna:
        which = list(spec) if dropna is True else list(dropna)
        for c in which:
            t.drop(t.df[c].isna().to_numpy(), f"missing value in '{c}'")
    return t
