"""Graded (hierarchical) LDP for numerical data: paper 000, HierA (Hao, Wu, Wan, *Sensors* 2023, 23(3), 1115).

Contract: ``specs/hiera.md`` §1-6 and §9. Contents:

* :class:`GradedLevels` — the k sub-intervals D_1..D_k of [-1, 1] and their budgets ε_1 > ... > ε_k (§1).
* :class:`GradedLaplace` — the paper's "graded Laplace" baseline v + Lap(2/ε_{level(v)}) (§2). It is **not**
  ε-LDP for any finite ε (the log density ratio grows linearly in |y|); :meth:`GradedLaplace.log_ratio`
  exposes it for the audit.
* :class:`LHP` — the user side, Algorithm 3 (§3), with the exact joint pmf Pr(t*, v* | v) (§6.3) and
  :func:`lhp_worst_case_log_ratio` / :func:`lhp_privacy_audit` (§6.3: LHP violates the claimed bound).
* PLC, Algorithm 4 (§4): :func:`plc_keep_prob`, :func:`plc_convert_records`, :func:`plc_convert_counts`,
  :func:`plc`.
* HierA, Algorithm 5 (§5): :func:`merge_matrix`, :func:`plan` (the §5.2 table), the record-level estimator
  :func:`hiera_estimate_records` and the exact count-level estimator :func:`hiera_estimate_counts`
  (sufficient statistics; binomial thinning for PLC), :func:`lhp_sample_counts` (exact sampler of the
  per-level report counts), :func:`hiera_variance` (exact variance, intended mode, no clipping),
  :func:`hiera_expected_estimate` (large-n limit of E[m*], any mode, no clipping) and the wrapper
  :class:`HierA`.

Conventions. Level *indices* are 0-based throughout (index t is the paper's level t+1; index 0 is the least
private level with the largest budget ε_1). μ ("number of data reuses") is 1-based as in the paper,
μ ∈ {1..k}. Perturbed values are ±1 (int8). Per-level report counts are arrays of shape (..., k, 2) with
``counts[..., t, 0]`` = #(v* = -1) and ``counts[..., t, 1]`` = #(v* = +1) among reports with t* = t.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import expit

from ldprepro.domain.frequency import grr_perturb

__all__ = [
    "GradedLevels",
    "GradedLaplace",
    "LHP",
    "lhp_worst_case_log_ratio",
    "lhp_privacy_audit",
    "plc_keep_prob",
    "plc_convert_records",
    "plc_convert_counts",
    "plc",
    "STEP5_MODES",
    "merge_matrix",
    "plan",
    "lhp_report_counts",
    "lhp_sample_counts",
    "hiera_estimate_records",
    "hiera_estimate_counts",
    "hiera_variance",
    "hiera_expected_estimate",
    "HierA",
]

STEP5_MODES = ("intended", "printed", "prose")


# --------------------------------------------------------------------------------------------------
# levels
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GradedLevels:
    """The k sub-intervals of [-1, 1] and their budgets (spec §1).

    ``edges`` (length k+1, strictly increasing, from -1 to 1): level t covers [edges[t], edges[t+1]),
    the last one closed [edges[k-1], 1]. ``budgets`` (length k): ε of each level, positive and
    non-increasing (the paper requires ε_1 > ... > ε_k; equal budgets are allowed, PLC is then the
    identity). Default layout (:meth:`from_base_eps`): 5 equal intervals with budgets 5ε, 4ε, 3ε, 2ε, ε,
    so ε_1 = 5ε belongs to [-1, -0.6) and the base ε to the most private level [0.6, 1].
    """

    edges: tuple[float, ...]
    budgets: tuple[float, ...]

    def __post_init__(self) -> None:
        edges = tuple(float(e) for e in self.edges)
        budgets = tuple(float(b) for b in self.budgets)
        object.__setattr__(self, "edges", edges)
        object.__setattr__(self, "budgets", budgets)
        if len(budgets) < 1 or len(edges) != len(budgets) + 1:
            raise ValueError(f"need k >= 1 budgets and k+1 edges, got {len(budgets)} budgets and {len(edges)} edges")
        if edges[0] != -1.0 or edges[-1] != 1.0:
            raise ValueError(f"edges must run from -1 to 1, got {edges!r}")
        if any(b <= a for a, b in zip(edges, edges[1:])):
            raise ValueError(f"edges must be strictly increasing, got {edges!r}")
        for b in budgets:
            if not math.isfinite(b) or b <= 0:
                raise ValueError(f"budgets must be positive and finite, got {b!r} in {budgets!r}")
        if any(b2 > b1 for b1, b2 in zip(budgets, budgets[1:])):
            raise ValueError(f"budgets must be non-increasing (level 1 least private), got {budgets!r}")

    @classmethod
    def from_base_eps(
        cls, eps: float, k: int = 5, multipliers: Iterable[float] | None = None, edges: Iterable[float] | None = None
    ) -> GradedLevels:
        """k equal intervals (unless ``edges`` given) with budgets ``eps * multipliers``;
        default multipliers (k, k-1, ..., 1), i.e. {5ε, 4ε, 3ε, 2ε, ε} for k = 5."""
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"number of levels k must be a positive integer, got {k!r}")
        e = float(eps)
        if not math.isfinite(e) or e <= 0:
            raise ValueError(f"eps must be positive and finite, got {eps!r}")
        mult = tuple(range(k, 0, -1)) if multipliers is None else tuple(float(m) for m in multipliers)
        if len(mult) != k:
            raise ValueError(f"need {k} multipliers, got {len(mult)}: {mult!r}")
        if edges is None:
            ed = tuple(float(x) for x in np.round(np.linspace(-1.0, 1.0, k + 1), 12))
        else:
            ed = tuple(edges)
        return cls(ed, tuple(e * m for m in mult))

    @property
    def k(self) -> int:
        return len(self.budgets)

    @property
    def eps(self) -> np.ndarray:
        """Budgets as an array (index t = paper level t+1)."""
        return np.asarray(self.budgets, dtype=float)

    @property
    def keep_probs(self) -> np.ndarray:
        """p_t = e^{ε_t}/(e^{ε_t}+1): probability that a ±1 value is kept at level t (§1)."""
        return expit(self.eps)

    @property
    def grr_keep_probs(self) -> np.ndarray:
        """e^{ε_t}/(e^{ε_t}+k-1): GRR keep probability of the level at level t's budget (Alg. 3 step 2)."""
        return 1.0 / (1.0 + (self.k - 1) * np.exp(-self.eps))

    @property
    def level_channel(self) -> np.ndarray:
        """(k, k) matrix G[l, t] = Pr(t* = t | true level l) (GRR at budget ε_l)."""
        keep = self.grr_keep_probs
        if self.k == 1:
            return np.ones((1, 1))
        g = np.repeat(((1.0 - keep) / (self.k - 1))[:, None], self.k, axis=1)
        np.fill_diagonal(g, keep)
        return g

    def interval(self, t: int) -> tuple[float, float]:
        """Closure [a, b] of level t's interval."""
        return self.edges[t], self.edges[t + 1]

    def level_of(self, v: Any) -> np.ndarray:
        """Level index (0-based) of each value in [-1, 1]; vectorised. Raises ValueError outside [-1, 1]."""
        va = np.asarray(v, dtype=float)
        bad = ~np.isfinite(va) | (va < -1.0) | (va > 1.0)
        if bad.any():
            raise ValueError(f"values must lie in [-1, 1], got {va[bad].flat[0].item()!r}")
        return np.searchsorted(np.asarray(self.edges[1:-1]), va, side="right").astype(np.int64)


def _check_levels(levels: Any) -> GradedLevels:
    if not isinstance(levels, GradedLevels):
        raise ValueError(f"levels must be a GradedLevels, got {type(levels).__name__}")
    return levels


def _check_v(v: Any) -> np.ndarray:
    va = np.asarray(v, dtype=float)
    bad = ~np.isfinite(va) | (va < -1.0) | (va > 1.0)
    if bad.any():
        raise ValueError(f"values must lie in [-1, 1], got {va[bad].flat[0].item()!r}")
    return va


def _check_level(level: Any, v: np.ndarray, k: int) -> np.ndarray:
    lv = np.asarray(level)
    if lv.shape != v.shape:
        raise ValueError(f"level must have the values' shape {v.shape}, got {lv.shape}")
    if not np.issubdtype(lv.dtype, np.integer) or np.any((lv < 0) | (lv >= k)):
        raise ValueError(f"level indices must be integers in 0..{k - 1}")
    return lv.astype(np.int64)


# --------------------------------------------------------------------------------------------------
# graded Laplace baseline (§2)
# --------------------------------------------------------------------------------------------------


class GradedLaplace:
    """The paper's "graded Laplace" baseline (spec §2): report v + Lap(2/ε_{level(v)}), using the budget
    of the user's *true* level (sensitivity 2 on [-1, 1]); the collector averages the reports.

    WARNING (spec §2, verified analytically): two inputs in levels with different budgets have Laplace
    densities of different scales, so ln f(y|x)/f(y|x') = ln(ε_x/ε_x') - ε_x|y-x|/2 + ε_x'|y-x'|/2 grows
    like (ε_x - ε_x')|y|/2 as |y| → ∞: the mechanism is **not ε-LDP for any finite ε**. It is implemented
    as the paper's baseline and labelled as such; :meth:`log_ratio` exposes the unbounded ratio.
    """

    is_ldp = False

    def __init__(self, levels: GradedLevels):
        self.levels = _check_levels(levels)

    def scale(self, v: Any) -> np.ndarray:
        """Laplace scale 2/ε_{level(v)}."""
        return 2.0 / self.levels.eps[self.levels.level_of(v)]

    def perturb(self, v: Any, rng: np.random.Generator, level: Any = None) -> np.ndarray:
        """v + Lap(2/ε_t) with t = level(v), or the given ``level`` indices (0-based, v's shape): the
        privacy level of a gradient component is that of the attribute it belongs to (spec §7)."""
        va = _check_v(v)
        scale = self.scale(va) if level is None else 2.0 / self.levels.eps[_check_level(level, va, self.levels.k)]
        return va + rng.laplace(0.0, 1.0, size=va.shape) * scale

    def logpdf(self, y: Any, v: Any) -> np.ndarray:
        """log density of the report y given input v (broadcasting)."""
        b = self.scale(v)
        return -np.log(2 * b) - np.abs(np.asarray(y, dtype=float) - _check_v(v)) / b

    def pdf(self, y: Any, v: Any) -> np.ndarray:
        return np.exp(self.logpdf(y, v))

    def log_ratio(self, y: Any, v1: Any, v2: Any) -> np.ndarray:
        """ln f(y | v1) - ln f(y | v2); unbounded in y when the levels of v1, v2 differ."""
        return self.logpdf(y, v1) - self.logpdf(y, v2)

    def variance(self, v: Any) -> np.ndarray:
        """Per-report variance 2·(2/ε)^2."""
        return 2.0 * self.scale(v) ** 2

    @staticmethod
    def estimate_mean(reports: Any) -> float:
        return float(np.mean(reports))


# --------------------------------------------------------------------------------------------------
# LHP (Algorithm 3) and its exact privacy audit (§3, §6.3)
# --------------------------------------------------------------------------------------------------


class LHP:
    """Level-and-value hierarchical perturbation, user side (Algorithm 3; spec §3), exactly as printed:

    1. t = level(v);
    2. t* = GRR(t) at the *true* level's budget ε_t (keep e^{ε_t}/(e^{ε_t}+k-1));
    3. discretise (Harmony rule): v* = +1 w.p. (1+v)/2, else -1;
    4. keep v* w.p. p_{t*} = e^{ε_{t*}}/(e^{ε_{t*}}+1) — the *perturbed* level's budget — else flip;
    5. send (t*, v*) (no calibration on the user side).

    Exact joint pmf (spec §6.3): Pr(t*, v* = s | v) = G_{t(v)}(t*)·[(1+sv)/2·p_{t*} + (1-sv)/2·(1-p_{t*})]
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
        its attribute (spec §7)."""
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
        """Pr(t*, v* = s | v) (spec §6.3), broadcasting over t_star (level index), s (±1) and v."""
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
    """Exact worst-case privacy loss of LHP between levels (spec §6.3):

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
    """Audit of LHP against Theorem 2 under both readings of graded LDP (spec §1, §6.3, §9 item 6).

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


# --------------------------------------------------------------------------------------------------
# PLC (Algorithm 4, §4)
# --------------------------------------------------------------------------------------------------


def plc_keep_prob(levels: GradedLevels, i: int, j: int) -> float:
    """q_ij = (p_i + p_j - 1)/(2p_i - 1): keep probability that re-randomises a level-i report to level
    j ≥ i (Algorithm 4; the prose's "1 - q = ..." is a typo, spec §4). Composed keep probability
    p_i q + (1-p_i)(1-q) = p_j."""
    levels = _check_levels(levels)
    k = levels.k
    if not (0 <= i < k and 0 <= j < k):
        raise ValueError(f"level indices must lie in 0..{k - 1}, got i={i!r}, j={j!r}")
    if j < i:
        raise ValueError(f"PLC converts only toward more private levels (j >= i), got i={i}, j={j}")
    if j == i:
        return 1.0
    p = levels.keep_probs
    return float((p[i] + p[j] - 1.0) / (2.0 * p[i] - 1.0))


def plc_convert_records(values: Any, i: int, j: int, levels: GradedLevels, rng: np.random.Generator) -> np.ndarray:
    """Record-level PLC: keep each ±1 value w.p. q_ij, else flip (int8)."""
    v = np.asarray(values)
    if np.any((v != 1) & (v != -1)):
        raise ValueError(f"PLC input values must be +1 or -1, got {v[(v != 1) & (v != -1)].flat[0].item()!r}")
    q = plc_keep_prob(levels, i, j)
    keep = rng.random(v.shape) < q
    return np.where(keep, v, -v).astype(np.int8)


def plc_convert_counts(
    n_minus: Any, n_plus: Any, i: int, j: int, levels: GradedLevels, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Count-level PLC (binomial thinning): from (#-1, #+1) of a level-i set, the counts of an independent
    re-randomisation to level j: kept+ ~ Bin(n+, q), kept- ~ Bin(n-, q); new n+ = kept+ + (n- - kept-).
    Exact in distribution. Returns (n_minus', n_plus')."""
    q = plc_keep_prob(levels, i, j)
    nm = np.asarray(n_minus, dtype=np.int64)
    npl = np.asarray(n_plus, dtype=np.int64)
    kp = rng.binomial(npl, q)
    km = rng.binomial(nm, q)
    new_plus = kp + (nm - km)
    new_minus = km + (npl - kp)
    return new_minus, new_plus


def plc(values: Any, i: int, mu: int, levels: GradedLevels, rng: np.random.Generator) -> dict[int, np.ndarray]:
    """Algorithm 4: V_i together with V_{i(i+1)}, ..., V_{i(min(k, i+μ-1))} (1-based in the paper).

    Returns {j: V_ij} keyed by 0-based target level, with V_ii = V_i itself; each conversion is an
    independent re-randomisation of V_i (spec §4)."""
    levels = _check_levels(levels)
    mu = _check_mu(mu, levels.k)
    v = np.asarray(values).astype(np.int8)
    out = {i: v}
    for j in range(i + 1, min(levels.k, i + mu)):
        out[j] = plc_convert_records(v, i, j, levels, rng)
    return out


# --------------------------------------------------------------------------------------------------
# HierA (Algorithm 5, §5)
# --------------------------------------------------------------------------------------------------


def _check_mu(mu: Any, k: int) -> int:
    if isinstance(mu, bool) or not isinstance(mu, (int, np.integer)) or not 1 <= mu <= k:
        raise ValueError(f"mu (number of data reuses) must be an integer in 1..{k}, got {mu!r}")
    return int(mu)


def _check_mode(mode: Any) -> str:
    if mode not in STEP5_MODES:
        raise ValueError(f"step5_mode must be one of {STEP5_MODES}, got {mode!r}")
    return mode


def merge_matrix(mu: int, mode: str = "intended", k: int = 5) -> np.ndarray:
    """Step 5 of Algorithm 5 as a (k, k) int matrix M[j, i] = number of copies of group i's data at level
    j in V_j* (M[j, j]: copies of the original V_j; M[j, i], i < j: the PLC conversion V_ij). 0-based.

    Modes (spec §5.1-5.2; in 1-based paper indices):

    * ``"intended"`` (default; unbiased): V_j* = (1+δ_j)·V_j + Σ_{i=max(1, j-μ+1)}^{j-1} V_ij,
      δ_j = max(0, μ - (k - j + 1)); every group appears exactly μ times.
    * ``"printed"``: the three branches as printed, evaluated as ``if / if / elif``:
      ``if j+μ-1 > k: V_j* = (μ-k+j)·V_j``; ``if j < μ: V_j* = V_j + V_(j-1)j + ... + V_1j``
      ``elif μ ≤ j < k-μ+2: V_j* = V_j + V_(j-1)j + ... + V_(j-μ+1)j`` (later branches overwrite).
    * ``"prose"``: the intended merge plus the prose's "add μ-k+j compensation copies of V_j" on top of
      the original (one copy too many).
    """
    mode = _check_mode(mode)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"number of levels k must be a positive integer, got {k!r}")
    mu = _check_mu(mu, k)
    M = np.zeros((k, k), dtype=np.int64)
    for j1 in range(1, k + 1):  # paper's 1-based level
        j = j1 - 1
        if mode == "printed":
            row = None
            if j1 + mu - 1 > k:
                row = {j1: mu - k + j1}
            if j1 < mu:
                row = {i1: 1 for i1 in range(1, j1 + 1)}
            elif mu <= j1 < k - mu + 2:
                row = {i1: 1 for i1 in range(j1 - mu + 1, j1 + 1)}
            for i1, c in (row or {}).items():
                M[j, i1 - 1] = c
        else:
            for i1 in range(max(1, j1 - mu + 1), j1):
                M[j, i1 - 1] = 1
            over = mu - k + j1  # = μ - (k - j + 1) + 1
            if mode == "intended":
                M[j, j] = 1 + max(0, over - 1)
            else:  # prose: "add μ-k+j copies" as compensation on top of V_j
                M[j, j] = 1 + (over if j1 + mu - 1 > k else 0)
    return M


def plan(mu: int, mode: str = "intended", k: int = 5) -> np.ndarray:
    """Number of copies of each original group 1..k in V* (spec §5.2 table): ``merge_matrix(...).sum(0)``."""
    return merge_matrix(mu, mode, k).sum(axis=0)


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

    def sample_counts(self, rng: np.random.Generator, size: int | None = None) -> np.ndarray:
        """Exact sampler of the per-level LHP report counts (shape (k, 2), or (size, k, 2)).

        The number of +1 among a level's users after the Harmony discretisation is a sum of
        independent Bernoulli((1 + v)/2): drawn with one uniform per user, or, for data summarised
        by value, as Binomial(multiplicity, (1 + v)/2) per distinct value (the same law: a sum of c
        i.i.d. Bernoulli(p) is Binomial(c, p)). Then, per cell (true level l, discretised bit b) with
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
    return LevelSortedData(levels, (1.0 + va[order]) / 2.0, None, bounds, level_sizes)


def _step6(counts_star: np.ndarray, levels: GradedLevels, clip: bool) -> np.ndarray:
    """Steps 6-7 of Algorithm 5 on merged counts (..., k, 2): m* = Σ_j S(V_j*) / Σ_j N_j."""
    p = levels.keep_probs
    n2 = counts_star[..., 0].astype(float)
    n1 = counts_star[..., 1].astype(float)
    N = n1 + n2
    n1s = (p * N - n2) / (2 * p - 1)
    n2s = (p * N - n1) / (2 * p - 1)
    if clip:
        n1s = np.clip(n1s, 0.0, N)
        n2s = np.clip(n2s, 0.0, N)
    S = n1s - n2s
    total = N.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return S.sum(axis=-1) / total


def hiera_estimate_counts(
    counts: Any,
    levels: GradedLevels,
    mu: int,
    rng: np.random.Generator,
    step5_mode: str = "intended",
    clip: bool = True,
) -> np.ndarray | float:
    """HierA mean estimate m* (Algorithm 5, steps 2-7) from per-level report counts (count level).

    ``counts``: (..., k, 2) as returned by :func:`lhp_report_counts` / :func:`lhp_sample_counts`; leading
    axes are independent repetitions (vectorised). PLC conversions (Algorithm 4) are drawn by binomial
    thinning (:func:`plc_convert_counts`), independently for each (i → j); duplicated originals are
    multiplied. Exact in distribution relative to :func:`hiera_estimate_records`.
    """
    levels = _check_levels(levels)
    c = np.asarray(counts, dtype=np.int64)
    k = levels.k
    if c.shape[-2:] != (k, 2):
        raise ValueError(f"counts must have shape (..., {k}, 2), got {c.shape}")
    M = merge_matrix(mu, step5_mode, k)
    merged = np.zeros(c.shape, dtype=np.int64)
    for j in range(k):
        for i in range(k):
            mult = M[j, i]
            if mult == 0:
                continue
            if i == j:
                merged[..., j, :] += mult * c[..., j, :]
            else:
                nm, npl = plc_convert_counts(c[..., i, 0], c[..., i, 1], i, j, levels, rng)
                merged[..., j, 0] += mult * nm
                merged[..., j, 1] += mult * npl
    est = _step6(merged, levels, clip)
    return float(est) if np.ndim(est) == 0 else est


def hiera_estimate_records(
    t_star: Any,
    v_star: Any,
    levels: GradedLevels,
    mu: int,
    rng: np.random.Generator,
    step5_mode: str = "intended",
    clip: bool = True,
) -> float:
    """HierA mean estimate m* (Algorithm 5) from the LHP reports, record by record.

    Step 2 groups the reports by reported level t*; step 3 applies PLC (Algorithm 4) to each group,
    flipping each record independently (:func:`plc_convert_records`); step 5 merges per
    :func:`merge_matrix` (``step5_mode``); steps 6-7 correct (optionally ``clip``) and average.
    """
    levels = _check_levels(levels)
    k = levels.k
    t = np.asarray(t_star, dtype=np.int64)
    s = np.asarray(v_star)
    lhp_report_counts(t, s, k)  # validation
    M = merge_matrix(mu, step5_mode, k)
    groups = [s[t == i].astype(np.int8) for i in range(k)]
    merged = np.zeros((k, 2), dtype=np.int64)
    for j in range(k):
        parts: list[np.ndarray] = []
        for i in range(k):
            mult = M[j, i]
            if mult == 0:
                continue
            data = groups[i] if i == j else plc_convert_records(groups[i], i, j, levels, rng)
            parts.extend([data] * int(mult))
        vj = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int8)
        merged[j, 1] = int(np.count_nonzero(vj == 1))
        merged[j, 0] = vj.size - merged[j, 1]
    return float(_step6(merged, levels, clip))


def hiera_variance(v: Any, levels: GradedLevels, mu: int) -> float:
    """Exact Var(m*) of the intended-mode, unclipped HierA estimate given the data v (spec §6.2).

    With c_t = 2p_t - 1, a user whose report lands in group g contributes W = Σ over her μ copies of the
    calibrated values. Given (g, v*=s): E[W] = μ s/c_g, and each PLC conversion to level j adds
    independent noise of variance 1/c_j² - 1/c_g² (duplicated originals add none), so
    E[W²] = Σ_g G_{l(v)}(g)·[μ²/c_g² + Σ_{j ∈ conv(g)} (1/c_j² - 1/c_g²)], Var W = E[W²] - μ² v²,
    and Var(m*) = Σ_users Var(W) / (μ n)² (|V*| = μ n is fixed in the intended mode).
    """
    levels = _check_levels(levels)
    va = _check_v(v).reshape(-1)
    k = levels.k
    mu = _check_mu(mu, k)
    M = merge_matrix(mu, "intended", k)
    c2 = (2.0 * levels.keep_probs - 1.0) ** -2
    ew2_g = np.empty(k)
    for g in range(k):
        conv = [j for j in range(k) if j != g and M[j, g] > 0]
        ew2_g[g] = mu**2 * c2[g] + sum(c2[j] - c2[g] for j in conv)
    G = levels.level_channel
    ew2 = (G @ ew2_g)[levels.level_of(va)]
    n = va.shape[0]
    return float((ew2 - mu**2 * va**2).sum() / (mu * n) ** 2)


def hiera_expected_estimate(v: Any, levels: GradedLevels, mu: int, step5_mode: str = "intended") -> float:
    """Large-n limit of E[m*] without clipping, given the data v (ratio of expectations).

    Every calibrated copy of a report has expectation v whatever its level (spec §5.2), so
    E[Σ S] = Σ_u v_u·Σ_t G_{l(v_u)}(t)·m_t and E[|V*|] = Σ_u Σ_t G_{l(v_u)}(t)·m_t with m = :func:`plan`.
    For the intended mode m_t ≡ μ and this is exactly mean(v); for the others it exposes the bias
    (m* is a ratio estimator, so the finite-n expectation differs from this by O(1/n)).
    """
    levels = _check_levels(levels)
    va = _check_v(v).reshape(-1)
    m = plan(mu, step5_mode, levels.k).astype(float)
    w = (levels.level_channel @ m)[levels.level_of(va)]
    return float((w * va).sum() / w.sum())


class HierA:
    """Convenience wrapper: LHP users + HierA collector (Algorithm 5) with fixed settings.

    ``step5_mode``: "intended" (default; unbiased), "printed" or "prose" (spec §5); ``clip``: step 6
    clipping (paper: True; biased at small n, spec §6.1); ``mu`` ∈ 1..k.
    """

    def __init__(self, levels: GradedLevels, mu: int = 1, step5_mode: str = "intended", clip: bool = True):
        self.levels = _check_levels(levels)
        self.mu = _check_mu(mu, levels.k)
        self.step5_mode = _check_mode(step5_mode)
        self.clip = bool(clip)
        self.lhp = LHP(levels)

    def __repr__(self) -> str:
        return f"HierA(levels={self.levels!r}, mu={self.mu}, step5_mode={self.step5_mode!r}, clip={self.clip})"

    def perturb(self, v: Any, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        return self.lhp.perturb(v, rng)

    def estimate_from_reports(self, t_star: Any, v_star: Any, rng: np.random.Generator) -> float:
        return hiera_estimate_records(t_star, v_star, self.levels, self.mu, rng, self.step5_mode, self.clip)

    def estimate_from_counts(self, counts: Any, rng: np.random.Generator) -> np.ndarray | float:
        return hiera_estimate_counts(counts, self.levels, self.mu, rng, self.step5_mode, self.clip)

    def run(self, v: Any, rng: np.random.Generator, path: str = "count", size: int | None = None):
        """Simulate LHP + HierA on data v. ``path="count"`` (exact sufficient statistics, vectorised over
        ``size`` repetitions) or ``"record"`` (per-user reports; ``size`` repetitions in a loop)."""
        if path == "count":
            return self.estimate_from_counts(lhp_sample_counts(v, self.levels, rng, size), rng)
        if path == "record":
            if size is None:
                return self.estimate_from_reports(*self.perturb(v, rng), rng)
            return np.array([self.estimate_from_reports(*self.perturb(v, rng), rng) for _ in range(int(size))])
        raise ValueError(f"path must be 'count' or 'record', got {path!r}")
