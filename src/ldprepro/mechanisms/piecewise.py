"""The piecewise framework: PM (Wang et al. ICDE 2019), PM-OPT and PM-SUB (Zhao et al. 2021).

Spec: ``shared/specs/zhao2021_numeric_mechanisms.md`` §3 (the family), §4 (PM), §7 (PM-OPT,
the paper's Eqs. (26)-(32), (58)) and §8 (PM-SUB, Eq. (139)). Notation: a = e^ε and the shape
parameter τ (the paper's t):

- output range [−A, A], A = (a+τ)(τ+1) / (τ(a−1));
- high-density window [ℓ(t), r(t)], ℓ(t) = (a+τ)(tτ−1)/(τ(a−1)), r(t) = (a+τ)(tτ+1)/(τ(a−1)),
  of length L = 2(a+τ)/(τ(a−1));
- density p on the window and p/a elsewhere on [−A, A], p = aτ(a−1)/(2(a+τ)²);
- Var[t*|t] = (τ+1)t²/(a−1) + (τ+a)((τ+1)³+a−1)/(3τ²(a−1)²), increasing in |t|.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize

from .base import Mechanism, check_eps


class Piecewise(Mechanism):
    """The general piecewise mechanism with shape parameter ``tau`` > 0 (ε-LDP for every τ)."""

    name = "piecewise"

    def __init__(self, eps: float, tau: float):
        super().__init__(eps)
        tau = float(tau)
        if not tau > 0:
            raise ValueError(f"piecewise shape parameter tau must be > 0, got {tau!r}")
        a = self.a
        self.tau = tau
        self.A = (a + tau) * (tau + 1.0) / (tau * (a - 1.0))
        self.L = 2.0 * (a + tau) / (tau * (a - 1.0))
        self.p = a * tau * (a - 1.0) / (2.0 * (a + tau) ** 2)
        self._slope = (a + tau) / (a - 1.0)  # ℓ(t) = slope·t − L/2
        # Sampling constants (see _sample).
        self._s = a / self.p
        self._shrink = 1.0 - 1.0 / a
        self._la = self.L * a

    def left(self, x):
        """ℓ(t), the left end of the high-density window."""
        return self._slope * np.asarray(x, dtype=float) - 0.5 * self.L

    def right(self, x):
        """r(t) = ℓ(t) + L."""
        return self.left(x) + self.L

    def window_probability(self) -> float:
        """P(output in [ℓ(t), r(t)]) = p·L = a/(a+τ), the same for every t."""
        return self.a / (self.a + self.tau)

    def _sample(self, x, u, lo=0.0, width=1.0):
        # Inverse CDF of the three-piece density. With u' = (u − lo)/width, s = u'·a/p and
        # z = s − (ℓ + A) (the position relative to the window's left end, in units where the
        # low density is 1):
        #   z < 0       -> y = ℓ + z            (left piece, density p/a)
        #   0 ≤ z < La  -> y = ℓ + z/a          (window, density p)
        #   z ≥ La      -> y = ℓ + z − L(a−1)   (right piece)
        # i.e. y = ℓ + z − (1 − 1/a)·clip(z, 0, La) = s − A − (1 − 1/a)·clip(z, 0, La).
        k = self._s / width
        s = u * k
        z = x * -self._slope
        z += s
        z -= self.A - 0.5 * self.L + lo * k
        np.clip(z, 0.0, self._la, out=z)
        z *= self._shrink
        s -= self.A + lo * k
        s -= z
        return s

    def variance(self, x):
        x = np.asarray(x, dtype=float)
        a, tau = self.a, self.tau
        return (tau + 1.0) * x * x / (a - 1.0) + self._variance_at_zero()

    def _variance_at_zero(self) -> float:
        a, tau = self.a, self.tau
        return (tau + a) * ((tau + 1.0) ** 3 + a - 1.0) / (3.0 * tau**2 * (a - 1.0) ** 2)

    def worst_case_variance(self):
        return float(self.variance(1.0))

    def output_bounds(self):
        return (-self.A, self.A)

    def pdf(self, y, x):
        y, x = np.asarray(y, dtype=float), np.asarray(x, dtype=float)
        lo = self.left(x)
        inside = (y >= -self.A) & (y <= self.A)
        window = (y >= lo) & (y <= lo + self.L)
        return np.where(window & inside, self.p, np.where(inside, self.p / self.a, 0.0))

    def density_pieces(self, x):
        x = np.asarray(x, dtype=float)
        lo = self.left(x)
        hi = lo + self.L
        A = np.full_like(lo, self.A)
        low = np.full_like(lo, self.p / self.a)
        return [(-A, lo, low), (lo, hi, np.full_like(lo, self.p)), (hi, A, low)]

    def __repr__(self):
        return f"{type(self).__name__}(eps={self.eps:g}, tau={self.tau:.6g})"


class PM(Piecewise):
    """Wang et al.'s Piecewise Mechanism: τ = e^{ε/2} (spec §4). A = (e^{ε/2}+1)/(e^{ε/2}−1)."""

    name = "pm"

    def __init__(self, eps: float):
        super().__init__(eps, math.exp(float(eps) / 2.0))


class PMSub(Piecewise):
    """PM-SUB (Zhao et al. Alg. 4): τ = e^{ε/3} (spec §8, Eq. (139))."""

    name = "pm_sub"

    def __init__(self, eps: float):
        super().__init__(eps, math.exp(float(eps) / 3.0))


def pm_opt_tau(eps: float) -> float:
    """τ_opt: the unique positive root of τ⁴ + 2aτ³ − 2aτ − a² = 0 (Zhao Eq. (58), spec §7).

    The quartic is −a² < 0 at τ = 0 and 3a²(a²−1) > 0 at τ = a, and has exactly one positive
    root (Descartes), so Brent's method on [0, a] finds it to machine precision (this avoids the
    cancellation of the Ferrari closed form near ε = ln2/2 and for large ε).
    """
    a = math.exp(check_eps(eps))

    def quartic(t):
        return ((t + 2.0 * a) * t * t - 2.0 * a) * t - a * a

    return optimize.brentq(quartic, 0.0, a, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500)


class PMOpt(Piecewise):
    """PM-OPT (Zhao et al. Alg. 3): the piecewise mechanism with the τ minimising the worst-case
    variance V_pw(1; τ) (spec §7)."""

    name = "pm_opt"

    def __init__(self, eps: float):
        super().__init__(eps, pm_opt_tau(eps))
