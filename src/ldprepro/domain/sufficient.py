"""Exact samplers of sufficient statistics: the law of a sum of per-user reports drawn without
drawing every report.

- A Laplace(b) variable is b·(E − E′) with E, E′ independent Exp(1), so the sum of n independent
  Laplace(b) variables is exactly b·(Γ(n, 1) − Γ′(n, 1)) (sums of n Exp(1) are Gamma(n, 1)). Two
  Gamma draws replace n Laplace draws; the law is identical (Kotz, Kozubowski & Podgórski, *The
  Laplace Distribution and Generalizations*, 2001, §2.3: the Laplace law as a difference of
  exponentials). Used by the Laplace mean estimates (papers 002 §5, 003 §5: Laplace with ε/d per
  attribute) and by paper 000's graded Laplace baseline (one scale per privacy level).
"""

from __future__ import annotations

import numpy as np


def laplace_sum(scale, n, rng: np.random.Generator, size=None) -> np.ndarray:
    """Σ of ``n`` independent Laplace(0, ``scale``) variables, exactly, as scale·(Γ(n) − Γ(n)).

    ``scale`` and ``n`` broadcast (n = 0 gives 0); ``size`` as in numpy (default: their broadcast
    shape)."""
    n = np.asarray(n, dtype=float)
    if np.any(n < 0):
        raise ValueError(f"number of summed Laplace variables must be >= 0, got {n.min()!r}")
    shape = np.broadcast_shapes(np.shape(scale), n.shape) if size is None else size
    # Generator.gamma rejects shape 0; a sum of zero terms is 0
    k = np.where(n > 0, n, 1.0)
    diff = rng.gamma(k, 1.0, size=shape) - rng.gamma(k, 1.0, size=shape)
    return np.where(n > 0, np.asarray(scale, dtype=float) * diff, 0.0)


def laplace_sums_per_step(scale, n, rng: np.random.Generator, steps: int, size: tuple) -> np.ndarray:
    """``steps`` successive calls of :func:`laplace_sum` (scale, n > 0, ``size``), stacked: the same
    values and the same random stream, from one call. Each call draws Γ(n) of ``size`` then
    another, and a Gamma array is drawn entry after entry, so the (steps, 2, *size) array holds
    them in call order."""
    if n <= 0:
        raise ValueError(f"number of summed Laplace variables must be > 0, got {n!r}")
    g = rng.gamma(np.asarray(float(n)), 1.0, size=(steps, 2, *size))
    return np.asarray(scale, dtype=float) * (g[:, 0] - g[:, 1])
