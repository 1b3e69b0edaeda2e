"""The exact law of a sum of uniform-mixture reports (ldprepro.domain.uniform_sum): the sums of
centred uniforms from 53 binomials, the uniform subsets, each mechanism's declared mixture against
its exact pdf, the sum of reports against the per-user reports, and the mean estimates that use it."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats
from stats_helpers import ALPHA, FixedWords, assert_continuous_law, assert_mean, assert_variance, piecewise_cdf

from ldprepro.domain import uniform_sum
from ldprepro.domain.mechanisms import get_mechanism
from ldprepro.domain.mechanisms.piecewise import PM
from ldprepro.domain.uniform_sum import UniformMixtureSum, centred_uniform_sums, select_sum, subset_sum
from ldprepro.experiments import mean as mean_module
from ldprepro.experiments.mean import AtLevelEstimator, PerturbAndAverage, exact_sum_kind

MIXTURES = ("pm", "pm_sub", "pm_opt", "dct")


def irwin_hall_centred_cdf(m: int):
    """CDF of Σ_{i<m} (2U_i − 1), U_i uniform on [0, 1): S = 2·IrwinHall(m) − m."""

    def cdf(y):
        s = (np.asarray(y, dtype=float) + m) / 2.0
        out = np.zeros_like(s)
        for k in range(m + 1):
            out += (-1) ** k * math.comb(m, k) * np.clip(s - k, 0.0, None) ** m
        return np.clip(out / math.factorial(m), 0.0, 1.0)

    return cdf


def test_sums_of_centred_uniforms_have_the_irwin_hall_law():
    """m = 1, 2, 3 against the exact (Irwin–Hall) CDF; m = 1 on the uniforms' own 2⁻⁵³ grid; a large
    m against its mean 0 and variance m/3; m = 0 sums nothing; a negative count is refused."""
    rng = np.random.default_rng(11)
    one = centred_uniform_sums(np.ones(20_000, dtype=np.int64), rng)
    grid = (one + 1.0) * 2.0**52  # 2U − 1 = (2K − 2⁵³)·2⁻⁵³: (2U − 1 + 1)·2⁵² = K
    assert np.array_equal(grid, np.floor(grid)) and grid.min() >= 0 and grid.max() < 2.0**53
    for m in (1, 2, 3):
        draws = centred_uniform_sums(np.full(20_000, m), rng)
        assert_continuous_law(draws, irwin_hall_centred_cdf(m), label=f"Σ of {m} centred uniforms")
    big = centred_uniform_sums(np.full(4000, 1_000_003), rng)
    assert_mean(big, 0.0, 1_000_003 / 3.0, label="Σ of 10⁶ centred uniforms")
    assert_variance(big, 0.0, 1_000_003 / 3.0, label="Σ of 10⁶ centred uniforms")
    assert centred_uniform_sums([0], rng)[0] == 0.0
    with pytest.raises(ValueError, match="count >= 0, got -1"):
        centred_uniform_sums([3, -1], rng)


def test_the_subset_is_uniform_and_its_sum_exact():
    """Values 2^i make the sum name its subset: k distinct indices, every k-subset equally likely
    (chi-square), compiled and Python loops alike; more than half the values is refused."""
    n, k = 6, 3
    values = 2.0 ** np.arange(n)
    rng = np.random.default_rng(5)
    seen = {c: 0 for c in itertools.combinations(range(n), k)}
    for _ in range(40_000):
        total = int(subset_sum(values, k, rng))
        members = tuple(i for i in range(n) if total >> i & 1)
        assert len(members) == k
        seen[members] += 1
    assert stats.chisquare(list(seen.values())).pvalue > ALPHA
    assert subset_sum(values, 0, rng) == 0.0
    with pytest.raises(ValueError, match="at most half of the 6 values, asked for 4"):
        subset_sum(values, 4, rng)


def test_the_python_loops_give_the_compiled_results(monkeypatch):
    values = np.random.default_rng(1).random(100_000)
    compiled = subset_sum(values, 30_000, np.random.default_rng(2)), select_sum(values, 0.4, np.random.default_rng(2))
    monkeypatch.setenv("LDPREPRO_JIT", "0")
    assert (
        subset_sum(values, 30_000, np.random.default_rng(2)),
        select_sum(values, 0.4, np.random.default_rng(2)),
    ) == (compiled)


def test_each_user_is_selected_independently_with_probability_rho():
    """Values 2^i name the selected users: the 2^6 patterns against the product of Bernoulli(ρ)."""
    n, rho = 6, 0.37
    values = 2.0 ** np.arange(n)
    rng = np.random.default_rng(9)
    seen = np.zeros(1 << n, dtype=np.int64)
    for _ in range(40_000):
        count, total = select_sum(values, rho, rng)
        assert bin(int(total)).count("1") == count
        seen[int(total)] += 1
    ones = np.array([bin(k).count("1") for k in range(1 << n)])
    expected = rho**ones * (1 - rho) ** (n - ones) * seen.sum()
    assert stats.chisquare(seen, expected).pvalue > ALPHA
    assert select_sum(values, 0.0, rng) == (0, 0.0) and select_sum(values, 1.0, rng) == (n, 63.0)


def test_the_byte_comparison_is_the_56_bit_comparison():
    """User i is selected exactly when her 56-bit uniform (first byte, then six more if it ties with
    the threshold's) is below R = ρ·2⁵⁶: each case decided as big integers decide it."""
    rho = 0.5 + 2.0**-10 + 2.0**-40  # R = 0x80 40 00 00 01 00 00
    r = round(rho * 2**56)
    firsts = bytes([0x7F, 0x81, 0x80, 0x80, 0x80, 0x80])  # below, above, then four ties
    tails = [
        bytes([0x3F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),  # below in the second byte
        bytes([0x40, 0x00, 0x00, 0x01, 0x00, 0x00]),  # equal to R: not below
        bytes([0x40, 0x00, 0x00, 0x00, 0xFF, 0xFF]),  # below in the fifth byte
        bytes([0x41, 0x00, 0x00, 0x00, 0x00, 0x00]),  # above in the second byte
    ]
    values = 2.0 ** np.arange(6)
    # the first word: the six users' first bytes (two more unused); then the ties' 24 bytes
    count, total = select_sum(values, rho, FixedWords(firsts + bytes(2) + b"".join(tails)))
    keys = [int.from_bytes(bytes([f]) + (tails[i - 2] if i >= 2 else bytes(6)), "big") for i, f in enumerate(firsts)]
    chosen = [i for i, k in enumerate(keys) if k < r]
    assert chosen == [0, 2, 4] and count == 3 and total == sum(2.0**i for i in chosen)


@pytest.mark.parametrize("name", MIXTURES)
@pytest.mark.parametrize("eps", [1e-6, 0.1, 0.7, 1.0, 2.5, 8.0, 50.0, 700.0])
def test_the_declared_mixture_is_the_exact_density(name, eps):
    """q/(2A) on [−A, A] plus (1 − q)/w on the window equals the pdf wherever it is defined, and the
    window's mass 1 − q is the pdf's excess mass there."""
    mech = get_mechanism(name, eps)
    mix = mech.uniform_mixture()
    assert 0.0 <= mix.q < 1.0 and mix.width > 0
    for x in (-1.0, -0.37, 0.0, 0.5, 1.0):
        lo = mix.slope * x + mix.offset
        ys = np.concatenate(
            [lo + mix.width * np.array([1e-3, 0.5, 0.999]), np.linspace(-mix.half_range, mix.half_range, 7)[1:-1]]
        )
        # in the window: within w/2 of its centre (at ε = 700, PM's window is narrower than the
        # spacing of doubles near s·t, so lo + w rounds to lo: the pdf tests it the same way)
        inside = np.abs(ys - (mix.slope * x + (mix.offset + 0.5 * mix.width))) <= 0.5 * mix.width
        background = mix.q / (2.0 * mix.half_range) if mix.q > 0 else 0.0
        declared = background + np.where(inside, (1.0 - mix.q) / mix.width, 0.0)
        pdf = np.asarray(mech.pdf(ys, x), dtype=float)
        keep = (np.abs(ys) <= mix.half_range) | inside
        np.testing.assert_allclose(declared[keep], pdf[keep], rtol=1e-9, err_msg=f"{name}, ε={eps}, x={x}")


def test_inputs_outside_the_unit_interval_are_refused_by_value():
    mix = get_mechanism("pm", 1.0).uniform_mixture()
    with pytest.raises(ValueError, match=r"must lie in \[-1.0, 1.0\], got 1.2"):
        UniformMixtureSum(mix, [0.5, 1.2])
    with pytest.raises(ValueError, match="got nan"):
        UniformMixtureSum(mix, [0.5, float("nan")])


def test_a_mechanism_that_draws_otherwise_declares_no_mixture():
    class Shifted(PM):  # a plugin with its own sampler: its law is not PM's for sure
        name = "shifted_pm"

        def _sample(self, x, u, lo=0.0, width=1.0):
            return super()._sample(x, u, lo, width) + 0.0

    assert Shifted(1.0).uniform_mixture() is None
    for name in ("duchi", "laplace", "three_outputs", "hm_tp"):
        assert get_mechanism(name, 1.0).uniform_mixture() is None
    assert get_mechanism("pm", 1.0, discretize=8).uniform_mixture() is None


@pytest.mark.parametrize("name", MIXTURES)
def test_one_users_sum_is_the_mechanisms_report(name):
    """One user: the sum is her report, against the exact CDF of the mechanism's law."""
    rng = np.random.default_rng(3)
    for eps, x in ((0.1, -0.6), (1.0, 0.2), (8.0, 1.0)):
        mech = get_mechanism(name, eps)
        summed = UniformMixtureSum(mech.uniform_mixture(), [x])
        draws = np.array([summed.sample(rng) for _ in range(10_000)])
        pieces = [(float(lo), float(hi), float(d)) for lo, hi, d in mech.density_pieces(np.array(x))]
        assert_continuous_law(draws, piecewise_cdf(pieces), label=f"{name}, ε={eps}, x={x}")


@pytest.mark.parametrize("name", MIXTURES)
def test_the_sum_has_the_law_of_the_per_user_reports(name):
    """Seven users of different inputs: the sum drawn by the mixture against the sum of the users'
    own reports (two-sample KS) and against its exact mean Σ t and variance Σ Var[y | t]."""
    x = np.array([-1.0, -0.55, -0.1, 0.0, 0.3, 0.8, 1.0])
    rng = np.random.default_rng(17)
    for eps in (0.1, 1.0, 8.0):
        mech = get_mechanism(name, eps)
        summed = UniformMixtureSum(mech.uniform_mixture(), x)
        draws = np.array([summed.sample(rng) for _ in range(8000)])
        per_user = mech.perturb(np.tile(x, 8000), rng).reshape(8000, x.size).sum(axis=1)
        p = stats.ks_2samp(draws, per_user).pvalue
        assert p > ALPHA, f"{name}, ε={eps}: KS p = {p:.2e} against the per-user reports"
        var = float(np.sum(mech.variance(x)))
        assert_mean(draws, float(x.sum()), var, label=f"{name}, ε={eps}")
        assert_variance(draws, float(x.sum()), var, label=f"{name}, ε={eps}")


def test_mean_estimates_draw_the_mixtures_sum(monkeypatch):
    """From BLOCKS_FROM users on, PM (by a subset at ε = 0.1, by bytes at ε = 1) and DCT draw the sum
    (``exact_sum_kind``); below BLOCKS_FROM, or for a plugin, every user is perturbed; the
    level-budget reference draws its PM levels the same way."""
    pm_small, pm_mid = get_mechanism("pm", 0.1), get_mechanism("pm", 1.0)
    assert math.isclose(pm_mid.uniform_mixture().q, math.exp(-0.5), rel_tol=1e-12)  # PM: q = e^{−ε/2}
    big = mean_module.BLOCKS_FROM
    assert exact_sum_kind(get_mechanism("dct", 1.0), big) == "mixture" and exact_sum_kind(pm_mid, big) == "mixture"
    assert exact_sum_kind(pm_small, big - 1) is None and exact_sum_kind(get_mechanism("duchi", 1.0), big) == "count"
    assert exact_sum_kind(get_mechanism("three_outputs", 1.0), big) is None
    monkeypatch.setattr(mean_module, "BLOCKS_FROM", 3000)
    x = np.linspace(-1, 1, 3001)
    for mech in (pm_small, pm_mid, get_mechanism("dct", 0.5)):
        est = PerturbAndAverage(mech)
        assert not est.draws_every_report(x.size)
        got = est.estimate(x, np.random.default_rng(4))
        assert got == UniformMixtureSum(mech.uniform_mixture(), x).sample(np.random.default_rng(4)) / x.size
        assert np.shape(est.estimate(x[:, None], np.random.default_rng(4))) == (1,)
        draws = np.array([est.estimate(x, np.random.default_rng(s)) for s in range(400)])
        assert_mean(draws, float(x.mean()), float(est.var_of_mean(x)), label=mech.name)
    assert PerturbAndAverage(pm_mid).draws_every_report(2999)
    at_level = AtLevelEstimator("pm", 0.3)  # levels 1.5, 1.2, 0.9, 0.6, 0.3: bytes and subsets
    assert not at_level.draws_every_report(x.size)
    draws = np.array([at_level.estimate(x, np.random.default_rng(s)) for s in range(400)])
    assert_mean(draws, float(x.mean()), at_level.var_of_mean(x), label="PM at level")
    assert abs(draws.var(ddof=1) / at_level.var_of_mean(x) - 1) < 5 * np.sqrt(2 / 399)
    assert uniform_sum.BITS_PER_UNIFORM == 53
