"""The claims tables (results/<paper>/<figure>/claims.parquet) and their text: effects, p-values and
the verdict counts of the results at a glance; only claims on the paper's data count as
reproductions, claims on our stand-ins are counted apart as our extension. The generated verdicts
page is :mod:`ldprepro.report.verdicts_page`."""

from __future__ import annotations

import math
import os

import pandas as pd

from ldprepro.claims.multiplicity import benjamini_hochberg, format_p
from ldprepro.pipeline.io import write_parquet

ORDER = ("holds", "does not hold", "inconclusive", "not testable")


def _num(v) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)) or pd.isna(v):
        return "—"
    return f"{v:.3g}"


def verdict_counts(claims: pd.DataFrame, role: str = "paper") -> str:
    """'2 holds, 1 does not hold' over the claims of ``role`` (— when there are none)."""
    c = claims[claims["data_role"] == role] if len(claims) and "data_role" in claims else claims.iloc[0:0]
    counts = c["verdict"].value_counts()
    return ", ".join(f"{counts[v]} {v}" for v in ORDER if v in counts) or "—"


def _level(r) -> str:
    """'95 %' / '90 %' for a row's interval ('' when exact or not tested)."""
    level = getattr(r, "ci_level", None)
    return "" if level is None or pd.isna(level) else f"{round(100 * float(level))} %"


def effect_text(r) -> str:
    """'0.95 [0.86, 1.05] (95 %)': a claim row's effect with its CI and the CI's level (none for exact
    points)."""
    if pd.notna(r.ci_low) and r.ci_low != r.ci_high:
        level = _level(r)
        high = "∞" if r.ci_high == math.inf else _num(r.ci_high)  # Fieller: the data cannot bound the ratio
        return f"{_num(r.effect)} [{_num(r.ci_low)}, {high}]" + (f" ({level})" if level else "")
    return _num(r.effect)


def p_text(r) -> str:
    """'0.012 two-sided (Holm 0.036)': the decisive point's raw p, its sidedness and its Holm-adjusted
    p within the claim; 'exact' for exact computations; '—' if not tested."""
    if pd.isna(r.p_value):
        return "exact" if r.verdict != "not testable" else "—"
    sides = getattr(r, "p_sides", None)
    side = "" if sides is None or pd.isna(sides) else (" one-sided" if int(sides) == 1 else " two-sided")
    return f"{format_p(r.p_value)}{side} (Holm {format_p(r.p_holm)})"


def with_q(claims: pd.DataFrame) -> pd.DataFrame:
    """The claims with ``q_bh``: Benjamini–Hochberg q of the decisive p across the whole table
    (secondary: it never changes a verdict)."""
    out = claims.copy()
    out["q_bh"] = benjamini_hochberg(pd.to_numeric(out["p_value"], errors="coerce").to_numpy(dtype=float))
    return out


def write_claims(claims: pd.DataFrame, path: str | os.PathLike, points_path: str | os.PathLike | None = None) -> None:
    """Write a figure's claims table and, beside it, its per-point evidence (``claim_points.parquet``:
    one row per point of every claim, from ``verdicts.judge``)."""
    from ldprepro.claims.verdicts import CLAIM_POINT_COLUMNS

    # without its attrs: pandas would store the per-point evidence again in the file's metadata (it
    # is claim_points.parquet's), and every frame derived from the table read back deep-copies it
    table = claims.copy(deep=False)
    table.attrs = {}
    write_parquet(table, path)
    if points_path is not None:
        points = pd.DataFrame(claims.attrs.get("points", []), columns=CLAIM_POINT_COLUMNS)
        write_parquet(
            points.astype({"claim_id": "int64", "n": "int64", "p_sides": "int64", "exact": "bool"}), points_path
        )
