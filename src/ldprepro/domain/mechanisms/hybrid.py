"""Hybrid mechanisms: HM (Wang et al. ICDE 2019) and HM-TP (Zhao et al. 2021, Lemmas 10-11).

Spec: docs/papers/ldpfl.md §5 (HM) and §9 (HM-TP). Both are mixtures
whose weight does not depend on the input, so they inherit ε-LDP from their components.
Both weights of each mixture are computed directly (1 − α = e^{−ε/2}; 1 − β from e^{−2ε/3} and
e^{−ε}), never as 1 minus the other, so the small branch keeps its exact weight at large ε.
"""

from __future__ import annotations

import functools
import math

from ldprepro.domain.mechanisms.base import Mechanism, Mixture, check_mechanism_eps
from ldprepro.domain.mechanisms.basic import Duchi
from ldprepro.domain.mechanisms.piecewise import PM, PMSub
from ldprepro.domain.mechanisms.three_outputs import ThreeOutputs

#: Wang et al.'s exact HM threshold ε* ≈ 0.609352 (they round it to 0.61).
HM_EPS_STAR = math.log(
    (
        -5.0
        + 2.0 * (6353.0 - 405.0 * math.sqrt(241.0)) ** (1.0 / 3.0)
        + 2.0 * (6353.0 + 405.0 * math.sqrt(241.0)) ** (1.0 / 3.0)
    )
    / 27.0
)


def hm_alpha(eps: float, threshold: float = HM_EPS_STAR) -> float:
    """Weight of PM in HM: 1 − e^{−ε/2} if ε > threshold, else 0."""
    return _hm_weights(eps, threshold)[0]


def _hm_weights(eps: float, threshold: float) -> tuple[float, float]:
    """(α, 1 − α) of HM."""
    if eps > threshold:
        return -math.expm1(-eps / 2.0), math.exp(-eps / 2.0)
    return 0.0, 1.0


class HM(Mixture):
    """HM: PM(t, ε) with probability α = 1 − e^{−ε/2} (ε > ε*), otherwise Duchi(t, ε)."""

    def __init__(self, eps: float, threshold: float = HM_EPS_STAR, continuous_branch: Mechanism | None = None):
        eps = check_mechanism_eps(eps, "hm")
        alpha, rest = _hm_weights(eps, threshold)
        pm = continuous_branch if continuous_branch is not None else PM(eps)
        super().__init__(eps, [pm, Duchi(eps)], [alpha, rest], name="hm")
        self.alpha = alpha
        self.threshold = threshold

    def worst_case_variance(self):
        # With this α the variance is flat in t (docs/papers/ldpfl.md §5), so any t gives the worst case; for a
        # discretised continuous branch it is not flat, hence the generic maximiser.
        if self.alpha == 0.0 or type(self.components[0]) is PM:
            return float(self.variance(0.0))
        return super().worst_case_variance()


def _pm_sub_constants(eps: float) -> tuple[float, float]:
    """A1, B1 of docs/papers/ldpfl.md §9: Var_SUB(t) = A1·t² + B1 (PM-SUB's own cancellation-free constants)."""
    sub = PMSub(eps)
    return sub._k2, sub._v0


@functools.cache
def _hm_tp_eps1() -> float:
    """ε₁ ≈ 0.610986: root of B1(ε) = ((a+1)/(a−1))² (PM-SUB at t=0 equals Duchi)."""
    from scipy import optimize

    def gap(e):
        a = math.exp(e)
        return _pm_sub_constants(e)[1] - ((a + 1.0) / (a - 1.0)) ** 2

    return optimize.brentq(gap, 0.3, 1.0, xtol=1e-15)


def __getattr__(name: str):
    """``HM_TP_EPS1`` is computed on first use (a root-finding that imports scipy.optimize, which a
    job that never builds HM-TP should not pay for at import)."""
    if name == "HM_TP_EPS1":
        return _hm_tp_eps1()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def hm_tp_beta(eps: float) -> float:
    """β minimising the worst-case variance of β·PM-SUB + (1−β)·Three-Outputs (docs/papers/ldpfl.md §9)."""
    return _hm_tp_weights(eps)[0]


def _hm_tp_weights(eps: float) -> tuple[float, float]:
    """(β, 1 − β) of HM-TP. β = β0(1 − w) with β0 = (a−1)/(a+e^{ε/3}) = (1−e^{−ε})/(1+e^{−2ε/3}), so
    1 − β = (e^{−2ε/3} + e^{−ε})/(1 + e^{−2ε/3}) + β0·w, both without cancellation."""
    if eps <= _hm_tp_eps1():
        return 0.0, 1.0
    ie, i23 = math.exp(-eps), math.exp(-2.0 * eps / 3.0)
    beta0 = -math.expm1(-eps) / (1.0 + i23)
    rest0 = (i23 + ie) / (1.0 + i23)
    if eps < math.log(2.0):
        return beta0, rest0
    a1, b1 = _pm_sub_constants(eps)
    to = ThreeOutputs(eps)
    c2 = to.c**2
    e_const = c2 * 2.0 * to._at0[0]  # C²(1 − P00)
    d_const = c2 * to.p00 * to.em
    s = a1 + 1.0
    w = a1 / math.sqrt(1.0 + 4.0 * s * (e_const - b1) / d_const**2)
    return beta0 * (1.0 - w), rest0 + beta0 * w


class HMTP(Mixture):
    """HM-TP: PM-SUB(t, ε) with probability β, otherwise Three-Outputs(t, ε) (docs/papers/ldpfl.md §9)."""

    def __init__(self, eps: float, continuous_branch: Mechanism | None = None):
        eps = check_mechanism_eps(eps, "hm_tp")
        beta, rest = _hm_tp_weights(eps)
        sub = continuous_branch if continuous_branch is not None else PMSub(eps)
        super().__init__(eps, [sub, ThreeOutputs(eps)], [beta, rest], name="hm_tp")
        self.beta = beta
