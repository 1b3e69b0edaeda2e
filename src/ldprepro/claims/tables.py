"""Generated verdict tables: docs/figures/verdicts.md and the verdict counts of the results at a
glance. Everything comes from the claims tables (results/<paper>/<figure>/claims.parquet); only
claims on the paper's data count as reproductions, claims on our stand-ins are listed apart as
our extension."""

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


def headline_rows(claims: pd.DataFrame, role: str = "paper", statement: str | None = None) -> pd.DataFrame:
    """The rows of ``role`` that count in the headline (``counted``: each finding once, no
    reconstructed claim, no "(ours, stricter)" split), of one ``statement`` kind ("experimental",
    "theorem") or both (None). A table without those columns counts every row."""
    if not len(claims) or "data_role" not in claims:
        return claims.iloc[0:0]
    c = claims[claims["data_role"] == role]
    if "counted" in c:
        c = c[c["counted"].astype("boolean").fillna(True).astype(bool)]
    if statement is not None:
        kinds = c["statement"].fillna("experimental") if "statement" in c else pd.Series("experimental", index=c.index)
        c = c[kinds == statement]
    return c


def verdict_counts(
    claims: pd.DataFrame, role: str = "paper", statement: str | None = None, reading: str = "verdict"
) -> str:
    """'2 holds (1 on 1 of 4 panels), 1 does not hold' over the counted claims of ``role``
    (``headline_rows``), in the fair reading (``reading="verdict"``) or the literal one
    (``"verdict_strict"``); '—' when there are none. A verdict decided on fewer panels than the
    paper shows says so."""
    c = headline_rows(claims, role, statement)
    if reading not in c:
        reading = "verdict"
    parts = []
    for v in ORDER:
        rows = c[c[reading] == v]
        if not len(rows):
            continue
        narrowed = rows["panels"].fillna("").astype(str) if "panels" in rows else pd.Series([], dtype=str)
        scoped = narrowed[narrowed != ""]
        note = ""
        if len(scoped):
            kinds = scoped.value_counts()
            note = " (" + ", ".join(f"{n} on {k}" for k, n in kinds.items()) + ")"
        parts.append(f"{len(rows)} {v}{note}")
    return ", ".join(parts) or "—"


def headline(claims: pd.DataFrame, role: str = "paper") -> str:
    """The headline counts: experimental claims and the findings on theorems apart, each in the
    fair reading (the headline) and the literal one; how many of them rest on fewer panels than the
    paper shows."""
    lines = []
    for statement, what in (("experimental", "experimental claims"), ("theorem", "theorems, lemmas and algorithms")):
        rows = headline_rows(claims, role, statement)
        if len(rows):
            plain = rows.drop(columns=["panels"], errors="ignore")
            narrowed = int((rows["panels"].fillna("") != "").sum()) if "panels" in rows else 0
            lines.append(
                f"{what} ({len(rows)}): {verdict_counts(plain, role)} "
                f"(literal reading: {verdict_counts(plain, role, reading='verdict_strict')})"
                + (f", {narrowed} of them on fewer panels than the paper shows" if narrowed else "")
            )
    return "; ".join(lines) or "—"


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


#: The verdicts whose decisive p is a discovery, each in its own direction: a "holds" row's p is its
#: weakest point's p in the claim's favour, a "does not hold" row's its strongest point's against it.
Q_DIRECTIONS = ("holds", "does not hold")


def with_q(claims: pd.DataFrame) -> pd.DataFrame:
    """The claims with ``q_bh``: Benjamini–Hochberg q of the decisive p per direction — across the
    table's "holds" rows (false discoveries among the claims that hold) and, apart, across its
    "does not hold" rows (among the refutations); none for inconclusive, untested or exact rows.
    Secondary: it never changes a verdict."""
    out = claims.copy()
    p = pd.to_numeric(out["p_value"], errors="coerce")
    out["q_bh"] = float("nan")
    for verdict in Q_DIRECTIONS:
        rows = out.index[(out["verdict"] == verdict) & p.notna()]
        out.loc[rows, "q_bh"] = benjamini_hochberg(p[rows].to_numpy(dtype=float))
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
