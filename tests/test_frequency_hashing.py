"""Correctness of the oracles of issue 28: local hashing (OLH, BLH), subset selection (SS) and
Hadamard response (HR). Tolerances as in tests/test_frequency.py (5 standard errors from the exact
variances; variance ratios within 5·sqrt(2/(R−1)); chi-square at level 1e-4)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats
from test_frequency import TRUE_COUNTS, mean_ok, var_ok

from ldprepro.domain.frequency import BLH, HR, OLH, SS, get_oracle, olh_g, optimal_subset_size, splitmix_hash
from ldprepro.domain.frequency.hadamard import fwht
from ldprepro.pipeline.seeding import rng_for

SEED = 20260428
NEW = ["olh", "blh", "ss", "hr"]


def test_parameters_match_the_papers():
    for eps in (0.1, 0.5, 1.0, 2.0, 4.0, 8.0):
        assert OLH(16, eps).g == int(round(math.exp(eps))) + 1 == olh_g(eps)
        assert BLH(16, eps).g == 2
        o = OLH(16, eps)
        assert o.p_true == pytest.approx(math.exp(eps) / (math.exp(eps) + o.g - 1)) and o.p_other == 1 / o.g
        h = HR(16, eps)
        assert h.K == 32 and h.p_true == pytest.approx(math.exp(eps) / (math.exp(eps) + 1)) and h.p_other == 0.5
    assert HR(15, 1.0).K == 16 and HR(2, 1.0).K == 4
    s = SS(10, 1.0, d=3)
    pt = 3 * math.e / (3 * math.e + 7)
    assert s.p_true == pytest.approx(pt) and s.p_other == pytest.approx((pt * 2 + (1 - pt) * 3) / 9)


@pytest.mark.parametrize("k", [2, 3, 10, 64, 1000])
@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0, 8.0])
def test_ss_default_size_is_the_exact_optimum_next_to_k_over_e_eps_plus_1(k, eps):
    d = optimal_subset_size(k, eps)
    assert abs(d - k / (math.exp(eps) + 1)) < 1 or d == 1
    best = min(SS(k, eps, d=j).count_variance(1000) for j in range(1, k))
    assert SS(k, eps).count_variance(1000) == pytest.approx(best, rel=1e-12)


def test_olh_variance_at_g_e_eps_plus_1_is_wang_et_al_s_and_independent_of_k():
    eps = math.log(3.0)  # e^ε = 3, g = 4 = e^ε + 1 exactly
    for k in (4, 64, 4096):
        o = OLH(k, eps)
        assert o.g == 4
        assert o.count_variance(1000) == pytest.approx(1000 * 4 * 3 / (3 - 1) ** 2)


@pytest.mark.parametrize("name", NEW)
def test_bad_input_is_refused_naming_the_value(name):
    o = get_oracle(name, 5, 1.0)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="got 5"):
        o.perturb(np.array([0, 1, 5]), rng)
    with pytest.raises(ValueError, match="got 1.5"):
        o.perturb(np.array([0.0, 1.5]), rng)
    with pytest.raises(ValueError, match="shape"):
        o.sample_support_counts(np.array([1, 2]), rng)
    for eps in (0, -1.0, float("nan"), float("inf"), "x"):
        with pytest.raises(ValueError, match="eps must be a positive finite number"):
            get_oracle(name, 5, eps)
    with pytest.raises(ValueError, match="got 1"):
        get_oracle(name, 1, 1.0)


def test_bad_parameters_are_named():
    with pytest.raises(ValueError, match="subset size d must be an integer in 1..4 for k=5, got 5"):
        SS(5, 1.0, d=5)
    with pytest.raises(ValueError, match="got 0"):
        get_oracle("ss", 5, 1.0, d=0)
    with pytest.raises(ValueError, match="unknown parameter"):
        get_oracle("olh", 5, 1.0, d=2)
    with pytest.raises(ValueError, match="eps=30"):
        OLH(5, 30)
    with pytest.raises(ValueError, match="got 8"):
        HR(5, 1.0).support_counts(np.array([0, 8]))
    with pytest.raises(ValueError, match="got 3"):
        BLH(5, 1.0).support_counts((np.array([1, 2], dtype=np.uint64), np.array([0, 3])))


def test_splitmix_hash_is_splitmix64():
    """Against a plain-Python SplitMix64 (Steele, Lea, Flood 2014): the (x+1)-th output mod g."""
    mask = (1 << 64) - 1

    def reference(seed, x, g):
        z = (seed + (x + 1) * 0x9E3779B97F4A7C15) & mask
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        return (z ^ (z >> 31)) % g

    seeds = [0, 1, 12345, (1 << 64) - 1, 0xDEADBEEFCAFEBABE]
    for s, x, g in itertools.product(seeds, [0, 1, 7, 4095], [2, 3, 2982]):
        assert splitmix_hash(np.uint64(s), x, g) == reference(s, x, g)


def test_hash_values_are_uniform_and_pairwise_independent():
    """H_s(x) over 200000 seeds: uniform on [g] and (H(0), H(1)) uniform on [g]² (chi-square)."""
    g = 5
    seeds = np.random.default_rng(1).integers(0, 2**64 - 1, size=200_000, dtype=np.uint64, endpoint=True)
    h0, h1 = splitmix_hash(seeds, 0, g), splitmix_hash(seeds, 1, g)
    for obs, cells in ((np.bincount(h0, minlength=g), g), (np.bincount(h0 * g + h1, minlength=g * g), g * g)):
        stat = ((obs - seeds.size / cells) ** 2 / (seeds.size / cells)).sum()
        assert stat <= stats.chi2.ppf(1 - 1e-4, cells - 1)


@pytest.mark.parametrize("name", NEW)
@pytest.mark.parametrize("eps", [0.1, 1.0, 4.0])
def test_exact_loss_is_eps(name, eps):
    o = get_oracle(name, 16, eps)
    assert o.epsilon_exact == pytest.approx(eps, rel=1e-9)
    np.testing.assert_allclose(o.support_pair_pmf().sum(), 1.0)


def test_full_laws_give_the_same_exact_loss():
    """The support-pair law's loss against the full laws, enumerated: every subset (SS, k = 6),
    every output (HR), every hash value for 2000 recorded seeds (local hashing)."""
    eps = 1.3
    ss = SS(6, eps, d=2)
    subsets = np.array([[int(i in c) for i in range(6)] for c in itertools.combinations(range(6), 2)])
    logp = np.stack([ss.log_pmf(x, subsets) for x in range(6)])
    np.testing.assert_allclose(np.exp(logp).sum(axis=1), 1.0)
    assert (logp.max(axis=0) - logp.min(axis=0)).max() == pytest.approx(ss.epsilon_exact)
    hr = HR(6, eps)
    pmf = hr.pmf(np.arange(6))
    np.testing.assert_allclose(pmf.sum(axis=1), 1.0)
    assert np.log(pmf.max(axis=0) / pmf.min(axis=0)).max() == pytest.approx(hr.epsilon_exact)
    for o in (OLH(6, eps), BLH(6, eps)):
        seeds = np.arange(2000, dtype=np.uint64)
        table = np.stack([o.pmf(x, seeds) for x in range(6)])  # (x, seed, y); seeds are uniform
        np.testing.assert_allclose(table.sum(axis=2), 1.0)
        assert np.log(table.max(axis=0) / table.min(axis=0)).max() == pytest.approx(o.epsilon_exact)


@pytest.mark.parametrize("name", NEW)
def test_support_pair_law_of_the_real_perturbation(name):
    """(report supports 0, supports 1) for a user with value 0: chi-square against support_pair_pmf."""
    o = get_oracle(name, 7, 1.5)
    rng = rng_for(SEED, {"test": "pair_law", "oracle": name})
    reports = o.perturb(np.zeros(60_000, dtype=int), rng)
    if name in ("olh", "blh"):
        seeds, y = reports
        a, b = splitmix_hash(seeds, 0, o.g) == y, splitmix_hash(seeds, 1, o.g) == y
    elif name == "hr":
        a, b = o.in_set(0, reports), o.in_set(1, reports)
    else:
        a, b = reports[:, 0] == 1, reports[:, 1] == 1
    obs = np.bincount(2 * a.astype(int) + b.astype(int), minlength=4)
    expected = o.support_pair_pmf().reshape(-1) * obs.sum()
    pos = expected > 0  # SS with d = 1 never reports both
    assert (obs[~pos] == 0).all()
    stat = ((obs[pos] - expected[pos]) ** 2 / expected[pos]).sum()
    assert stat <= stats.chi2.ppf(1 - 1e-4, pos.sum() - 1), (obs, expected)


@pytest.mark.parametrize("name", NEW)
def test_per_user_path_unbiased_with_the_exact_variance(name):
    o = get_oracle(name, 6, 1.0)
    n, reps = int(TRUE_COUNTS.sum()), 1200
    rng = rng_for(SEED, {"test": "per_user", "oracle": name})
    values = np.repeat(np.arange(6), TRUE_COUNTS)
    est = np.array([o.estimate_counts(o.support_counts(o.perturb(values, rng)), n) for _ in range(reps)])
    var = o.count_variance(n, TRUE_COUNTS)
    mean_ok(est, TRUE_COUNTS, var)
    var_ok(est, var)


@pytest.mark.parametrize("name", NEW)
def test_sufficient_statistic_path_has_the_per_user_law(name):
    """sample_support_counts: mean, variance and covariance of the support counts equal the
    per-user path's (the exact joint law), and the estimates are unbiased with the exact variance."""
    k = 6
    o = get_oracle(name, k, 1.0)
    c = TRUE_COUNTS // 10  # n = 200
    n = int(c.sum())
    rng = rng_for(SEED, {"test": "suff", "oracle": name})
    reps = 4000
    sup = o.sample_support_counts(c, rng, size=reps)
    assert sup.shape == (reps, k) and o.sample_support_counts(c, rng).shape == (k,)
    sup_var = c * o.p_true * (1 - o.p_true) + (n - c) * o.p_other * (1 - o.p_other)
    mean_ok(sup, c * o.p_true + (n - c) * o.p_other, sup_var)
    var_ok(sup, sup_var)
    values = np.repeat(np.arange(k), c)
    per_user = np.array([o.support_counts(o.perturb(values, rng)) for _ in range(reps)])
    # covariance of two counts: the difference of the two paths' sample covariances, 5 SE of it
    # (SE from each path's products, independent paths)
    for i, j in [(0, 2), (2, 5), (1, 3)]:
        pa = (sup[:, i] - sup[:, i].mean()) * (sup[:, j] - sup[:, j].mean())
        pb = (per_user[:, i] - per_user[:, i].mean()) * (per_user[:, j] - per_user[:, j].mean())
        se = math.sqrt(pa.var(ddof=1) / reps + pb.var(ddof=1) / reps)
        assert abs(pa.mean() - pb.mean()) <= 5 * se, (i, j, pa.mean(), pb.mean())
    if name == "ss":
        assert (sup.sum(axis=1) == n * o.d).all() and (per_user.sum(axis=1) == n * o.d).all()
    est = o.estimate_counts(sup, n)
    mean_ok(est, c, o.count_variance(n, c))


def test_ss_joint_sampler_has_the_negative_covariance_of_the_law():
    """Two values' support counts under SS: Cov = −Σ_users Cov of memberships (exactly d per report),
    computed in closed form for users of a third value, against 20000 draws."""
    o = SS(5, 0.7, d=2)
    c = np.array([0, 0, 300, 0, 0])  # every user has value 2; counts of values 0 and 1
    rng = rng_for(SEED, "ss_cov")
    sup = o.sample_support_counts(c, rng, size=8000)
    # P(0 ∈ S and 1 ∈ S | v = 2) = p_t·C(k−3, d−3)/C(k−1, d−1) + (1 − p_t)·C(k−3, d−2)/C(k−1, d), with C(2, −1) = 0
    pt = o.p_true
    both = (1 - pt) * math.comb(2, 0) / math.comb(4, 2)
    cov = 300 * (both - o.p_other**2)
    prod = (sup[:, 0] - sup[:, 0].mean()) * (sup[:, 1] - sup[:, 1].mean())
    assert abs(prod.mean() - cov) <= 5 * prod.std(ddof=1) / math.sqrt(prod.size)


@pytest.mark.parametrize("eps", [0.1, 1.0, 6.0])
def test_hr_histogram_law_has_the_exact_cell_law(eps):
    """sample_histograms: every draw holds the n reports; each cell's mean and variance are the exact
    Σ_v c_v·π_v(y) and Σ_v c_v·π_v(y)(1 − π_v(y)) (π_v the pmf), to 5 standard errors; the drawn
    blocks (several repetitions per block, a last partial block) join seamlessly."""
    o = HR(6, eps)
    c = np.array([40, 0, 7, 150, 1, 25])  # a value without users
    reps = 3001
    hist = o.sample_histograms(c, rng_for(SEED, {"test": "hr_hist", "eps": eps}), reps)
    assert hist.shape == (reps, o.K) and (hist.sum(axis=1) == c.sum()).all() and (hist >= 0).all()
    pi = o.pmf(np.arange(6))  # (k, K)
    mean, var = c @ pi, c @ (pi * (1 - pi))
    mean_ok(hist, mean, var)
    var_ok(hist, var)


def test_hr_chooses_the_cheaper_exact_sampler():
    """The histogram law when V·K ≤ n (V the values with users), the n per-user reports otherwise;
    a seed gives one draw either way, and the choice depends on the counts and K only."""
    o = HR(6, 1.0)  # K = 8
    assert o.histogram_law_cheaper(np.array([8, 8, 0, 0, 0, 0]))  # V·K = 2·8 ≤ n = 16
    assert not o.histogram_law_cheaper(np.array([8, 7, 0, 0, 0, 0]))
    calls = []

    class Spy(HR):
        def sample_histograms(self, *a):
            calls.append("law")
            return super().sample_histograms(*a)

        def perturb(self, *a):
            calls.append("user")
            return super().perturb(*a)

    spy = Spy(6, 1.0)
    spy.sample_support_counts(np.array([8, 8, 0, 0, 0, 0]), rng_for(SEED, "cheap"), size=3)
    spy.sample_support_counts(np.array([8, 7, 0, 0, 0, 0]), rng_for(SEED, "dear"), size=3)
    assert calls == ["law", "user", "user", "user"]
    for counts in ([400, 50, 0, 3, 0, 9], [1, 1, 1, 1, 1, 1]):
        a = o.sample_support_counts(np.array(counts), rng_for(SEED, "same"), size=4)
        np.testing.assert_array_equal(a, o.sample_support_counts(np.array(counts), rng_for(SEED, "same"), size=4))


def test_hr_fast_transform_is_the_hadamard_matrix():
    h = HR(11, 1.0)
    y = np.arange(h.K)
    members = np.array([[h.in_set(x, j) for j in y] for x in range(11)])
    assert (members.sum(axis=1) == h.K // 2).all()
    assert ((members[:, None, :] & members[None, :, :]).sum(axis=2)[~np.eye(11, dtype=bool)] == h.K // 4).all()
    hist = np.random.default_rng(2).integers(0, 50, size=h.K)
    np.testing.assert_array_equal(h.support_from_histogram(hist), members.astype(int) @ hist)
    sylvester = np.array([[(-1) ** bin(r & j).count("1") for j in y] for r in y])
    np.testing.assert_array_equal(fwht(hist), sylvester @ hist)


@pytest.mark.parametrize("name", NEW)
def test_same_seed_same_reports_and_the_hash_is_recorded(name):
    o = get_oracle(name, 9, 2.0)
    v = np.arange(9).repeat(20)
    a, b = o.perturb(v, np.random.default_rng(5)), o.perturb(v, np.random.default_rng(5))
    if name in ("olh", "blh"):
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])
        # the collector recomputes every hash from the recorded seeds alone
        assert o.support_counts(a).sum() == sum((splitmix_hash(a[0], x, o.g) == a[1]).sum() for x in range(9))
    else:
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", NEW)
@pytest.mark.parametrize("k", [2, 16, 1000])
def test_exact_on_every_eps_accepted_else_refused_naming_eps(name, k):
    """From ε = 1e-12 to 800: the exact loss equals ε (relative 1e-9) wherever the oracle is built;
    otherwise it refuses, naming ε (OLH beyond a 2^40-value hash range; all beyond ε = 700)."""
    for eps in (1e-12, 1e-9, 1e-6, 1e-3, 0.5, 5.0, 20.0, 27.0, 50.0, 300.0, 650.0, 700.0, 701.0, 800.0):
        try:
            o = get_oracle(name, k, eps)
        except ValueError as err:
            assert f"eps={eps!r}" in str(err)
            assert eps > 700 or (name == "olh" and eps > 27.7)
            continue
        assert o.epsilon_exact == pytest.approx(eps, rel=1e-9), (name, k, eps)
        assert np.all(o.support_pair_pmf() >= 0) and o.support_pair_pmf().sum() == pytest.approx(1.0)
