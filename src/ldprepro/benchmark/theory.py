"""The frequency task's (k, ε) plane in exact theory: every oracle's closed-form variance, the exact
winner of each (k, ε), and the verdicts of the known theory claims, decided by exact computation
(docs/verdicts-standard.md, rule 1: no p-value).

The variance compared is the per-user variance of a count estimate at a value of true count 0,
n·p_o(1 − p_o)/(p_t − p_o)² / n (Wang et al. 2017's "approximate variance", what their
comparisons and the crossover k = 3e^ε + 2 are stated in); the data-dependent term
c_v(p_t(1 − p_t) − p_o(1 − p_o)) is in the measured benchmark and its ``sq_error_theory`` curve.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ldprepro.claims.verdicts import Claim, exact_point, judge, not_testable
from ldprepro.domain.frequency import EPS_ORACLES, get_oracle

#: two exact variances within this relative distance are equal (float rounding of the closed forms)
REL_TIE = 1e-12


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


def _grid_text(k_values, eps_values) -> str:
    return f"k ∈ {{{', '.join(str(int(k)) for k in k_values)}}} × ε ∈ {{{', '.join(f'{e:g}' for e in eps_values)}}}"


def theory_claims(k_values, eps_values, oracles=EPS_ORACLES) -> pd.DataFrame:
    """The claims table (``ldprepro.claims.verdicts.judge``) of the plane's theory claims, every point
    exact: the GRR/OLH crossover at k = 3e^ε + 2, OLH's variance not depending on k, and subset
    selection's optimality. Only the ``oracles`` the benchmark ran (config.yaml
    ``benchmark.frequency.oracles``) are compared: a claim about an oracle left out is not made, and
    one about "no larger than every other oracle" names the others that ran. Whether a variance
    depends on k cannot be seen at one k: that claim is then ``not testable``."""
    oracles = [o for o in EPS_ORACLES if o in oracles]
    plane = exact_plane(k_values, eps_values, oracles).set_index(["k", "eps", "oracle"])["variance"]
    grid = _grid_text(k_values, eps_values)
    scope = f"{grid}; per-user variance at a value of true count 0"
    claims: list = []

    if {"grr", "olh"} <= set(oracles):
        crossover = []
        for k in k_values:
            for e in eps_values:
                grr, olh = plane[(int(k), float(e), "grr")], plane[(int(k), float(e), "olh")]
                bound = 3 * math.exp(e) + 2
                grr_better = grr < olh * (1 - REL_TIE)
                crossover.append(
                    exact_point(
                        f"k = {int(k)}, ε = {e:g}",
                        grr_better == (k < bound),
                        effect=grr / olh,
                        test="exact variance ratio GRR/OLH (closed forms)",
                        note=f"Var GRR/OLH = {grr / olh:.4g}; 3e^ε + 2 = {bound:.4g}",
                        scale="exact variance ratio GRR/OLH",
                        null=1.0,
                    )
                )
        claims.append(
            Claim(
                "benchmark",
                "frequency",
                "Wang et al. 2017 (Sec. 4, which protocol to use): GRR has a smaller variance than OLH exactly when k < 3e^ε + 2",
                scope + "; OLH with g = round(e^ε) + 1",
                "closed-form",
                points=crossover,
            )
        )
    if "olh" in oracles:
        flat_claim = (
            "Wang et al. 2017 (Sec. 4, optimal local hashing): OLH's variance does not depend on the domain size k"
        )
        if len(k_values) < 2:
            claims.append(
                not_testable(
                    "benchmark",
                    "frequency",
                    flat_claim,
                    scope,
                    "closed-form",
                    f"the plane has one domain size (oracle_k {list(k_values)}): a dependence on k needs two or more",
                )
            )
        else:
            olh_flat = []
            for e in eps_values:
                v = np.array([plane[(int(k), float(e), "olh")] for k in k_values])
                spread = float(v.max() / v.min())
                olh_flat.append(
                    exact_point(
                        f"ε = {e:g}",
                        spread <= 1 + REL_TIE,
                        effect=spread,
                        test="exact variance of OLH across k (closed form)",
                        note=f"max/min over k = {spread:.15g}",
                        scale="exact ratio max/min of OLH's variance over k",
                        null=1.0,
                    )
                )
            claims.append(Claim("benchmark", "frequency", flat_claim, scope, "closed-form", points=olh_flat))
    others_run = [o for o in oracles if o != "ss"]
    if "ss" in oracles and others_run:
        ss_best = []
        for k in k_values:
            for e in eps_values:
                ss = plane[(int(k), float(e), "ss")]
                others = {o: plane[(int(k), float(e), o)] for o in others_run}
                rival = min(others, key=others.get)
                ss_best.append(
                    exact_point(
                        f"k = {int(k)}, ε = {e:g}",
                        ss <= others[rival] * (1 + REL_TIE),
                        effect=ss / others[rival],
                        test="exact variance ratio SS/best other oracle (closed forms)",
                        note=f"Var SS/{rival} = {ss / others[rival]:.4g}",
                        scale="exact variance ratio SS/best other oracle",
                        null=1.0,
                    )
                )
        claims.append(
            Claim(
                "benchmark",
                "frequency",
                "(ours, after Ye & Barg 2018's optimality of the d-subset mechanism) SS at its optimal d has a variance "
                f"no larger than every other oracle's ({', '.join(o.upper() for o in others_run)})",
                scope,
                "closed-form",
                points=ss_best,
            )
        )
    return judge(claims)
