"""HierA, the collector (Algorithm 5; docs/papers/hiera.md §5, §6): :func:`merge_matrix`, :func:`plan` (the
§5.2 table), the record-level estimator :func:`hiera_estimate_records` and the exact count-level
estimator :func:`hiera_estimate_counts` (sufficient statistics; binomial thinning for PLC),
:func:`hiera_variance` (exact variance, intended mode, no clipping), :func:`hiera_expected_estimate`
(large-n limit of E[m*], any mode, no clipping) and the wrapper :class:`HierA`."""

from __future__ import annotations

from typing import Any

import numpy as np

from ldprepro.domain.graded.levels import GradedLevels, _check_levels, _check_mu, _check_v
from ldprepro.domain.graded.lhp import LHP, lhp_report_counts, lhp_sample_counts
from ldprepro.domain.graded.plc import plc_convert_counts, plc_convert_records

STEP5_MODES = ("intended", "printed", "prose")


def _check_mode(mode: Any) -> str:
    if mode not in STEP5_MODES:
        raise ValueError(f"step5_mode must be one of {STEP5_MODES}, got {mode!r}")
    return mode


def merge_matrix(mu: int, mode: str = "intended", k: int = 5) -> np.ndarray:
    """Step 5 of Algorithm 5 as a (k, k) int matrix M[j, i] = number of copies of group i's data at level
    j in V_j* (M[j, j]: copies of the original V_j; M[j, i], i < j: the PLC conversion V_ij). 0-based.

    Modes (docs/papers/hiera.md §5.1-5.2; in 1-based paper indices):

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
    """Number of copies of each original group 1..k in V* (docs/papers/hiera.md §5.2 table): ``merge_matrix(...).sum(0)``."""
    return merge_matrix(mu, mode, k).sum(axis=0)


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
    """Exact Var(m*) of the intended-mode, unclipped HierA estimate given the data v (docs/papers/hiera.md §6.2).

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

    Every calibrated copy of a report has expectation v whatever its level (docs/papers/hiera.md §5.2), so
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

    ``step5_mode``: "intended" (default; unbiased), "printed" or "prose" (docs/papers/hiera.md §5); ``clip``: step 6
    clipping (paper: True; biased at small n, docs/papers/hiera.md §6.1); ``mu`` ∈ 1..k.
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
