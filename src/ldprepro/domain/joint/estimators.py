"""Server-side estimators of the joint distribution of k attributes from RR-LDP reports
(docs/papers/lremh.md §4).

Inputs are the reports' bit blocks of the k attributes of S (``blocks``: a list of (N, |Ω_j|) 0/1
arrays) and the per-bit channel (q*, p*). Joints are flat float64 arrays over Ω_S in C order
(``np.ravel_multi_index(values, sizes)``).

Likelihood (§4.1): after dividing by the candidate-independent product of the "0-bit" terms,
P(T^i | ω) ∝ Π_j λ^i_j(ω_j) with λ = q*/p* on a reported 1-bit and (1-q*)/(1-p*) on a 0-bit.
p* and 1-q* are guarded by ``EPS_GUARD`` so a (nearly) noiseless channel does not divide by zero.

* :func:`em` — EM from a uniform start over all of Ω_S. Because the likelihood is a product over
  attributes, one iteration is two tensor contractions (one of them a BLAS matrix product) per
  user chunk: O(N·|Ω_S|) time and O(chunk·|Ω_S|/max|Ω_j| + |Ω_S|) memory; the N×|Ω_S| likelihood
  matrix is never stored.
* :func:`em_candidates` — the same EM restricted to an explicit candidate list (LREMH's survivors);
  it stores the N×m likelihood matrix when it fits a memory budget, else recomputes it per chunk.
* :func:`lasso` — scikit-learn's Lasso on the expected-bit design matrix (sparse, k ones per column)
  against the unbiased per-bit counts; negatives clipped, normalised.
* :func:`lremh` — LASSO start, pruning of candidates with θ⁰ ≤ τ, EM on the survivors.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

EPS_GUARD = 1e-12
STOP_RULES = ("max_abs", "max_cell", "loglik")
# float64 elements per user chunk in the EM contractions (128 MB of temporaries)
_CHUNK_ELEMENTS = 1 << 24
# cache the explicit likelihood matrix of em_candidates when it is at most this many elements (1 GB)
_CACHE_ELEMENTS = 1 << 27
# above that, cache each (candidate, user)'s count of reported 1-bits instead (one byte each, 1 GB):
# every iteration then only looks its likelihood up instead of gathering and adding k bit rows
_ONES_CACHE_ELEMENTS = 1 << 30
# from this many (candidate, user) cells on, em_candidates builds its likelihoods with the compiled
# kernels (domain/joint/_likelihood_jit.py); below it a compiled call's fixed cost outweighs them
_COMPILED_MIN_ELEMENTS = 1 << 22


@dataclass
class Estimate:
    """An estimated joint and what it cost."""

    theta: np.ndarray  # flat joint over Ω_S (C order), sums to 1
    iterations: int = 0  # EM iterations (0 for LASSO)
    candidates: int = 0  # candidates the final stage worked on
    info: dict = field(default_factory=dict)


# ------------------------------------------------------------------------------------------------
# shared pieces
# ------------------------------------------------------------------------------------------------


def lambda_values(q_star: float, p_star: float) -> tuple[float, float]:
    """(λ₁, λ₀): the likelihood factor of a candidate's bit when the report bit is 1 / 0."""
    ps = max(p_star, EPS_GUARD)
    one_minus_q = max(1.0 - q_star, EPS_GUARD)
    one_minus_p = max(1.0 - p_star, EPS_GUARD)
    return q_star / ps, one_minus_q / one_minus_p


def _lambda_blocks(blocks: Sequence[np.ndarray], q_star: float, p_star: float) -> list[np.ndarray]:
    lam1, lam0 = lambda_values(q_star, p_star)
    return [np.where(np.asarray(b).astype(bool), lam1, lam0) for b in blocks]


def lambda_blocks(blocks: Sequence[np.ndarray], q_star: float, p_star: float) -> list[np.ndarray]:
    """The λ arrays of ``blocks`` (each report bit's likelihood factor λ₁ or λ₀), for
    :func:`logliks`: a job scoring many subsets of one collection computes them once for every
    attribute instead of once per subset (the same arrays either way)."""
    return _lambda_blocks(blocks, q_star, p_star)


def _check_blocks(blocks: Sequence[np.ndarray]) -> tuple[int, list[int]]:
    if not len(blocks):
        raise ValueError("need the bit blocks of at least one attribute")
    n = {b.shape[0] for b in blocks}
    if len(n) != 1 or any(b.ndim != 2 for b in blocks):
        raise ValueError("every block must be an (N, |Ω_j|) array with the same N")
    return n.pop(), [int(b.shape[1]) for b in blocks]


def _converged(new: np.ndarray, old: np.ndarray, gap: float, stop: str) -> bool:
    if stop == "max_abs":  # spec default: max_ω |θ' − θ| ≤ gap
        return float(np.max(np.abs(new - old))) <= gap
    if stop == "max_cell":  # LoPub's code: |max θ' − max θ| ≤ gap
        return abs(float(new.max()) - float(old.max())) <= gap
    raise ValueError(f"unknown stop rule {stop!r}; choose one of {STOP_RULES}")


def _em_iterate(
    theta: np.ndarray, posterior_sum, n: int, gap: float, stop: str, max_iter: int
) -> tuple[np.ndarray, int, bool, list[float]]:
    """EM fixed-point iterations θ' = θ·G(θ)/n, where ``posterior_sum(θ)`` returns (G(θ), ℓ(θ)) with
    ℓ(θ) = Σ_i log Σ_ω θ(ω)·P(T^i|ω) up to a θ-independent constant. Stops when the change is
    ≤ ``gap`` (rule ``stop``) or after ``max_iter`` updates; returns (θ, iterations, converged,
    per-user mean log-likelihood ℓ(θ_t)/n of every iterate evaluated).

    ``stop='loglik'`` (ours, the converged-EM control): stop when the last update raised the mean
    per-user log-likelihood by ≤ ``gap`` nats, i.e. ℓ(θ_t)/n − ℓ(θ_{t−1})/n ≤ gap. ℓ(θ_t) is known
    only when θ_{t+1} is computed, so the returned θ is one update past the last checked iterate
    (EM never lowers ℓ, so this is at least as good)."""
    if stop not in STOP_RULES:
        raise ValueError(f"unknown stop rule {stop!r}; choose one of {STOP_RULES}")
    it = 0
    trace: list[float] = []
    while it < max_iter:
        G, ll = posterior_sum(theta)
        trace.append(ll / n)
        new = theta * G / n
        it += 1
        if stop == "loglik":
            done = len(trace) > 1 and trace[-1] - trace[-2] <= gap
        else:
            done = _converged(new, theta, gap, stop)
        theta = new
        if done:
            return theta, it, True, trace
    return theta, it, False, trace


def true_joint(codes: np.ndarray, sizes: Sequence[int]) -> np.ndarray:
    """Empirical joint of the k columns of ``codes`` (N, k) over Ω_S, flat C order."""
    c = np.asarray(codes, dtype=np.int64)
    idx = np.ravel_multi_index(tuple(c.T), tuple(sizes))
    return np.bincount(idx, minlength=int(np.prod(sizes))) / c.shape[0]


def avd(p: np.ndarray, q: np.ndarray) -> float:
    """Average variation distance ½ Σ_ω |P(ω) − Q(ω)| (eq. 12)."""
    return 0.5 * float(np.abs(np.asarray(p) - np.asarray(q)).sum())


def unbiased_bit_counts(blocks: Sequence[np.ndarray], q_star: float, p_star: float) -> np.ndarray:
    """t_{j,b} = (c_{j,b} − p*·N)/(q* − p*) stacked over the attributes of S (§4.3 item 2)."""
    n, _ = _check_blocks(blocks)
    c = np.concatenate([np.asarray(b).sum(axis=0, dtype=np.int64) for b in blocks]).astype(float)
    return (c - p_star * n) / (q_star - p_star)


def design_matrix(sizes: Sequence[int]) -> sp.csc_matrix:
    """(Σ|Ω_j|) × |Ω_S| 0/1 matrix, column ω = the concatenated unary encoding of ω (§4.3 item 3)."""
    sizes = tuple(int(s) for s in sizes)
    C = int(np.prod(sizes))
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    vals = np.unravel_index(np.arange(C), sizes)
    rows = np.stack([v + o for v, o in zip(vals, offsets)], axis=1).reshape(-1)  # k per column, sorted
    indptr = np.arange(0, C * len(sizes) + 1, len(sizes))
    return sp.csc_matrix((np.ones(rows.size), rows, indptr), shape=(int(sum(sizes)), C))


def memory_estimate(sizes: Sequence[int], n_users: int) -> dict[str, float]:
    """Peak bytes of each estimator for the joint of attributes with domain ``sizes`` (approximate,
    dominated by the terms below; used to state the largest feasible k)."""
    C = float(np.prod([float(s) for s in sizes]))
    k, B = len(sizes), float(sum(sizes))
    chunk_cols = C / max(sizes)
    chunk_users = max(1.0, min(float(n_users), _CHUNK_ELEMENTS / max(chunk_cols, 1.0)))
    em_bytes = 8 * (4 * C + 3 * chunk_users * chunk_cols + n_users * B)
    # sklearn copies the design matrix to float64 CSC (data + int32 indices) and keeps a few
    # coefficient-sized vectors.
    lasso_bytes = 12 * k * C * 2 + 8 * 6 * C + 8 * k * C  # + np.unravel_index in design_matrix
    # explicit candidate-list EM (the figures' default and LREMH's step 3 when nothing is pruned):
    # the candidate table (k int64 per candidate), θ/G/new, and the likelihood cache or user chunk
    explicit_bytes = 8 * k * C + 8 * 4 * C + 9 * min(float(n_users) * C, float(_CACHE_ELEMENTS) + C)
    if _CACHE_ELEMENTS < float(n_users) * C <= _ONES_CACHE_ELEMENTS:  # + the cached counts, a byte each
        explicit_bytes += float(n_users) * C
    return {
        "candidates": C,
        "em": em_bytes,
        "em_explicit": explicit_bytes,
        "lasso": lasso_bytes,
        "lremh": lasso_bytes + explicit_bytes,
    }


# ------------------------------------------------------------------------------------------------
# EM over the full candidate space (factorised)
# ------------------------------------------------------------------------------------------------


def _posterior_sum(theta: np.ndarray, lams: list[np.ndarray], sizes: list[int]) -> np.ndarray:
    """G(ω) = Σ_i Π_j λ^i_j(ω_j) / Z_i with Z_i = Σ_ω θ(ω) Π_j λ^i_j(ω_j); θ flat (C order over
    ``sizes``, whose last axis is the largest). Returns (G flat, Σ_i log Z_i); θ·G/N is the EM update
    and Σ_i log Z_i the log-likelihood of θ up to a θ-independent constant."""
    n = lams[0].shape[0]
    last = sizes[-1]
    rest = int(np.prod(sizes[:-1])) if len(sizes) > 1 else 1
    theta2 = theta.reshape(rest, last)
    G = np.zeros((rest, last))
    ll = 0.0
    chunk = max(1, min(n, _CHUNK_ELEMENTS // max(rest, last)))
    for a in range(0, n, chunk):
        b = min(n, a + chunk)
        U = np.ones((b - a, 1))
        for L in lams[:-1]:
            U = (U[:, :, None] * L[a:b, None, :]).reshape(b - a, -1)
        lk = lams[-1][a:b]
        Z = np.einsum("ij,ij->i", U @ theta2, lk)
        ll += float(np.log(Z).sum())
        U /= Z[:, None]
        G += U.T @ lk
    return G.reshape(-1), ll


def em(
    blocks: Sequence[np.ndarray],
    q_star: float,
    p_star: float,
    *,
    gap: float = 1e-3,
    stop: str = "max_abs",
    max_iter: int = 10_000,
    theta0: np.ndarray | None = None,
) -> Estimate:
    """EM over all of Ω_S (§4.2): uniform start (or ``theta0``), stop when the change ≤ ``gap``."""
    n, sizes = _check_blocks(blocks)
    k = len(sizes)
    C = int(np.prod(sizes))
    # work with the largest attribute last (smallest temporaries); map back at the end
    perm = sorted(range(k), key=lambda j: (sizes[j], j))
    wsizes = [sizes[j] for j in perm]
    lams = _lambda_blocks([blocks[j] for j in perm], q_star, p_star)
    if theta0 is None:
        theta = np.full(C, 1.0 / C)
    else:
        theta = np.asarray(theta0, dtype=float).reshape(sizes).transpose(perm).reshape(-1).copy()
    theta, it, converged, trace = _em_iterate(
        theta, lambda th: _posterior_sum(th, lams, wsizes), n, gap, stop, max_iter
    )
    inv = np.argsort(perm)
    theta = theta.reshape(wsizes).transpose(inv).reshape(-1)
    return Estimate(theta / theta.sum(), it, C, {"converged": converged, "loglik_trace": trace})


def loglik(blocks: Sequence[np.ndarray], q_star: float, p_star: float, theta: np.ndarray) -> float:
    """Log-likelihood Σ_i log Σ_ω θ(ω)·P(T^i|ω) of the joint ``theta`` (flat, C order over the
    blocks' sizes) up to the θ-independent constant dropped in §4.1: the objective EM climbs, so
    estimates of the same reports compare on it (higher = fitted better)."""
    return logliks(blocks, q_star, p_star, [theta])[0]


def _row_outer(U: np.ndarray, L: np.ndarray) -> np.ndarray:
    """(n, c·s) array W[i, c·s + v] = U[i, c]·L[i, v]: ``(U[:, :, None] * L[:, None, :]).reshape(n, -1)``
    (:func:`_posterior_sum`'s step), the same single product per element and so the same values,
    computed faster. numpy's broadcast runs its inner loop over the s values of an attribute (2 on
    NLTCS), so short loops dominate: for s ≤ 3 one multiply per value over all of U (inner loop c
    long), else einsum's outer-product loop (measured at N = 4096 users: 3-6x and 1.5-2x faster)."""
    n, c = U.shape
    s = L.shape[1]
    if s > 3:
        return np.einsum("ic,iv->icv", U, L).reshape(n, c * s)
    W = np.empty((n, c, s))
    for v in range(s):
        np.multiply(U, L[:, v, None], out=W[:, :, v])
    return W.reshape(n, c * s)


def logliks(
    blocks: Sequence[np.ndarray],
    q_star: float,
    p_star: float,
    thetas: Sequence[np.ndarray],
    lams: Sequence[np.ndarray] | None = None,
) -> list[float]:
    """:func:`loglik` of each joint in ``thetas`` on the same reports, in one pass over the users
    (``lams``: the blocks' :func:`lambda_blocks`, if already computed).

    Why not :func:`_posterior_sum`: scoring the estimates of one subset (the jobs' ``loglik`` rows,
    papers/lremh/experiment.py) spent most of the LREMH jobs' untimed CPU there. Its per-chunk
    products U_i(·) = Π_{j<k} λ^i_j(·) depend on the reports only, so they are built once per chunk
    for every joint here (by :func:`_row_outer`, faster, the same values), and its second half (the
    posteriors' sum G, the EM update) is not needed. What is computed is ``_posterior_sum``'s
    log-likelihood operation for operation (the same chunks, products, BLAS product, einsum and
    sums, in the same order), so each value is bit for bit the one ``_posterior_sum(θ/Σθ, …)[1]``
    gives (tests/test_joint.py); keep the two in step."""
    n, sizes = _check_blocks(blocks)
    perm = sorted(range(len(sizes)), key=lambda j: (sizes[j], j))
    wsizes = [sizes[j] for j in perm]
    if lams is None:
        lams = _lambda_blocks([blocks[j] for j in perm], q_star, p_star)
    else:
        if [lam.shape for lam in lams] != [b.shape for b in blocks]:
            raise ValueError("lams must be the blocks' lambda arrays, one per block, of the same shapes")
        lams = [lams[j] for j in perm]
    last = wsizes[-1]
    rest = int(np.prod(wsizes[:-1])) if len(wsizes) > 1 else 1
    ths = []
    for theta in thetas:
        th = np.asarray(theta, dtype=float).reshape(sizes).transpose(perm).reshape(-1)
        ths.append((th / th.sum()).reshape(rest, last))
    lls = [0.0] * len(ths)
    chunk = max(1, min(n, _CHUNK_ELEMENTS // max(rest, last)))
    for a in range(0, n, chunk):
        b = min(n, a + chunk)
        U = np.ones((b - a, 1))
        for L in lams[:-1]:
            U = _row_outer(U, L[a:b])
        lk = lams[-1][a:b]
        for t, theta2 in enumerate(ths):
            Z = np.einsum("ij,ij->i", U @ theta2, lk)
            lls[t] += float(np.log(Z).sum())
    return lls


# ------------------------------------------------------------------------------------------------
# EM over an explicit candidate list
# ------------------------------------------------------------------------------------------------


def em_candidates(
    blocks: Sequence[np.ndarray],
    q_star: float,
    p_star: float,
    cand_values: np.ndarray,
    theta0: np.ndarray,
    *,
    gap: float = 1e-3,
    stop: str = "max_abs",
    max_iter: int = 10_000,
) -> Estimate:
    """EM on the candidates ``cand_values`` (m, k) only (LREMH step 3), starting from ``theta0`` (m,).
    Cells outside the list are 0 and stay 0."""
    n, sizes = _check_blocks(blocks)
    cand_values = np.asarray(cand_values, dtype=np.int64).reshape(-1, len(sizes))
    m = cand_values.shape[0]
    k = len(sizes)
    lam1, lam0 = lambda_values(q_star, p_star)
    # Π_j λ_j(ω_j) depends only on how many of the candidate's k bits were reported as 1
    table = lam0 ** (k - np.arange(k + 1)) * lam1 ** np.arange(k + 1)
    bad = (cand_values < 0) | (cand_values >= np.asarray(sizes))
    if bad.any():
        c, j = np.argwhere(bad)[0]
        raise ValueError(
            f"candidate {int(c)} has value {int(cand_values[c, j])} for attribute {int(j)}, "
            f"outside its domain 0..{sizes[j] - 1}: pass candidates of the blocks' attributes"
        )
    # the k attributes' bit rows stacked, users along the last axis (a candidate's bit is a row)
    bits = np.ascontiguousarray(np.concatenate([np.asarray(b, dtype=np.uint8).T for b in blocks]))
    rows = np.ascontiguousarray(cand_values + np.concatenate([[0], np.cumsum(sizes)[:-1]]))
    # large matrices: compiled kernels, the same values without numpy's temporaries (an index array
    # the matrix's size); small ones: numpy, whose temporaries are small and calls cheaper
    compiled = n * m >= _COMPILED_MIN_ELEMENTS
    if compiled:
        from ldprepro.domain.joint import _likelihood_jit as kernels

    def ones_of(a: int, b: int) -> np.ndarray:
        """(m, b − a) counts of the candidates' bits users a..b reported as 1."""
        if not compiled:
            ones = bits[rows[:, 0], a:b]
            for j in range(1, k):
                ones += bits[rows[:, j], a:b]
            return ones
        ones = np.empty((m, b - a), np.uint8)
        kernels.ones_counts(bits, rows, a, b, ones)
        return ones

    def likelihood(a: int, b: int) -> np.ndarray:
        """(m, b − a) likelihoods table[counts] of the candidates for users a..b (the same values
        whether the counts were cached or not, so the iterations do the same arithmetic either way)."""
        if not compiled:
            return table[ones_all[:, a:b] if ones_all is not None else ones_of(a, b)]
        out = np.empty((m, b - a))
        if ones_all is not None:
            kernels.lookup(table, ones_all[:, a:b], out)
        else:
            kernels.likelihoods(bits, rows, table, a, b, out)
        return out

    ones_all = None
    cached = likelihood(0, n) if n * m <= _CACHE_ELEMENTS else None
    chunk = n if cached is not None else max(1, _CHUNK_ELEMENTS // max(m, 1))
    if cached is None and n * m <= _ONES_CACHE_ELEMENTS:
        ones_all = ones_of(0, n)

    def posterior_sum(theta: np.ndarray) -> np.ndarray:
        G = np.zeros(m)
        ll = 0.0
        for a in range(0, n, chunk):
            L = cached if cached is not None else likelihood(a, min(n, a + chunk))
            Z = theta @ L
            ll += float(np.log(Z).sum())
            G += L @ (1.0 / Z)
        return G, ll

    theta = np.asarray(theta0, dtype=float).copy()
    theta /= theta.sum()
    theta, it, converged, trace = _em_iterate(theta, posterior_sum, n, gap, stop, max_iter)
    return Estimate(theta / theta.sum(), it, m, {"converged": converged, "loglik_trace": trace})


# ------------------------------------------------------------------------------------------------
# LASSO and LREMH
# ------------------------------------------------------------------------------------------------


def lasso(
    blocks: Sequence[np.ndarray],
    q_star: float,
    p_star: float,
    *,
    alpha: float = 1e-4,
    mode: str = "frequency",
    max_iter: int = 1000,
    tol: float = 1e-4,
) -> Estimate:
    """LASSO estimator (§4.3). ``mode='frequency'`` (spec default): targets t/N, no intercept,
    positive coefficients. ``mode='lopub'``: count targets t, intercept, unconstrained sign (then
    α = 0.5 is LoPub's value). Negative coefficients → 0, then normalised; all-zero → uniform."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import Lasso

    n, sizes = _check_blocks(blocks)
    C = int(np.prod(sizes))
    t = unbiased_bit_counts(blocks, q_star, p_star)
    M = design_matrix(sizes)
    if mode == "frequency":
        y, model = t / n, Lasso(alpha=alpha, fit_intercept=False, positive=True, max_iter=max_iter, tol=tol)
    elif mode == "lopub":
        y, model = t, Lasso(alpha=alpha, fit_intercept=True, positive=False, max_iter=max_iter, tol=tol)
    else:
        raise ValueError(f"unknown LASSO mode {mode!r}; choose 'frequency' or 'lopub'")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(M, y)
    beta = np.clip(np.asarray(model.coef_, dtype=float), 0.0, None)
    s = beta.sum()
    theta = beta / s if s > 0 else np.full(C, 1.0 / C)
    return Estimate(
        theta,
        0,
        C,
        {
            "lasso_iter": int(np.max(model.n_iter_)),
            "uniform_fallback": not s > 0,
            "support": int(np.count_nonzero(theta)),
        },
    )


def lremh(
    blocks: Sequence[np.ndarray],
    q_star: float,
    p_star: float,
    *,
    tau: float = 0.0,
    start: str = "lasso",
    gap: float = 1e-3,
    stop: str = "max_abs",
    max_iter: int = 10_000,
    lasso_kw: dict | None = None,
) -> Estimate:
    """LREMH (Algorithm 2): LASSO θ⁰; keep Ω' = {ω: θ⁰(ω) > τ}; EM on Ω' from θ⁰ restricted and
    renormalised (``start='uniform'``: from uniform over Ω'). τ = -inf disables pruning."""
    _, sizes = _check_blocks(blocks)
    C = int(np.prod(sizes))
    t0 = time.process_time()
    init = lasso(blocks, q_star, p_star, **(lasso_kw or {}))
    t_lasso = time.process_time() - t0
    keep = np.arange(C) if tau == -math.inf else np.flatnonzero(init.theta > tau)
    if keep.size == 0:  # nothing survives: fall back to every candidate
        keep = np.arange(C)
    cand = np.stack(np.unravel_index(keep, sizes), axis=1)
    th0 = init.theta[keep] if start == "lasso" else np.ones(keep.size)
    if start not in ("lasso", "uniform"):
        raise ValueError(f"unknown LREMH start {start!r}")
    if not th0.sum() > 0:
        th0 = np.ones(keep.size)
    est = em_candidates(blocks, q_star, p_star, cand, th0, gap=gap, stop=stop, max_iter=max_iter)
    theta = np.zeros(C)
    theta[keep] = est.theta
    info = {
        **est.info,
        "lasso_seconds": t_lasso,
        "kept": int(keep.size),
        "lasso_support": init.info["support"],
        "pruned": np.setdiff1d(np.arange(C), keep, assume_unique=True),
    }
    return Estimate(theta, est.iterations, int(keep.size), info)
