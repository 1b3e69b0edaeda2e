"""PLC, the level conversion of HierA (Algorithm 4; docs/papers/hiera.md §4): :func:`plc_keep_prob`,
:func:`plc_convert_records`, :func:`plc_convert_counts`, :func:`plc`."""

from __future__ import annotations

from typing import Any

import numpy as np

from ldprepro.domain.graded.levels import GradedLevels, _check_levels, _check_mu


def plc_keep_prob(levels: GradedLevels, i: int, j: int) -> float:
    """q_ij = (p_i + p_j - 1)/(2p_i - 1): keep probability that re-randomises a level-i report to level
    j ≥ i (Algorithm 4; the prose's "1 - q = ..." is a typo, docs/papers/hiera.md §4). Composed keep probability
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
    independent re-randomisation of V_i (docs/papers/hiera.md §4)."""
    levels = _check_levels(levels)
    mu = _check_mu(mu, levels.k)
    v = np.asarray(values).astype(np.int8)
    out = {i: v}
    for j in range(i + 1, min(levels.k, i + mu)):
        out[j] = plc_convert_records(v, i, j, levels, rng)
    return out
