"""Derive paper 004's discretised Adult (LoPub "coarse", 45,222 × 15) from the UCI files.

Reverse-engineered from the mirrored file and verified code for code (tests/test_joint.py):

* rows: the complete cases (no "?") of adult.data followed by adult.test, in file order (45,222);
* categorical attributes: codes 0, 1, 2, … in order of first appearance in those rows (income with
  the test set's trailing "." removed, so 2 values);
* continuous attributes (age, fnlwgt, education-num, capital-gain, capital-loss, hours-per-week):
  16 equal-width bins between the column's min and max over those rows, right-closed
  ((e_{b-1}, e_b], the minimum in bin 0), as ``pandas.cut(x, 16)`` would give.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

LOPUB_ADULT_COLUMNS = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education_num",
    "marital_status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital_gain",
    "capital_loss",
    "hours_per_week",
    "native_country",
    "income",
]
CONTINUOUS = ("age", "fnlwgt", "education_num", "capital_gain", "capital_loss", "hours_per_week")
N_BINS = 16


def equal_width_codes(values: np.ndarray, bins: int = N_BINS) -> np.ndarray:
    """Right-closed equal-width bins over [min, max]: code b means e_b < x ≤ e_{b+1} (min → 0)."""
    v = np.asarray(values, dtype=float)
    edges = np.linspace(v.min(), v.max(), bins + 1)
    return np.clip(np.searchsorted(edges, v, side="left") - 1, 0, bins - 1).astype(np.int64)


def first_appearance_codes(values) -> np.ndarray:
    vals = np.asarray(pd.Series(values).astype(str))
    uniq, first = np.unique(vals, return_index=True)
    order = uniq[np.argsort(first, kind="stable")]
    lookup = {v: i for i, v in enumerate(order)}
    return np.array([lookup[v] for v in vals], dtype=np.int64)


def derive_lopub_adult(adult: pd.DataFrame) -> pd.DataFrame:
    """The LoPub coarse Adult from the processed UCI table (``load('adult')``: 48,842 rows with
    ``has_missing``, train rows before test rows)."""
    if "has_missing" not in adult.columns:
        raise ValueError("expected the processed UCI Adult table (column has_missing)")
    rows = adult[adult["has_missing"] == 0].reset_index(drop=True)
    out = {}
    for col in LOPUB_ADULT_COLUMNS:
        out[col] = equal_width_codes(rows[col]) if col in CONTINUOUS else first_appearance_codes(rows[col])
    return pd.DataFrame(out)
