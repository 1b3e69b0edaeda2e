"""Multiple testing and the printing of p-values for the claim engine: Holm–Bonferroni within a
claim (family-wise error), Benjamini–Hochberg across a table (false discovery rate), and
``format_p``, which never prints a p-value as 0. Tests: tests/test_verdicts.py."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def _ascending(p_values: Sequence[float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(p, an all-NaN output of its shape, the indices of its finite values in ascending order)."""
    p = np.asarray(p_values, dtype=float)
    ok = np.flatnonzero(np.isfinite(p))
    return p, np.full(p.shape, np.nan), ok[np.argsort(p[ok], kind="mergesort")]


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm–Bonferroni step-down adjusted p-values (NaN stays NaN)."""
    p, out, order = _ascending(p_values)
    m = order.size
    running = 0.0
    for rank, idx in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[idx]))
        out[idx] = running
    return out


def benjamini_hochberg(p_values: Sequence[float]) -> np.ndarray:
    """Benjamini–Hochberg step-up q-values (false discovery rate; NaN stays NaN)."""
    p, out, order = _ascending(p_values)
    m = order.size
    if m == 0:
        return out
    q = p[order] * m / np.arange(1, m + 1)
    out[order] = np.minimum(1.0, np.minimum.accumulate(q[::-1])[::-1])
    return out


#: Probabilities below this are printed as such: a double cannot tell them apart from 0 reliably.
P_FLOOR = 1e-300


def format_p(p: float | None) -> str:
    """A p-value as printed: 3 significant digits, '< 1e-300' below the floor (never 0), '—' if none."""
    if p is None or not np.isfinite(p):
        return "—"
    return f"< {P_FLOOR:g}" if p < P_FLOOR else f"{p:.3g}"
