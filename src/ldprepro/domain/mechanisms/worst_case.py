"""The input at which a 1-D mechanism's variance is largest (its worst case), on a grid.

``Mechanism.worst_case_variance`` gives the largest variance itself (a closed form where the class
has one); a Monte-Carlo check needs the input that attains it: the argmax of ``variance`` on an
evenly spaced grid of [lo, 1] (``lo`` = 0 for a symmetric mechanism, Var(t) = Var(−t)). The grid
holds −1 (or 0), 0 and 1, where the built-in mechanisms' maxima lie (Duchi: t = 0; PM, Laplace: every
t; the hybrid and piecewise ones: |t| = 1 or t = 0)."""

from __future__ import annotations

import numpy as np


def worst_input(mech, lo: float = -1.0, points: int = 2001) -> float:
    """argmax over an evenly spaced ``points``-point grid of [``lo``, 1] of ``mech.variance``."""
    grid = np.linspace(lo, 1.0, points)
    return float(grid[np.argmax(mech.variance(grid))])
