"""Paper 002 (Zhao et al.) Figs. 1 and 4: the claims that need an exact computation (named by
``claims.yaml`` beside this module) and the figures' claims tables, decided by the one dispatcher on
the rows ``mechanism_figures`` computes.

Fig. 1: the exact worst-case variances (docs/papers/ldpfl.md §0) compared across mechanisms, and the
Monte-Carlo check against them. Fig. 4: PM-OPT's three-piece density (window/outside ratio e^ε, the
sampled mass in the window).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from ldprepro.claims.dispatch import claims_for
from ldprepro.claims.points import EXACT_TIE_RTOL, fair_margin
from ldprepro.claims.results import Results
from ldprepro.claims.verdicts import Claim, equivalence_point, exact_point, proportion_equivalence_point
from ldprepro.domain.mechanisms import get_mechanism
from ldprepro.papers import declared_claims
from ldprepro.pipeline.results import eps_ranges

PAPER = "ldpfl"


def _worst_case_table(res: Results) -> pd.DataFrame:
    """ε × mechanism table of the exact worst-case variances (the ``analytic`` rows of Fig. 1)."""
    ana = res.raw[(res.raw["dataset"] == "analytic") & (res.raw["metric"] == "worst_case_variance")]
    return ana.pivot_table(index="eps", columns="mechanism", values="value", aggfunc="mean").sort_index()


def _tie(ratio: float) -> bool:
    """Equal worst-case variances (the same output law, e.g. HM-TP ≡ HM at ε ≤ ln 2): an exact tie."""
    return math.isclose(ratio, 1.0, rel_tol=EXACT_TIE_RTOL)


def lower_worst_case_variance(res: Results, decl: dict) -> list:
    """Fig. 1, exact: ``mechanism``'s worst-case variance strictly below the best of ``against``
    (``others``: every other mechanism of the figure) at every ε of the grid in scope
    (``eps``: ``{above: x}`` or ``{below: x}``, x a number or ``ln 2``)."""
    table = _worst_case_table(res)
    eps = table.index.to_numpy()
    a = decl["mechanism"]
    b_cols = [m for m in table.columns if m != a] if decl["against"] == "others" else list(decl["against"])
    if a not in table or not all(b in table for b in b_cols):
        return []
    bound = {k: (np.log(2) if v == "ln 2" else float(v)) for k, v in (decl.get("eps") or {}).items()}
    sel = np.ones(len(eps), bool)
    if "above" in bound:
        sel &= eps > bound["above"]
    if "below" in bound:
        sel &= eps < bound["below"]
    best = table[b_cols].min(axis=1).to_numpy()
    ratio = table[a].to_numpy() / best
    margin = fair_margin("variance", decl.get("fair_margin"))  # a ratio of errors: the fair reading's margin
    pts = [
        dataclasses.replace(
            exact_point(
                f"ε={e:g}",
                bool(r < 1.0) and not _tie(r),
                effect=float(r),
                note="equal: a tie" if _tie(r) else "",
                scale=f"exact ratio of worst-case variances {a}/best",
            ),
            null=1.0,
            tie=_tie(r),
            fair_margin=margin,
        )
        for e, r in zip(eps[sel], ratio[sel])
    ]
    grid = f"ε ∈ [{eps.min():g}, {eps.max():g}]" if len(eps) else "—"
    return [
        Claim(
            PAPER,
            res.figure,
            decl["claim"],
            decl["scope"].replace("{grid}", grid),
            "closed-form",
            points=pts,
            evidence=f"exact worst-case variances on a grid of {int(sel.sum())} ε values; ratio "
            f"{a}/best of {', '.join(b_cols)}: {ratio[sel].min():.4f}–{ratio[sel].max():.4f}; not "
            f"strictly lower at ε = {eps_ranges(eps[sel], ratio[sel] >= 1.0)}",
        )
    ]


def monte_carlo_agrees(res: Results, decl: dict) -> list:
    """(ours) The Monte-Carlo worst-case variances within ×``margin`` of the closed forms (TOST)."""
    mc = res.raw[(res.raw["dataset"] == "monte_carlo") & (res.raw["metric"] == "worst_case_variance")]
    if not len(mc):
        return []
    margin = float(decl["margin"])
    pts = []
    for (mech, e), g in mc.groupby(["mechanism", "eps"]):
        exact = float(get_mechanism(mech, float(e)).worst_case_variance())
        pts.append(
            equivalence_point(g["value"].to_numpy(), np.full(len(g), exact), f"{mech} ε={e:g}", margin, means=True)
        )
    return [
        Claim(
            PAPER,
            res.figure,
            decl["claim"],
            decl["scope"],
            "equivalence",
            points=pts,
            evidence="MC mean of (y − t)² at the worst-case input over independent repetitions, "
            f"against the exact value; 'agrees' taken as within ×{margin:g} (ours)",
        )
    ]


def figure_claims(raw: pd.DataFrame, figure: str, fig: dict | None = None) -> pd.DataFrame:
    """Fig. 1's or Fig. 4's claims table: the declarations of ``claims.yaml`` [figure] decided by the
    one dispatcher on the figure's rows (``analytic`` and ``monte_carlo`` panels)."""
    spec, where = declared_claims(PAPER, figure)
    panels = [{"dataset": "analytic"}, {"dataset": "monte_carlo"}]
    return claims_for(PAPER, figure, raw, {**(fig or {}), "panels": panels}, {}, spec, where)


def three_piece_density(res: Results, decl: dict) -> list:
    """Fig. 4: the exact window/outside density ratio is e^ε, and the sampled mass in the window
    (bins wholly inside) is within ×``margin`` of the exact mass (TOST on a proportion)."""
    eps, mechanism = float(res.fig["eps"]), res.fig["mechanism"]
    mech = get_mechanism(mechanism, eps)
    merged = res.raw[res.raw["dataset"] == "monte_carlo"].copy()
    merged["value_exact"] = mech.pdf(merged["y"].to_numpy(), merged["t_input"].to_numpy())
    width = 2 * mech.A / merged.groupby("t_input")["y"].count().iloc[0]
    lo, hi = mech.left(merged["t_input"]), mech.right(merged["t_input"])
    clean = (
        (merged["y"] + width / 2 < lo)
        | (merged["y"] - width / 2 > hi)
        | ((merged["y"] - width / 2 > lo) & (merged["y"] + width / 2 < hi))
    )
    m = merged[clean.to_numpy()]
    inside_ratio = m["value_exact"].max() / m["value_exact"].min()
    pts = [
        exact_point(
            f"ε={eps:g}: window/outside density ratio",
            bool(np.isclose(inside_ratio, np.exp(eps), rtol=1e-9)),
            effect=float(inside_ratio),
            note=f"e^ε = {np.exp(eps):.4f}",
            scale="exact ratio of output densities (window/outside)",
            null=1.0,
        )
    ]
    margin = float(decl["margin"])
    for t, g in m.groupby("t_input"):
        inside = (g["y"] - width / 2 > mech.left(t)) & (g["y"] + width / 2 < mech.right(t))
        n = int(g["n_users"].iloc[0])
        p_exact = float((g.loc[inside, "value_exact"] * width).sum())
        count = int(round(float((g.loc[inside, "value"] * width).sum()) * n))
        if 0 < p_exact < 1:
            pts.append(proportion_equivalence_point(count, n, p_exact, f"t={t:g}: mass in the window", margin))
    inputs = ", ".join(f"{t:g}" for t in sorted(m["t_input"].unique()))
    return [
        Claim(
            PAPER,
            res.figure,
            decl["claim"],
            decl["scope"].replace("{eps}", f"{eps:g}").replace("{inputs}", inputs),
            "equivalence",
            points=pts,
            evidence=f"exact window/outside density ratio {inside_ratio:.4f} (e^ε = {np.exp(eps):.4f}); "
            f"the sampled mass in the window (bins wholly inside) against the exact mass, within ×{margin:g} (ours)",
        )
    ]
