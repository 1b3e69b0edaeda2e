"""UCI Adult (Kohavi 1996): ``adult.data`` (32,561 records) + ``adult.test`` (16,281).

Format (adult.names; MANIFEST §1): no header, fields separated by ", ", 15 columns, '?' marks a
missing value, ``adult.test`` starts with the line ``|1x3 Cross validator`` and its labels carry a
trailing dot (``<=50K.``), which is removed here. Both files end with a blank line.

All 48,842 records are kept, with ``split`` (train/test) and ``has_missing``; the complete-case
view used by paper 004 (45,222 records) is ``df[~df.has_missing]`` (see
:func:`ldprepro.data.complete_cases`). ``options.drop_missing: true`` drops them instead.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ldprepro.pipeline.errors import BadInput
from ldprepro.data.table import Column, Table
from ldprepro.data.readers.common import read_csv

NAMES = ["age", "workclass", "fnlwgt", "education", "education_num", "marital_status",
         "occupation", "relationship", "race", "sex", "capital_gain", "capital_loss",
         "hours_per_week", "native_country", "income"]
NUMERIC = {"age": [17, 90], "fnlwgt": "observed", "education_num": [1, 16],
           "capital_gain": [0, 99999], "capital_loss": "observed", "hours_per_week": [1, 99]}
CATEGORICAL = [n for n in NAMES if n not in NUMERIC]


def _read_one(path: Path, skiprows: int) -> pd.DataFrame:
    df = read_csv(path, header=None, names=NAMES, skipinitialspace=True, na_values=["?"],
                  keep_default_na=False, skiprows=skiprows, dtype=str, skip_blank_lines=True,
                  on_bad_lines="error", index_col=False)
    # a short (truncated) line leaves NaN in its last columns; a long one is a parser error
    short = df["income"].isna() | (df["income"].astype("string").str.strip() == "")
    if short.any():
        row = int(df.index[short.to_numpy()][0]) + skiprows + 1
        raise BadInput(f"{path}: column 'income', row {row}: line has fewer than 15 fields "
                       f"(truncated file?)")
    df.index = pd.RangeIndex(skiprows + 1, skiprows + 1 + len(df), name="line")
    return df


def read(paths: dict[str, Path], options: dict) -> Table:
    train = _read_one(paths["adult.data"], 0)
    test = _read_one(paths["adult.test"], 1)
    test["income"] = test["income"].str.rstrip(".")
    train["split"], test["split"] = "train", "test"
    # index = "<file>:<line>" so that messages name the file and line
    train.index = [f"adult.data:{i}" for i in train.index]
    test.index = [f"adult.test:{i}" for i in test.index]
    df = pd.concat([train, test])
    df["has_missing"] = df[NAMES].isna().any(axis=1).astype("int64")
    cols = [Column(n, "numeric", NUMERIC[n], integer=True) if n in NUMERIC
            else Column(n, "categorical") for n in NAMES]
    cols.append(Column("split", "categorical", categories=["train", "test"]))
    cols.append(Column("has_missing", "binary", description="1 if any attribute is '?'"))
    table = Table(df, cols, f"{paths['adult.data']} + {paths['adult.test']}", len(df))
    n_complete = int((df["has_missing"] == 0).sum())
    table.extra["views"] = {"complete_cases": {
        "rows": n_complete, "how": "df[df.has_missing == 0]",
        "used_by": "paper 004 (45,222 records after dropping rows with missing values)"}}
    table.notes.append("test-set labels had their trailing '.' removed ('<=50K.' -> '<=50K')")
    if options.get("drop_missing"):
        table.drop(df["has_missing"] == 1, "a value is missing ('?')")
    return table
