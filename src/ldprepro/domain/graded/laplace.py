"""The paper's "graded Laplace" baseline v + Lap(2/ε_{level(v)}) (paper 000, docs/papers/hiera.md §2). It is
**not** ε-LDP for any finite ε (the log density ratio grows linearly in |y|); :meth:`GradedLaplace.log_ratio`
exposes it for the audit."""

from __future__ import annotations

from typing import Any

import numpy as np

from ldprepro.domain.graded.levels import GradedLevels, _check_level, _check_levels, _check_v


class GradedLaplace:
    """The paper's "graded Laplace" baseline (docs/papers/hiera.md §2): report v + Lap(2/ε_{level(v)}), using the budget
    of the user's *true* level (sensitivity 2 on [-1, 1]); the collector averages the reports.

    WARNING (docs/papers/hiera.md §2, verified analytically): two inputs in levels with different budgets have Laplace
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
        privacy level of a gradient component is that of the attribute it belongs to (docs/papers/hiera.md §7)."""
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
