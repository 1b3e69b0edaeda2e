"""Three-Outputs (Zhao et al. 2021, Algorithm 2; Eqs. (2)-(8), Lemmas 1-5).

Spec: docs/papers/ldpfl.md §6. Output t* ∈ {−C, 0, C}, a = e^ε:

- P(0 | t)  = P00·(1 − (1 − e^{−ε})|t|)
- P(±C | t) = (1 − P(0|t))/2 ± t/(2C)
- C = a(a+1) / ((a−1)(a − P00))

with the optimal P00 of Eq. (5): 0 for ε < ln 2 (the mechanism is then Duchi's), the root of the
cubic 2P³ − (a²+4a+5)P² − (a³+4a²−7a)P + 2a³ − 4a² = 0 in (0, a/(a+2)) for
ln 2 ≤ ε ≤ ln((3+√65)/2), and a/(a+2) above.

Numerics: C = 1/(g·(1 − P00·e^{−ε})) with g = tanh(ε/2), and 1 − P00 = 2e^{−ε}/(1+2e^{−ε}) in the
capped regime. The pmf is linear in |t| on [0, 1], so it is evaluated as (1−|t|)·P(·|0) + |t|·P(·|±1)
from endpoint probabilities written as sums of non-negative terms (e.g. P(−C|1) =
(1 − P00e^{−ε})e^{−ε}/(1+e^{−ε})), exact in relative terms up to ε = 700 (``logpmf`` below e^{−708}).
"""

from __future__ import annotations

import math

import numpy as np

from ldprepro.domain.mechanisms import kernels
from ldprepro.domain.mechanisms.base import Mechanism

#: Upper regime boundary of Eq. (5): ln((3+√65)/2) ≈ 1.710392.
EPS_P00_CAP = math.log((3.0 + math.sqrt(65.0)) / 2.0)


def optimal_p00(eps: float) -> float:
    """The optimal P_{0←0} of Eq. (5) (trigonometric closed form of the cubic, docs/papers/ldpfl.md §6)."""
    return _p00_and_complement(eps)[0]


def _p00_and_complement(eps: float) -> tuple[float, float]:
    """(P00, 1 − P00), the complement without cancellation when P00 → 1."""
    if eps < math.log(2.0):
        return 0.0, 1.0
    if eps > EPS_P00_CAP:
        ie = math.exp(-eps)
        return 1.0 / (1.0 + 2.0 * ie), 2.0 * ie / (1.0 + 2.0 * ie)  # a/(a+2), 2/(a+2)
    a = math.exp(eps)
    d0 = a**4 + 14 * a**3 + 50 * a**2 - 2 * a + 25
    d1 = -2 * a**6 - 42 * a**5 - 270 * a**4 - 404 * a**3 - 918 * a**2 + 30 * a - 250
    arg = max(-1.0, min(1.0, -d1 / (2.0 * d0**1.5)))
    p00 = -(1.0 / 6.0) * (-a * a - 4 * a - 5 + 2.0 * math.sqrt(d0) * math.cos(math.pi / 3 + math.acos(arg) / 3))
    return p00, 1.0 - p00


class ThreeOutputs(Mechanism):
    name = "three_outputs"
    discrete = True
    continuous = False

    def __init__(self, eps: float, p00: float | None = None):
        super().__init__(eps)
        ie, em = self.ie, self.em
        if p00 is None:
            self.p00, q00 = _p00_and_complement(self.eps)
        else:
            self.p00 = float(p00)
            q00 = 1.0 - self.p00
            cap = 1.0 / (1.0 + 2.0 * ie)
            if not 0.0 <= self.p00 <= cap + 1e-12:
                raise ValueError(f"P00 must lie in [0, a/(a+2)] = [0, {cap:.6g}], got {self.p00!r}")
        g = math.tanh(self.eps / 2.0)
        q = 1.0 - self.p00 * ie  # (a − P00)/a
        self.c = 1.0 / (g * q)  # a(a+1)/((a−1)(a−P00))
        self._decay = em
        self._support = np.array([-self.c, 0.0, self.c])
        # Endpoint probabilities [P(−C|·), P(0|·), P(C|·)] at t = 0 and t = 1 (t = −1 mirrors).
        c0 = 0.5 * q00
        c1 = q * ie / (1.0 + ie)  # P(−C | 1) = q(1 − g)/2
        c2 = 0.5 * (q00 + self.p00 * em + g * q)  # P(C | 1)
        self._at0 = np.array([c0, self.p00, c0])
        self._at1 = np.array([c1, self.p00 * ie, c2])
        log_q00 = (
            (math.log(2.0) - self.eps - math.log1p(2.0 * ie))
            if (p00 is None and self.eps > EPS_P00_CAP)
            else (math.log(q00) if q00 > 0 else -math.inf)
        )
        log_p00 = math.log(self.p00) if self.p00 > 0 else -math.inf
        self._log_at0 = np.array([log_q00 - math.log(2.0), log_p00, log_q00 - math.log(2.0)])
        self._log_at1 = np.array([math.log(q) - self.eps - math.log1p(ie), log_p00 - self.eps, math.log(c2)])

    def prob_zero(self, x):
        s = np.abs(np.asarray(x, dtype=float))
        return (1.0 - s) * self._at0[1] + s * self._at1[1]

    def _sample(self, x, u, lo=0.0, width=1.0):
        # −C if u' < P(−C), 0 if u' < P(−C) + P(0), else C, with u' = (u − lo)/width: the
        # thresholds are mapped to u's scale instead (t ↦ lo + width·t). Thresholds need only
        # absolute accuracy (u is a multiple of 2^-53), so the direct forms are used here.
        p0 = np.abs(x)
        p0 *= -self.p00 * self._decay * width
        p0 += self.p00 * width
        p_minus = x * (-0.5 * width / self.c)
        p_minus -= 0.5 * p0
        p_minus += 0.5 * width + lo
        out = (u >= p_minus).astype(float)
        p_minus += p0
        out += u >= p_minus
        out -= 1.0
        out *= self.c
        return out

    def _sample_kernel(self):
        if type(self)._sample is not ThreeOutputs._sample:
            return None
        return kernels.THREE_OUTPUTS, (self.p00, self._decay, self.c)

    def pmf(self, x):
        x = np.asarray(x, dtype=float)
        s = np.abs(x)[..., None]
        end = np.where((x < 0)[..., None], self._at1[::-1], self._at1)
        return (1.0 - s) * self._at0 + s * end

    def logpmf(self, x):
        x = np.asarray(x, dtype=float)
        s = np.abs(x)[..., None]
        end = np.where((x < 0)[..., None], self._log_at1[::-1], self._log_at1)
        with np.errstate(divide="ignore"):
            return np.logaddexp(np.log1p(-s) + self._log_at0, np.log(s) + end)

    def variance(self, x):
        """Var = C²(1 − P(0|t)) − t² (Eq. (25)/(72)), evaluated as
        2C²·P(−C| |t|)·(1 + |t|/C) + C|t|·P(0|t): a sum of non-negative terms (no cancellation
        when the variance is far below t², at large ε)."""
        s = np.abs(np.asarray(x, dtype=float))
        p_minus = (1.0 - s) * self._at0[0] + s * self._at1[0]
        p_zero = (1.0 - s) * self._at0[1] + s * self._at1[1]
        return 2.0 * self.c * p_minus * (self.c + s) + self.c * s * p_zero

    def worst_case_variance(self):
        """Lemma 5 / Eq. (122): the quadratic in |t| peaks at |t| = C²b/2 (< 1), b = P00(1−e^{−ε})."""
        t = min(1.0, 0.5 * self.c**2 * self.p00 * self._decay)
        return float(self.variance(t))

    def output_bounds(self):
        return (-self.c, self.c)

    def support(self):
        return self._support
