"""Helpers shared by the readers: CSV parsing that names the file on failure, money parsing,
header normalisation."""

from __future__ import annotations

import csv
import gzip
import re
from pathlib import Path

import pandas as pd

from ldprepro.pipeline.errors import BadInput


def read_csv(path: str | Path, *, first_line: int = 2, **kw) -> pd.DataFrame:
    """``pd.read_csv`` whose errors (malformed lines, truncated quotes, bad gzip) name the file.

    Also refused, naming the file, the line and the first missing column: a row with fewer
    fields than the header (a truncated last line would otherwise be read with NaN in its last
    columns), and a file with no data rows (empty, or a header only). ``first_line`` is the
    file line of the first data row (for the messages).
    """
    try:
        df = pd.read_csv(path, **kw)
    except pd.errors.EmptyDataError as exc:
        raise BadInput(f"{path}: empty file (no header, no data rows)") from exc
    except (pd.errors.ParserError, UnicodeDecodeError, EOFError, OSError, ValueError) as exc:
        raise BadInput(f"{path}: cannot be parsed as CSV: {exc}") from exc
    if len(df) == 0:
        raise BadInput(f"{path}: no data rows (line {first_line - 1} is the last line; columns "
                       f"{[str(c) for c in df.columns][:20]})")
    check_field_counts(path, [str(c) for c in df.columns], first_line, kw)
    return df


def check_field_counts(path: str | Path, columns: list[str], first_line: int, kw: dict) -> None:
    """Raise BadInput at the first record with fewer fields than ``columns``.

    One pass of the ``csv`` module (quoting-aware, C speed) over the file as pandas read it.
    Skipped for regular-expression separators, which ``csv`` cannot follow.
    """
    sep = kw.get("sep", kw.get("delimiter", ",")) or ","
    if len(sep) != 1:
        return
    skip = kw.get("skiprows") or 0
    if not isinstance(skip, int):
        return
    header = kw.get("header", "infer")
    has_header = header == 0 or (header == "infer" and kw.get("names") is None)
    if str(path).endswith((".bz2", ".xz", ".zip", ".zst", ".tar")):
        return
    opener = gzip.open if str(path).endswith(".gz") else open
    n = len(columns)
    with opener(path, "rt", newline="", encoding=kw.get("encoding") or "utf-8",
                errors="replace") as fh:
        reader = csv.reader(fh, delimiter=sep, skipinitialspace=bool(kw.get("skipinitialspace")))
        for _ in range(skip + (1 if has_header else 0)):
            next(reader, None)
        for rec in reader:
            if not rec or (len(rec) == 1 and not rec[0].strip()):
                continue  # blank line (pandas skips them too)
            if len(rec) < n:
                raise BadInput(f"{path}: column '{columns[len(rec)]}', row {reader.line_num}: "
                               f"the line has {len(rec)} of {n} fields, so '{columns[len(rec)]}'"
                               f" and any later columns are missing (truncated file?)")


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
