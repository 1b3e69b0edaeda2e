"""Public-employee salaries for paper 001 (BSHP/WSHP; docs/papers/bshp.md §8.1).

Three cities, one salary per employee, prepared as the spec says: take one salary column, parse
currency strings, drop missing or non-positive values, and take the domain [v_min, v_max] from the
data ("observed"). Headers are normalised to snake_case and mapped to canonical names, because
spellings differ by year (MANIFEST §5: Baltimore ``AnnualSalary``/``ANNUAL_RT``, `` Name`` with a
leading space, ``$`` prefixes from FY2017; SF 2013 uses ``base_pay``/``jurisdiction_name``, SF 2013
and 2014 have CR-only line ends; NYC exports quote every field and write ``"$35,109.00"``).

Output columns: ``salary`` (numeric, observed domain), ``year`` (categorical integer: a label, one
file is one year, so as a number its domain would be [y, y]), ``agency``
(categorical). Names of employees are not kept.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ldprepro.pipeline.errors import BadInput
from ldprepro.data.table import Column, Table
from ldprepro.data.readers.common import one_based_index, parse_money, read_csv, require_columns, snake

BALTIMORE = {"name": "name", "jobtitle": "job_title", "agencyid": "agency_id",
             "deptid": "agency_id", "agency": "agency", "descr": "agency",
             "hiredate": "hire_date", "hire_dt": "hire_date", "annualsalary": "annual_salary",
             "annual_rt": "annual_salary", "grosspay": "gross_pay", "gross": "gross_pay"}
SF = {"employee_name": "name", "job_title": "job_title", "base_pay": "base_pay",
      "overtime_pay": "overtime_pay", "other_pay": "other_pay", "benefits": "benefits",
      "total_benefits": "benefits", "total_pay": "total_pay",
      "total_pay_benefits": "total_pay_benefits", "year": "year", "notes": "notes",
      "agency": "agency", "jurisdiction_name": "agency", "status": "status"}


def _load(path: Path, mapping: dict | None) -> pd.DataFrame:
    df = read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
    df.columns = [snake(c) for c in df.columns]
    if mapping is not None:
        df = df.rename(columns={c: mapping.get(c, c) for c in df.columns})
    return one_based_index(df)


def _salary_table(df: pd.DataFrame, path, salary_col: str, year, agency_col: str,
                  extra_notes=()) -> Table:
    require_columns(df, [salary_col], path)
    out = pd.DataFrame(index=df.index)
    out["salary"] = parse_money(df[salary_col])
    out["year"] = year if not isinstance(year, str) else pd.to_numeric(df[year], errors="coerce")
    out["agency"] = (df[agency_col].astype("string").str.strip()
                     if agency_col in df.columns else pd.NA)
    t = Table(out, [Column("salary", "numeric", "observed",
                           description=f"'{salary_col}' of the source file"),
                    # a label: one file is one year, so as a number its domain would be [y, y]
                    Column("year", "categorical"),
                    Column("agency", "categorical")], str(path), len(out))
    t.notes.extend(extra_notes)
    return t


def _clean_salary(t: Table) -> Table:
    t.drop(t.df["salary"].isna().to_numpy(), "salary missing or not a number")
    t.drop((t.df["salary"] <= 0).to_numpy(), "salary not positive")
    return t


def _pick(paths: dict[str, Path], options: dict, files: list[dict]) -> tuple[str, Path]:
    """The one file whose ``year`` is ``options.year``."""
    by_year = {f.get("year"): f["name"] for f in files}
    year = options.get("year")
    if year not in by_year:
        raise BadInput(f"no file for year {year}; files cover {sorted(k for k in by_year if k)}")
    return year, paths[by_year[year]]


def read_baltimore(paths: dict[str, Path], options: dict, files: list[dict]) -> Table:
    year, path = _pick(paths, options, files)
    df = _load(path, BALTIMORE)
    col = options.get("salary_column", "annual_salary")
    t = _salary_table(df, path, col, year, "agency")
    return _clean_salary(t)


def read_sf(paths: dict[str, Path], options: dict, files: list[dict]) -> Table:
    year, path = _pick(paths, options, files)
    df = _load(path, SF)
    col = options.get("salary_column", "base_pay")
    t = _salary_table(df, path, col, year, "job_title" if options.get("group_by") == "job_title"
                      else "agency")
    return _clean_salary(t)


def read_nyc(paths: dict[str, Path], options: dict, files: list[dict]) -> Table:
    """NYC Citywide Payroll: one API download for a fiscal year, or the mirror's samples."""
    frames = []
    for f in files:
        df = _load(paths[f["name"]], None)
        require_columns(df, ["fiscal_year", "agency_name", "pay_basis"], paths[f["name"]])
        df.index = [f"{f['name']}:{i}" for i in df.index]
        frames.append(df)
    df = pd.concat(frames) if len(frames) > 1 else frames[0]
    src = " + ".join(str(paths[f["name"]]) for f in files)
    col = options.get("salary_column", "base_salary")
    t = _salary_table(df, src, col, "fiscal_year", "agency_name")
    fy = options.get("fiscal_years")
    if fy:
        t.drop(~t.df["year"].isin(fy).to_numpy(), f"fiscal year not in {fy}")
    basis = options.get("pay_basis")
    if basis:
        pb = df.loc[t.df.index, "pay_basis"].astype("string").str.strip()
        t.drop((pb != basis).fillna(True).to_numpy(), f"pay basis is not '{basis}'")
    _clean_salary(t)
    if options.get("sample"):
        t.extra["sample"] = True
        t.extra["caveat"] = (
            "NOT a complete fiscal year: uniform random samples (10,000 rows each) of the "
            "multi-year Citywide Payroll table (MANIFEST §8). Use only as an honestly labelled "
            "stand-in for the paper's NYC data.")
    else:
        t.extra["sample"] = False
    return t
