"""The claim engine's t and normal laws (``ldprepro.pipeline.laws``: from scipy.special, so that a figure
job need not import scipy.stats) are scipy.stats's, value for value, on every kind of argument the
engine passes and at the edges (q = 0 and 1, infinite and NaN arguments, infinite degrees of freedom)."""

import numpy as np
import pytest
from scipy import stats

from ldprepro.pipeline import laws

RNG = np.random.default_rng(20261126)
X = np.concatenate([RNG.normal(size=400) * 6, [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300, 40.0, -40.0]])
Q = np.concatenate([RNG.random(400), [0.0, 1.0, 0.5, 0.975, 1e-300, 1 - 1e-16, np.nan, -0.1, 1.1]])
DF = [1, 2, 4, 29, 399, 499, 1e6, np.inf, 0.5, 0]


def same(a, b) -> bool:
    """Equal bits: NaN where NaN, and the sign of zero."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and np.array_equal(a.view(np.int64), b.view(np.int64)) | (
        np.isnan(a).all() and np.isnan(b).all()
    )


@pytest.mark.parametrize("df", DF)
def test_the_t_law_is_scipy_stats_value_for_value(df):
    for x in X:
        assert same(laws.t_cdf(x, df), stats.t.cdf(x, df)) and same(laws.t_sf(x, df), stats.t.sf(x, df)), x
    for q in Q:
        assert same(laws.t_ppf(q, df), stats.t.ppf(q, df)), q
    n = np.array([2, 3, 10, 100, 5000])  # pipeline.results.aggregate: an array of degrees of freedom
    assert same(laws.t_ppf(0.975, n - 1), stats.t.ppf(0.975, n - 1))


def test_the_normal_law_is_scipy_stats_value_for_value():
    for x in X:
        assert same(laws.norm_cdf(x), stats.norm.cdf(x)) and same(laws.norm_sf(x), stats.norm.sf(x)), x
    for q in Q:
        assert same(laws.norm_ppf(q), stats.norm.ppf(q)), q
