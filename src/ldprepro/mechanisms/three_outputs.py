"""Three-Outputs (Zhao et al. 2021, Algorithm 2; Eqs. (2)-(8), Lemmas 1-5).

Spec: ``shared/specs/zhao2021_numeric_mechanisms.md`` §6. Output t* ∈ {−C, 0, C}, a = e^ε:

- P(0 | t)  = P00·(1 − (1 − e^{−ε})|t|)
- P(±C | t) = (1 − P(0|t))/2 ± t/(2C)
- C = a(a+1) / ((a−1)(a − P00))

with the optimal P00 of Eq. (5): 0 for ε < ln 2 (the mechanism is then Duchi's), the root of the
cubic 2P³ − (a²+4a+5)P² − (a³+4a²−7a)P + 2a³ − 4a² = 0 in (0, a/(a+2)) for
ln 2 ≤ ε ≤ ln((3+√65)/2), and a/(a+2) above.
"""

from __future__ import annotations

import math

import numpy as np

from .base import Mechanism

#: Upper regime boundary of Eq. (5): ln((3+√65)/2) ≈ 1.710392.
EPS_P00_CAP = math.log((3.0 + math.sqrt(65.0)) / 2.0)


def optimal_p00(eps: float) -> float:
    """The optimal P_{0←0} of Eq. (5) (trigonometric closed form of the cubic, spec §6)."""
    a = math.exp(eps)
    if eps < math.log(2.0):
        return 0.0
    if eps > EPS_P00_CAP:
        return a / (a + 2.0)
    d0 = a**4 + 14 * a**3 + 50 * a**2 - 2 * a + 25
    d1 = -2 * a**6 - 42 * a**5 - 270 * a**4 - 404 * a**3 - 918 * a**2 + 30 * a - 250
    arg = max(-1.0, min(1.0, -d1 / (2.0 * d0**1.5)))
    return -(1.0 / 6.0) * (-a * a - 4 * a - 5 + 2.0 * math.sqrt(d0) * math.cos(math.pi / 3 + math.acos(arg) / 3))


class ThreeOutputs(Mechanism):
    name = "three_outputs"
    discrete = True
    continuous = False

    def __init__(self, eps: float, p00: float | None = None):
        super().__init__(eps)
        a = self.a
        self.p00 = optimal_p00(self.eps) if p00 is None else float(p00)
        if not 0.0 <= self.p00 <= a / (a + 2.0) + 1e-12:
            raise ValueError(f"P00 must lie in [0, a/(a+2)] = [0, {a / (a + 2):.6g}], got {self.p00!r}")
        self.c = a * (a + 1.0) / ((a - 1.0) * (a - self.p00))
        self._decay = 1.0 - math.exp(-self.eps)
        self._support = np.array([-self.c, 0.0, self.c])

    def prob_zero(self, x):
        return self.p00 * (1.0 - self._decay * np.abs(np.asarray(x, dtype=float)))

    def _sample(self, x, u, lo=0.0, width=1.0):
        # −C if u' < P(−C), 0 if u' < P(−C) + P(0), else C, with u' = (u − lo)/width: the
        # thresholds are mapped to u's scale instead (t ↦ lo + width·t).
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

    def pmf(self, x):
        x = np.asarray(x, dtype=float)
        p0 = self.prob_zero(x)
        half = 0.5 * (1.0 - p0)
        shift = x / (2.0 * self.c)
        return np.stack([half - shift, p0, half + shift], axis=-1)

    def variance(self, x):
        """Var = C²(1 − P00) + C²·P00(1 − e^{−ε})|t| − t² (Eq. (25)/(72))."""
        x = np.asarray(x, dtype=float)
        c2 = self.c**2
        return c2 * (1.0 - self.p00) + c2 * self.p00 * self._decay * np.abs(x) - x * x

    def worst_case_variance(self):
        """Lemma 5 / Eq. (122): the quadratic in |t| peaks at |t| = C²b/2 (< 1), b = P00(1−e^{−ε})."""
        t = min(1.0, 0.5 * self.c**2 * self.p00 * self._decay)
        return float(self.variance(t))

    def output_bounds(self):
        return (-self.c, self.c)

    def support(self):
        return self._support
