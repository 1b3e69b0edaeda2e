"""Generalised randomised response (k-RR; Kairouz, Bonawitz, Ramage, ICML 2016): :class:`GRR` and the
vectorised per-user-budget randomiser :func:`grr_perturb` (also LHP's level perturbation)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ldprepro.domain.frequency.base import FrequencyOracle, _check_eps, _check_k, _check_true_counts, _check_values


def grr_perturb(values: Any, k: int, eps: Any, rng: np.random.Generator) -> np.ndarray:
    """Generalised randomised response with a possibly per-user budget (vectorised).

    Keeps ``values[u]`` with probability e^{ε_u}/(e^{ε_u}+k-1); otherwise reports one of the other
    k-1 values uniformly. ``eps`` is a scalar or an array broadcastable to ``values``. Two draws per
    user (one uniform, one integer in 0..k-2 shifted past the true value); no Python loop over users.
    Used by :class:`GRR` and by the level perturbation of LHP (``ldprepro.domain.graded``).
    """
    k = _check_k(k)
    v = _check_values(values, k)
    e = np.asarray(eps, dtype=float)
    if np.any(~np.isfinite(e)) or np.any(e <= 0):
        bad = e[np.argmax(~np.isfinite(e) | (e <= 0))] if e.ndim else e
        raise ValueError(f"eps must be positive and finite, got {float(bad)!r}")
    # keep probability e^ε/(e^ε+k-1) = 1/(1+(k-1)e^{-ε}), stable for large ε
    keep_prob = 1.0 / (1.0 + (k - 1) * np.exp(-e))
    n = v.shape[0]
    keep = rng.random(n) < keep_prob
    other = rng.integers(0, k - 1, size=n, dtype=np.int64)
    other += other >= v
    return np.where(keep, v, other)


class GRR(FrequencyOracle):
    """Generalised randomised response (k-RR; Kairouz, Bonawitz, Ramage, ICML 2016).

    Report the true value with probability p = e^ε/(e^ε+k-1), else each other value with
    probability q = 1/(e^ε+k-1). ``p_true = p``, ``p_other = q``. Exactly ε-LDP: max ratio p/q = e^ε.
    """

    name = "grr"

    def __init__(self, k: int, eps: float):
        self.k = _check_k(k)
        self.eps = _check_eps(eps)
        # p = e^ε/(e^ε+k-1), q = 1/(e^ε+k-1), written in e^{-ε} so that large ε neither overflows nor
        # loses q to the cancellation in (1 - p)/(k - 1)
        t = math.exp(-self.eps)
        self.p = 1.0 / (1.0 + (self.k - 1) * t)
        self.q = t / (1.0 + (self.k - 1) * t)
        self.p_true, self.p_other = self.p, self.q

    def __repr__(self) -> str:
        return f"GRR(k={self.k}, eps={self.eps!r})"

    @property
    def channel(self) -> np.ndarray:
        """(k, k) matrix: ``channel[x, y]`` = Pr(report y | value x)."""
        m = np.full((self.k, self.k), self.q)
        np.fill_diagonal(m, self.p)
        return m

    def pmf(self, x: Any) -> np.ndarray:
        """Pr(report = y | value x) for y = 0..k-1: shape ``x.shape + (k,)``."""
        xa = np.asarray(x)
        flat = self._validate(xa.reshape(-1))
        out = np.full(flat.shape + (self.k,), self.q)
        out[np.arange(flat.size), flat] = self.p
        return out.reshape(xa.shape + (self.k,))

    @property
    def epsilon_exact(self) -> float:
        """ln max_{x,x',y} Pr(y|x)/Pr(y|x') computed from the channel (= ε up to rounding)."""
        ch = self.channel
        return float(np.log((ch.max(axis=0) / ch.min(axis=0)).max()))

    def perturb(self, values: Any, rng: np.random.Generator) -> np.ndarray:
        """Reports (int64 array, same length as ``values``)."""
        return grr_perturb(values, self.k, self.eps, rng)

    def support_counts(self, reports: Any) -> np.ndarray:
        """Number of reports equal to each value (length-k int64 array)."""
        r = self._validate(reports)
        return np.bincount(r, minlength=self.k).astype(np.int64)

    aggregate = support_counts

    def _default_n(self, c: np.ndarray) -> np.ndarray:
        return c.sum(axis=-1)

    def sample_support_counts(self, true_counts: Any, rng: np.random.Generator, size: int | None = None) -> np.ndarray:
        """Aggregated reports drawn directly in O(k) per draw; shape (k,) or (size, k).

        GRR's channel is a mixture: since p = (p − q) + k·q/k and q = k·q/k, a report equals the
        true value w.p. p − q = 1 − kq ("kept") and is otherwise uniform over all k values
        (Kairouz et al.'s p, q; Wang et al. 2017 §4.1). Users are independent, so the counts are
        exactly Binomial(c_x, 1 − kq) kept at each x plus Multinomial(n − Σ kept, uniform) — the
        same law as Σ_x Multinomial(c_x, channel[x]) (:meth:`sample_support_counts_per_value`,
        the O(k²) form kept for tests) and as ``support_counts(perturb(values))``.
        """
        c = _check_true_counts(true_counts, self.k)
        keep = self.p - self.q  # = 1 − kq
        shape = (self.k,) if size is None else (int(size), self.k)
        kept = rng.binomial(c, keep, size=shape)
        rest = int(c.sum()) - kept.sum(axis=-1)
        return kept + rng.multinomial(rest, np.full(self.k, 1.0 / self.k))

    def sample_support_counts_per_value(
        self, true_counts: Any, rng: np.random.Generator, size: int | None = None
    ) -> np.ndarray:
        """Σ_x Multinomial(c_x, channel[x]): the O(k²) reference form of :meth:`sample_support_counts`."""
        c = _check_true_counts(true_counts, self.k)
        ch = self.channel
        if size is None:
            return rng.multinomial(c, ch).sum(axis=0)
        size = int(size)
        out = np.empty((size, self.k), dtype=np.int64)
        block = max(1, (1 << 22) // (self.k * self.k))
        for start in range(0, size, block):
            m = min(block, size - start)
            out[start : start + m] = rng.multinomial(c, ch, size=(m, self.k)).sum(axis=1)
        return out
