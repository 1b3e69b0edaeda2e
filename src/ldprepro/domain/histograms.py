"""Histogram publication with bit sampling (paper 001: BSHP / WSHP; spec
docs/papers/bshp.md).

Several consumers ask for equal-width histograms of one numeric attribute (3-, 5-, 7-fold in the
paper). The curator merges every query's checkpoints into one **integrated partition**
I_1..I_K (§2; K = 13 for 3/5/7), every contributor one-hot encodes her interval and perturbs it
**once** with Basic RAPPOR at the full budget ε (= symmetric unary encoding with ε/2 per bit,
``ldprepro.domain.frequency.SUE``), and the curator then collects bit j from a Bernoulli(r_j) sample of
the contributors (§5.1). Consumer i's bin l is the sum of its integrated intervals.

* :class:`BitSampling` — BSHP (r_j = r) and WSHP (r_j from :func:`wshp_ratios`): per-user
  reports (:meth:`~BitSampling.perturb`), the curator's aggregates (:meth:`~BitSampling.aggregate`),
  an exact sufficient-statistic sampler of those aggregates (:meth:`~BitSampling.sample_aggregates`),
  the unbiased estimator of Theorem 5 (or the ratio variant of §5.2), Lemma 6's variance and the
  privacy bookkeeping (§5.4).
* :class:`SplitBaseline` — the paper's baseline (§4): every consumer is answered separately with
  ε/m, all bits uploaded.
* :func:`integrated_partition`, :func:`interval_weights`, :func:`waterfill`, :func:`wshp_ratios`.

**Privacy.** The guarantee a contributor gets is ε, not the ε' = ln(1 + r(e^ε − 1)) of the paper's
Theorem 7: the curator sees which bits were sampled, and with probability r_a·r_b both bits in
which two inputs differ are uploaded, where the likelihood ratio is (p/q)² = e^ε
(:meth:`BitSampling.privacy_loss_exact` enumerates it). f is always calibrated from the nominal ε.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ldprepro.domain.frequency import SUE

__all__ = [
    "Partition",
    "integrated_partition",
    "rappor_f",
    "paper_claimed_epsilon",
    "interval_weights",
    "waterfill",
    "wshp_ratios",
    "BitSampling",
    "SplitBaseline",
    "ESTIMATORS",
]

ESTIMATORS = ("horvitz_thompson", "ratio")


# --------------------------------------------------------------------------------------------
# the data plan (§2)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Partition:
    """The integrated partition of [v_min, v_max] for equal-width queries with ``folds`` bins.

    ``cuts`` are the K + 1 checkpoints in units of L = v_max − v_min (0 … 1); ``bins[i][l]`` the
    integrated-interval indices forming bin l of query i. Intervals are left-closed and
    right-open, the last one closed.
    """

    folds: tuple[int, ...]
    cuts: np.ndarray
    bins: tuple[tuple[tuple[int, ...], ...], ...]

    @property
    def K(self) -> int:
        return len(self.cuts) - 1

    @property
    def widths(self) -> np.ndarray:
        """|I_j| / L."""
        return np.diff(self.cuts)

    def interval_of(self, u: Any) -> np.ndarray:
        """Integrated-interval index of positions ``u`` = (x − v_min)/L in [0, 1]."""
        u = np.asarray(u, dtype=float)
        if u.size and (np.any(~np.isfinite(u)) or u.min() < -1e-12 or u.max() > 1 + 1e-12):
            bad = u[np.argmax(~np.isfinite(u) | (u < -1e-12) | (u > 1 + 1e-12))]
            raise ValueError(f"value at relative position {bad!r} lies outside [v_min, v_max]")
        return np.searchsorted(self.cuts[1:-1], u, side="right").astype(np.int64)

    def bin_matrix(self, i: int) -> np.ndarray:
        """(m_i, K) 0/1 matrix: row l has ones at the integrated intervals of bin l of query i."""
        m = np.zeros((self.folds[i], self.K))
        for l, members in enumerate(self.bins[i]):
            m[l, list(members)] = 1.0
        return m

    def query_answers(self, interval_values: Any) -> list[np.ndarray]:
        """Each consumer's histogram from integrated-interval values (..., K): list of (..., m_i)."""
        v = np.asarray(interval_values, dtype=float)
        return [v @ self.bin_matrix(i).T for i in range(len(self.folds))]


def integrated_partition(folds: Sequence[int], tol: float = 1e-9) -> Partition:
    """Union of the checkpoints j/m_i of every query, sorted and de-duplicated within ``tol``
    (in units of L), and the bin → interval maps (§2). Cost O(M log M), M = Σ m_i."""
    folds = tuple(int(m) for m in folds)
    if not folds or any(m < 1 for m in folds):
        raise ValueError(f"folds must be a non-empty list of positive integers, got {list(folds)!r}")
    points = np.sort(np.concatenate([np.arange(m + 1) / m for m in folds]))
    cuts = [points[0]]
    for p in points[1:]:
        if p - cuts[-1] > tol:
            cuts.append(p)
    cuts = np.array(cuts)
    cuts[0], cuts[-1] = 0.0, 1.0
    bins = []
    for m in folds:
        # interval j belongs to the bin containing its midpoint
        mids = (cuts[:-1] + cuts[1:]) / 2
        owner = np.minimum((mids * m).astype(int), m - 1)
        bins.append(tuple(tuple(int(j) for j in np.flatnonzero(owner == l)) for l in range(m)))
    return Partition(folds, cuts, tuple(bins))


# --------------------------------------------------------------------------------------------
# privacy bookkeeping (§3, §5.4)
# --------------------------------------------------------------------------------------------


def rappor_f(eps: float) -> float:
    """Basic RAPPOR's f for budget ε (Theorem 2): f = 2/(e^{ε/2} + 1), so p = 1 − f/2, q = f/2."""
    return 2.0 / (math.exp(float(eps) / 2.0) + 1.0)


def paper_claimed_epsilon(eps: float, r: float) -> float:
    """The paper's Theorem 7: ε' = ln(1 + r(e^ε − 1)). Reported only as "the paper's claim"; the
    guarantee a contributor actually gets is ε (see :meth:`BitSampling.privacy_loss_exact`)."""
    return float(np.log1p(float(r) * np.expm1(float(eps))))


# --------------------------------------------------------------------------------------------
# WSHP's allocation (§6)
# --------------------------------------------------------------------------------------------


def interval_weights(partition: Partition, weights: Any = "equal") -> np.ndarray:
    """W_j = Σ_i w_{i, l(i, j)} (§6.1). ``weights``: "equal" (every w = 1) or one list of
    positive bin weights per query."""
    if isinstance(weights, str):
        if weights != "equal":
            raise ValueError(f"WSHP weights must be 'equal' or one list per query, got {weights!r}")
        weights = [[1.0] * m for m in partition.folds]
    if len(weights) != len(partition.folds):
        raise ValueError(f"WSHP weights: {len(weights)} lists for {len(partition.folds)} queries {partition.folds}")
    W = np.zeros(partition.K)
    for i, (m, w) in enumerate(zip(partition.folds, weights)):
        w = np.asarray(w, dtype=float)
        if w.shape != (m,) or np.any(~np.isfinite(w)) or np.any(w <= 0):
            raise ValueError(f"WSHP weights of the {m}-fold query must be {m} positive numbers, got {list(w)!r}")
        W += partition.bin_matrix(i).T @ w
    return W


def waterfill(c: Any, total: float) -> np.ndarray:
    """r_j = min(1, κ·√c_j) with κ such that Σ_j r_j = ``total`` (§6.2): the minimiser of
    Σ_j c_j / r_j under Σ_j r_j = total and r_j ≤ 1. Solved exactly: cap the largest ratios at 1
    and rescale the rest until no free ratio exceeds 1 (κ only grows, so nothing is uncapped)."""
    s = np.sqrt(np.asarray(c, dtype=float))
    if s.ndim != 1 or np.any(~np.isfinite(s)) or np.any(s <= 0):
        raise ValueError(f"water-filling needs positive finite costs, got {c!r}")
    total = float(total)
    if not 0 < total <= s.size * (1 + 1e-12):
        raise ValueError(f"total sampling ratio {total!r} must lie in (0, K = {s.size}]")
    capped = np.zeros(s.size, dtype=bool)
    while True:
        kappa = (total - capped.sum()) / s[~capped].sum() if (~capped).any() else 0.0
        r = np.where(capped, 1.0, kappa * s)
        over = ~capped & (r > 1.0)
        if not over.any():
            return r
        capped |= over


def wshp_ratios(partition: Partition, r_bar: float, eps: float, weights: Any = "equal") -> np.ndarray:
    """WSHP's per-interval sampling ratios (§6.2) under the paper's uniform-data assumption:
    c_j = W_j·((|I_j|/L)·p + (1 − |I_j|/L)·q), r_j ∝ √c_j, capped at 1, Σ_j r_j = K·r̄."""
    r_bar = float(r_bar)
    if not 0 < r_bar <= 1:
        raise ValueError(f"sampling ratio r must lie in (0, 1], got {r_bar!r}")
    oracle = SUE(partition.K, eps)
    w = partition.widths
    c = interval_weights(partition, weights) * (w * oracle.p_true + (1 - w) * oracle.p_other)
    return waterfill(c, partition.K * r_bar)


# --------------------------------------------------------------------------------------------
# BSHP / WSHP
# --------------------------------------------------------------------------------------------


class BitSampling:
    """Bit-sampling collection over the integrated partition: Basic RAPPOR once at ε (SUE), then
    bit j uploaded by a Bernoulli(r_j) sample of contributors. ``ratios``: a scalar r (BSHP) or
    K per-interval ratios (WSHP).

    Curator's aggregates per interval: C_j (uploaded 1-bits) and N_j (uploaded bits). Estimator
    (``horvitz_thompson``, Theorem 5): n̂_j = (C_j/r_j − n·q)/(p − q); ``ratio``: divide by the
    realised N_j instead, n̂_j = n·(C_j/N_j − q)/(p − q) (asymptotically unbiased, §5.2).
    """

    def __init__(self, partition: Partition, eps: float, ratios: Any, estimator: str = "horvitz_thompson"):
        self.partition = partition
        self.eps = float(eps)
        self.oracle = SUE(partition.K, self.eps)
        r = np.broadcast_to(np.asarray(ratios, dtype=float), (partition.K,)).copy()
        if np.any(~np.isfinite(r)) or np.any(r <= 0) or np.any(r > 1):
            raise ValueError(f"sampling ratios must lie in (0, 1], got {r.tolist()!r}")
        self.ratios = r
        if estimator not in ESTIMATORS:
            raise ValueError(f"unknown estimator {estimator!r}; choose one of {ESTIMATORS}")
        self.estimator = estimator

    @property
    def p(self) -> float:
        return self.oracle.p_true

    @property
    def q(self) -> float:
        return self.oracle.p_other

    @property
    def f(self) -> float:
        return rappor_f(self.eps)

    # --- per-user path ------------------------------------------------------------------------
    def perturb(self, intervals: Any, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Every contributor's perturbed vector B' (n, K) uint8 and her sampling mask S (n, K) bool
        (all K request rounds at once). The curator receives B'[u, j] exactly where S[u, j]."""
        bits = self.oracle.perturb(intervals, rng)
        mask = rng.random(bits.shape) < self.ratios
        return bits, mask

    @staticmethod
    def aggregate(bits: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(C_j, N_j): uploaded 1-bits and uploaded bits per interval."""
        m = np.asarray(mask, dtype=bool)
        return (np.asarray(bits, dtype=bool) & m).sum(axis=0, dtype=np.int64), m.sum(axis=0, dtype=np.int64)

    # --- sufficient statistics ------------------------------------------------------------------
    def sample_aggregates(self, true_counts: Any, rng: np.random.Generator, size: int | None = None):
        """(C, N) drawn from their exact joint law: the sampled members S1_j ~ Bin(n_j, r_j) and
        non-members S0_j ~ Bin(n − n_j, r_j), then C_j = Bin(S1_j, p) + Bin(S0_j, q), N_j = S1_j + S0_j
        (independent over j). Shapes (K,) or (size, K)."""
        c = np.asarray(true_counts, dtype=np.int64)
        if c.shape != (self.partition.K,) or np.any(c < 0):
            raise ValueError(f"true counts must be {self.partition.K} non-negative integers, got {c!r}")
        n = int(c.sum())
        shape = None if size is None else (int(size), self.partition.K)
        s1 = rng.binomial(c, self.ratios, size=shape)
        s0 = rng.binomial(n - c, self.ratios, size=shape)
        C = rng.binomial(s1, self.p) + rng.binomial(s0, self.q)
        return C, s1 + s0

    # --- estimation -----------------------------------------------------------------------------
    def estimate_counts(self, C: Any, N: Any, n: int) -> np.ndarray:
        """n̂_j (shape of C): the Theorem 5 estimator (default) or the ratio variant."""
        C = np.asarray(C, dtype=float)
        if self.estimator == "horvitz_thompson":
            return self.oracle.estimate_counts(C / self.ratios, n)
        N = np.asarray(N, dtype=float)
        with np.errstate(invalid="ignore", divide="ignore"):
            scaled = np.where(N > 0, C * n / N, n * self.q)  # no sampled bit: estimate from the prior q
        return self.oracle.estimate_counts(scaled, n)

    def variance(self, true_counts: Any) -> np.ndarray:
        """Lemma 6: Var(n̂_j) = [n_j r p (1 − r p) + (n − n_j) r q (1 − r q)] / (r² (p − q)²)
        (exact for the Theorem 5 estimator)."""
        c = np.asarray(true_counts, dtype=float)
        n = c.sum()
        r, p, q = self.ratios, self.p, self.q
        return (c * r * p * (1 - r * p) + (n - c) * r * q * (1 - r * q)) / (r**2 * (p - q) ** 2)

    def query_variances(self, true_counts: Any) -> list[np.ndarray]:
        """Var(ĥ_{i,l}) = Σ_{j ∈ bins[i][l]} Var(n̂_j) (independent intervals)."""
        return self.partition.query_answers(self.variance(true_counts))

    @property
    def expected_bits_per_user(self) -> float:
        return float(self.ratios.sum())

    # --- privacy --------------------------------------------------------------------------------
    @property
    def guarantee(self) -> float:
        """The LDP guarantee a contributor gets: ε (§5.4), never the paper's ε'."""
        return self.eps

    @property
    def paper_claimed_epsilon(self) -> float:
        """Theorem 7's ε' = ln(1 + r(e^ε − 1)); for WSHP r = max_j r_j (ε' grows with r, so this is
        the weakest, most charitable reading of the claim). Shown only as "the paper's claim"."""
        return paper_claimed_epsilon(self.eps, float(self.ratios.max()))

    def privacy_loss_exact(self) -> float:
        """ln of the worst-case likelihood ratio of what the curator sees (which bits were uploaded
        and their values) between two inputs in intervals a ≠ b, by enumeration. Only bits a and b
        differ in law; each is "not sampled" (prob 1 − r), "uploaded 0" or "uploaded 1"."""
        p, q, r = self.p, self.q, self.ratios
        # law of one bit's output (not sampled, uploaded 0, uploaded 1) given its true bit 1 / 0
        law1 = np.stack([1 - r, r * (1 - p), r * p], axis=1)
        law0 = np.stack([1 - r, r * (1 - q), r * q], axis=1)
        worst = 0.0
        for a in range(self.partition.K):
            for b in range(self.partition.K):
                if a != b:
                    ratio = np.outer(law1[a], law0[b]) / np.outer(law0[a], law1[b])
                    worst = max(worst, float(np.log(ratio).max()))
        return worst


class SplitBaseline:
    """The paper's baseline (§4): consumer i is answered separately, the contributor one-hot encodes
    her bin among m_i and perturbs it with Basic RAPPOR (SUE) at ε/m; every bit is uploaded."""

    def __init__(self, partition: Partition, eps: float):
        self.partition = partition
        self.eps = float(eps)
        m = len(partition.folds)
        self.oracles = [SUE(k, self.eps / m) if k >= 2 else None for k in partition.folds]
        if any(o is None for o in self.oracles):
            raise ValueError("every query needs at least 2 bins")
        self._owner = [np.argmax(partition.bin_matrix(i), axis=0) for i in range(m)]

    @property
    def bits_per_user(self) -> int:
        return int(sum(self.partition.folds))

    @property
    def guarantee(self) -> float:
        return self.eps  # sequential composition of m reports at ε/m (Theorem 4)

    def bins_of(self, intervals: Any) -> list[np.ndarray]:
        iv = np.asarray(intervals, dtype=np.int64)
        return [owner[iv] for owner in self._owner]

    def perturb(self, intervals: Any, rng: np.random.Generator) -> list[np.ndarray]:
        """Per-user reports: one (n, m_i) uint8 bit matrix per consumer."""
        return [o.perturb(b, rng) for o, b in zip(self.oracles, self.bins_of(intervals))]

    def aggregate(self, reports: list[np.ndarray]) -> list[np.ndarray]:
        return [o.support_counts(r) for o, r in zip(self.oracles, reports)]

    def sample_aggregates(self, true_counts: Any, rng: np.random.Generator) -> list[np.ndarray]:
        """Exact support counts per consumer from the true interval counts (sufficient statistics)."""
        truth = self.partition.query_answers(np.asarray(true_counts, dtype=np.int64))
        return [o.sample_support_counts(np.rint(h).astype(np.int64), rng) for o, h in zip(self.oracles, truth)]

    def estimate_counts(self, support: list[np.ndarray], n: int) -> list[np.ndarray]:
        return [o.estimate_counts(c, n) for o, c in zip(self.oracles, support)]

    def query_variances(self, true_counts: Any) -> list[np.ndarray]:
        truth = self.partition.query_answers(np.asarray(true_counts, dtype=float))
        n = float(np.sum(true_counts))
        return [o.count_variance(n, h) for o, h in zip(self.oracles, truth)]
