"""Every sufficient-statistics path has the law of the per-user path it replaces.

Each test draws R = 20,000 repetitions of the statistic both ways at a fixed seed and requires a
two-sample Kolmogorov–Smirnov test and a Welch t-test (Bonferroni over the statistics compared) not
to reject at α = 1e-3. Power is checked in the same test: the same comparison with a planted bias of
1% of the true value added to the sufficient path MUST reject (at these sizes the planted shift is
≥ 5 standard errors of the difference of the two means), so none of these tests can pass vacuously.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats
from stats_helpers import FixedWords

from ldprepro.domain.frequency import GRR
from ldprepro.domain.graded import LHP, GradedLevels, hiera_estimate_counts, lhp_report_counts, sort_by_level
from ldprepro.domain.mechanisms import get_multidim
from ldprepro.domain.sufficient import EXPONENTIALS_UP_TO, laplace_group_sum, laplace_sum, laplace_sums_per_step
from ldprepro.experiments.mean import GradedLaplaceEstimator, HierAEstimator, make_collector
from ldprepro.pipeline.seeding import rng_for

R = 20_000
ALPHA = 1e-3


def same_law(a: np.ndarray, b: np.ndarray, n_stats: int = 1) -> tuple[bool, float]:
    """(no rejection, smallest p-value): KS and Welch t on two samples of a scalar statistic."""
    p = min(stats.ks_2samp(a, b).pvalue, stats.ttest_ind(a, b, equal_var=False).pvalue)
    return p > ALPHA / (2 * n_stats), p


def check_law_and_power(per_user: np.ndarray, sufficient: np.ndarray, truth: float, label: str) -> None:
    ok, p = same_law(per_user, sufficient)
    assert ok, f"{label}: sufficient path differs from the per-user path (p = {p:.2g})"
    ok_biased, p_biased = same_law(per_user, sufficient + 0.01 * truth)
    assert not ok_biased, f"{label}: a planted 1% bias ({0.01 * truth:.4g}) is not detected (p = {p_biased:.2g})"


def test_laplace_sum_law():
    rng = rng_for(1, "laplace_sum")
    direct = rng.laplace(0.0, 0.7, size=(R, 50)).sum(axis=1)
    fast = laplace_sum(0.7, 50, rng, size=R)
    assert same_law(direct, fast)[0]
    assert np.all(laplace_sum(2.0, np.array([0, 3]), rng)[0] == 0.0)
    with pytest.raises(ValueError, match=">= 0"):
        laplace_sum(1.0, -1, rng)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 373])
def test_laplace_sums_per_step_are_successive_laplace_group_sums(n):
    """The stacked draw is the stream of successive ``laplace_group_sum`` calls, value for value and
    ending in the same generator state (what the compiled Laplace SGD steps rely on); above
    EXPONENTIALS_UP_TO terms a call is ``laplace_sum``'s two Gamma draws, value for value."""
    a, b = rng_for(11, "steps"), rng_for(11, "steps")
    one_by_one = np.stack([laplace_group_sum(0.7, n, a, (4, 3)) for _ in range(5)])
    stacked = laplace_sums_per_step(0.7, n, b, 5, (4, 3))
    np.testing.assert_array_equal(stacked, one_by_one)
    assert a.random() == b.random()
    if n > EXPONENTIALS_UP_TO:
        c, d = rng_for(12, "gamma"), rng_for(12, "gamma")
        np.testing.assert_array_equal(laplace_group_sum(0.7, n, c, (4, 3)), laplace_sum(0.7, n, d, size=(4, 3)))
    with pytest.raises(ValueError, match="must be > 0"):
        laplace_sums_per_step(0.7, 0, b, 5, (4, 3))
    with pytest.raises(ValueError, match="must be > 0"):
        laplace_group_sum(0.7, 0, b, (4, 3))


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_laplace_group_sum_law(n):
    """Σ of n Laplace(b) drawn from 2n exponentials (n ≤ 3) or two Gamma draws (n = 4) has the law
    of n Laplace draws summed, and a planted shift of 5% of b·√(2n) (its standard deviation) is detected."""
    rng = rng_for(13, ["group_sum", n])
    direct = rng.laplace(0.0, 0.7, size=(R, n)).sum(axis=1)
    fast = laplace_group_sum(0.7, n, rng, (R,))
    assert same_law(direct, fast)[0]
    sd = 0.7 * math.sqrt(2 * n)
    # the planted shift must be seen: 5 % of the standard deviation at R = 20,000 is 5 standard errors
    assert not same_law(direct, fast + 0.05 * sd)[0]


def test_laplace_mean_estimate_law():
    x = rng_for(2, "x").uniform(0.0, 1.0, 1000)
    est = make_collector("laplace", 1.0, 1)
    rng = rng_for(2, "draws")
    per_user = np.array([est.estimate_per_user(x, rng) for _ in range(R)])
    sufficient = np.array([est.estimate(x, rng) for _ in range(R)])
    check_law_and_power(per_user, sufficient, x.mean(), "Laplace mean (1-D)")


def test_graded_laplace_mean_estimate_law():
    x = rng_for(3, "x").uniform(0.0, 1.0, 1000)
    est = GradedLaplaceEstimator(1.0)
    rng = rng_for(3, "draws")
    per_user = np.array([est.estimate_per_user(x, rng) for _ in range(R)])
    sufficient = np.array([est.estimate(x, rng) for _ in range(R)])
    check_law_and_power(per_user, sufficient, x.mean(), "graded Laplace mean")


@pytest.mark.parametrize("mechanism,eps,d", [("pm_sub", 6.0, 8), ("hm_tp", 4.0, 6), ("laplace", 8.0, 6)])
def test_multidim_group_means_law(mechanism, eps, d):
    """Sampled mechanisms (k = 2 of d = 8 at ε = 6; k = 1 at ε = 4) by bincount and Laplace ε/d by
    Gamma sums, against perturb(...).mean(0); statistics: coordinates 0 and 5 (ε chosen so that a
    1% bias is detectable with R repetitions of 500 users)."""
    x = np.clip(rng_for(4, "x").normal(0.5, 0.2, (500, d)), -1, 1)
    mech = get_multidim(mechanism, eps, d)
    rng = rng_for(4, mechanism)
    per_user = np.array([mech.perturb(x, rng).mean(axis=0) for _ in range(R)])
    sufficient = np.concatenate(
        [mech.group_means(np.broadcast_to(x, (1000,) + x.shape), rng) for _ in range(R // 1000)]
    )
    truth = x.mean(axis=0)
    for j in (0, 5):
        check_law_and_power(per_user[:, j], sufficient[:, j], truth[j], f"{mechanism} multidim coordinate {j}")


def test_sampled_attributes_uniform_subsets():
    """Floyd's sampler: every k-subset of d attributes equally likely (chi-square), distinct indices."""
    d, k = 6, 3
    mech = get_multidim("pm_sub", 3 * 2.5, d)
    assert mech.k == k
    idx = mech.sample_attributes(60_000, rng_for(5, "subsets"))
    srt = np.sort(idx, axis=1)
    assert np.all(np.diff(srt, axis=1) > 0)
    subsets = {s: i for i, s in enumerate(itertools.combinations(range(d), k))}
    codes = np.array([subsets[tuple(r)] for r in srt.tolist()])
    counts = np.bincount(codes, minlength=len(subsets))
    assert stats.chisquare(counts).pvalue > ALPHA
    # and it can fail: the first attribute sampled with 10% extra weight is detected
    biased = np.concatenate([counts[:1] * 1.1, counts[1:]])
    assert stats.chisquare(biased, biased.sum() / len(biased) * np.ones(len(biased))).pvalue < ALPHA


@pytest.mark.parametrize("k", [4, 64])
def test_grr_counts_sampler_law(k):
    """O(k) counts sampler against the per-user path (grr perturb + bincount) on the estimated
    frequencies of the most and the least frequent values."""
    n = 1000
    freq = np.linspace(2.0, 1.0, k)
    c = np.floor(freq / freq.sum() * n).astype(np.int64)
    c[0] += n - c.sum()
    oracle = GRR(k, 1.0)
    values = np.repeat(np.arange(k), c)
    rng = rng_for(6, k)
    per_user = np.empty((R, k), dtype=np.int64)
    block = 2000
    for s in range(0, R, block):
        reports = oracle.perturb(np.tile(values, block), rng).reshape(block, n)
        per_user[s : s + block] = np.apply_along_axis(np.bincount, 1, reports, minlength=k)
    fast = oracle.sample_support_counts(c, rng, size=R)
    reference = oracle.sample_support_counts_per_value(c, rng, size=R)
    assert np.all(fast.sum(axis=1) == n)
    f_user = oracle.estimate_frequencies(per_user, n)
    f_fast = oracle.estimate_frequencies(fast, n)
    f_ref = oracle.estimate_frequencies(reference, n)
    for v in (0, k - 1):
        check_law_and_power(f_user[:, v], f_fast[:, v], c[v] / n, f"GRR k={k} value {v}")
        assert same_law(f_ref[:, v], f_fast[:, v])[0]


@pytest.mark.parametrize("discrete", [False, True])
def test_hiera_sorted_counts_law(discrete):
    """Levels sorted once (continuous data) or summarised by distinct value (integer-like data):
    HierA estimates (intended, unclipped: unbiased) and one report cell against the per-user path."""
    gen = rng_for(7, "x")
    x = np.round(gen.uniform(0.0, 1.0, 1000) * 20) / 20 if discrete else gen.uniform(0.0, 1.0, 1000)
    levels = GradedLevels.from_base_eps(1.0, k=5, multipliers=[5, 4, 3, 2, 1])
    prepared = sort_by_level(x, levels)
    assert (prepared.weights is not None) == discrete
    rng = rng_for(7, discrete)
    lhp = LHP(levels)
    per_user = np.stack([lhp_report_counts(*lhp.perturb(x, rng), 5) for _ in range(R)])
    fast = prepared.sample_counts(rng, size=R)
    est_user = hiera_estimate_counts(per_user, levels, 2, rng, "intended", clip=False)
    est_fast = hiera_estimate_counts(fast, levels, 2, rng, "intended", clip=False)
    check_law_and_power(est_user, est_fast, x.mean(), f"HierA estimate (discrete={discrete})")
    assert same_law(per_user[:, 4, 1], fast[:, 4, 1])[0]


def test_hiera_estimator_sorts_once_and_matches_count_path():
    """HierAEstimator reuses its sorted data across repetitions; the result is the count path's."""
    x = rng_for(8, "x").uniform(-1.0, 1.0, 3000)
    est = HierAEstimator(0.5, mu=2, clip=True)
    a = [est.estimate(x, rng_for(8, r)) for r in range(3)]
    prepared = est._sorted
    b = [est.estimate(x, rng_for(8, r)) for r in range(3)]
    assert est._sorted is prepared and a == b
    direct = est.model.run(x, rng_for(8, 0), path="count")
    assert math.isclose(a[0], direct)


@pytest.mark.parametrize("t", [(-1.0, 0.0, 1.0), (0.3, -0.45, 0.8), (0.5, 0.5, 0.5, -0.2)])
def test_duchi_multidim_mean_report_of_one_user_has_the_exact_law(t, monkeypatch):
    """``DuchiMultiDim.mean_report`` (v from one random byte per coordinate): one user's report
    against the exact law of Wang et al. Alg. 3 with ½-ties (``output_probabilities``), chi-square;
    the byte path forced for one user (it runs from FUSED_MIN_SIZE coordinates on)."""
    from ldprepro.domain.mechanisms import multidim

    monkeypatch.setattr(multidim, "FUSED_MIN_SIZE", 1)
    t = np.array(t)
    mech = get_multidim("duchi", 1.3, t.size)
    outputs, probs = mech.output_probabilities(t)
    rng = rng_for(6, "duchi-bytes")
    draws = np.array([mech.mean_report(t[None], rng) for _ in range(40_000)])
    index = {tuple(o): k for k, o in enumerate(np.sign(outputs).astype(int).tolist())}
    seen = np.bincount([index[tuple(r)] for r in np.sign(draws).astype(int).tolist()], minlength=len(probs))
    keep = probs > 0
    assert seen[~keep].sum() == 0, "an impossible report was drawn"
    assert stats.chisquare(seen[keep], probs[keep] * draws.shape[0]).pvalue > 1e-4
    assert np.allclose(np.abs(draws), mech.B)


def test_duchi_multidim_mean_report_law_at_scale():
    """500 users × 12 coordinates: the byte path's mean reports against ``group_means`` (the per-user
    uniforms), coordinates 0 and 7, as the other sufficient statistics are checked. Both lie on the
    lattice B·k/n; the byte path sums the signs exactly (integers), the per-user path adds ±B in
    floating point, so both are compared as k = mean·n/B, rounded to the lattice."""
    x = np.clip(rng_for(7, "x").normal(0.3, 0.3, (500, 12)), -1, 1)
    mech = get_multidim("duchi", 2.0, 12)
    rng = rng_for(7, "duchi")
    per_user = np.concatenate([mech.group_means(np.broadcast_to(x, (1000,) + x.shape), rng) for _ in range(R // 1000)])
    by_bytes = np.array([mech.mean_report(x, rng) for _ in range(R)])
    truth = x.mean(axis=0)
    lattice = x.shape[0] / mech.B
    assert np.allclose(by_bytes * lattice, np.rint(by_bytes * lattice), rtol=0, atol=1e-9)
    for j in (0, 7):
        check_law_and_power(
            np.rint(per_user[:, j] * lattice),
            np.rint(by_bytes[:, j] * lattice),
            truth[j] * lattice,
            f"Duchi multidim mean_report coordinate {j}",
        )


def test_duchi_multidim_bytes_decide_as_the_56_bit_comparison():
    """v_c = +1 exactly when the coordinate's 56-bit uniform (its first byte, then six more if that
    ties with R's) is below R = rint((½ + ½x_c)·2⁵⁶), as big integers compare them: every case
    (below, above, tie then below, tie then equal, tie then above, x = ±1)."""
    from ldprepro.domain.mechanisms.multidim import DuchiMeanReports, DuchiMultiDim

    x = np.array([[0.1, 0.1, 0.1, -0.3, 0.7, -1.0, 1.0, 0.1]])
    r = [round((0.5 + 0.5 * v) * 2**56) for v in x[0]]
    top = [k >> 48 for k in r]
    firsts = [top[0] - 1, top[1] + 1, top[2], top[3], top[4] - 1, 0, 255, top[7]]
    lower = [k & ((1 << 48) - 1) for k in r]
    tails = {2: lower[2] - 1, 3: lower[3], 5: 7, 7: lower[7] + 1}  # below, equal, above R = 0, above
    data = bytes(firsts) + b"".join(tails[i].to_bytes(6, "big") for i in (2, 3, 5, 7))
    v = DuchiMeanReports(DuchiMultiDim(1.0, 8), x).discretise(FixedWords(data))
    keys = [(f << 48) | tails.get(i, 0) for i, f in enumerate(firsts)]  # each coordinate's uniform K
    expected = [1 if k < r[i] else -1 for i, k in enumerate(keys)]
    assert v[0].tolist() == expected == [1, -1, 1, -1, 1, -1, 1, -1]
