"""Discretisation post-processing (Zhao et al. 2021, Algorithm 5; Eqs. (34)-(35), Lemmas 8-9).

Spec: ``shared/specs/zhao2021_numeric_mechanisms.md`` §10. The continuous output y ∈ [−A, A] is
rounded at random to the grid {kA/m : k = −m..m} (2m+1 values, spacing h = A/m): with
k = ⌊y/h⌋, output (k+1)h with probability y/h − k, else kh. Then E[Z | y] = y, so Z stays
unbiased, and LDP is preserved (post-processing). The exact pmf is the integral of the
mechanism's piecewise-constant density against the grid's hat functions.

For hybrids (HM, HM-TP) only the continuous branch is discretised, on that branch's own [−A, A];
the discrete branch is left as it is [I, spec §10].
"""

from __future__ import annotations

import numpy as np

from .base import Mechanism, Mixture


def _hat_cdf(s: np.ndarray) -> np.ndarray:
    """∫_{−∞}^{s} max(0, 1 − |t|) dt."""
    s = np.clip(s, -1.0, 1.0)
    return np.where(s <= 0.0, 0.5 * (s + 1.0) ** 2, 1.0 - 0.5 * (1.0 - s) ** 2)


class Discretized(Mechanism):
    """A continuous-output mechanism followed by Algorithm 5's randomised rounding to 2m+1 values."""

    discrete = True
    continuous = False

    def __init__(self, base: Mechanism, m: int):
        if not base.continuous or base.discrete:
            raise ValueError(f"only a continuous-output mechanism can be discretised, not {base.name}")
        m = int(m)
        if m < 1:
            raise ValueError(f"discretisation needs m >= 1 segments per side, got {m}")
        lo, hi = base.output_bounds()
        if not (np.isfinite(lo) and np.isfinite(hi)) or not np.isclose(-lo, hi):
            raise ValueError(f"{base.name} has no bounded symmetric output range to discretise")
        super().__init__(base.eps)
        self.base, self.m = base, m
        self.A = hi
        self.h = hi / m
        self.name = f"{base.name}_disc"
        self._support = np.arange(-m, m + 1) * self.h

    def _perturb_block(self, x, rng):
        return self.round(self.base._perturb_block(x, rng), rng)

    def round(self, y, rng):
        """Algorithm 5 on intermediate outputs ``y`` (Eq. (35))."""
        scaled = np.asarray(y, dtype=float) / self.h
        k = np.floor(scaled)
        scaled -= k
        k += rng.random(scaled.shape) < scaled
        k *= self.h
        return k

    def support(self):
        return self._support

    def pmf(self, x):
        x = np.asarray(x, dtype=float)
        grid = self._support / self.h  # integers −m..m
        out = np.zeros(x.shape + (len(grid),))
        for lo, hi, dens in self.base.density_pieces(x):
            lo = np.asarray(lo)[..., None] / self.h
            hi = np.asarray(hi)[..., None] / self.h
            out += np.asarray(dens)[..., None] * self.h * (_hat_cdf(hi - grid) - _hat_cdf(lo - grid))
        return out

    def variance(self, x):
        """Exact: Σ_k z_k² P(z_k | x) − x² (Lemma 9: never below the continuous variance)."""
        x = np.asarray(x, dtype=float)
        return self.pmf(x) @ (self._support**2) - x * x

    def output_bounds(self):
        return (-self.A, self.A)

    def __repr__(self):
        return f"Discretized({self.base!r}, m={self.m})"


def discretize(mech: Mechanism, m: int) -> Mechanism:
    """Algorithm 5 applied to ``mech``: its continuous part (or branch, for a mixture)."""
    if isinstance(mech, Mixture):
        parts = [Discretized(c, m) if c.continuous else c for c in mech.components]
        mixed = Mixture(mech.eps, parts, list(mech.weights), name=f"{mech.name}_disc")
        mixed.m = int(m)
        return mixed
    return Discretized(mech, m)

