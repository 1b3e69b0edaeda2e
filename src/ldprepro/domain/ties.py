"""Exact ties: do two mechanisms have the same output law?

Zhao et al.'s mechanisms coincide in places: below ε = ln 2 Three-Outputs puts no mass on 0 and is
Duchi's mechanism, HM is pure Duchi below ε* ≈ 0.61, and HM-TP mixes branches that have collapsed
to the same law. A claim that one strictly beats the other there is refuted exactly, whatever a
finite sample shows (docs/verdicts-standard.md, "identical laws are ties"). The check compares the
exact output probabilities of ``Mechanism.support()/pmf`` and ``pdf`` on a grid of inputs.
"""

from __future__ import annotations

import numpy as np


def _atoms(mech, xs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Atoms carrying probability for some input, and their pmf rows (inputs × atoms)."""
    support = np.asarray(mech.support(), dtype=float)
    if support.size == 0:
        return support, np.zeros((xs.size, 0))
    pmf = np.asarray(mech.pmf(xs), dtype=float).reshape(xs.size, support.size)
    used = pmf.max(axis=0) > 0
    return support[used], pmf[:, used]


def same_output_law(m1, m2, n_inputs: int = 41, n_outputs: int = 4001, rtol: float = 1e-9) -> bool:
    """True when ``m1`` and ``m2`` give every input of a grid on [−1, 1] the same atoms with the same
    probabilities and the same density on a grid of outputs (relative tolerance ``rtol``)."""
    xs = np.linspace(-1.0, 1.0, n_inputs)
    s1, p1 = _atoms(m1, xs)
    s2, p2 = _atoms(m2, xs)
    if s1.size != s2.size or not np.allclose(s1, s2, rtol=rtol, atol=1e-12):
        return False
    if not np.allclose(p1, p2, rtol=rtol, atol=1e-12):
        return False
    bounds = [b for m in (m1, m2) for b in m.output_bounds() if np.isfinite(b)]
    lo, hi = (min(bounds), max(bounds)) if bounds else (-50.0, 50.0)
    ys = np.linspace(lo, hi, n_outputs) + (hi - lo) * 1e-7  # off the grid of breakpoints
    d1 = np.asarray(m1.pdf(ys[None, :], xs[:, None]), dtype=float)
    d2 = np.asarray(m2.pdf(ys[None, :], xs[:, None]), dtype=float)
    return bool(np.allclose(d1, d2, rtol=rtol, atol=1e-12))
