"""The frequency task's (k, ε) plane in exact theory: every oracle's closed-form variance, the exact
winner of each (k, ε), and the plane's claims, declared in the claim language (config.yaml
``benchmark.frequency.claims``, docs/claims.md) and decided by the claim engine by exact
computation (docs/verdicts-standard.md, rule 1: no p-value).

The variance compared is the per-user variance of a count estimate at a value of true count 0,
n·p_o(1 − p_o)/(p_t − p_o)² / n (Wang et al. 2017's "approximate variance", what their
comparisons and the crossover k = 3e^ε + 2 are stated in); the data-dependent term
c_v(p_t(1 − p_t) − p_o(1 − p_o)) is in the measured benchmark and its ``sq_error_theory`` curve.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ldprepro.benchmark.declared import declared_for
from ldprepro.claims.dispatch import claims_for
from ldprepro.claims.results import Results
from ldprepro.claims.verdicts import exact_point, not_testable
from ldprepro.domain.frequency import EPS_ORACLES, get_oracle

#: two exact variances within this relative distance are equal (float rounding of the closed forms)
REL_TIE = 1e-12
#: the plane's one panel in the claims' results (the points are named "k=… plane ε=…")
PLANE = "plane"
#: the metric the plane's claims compare: the per-user variance of a count estimate at true count 0
METRIC = "variance"


def oracle_variance(name: str, k: int, eps: float) -> float:
    """Per-user variance of a count estimate at true count 0: p_o(1 − p_o)/(p_t − p_o)²."""
    return float(get_oracle(name, int(k), float(eps)).count_variance(1, 0))


def exact_plane(k_values, eps_values, oracles=EPS_ORACLES) -> pd.DataFrame:
    """One row per (k, ε, oracle): ``variance`` (per user, at true count 0), ``ratio_to_best`` and
    ``best`` (True for every oracle within ``REL_TIE`` of the smallest variance)."""
    rows = [
        {"k": int(k), "eps": float(e), "oracle": o, "variance": oracle_variance(o, k, e)}
        for k in k_values
        for e in eps_values
        for o in oracles
    ]
    df = pd.DataFrame(rows)
    best = df.groupby(["k", "eps"])["variance"].transform("min")
    df["ratio_to_best"] = df["variance"] / best
    df["best"] = df["ratio_to_best"] <= 1 + REL_TIE
    return df


def exact_winners(plane: pd.DataFrame) -> pd.DataFrame:
    """One row per (k, ε): the oracles of smallest exact variance (``winners``, comma-separated in the
    order of ``EPS_ORACLES``) and the runner-up's ratio to them."""
    rows = []
    for (k, e), g in plane.groupby(["k", "eps"], sort=True):
        win = g[g["best"]]
        rest = g[~g["best"]].sort_values("ratio_to_best")
        rows.append(
            {
                "k": k,
                "eps": e,
                "winners": ",".join(win["oracle"]),
                "runner_up": rest["oracle"].iloc[0] if len(rest) else None,
                "runner_up_ratio": float(rest["ratio_to_best"].iloc[0]) if len(rest) else math.nan,
            }
        )
    return pd.DataFrame(rows)


def grid_text(k_values, eps_values) -> str:
    """'k ∈ {…} × ε ∈ {…}': the plane a claim's ``{grid}`` speaks about."""
    return f"k ∈ {{{', '.join(str(int(k)) for k in k_values)}}} × ε ∈ {{{', '.join(f'{e:g}' for e in eps_values)}}}"


def plane_rows(k_values, eps_values, oracles) -> pd.DataFrame:
    """The plane as the claim engine reads a frequency figure: per (k, ε, oracle) the exact variance
    as its ``variance_theory`` row (``theory_exact``: every point is decided exactly, "exact first")
    and as the curve's one row of the metric (the engine compares curves that exist; there are no
    repetitions to test)."""
    plane = exact_plane(k_values, eps_values, oracles)
    common = {"paper": "benchmark", "figure": "frequency", "dataset": PLANE, "rep": 0}
    rows = [
        {**common, "mechanism": r.oracle, "eps": r.eps, "k": r.k, "metric": metric, "value": r.variance}
        | ({"theory_exact": True} if metric.endswith("_theory") else {})
        for r in plane.itertuples(index=False)
        for metric in (f"{METRIC}_theory", METRIC)
    ]
    return pd.DataFrame(rows)


def theory_claims(declarations: list[dict], k_values, eps_values, oracles=EPS_ORACLES, where: str = "") -> pd.DataFrame:
    """The claims table (``ldprepro.claims.verdicts.judge``) of the plane's declared claims
    (config.yaml ``benchmark.frequency.claims``, ``where`` names them for errors), decided by the
    claim engine on the plane's exact variances (:func:`plane_rows`): every point exact. Only the
    ``oracles`` the benchmark ran are compared (``ldprepro.benchmark.declared.declared_for``)."""
    oracles = [o for o in EPS_ORACLES if o in set(oracles)]
    fig = {"kind": "frequency", "metric": METRIC, "panels": [{"dataset": PLANE}], "k": [int(k) for k in k_values]}
    decls = declared_for(declarations, oracles, grid_text(k_values, eps_values))
    rows = plane_rows(k_values, eps_values, oracles)
    return claims_for(
        "benchmark", "frequency", rows, fig, declarations=decls, where=where or "benchmark.frequency.claims"
    )


def variance_flat_in_k(res: Results, decl: dict) -> list:
    """``function:`` of the claim "``mechanism``'s variance does not depend on the domain size k",
    by exact computation: at every ε the largest over the smallest exact variance across the k of
    the plane is 1 (within ``REL_TIE``). One k cannot show a dependence on k: then ``not testable``,
    saying so (Wang et al. 2017, Sec. 4: OLH's variance 4e^ε/(e^ε − 1)² has no k in it)."""
    mechanism = decl["mechanism"]
    r = res.raw[(res.raw["mechanism"] == mechanism) & (res.raw["metric"] == f"{res.fig['metric']}_theory")]
    ks = sorted(int(k) for k in r["k"].unique())
    if len(ks) < 2:
        reason = f"the plane has one domain size (oracle_k {ks}): a dependence on k needs two or more"
        return [not_testable(res.paper, res.figure, decl["claim"], decl["scope"], "closed-form", reason, res.role)]
    points = []
    for e, g in r.groupby("eps", sort=True):
        v = g["value"].to_numpy(dtype=float)
        spread = float(np.max(v) / np.min(v))
        points.append(
            exact_point(
                f"ε = {e:g}",
                spread <= 1 + REL_TIE,
                effect=spread,
                test=f"exact variance of {mechanism.upper()} across k (closed form)",
                note=f"max/min over k = {spread:.15g}",
                scale=f"exact ratio max/min of {mechanism.upper()}'s variance over k",
                null=1.0,
            )
        )
    return [res.exact_claim(decl, points, "")]
