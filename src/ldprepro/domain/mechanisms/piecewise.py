"""The piecewise framework: PM (Wang et al. ICDE 2019), PM-OPT and PM-SUB (Zhao et al. 2021).

Spec: docs/papers/ldpfl.md §3 (the family), §4 (PM), §7 (PM-OPT,
the paper's Eqs. (26)-(32), (58)) and §8 (PM-SUB, Eq. (139)). Notation: a = e^ε and the shape
parameter τ (the paper's t):

- output range [−A, A], A = (a+τ)(τ+1) / (τ(a−1));
- high-density window [ℓ(t), r(t)], ℓ(t) = (a+τ)(tτ−1)/(τ(a−1)), r(t) = (a+τ)(tτ+1)/(τ(a−1)),
  of length L = 2(a+τ)/(τ(a−1));
- density p on the window and p/a elsewhere on [−A, A], p = aτ(a−1)/(2(a+τ)²);
- Var[t*|t] = (τ+1)t²/(a−1) + (τ+a)((τ+1)³+a−1)/(3τ²(a−1)²), increasing in |t|.

Numerics (module docstring of ``base``): with r = τ/a, e^{−ε} and 1 − e^{−ε} = −expm1(−ε), every
constant is a ratio of terms of order one, e.g. A = (1+r)(1+1/τ)/(1−e^{−ε}), p = τ(1−e^{−ε})/(2(1+r)²),
so nothing overflows or cancels for ε ∈ [1e-6, 700].
"""

from __future__ import annotations

import math

import numpy as np

from ldprepro.domain.mechanisms import kernels
from ldprepro.domain.mechanisms.base import Mechanism, UniformMixture, check_mechanism_eps, samples_as


class Piecewise(Mechanism):
    """The general piecewise mechanism with shape parameter ``tau`` > 0 (ε-LDP for every τ);
    ``log_tau`` may be given instead of ``tau`` (exact when τ itself is large)."""

    name = "piecewise"

    def __init__(self, eps: float, tau: float | None = None, *, log_tau: float | None = None):
        super().__init__(eps)
        if log_tau is None:
            tau = float(tau)
            if not (math.isfinite(tau) and tau > 0):
                raise ValueError(f"piecewise shape parameter tau must be > 0, got {tau!r}")
            log_tau = math.log(tau)
        lt, e, em = float(log_tau), self.eps, self.em
        self.tau = math.exp(lt)
        self.log_tau = lt
        inv_tau = math.exp(-lt)
        r = math.exp(lt - e)  # τ/a
        self._r, self._inv_tau = r, inv_tau
        self._slope = (1.0 + r) / em  # (a+τ)/(a−1): ℓ(t) = slope·t − L/2
        self.L = 2.0 * self._slope * inv_tau
        self.A = self._slope * (1.0 + inv_tau)
        self.p = self.tau * em / (2.0 * (1.0 + r) ** 2)
        self.p_low = r * em / (2.0 * (1.0 + r) ** 2)  # p/a
        self._log_p = lt + math.log(em) - math.log(2.0) - 2.0 * math.log1p(r)
        self._p_win = 1.0 / (1.0 + r)  # a/(a+τ)
        self._p_out = r / (1.0 + r)  # τ/(a+τ)
        # Var[t*|t] = k2·t² + V0 (module docstring), rewritten in r, 1/τ and 1 − e^{−ε}.
        self._k2 = (r + self.ie) / em
        self._v0 = (1.0 + r) * (r * (1.0 + inv_tau) ** 3 + em * inv_tau**2) / (3.0 * em * em)
        # Sampling constants (see _sample).
        self._c_left = -0.5 * self.L
        self._k_win = self.L / self._p_win
        self._k_out = (1.0 / self.p_low - self._k_win) if self.p_low > 0 else 0.0
        self._two_a = 2.0 * self.A

    def left(self, x):
        """ℓ(t), the left end of the high-density window."""
        return self._slope * np.asarray(x, dtype=float) - 0.5 * self.L

    def right(self, x):
        """r(t) = ℓ(t) + L."""
        return self.left(x) + self.L

    def window_probability(self) -> float:
        """P(output in [ℓ(t), r(t)]) = p·L = a/(a+τ), the same for every t."""
        return self._p_win

    def uniform_mixture(self) -> UniformMixture | None:
        """The density p/a on all of [−A, A] plus the excess p − p/a on the window: background with
        probability q = 2A·p/a = r(1 + 1/τ)/(1 + r) (PM, τ = e^{ε/2}: q = e^{−ε/2}), else uniform on
        the window [ℓ(t), ℓ(t) + L), of probability L(p − p/a) = 1 − q. None for a subclass that
        replaces the sampler."""
        if not samples_as(self, Piecewise):
            return None
        q = self._r * (1.0 + self._inv_tau) / (1.0 + self._r)
        return UniformMixture(q=q, half_range=self.A, slope=self._slope, offset=-0.5 * self.L, width=self.L)

    def _sample(self, x, u, lo=0.0, width=1.0):
        # Inverse CDF with the window first: with m = u' = (u − lo)/width (uniform on [0, 1)),
        #   m < P_win: y = ℓ(t) + m·L/P_win                        (uniform on the window),
        #   m ≥ P_win: y = r(t) + s, s = (m − P_win)/p_low ∈ [0, 2A − L), wrapped round by −2A
        #              when it passes A, i.e. the right piece [r, A] then the left [−A, ℓ].
        # Both cases are  y = ℓ(t) + m·L/P_win + max(m − P_win, 0)·(1/p_low − L/P_win), minus 2A
        # if y > A. No term is large unless it is the output's own size (the old left-to-right
        # order computed the window as a difference of terms ~1/p_low, wrong from ε ≈ 75).
        if lo != 0.0 or width != 1.0:
            u = (u - lo) / width
        y = x * self._slope
        y += self._c_left
        v = u * self._k_win
        y += v
        np.subtract(u, self._p_win, out=v)
        np.maximum(v, 0.0, out=v)
        v *= self._k_out
        y += v
        np.multiply(y > self.A, self._two_a, out=v)
        y -= v
        return y

    def _sample_kernel(self):
        if type(self)._sample is not Piecewise._sample:
            return None
        consts = (self._slope, self._c_left, self._k_win, self._p_win, self._k_out, self.A, self._two_a)
        return kernels.PIECEWISE, consts

    def variance(self, x):
        x = np.asarray(x, dtype=float)
        return self._k2 * x * x + self._v0

    def _variance_at_zero(self) -> float:
        return self._v0

    def worst_case_variance(self):
        return float(self.variance(1.0))

    def output_bounds(self):
        return (-self.A, self.A)

    def _in_window(self, y, x):
        return np.abs(y - self._slope * x) <= 0.5 * self.L

    def pdf(self, y, x):
        y, x = np.asarray(y, dtype=float), np.asarray(x, dtype=float)
        inside = (y >= -self.A) & (y <= self.A)
        return np.where(self._in_window(y, x) & inside, self.p, np.where(inside, self.p_low, 0.0))

    def logpdf(self, y, x):
        y, x = np.asarray(y, dtype=float), np.asarray(x, dtype=float)
        inside = (y >= -self.A) & (y <= self.A)
        return np.where(self._in_window(y, x) & inside, self._log_p, np.where(inside, self._log_p - self.eps, -np.inf))

    def density_pieces(self, x):
        x = np.asarray(x, dtype=float)
        lo = self.left(x)
        hi = lo + self.L
        A = np.full_like(lo, self.A)
        low = np.full_like(lo, self.p_low)
        return [(-A, lo, low), (lo, hi, np.full_like(lo, self.p)), (hi, A, low)]

    def mass_pieces(self, x):
        """The continuous law as uniform pieces ``(start, length, mass)`` with exact lengths and
        masses (``density_pieces``' hi − lo loses the window's length L ≪ |t| at large ε)."""
        x = np.asarray(x, dtype=float)
        centre = self._slope * x
        ones = np.ones_like(centre)
        half_out = 0.5 * self._p_out
        return [
            (-self.A * ones, self._slope * (1.0 + x), half_out * (1.0 + x)),
            (centre - 0.5 * self.L, self.L * ones, self._p_win * ones),
            (centre + 0.5 * self.L, self._slope * (1.0 - x), half_out * (1.0 - x)),
        ]

    def __repr__(self):
        return f"{type(self).__name__}(eps={self.eps:g}, tau={self.tau:.6g})"


class PM(Piecewise):
    """Wang et al.'s Piecewise Mechanism: τ = e^{ε/2} (docs/papers/ldpfl.md §4). A = (e^{ε/2}+1)/(e^{ε/2}−1)."""

    name = "pm"

    def __init__(self, eps: float):
        eps = check_mechanism_eps(eps, self.name)
        super().__init__(eps, log_tau=eps / 2.0)


class PMSub(Piecewise):
    """PM-SUB (Zhao et al. Alg. 4): τ = e^{ε/3} (docs/papers/ldpfl.md §8, Eq. (139))."""

    name = "pm_sub"

    def __init__(self, eps: float):
        eps = check_mechanism_eps(eps, self.name)
        super().__init__(eps, log_tau=eps / 3.0)


def pm_opt_log_tau(eps: float) -> float:
    """log τ_opt, τ_opt the unique positive root of τ⁴ + 2aτ³ − 2aτ − a² = 0 (Zhao Eq. (58), docs/papers/ldpfl.md §7).

    Solved in the well-conditioned variable s = τ·e^{−ε/3}: dividing the quartic by a² gives
    g(s) = c·s⁴ + 2s³ − 2c·s − 1 = 0 with c = e^{−2ε/3} ∈ (0, 1). On [3/4, 1],
    g(3/4) = 27/32 − 1 − c·1.18 < 0 ≤ 1 − c = g(1) and g' = 4cs³ + 6s² − 2c ≥ 27/8 − 2 > 0, so
    Brent's method brackets the single root for every ε (s → 1 as ε → 0, where
    g = (s−1)(s+1)³; s → 2^{−1/3} ≈ 0.794 as ε → ∞). No power of a appears, so nothing
    overflows, and g' ≥ 1.375 makes s exact to a few ulps.
    """
    eps = check_mechanism_eps(eps, "pm_opt")
    c = math.exp(-2.0 * eps / 3.0)

    def g(s):
        return ((c * s + 2.0) * s * s - 2.0 * c) * s - 1.0

    lo = 0.75
    if g(1.0) <= 0.0:  # c rounds to 1 (ε below ~1e-16): the root is s = 1
        return eps / 3.0
    from scipy import optimize  # lazy: only PM-OPT's τ needs it

    s = optimize.brentq(g, lo, 1.0, xtol=1e-16, rtol=4 * np.finfo(float).eps, maxiter=200)
    return math.log(s) + eps / 3.0


def pm_opt_tau(eps: float) -> float:
    """τ_opt = exp(``pm_opt_log_tau``) (see there)."""
    return math.exp(pm_opt_log_tau(eps))


class PMOpt(Piecewise):
    """PM-OPT (Zhao et al. Alg. 3): the piecewise mechanism with the τ minimising the worst-case
    variance V_pw(1; τ) (docs/papers/ldpfl.md §7)."""

    name = "pm_opt"

    def __init__(self, eps: float):
        eps = check_mechanism_eps(eps, self.name)
        super().__init__(eps, log_tau=pm_opt_log_tau(eps))
