"""Discretisation post-processing (Zhao et al. 2021, Algorithm 5; Eqs. (34)-(35), Lemmas 8-9).

Spec: docs/papers/ldpfl.md §10. The continuous output y ∈ [−A, A] is
rounded at random to the grid {kA/m : k = −m..m} (2m+1 values, spacing h = A/m): with
k = ⌊y/h⌋, output (k+1)h with probability y/h − k, else kh. Then E[Z | y] = y, so Z stays
unbiased, and LDP is preserved (post-processing). The exact pmf is the integral of the
mechanism's piecewise-constant density against the grid's hat functions.

For hybrids (HM, HM-TP) only the continuous branch is discretised, on that branch's own [−A, A];
the discrete branch is left as it is [I, docs/papers/ldpfl.md §10].
"""

from __future__ import annotations

import numpy as np

from ldprepro.domain.mechanisms.base import Mechanism, Mixture


def _hat_average(start: np.ndarray, length: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Mean over [start, start + length] of the hat max(0, 1 − |s − g|), for each grid point g.

    Computed per linear piece of the hat ([g−1, g] and [g, g+1]) as overlap length × the hat at
    the overlap's midpoint (exact for a linear function), so a piece much shorter than its
    distance from 0 (PM's window at large ε, L ≪ |t|) keeps its full mass instead of vanishing
    in a difference of two CDF values."""
    total = np.zeros(np.broadcast(start, length, grid).shape)
    for b0, b1 in ((-1.0, 0.0), (0.0, 1.0)):
        off0 = np.clip(grid + b0 - start, 0.0, length)
        off1 = np.clip(grid + b1 - start, 0.0, length)
        mid = start + 0.5 * (off0 + off1) - grid
        total += (off1 - off0) * (1.0 - np.abs(mid))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(length > 0, total / length, 0.0)


def _distinct(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of ``x`` and, per entry, the index of its value (``values[inverse]`` is
    ``x``). A matrix is taken a column at a time: ``np.unique``'s inverse argsorts the whole array,
    and sorting its columns apart is several times cheaper on census-size matrices (2.9 M × 6
    values: 1.6 s instead of 9 s here). A value in two columns is listed once per column."""
    if x.ndim != 2:
        values, inverse = np.unique(x, return_inverse=True)
        return values, inverse.reshape(x.shape)
    parts, inverse, offset = [], np.empty(x.shape, dtype=np.intp), 0
    for j in range(x.shape[1]):
        values, column = np.unique(x[:, j], return_inverse=True)
        inverse[:, j] = column.reshape(-1) + offset
        parts.append(values)
        offset += values.size
    return np.concatenate(parts), inverse


class Discretized(Mechanism):
    """A continuous-output mechanism followed by Algorithm 5's randomised rounding to 2m+1 values."""

    discrete = True
    continuous = False
    _VARIANCE_BLOCK = 4096

    def __init__(self, base: Mechanism, m: int):
        if not base.continuous or base.discrete:
            raise ValueError(f"only a continuous-output mechanism can be discretised, not {base.name}")
        m = int(m)
        if m < 1:
            raise ValueError(f"discretisation needs m >= 1 segments per side, got {m}")
        lo, hi = base.output_bounds()
        if not (np.isfinite(lo) and np.isfinite(hi)) or not np.isclose(-lo, hi):
            raise ValueError(f"{base.name} has no bounded symmetric output range to discretise")
        self.name = f"{base.name}_disc"
        super().__init__(base.eps)
        self.base, self.m = base, m
        self.A = hi
        self.h = hi / m
        self.name = f"{base.name}_disc"
        self._support = np.arange(-m, m + 1) * self.h

    def _perturb_block(self, x, rng):
        return self.round(self.base._perturb_block(x, rng), rng)

    def _block_kernel(self):
        if type(self)._perturb_block is not Discretized._perturb_block or type(self).round is not Discretized.round:
            return None
        base = self.base.block_kernel()
        if base is None or base[2] > 0:
            return None
        return base[0], base[1], self.h

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

    def _mass_pieces(self, x):
        if hasattr(self.base, "mass_pieces"):
            return self.base.mass_pieces(x)
        return [(lo, hi - lo, dens * (hi - lo)) for lo, hi, dens in self.base.density_pieces(x)]

    def pmf(self, x):
        """P(z_k | x) = Σ over the base's uniform pieces of mass × (mean of z_k's hat over the
        piece): every term is non-negative, so tail probabilities keep their relative precision."""
        x = np.asarray(x, dtype=float)
        grid = np.arange(-self.m, self.m + 1, dtype=float)
        out = np.zeros(x.shape + (len(grid),))
        for start, length, mass in self._mass_pieces(x):
            start = np.asarray(start, dtype=float)[..., None] / self.h
            length = np.asarray(length, dtype=float)[..., None] / self.h
            out += np.asarray(mass, dtype=float)[..., None] * _hat_average(start, length, grid)
        return out

    def variance(self, x):
        """Exact: Σ_k (z_k − x)² P(z_k | x) (unbiased output; Lemma 9: never below the
        continuous variance), free of the cancellation of Σ z_k² P − x² at large ε."""
        x = np.asarray(x, dtype=float)
        # It depends on x alone: evaluate each distinct value once, a block at a time (the pmf
        # holds 2m+1 entries per value and piece), then give every entry its value's variance.
        values, inverse = _distinct(x)
        out = np.empty(values.shape)
        for start in range(0, values.size, self._VARIANCE_BLOCK):
            v = values[start : start + self._VARIANCE_BLOCK]
            out[start : start + v.size] = np.sum((self._support - v[:, None]) ** 2 * self.pmf(v), axis=-1)
        return out[inverse]

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
