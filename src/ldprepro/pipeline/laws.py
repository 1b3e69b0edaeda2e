"""The t and normal laws of the claim engine (``ldprepro.claims.stats``) and of the summaries'
confidence intervals (``ldprepro.pipeline.results.aggregate``): value for value scipy.stats's ``t``
and ``norm`` (tests/test_claims_laws.py), from scipy.special. Importing scipy.stats costs a figure
job about 1 s of CPU (python -X importtime); only the claim engine's location test (Shapiro–Wilk,
t, Wilcoxon in ``claims.stats._location_test``) needs it, and imports it there.

Each function reproduces what scipy.stats adds around the special function: the ``× scale + loc``
of a quantile (scale 1, loc 0: −0 becomes +0), and −∞ for the t quantile at q = 0 with valid
degrees of freedom (``special.stdtrit(df, 0)`` is +∞)."""

from __future__ import annotations

import numpy as np
from scipy import special


def t_ppf(q, df):
    """``scipy.stats.t.ppf(q, df)`` (its ``× scale + loc``, and −∞ at q = 0 for a valid df, where
    stdtrit gives +∞)."""
    at_zero = (np.asarray(q) == 0) & (np.asarray(df) > 0)
    return np.where(at_zero, -np.inf, special.stdtrit(df, q) * 1.0 + 0.0)


def t_cdf(x, df):
    """``scipy.stats.t.cdf(x, df)``."""
    return special.stdtr(df, x)


def t_sf(x, df):
    """``scipy.stats.t.sf(x, df)``."""
    return special.stdtr(df, -np.asarray(x))


def norm_ppf(q):
    """``scipy.stats.norm.ppf(q)``."""
    return special.ndtri(q) * 1.0 + 0.0


def norm_cdf(x):
    """``scipy.stats.norm.cdf(x)``."""
    return special.ndtr(x)


def norm_sf(x):
    """``scipy.stats.norm.sf(x)``."""
    return special.ndtr(-np.asarray(x))
