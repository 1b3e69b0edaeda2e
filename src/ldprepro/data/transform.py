"""Encodings that experiments apply to the processed tables (never baked into the files).

- :func:`to_unit` maps a numeric attribute with domain [L, U] to [-1, 1]:
  v' = 2(v - L)/(U - L) - 1 (docs/papers/hiera.md §1, docs/papers/dct.md §1, docs/papers/ldpfl.md §14);
  :func:`from_unit` inverts it.
- :func:`one_hot` turns a categorical attribute with k values into k binary attributes
  (paper 000, docs/papers/hiera.md §8.1: "nominal categoricals with k values become k one-hot attributes").
- :func:`k_minus_1` turns it into k-1 binary attributes: value l < k switches on attribute l,
  value k switches none on (papers 002/003, docs/papers/ldpfl.md §12, docs/papers/dct.md §3). ``on``/``off`` default to
  1/0 (paper 003's {0,1}); paper 002's most likely coding is on=+1, off=-1 [I].
- :func:`ordinal_codes` gives consecutive integers 0..k-1 (paper 000's ordinal categoricals).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from ldprepro.pipeline.verify import check_dataset, check_rows, read_json, read_table


def to_unit(values, domain: Sequence[float]) -> np.ndarray:
    lo, hi = float(domain[0]), float(domain[1])
    if not hi > lo:
        raise ValueError(f"domain must have U > L, got {domain}")
    v = np.asarray(values, dtype="float64")
    if np.isnan(v).any():
        raise ValueError("NaN in a numeric attribute")
    if (v < lo).any() or (v > hi).any():
        raise ValueError(f"values outside the domain [{lo}, {hi}]")
    return np.clip(2.0 * (v - lo) / (hi - lo) - 1.0, -1.0, 1.0)


def from_unit(values, domain: Sequence[float]) -> np.ndarray:
    lo, hi = float(domain[0]), float(domain[1])
    return (np.asarray(values, dtype="float64") + 1.0) * (hi - lo) / 2.0 + lo


def _categories(s: pd.Series, categories) -> list:
    if categories is not None:
        return list(categories)
    if isinstance(s.dtype, pd.CategoricalDtype):
        return list(s.cat.categories)
    return sorted(pd.unique(s.dropna()).tolist())


def _codes(s: pd.Series, cats: list) -> np.ndarray:
    codes = pd.Categorical(s, categories=cats).codes
    if (codes < 0).any():
        i = int(np.argmax(codes < 0))
        raise ValueError(f"column '{s.name}', row {s.index[i]}: value {s.iloc[i]!r} is missing "
                         f"or not in the categories")
    return codes


def one_hot(s: pd.Series, categories=None, on: float = 1, off: float = 0) -> pd.DataFrame:
    """k binary columns ``<name>=<value>`` (paper 000)."""
    cats = _categories(s, categories)
    codes = _codes(s, cats)
    m = np.full((len(s), len(cats)), off, dtype="float64")
    m[np.arange(len(s)), codes] = on
    return pd.DataFrame(m, columns=[f"{s.name}={c}" for c in cats], index=s.index)


def k_minus_1(s: pd.Series, categories=None, on: float = 1, off: float = 0) -> pd.DataFrame:
    """k-1 binary columns; the last category switches none on (papers 002/003)."""
    full = one_hot(s, categories, on, off)
    return full.iloc[:, :-1]


def ordinal_codes(s: pd.Series, categories=None) -> np.ndarray:
    return _codes(s, _categories(s, categories)).astype("int64")


def domains(card: dict) -> dict[str, list]:
    """{column: [L, U]} for every numeric column of a data card."""
    return {c["name"]: c["domain"] for c in card["columns"] if c["type"] == "numeric"}


def load(dataset: str, root: str | Path = "data/processed") -> tuple[pd.DataFrame, dict]:
    """(processed table, data card) of a dataset, verified: the card must parse, and the parquet
    must have the sha256 and row count the card records (its ``parquet`` field). Otherwise the
    damaged file is removed and DamagedInput names it and the command that rebuilds it
    (ldprepro.pipeline.verify)."""
    root = Path(root)
    parquet, card_path = root / f"{dataset}.parquet", root / f"{dataset}.json"
    card = read_json(card_path, "data card")
    check_dataset(parquet, card, card_path)
    df = read_table(parquet)
    check_rows(parquet, card, card_path, len(df))
    return df, card


def unit_table(df: pd.DataFrame, card: dict, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """The numeric columns mapped to [-1, 1] with their card domains."""
    dom = domains(card)
    cols = columns or list(dom)
    return pd.DataFrame({c: to_unit(df[c], dom[c]) for c in cols}, index=df.index)


def complete_cases(df: pd.DataFrame) -> pd.DataFrame:
    """Rows without missing values (Adult: 45,222 of 48,842)."""
    if "has_missing" in df.columns:
        return df[df["has_missing"].astype(int) == 0]
    return df.dropna()
