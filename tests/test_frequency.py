"""Correctness tests for ldprepro.domain.frequency (GRR, SUE, OUE, RAPPOR-style UE).

Statistical tests use fixed seeds and tolerances derived from the closed-form variances:

* a mean over R independent estimates is accepted if |mean - truth| <= 5 SE, SE = sqrt(Var/R) with Var
  the oracle's exact ``count_variance``;
* a sample variance s² over R replicates of an (approximately normal) estimate is accepted if
  |s²/σ² - 1| <= 5·sqrt(2/(R-1)) (the standard error of s²/σ² under normality; the estimates are sums
  of thousands of Bernoulli draws, so their excess kurtosis is O(1/n) and negligible);
* distributions over a finite set are compared with a Pearson chi-square test at level 1e-4
  (critical value from scipy.stats.chi2).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from ldprepro.domain.frequency import (
    GRR,
    ORACLES,
    OUE,
    SUE,
    RapporUE,
    get_oracle,
    grr_perturb,
    rappor_channel,
    rappor_privacy,
)
from ldprepro.pipeline.seeding import rng_for

Z = 5.0  # acceptance in standard errors (Bonferroni over the suite's few thousand checks, see stats_helpers)
SEED = 20240611


def make(name: str, k: int):
    if name == "rappor":
        return get_oracle("rappor", k, f=0.25, p=0.5, q=0.75)
    return get_oracle(name, k, 1.0)


def mean_ok(sample: np.ndarray, truth: np.ndarray, var: np.ndarray) -> None:
    r = sample.shape[0]
    se = np.sqrt(var / r)
    z = (sample.mean(axis=0) - truth) / se
    assert np.all(np.abs(z) <= Z), f"mean off by z = {z}"


def var_ok(sample: np.ndarray, var: np.ndarray) -> None:
    r = sample.shape[0]
    ratio = sample.var(axis=0, ddof=1) / var
    tol = Z * math.sqrt(2.0 / (r - 1))
    assert np.all(np.abs(ratio - 1) <= tol), f"variance ratio {ratio} outside 1 ± {tol:.3f}"


# ------------------------------------------------------------------------------------------------
# parameters, validation, factory
# ------------------------------------------------------------------------------------------------


def test_parameters_match_papers():
    e = 1.3
    g = GRR(7, e)
    assert g.p == pytest.approx(math.exp(e) / (math.exp(e) + 6))
    assert g.q == pytest.approx(1 / (math.exp(e) + 6))
    s = SUE(7, e)
    assert s.p == pytest.approx(math.exp(e / 2) / (math.exp(e / 2) + 1))
    assert s.q == pytest.approx(1 / (math.exp(e / 2) + 1))
    o = OUE(7, e)
    assert o.p == 0.5 and o.q == pytest.approx(1 / (math.exp(e) + 1))
    r = RapporUE(7, f=0.3, p=0.5, q=0.75)
    assert r.q_star == pytest.approx(0.5 * 0.3 * 1.25 + 0.7 * 0.75)
    assert r.p_star == pytest.approx(0.5 * 0.3 * 1.25 + 0.7 * 0.5)
    # the paper's q=0.75, p=0.5 shortcut: q* = 0.75 - 0.125 f, p* = 0.5 + 0.125 f
    assert r.q_star == pytest.approx(0.75 - 0.125 * 0.3) and r.p_star == pytest.approx(0.5 + 0.125 * 0.3)
    assert (r.p_true, r.p_other) == (r.q_star, r.p_star)


def test_factory_and_registry():
    assert set(ORACLES) == {"grr", "sue", "oue", "olh", "blh", "ss", "hr", "rappor"}
    assert isinstance(get_oracle("GRR", 4, 1.0), GRR)
    assert isinstance(get_oracle("oue", 4, 1.0), OUE)
    assert isinstance(get_oracle("rappor", 4, f=0.5), RapporUE)
    with pytest.raises(ValueError, match="unknown frequency oracle 'cms'"):
        get_oracle("cms", 4, 1.0)
    with pytest.raises(ValueError, match="not eps"):
        get_oracle("rappor", 4, 1.0, f=0.5)
    with pytest.raises(ValueError, match="needs the permanent-RR parameter f"):
        get_oracle("rappor", 4)
    with pytest.raises(ValueError, match="needs eps"):
        get_oracle("sue", 4)
    with pytest.raises(ValueError, match="unknown parameter"):
        get_oracle("grr", 4, 1.0, f=0.2)


@pytest.mark.parametrize("name", ["grr", "sue", "oue", "rappor"])
def test_bad_values_named(name):
    o = make(name, 5)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="got 5"):
        o.perturb(np.array([0, 1, 5]), rng)
    with pytest.raises(ValueError, match="got -1"):
        o.perturb(np.array([0, -1]), rng)
    with pytest.raises(ValueError, match="got 1.5"):
        o.perturb(np.array([0.0, 1.5]), rng)
    with pytest.raises(ValueError, match="shape"):
        o.sample_support_counts(np.array([1, 2]), rng)


@pytest.mark.parametrize("cls", [GRR, SUE, OUE])
@pytest.mark.parametrize("eps", [0, -1.0, float("nan"), float("inf"), "x"])
def test_bad_eps(cls, eps):
    with pytest.raises(ValueError, match="eps must be a positive finite number"):
        cls(4, eps)


def test_bad_k_and_rappor_params():
    with pytest.raises(ValueError, match="got 1"):
        GRR(1, 1.0)
    with pytest.raises(ValueError, match=r"f must lie in \[0, 1\), got 1"):
        RapporUE(4, f=1)
    with pytest.raises(ValueError, match=r"f must lie in \[0, 1\), got -0.1"):
        RapporUE(4, f=-0.1)
    with pytest.raises(ValueError, match=r"q must lie in \[0, 1\], got 1.2"):
        RapporUE(4, f=0.2, q=1.2)
    with pytest.raises(ValueError, match="p != q"):
        RapporUE(4, f=0.2, p=0.6, q=0.6)


# ------------------------------------------------------------------------------------------------
# exact privacy from the probabilities
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("k", [2, 5, 50])
@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0])
def test_grr_pmf_exact_ldp(k, eps):
    g = GRR(k, eps)
    pm = g.pmf(np.arange(k))
    np.testing.assert_allclose(pm.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(pm, g.channel)
    worst = (pm.max(axis=0) / pm.min(axis=0)).max()
    assert worst <= math.exp(eps) * (1 + 1e-12)
    assert worst == pytest.approx(math.exp(eps), rel=1e-12)
    assert g.epsilon_exact == pytest.approx(eps, rel=1e-12)
    assert g.pmf(np.array([[0, 1]])).shape == (1, 2, k)


@settings(max_examples=30, deadline=None)
@given(k=st.integers(2, 300), eps=st.floats(0.01, 30))
def test_grr_ldp_property(k, eps):
    g = GRR(k, eps)
    ch = g.channel
    assert np.allclose(ch.sum(axis=1), 1.0)
    assert np.log(ch.max(axis=0) / ch.min(axis=0)).max() <= eps * (1 + 1e-9) + 1e-12


def _enumerated_worst_log_ratio(oracle, pmf_bit) -> float:
    """ln max_{x, x', y} Pr(y|x)/Pr(y|x') enumerating all 2^k outputs, from per-bit probabilities."""
    k = oracle.k
    ys = np.array(list(itertools.product([0, 1], repeat=k)))  # (2^k, k)
    logp = np.empty((k, ys.shape[0]))
    for x in range(k):
        true_bits = (np.arange(k) == x).astype(int)
        logp[x] = np.log(pmf_bit(true_bits[None, :], ys)).sum(axis=1)
    return float((logp.max(axis=0) - logp.min(axis=0)).max())


@pytest.mark.parametrize("cls", [SUE, OUE])
@pytest.mark.parametrize("eps", [0.5, 1.0, 4.0])
def test_ue_exact_ldp_by_enumeration(cls, eps):
    o = cls(4, eps)
    worst = _enumerated_worst_log_ratio(o, o.pmf_bit)
    assert worst <= eps + 1e-12
    assert worst == pytest.approx(eps, rel=1e-12)
    assert o.epsilon_exact == pytest.approx(eps, rel=1e-12)
    # log_pmf is consistent with pmf_bit and normalised
    ys = np.array(list(itertools.product([0, 1], repeat=4)))
    assert np.exp(o.log_pmf(2, ys)).sum() == pytest.approx(1.0)


@pytest.mark.parametrize(
    "f, qs, ps, per_attr, rec16, perm16",
    [(0.1, 0.7375, 0.5125, 0.983, 15.7, 94.2), (0.5, 0.6875, 0.5625, 0.537, 8.59, 35.2)],
)
def test_rappor_spec_table(f, qs, ps, per_attr, rec16, perm16):
    """docs/papers/lremh.md §3 table (q = 0.75, p = 0.5), values given to the printed precision."""
    r = get_oracle("rappor", 16, f=f)
    assert r.q_star == pytest.approx(qs, abs=1e-12) and r.p_star == pytest.approx(ps, abs=1e-12)
    assert rappor_channel(f, 0.5, 0.75) == pytest.approx((qs, ps))
    assert round(r.instantaneous_epsilon_per_attribute, 3) == per_attr
    rec_decimals = len(str(rec16).split(".")[1])  # the table's printed precision
    assert round(r.instantaneous_epsilon_record(16), rec_decimals) == rec16
    assert round(r.permanent_epsilon(16), 1) == perm16
    priv = rappor_privacy(f, 0.5, 0.75, d=16)
    assert priv["instantaneous_eps_record"] == pytest.approx(16 * priv["instantaneous_eps_per_attribute"])
    assert set(priv) >= {"permanent_eps_record", "instantaneous_eps_per_attribute", "instantaneous_eps_record"}


def test_rappor_privacy_by_enumeration():
    """One attribute (d=1): the enumerated combined-channel loss is Theorem 2's per-attribute value, and the
    permanent stage's is 2·ln((1-f/2)/(f/2)) = Theorem 1 with d = 1."""
    r = RapporUE(4, f=0.3)
    assert _enumerated_worst_log_ratio(r, r.pmf_bit) == pytest.approx(r.instantaneous_epsilon_per_attribute, rel=1e-12)
    assert r.epsilon_exact == pytest.approx(r.instantaneous_epsilon_per_attribute, rel=1e-12)
    assert _enumerated_worst_log_ratio(r, r.pmf_bit_permanent) == pytest.approx(r.permanent_epsilon(1), rel=1e-12)
    assert r.permanent_epsilon(3) == pytest.approx(3 * r.permanent_epsilon(1))


# ------------------------------------------------------------------------------------------------
# unbiasedness and closed-form variance
# ------------------------------------------------------------------------------------------------

TRUE_COUNTS = np.array([700, 0, 300, 100, 50, 850])  # n = 2000, k = 6 (includes a zero count)


@pytest.mark.parametrize("name", ["grr", "sue", "oue", "rappor"])
def test_per_user_path_unbiased_and_variance(name):
    o = make(name, 6)
    n, reps = int(TRUE_COUNTS.sum()), 1500
    rng = rng_for(SEED, {"test": "per_user_path", "oracle": name})
    values = np.repeat(np.arange(6), TRUE_COUNTS)
    est = np.empty((reps, 6))
    for r in range(reps):
        est[r] = o.estimate_counts(o.support_counts(o.perturb(values, rng)), n)
    var = o.count_variance(n, TRUE_COUNTS)
    mean_ok(est, TRUE_COUNTS, var)
    var_ok(est, var)
    # frequency scale agrees
    np.testing.assert_allclose(o.frequency_variance(n, TRUE_COUNTS / n), var / n**2)
    np.testing.assert_allclose(o.count_variance(n, freq=TRUE_COUNTS / n), var)


def test_rappor_two_stage_path_unbiased_and_variance():
    o = make("rappor", 6)
    rng = rng_for(SEED, {"test": "two_stage"})
    values = np.repeat(np.arange(6), TRUE_COUNTS)
    n, reps = values.size, 1500
    est = np.array([o.estimate_counts(o.support_counts(o.perturb_two_stage(values, rng)), n) for _ in range(reps)])
    var = o.count_variance(n, TRUE_COUNTS)
    mean_ok(est, TRUE_COUNTS, var)
    var_ok(est, var)


@pytest.mark.parametrize("name", ["grr", "sue", "oue", "rappor"])
def test_sufficient_statistic_path(name):
    """sample_support_counts: support-count mean and variance exact; estimates unbiased with the closed-form
    variance (R = 20000 replicates, so the variance tolerance is ±5·sqrt(2/R) ≈ ±5%)."""
    k = 6
    o = make(name, k)
    c = TRUE_COUNTS * 50  # n = 100000
    n = int(c.sum())
    rng = rng_for(SEED, {"test": "suffstat", "oracle": name})
    reps = 20000
    sup = o.sample_support_counts(c, rng, size=reps)
    assert sup.shape == (reps, k)
    sup_mean = c * o.p_true + (n - c) * o.p_other
    sup_var = c * o.p_true * (1 - o.p_true) + (n - c) * o.p_other * (1 - o.p_other)
    mean_ok(sup, sup_mean, sup_var)
    var_ok(sup, sup_var)
    est = o.estimate_counts(sup, n)
    var = o.count_variance(n, c)
    np.testing.assert_allclose(var, sup_var / (o.p_true - o.p_other) ** 2)
    mean_ok(est, c, var)
    var_ok(est, var)
    if name == "grr":
        assert np.all(sup.sum(axis=1) == n)  # a GRR report supports exactly one value
        np.testing.assert_allclose(o.estimate_counts(sup).sum(axis=1), n)  # n inferred
    single = o.sample_support_counts(c, rng)
    assert single.shape == (k,)


def test_ue_needs_n():
    with pytest.raises(ValueError, match="number of users n is required"):
        OUE(4, 1.0).estimate_counts(np.array([1, 2, 3, 4]))


# ------------------------------------------------------------------------------------------------
# distributions of single reports
# ------------------------------------------------------------------------------------------------


def _chi2_ok(observed: np.ndarray, expected_probs: np.ndarray) -> None:
    n = observed.sum()
    expected = n * expected_probs
    stat = ((observed - expected) ** 2 / expected).sum()
    crit = stats.chi2.ppf(1 - 1e-4, df=observed.size - 1)
    assert stat <= crit, f"chi-square {stat:.1f} > {crit:.1f}"


def test_grr_report_distribution():
    """Per-user GRR reports follow pmf(x) (chi-square, k = 5, 200000 users per true value)."""
    g = GRR(5, 0.8)
    rng = rng_for(SEED, "grr_dist")
    for x in range(5):
        rep = g.perturb(np.full(200_000, x), rng)
        _chi2_ok(np.bincount(rep, minlength=5), g.pmf(x))
    # per-user budgets: the level perturbation of LHP uses grr_perturb with an eps array
    e = np.where(np.arange(200_000) % 2 == 0, 0.5, 3.0)
    rep = grr_perturb(np.zeros(200_000, dtype=int), 5, e, rng)
    _chi2_ok(np.bincount(rep[::2], minlength=5), GRR(5, 0.5).pmf(0))
    _chi2_ok(np.bincount(rep[1::2], minlength=5), GRR(5, 3.0).pmf(0))


@pytest.mark.parametrize("path", ["one_shot", "two_stage"])
def test_rappor_paths_agree_with_exact_pattern_pmf(path):
    """Both RAPPOR paths produce, for each value, the exact joint law of the k = 3 bits: independent
    Bernoulli(q*) on the true bit and Bernoulli(p*) elsewhere (chi-square over the 8 patterns)."""
    r = RapporUE(3, f=0.4, p=0.5, q=0.75)
    rng = rng_for(SEED, {"test": "rappor_paths", "path": path})
    ys = np.array(list(itertools.product([0, 1], repeat=3)))
    for x in range(3):
        vals = np.full(200_000, x)
        bits = r.perturb(vals, rng) if path == "one_shot" else r.perturb_two_stage(vals, rng)
        assert bits.dtype == np.uint8 and bits.shape == (200_000, 3)
        codes = bits.astype(int) @ np.array([4, 2, 1])
        observed = np.bincount(codes, minlength=8)
        expected = np.exp(r.log_pmf(x, ys))
        _chi2_ok(observed, expected)


def test_rappor_permanent_is_memoisable():
    """Re-running only the instantaneous stage on memoised permanent bits gives fresh reports whose
    bits follow Bernoulli(q) / Bernoulli(p) given the permanent bit."""
    r = RapporUE(8, f=0.5)
    rng = rng_for(SEED, "memo")
    perm = r.permanent(np.arange(100_000) % 8, rng)
    a, b = r.instantaneous(perm, rng), r.instantaneous(perm, rng)
    assert not np.array_equal(a, b)
    ones = perm.astype(bool)
    for rep in (a, b):
        for mask, prob in ((ones, r.q), (~ones, r.p)):
            m = mask.sum()
            z = (rep[mask].mean() - prob) / math.sqrt(prob * (1 - prob) / m)
            assert abs(z) <= Z
    # permanent stage law: Pr(1 | 1) = 1 - f/2, Pr(1 | 0) = f/2
    enc = r.encode(np.arange(100_000) % 8).astype(bool)
    for mask, prob in ((enc, 1 - r.f / 2), (~enc, r.f / 2)):
        m = mask.sum()
        assert abs((perm[mask].mean() - prob) / math.sqrt(prob * (1 - prob) / m)) <= Z
    with pytest.raises(ValueError, match="must be 0/1, got 2"):
        r.instantaneous(np.full((1, 8), 2), rng)


# ------------------------------------------------------------------------------------------------
# seeding and scale
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["grr", "sue", "oue", "rappor"])
def test_same_seed_same_output(name):
    o = make(name, 10)
    vals = np.arange(5000) % 10
    a = o.perturb(vals, rng_for(7, {"o": name}))
    b = o.perturb(vals, rng_for(7, {"o": name}))
    c = o.perturb(vals, rng_for(7, {"o": name, "other": 1}))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    counts = np.bincount(vals, minlength=10)
    np.testing.assert_array_equal(
        o.sample_support_counts(counts, rng_for(7, "s"), size=3),
        o.sample_support_counts(counts, rng_for(7, "s"), size=3),
    )


def test_large_n_shapes():
    """n = 10^6 runs vectorised (GRR and OUE) and the per-user estimates are consistent."""
    rng = rng_for(SEED, "large")
    n, k = 1_000_000, 16
    vals = rng.integers(0, k, n)
    true = np.bincount(vals, minlength=k)
    for o in (GRR(k, 1.0), OUE(k, 1.0)):
        rep = o.perturb(vals, rng)
        est = o.estimate_from_reports(rep)
        z = (est - true) / np.sqrt(o.count_variance(n, true))
        assert np.all(np.abs(z) <= Z)
