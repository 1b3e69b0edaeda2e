"""Subset selection (k-subset mechanism; Ye & Barg, IEEE Trans. Inf. Theory 2018, and Wang, Wu, Hu
et al. 2016, "Mutual information optimally local private discrete distribution estimation"): :class:`SS`.

A user with value v reports a subset S of [k] of size d with

    Pr(S | v) = e^ε / Z if v ∈ S, 1 / Z otherwise,   Z = C(k−1, d−1) e^ε + C(k−1, d),

(Ye & Barg's definition of the d-subset mechanism). Equivalently: v ∈ S with probability
``p_true`` = d e^ε/(d e^ε + k − d); the other d − 1 (or d) elements are a uniform subset of [k] \\ {v}.
A value x ≠ v is in S with probability ``p_other`` = (p_true(d − 1) + (1 − p_true) d)/(k − 1)
= (d − p_true)/(k − 1). The count estimator (c_x − n p_other)/(p_true − p_other) is unbiased, and since
each user's membership of x is Bernoulli(p_true) or Bernoulli(p_other) independently over users, its
exact variance is :meth:`FrequencyOracle.count_variance` (the support count of x is
Binomial(c_x, p_true) + Binomial(n − c_x, p_other)). The counts of different values are *not*
independent (every report has exactly d elements: Σ_x support_x = n d).

Subset size: by default the d in 1..k−1 that minimises the exact data-independent variance term
p_other(1 − p_other)/(p_true − p_other)² (the c_x = 0 variance, Wang et al. 2017's "approximate
variance"), found by evaluating it at every d — Ye & Barg's optimal size, which lies next to
k/(e^ε + 1). ``d`` can be given (multi-freq-ldpy uses max(1, rint(k/(e^ε + 1)))).

Exact privacy loss: the law depends on S only through 1[v ∈ S], so the ratio between two values is
e^{±ε} or 1: loss ε for 1 ≤ d ≤ k − 1 (computed from the support-pair law, :attr:`SS.epsilon_exact`).
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
    _column_counts,
    pair_law_loss,
)

# (rows × k) random keys drawn per block in :meth:`SS.perturb`: bounds the temporaries to ~32 MB
_BLOCK_ELEMENTS = 1 << 22


def _ss_probs(k: int, eps: float, d: np.ndarray | int) -> tuple[Any, Any, Any]:
    """(p_true, 1 − p_true, p_other) for subset size(s) d, in t = e^{−ε} and without cancellation:
    z = d + (k − d)t, p_t = d/z, 1 − p_t = (k − d)t/z, p_o = (d − p_t)/(k − 1) = d(d − 1 + (k − d)t)/((k − 1)z)."""
    t = math.exp(-eps)
    d = np.asarray(d, dtype=float)
    z = d + (k - d) * t
    return d / z, (k - d) * t / z, d * (d - 1 + (k - d) * t) / ((k - 1) * z)


def optimal_subset_size(k: int, eps: float) -> int:
    """The d in 1..k−1 minimising p_o(1 − p_o)/(p_t − p_o)², the exact c = 0 variance term."""
    k, eps = _check_k(k), _check_eps(eps)
    d = np.arange(1, k)
    pt, _, po = _ss_probs(k, eps, d)
    return int(d[np.argmin(po * (1 - po) / (pt - po) ** 2)])


class SS(FrequencyOracle):
    """Subset selection with subset size ``d`` (default :func:`optimal_subset_size`); reports are an
    (n, k) uint8 membership matrix with d ones per row."""

    name = "ss"

    def __init__(self, k: int, eps: float, d: int | None = None):
        self.k = _check_k(k)
        self.eps = _check_eps_exact(eps)
        if d is None:
            d = optimal_subset_size(self.k, self.eps)
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or not 1 <= d <= self.k - 1:
            raise ValueError(f"subset size d must be an integer in 1..{self.k - 1} for k={self.k}, got {d!r}")
        self.d = int(d)
        pt, pf, po = _ss_probs(self.k, self.eps, self.d)
        self.p_true, self.p_false, self.p_other = float(pt), float(pf), float(po)
        if not self.p_true > self.p_other:
            raise ValueError(f"SS(k={k}, eps={eps!r}, d={d}): p_true == p_other in floating point; eps is too small")

    def __repr__(self) -> str:
        return f"SS(k={self.k}, eps={self.eps!r}, d={self.d})"

    # --- exact law -----------------------------------------------------------------------------
    def log_pmf(self, x: Any, reports: Any) -> np.ndarray:
        """log Pr(S | x) = (ε·1[x ∈ S]) − log Z for membership rows S (..., k); ``x`` broadcasts."""
        r = np.asarray(reports).astype(bool)
        if r.shape[-1] != self.k or np.any(r.sum(axis=-1) != self.d):
            raise ValueError(f"reports must be rows of {self.k} bits with exactly d={self.d} ones")
        xa = np.asarray(x)
        flat = self._validate(xa.reshape(-1)).reshape(xa.shape)
        shape = np.broadcast_shapes(flat.shape, r.shape[:-1])
        idx = np.broadcast_to(flat, shape)[..., None]
        inside = np.take_along_axis(np.broadcast_to(r, shape + (self.k,)), idx, axis=-1)[..., 0]
        log_z = _log_comb(self.k - 1, self.d - 1) + self.eps
        log_z = np.logaddexp(log_z, _log_comb(self.k - 1, self.d)) if self.d < self.k else log_z
        return self.eps * inside - log_z

    def support_pair_pmf(self) -> np.ndarray:
        """2×2 law of (x0 ∈ S, x1 ∈ S) for a user with value x0 ≠ x1: (1,1) p_t(d−1)/(k−1),
        (1,0) p_t(k−d)/(k−1), (0,1) (1−p_t)d/(k−1), (0,0) (1−p_t)(k−1−d)/(k−1)."""
        pt, pf, k, d = self.p_true, self.p_false, self.k, self.d  # pf = 1 − p_t, without cancellation
        return np.array(
            [
                [pf * (k - 1 - d) / (k - 1), pf * d / (k - 1)],
                [pt * (k - d) / (k - 1), pt * (d - 1) / (k - 1)],
            ]
        )

    @property
    def epsilon_exact(self) -> float:
        """ln max Pr(S | x0)/Pr(S | x1) from the exact pair law (= ε up to rounding)."""
        return pair_law_loss(self.support_pair_pmf())

    # --- user side and aggregation ---------------------------------------------------------------
    def perturb(self, values: Any, rng: np.random.Generator) -> np.ndarray:
        """(n, k) uint8 membership matrix: v kept w.p. p_true, the rest a uniform subset of [k] \\ {v}.

        Per user: k uniform keys; the key of v is set to −1 (kept) or 2 (excluded); S = the d
        smallest keys (one argpartition per block)."""
        v = self._validate(values)
        n, k, d = v.size, self.k, self.d
        out = np.zeros((n, k), dtype=np.uint8)
        block = max(1, _BLOCK_ELEMENTS // k)
        for start in range(0, n, block):
            stop = min(n, start + block)
            m = stop - start
            keys = rng.random((m, k))
            keep = rng.random(m) < self.p_true
            keys[np.arange(m), v[start:stop]] = np.where(keep, -1.0, 2.0)
            chosen = np.argpartition(keys, d - 1, axis=1)[:, :d]
            np.put_along_axis(out[start:stop], chosen, 1, axis=1)
        return out

    def support_counts(self, reports: Any) -> np.ndarray:
        """Number of reports containing each value (length-k int64)."""
        return _column_counts(reports, self.k, "membership matrix")

    aggregate = support_counts

    def sample_support_counts(self, true_counts: Any, rng: np.random.Generator, size: int | None = None) -> np.ndarray:
        """The support counts drawn from their exact *joint* law without per-user draws, shape (k,) or
        (size, k), by the cheaper of two exact samplers (:meth:`tree_is_cheaper`):

        - :func:`_subset_jit.support_counts` (compiled) halves the alphabet: about one binomial per
          (block of values, occupied need level, likely outcome) per draw, one draw at a time;
        - :meth:`_draw_joint` visits the values in order: O(k × the occupied need levels) per draw,
          vectorised over the draws, so its cost per draw falls as draws are added.
        """
        c = _check_true_counts(true_counts, self.k)
        draws = 1 if size is None else int(size)
        if self.tree_is_cheaper(draws):
            out = _tree_sampler()(c, self.p_true, self.d, draws, rng)
        else:
            blocks = range(0, draws, _DRAWS_PER_BLOCK)
            out = np.concatenate([self._draw_joint(c, rng, min(_DRAWS_PER_BLOCK, draws - s)) for s in blocks])
        return out[0] if size is None else out

    def tree_is_cheaper(self, draws: int) -> bool:
        """Whether :meth:`sample_support_counts` halves the alphabet (draws ≤ 2k) or visits the values
        in order. Measured on the benchmark's shapes (timing/records/ss_samplers.md, CPU time): the visit in
        order is cheaper at k = 41 with 2,000 draws (2.7×), k = 16 with 50 and k = 128 with 400 (1.2×);
        the halving at k = 64 with 50 draws (1.35×), k = 256–4,096 with 50 (3–5×) and k = 512 with 400
        (1.9×). The rule depends on k and the number of draws only, so a seed gives one result."""
        return draws <= 2 * self.k

    def _draw_joint(self, c: np.ndarray, rng: np.random.Generator, draws: int) -> np.ndarray:
        """``draws`` independent draws at once (the state is vectorised over them), visiting the values
        x = 0..k−1 in order. Each user still needs j more elements from its
        pool (the unvisited elements other than its own value), j starting at d − 1 if its own value
        was kept (Binomial(c_v, p_true) users of value v) and d otherwise. A uniform subset of the pool
        takes the next pool element with probability j / |pool|, so the users at need level j who take
        element x are Binomial(users at j, j / |pool|). The users whose own value is still ahead
        (pool k − x − 1) are exchangeable, with (kept, level) histogram A; at element x the c_x users
        of value x are a uniformly random c_x of them (multivariate hypergeometric on A); they skip x,
        add their kept own values to support_x, and join the users whose own value is behind (pool
        k − x, histogram B).
        """
        k, d = self.k, self.d
        levels = np.arange(d + 1)
        kept_all = rng.binomial(c, self.p_true, size=(draws, k))
        # A: users whose own value is ahead, (draws, 2·(d+1)): columns kept × level, then not kept × level
        a = np.zeros((draws, 2 * (d + 1)), dtype=np.int64)
        a[:, d - 1] = kept_all.sum(axis=1)
        a[:, 2 * d + 1] = c.sum() - kept_all.sum(axis=1)
        a_total = int(c.sum())  # the same in every draw
        b = np.zeros((draws, d + 1), dtype=np.int64)  # users whose own value is behind
        out = np.empty((draws, k), dtype=np.int64)
        for x in range(k):
            leaving = _hypergeometric_rows(a, a_total, int(c[x]), rng)
            a -= leaving
            a_total -= int(c[x])
            support = leaving[:, : d + 1].sum(axis=1)  # value-x users who kept x
            support += _take(a[:, : d + 1], k - x - 1, levels, rng)
            support += _take(a[:, d + 1 :], k - x - 1, levels, rng)
            support += _take(b, k - x, levels, rng)
            b += leaving[:, : d + 1] + leaving[:, d + 1 :]
            out[:, x] = support
        return out


#: draws of :meth:`SS.sample_support_counts` vectorised together (bounds the state to ~draws·4d ints)
_DRAWS_PER_BLOCK = 2000


def _tree_sampler():
    """The compiled halving sampler (numba, imported on first use; it has no numpy twin, so
    ``LDPREPRO_JIT`` does not switch it)."""
    from ldprepro.domain.frequency._subset_jit import support_counts

    return support_counts


def _hypergeometric_rows(colors: np.ndarray, total: int, m: int, rng: np.random.Generator) -> np.ndarray:
    """Per row of ``colors`` (each row summing to ``total``): a multivariate hypergeometric draw of
    ``m`` items. Few items: drawn one at a time, each column with probability (its remaining count) /
    (the remaining total), vectorised over the rows; many: by the marginals method (one univariate
    hypergeometric per occupied column, vectorised over the rows). Both are exact."""
    out = np.zeros_like(colors)
    if m == 0:
        return out
    occ = np.flatnonzero(colors.any(axis=0))
    rows = colors.shape[0]
    if m * rows <= 50 * occ.size:
        left = colors[:, occ].copy()
        got = np.zeros_like(left)
        idx = np.arange(rows)
        for i in range(m):
            u = rng.integers(0, total - i, size=rows)
            col = (np.cumsum(left, axis=1) <= u[:, None]).sum(axis=1)
            left[idx, col] -= 1
            got[idx, col] += 1
        out[:, occ] = got
        return out
    remaining_total = np.full(rows, total, dtype=np.int64)
    remaining_m = np.full(rows, m, dtype=np.int64)
    for j in occ[:-1]:
        good = colors[:, j]
        remaining_total -= good
        got = rng.hypergeometric(good, remaining_total, remaining_m)
        out[:, j] = got
        remaining_m -= got
    out[:, occ[-1]] = remaining_m
    return out


def _take(rows: np.ndarray, pool: int, levels: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Users of the histograms ``rows`` (draws × need level) who take the next element of a pool of
    ``pool`` elements: Binomial(rows[:, j], j / pool) at each occupied level j; moves them down a level
    in place and returns how many took it per row."""
    occ = np.flatnonzero(rows.any(axis=0))
    if occ.size == 0:
        return np.zeros(rows.shape[0], dtype=np.int64)
    lo, hi = max(int(occ[0]), 1), int(occ[-1]) + 1  # level 0 never takes
    if lo >= hi:
        return np.zeros(rows.shape[0], dtype=np.int64)
    took = rng.binomial(rows[:, lo:hi], levels[lo:hi] / pool)
    rows[:, lo:hi] -= took
    rows[:, lo - 1 : hi - 1] += took
    return took.sum(axis=1)


def _log_comb(n: int, r: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(r + 1) - math.lgamma(n - r + 1)
