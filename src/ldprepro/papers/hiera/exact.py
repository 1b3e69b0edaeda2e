"""Paper 000's claims decided by exact computation (docs/papers/hiera.md): the privacy of HierA's
LHP (Theorem 2) and of graded Laplace, the unbiasedness of HierA's estimate (Theorem 3), and the
effect of data reuse under the unbiased reading.

Each function is named by a declaration in ``claims.yaml`` (``test: function``) and returns the
claim(s) for the figure's ``Results``.
"""

from __future__ import annotations

import numpy as np

from ldprepro.claims.results import Results
from ldprepro.claims.verdicts import Claim, exact_point
from ldprepro.domain.graded import GradedLaplace, GradedLevels, hiera_expected_estimate, lhp_worst_case_log_ratio


def reuse_under_unbiased_reading(res: Results, decl: dict) -> list[Claim]:
    """Exact: under the unbiased (intended, unclipped) reading, the MAE implied by Var(m*)
    (``graded.hiera_variance`` on the panel's data, the jobs' ``abs_error_theory`` rows) against μ."""
    pts = []
    theory = res.raw[(res.raw["metric"] == "abs_error_theory") & (res.raw["mechanism"] == "hiera")]
    for (ds, eps), g in theory.groupby(["dataset", "eps"]):
        curve = g.groupby("mu")["value"].first().sort_index()
        if len(curve) < 2:
            continue
        falls = bool(np.all(np.diff(curve.to_numpy()) < 0))
        ratio = float(curve.iloc[-1] / curve.iloc[0])
        pts.append(
            exact_point(
                f"{ds} ε={eps:g}",
                falls,
                effect=ratio,
                test="exact Var(m*) (Theorem 3), MAE by its normal approximation √(2·Var/π): the direction "
                "is exact, the ratio approximate",
                note=f"MAE(μ={curve.index[-1]:g})/MAE(μ={curve.index[0]:g}) = {ratio:.3f} (normal approximation)",
                scale="ratio of the MAE √(2·Var(m*)/π), normal approximation (exact variances: its direction is exact)",
                null=1.0,
            )
        )
    return [
        res.claim(
            decl["claim"],
            decl["scope"],
            "closed-form",
            points=pts,
            evidence="a derived copy is the original plus independent zero-mean noise, so reuse "
            "cannot lower the variance (effect: MAE ratio, largest μ / smallest μ, by the normal approximation "
            "of the MAE from the exact variance)",
        )
    ]


def lhp_graded_ldp(res: Results, decl: dict) -> list[Claim]:
    """Theorem 2: LHP's worst-case log-ratio between two levels against the claimed max(ε_x, ε_x')."""
    levels = GradedLevels.from_base_eps(1.0)
    loss = lhp_worst_case_log_ratio(levels)
    claimed = np.maximum.outer(levels.eps, levels.eps)
    bad = loss > claimed + 1e-9
    return [
        res.exact_claim(
            decl,
            [
                exact_point(f"levels ({i + 1}, {j + 1})", not bad[i, j], effect=float(loss[i, j]))
                for i in range(levels.k)
                for j in range(levels.k)
            ],
            f"exact LHP pmf: worst-case log-ratio {loss.max():.2f} against the claimed max "
            f"{claimed.max():g}; exceeded in {int(bad.sum())} of {bad.size} level pairs",
        )
    ]


def graded_laplace_is_ldp(res: Results, decl: dict) -> list[Claim]:
    """Graded Laplace's log density ratio between inputs ±1 at a large output."""
    levels = GradedLevels.from_base_eps(1.0)
    gl = GradedLaplace(levels)
    ratio = float(gl.log_ratio(np.array([50.0]), np.array([1.0]), np.array([-1.0]))[0])
    return [
        res.exact_claim(
            decl,
            [exact_point("y = 50, v = 1 vs v = −1", abs(ratio) <= levels.eps.max(), effect=abs(ratio))],
            f"the Laplace scale depends on the input's level, so the log density ratio grows without "
            f"bound in |y| ({abs(ratio):.3g} at y = 50): not LDP for any ε",
        )
    ]


def hiera_unbiased(res: Results, decl: dict) -> list[Claim]:
    """Theorem 3 (m* is unbiased) under the declared reading of Algorithm 5's step 5 (``step5``:
    "intended", the merge the paper describes and the pipeline runs, every user's data used μ times;
    or "printed", the if/if/otherwise of the pseudo-code, which drops conversions): the exact large-n
    expectation of m* minus the true mean (docs/papers/hiera.md §5), on uniform and Gaussian inputs."""
    mode = decl.get("step5", "intended")
    levels = GradedLevels.from_base_eps(1.0)
    rng = np.random.default_rng(0)
    pts = []
    for name, v in (
        ("uniform", rng.uniform(-1, 1, 20000)),
        ("Gaussian (0.3, 0.2)", np.clip(rng.normal(0.3, 0.2, 20000), -1, 1)),
    ):
        for mu in (2, 3, 5):
            bias = hiera_expected_estimate(v, levels, mu, mode) - float(v.mean())
            pts.append(
                exact_point(
                    f"{name}, μ={mu}",
                    abs(bias) < 1e-9,
                    effect=bias,
                    note=f"large-n bias {bias:+.4f}",
                    scale="exact difference: large-n bias E[m*] − mean",
                    null=0.0,
                )
            )
    return [
        res.exact_claim(
            decl,
            pts,
            f"exact large-n expectation of m* (ratio of expectations), step 5 {mode}; the intended reading "
            "(every user's data μ times) is unbiased, the printed one is not",
        )
    ]
