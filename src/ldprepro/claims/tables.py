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


def _cell(text) -> str:
    return str(text).replace("|", "/").replace("\n", " ")


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


def _table(rows: pd.DataFrame) -> list[str]:
    out = [
        "| figure | claim | scope | test | effect [CI (level)] | p of the decisive point (sides; Holm within the claim) "
        "| q (BH per direction) | n | verdict | robust to our readings? | evidence |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows.itertuples():
        effect, p = effect_text(r), p_text(r)
        n = "—" if pd.isna(r.n_reps) else str(int(r.n_reps))
        q = format_p(r.q_bh) if pd.notna(r.q_bh) else "—"
        out.append(
            f"| {r.paper}/{r.figure} | {_cell(r.claim)} | {_cell(r.scope)} | {_cell(r.test)} | {effect} | {p} | {q} | "
            f"{n} | **{r.verdict}** | {_cell(getattr(r, 'robustness', '—'))} | {_cell(r.evidence)} |"
        )
    return out


def verdicts_markdown(claims: pd.DataFrame, scale: str, seed: int) -> str:
    """The generated verdicts page: per paper, the reproductions (paper data), then our extension
    (substitute data)."""
    claims = with_q(claims)
    lines = [
        "# Verdicts on the papers' claims",
        "",
        f"Generated by `snakemake readme_figures` from results/<paper>/<figure>/claims.parquet (scale: {scale}, "
        f"seed: {seed}). Do not edit by hand. How a verdict is reached: "
        "[verdicts-standard.md](../verdicts-standard.md). Effects are ratios of the mean errors A/B for errors (paired "
        "t test, Fieller interval), mean differences for rates (Hodges–Lehmann when the Wilcoxon test was used), slopes for "
        "trends, the tested ratio or difference for equivalence (TOST: 90 % interval, one-sided p). Each claim is its "
        "own family: p is the decisive point's raw p (the weakest point of a claim that holds — the "
        "intersection–union test — or the point most against it), with its Holm-adjusted p across the claim's "
        "points; q is the Benjamini–Hochberg q of that p per direction — across the table's 'holds' rows (false "
        "discoveries among the claims that hold) and apart across its 'does not hold' rows — shown for reference "
        "only (it never changes a verdict); 'exact' marks verdicts computed from the closed forms; 'robust' means every alternative reading "
        "the claim declares (and every LDP-SGD group-size control) gives the same verdict. Per-point evidence: "
        "results/<paper>/<figure>/claim_points.parquet.",
        "",
    ]
    for paper, g in claims.groupby("paper", sort=False):
        lines += [f"## {paper}", ""]
        for role, title in (
            ("paper", "Reproductions (the paper's data or closed forms)"),
            ("substitute", "Our extension (substitute data: not a reproduction)"),
            ("user", "User experiments (claims declared in config.yaml: neither a reproduction nor our extension)"),
        ):
            rows = g[g["data_role"] == role]
            if len(rows):
                lines += [f"### {title}", "", f"Verdicts: {verdict_counts(rows, role)}.", ""] + _table(rows) + [""]
    return "\n".join(lines) + "\n"
