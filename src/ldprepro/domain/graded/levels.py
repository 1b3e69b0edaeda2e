"""Graded LDP levels (paper 000, HierA; docs/papers/hiera.md §1): :class:`GradedLevels`, the k
sub-intervals D_1..D_k of [-1, 1] and their budgets ε_1 > ... > ε_k, and the argument checks the
other ``graded`` modules share."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class GradedLevels:
    """The k sub-intervals of [-1, 1] and their budgets (docs/papers/hiera.md §1).

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
        from scipy.special import expit  # lazy: most jobs never evaluate it

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


def _check_mu(mu: Any, k: int) -> int:
    if isinstance(mu, bool) or not isinstance(mu, (int, np.integer)) or not 1 <= mu <= k:
        raise ValueError(f"mu (number of data reuses) must be an integer in 1..{k}, got {mu!r}")
    return int(mu)
