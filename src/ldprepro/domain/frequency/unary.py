"""Unary (one-hot) encodings with independent per-bit randomised response: :class:`UnaryEncoding`, and
Wang et al.'s (USENIX Security 2017) :class:`SUE` (basic one-time RAPPOR) and :class:`OUE`."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ldprepro.domain.frequency.base import (
    FrequencyOracle,
    _check_eps,
    _check_k,
    _check_prob,
    _check_true_counts,
    _column_counts,
)

# Rows of the (n, k) bit matrix drawn per block in unary-encoding perturbation: bounds the float
# temporaries to ~32 MB whatever n is.
_UE_BLOCK_ELEMENTS = 1 << 22


class UnaryEncoding(FrequencyOracle):
    """Unary (one-hot) encoding with independent per-bit randomised response.

    The user's one-hot vector is perturbed bit by bit: a 1-bit is reported as 1 with probability
    ``p_true``, a 0-bit with probability ``p_other``. Reports are an (n, k) uint8 bit matrix.
    Exact privacy of one value: two values differ in two bits, so
    ε = ln(p_true (1 - p_other) / (p_other (1 - p_true))) (in absolute value).
    """

    name = "ue"

    def __init__(self, k: int, p_true: float, p_other: float):
        self.k = _check_k(k)
        self.p_true = _check_prob(p_true, "p_true")
        self.p_other = _check_prob(p_other, "p_other")
        if self.p_true == self.p_other:
            raise ValueError(f"p_true and p_other must differ (got both {p_true!r}): nothing can be estimated")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(k={self.k}, p_true={self.p_true!r}, p_other={self.p_other!r})"

    def pmf_bit(self, true_bit: Any, bit: Any) -> np.ndarray:
        """Pr(reported bit = ``bit`` | encoded bit = ``true_bit``), broadcasting over both."""
        tb = np.asarray(true_bit).astype(bool)
        b = np.asarray(bit).astype(bool)
        p1 = np.where(tb, self.p_true, self.p_other)
        return np.where(b, p1, 1.0 - p1)

    def bit_probs(self, x: Any) -> np.ndarray:
        """Pr(bit y = 1 | value x) for y = 0..k-1: shape ``x.shape + (k,)``."""
        xa = np.asarray(x)
        flat = self._validate(xa.reshape(-1))
        out = np.full(flat.shape + (self.k,), self.p_other)
        out[np.arange(flat.size), flat] = self.p_true
        return out.reshape(xa.shape + (self.k,))

    def log_pmf(self, x: Any, reports: Any) -> np.ndarray:
        """log Pr(report bit vector | value x), broadcasting ``x`` (...) against ``reports`` (..., k)."""
        pr1 = self.bit_probs(x)
        r = np.asarray(reports).astype(bool)
        return np.where(r, np.log(pr1), np.log1p(-pr1)).sum(axis=-1)

    @property
    def epsilon_exact(self) -> float:
        """ln of the exact worst-case likelihood ratio between two values (two bits differ)."""
        pt, po = self.p_true, self.p_other
        with np.errstate(divide="ignore"):
            return float(abs(np.log(pt) + np.log1p(-po) - np.log(po) - np.log1p(-pt)))

    def perturb(self, values: Any, rng: np.random.Generator) -> np.ndarray:
        """One-shot perturbation: (n, k) uint8 matrix, bit y ~ Bernoulli(p_true if y == x else p_other)."""
        v = self._validate(values)
        return self._draw_bits(v, self.p_true, self.p_other, rng)

    def _draw_bits(self, v: np.ndarray, p1: float, p0: float, rng: np.random.Generator) -> np.ndarray:
        n, k = v.shape[0], self.k
        out = np.empty((n, k), dtype=bool)
        block = max(1, _UE_BLOCK_ELEMENTS // k)
        for start in range(0, n, block):
            stop = min(n, start + block)
            m = stop - start
            bits = out[start:stop]
            np.less(rng.random((m, k)), p0, out=bits)
            bits[np.arange(m), v[start:stop]] = rng.random(m) < p1
        return out.view(np.uint8)

    def support_counts(self, reports: Any) -> np.ndarray:
        """Number of 1-bits in each column (length-k int64 array)."""
        return _column_counts(reports, self.k, "bit matrix")

    aggregate = support_counts

    def sample_support_counts(self, true_counts: Any, rng: np.random.Generator, size: int | None = None) -> np.ndarray:
        """Column sums drawn directly: Binomial(c_v, p_true) + Binomial(n - c_v, p_other), independent
        over v (bits are perturbed independently). Exact. Returns shape (k,) or (size, k)."""
        c = _check_true_counts(true_counts, self.k)
        n = int(c.sum())
        shape = None if size is None else (int(size), self.k)
        return rng.binomial(c, self.p_true, size=shape) + rng.binomial(n - c, self.p_other, size=shape)


class SUE(UnaryEncoding):
    """Symmetric unary encoding (basic one-time RAPPOR; Wang et al. 2017):
    p = e^{ε/2}/(e^{ε/2}+1), q = 1/(e^{ε/2}+1)."""

    name = "sue"

    def __init__(self, k: int, eps: float):
        self.eps = _check_eps(eps)
        half = self.eps / 2
        p = 1.0 / (1.0 + math.exp(-half))
        q = 1.0 / (1.0 + math.exp(half))
        super().__init__(k, p, q)
        self.p, self.q = p, q

    def __repr__(self) -> str:
        return f"SUE(k={self.k}, eps={self.eps!r})"


class OUE(UnaryEncoding):
    """Optimised unary encoding (Wang et al. 2017): p = 1/2, q = 1/(e^ε+1)."""

    name = "oue"

    def __init__(self, k: int, eps: float):
        self.eps = _check_eps(eps)
        p = 0.5
        q = 1.0 / (1.0 + math.exp(self.eps))
        super().__init__(k, p, q)
        self.p, self.q = p, q

    def __repr__(self) -> str:
        return f"OUE(k={self.k}, eps={self.eps!r})"
