"""The statistical helpers fail on planted defects (issue 14: no test that cannot fail)."""

import numpy as np
import pytest
from scipy import stats
from stats_helpers import assert_continuous_law, assert_discrete_law, assert_mean, assert_variance

RNG = np.random.default_rng(20261123)


def test_assert_mean_catches_a_one_percent_bias():
    x = RNG.normal(0.0, 1.0, 1_000_000)
    assert_mean(x, 0.0, 1.0)
    with pytest.raises(AssertionError, match="SE"):
        assert_mean(x + 0.01, 0.0, 1.0)


def test_assert_variance_catches_a_five_percent_variance_error():
    x = RNG.normal(0.3, 1.0, 400_000)
    assert_variance(x, 0.3, 1.0)
    with pytest.raises(AssertionError, match="E\\(y-t\\)"):
        assert_variance(x, 0.3, 1.05)
    with pytest.raises(ValueError, match="too few"):
        assert_variance(x[:5], 0.3, 1.0)


def test_assert_variance_does_not_widen_its_tolerance_on_its_own_outliers():
    # the tested half has a huge outlier; the spare half is clean, so the tolerance stays small
    x = RNG.normal(0.0, 1.0, 20_000)
    x[-1] = 400.0
    with pytest.raises(AssertionError):
        assert_variance(x, 0.0, 1.0)


def test_assert_discrete_law_catches_a_shifted_pmf_and_refuses_too_few_samples():
    support, probs = np.array([-1.0, 0.0, 1.0]), np.array([0.3, 0.4, 0.3])
    x = RNG.choice(support, 200_000, p=probs)
    assert_discrete_law(x, support, probs)
    with pytest.raises(AssertionError, match="chi-square"):
        assert_discrete_law(x, support, np.array([0.29, 0.42, 0.29]))
    assert_discrete_law(np.zeros(5), support, np.array([0.0, 1.0, 0.0]))  # a point mass is exact
    # too few samples for a chi-square: the exact binomial test on the off-atom count still bites
    rare = np.array([1e-4, 1 - 2e-4, 1e-4])
    assert_discrete_law(np.zeros(1000), support, rare)
    planted = np.zeros(1000)
    planted[:8] = 1.0  # 8 off the likeliest atom where 0.2 are expected
    with pytest.raises(AssertionError, match="binomial"):
        assert_discrete_law(planted, support, rare)


def test_assert_continuous_law_catches_a_one_percent_scale_error():
    x = RNG.uniform(-1, 1, 1_000_000)
    assert_continuous_law(x, stats.uniform(-1, 2).cdf)
    with pytest.raises(AssertionError, match="KS"):
        assert_continuous_law(x * 1.01, stats.uniform(-1, 2).cdf)
