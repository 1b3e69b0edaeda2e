"""The halving sampler of subset selection's support counts (``domain/frequency/_subset_jit.py``)
against the exact joint law: the full law by enumeration on small alphabets (chi-square at level
1e-4, each way of drawing a multinomial on its own), the hypergeometric weights against scipy's
pmf, and the moments on a larger alphabet with uneven halves (5 standard errors, as
tests/test_frequency.py)."""

from __future__ import annotations

import collections
import itertools
import math

import numpy as np
import pytest
from scipy import stats
from test_frequency import mean_ok, var_ok

from ldprepro.domain.frequency import SS
from ldprepro.domain.frequency._subset_jit import TAIL, _weights, support_counts
from ldprepro.pipeline.seeding import rng_for

SEED = 20261127
ALPHA = 1e-4

# (k, d, ε, true counts): odd k (uneven halves), d = 1 and d = k − 1, values without users, one value
SMALL = [
    (2, 1, 1.0, [3, 2]),
    (3, 1, 1.0, [1, 1, 1]),
    (4, 2, 1.0, [1, 2, 0, 1]),
    (5, 2, 0.7, [2, 0, 1, 0, 2]),
    (5, 4, 0.5, [1, 1, 0, 2, 1]),
    (5, 2, 2.0, [0, 0, 5, 0, 0]),
    (6, 3, 0.3, [1, 0, 2, 1, 0, 1]),
]


def exact_law(k: int, d: int, eps: float, counts: list[int]) -> dict[tuple[int, ...], float]:
    """Pr(support-count vector) by convolving every user's report law Pr(S | v) ∝ e^ε·1[v ∈ S] + 1[v ∉ S]."""
    subsets = list(itertools.combinations(range(k), d))
    law = {(0,) * k: 1.0}
    for v, users in enumerate(counts):
        weights = np.array([math.exp(eps) if v in s else 1.0 for s in subsets])
        weights /= weights.sum()
        for _ in range(users):
            step: dict[tuple[int, ...], float] = collections.defaultdict(float)
            for state, p in law.items():
                for s, q in zip(subsets, weights):
                    nxt = list(state)
                    for x in s:
                        nxt[x] += 1
                    step[tuple(nxt)] += p * q
            law = step
    return law


@pytest.mark.parametrize("few", [0, 2, 10**9], ids=["binomials", "default", "inversions"])
@pytest.mark.parametrize("k,d,eps,counts", SMALL)
def test_the_draws_follow_the_exact_joint_law(k, d, eps, counts, few):
    """Every drawn vector is possible, and the vectors' frequencies pass a chi-square test against
    the enumerated law (cells of expected count < 5 pooled)."""
    draws = 60_000
    law = exact_law(k, d, eps, counts)
    o = SS(k, eps, d=d)
    rng = rng_for(SEED, {"test": "ss_tree_law", "k": k, "d": d, "few": few})
    sample = support_counts(np.array(counts, dtype=np.int64), o.p_true, d, draws, rng, few)
    seen = collections.Counter(map(tuple, sample.tolist()))
    assert set(seen) <= set(law), sorted(set(seen) - set(law))[:3]
    cells = sorted(law, key=law.get, reverse=True)
    expected = np.array([law[c] * draws for c in cells])
    observed = np.array([seen.get(c, 0) for c in cells])
    big = expected >= 5  # the cells are sorted by expected count: the small ones pool at the end
    expected = np.append(expected[big][:-1], expected[big][-1] + expected[~big].sum())
    observed = np.append(observed[big][:-1], observed[big][-1] + observed[~big].sum())
    stat = ((observed - expected) ** 2 / expected).sum()
    assert stats.chi2.sf(stat, expected.size - 1) >= ALPHA, (stat, expected.size)


@pytest.mark.parametrize(
    "N,K,j", [(10, 4, 3), (41, 20, 19), (4096, 2048, 1946), (48842, 24000, 23000), (9, 9, 4), (7, 3, 7)]
)
def test_the_hypergeometric_weights_are_the_pmf_over_every_outcome_above_the_tail(N, K, j):
    """The weights, normalised, equal scipy's pmf; every outcome outside the window weighs less than
    TAIL × the mode's; ``order`` sorts the weights in decreasing order and ``acc`` sums its tail."""
    size = min(N, K, j) + 2
    w, acc = np.empty(size), np.empty(size)
    order = np.empty(size, dtype=np.int64)
    lo, count = _weights(N, K, j, w, order, acc)
    outcomes = np.arange(max(0, j - (N - K)), min(j, K) + 1)
    pmf = stats.hypergeom(N, K, j).pmf(outcomes)
    inside = (outcomes >= lo) & (outcomes < lo + count)
    np.testing.assert_allclose(w[:count] / w[:count].sum(), pmf[inside] / pmf[inside].sum(), rtol=1e-9)
    assert (pmf[~inside] < TAIL * pmf.max()).all()
    assert pmf[inside].min() >= TAIL * pmf.max() * (1 - 1e-6) or count == outcomes.size
    ranked = w[order[:count]]
    assert (np.diff(ranked) <= 0).all() and sorted(order[:count]) == list(range(count))
    np.testing.assert_allclose(acc[:count], np.cumsum(ranked[::-1])[::-1], rtol=1e-12)


def test_moments_on_a_larger_alphabet_with_uneven_halves():
    """k = 37, n = 20,000: each support count has the exact mean and variance of
    Binomial(c_x, p_true) + Binomial(n − c_x, p_other); every draw holds n·d memberships."""
    k, eps = 37, 0.5
    c = rng_for(SEED, "ss_tree_counts").multinomial(20_000, np.linspace(1, 3, k) / np.linspace(1, 3, k).sum())
    c[5] = 0
    o = SS(k, eps)
    n, draws = int(c.sum()), 4000
    sup = support_counts(c, o.p_true, o.d, draws, rng_for(SEED, "ss_tree_moments"))
    assert (sup.sum(axis=1) == n * o.d).all() and (sup >= 0).all()
    var = c * o.p_true * (1 - o.p_true) + (n - c) * o.p_other * (1 - o.p_other)
    mean_ok(sup, c * o.p_true + (n - c) * o.p_other, var)
    var_ok(sup, var)


def test_no_users_give_no_support():
    o = SS(9, 1.0)
    out = support_counts(np.zeros(9, dtype=np.int64), o.p_true, o.d, 3, rng_for(SEED, "empty"))
    assert out.shape == (3, 9) and not out.any()


def test_the_oracle_halves_the_alphabet_exactly_when_draws_are_at_most_twice_k(monkeypatch):
    """SS.sample_support_counts takes the halving sampler for draws ≤ 2k, the visit in order above;
    one seed gives one result either way."""
    import ldprepro.domain.frequency.subset as subset

    o = SS(8, 1.0)
    assert o.tree_is_cheaper(16) and not o.tree_is_cheaper(17)
    calls = []
    monkeypatch.setattr(subset, "_tree_sampler", lambda: lambda *a: calls.append(a[3]) or support_counts(*a))
    c = np.array([5, 0, 3, 9, 1, 0, 2, 4])
    one = o.sample_support_counts(c, rng_for(SEED, "choice"), size=16)
    assert calls == [16]
    np.testing.assert_array_equal(one, o.sample_support_counts(c, rng_for(SEED, "choice"), size=16))
    assert o.sample_support_counts(c, rng_for(SEED, "choice")).shape == (8,) and calls[-1] == 1
    o.sample_support_counts(c, rng_for(SEED, "choice"), size=17)
    assert calls[-1] == 1  # the visit in order drew the 17
