"""Local hashing (Wang, Blocki, Li, Jha, USENIX Security 2017, Sec. 4): :class:`LocalHashing`, its
optimised (:class:`OLH`, g = round(e^ε) + 1) and binary (:class:`BLH`, g = 2) instances, and the
hash family :func:`splitmix_hash`.

A user with value v draws a hash function H from a family [k] → [g], computes H(v), perturbs it with
generalised randomised response over [g] at ε, and reports (H, y). The collector counts, for every
value x, the reports that *support* it: y = H(x). Notation of ``ldprepro.domain.frequency``:

* ``p_true`` = Pr(y = H(v) | v) = e^ε/(e^ε + g − 1) (GRR over g values);
* ``p_other`` = Pr(y = H(x) | v), x ≠ v, = 1/g exactly when H(x) is uniform on [g] and independent of
  H(v) (Wang et al. 2017 Sec. 4: "q* = 1/g");

and the estimator (c_x − n/g)/(p_true − 1/g) is unbiased with the exact variance of
:meth:`FrequencyOracle.count_variance`; with c_x = 0 and g = e^ε + 1 it is Wang et al.'s
Var* = n·4e^ε/(e^ε − 1)², which does not depend on k (Sec. 4).

**Hash family (stated, seeded, recorded).** The idealised family is a uniformly random function:
every H(x) independent and uniform on [g]. Then, for one user, the indicators 1[y = H(x)] over the
values x ≠ v are independent Bernoulli(1/g), independent of 1[y = H(v)] ~ Bernoulli(p_true), so the
support counts are *exactly* independent over x, Binomial(c_x, p_true) + Binomial(n − c_x, 1/g):
:meth:`LocalHashing.sample_support_counts` draws them (a sufficient statistic, O(k) per draw).
The per-user path (:meth:`LocalHashing.perturb`) realises H concretely: each user's seed s is drawn
from the ``numpy.random.Generator`` (uint64) and H_s(x) = (the (x+1)-th output of SplitMix64 seeded
with s) mod g (:func:`splitmix_hash`); the seeds are the first half of the report, so the hash of every
report is recorded. SplitMix64 (Steele, Lea, Flood 2014) is the generator that seeds numpy's and Java's
PRNGs; its outputs mod g are uniform up to g/2⁶⁴ (< 2⁻⁵² for g ≤ 2¹²), below float64 resolution,
and the tests check the per-user path against the exact law.

**Privacy** does not depend on the hash: the seed is drawn independently of v, and given it the
report is GRR over [g] of H_s(v), so the exact loss is that of GRR on g values, ln(e^ε) = ε (computed
from the law in :attr:`LocalHashing.epsilon_exact`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ldprepro.domain.frequency.base import (
    FrequencyOracle,
    _check_eps,
    _check_eps_exact,
    _check_k,
    _check_true_counts,
    pair_law_loss,
)
from ldprepro.domain.frequency.grr import grr_perturb

_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
#: hash evaluations per block in :meth:`LocalHashing.support_counts` (bounds the uint64 temporaries)
_BLOCK_ELEMENTS = 1 << 21
#: largest hash range accepted (uint64 arithmetic; and e^ε + g − 1 stays exact in float64)
_G_MAX = 1 << 40


def splitmix_hash(seeds: Any, x: Any, g: int) -> np.ndarray:
    """H_s(x) = SplitMix64(s)'s (x+1)-th output mod g, broadcasting ``seeds`` (uint64) against ``x``.

    SplitMix64: z = s + (x+1)·0x9E3779B97F4A7C15 (mod 2⁶⁴), then z ^= z >> 30, z *= 0xBF58476D1CE4E5B9,
    z ^= z >> 27, z *= 0x94D049BB133111EB, z ^= z >> 31.
    """
    s = np.asarray(seeds, dtype=np.uint64)
    xv = np.asarray(x, dtype=np.uint64) + np.uint64(1)
    with np.errstate(over="ignore"):
        z = s + xv * _GAMMA
        z ^= z >> np.uint64(30)
        z *= _M1
        z ^= z >> np.uint64(27)
        z *= _M2
        z ^= z >> np.uint64(31)
    return (z % np.uint64(g)).astype(np.int64)


class LocalHashing(FrequencyOracle):
    """Local hashing with hash range ``g`` (Wang et al. 2017 Sec. 4; see the module docstring).

    Reports are a pair of arrays ``(seeds, y)``: the uint64 seed of each user's hash function and the
    perturbed hash value in 0..g−1. ``p_true`` = e^ε/(e^ε+g−1), ``p_other`` = 1/g.
    """

    name = "lh"

    def __init__(self, k: int, eps: float, g: int):
        self.k = _check_k(k)
        self.eps = _check_eps_exact(eps)
        if isinstance(g, bool) or not isinstance(g, (int, np.integer)) or not 2 <= g <= _G_MAX:
            raise ValueError(f"hash range g must be an integer in [2, 2^40], got {g!r} (eps={eps!r})")
        self.g = int(g)
        t = math.exp(-self.eps)
        self.p = 1.0 / (1.0 + (self.g - 1) * t)  # e^ε/(e^ε+g−1), stable for large ε
        self.q = t / (1.0 + (self.g - 1) * t)  # 1/(e^ε+g−1): GRR's "other value" probability
        self.p_true, self.p_other = self.p, 1.0 / self.g

    def __repr__(self) -> str:
        return f"{type(self).__name__}(k={self.k}, eps={self.eps!r}, g={self.g})"

    # --- exact law -----------------------------------------------------------------------------
    def channel(self) -> np.ndarray:
        """(g, g) GRR channel over the hash range: ``channel[h, y]`` = Pr(y | H(v) = h)."""
        m = np.full((self.g, self.g), self.q)
        np.fill_diagonal(m, self.p)
        return m

    def pmf(self, x: Any, seeds: Any) -> np.ndarray:
        """Pr(y | value x, seed s) for y = 0..g−1 (the seed itself is uniform and independent of x):
        shape ``(len(seeds), g)``."""
        h = splitmix_hash(np.asarray(seeds, dtype=np.uint64), int(self._validate(x)[0]), self.g)
        out = np.full(h.shape + (self.g,), self.q)
        out[np.arange(h.size), h] = self.p
        return out

    def support_pair_pmf(self) -> np.ndarray:
        """2×2 law of (supports x0, supports x1) for a user with value x0 ≠ x1 (ideal hash):
        (1,1): p/g (H(x1) = H(x0) w.p. 1/g); (1,0): p(1 − 1/g); (0,1): (1 − 1/g)·q;
        (0,0): (g − 1)²q/g. The report's likelihood ratio between x0 and x1 is a function of this pair."""
        p, q, g = self.p, self.q, self.g  # 1 − p = (g − 1) q: every cell without cancellation
        return np.array([[(g - 1) ** 2 * q / g, (g - 1) * q / g], [p * (g - 1) / g, p / g]])

    @property
    def epsilon_exact(self) -> float:
        """ln max Pr(report | x0)/Pr(report | x1) from the exact pair law (= ε up to rounding)."""
        return pair_law_loss(self.support_pair_pmf())

    # --- user side and aggregation ---------------------------------------------------------------
    def perturb(self, values: Any, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Reports ``(seeds, y)``: uint64 seeds drawn from ``rng``, y = GRR_g(H_seed(v))."""
        v = self._validate(values)
        seeds = rng.integers(0, np.iinfo(np.uint64).max, size=v.size, dtype=np.uint64, endpoint=True)
        h = splitmix_hash(seeds, v, self.g)
        return seeds, grr_perturb(h, self.g, self.eps, rng)

    def _check_reports(self, reports: Any) -> tuple[np.ndarray, np.ndarray]:
        try:
            seeds, y = reports
        except (TypeError, ValueError):
            raise ValueError("local-hashing reports must be a pair (seeds, y) of equal-length arrays") from None
        seeds, y = np.asarray(seeds), np.asarray(y)
        if seeds.shape != y.shape or seeds.ndim != 1:
            raise ValueError(f"seeds and y must be 1-d of equal length, got shapes {seeds.shape} and {y.shape}")
        if y.size and (y.min() < 0 or y.max() >= self.g):
            bad = y[(y < 0) | (y >= self.g)][0]
            raise ValueError(f"reported hash values must lie in 0..{self.g - 1}, got {bad.item()!r}")
        return seeds.astype(np.uint64), y.astype(np.int64)

    def support_counts(self, reports: Any) -> np.ndarray:
        """For every x, the number of reports with y = H_seed(x) (length-k int64): O(n·k) hashes."""
        seeds, y = self._check_reports(reports)
        out = np.zeros(self.k, dtype=np.int64)
        xs = np.arange(self.k, dtype=np.uint64)
        block = max(1, _BLOCK_ELEMENTS // self.k)
        for start in range(0, seeds.size, block):
            h = splitmix_hash(seeds[start : start + block, None], xs[None, :], self.g)
            out += (h == y[start : start + block, None]).sum(axis=0)
        return out

    aggregate = support_counts

    def estimate_from_reports(self, reports: Any) -> np.ndarray:
        seeds, _ = self._check_reports(reports)
        return self.estimate_counts(self.support_counts(reports), seeds.size)

    def sample_support_counts(self, true_counts: Any, rng: np.random.Generator, size: int | None = None) -> np.ndarray:
        """Support counts drawn directly from their exact law under the ideal hash: independent over
        x, Binomial(c_x, p_true) + Binomial(n − c_x, 1/g) (module docstring). Shape (k,) or (size, k)."""
        c = _check_true_counts(true_counts, self.k)
        n = int(c.sum())
        shape = None if size is None else (int(size), self.k)
        return rng.binomial(c, self.p_true, size=shape) + rng.binomial(n - c, self.p_other, size=shape)


def olh_g(eps: float) -> int:
    """OLH's hash range g = round(e^ε) + 1 (Wang et al. 2017 Sec. 4; Python's round, half to even)."""
    e = _check_eps(eps)
    if e > math.log(_G_MAX - 1):
        raise ValueError(f"OLH at eps={eps!r} would hash into round(e^eps)+1 > 2^40 values; use eps <= 27.7")
    return int(round(math.exp(e))) + 1


class OLH(LocalHashing):
    """Optimised local hashing: g = round(e^ε) + 1, Var* = n·4e^ε/(e^ε−1)² at g = e^ε + 1 (Sec. 4)."""

    name = "olh"

    def __init__(self, k: int, eps: float):
        super().__init__(k, eps, olh_g(eps))


class BLH(LocalHashing):
    """Binary local hashing: g = 2 (Bassily & Smith's random projection; Wang et al. 2017 Sec. 4)."""

    name = "blh"

    def __init__(self, k: int, eps: float):
        super().__init__(k, eps, 2)
