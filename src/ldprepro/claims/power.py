"""Power and sample size for the claim engine's point tests (docs/verdicts-standard.md): the
level α and power 1 − β every claim is sized for, the minimal detectable effect at n paired
repetitions, the repetitions one point needs (``reps_needed``) and the repetitions at which every
point of a universal claim is significant at once (``joint_reps_needed``). Normal approximation on
the test scale (log-ratio or difference). Tests: tests/test_verdicts.py."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ldprepro.pipeline.laws import norm_cdf, norm_ppf

ALPHA = 0.05
POWER = 0.80


def z_quantile(q: float) -> float:
    return float(norm_ppf(q))


def mde_test_scale(sd: float, n: int, alpha: float = ALPHA, power: float = POWER) -> float:
    """Smallest true mean difference a two-sided level-α test detects with the given power."""
    if n < 2 or not np.isfinite(sd):
        return math.inf
    return (z_quantile(1 - alpha / 2) + z_quantile(power)) * sd / math.sqrt(n)


def reps_needed(sd: float, delta: float, alpha: float = ALPHA, power: float = POWER) -> float:
    """n ≈ ((z₁₋α/₂ + z₁₋β)·σ_d / δ)², the repetitions that detect a true effect δ (test scale)."""
    if not np.isfinite(sd) or not np.isfinite(delta) or delta == 0:
        return math.inf
    if sd == 0:
        return 2.0
    return float(math.ceil(((z_quantile(1 - alpha / 2) + z_quantile(power)) * sd / abs(delta)) ** 2))


def point_power(n: int, sd: float, delta: float, margin: float, alpha: float) -> float:
    """Power at ``n`` repetitions of one point's test (normal approximation, test scale): the
    two-sided test in the direction of ``delta``, or TOST when ``margin`` is finite."""
    if sd == 0:
        return 1.0 if (not np.isfinite(margin) and delta != 0) or abs(delta) < margin else 0.0
    se = sd / math.sqrt(n)
    if np.isfinite(margin):  # TOST: both one-sided tests reject
        z = z_quantile(1 - alpha)
        return max(0.0, float(norm_cdf((margin - delta) / se - z) + norm_cdf((margin + delta) / se - z) - 1))
    return float(norm_cdf(abs(delta) / se - z_quantile(1 - alpha / 2)))


def joint_reps_needed(
    points: Sequence[tuple[float, float, float]], alpha: float = ALPHA, power: float = POWER, cap: int = 10**6
) -> float:
    """The repetitions at which every point of a universal claim is significant in its favour with
    probability ``power`` (the intersection–union test's power: the product of the points' powers,
    independent points assumed). ``points``: (sd, effect, margin) on the test scale per point, margin
    NaN except for TOST (equivalence power). ``inf`` when no n up to ``cap`` suffices (e.g. a zero
    effect, or an effect outside the equivalence margin)."""
    pts = [(float(sd), float(d), float(m)) for sd, d, m in points]
    if not pts or any(not np.isfinite(sd) or not np.isfinite(d) for sd, d, _ in pts):
        return math.inf
    if any((np.isfinite(m) and abs(d) >= m) or (not np.isfinite(m) and d == 0) for _, d, m in pts):
        return math.inf

    def ok(n: int) -> bool:
        return float(np.prod([point_power(n, sd, d, m, alpha) for sd, d, m in pts])) >= power

    lo, hi = 2, 2
    while not ok(hi):
        lo, hi = hi, hi * 2
        if hi > cap:
            return math.inf
    while lo < hi:  # smallest n in (lo, hi] with ok(n); power is increasing in n
        mid = (lo + hi) // 2
        lo, hi = (mid + 1, hi) if not ok(mid) else (lo, mid)
    return float(hi)
