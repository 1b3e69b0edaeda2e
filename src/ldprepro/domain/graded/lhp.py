"""LHP, the user side of HierA (Algorithm 3; docs/papers/hiera.md §3, §6.3): :class:`LHP` with the exact
joint pmf Pr(t*, v* | v), :func:`lhp_worst_case_log_ratio` / :func:`lhp_privacy_audit` (LHP violates the
claimed bound), the reports' sufficient statistics :func:`lhp_report_counts` and their exact sampler
(:func:`lhp_sample_counts`, :func:`sort_by_level`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ldprepro.domain.binary_sum import BLOCKS_FROM, BinaryCount
from ldprepro.domain.frequency import grr_perturb
from ldprepro.domain.graded.levels import GradedLevels, _check_level, _check_levels, _check_v


class LHP:
    """Level-and-value hierarchical perturbation, user side (Algorithm 3; docs/papers/hiera.md §3), exactly as printed:

    1. t = level(v);
    2. t* = GRR(t) at the *true* level's budget ε_t (keep e^{ε_t}/(e^{ε_t}+k-1));
    3. discretise (Harmony rule): v* = +1 w.p. (1+v)/2, else -1;
    4. keep v* w.p. p_{t*} = e^{ε_{t*}}/(e^{ε_{t*}}+1) — the *perturbed* level's budget — else flip;
    5. send (t*, v*) (no calibration on the user side).

    Exact joint pmf (docs/papers/hiera.md §6.3): Pr(t*, v* = s | v) = G_{t(v)}(t*)·[(1+sv)/2·p_{t*} + (1-sv)/2·(1-p_{t*})]
    = G_{t(v)}(t*)·(1 + s·v·(2p_{t*}-1))/2. The mechanism does NOT meet the paper's Theorem 2 bound; see
    :func:`lhp_privacy_audit`. It is implemented as printed, not "fixed".
    """

    def __init__(self, levels: GradedLevels):
        self.levels = _check_levels(levels)

    @property
    def k(self) -> int:
        return self.levels.k

    def perturb(self, v: Any, rng: np.random.Generator, level: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """Returns (t_star int64 level indices, v_star int8 ±1), each of v's shape (1-d).

        ``level`` (0-based indices, v's shape) replaces step 1's t = level(v) when the privacy level
        is set by something other than the value, as for a gradient component, whose level is that of
        its attribute (docs/papers/hiera.md §7)."""
        va = _check_v(v).reshape(-1)
        lv = self.levels.level_of(va) if level is None else _check_level(level, va, self.k).reshape(-1)
        k = self.k
        if k > 1:
            t_star = grr_perturb(lv, k, self.levels.eps[lv], rng)
        else:
            t_star = lv
        disc = rng.random(va.shape[0]) < (1.0 + va) / 2.0
        keep = rng.random(va.shape[0]) < self.levels.keep_probs[t_star]
        plus = disc == keep  # kept +1, or flipped -1
        return t_star, np.where(plus, 1, -1).astype(np.int8)

    def pmf(self, t_star: Any, s: Any, v: Any) -> np.ndarray:
        """Pr(t*, v* = s | v) (docs/papers/hiera.md §6.3), broadcasting over t_star (level index), s (±1) and v."""
        va = _check_v(v)
        t = np.asarray(t_star)
        sa = np.asarray(s)
        if np.any((sa != 1) & (sa != -1)):
            raise ValueError(f"v* must be +1 or -1, got {sa[(sa != 1) & (sa != -1)].flat[0].item()!r}")
        if np.any((t < 0) | (t >= self.k)):
            raise ValueError(
                f"level index t* must lie in 0..{self.k - 1}, got {t[(t < 0) | (t >= self.k)].flat[0].item()!r}"
            )
        g = self.levels.level_channel[self.levels.level_of(va), t]
        c = 2.0 * self.levels.keep_probs[t] - 1.0
        return g * (1.0 + sa * va * c) / 2.0

    def pmf_table(self, v: Any) -> np.ndarray:
        """All outputs at once: shape v.shape + (k, 2); [..., t, 0] is v* = -1, [..., t, 1] is v* = +1."""
        va = _check_v(v)
        g = self.levels.level_channel[self.levels.level_of(va)]  # (..., k)
        c = 2.0 * self.levels.keep_probs - 1.0  # (k,)
        sv = va[..., None] * c
        return np.stack([g * (1.0 - sv) / 2.0, g * (1.0 + sv) / 2.0], axis=-1)


def lhp_worst_case_log_ratio(levels: GradedLevels) -> np.ndarray:
    """Exact worst-case privacy loss of LHP between levels (docs/papers/hiera.md §6.3):

        L[i, j] = sup_{x ∈ D_i, x' ∈ D_j} max_{(t*, s)} ln Pr(t*, s | x) / Pr(t*, s | x').

    Why interval endpoints suffice: for a fixed output o = (t*, s) and x ranging over one level D_i, the
    level factor G_i(t*) is constant and the value factor (1 + s·x·(2p_{t*}-1))/2 is affine in x, so
    Pr(o | x) is affine (and positive) in x on D_i. The ratio Pr(o|x)/Pr(o|x') is a function of x over
    a function of x' with x and x' varying independently, so its supremum is (max over x of the
    numerator)/(min over x' of the denominator), and an affine function attains its max and min over an
    interval at the endpoints. For half-open intervals the value at the open end is a supremum (a limit),
    which is the right notion for the privacy loss. Diagonal entries (i = j) compare two values of the
    same level. Rows: level of x; columns: level of x' (0-based indices).
    """
    levels = _check_levels(levels)
    k = levels.k
    g = levels.level_channel  # (k, k) [l, t]
    c = 2.0 * levels.keep_probs - 1.0  # (k,) per t*
    ends = np.asarray([levels.interval(t) for t in range(k)])  # (k, 2)
    # value factor for each level l, endpoint e, output t*, sign s: (1 + s x c_t)/2
    s = np.array([-1.0, 1.0])
    val = (1.0 + ends[:, :, None, None] * c[None, None, :, None] * s[None, None, None, :]) / 2.0  # (l, e, t, s)
    prob = g[:, None, :, None] * val  # (l, e, t, s)
    pmax = prob.max(axis=1)  # (l, t, s)
    pmin = prob.min(axis=1)
    ratio = np.log(pmax[:, None]) - np.log(pmin[None, :])  # (i, j, t, s)
    return ratio.max(axis=(2, 3))


def lhp_privacy_audit(levels: GradedLevels) -> dict[str, Any]:
    """Audit of LHP against Theorem 2 under both readings of graded LDP (docs/papers/hiera.md §1, §6.3, §9 item 6).

    Returns a dict with ``L`` (worst-case log-ratio matrix), ``claimed_max`` (r = max(ε_i, ε_j), the
    paper's proofs), ``claimed_min`` (r = min(ε_i, ε_j), MinID-LDP), boolean ``violates_max`` /
    ``violates_min`` matrices, ``worst`` (max of L) and the worst excess over each claim.
    """
    levels = _check_levels(levels)
    L = lhp_worst_case_log_ratio(levels)
    e = levels.eps
    cmax = np.maximum(e[:, None], e[None, :])
    cmin = np.minimum(e[:, None], e[None, :])
    tol = 1e-12
    return {
        "L": L,
        "claimed_max": cmax,
        "claimed_min": cmin,
        "violates_max": L > cmax + tol,
        "violates_min": L > cmin + tol,
        "worst": float(L.max()),
        "worst_excess_max": float((L - cmax).max()),
        "worst_excess_min": float((L - cmin).max()),
    }


def lhp_report_counts(t_star: Any, v_star: Any, k: int) -> np.ndarray:
    """Sufficient statistics of LHP reports: (k, 2) counts, [t, 0] = #(-1), [t, 1] = #(+1) at t* = t."""
    t = np.asarray(t_star, dtype=np.int64)
    s = np.asarray(v_star)
    if t.shape != s.shape:
        raise ValueError(f"t_star and v_star must have the same shape, got {t.shape} and {s.shape}")
    if np.any((t < 0) | (t >= k)):
        raise ValueError(f"level index t* must lie in 0..{k - 1}, got {t[(t < 0) | (t >= k)].flat[0].item()!r}")
    if np.any((s != 1) & (s != -1)):
        raise ValueError(f"v* must be +1 or -1, got {s[(s != 1) & (s != -1)].flat[0].item()!r}")
    return np.bincount(2 * t + (s > 0), minlength=2 * k).reshape(k, 2).astype(np.int64)


def lhp_sample_counts(v: Any, levels: GradedLevels, rng: np.random.Generator, size: int | None = None) -> np.ndarray:
    """Exact sampler of the per-level LHP report counts (shape (k, 2), or (size, k, 2)).

    Same as ``sort_by_level(v, levels).sample_counts(rng, size)``; a job that draws many
    repetitions on the same data sorts once with :func:`sort_by_level` and reuses the result.
    """
    return sort_by_level(v, levels).sample_counts(rng, size)


#: Data with at most this fraction of distinct values per user are summarised by value (exact
#: binomials per distinct value instead of one uniform per user).
_GROUP_BY_VALUE_BELOW = 0.25


@dataclass(frozen=True)
class LevelSortedData:
    """Data v prepared once for :meth:`sample_counts`: users sorted by privacy level (each level a
    contiguous slice), or, when v has few distinct values (integer ages: ~100 among millions), the
    distinct values with their multiplicities, sorted by level. Built by :func:`sort_by_level`."""

    levels: GradedLevels
    prob_plus: np.ndarray  # (1 + v)/2 per user, or per distinct value, in level order
    weights: np.ndarray | None  # multiplicity of each distinct value (None: one entry per user)
    bounds: np.ndarray  # entries of level l are prob_plus[bounds[l]:bounds[l+1]]
    level_sizes: np.ndarray  # users per level
    level_counts: tuple[BinaryCount, ...] | None = None  # per level, on large per-user data: the +1 count by blocks

    def sample_counts(self, rng: np.random.Generator, size: int | None = None) -> np.ndarray:
        """Exact sampler of the per-level LHP report counts (shape (k, 2), or (size, k, 2)).

        The number of +1 among a level's users after the Harmony discretisation is a sum of
        independent Bernoulli((1 + v)/2): drawn with one uniform per user; for data summarised by
        value, as Binomial(multiplicity, (1 + v)/2) per distinct value (the same law: a sum of c
        i.i.d. Bernoulli(p) is Binomial(c, p)); on large data (``BLOCKS_FROM`` users or more), by
        blocks of users sorted by (1 + v)/2 (``domain.binary_sum.BinaryCount``, the same
        Poisson-binomial law). Then, per cell (true level l, discretised bit b) with
        count c: t* ~ Multinomial(c, G_l) and, per t*, the number kept ~ Binomial(·, p_{t*}). The
        level draw and the keep/flip draw are independent given (v, disc), as in Algorithm 3, so the
        result has exactly the distribution of ``lhp_report_counts(*LHP.perturb(v))``.
        """
        k = self.levels.k
        reps = 1 if size is None else int(size)
        m_entries = self.prob_plus.shape[0]
        cells = np.empty((reps, k, 2), dtype=np.int64)
        block = max(1, (1 << 22) // max(m_entries, 1))
        for start in range(0, reps, block):
            m = min(block, reps - start)
            if self.level_counts is not None:
                for r in range(start, start + m):
                    cells[r, :, 1] = [count.sample(rng) for count in self.level_counts]
            else:
                if self.weights is None:
                    plus = rng.random((m, m_entries)) < self.prob_plus
                else:
                    plus = rng.binomial(self.weights, self.prob_plus, size=(m, m_entries))
                for lvl in range(k):
                    cells[start : start + m, lvl, 1] = plus[:, self.bounds[lvl] : self.bounds[lvl + 1]].sum(axis=1)
            cells[start : start + m, :, 0] = self.level_sizes - cells[start : start + m, :, 1]
        g = self.levels.level_channel
        p = self.levels.keep_probs
        out = np.zeros((reps, k, 2), dtype=np.int64)
        for lvl in range(k):
            for b in (0, 1):
                tcounts = rng.multinomial(cells[:, lvl, b], g[lvl])  # (reps, k)
                kept = rng.binomial(tcounts, p)  # (reps, k)
                out[:, :, b] += kept
                out[:, :, 1 - b] += tcounts - kept
        return out[0] if size is None else out


def sort_by_level(v: Any, levels: GradedLevels, by_value: bool | None = None) -> LevelSortedData:
    """Sort the users of v by privacy level once (``by_value``: summarise by distinct value; default
    when fewer than a quarter of the users have distinct values)."""
    levels = _check_levels(levels)
    va = _check_v(v).reshape(-1)
    k = levels.k
    n = va.shape[0]
    values = weights = None
    if by_value or by_value is None:
        head = va[: min(n, 4096)]
        if by_value or (n > 0 and np.unique(head).size < _GROUP_BY_VALUE_BELOW * head.size):
            values, weights = np.unique(va, return_counts=True)
            by_value = bool(by_value) or values.size < _GROUP_BY_VALUE_BELOW * n
    if by_value:
        lv = levels.level_of(values)  # np.unique sorts values, and levels are increasing in v
        level_sizes = np.bincount(lv, weights=weights, minlength=k).astype(np.int64)
        bounds = np.concatenate([[0], np.cumsum(np.bincount(lv, minlength=k))])
        return LevelSortedData(levels, (1.0 + values) / 2.0, weights.astype(np.int64), bounds, level_sizes)
    lv = levels.level_of(va)
    order = np.argsort(lv, kind="stable")  # users sorted by level: each level is a contiguous slice
    level_sizes = np.bincount(lv, minlength=k)
    bounds = np.concatenate([[0], np.cumsum(level_sizes)])
    prob_plus = (1.0 + va[order]) / 2.0
    counts = None
    if n >= BLOCKS_FROM:
        counts = tuple(BinaryCount(prob_plus[bounds[lvl] : bounds[lvl + 1]]) for lvl in range(k))
    return LevelSortedData(levels, prob_plus, None, bounds, level_sizes, counts)
