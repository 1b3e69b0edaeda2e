"""Hadamard response (Acharya, Sun, Zhang, AISTATS 2019, "Hadamard response: estimating distributions
privately, efficiently, and with little communication"): :class:`HR`.

**Variant.** The paper's basic construction with output sets of half the output alphabet — the one
pure-ldp runs for ε ≤ 1 (``Hadamard_Rand_high_priv``) — run at every ε; *not* the blocked
construction the paper (and pure-ldp) use for ε > 1. K = 2^⌈log₂(k + 1)⌉ (the smallest power of two
> k); value v owns the set C_v = {y ∈ [K] : ⟨v + 1, y⟩ even} (the +1 entries of row v + 1 of the
K × K Sylvester–Hadamard matrix, row 0 unused), |C_v| = K/2. The report is y ∈ [K] with

    Pr(y | v) = 2e^ε / (K(e^ε + 1)) if y ∈ C_v, 2 / (K(e^ε + 1)) otherwise.

Two distinct rows agree on exactly half the columns, so |C_v ∩ C_x| = K/4 and a report supports
x ≠ v (y ∈ C_x) with probability exactly 1/2. Notation of ``ldprepro.domain.frequency``:
``p_true`` = e^ε/(e^ε + 1), ``p_other`` = 1/2; the estimator (c_x − n/2)/(p_true − 1/2) is unbiased with
the exact variance of :meth:`FrequencyOracle.count_variance`, (c_x p_t(1 − p_t) + (n − c_x)/4)/(p_t − 1/2)²
(each user's support of x is an independent Bernoulli); with c_x = 0 it is n(e^ε + 1)²/(e^ε − 1)²,
(e^ε + 1)²/(4e^ε) ≥ 1 times OUE's.

Support counts from the histogram h of the reports: support_x = Σ_{y ∈ C_x} h_y = (n + (H h)_{x+1})/2,
one fast Walsh–Hadamard transform, O(n + K log K). The histogram is the sufficient statistic. Its law:
of the c_v users of value v, Binomial(c_v, p_true) report in C_v, spread over its K/2 cells by a
uniform multinomial, the others likewise over the complement; h is the sum over v. That costs
O(V·K) per draw (V the values with users), the per-user draws O(n): :meth:`HR.sample_support_counts`
draws the histogram from its law when V·K ≤ n and the n reports otherwise (both exact; which one
depends only on the counts and K, so a seed gives the same draws on every machine).

Exact privacy loss: ratio e^{±ε} or 1, ε (from the support-pair law, :attr:`HR.epsilon_exact`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ldprepro.domain.frequency.base import (
    FrequencyOracle,
    _check_eps_exact,
    _check_k,
    _check_true_counts,
    pair_law_loss,
)

#: domain sizes above this would need an output alphabet beyond 2^31
_K_MAX = (1 << 30) - 1

#: cells (repetitions × 2V × K/2) of multinomial draws held at once by :meth:`HR.sample_histograms`
_HIST_BLOCK = 1 << 20


def _parity(x: np.ndarray) -> np.ndarray:
    """popcount(x) mod 2 for non-negative int64 arrays."""
    x = x.copy()
    for shift in (32, 16, 8, 4, 2, 1):
        x ^= x >> shift
    return x & 1


def fwht(h: np.ndarray) -> np.ndarray:
    """Unnormalised Walsh–Hadamard transform along the last axis (length a power of two):
    out[r] = Σ_y (−1)^{⟨r, y⟩} h[y]."""
    a = np.array(h, dtype=np.int64 if np.issubdtype(np.asarray(h).dtype, np.integer) else float)
    size = a.shape[-1]
    lead = a.shape[:-1]
    step = 1
    while step < size:
        v = a.reshape(lead + (size // (2 * step), 2, step))
        top, bottom = v[..., 0, :].copy(), v[..., 1, :]
        v[..., 0, :] += bottom
        v[..., 1, :] = top - bottom
        step *= 2
    return a


class HR(FrequencyOracle):
    """Hadamard response, the basic construction (module docstring): reports y in 0..K−1."""

    name = "hr"

    def __init__(self, k: int, eps: float):
        self.k = _check_k(k)
        if self.k > _K_MAX:
            raise ValueError(f"HR supports k up to {_K_MAX}, got k={k!r}")
        self.eps = _check_eps_exact(eps)
        self.K = 1 << self.k.bit_length()  # smallest power of two > k
        t = math.exp(-self.eps)
        self.p_true = 1.0 / (1.0 + t)  # e^ε/(e^ε+1)
        self.p_false = t / (1.0 + t)  # 1 − p_true, without cancellation
        self.p_other = 0.5

    def __repr__(self) -> str:
        return f"HR(k={self.k}, eps={self.eps!r})"

    # --- exact law -----------------------------------------------------------------------------
    def in_set(self, x: Any, y: Any) -> np.ndarray:
        """1[y ∈ C_x], broadcasting ``x`` (values) against ``y`` (outputs)."""
        xa = np.asarray(x, dtype=np.int64) + 1
        return _parity(xa & np.asarray(y, dtype=np.int64)) == 0

    def pmf(self, x: Any) -> np.ndarray:
        """Pr(y | value x) for y = 0..K−1: shape ``x.shape + (K,)``."""
        xa = np.asarray(x)
        flat = self._validate(xa.reshape(-1))
        inside = self.in_set(flat[:, None], np.arange(self.K)[None, :])
        out = np.where(inside, 2 * self.p_true / self.K, 2 * self.p_false / self.K)
        return out.reshape(xa.shape + (self.K,))

    def support_pair_pmf(self) -> np.ndarray:
        """2×2 law of (y ∈ C_x0, y ∈ C_x1) for a user with value x0 ≠ x1: (1, ·) p_t/2 each,
        (0, ·) (1 − p_t)/2 each (|C_x0 ∩ C_x1| = K/4)."""
        pt, pf = self.p_true, self.p_false
        return np.array([[pf / 2, pf / 2], [pt / 2, pt / 2]])

    @property
    def epsilon_exact(self) -> float:
        """ln max Pr(y | x0)/Pr(y | x1) from the exact pair law (= ε up to rounding)."""
        return pair_law_loss(self.support_pair_pmf())

    # --- user side and aggregation ---------------------------------------------------------------
    def perturb(self, values: Any, rng: np.random.Generator) -> np.ndarray:
        """Reports in 0..K−1: a uniform y, moved into C_v (w.p. p_true) or out of it by flipping the
        lowest set bit of v + 1 (a bijection between C_v and its complement): uniform on C_v or on
        its complement, as the law says."""
        v = self._validate(values)
        y = rng.integers(0, self.K, size=v.size, dtype=np.int64)
        want_in = rng.random(v.size) < self.p_true
        r = v + 1
        flip = self.in_set(v, y) != want_in
        return np.where(flip, y ^ (r & -r), y)

    def support_counts(self, reports: Any) -> np.ndarray:
        """Number of reports in C_x for every x (length-k int64), by one fast Walsh–Hadamard transform."""
        y = np.asarray(reports)
        if y.ndim != 1:
            raise ValueError(f"HR reports must be a 1-d array of outputs, got shape {y.shape}")
        if y.size and (y.min() < 0 or y.max() >= self.K):
            raise ValueError(f"HR reports must lie in 0..{self.K - 1}, got {y[(y < 0) | (y >= self.K)][0].item()!r}")
        return self.support_from_histogram(np.bincount(y.astype(np.int64), minlength=self.K))

    def support_from_histogram(self, hist: Any) -> np.ndarray:
        """(n + (H h)_{x+1}) / 2 for x = 0..k−1, along the last axis of ``hist`` (..., K)."""
        h = np.asarray(hist, dtype=np.int64)
        t = fwht(h)
        return (h.sum(axis=-1, keepdims=True) + t[..., 1 : self.k + 1]) // 2

    aggregate = support_counts

    def sample_support_counts(self, true_counts: Any, rng: np.random.Generator, size: int | None = None) -> np.ndarray:
        """Support counts of n fresh reports: the report histogram drawn from its law when that is
        cheaper (V·K ≤ n), else the n reports drawn one per user (module docstring); both exact.
        Shape (k,) or (size, k)."""
        c = _check_true_counts(true_counts, self.k)
        draws = 1 if size is None else int(size)
        if self.histogram_law_cheaper(c):
            hist = self.sample_histograms(c, rng, draws)
        else:
            values = np.repeat(np.arange(self.k), c)
            hist = np.stack([np.bincount(self.perturb(values, rng), minlength=self.K) for _ in range(draws)])
        support = self.support_from_histogram(hist)
        return support[0] if size is None else support

    def histogram_law_cheaper(self, true_counts: Any) -> bool:
        """Whether drawing the histogram (V·K cells, V the values with users) costs less than the n
        per-user reports."""
        c = np.asarray(true_counts)
        return int(np.count_nonzero(c)) * self.K <= int(c.sum())

    def sample_histograms(self, true_counts: Any, rng: np.random.Generator, size: int) -> np.ndarray:
        """``size`` report histograms (size, K) from their exact law: for every value v with users,
        Binomial(c_v, p_true) reports uniform on C_v and the rest uniform on its complement (a
        multinomial over K/2 equal cells each), summed over v. Repetitions are drawn in blocks of
        ``_HIST_BLOCK`` cells (a constant: the draws do not depend on the machine)."""
        c = _check_true_counts(true_counts, self.k)
        values = np.flatnonzero(c)
        users = c[values]
        inside = self.in_set(values[:, None], np.arange(self.K)[None, :])
        half = self.K // 2
        # each row's cells in C_v, then in its complement (exactly K/2 of each, rows in value order)
        cells = np.concatenate([np.nonzero(inside)[1].reshape(-1, half), np.nonzero(~inside)[1].reshape(-1, half)])
        uniform = np.full(half, 1.0 / half)
        out = np.empty((int(size), self.K), dtype=np.int64)
        block = max(1, _HIST_BLOCK // max(1, cells.size))
        for a in range(0, int(size), block):
            b = min(int(size), a + block)
            kept = rng.binomial(users, self.p_true, size=(b - a, users.size))
            spread = rng.multinomial(np.concatenate([kept, users - kept], axis=1), uniform)  # (b−a, 2V, K/2)
            flat = (np.arange(b - a)[:, None] * self.K + cells.reshape(1, -1)).reshape(-1)
            out[a:b] = np.bincount(flat, weights=spread.reshape(-1), minlength=(b - a) * self.K).reshape(b - a, self.K)
        return out
