"""The exact law of a sum of ±C reports (ldprepro.domain.binary_sum): the count of +C reports drawn by
blocks has the Poisson-binomial law of the per-user reports, checked against the exact pmf on small
cases that reach every path (blocks with and without undecided users, the redrawn indices, the
subsets drawn by ``choice``), the subsets' uniformity, the moments at a paper's size, and the mean
estimates that use it."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from ldprepro.domain import binary_sum
from ldprepro.domain.binary_sum import BinaryCount
from ldprepro.domain.mechanisms import get_mechanism
from ldprepro.domain.mechanisms.basic import Duchi, binary_reports
from ldprepro.experiments import mean as mean_module
from ldprepro.experiments.mean import AtLevelEstimator, PerturbAndAverage

DRAWS = 60_000
ALPHA = 1e-4


def poisson_binomial_pmf(p) -> np.ndarray:
    pmf = np.array([1.0])
    for q in p:
        pmf = np.convolve(pmf, [1.0 - q, q])
    return pmf


def _law_holds(p, block: int, monkeypatch, seed: int) -> None:
    monkeypatch.setattr(binary_sum, "BLOCK_USERS", block)
    count = BinaryCount(p)
    rng = np.random.default_rng(seed)
    draws = np.array([count.sample(rng) for _ in range(DRAWS)])
    pmf = poisson_binomial_pmf(p)
    seen = np.bincount(draws, minlength=pmf.size)
    assert seen.size == pmf.size and not seen[pmf == 0].any(), "an impossible count was drawn"
    keep = pmf * DRAWS >= 5  # pool the sparse tails, as a chi-square test needs
    observed = np.append(seen[keep], seen[~keep].sum())
    expected = np.append(pmf[keep], pmf[~keep].sum()) * DRAWS
    observed, expected = observed[expected > 0], expected[expected > 0]
    p_value = stats.chisquare(observed, expected).pvalue
    assert p_value > ALPHA, f"p = {p}, blocks of {block}: chi-square p = {p_value:.2e}"


@pytest.mark.parametrize(
    ("p", "block"),
    [
        ([0.1, 0.2, 0.35, 0.5, 0.6, 0.8, 0.95], 2),  # blocks of two: few undecided, redraws of equal indices
        ([0.1, 0.2, 0.35, 0.5, 0.6, 0.8, 0.95], 3),  # an uneven last block
        ([0.0, 0.01, 0.5, 0.99, 1.0, 0.02, 0.97, 0.98], 4),  # far-apart p: most users undecided (choice)
        ([0.3] * 6, 4),  # ties: no undecided user
        ([0.05, 0.9, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7], 9),  # one block
        ([0.25, 0.75], 1024),  # fewer users than a block
    ],
)
def test_the_count_has_the_poisson_binomial_law(p, block, monkeypatch):
    _law_holds(p, block, monkeypatch, seed=block)


def test_the_distinct_indices_are_a_uniform_subset():
    rng = np.random.default_rng(7)
    m, k, draws = 5, 3, 30_000
    subsets = {c: 0 for c in itertools.combinations(range(m), k)}
    for _ in range(draws):
        idx = binary_sum._distinct(np.full(k, m), np.zeros(k, dtype=np.int64), rng)
        assert len(set(idx.tolist())) == k and idx.min() >= 0 and idx.max() < m
        subsets[tuple(sorted(idx.tolist()))] += 1
    assert stats.chisquare(list(subsets.values())).pvalue > ALPHA


def test_moments_at_a_papers_size():
    """n = 10⁶ users of a Gaussian data set through Duchi's mechanism at ε = 1 and 10: the draws' mean
    and variance against Σ p_i and Σ p_i(1 − p_i)."""
    x = np.clip(np.random.default_rng(0).normal(0.0, 0.25, 1_000_000), -1, 1)
    for eps in (1.0, 10.0):
        p = get_mechanism("duchi", eps).prob_plus(x)
        count = BinaryCount(p)
        rng = np.random.default_rng(int(eps))
        draws = np.array([count.sample(rng) for _ in range(2000)], dtype=float)
        mean, var = p.sum(), (p * (1 - p)).sum()
        assert abs(draws.mean() - mean) / np.sqrt(var / draws.size) < 4.5
        # the sample variance of 2000 near-normal draws: sd ≈ var·√(2/1999)
        assert abs(draws.var(ddof=1) / var - 1) < 4.5 * np.sqrt(2 / 1999)


def test_inputs_outside_the_unit_interval_are_refused():
    with pytest.raises(ValueError, match=r"P\(\+C\) must lie in \[0, 1\]"):
        BinaryCount([0.2, 1.5])
    assert BinaryCount([]).sample(np.random.default_rng(0)) == 0


def test_mean_estimates_of_duchi_and_harmony_use_the_count_plugins_do_not(monkeypatch):
    class Shifted(Duchi):  # a plugin drawing otherwise: its own sampler must run
        name = "shifted_duchi"

        def _sample(self, x, u, lo=0.0, width=1.0):
            return super()._sample(x, u, lo, width)

    assert binary_reports(get_mechanism("duchi", 1.0)) and binary_reports(get_mechanism("harmony", 1.0))
    assert not binary_reports(Shifted(1.0)) and not binary_reports(get_mechanism("pm", 1.0))
    x = np.linspace(-1, 1, 5001)
    mech = get_mechanism("harmony", 0.5)
    est = PerturbAndAverage(mech)
    # below BLOCKS_FROM users every user is perturbed (cheaper there): the per-user estimate
    assert est.draws_every_report(x.size)
    assert est.estimate(x, np.random.default_rng(3)) == est.estimate_per_user(x, np.random.default_rng(3))
    monkeypatch.setattr(mean_module, "BLOCKS_FROM", 5000)
    assert not est.draws_every_report(x.size)
    got = est.estimate(x, np.random.default_rng(3))
    count = BinaryCount(mech.prob_plus(x))
    assert got == mech.c * (2 * count.sample(np.random.default_rng(3)) - x.size) / x.size
    # (n, 1): the estimate keeps the attribute axis, as the per-user path does
    assert np.shape(est.estimate(x[:, None], np.random.default_rng(3))) == (1,)
    # the level-budget reference sums Harmony's reports level by level from the counts
    at_level = AtLevelEstimator("harmony", 0.5)
    assert not at_level.draws_every_report(x.size) and at_level.draws_every_report(x.size - 2)
    draws = np.array([at_level.estimate(x, np.random.default_rng(s)) for s in range(400)])
    assert abs(draws.mean() - x.mean()) / np.sqrt(at_level.var_of_mean(x) / 400) < 4.5
    assert abs(draws.var(ddof=1) / at_level.var_of_mean(x) - 1) < 4.5 * np.sqrt(2 / 399)
