"""Helpers shared by the readers: CSV parsing that names the file on failure, money parsing,
header normalisation."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from ...errors import BadInput


def read_csv(path: str | Path, **kw) -> pd.DataFrame:
    """``pd.read_csv`` whose errors (malformed lines, truncated quotes, bad gzip) name the file."""
    try:
        return pd.read_csv(path, **kw)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, EOFError,
            OSError, ValueError) as exc:
        raise BadInput(f"{path}: cannot be parsed as CSV: {exc}") from exc


def snake(name: str) -> str:
    """'Leave Status as of June 30' -> 'leave_status_as_of_june_30'; ' Name' -> 'name'."""
    return re.sub(r"[^0-9a-z]+", "_", str(name).strip().lower()).strip("_")


def parse_money(s: pd.Series) -> pd.Series:
    """'$35,109.00' / '35109' / 'Not Provided' -> float (NaN when not a number)."""
    txt = s.astype("string").str.strip().str.replace(r"[$,\s]", "", regex=True)
    return pd.to_numeric(txt, errors="coerce")


def one_based_index(df: pd.DataFrame, first_line: int = 2) -> pd.DataFrame:
    """Index rows by their line number in the file (header on line 1 -> data from line 2)."""
    df.index = pd.RangeIndex(first_line, first_line + len(df), name="line")
    return df


def require_columns(df: pd.DataFrame, needed, path) -> None:
    missing = [c for c in needed if c not in df.columns]
    if missing:
        raise BadInput(f"{path}: missing column(s) {missing}; found {list(df.columns)}")
