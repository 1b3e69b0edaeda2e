"""Frequency oracles over a finite domain {0, ..., k-1}.

Each oracle is a small immutable object, in the spirit of a frozen ``scipy.stats`` distribution:
it is built from its parameters, holds its exact output probabilities, and offers

* ``perturb(values, rng)``: the user-side randomiser, vectorised over an int array of n values
  (GRR returns an int array of n reports; the unary encodings return an (n, k) ``uint8`` bit matrix);
* ``support_counts(reports)``: the aggregated counts the collector sees (how many reports *support*
  each value: GRR, reports equal to v; unary encodings, reports whose bit v is 1);
* ``estimate_counts(support, n)`` / ``estimate_frequencies(support, n)``: the unbiased estimator
  ``(c_v - n * p_other) / (p_true - p_other)``;
* ``count_variance(n, true_counts)`` / ``frequency_variance(n, freqs)``: its exact variance;
* exact probabilities: GRR ``pmf(x)`` / ``channel``; unary encodings ``pmf_bit(true_bit, bit)`` and
  ``bit_probs(x)``; everything needed to compute the exact privacy loss (``epsilon_exact``);
* ``sample_support_counts(true_counts, rng, size=None)``: draws the aggregated noisy counts directly
  from their exact distribution (sufficient statistics), for large sweeps.

Notation shared by all oracles: ``p_true`` = Pr(a report supports v | the user's value is v) and
``p_other`` = Pr(a report supports v | the user's value is not v). For GRR these are Kairouz et al.'s
p = e^ε/(e^ε+k-1) and q = 1/(e^ε+k-1); for SUE/OUE they are Wang et al.'s (USENIX Security 2017)
p and q; for the RAPPOR-style oracle they are the combined channel q* and p* of
``specs/rrldp_lremh.md`` §2 (note that spec's *instantaneous* parameters are named the other way round:
q = Pr(1 | permanent bit 1), p = Pr(1 | permanent bit 0)).

The support count of value v is exactly Binomial(c_v, p_true) + Binomial(n - c_v, p_other) (for GRR
this is the marginal of a multinomial), so with c_v the true count

    E[c] = c_v p_true + (n - c_v) p_other,
    Var[ĉ_v] = (c_v p_true (1 - p_true) + (n - c_v) p_other (1 - p_other)) / (p_true - p_other)^2.

All randomness comes from the ``numpy.random.Generator`` passed in; there is no global state.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = [
    "FrequencyOracle",
    "GRR",
    "UnaryEncoding",
    "SUE",
    "OUE",
    "RapporUE",
    "ORACLES",
    "get_oracle",
    "grr_perturb",
    "rappor_channel",
    "rappor_privacy",
]

# Rows of the (n, k) bit matrix drawn per block in unary-encoding perturbation: bounds the float
# temporaries to ~32 MB whatever n is.
_UE_BLOCK_ELEMENTS = 1 << 22


# --------------------------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------------------------


def _check_k(k: Any) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 2:
        raise ValueError(f"domain size k must be an integer >= 2, got {k!r}")
    return int(k)


def _check_eps(eps: Any, name: str = "eps") -> float:
    try:
        e = float(eps)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive finite number, got {eps!r}") from None
    if not math.isfinite(e) or e <= 0:
        raise ValueError(f"{name} must be a positive finite number, got {eps!r}")
    return e


def _check_values(values: Any, k: int) -> np.ndarray:
    """Return ``values`` as a 1-d int64 array, raising ValueError naming the first bad value."""
    arr = np.asarray(values)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise ValueError(f"values must be a 1-d array of ints, got shape {arr.shape}")
    if arr.size == 0:
        return arr.astype(np.int64)
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise ValueError(f"values must be integers in 0..{k - 1}, got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.floating):
        bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if bad.any():
            raise ValueError(f"values must be integers in 0..{k - 1}, got {arr[np.argmax(bad)].item()!r}")
    bad = (arr < 0) | (arr >= k)
    if bad.any():
        raise ValueError(f"values must be integers in 0..{k - 1}, got {arr[np.argmax(bad)].item()!r}")
    return arr.astype(np.int64, copy=False)


def _check_true_counts(true_counts: Any, k: int) -> np.ndarray:
    c = np.asarray(true_counts)
    if c.shape != (k,):
        raise ValueError(f"true_counts must have shape ({k},), got {c.shape}")
    if not np.issubdtype(c.dtype, np.integer):
        if not np.all(np.isfinite(c)) or np.any(c != np.round(c)):
            raise ValueError(f"true_counts must be non-negative integers, got {c!r}")
    if np.any(c < 0):
        raise ValueError(f"true_counts must be non-negative integers, got {c[np.argmax(c < 0)].item()!r}")
    return c.astype(np.int64)


def _check_prob(x: Any, name: str, *, open_low: bool = False, open_high: bool = False) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a probability, got {x!r}") from None
    lo_ok = v > 0 if open_low else v >= 0
    hi_ok = v < 1 if open_high else v <= 1
    if not (math.isfinite(v) and lo_ok and hi_ok):
        lo = "(0" if open_low else "[0"
        hi = "1)" if open_high else "1]"
        raise ValueError(f"{name} must lie in {lo}, {hi}, got {x!r}")
    return v


# --------------------------------------------------------------------------------------------
# GRR
# --------------------------------------------------------------------------------------------


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


class FrequencyOracle:
    """Shared estimator/variance/validation code. Subclasses set ``k``, ``p_true``, ``p_other``."""

    name: str = "abstract"
    k: int
    p_true: float
    p_other: float

    # --- estimation ------------------------------------------------------------------------
    def estimate_counts(self, support: Any, n: int | None = None) -> np.ndarray:
        """Unbiased count estimate (c - n p_other)/(p_true - p_other), elementwise over ``support``.

        ``support`` has shape (..., k). ``n`` (number of users) is required for the unary encodings;
        for GRR it defaults to ``support.sum(-1)``.
        """
        c = np.asarray(support, dtype=float)
        if c.shape[-1:] != (self.k,):
            raise ValueError(f"support counts must have last axis of length {self.k}, got shape {c.shape}")
        if n is None:
            n = self._default_n(c)
        n_arr = np.asarray(n, dtype=float)
        if n_arr.ndim:
            n_arr = n_arr[..., None]
        return (c - n_arr * self.p_other) / (self.p_true - self.p_other)

    def _default_n(self, c: np.ndarray) -> np.ndarray:
        raise ValueError(f"{self.name}: the number of users n is required to estimate counts")

    def estimate_frequencies(self, support: Any, n: int | None = None) -> np.ndarray:
        """Unbiased frequency estimate: :meth:`estimate_counts` / n."""
        c = np.asarray(support, dtype=float)
        if n is None:
            n = self._default_n(c)
        n_arr = np.asarray(n, dtype=float)
        est = self.estimate_counts(c, n_arr)
        return est / (n_arr[..., None] if n_arr.ndim else n_arr)

    def estimate_from_reports(self, reports: Any) -> np.ndarray:
        """Estimated counts straight from a batch of per-user reports."""
        rep = np.asarray(reports)
        return self.estimate_counts(self.support_counts(rep), rep.shape[0])

    def count_variance(self, n: Any, true_counts: Any = 0, *, freq: Any = None) -> np.ndarray:
        """Exact variance of :meth:`estimate_counts` for value(s) with true count ``true_counts``.

        Var = (c p_t (1 - p_t) + (n - c) p_o (1 - p_o)) / (p_t - p_o)^2, with p_t = ``p_true``,
        p_o = ``p_other``. Pass ``freq`` instead of ``true_counts`` to give c = freq * n. With c = 0
        this is the usual "approximate variance" n p_o (1 - p_o)/(p_t - p_o)^2 of Wang et al. 2017.
        """
        n_arr = np.asarray(n, dtype=float)
        c = n_arr * np.asarray(freq, dtype=float) if freq is not None else np.asarray(true_counts, dtype=float)
        pt, po = self.p_true, self.p_other
        return (c * pt * (1 - pt) + (n_arr - c) * po * (1 - po)) / (pt - po) ** 2

    def frequency_variance(self, n: Any, freq: Any = 0) -> np.ndarray:
        """Exact variance of :meth:`estimate_frequencies` for true frequency ``freq``."""
        n_arr = np.asarray(n, dtype=float)
        return self.count_variance(n_arr, freq=freq) / n_arr**2

    # --- sufficient statistics ----------------------------------------------------------------
    def sample_support_counts(self, true_counts: Any, rng: np.random.Generator, size: int | None = None) -> np.ndarray:
        raise NotImplementedError

    # --- privacy -------------------------------------------------------------------------------
    @property
    def epsilon_exact(self) -> float:
        raise NotImplementedError

    def _validate(self, values: Any) -> np.ndarray:
        return _check_values(values, self.k)


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
        r = np.asarray(reports)
        if r.ndim != 2 or r.shape[1] != self.k:
            raise ValueError(f"reports must be an (n, {self.k}) bit matrix, got shape {r.shape}")
        return r.sum(axis=0, dtype=np.int64)

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


def rappor_channel(f: float, p: float, q: float) -> tuple[float, float]:
    """Combined RAPPOR channel (specs/rrldp_lremh.md §2, eq. 8-9): returns (q*, p*) with
    q* = Pr(T=1 | s=1) = ½f(p+q) + (1-f)q and p* = Pr(T=1 | s=0) = ½f(p+q) + (1-f)p."""
    f = _check_prob(f, "f")
    p = _check_prob(p, "p")
    q = _check_prob(q, "q")
    base = 0.5 * f * (p + q)
    return base + (1 - f) * q, base + (1 - f) * p


def rappor_privacy(f: float, p: float, q: float, d: int = 1) -> dict[str, float]:
    """Labelled privacy figures of the RAPPOR-style RR for records of ``d`` attributes (spec §3).

    * ``permanent_eps_record``: Theorem 1, ε₁ = 2d ln((1 - f/2)/(f/2)) (correct as printed);
    * ``instantaneous_eps_per_attribute``: Theorem 2 as printed, ln(q*(1-p*)/(p*(1-q*)));
    * ``instantaneous_eps_record``: d × the per-attribute value, the correct record-level bound (the
      paper's Theorem 2 omits the factor d).
    """
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
        raise ValueError(f"number of attributes d must be a positive integer, got {d!r}")
    qs, ps = rappor_channel(f, p, q)
    with np.errstate(divide="ignore"):
        perm = 2 * d * float(np.log((1 - f / 2) / (f / 2))) if f > 0 else math.inf
        inst = float(abs(np.log(qs) + np.log1p(-ps) - np.log(ps) - np.log1p(-qs)))
    return {
        "q_star": qs,
        "p_star": ps,
        "permanent_eps_record": perm,
        "instantaneous_eps_per_attribute": inst,
        "instantaneous_eps_record": d * inst,
    }


class RapporUE(UnaryEncoding):
    """RAPPOR-style permanent + instantaneous randomised response over a unary encoding
    (RR-LDP, specs/rrldp_lremh.md §2-3; Erlingsson et al. 2014 with one-hot instead of Bloom filter).

    * Permanent RR (:meth:`permanent`, memoised per user in a deployment): each bit is kept with
      probability 1-f, else set to 0 or 1 with probability f/2 each.
    * Instantaneous RR (:meth:`instantaneous`, fresh per collection): reports 1 with probability ``q``
      if the permanent bit is 1 and ``p`` if it is 0 (spec's naming; the paper uses q=0.75, p=0.5).
    * Combined channel: ``q_star`` = ½f(p+q)+(1-f)q = Pr(1 | bit 1), ``p_star`` = ½f(p+q)+(1-f)p =
      Pr(1 | bit 0); hence ``p_true = q_star`` and ``p_other = p_star`` in this module's notation.

    :meth:`perturb` draws Bernoulli(q*)/Bernoulli(p*) in one shot; :meth:`perturb_two_stage` runs the
    two stages. They agree in distribution for a single collection.

    Privacy (labelled, spec §3): :meth:`permanent_epsilon` (Theorem 1, ε₁ = 2d ln((1-f/2)/(f/2))),
    :attr:`instantaneous_epsilon_per_attribute` (Theorem 2 as printed) and
    :meth:`instantaneous_epsilon_record` (d × that; the paper omits d). ``epsilon_exact`` is the
    one-attribute value, equal to ``instantaneous_epsilon_per_attribute``.
    """

    name = "rappor"

    def __init__(self, k: int, f: float, p: float = 0.5, q: float = 0.75):
        self.f = _check_prob(f, "f", open_high=True)
        self.p = _check_prob(p, "p")
        self.q = _check_prob(q, "q")
        if self.p == self.q:
            raise ValueError(f"instantaneous RR needs p != q, got p = q = {p!r}")
        self.q_star, self.p_star = rappor_channel(self.f, self.p, self.q)
        super().__init__(k, self.q_star, self.p_star)

    def __repr__(self) -> str:
        return f"RapporUE(k={self.k}, f={self.f!r}, p={self.p!r}, q={self.q!r})"

    # --- stages --------------------------------------------------------------------------------
    def encode(self, values: Any) -> np.ndarray:
        """One-hot encoding: (n, k) uint8."""
        v = self._validate(values)
        out = np.zeros((v.shape[0], self.k), dtype=np.uint8)
        out[np.arange(v.shape[0]), v] = 1
        return out

    def permanent(self, values: Any, rng: np.random.Generator) -> np.ndarray:
        """Permanent RR of the one-hot encoding (eq. 6): (n, k) uint8. Per bit: keep w.p. 1-f,
        0 w.p. f/2, 1 w.p. f/2 (i.e. Pr(1 | 1) = 1 - f/2, Pr(1 | 0) = f/2)."""
        v = self._validate(values)
        return self._draw_bits(v, 1.0 - self.f / 2, self.f / 2, rng)

    def instantaneous(self, permanent_bits: Any, rng: np.random.Generator) -> np.ndarray:
        """Instantaneous RR (eq. 7) of memoised permanent bits: (n, k) uint8, 1 w.p. q if the bit is 1,
        p if 0."""
        b = np.asarray(permanent_bits)
        if b.ndim != 2 or b.shape[1] != self.k:
            raise ValueError(f"permanent bits must be an (n, {self.k}) matrix, got shape {b.shape}")
        bad = (b != 0) & (b != 1)
        if bad.any():
            raise ValueError(f"permanent bits must be 0/1, got {b[bad][0].item()!r}")
        prob = np.where(b.astype(bool), self.q, self.p)
        return (rng.random(b.shape) < prob).view(np.uint8)

    def perturb_two_stage(self, values: Any, rng: np.random.Generator) -> np.ndarray:
        """Permanent then instantaneous RR (one collection of fresh users)."""
        return self.instantaneous(self.permanent(values, rng), rng)

    def pmf_bit_permanent(self, true_bit: Any, bit: Any) -> np.ndarray:
        """Pr(permanent bit = ``bit`` | encoded bit = ``true_bit``)."""
        tb = np.asarray(true_bit).astype(bool)
        b = np.asarray(bit).astype(bool)
        p1 = np.where(tb, 1.0 - self.f / 2, self.f / 2)
        return np.where(b, p1, 1.0 - p1)

    # --- privacy (labelled) ---------------------------------------------------------------------
    def permanent_epsilon(self, d: int = 1) -> float:
        """Theorem 1: ε₁ = 2d ln((1 - f/2)/(f/2)) for records of ``d`` attributes (correct as printed)."""
        return rappor_privacy(self.f, self.p, self.q, d)["permanent_eps_record"]

    @property
    def instantaneous_epsilon_per_attribute(self) -> float:
        """Theorem 2 as printed: ln(q*(1-p*)/(p*(1-q*))), the bound for ONE attribute."""
        return rappor_privacy(self.f, self.p, self.q, 1)["instantaneous_eps_per_attribute"]

    def instantaneous_epsilon_record(self, d: int) -> float:
        """Correct record-level instantaneous bound d·ln(q*(1-p*)/(p*(1-q*))) (paper omits d)."""
        return rappor_privacy(self.f, self.p, self.q, d)["instantaneous_eps_record"]

    def privacy(self, d: int = 1) -> dict[str, float]:
        """All labelled figures; see :func:`rappor_privacy`."""
        return rappor_privacy(self.f, self.p, self.q, d)


ORACLES: dict[str, type[FrequencyOracle]] = {"grr": GRR, "sue": SUE, "oue": OUE, "rappor": RapporUE}


def get_oracle(name: str, k: int, eps: float | None = None, **params: Any) -> FrequencyOracle:
    """Build an oracle by name: ``grr``, ``sue``, ``oue`` take ``eps``; ``rappor`` takes ``f`` (and
    optionally ``p``, ``q``; defaults 0.5, 0.75 as in the paper) and no ``eps``."""
    key = str(name).lower()
    if key not in ORACLES:
        raise ValueError(f"unknown frequency oracle {name!r}; choose one of {sorted(ORACLES)}")
    if key == "rappor":
        if eps is not None:
            raise ValueError(f"the rappor oracle is parameterised by f, p, q, not eps (got eps={eps!r})")
        if "f" not in params:
            raise ValueError("the rappor oracle needs the permanent-RR parameter f")
        unknown = set(params) - {"f", "p", "q"}
        if unknown:
            raise ValueError(f"unknown parameter(s) for rappor: {sorted(unknown)}")
        return RapporUE(k, **params)
    if params:
        raise ValueError(f"unknown parameter(s) for {key}: {sorted(params)}")
    if eps is None:
        raise ValueError(f"oracle {key!r} needs eps")
    return ORACLES[key](k, eps)
