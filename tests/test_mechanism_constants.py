"""Closed-form constants against the spec's sanity tables (docs/papers/ldpfl.md),
and continuity of the piecewise constants at their regime boundaries."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize

from ldprepro.domain.mechanisms import get_mechanism
from ldprepro.domain.mechanisms.hybrid import HM_EPS_STAR, HM_TP_EPS1, hm_tp_beta
from ldprepro.domain.mechanisms.piecewise import Piecewise, pm_opt_tau
from ldprepro.domain.mechanisms.three_outputs import EPS_P00_CAP, optimal_p00

# §0: worst-case variance; columns Laplace, Duchi, PM, HM, Three-Outputs, PM-OPT, PM-SUB, HM-TP.
NAMES = ["laplace", "duchi", "pm", "hm", "three_outputs", "pm_opt", "pm_sub", "hm_tp"]
TABLE_0 = """
0.1 800 400.67 533.22 400.67 400.67 533.06 533.07 400.67
0.25 128 64.668 85.222 64.668 64.668 85.056 85.075 64.668
0.5 32 16.671 21.223 16.671 16.671 21.058 21.076 16.671
0.75 14.222 7.7869 9.3711 7.5951 7.7692 9.2095 9.2269 7.6665
1 8 4.6827 5.2236 4.2890 4.4555 5.0657 5.0823 4.4176
1.25 5.12 3.2512 3.3044 2.7406 2.8298 3.1511 3.1668 2.8160
1.5 3.5556 2.4788 2.2623 1.8922 1.9147 2.1144 2.1291 1.9107
1.75 2.6122 2.0182 1.6345 1.3776 1.3511 1.4926 1.5062 1.3494
2 2 1.7241 1.2276 1.0423 0.99992 1.0922 1.1045 0.98428
2.5 1.28 1.3897 0.75039 0.64705 0.62896 0.62893 0.63902 0.57041
3 0.88889 1.2206 0.49295 0.43217 0.45603 0.38592 0.39391 0.35542
4 0.5 1.0760 0.24135 0.21898 0.31817 0.16185 0.16653 0.15481
5 0.32 1.0273 0.12990 0.12148 0.27412 0.073486 0.076075 0.072649
6 0.22222 1.0100 0.073521 0.070357 0.25875 0.034837 0.036222 0.035253
7 0.16327 1.0037 0.042810 0.041627 0.25320 0.016949 0.017676 0.017408
8 0.125 1.0013 0.025341 0.024901 0.25118 0.0083845 0.0087622 0.0086895
"""
ROWS = [list(map(float, line.split())) for line in TABLE_0.strip().splitlines()]


def _digits_tol(value_text_value: float) -> float:
    """Half a unit in the last printed significant digit (the table has 5 significant digits)."""
    exponent = math.floor(math.log10(abs(value_text_value)))
    return 0.5 * 10 ** (exponent - 4) + 1e-12


@pytest.mark.parametrize("row", ROWS, ids=[f"eps={r[0]}" for r in ROWS])
def test_worst_case_variance_table(row):
    eps, expected = row[0], row[1:]
    for name, value in zip(NAMES, expected):
        got = get_mechanism(name, eps).worst_case_variance()
        assert abs(got - value) <= _digits_tol(value), f"{name} at eps={eps}: {got} vs {value}"


@pytest.mark.parametrize(
    "eps,A,L,p,pw,var",
    [
        (0.5, 8.041623, 7.041623, 0.079836, 0.562177, 21.222569),
        (1, 4.082988, 3.082988, 0.201901, 0.622459, 5.223597),
        (2, 2.163953, 1.163953, 0.628082, 0.731059, 1.227565),
        (4, 1.313035, 0.313035, 2.813731, 0.880797, 0.241354),
        (8, 1.037315, 0.037315, 26.317061, 0.982014, 0.025341),
    ],
)
def test_pm_constants(eps, A, L, p, pw, var):
    m = get_mechanism("pm", eps)
    assert (m.A, m.L, m.p, m.window_probability(), m.worst_case_variance()) == pytest.approx(
        (A, L, p, pw, var), abs=2e-6
    )
    # Wang's own closed forms: C = (e^{ε/2}+1)/(e^{ε/2}−1), ℓ(t) = (C+1)t/2 − (C−1)/2.
    e2 = math.exp(eps / 2)
    C = (e2 + 1) / (e2 - 1)
    assert m.A == pytest.approx(C, rel=1e-13)
    t = np.linspace(-1, 1, 11)
    assert np.allclose(m.left(t), (C + 1) * t / 2 - (C - 1) / 2, rtol=0, atol=1e-12)
    assert m.right(1.0) == pytest.approx(m.A) and m.left(-1.0) == pytest.approx(-m.A)


@pytest.mark.parametrize(
    "eps,tau,A,L,p,pw,var",
    [
        (0.5, 1.133693, 8.072352, 7.566553, 0.078312, 0.592551, 21.058157),
        (1, 1.288757, 4.141501, 3.618997, 0.187449, 0.678377, 5.065681),
        (2, 1.690646, 2.261720, 1.681172, 0.484067, 0.813799, 1.092157),
        (4, 3.091759, 1.424474, 0.696265, 1.359264, 0.946407, 0.161848),
        (8, 11.444715, 1.091918, 0.175483, 5.676765, 0.996175, 0.0083845),
    ],
)
def test_pm_opt_constants_and_optimality(eps, tau, A, L, p, pw, var):
    m = get_mechanism("pm_opt", eps)
    assert (m.tau, m.A, m.L, m.p, m.window_probability()) == pytest.approx((tau, A, L, p, pw), abs=2e-6)
    assert m.worst_case_variance() == pytest.approx(var, rel=1e-5)
    # τ_opt minimises V_pw(1; τ): an independent bounded minimisation agrees.
    res = optimize.minimize_scalar(
        lambda t: Piecewise(eps, t).worst_case_variance(),
        bounds=(0.5, 50.0),
        method="bounded",
        options={"xatol": 1e-10},
    )
    assert m.tau == pytest.approx(res.x, rel=1e-6)


def test_pm_opt_tau_matches_ferrari_closed_form():
    """Docs/papers/ldpfl.md §7's Ferrari solution, away from its cancellation points."""
    for eps in [0.1, 0.5, 1.0, 2.0, 4.0, 8.0, 12.0]:
        a = math.exp(eps)
        m = a * a / 2 - np.cbrt(a * a * (a * a - 1) / 2)
        w = math.copysign(math.sqrt(2 * m), a * a - 2)
        tau = -a / 2 + 0.5 * (-w + math.sqrt(3 * a * a - 2 * m + 2 * (a**3 - 2 * a) / w))
        assert pm_opt_tau(eps) == pytest.approx(tau, rel=1e-9)
    a = math.sqrt(2.0)  # exactly a² = 2
    assert pm_opt_tau(math.log(2) / 2) == pytest.approx(-a / 2 + a * math.sqrt(0.75 + math.sqrt(3) / 2), rel=1e-12)


@pytest.mark.parametrize(
    "eps,tau,A,L,p,pw,var",
    [
        (0.5, 1.181360, 8.055377, 7.385645, 0.078879, 0.582570, 21.076185),
        (1, 1.395612, 4.109703, 3.431025, 0.192583, 0.660756, 5.082339),
        (2, 1.947734, 2.211666, 1.500587, 0.527388, 0.791391, 1.104541),
        (4, 3.793668, 1.376610, 0.574345, 1.627995, 0.935031, 0.166528),
        (8, 14.391916, 1.075007, 0.139685, 7.124584, 0.995195, 0.0087622),
    ],
)
def test_pm_sub_constants(eps, tau, A, L, p, pw, var):
    m = get_mechanism("pm_sub", eps)
    assert (m.tau, m.A, m.L, m.p, m.window_probability()) == pytest.approx((tau, A, L, p, pw), abs=2e-6)
    assert m.worst_case_variance() == pytest.approx(var, rel=1e-5)
    e3, a = math.exp(eps / 3), math.exp(eps)
    assert m.A == pytest.approx((e3 * e3 + 1) * (e3 + 1) / (a - 1), rel=1e-13)


@pytest.mark.parametrize(
    "eps,p00,p01,C,tmax,var",
    [
        (0.5, 0, 0, 4.082988, 0, 16.670792),
        (1, 0.286077, 0.105242, 2.418478, 0.528856, 4.455452),
        (2, 0.786986, 0.106507, 1.469553, 0.734776, 0.999918),
        (4, 0.964663, 0.017668, 1.055972, 0.527986, 0.318173),
        (8, 0.999330, 0.000335, 1.001007, 0.500503, 0.251175),
    ],
)
def test_three_outputs_constants(eps, p00, p01, C, tmax, var):
    m = get_mechanism("three_outputs", eps)
    a = math.exp(eps)
    assert (m.p00, m.p00 / a, m.c) == pytest.approx((p00, p01, C), abs=2e-6)
    t = np.linspace(0, 1, 200001)
    assert t[np.argmax(m.variance(t))] == pytest.approx(tmax, abs=1e-5)
    assert m.worst_case_variance() == pytest.approx(var, abs=5e-7)  # table printed to 6 decimals
    # Endpoint probabilities: P(C|1)/P(C|−1) = a and P(0|0)/P(0|±1) = a (Lemma 2).
    pmf = m.pmf(np.array([-1.0, 0.0, 1.0]))
    assert pmf[2, 2] / pmf[0, 2] == pytest.approx(a, rel=1e-12)
    if p00 > 0:
        assert pmf[1, 1] / pmf[2, 1] == pytest.approx(a, rel=1e-12)


def test_three_outputs_p00_is_the_cubic_root_and_the_minimiser():
    for eps in np.linspace(math.log(2) + 1e-6, EPS_P00_CAP - 1e-6, 9):
        a = math.exp(eps)
        roots = np.roots([2, -(a * a + 4 * a + 5), -(a**3 + 4 * a * a - 7 * a), 2 * a**3 - 4 * a * a])
        real = [r.real for r in roots if abs(r.imag) < 1e-12 and 0 <= r.real <= a / (a + 2) + 1e-12]
        assert optimal_p00(eps) == pytest.approx(min(real, key=lambda r: abs(r - optimal_p00(eps))), abs=1e-10)
        # and it minimises the worst-case variance over P00 ∈ [0, a/(a+2)]
        from ldprepro.domain.mechanisms import ThreeOutputs

        grid = np.linspace(0, a / (a + 2), 4001)
        worst = [ThreeOutputs(eps, p00=g).worst_case_variance() for g in grid]
        assert ThreeOutputs(eps).worst_case_variance() <= min(worst) + 1e-9


def test_three_outputs_p00_continuous_at_regime_boundaries():
    lo = math.log(2.0)
    assert optimal_p00(lo) == pytest.approx(0.0, abs=1e-12)
    assert optimal_p00(lo + 1e-9) == pytest.approx(0.0, abs=1e-7)
    cap = EPS_P00_CAP
    a = math.exp(cap)
    assert optimal_p00(cap - 1e-9) == pytest.approx(a / (a + 2), abs=1e-7)
    assert optimal_p00(cap + 1e-9) == pytest.approx(a / (a + 2), abs=1e-7)
    assert cap == pytest.approx(1.710392, abs=1e-6)


@pytest.mark.parametrize(
    "eps,beta,tmax,var",
    [
        (0.5, 0.0, 0.0, 16.670792),
        (1, 0.161674, 0.7233, 4.417626),
        (2, 0.239696, 0.8598, 0.984276),
        (4, 0.829003, 0.9322, 0.154807),
        (8, 0.989692, 0.9929, 0.0086895),
    ],
)
def test_hm_tp_constants(eps, beta, tmax, var):
    m = get_mechanism("hm_tp", eps)
    assert m.beta == pytest.approx(beta, abs=2e-6)
    assert m.worst_case_variance() == pytest.approx(var, rel=1e-5)
    if beta > 0:
        t = np.linspace(0, 1, 100001)
        assert t[np.argmax(m.variance(t))] == pytest.approx(tmax, abs=1e-4)
        # β minimises the worst case: a numerical minimax over β agrees.
        from ldprepro.domain.mechanisms import Mixture, PMSub, ThreeOutputs

        def worst(b):
            return Mixture(eps, [PMSub(eps), ThreeOutputs(eps)], [b, 1 - b], "x").worst_case_variance()

        res = optimize.minimize_scalar(worst, bounds=(0, 1), method="bounded", options={"xatol": 1e-10})
        assert m.beta == pytest.approx(res.x, abs=1e-5)


def test_hm_tp_regime_boundaries():
    assert HM_TP_EPS1 == pytest.approx(0.610986, abs=1e-6)
    # β is continuous at ln 2 (w → 0 as P00 → 0) ...
    ln2 = math.log(2.0)
    assert hm_tp_beta(ln2 - 1e-9) == pytest.approx(hm_tp_beta(ln2 + 1e-9), abs=1e-6)
    # ... and the worst-case variance is continuous at ε₁, where β jumps from 0 to β0
    # (there B1 = C_D², so the mixture is flat at C_D²).
    below = get_mechanism("hm_tp", HM_TP_EPS1 - 1e-9).worst_case_variance()
    above = get_mechanism("hm_tp", HM_TP_EPS1 + 1e-9).worst_case_variance()
    assert below == pytest.approx(above, rel=1e-6)
    # the spec's values of β near its kink at ε ≈ 1.7104
    assert hm_tp_beta(1.6) == pytest.approx(0.0710, abs=1e-4)
    assert hm_tp_beta(1.8) == pytest.approx(0.1105, abs=1e-4)
    assert hm_tp_beta(EPS_P00_CAP) == pytest.approx(0.0458, abs=1e-4)


def test_hm_threshold_and_continuity():
    assert HM_EPS_STAR == pytest.approx(0.609352, abs=1e-6)
    below = get_mechanism("hm", HM_EPS_STAR - 1e-9).worst_case_variance()
    above = get_mechanism("hm", HM_EPS_STAR + 1e-9).worst_case_variance()
    assert below == pytest.approx(above, rel=1e-6)
    for eps, alpha, var in [
        (1, 0.393469, 4.288992),
        (2, 0.632121, 1.042336),
        (4, 0.864665, 0.218979),
        (8, 0.981684, 0.024901),
    ]:
        m = get_mechanism("hm", eps)
        assert m.alpha == pytest.approx(alpha, abs=1e-6)
        assert m.worst_case_variance() == pytest.approx(var, abs=1e-6)
        # with this α the variance is flat in t
        assert np.ptp(m.variance(np.linspace(-1, 1, 101))) < 1e-12
    assert get_mechanism("hm", 0.6095, threshold=0.61).alpha == 0.0


def test_duchi_constants():
    for eps, c, v in [
        (0.5, 4.082988, 16.6708),
        (1, 2.163953, 4.68269),
        (2, 1.313035, 1.72406),
        (4, 1.037315, 1.07602),
        (8, 1.000671, 1.00134),
    ]:
        m = get_mechanism("duchi", eps)
        assert m.c == pytest.approx(c, abs=1e-6)
        assert m.worst_case_variance() == pytest.approx(v, abs=1e-4)


def test_laplace_constants():
    for eps, b, v in [(0.5, 4, 32), (1, 2, 8), (2, 1, 2), (4, 0.5, 0.5), (8, 0.25, 0.125)]:
        m = get_mechanism("laplace", eps)
        assert (m.scale, m.worst_case_variance()) == pytest.approx((b, v))


def test_crossing_points_of_table_II():
    """Docs/papers/ldpfl.md §13: crossing points of the worst-case variances (root finding on our closed forms)."""

    def cross(n1, n2, lo, hi):
        return optimize.brentq(
            lambda e: get_mechanism(n1, e).worst_case_variance() - get_mechanism(n2, e).worst_case_variance(),
            lo,
            hi,
            xtol=1e-10,
        )

    assert cross("laplace", "duchi", 1.5, 3) == pytest.approx(2.32417, abs=1e-5)
    assert cross("pm", "duchi", 1, 2) == pytest.approx(1.28978, abs=1e-5)
    assert cross("three_outputs", "pm", 3, 4) == pytest.approx(3.26936, abs=1e-5)
    assert cross("pm_sub", "duchi", 1, 1.5) == pytest.approx(1.19305, abs=1e-5)
    assert cross("pm_sub", "three_outputs", 2, 3) == pytest.approx(2.56109, abs=1e-5)
    assert cross("pm_opt", "three_outputs", 2, 3) == pytest.approx(2.49981, abs=1e-5)
    assert cross("hm", "three_outputs", 1.5, 1.7) == pytest.approx(1.60359, abs=1e-5)
    assert cross("hm", "three_outputs", 2.6, 2.8) == pytest.approx(2.72036, abs=1e-5)
    assert cross("hm", "pm_sub", 2.3, 2.5) == pytest.approx(2.41653, abs=1e-5)
