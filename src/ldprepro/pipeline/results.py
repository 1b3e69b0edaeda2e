"""Tidy results, their aggregation and the claims tables.

Raw results are long-format: one row per (dataset × mechanism × ε × repetition × metric) plus
the experiment's own parameter columns, with the measured number in ``value``. Aggregation groups
by every column except ``rep`` and ``value`` and reports n, mean, std and a 95 % confidence
interval of the mean (Student t). Claims tables (one row per claim, decided by a declared test)
are built by the claim engine (``ldprepro.claims``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

import numpy as np
import pandas as pd

from ldprepro.pipeline.io import write_parquet

KEY_COLUMNS = ["paper", "figure", "dataset", "mechanism", "eps", "rep", "metric", "value"]


def tidy_frame(rows: Iterable[dict], extra_order: list[str] | None = None) -> pd.DataFrame:
    """DataFrame with the key columns first (in a fixed order), then parameters, sorted."""
    df = pd.DataFrame(list(rows))
    missing = [c for c in KEY_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"tidy results lack the columns {missing}")
    params = sorted(c for c in df.columns if c not in KEY_COLUMNS)
    if extra_order:
        params = [c for c in extra_order if c in params] + [c for c in params if c not in extra_order]
    df = df[KEY_COLUMNS[:-2] + params + KEY_COLUMNS[-2:]]
    df["rep"] = df["rep"].astype("int64")
    df["eps"] = df["eps"].astype("float64")
    df["value"] = df["value"].astype("float64")
    sort_cols = [c for c in KEY_COLUMNS[:-1] + params if c in df.columns]
    return df.sort_values(sort_cols, kind="mergesort").reset_index(drop=True)


def aggregate(df: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Mean, std (ddof=1), n and a Student-t confidence interval of the mean per group."""
    group_cols = [c for c in df.columns if c not in ("rep", "value")]
    grouped = df.groupby(group_cols, dropna=False, sort=True)["value"]
    out = grouped.agg(n="count", mean="mean", std="std").reset_index()
    out["std"] = out["std"].fillna(0.0)
    from ldprepro.pipeline.laws import t_ppf  # lazy: the compute jobs write rows and never need it

    t = t_ppf(0.5 + confidence / 2.0, np.maximum(out["n"] - 1, 1))
    half = np.where(out["n"] > 1, t * out["std"] / np.sqrt(out["n"]), 0.0)
    out["ci_low"] = out["mean"] - half
    out["ci_high"] = out["mean"] + half
    return out


def read_results(paths: Iterable[str | os.PathLike]) -> pd.DataFrame:
    frames = [pd.read_parquet(p) for p in paths]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=KEY_COLUMNS)


def write_results(df: pd.DataFrame, path: str | os.PathLike) -> None:
    write_parquet(df, path)


def shared_rows(source: str | os.PathLike, paper: str, figure: str, grid) -> pd.DataFrame:
    """The rows of an earlier figure's job that is this job's computation exactly
    (``ldprepro.pipeline.shared_jobs``): read and checked against this figure's ``grid``
    (``verify.job_results``: a damaged or partial file is refused, naming it), relabelled with this
    job's ``paper`` and ``figure``."""
    from ldprepro.pipeline.verify import job_results  # lazy: most jobs never share

    df = job_results([source], grid)
    df["paper"] = paper
    df["figure"] = figure
    return df


def output_per_name(names: Iterable[str], outputs: Iterable[str | os.PathLike]) -> list[tuple[str, str]]:
    """(name, result file) pairs of a job that writes one file per mechanism (or method), both lists
    in the same order (the rule lists its outputs in the order of its ``mechanisms`` param); a count
    that differs is an error in the rule, named with both lists."""
    names, outputs = list(names), [str(o) for o in outputs]
    if len(names) != len(outputs):
        raise RuntimeError(f"{len(names)} mechanisms/methods {names} but {len(outputs)} outputs {outputs}")
    return list(zip(names, outputs))


def eps_ranges(eps: np.ndarray, mask: np.ndarray) -> str:
    """Human-readable ranges of the sorted grid ``eps`` where ``mask`` holds, e.g. '0.65–1.6, 5.5–8'."""
    eps, mask = np.asarray(eps, dtype=float), np.asarray(mask, dtype=bool)
    parts, start = [], None
    for i, (e, m) in enumerate(zip(eps, mask)):
        if m and start is None:
            start = e
        if start is not None and (not m or i == len(eps) - 1):
            stop = e if m else eps[i - 1]
            parts.append(f"{start:g}" if stop == start else f"{start:g}–{stop:g}")
            start = None
    return ", ".join(parts) if parts else "none"
