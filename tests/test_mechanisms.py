"""Correctness of every numeric mechanism, checked the way the math defines it.

Statistical checks use fixed seeds and tolerances from the theoretical variance (stats_helpers);
exact checks use the mechanisms' closed-form pmf/pdf.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from stats_helpers import assert_continuous_law, assert_discrete_law, assert_mean, assert_variance, piecewise_cdf

from ldprepro.domain.mechanisms import MECHANISM_INFO, MECHANISMS, get_mechanism
from ldprepro.pipeline.seeding import rng_for

LN2 = math.log(2.0)
# A grid crossing every regime boundary: ln 2 (Three-Outputs P00 > 0), ε* ≈ 0.6094 (HM),
# ε₁ ≈ 0.6110 (HM-TP), ln((3+√65)/2) ≈ 1.7104 (P00 cap), and the large-ε end.
EPS_GRID = [0.1, 0.5, 0.6, 0.62, LN2 - 1e-3, LN2 + 1e-3, 1.0, 1.7, 1.72, 2.5, 4.0, 8.0]
FIXED_INPUTS = np.array([-1.0, -0.5, 0.0, 0.3, 1.0])
N_PER_INPUT = 200_000
NAMES = list(MECHANISMS)


def worst_input(mech) -> float:
    grid = np.linspace(0.0, 1.0, 2001)
    return float(grid[np.argmax(mech.variance(grid))])


def test_registry_has_every_mechanism_of_the_contract():
    assert set(MECHANISMS) == {
        "laplace",
        "duchi",
        "harmony",
        "pm",
        "hm",
        "three_outputs",
        "pm_opt",
        "pm_sub",
        "hm_tp",
        "dct",
    }
    with pytest.raises(ValueError, match="unknown mechanism 'nope'"):
        get_mechanism("nope", 1.0)


@pytest.mark.parametrize("name", NAMES)
def test_contract_shapes_and_bad_input(name):
    mech = get_mechanism(name, 1.0)
    rng = rng_for(1, ["shape", name])
    for shape in [(), (7,), (3, 4)]:
        x = np.zeros(shape)
        y = mech.perturb(x, rng)
        assert y.shape == shape and y.dtype == float
        assert np.shape(mech.variance(x)) == shape
    for bad in [1.5, -1.0001, np.nan]:
        with pytest.raises(ValueError, match=r"\[-1.0, 1.0\]"):
            mech.perturb(np.array([0.0, bad]), rng)
    for eps in [0.0, -1.0, math.inf, math.nan]:
        with pytest.raises(ValueError, match="eps"):
            get_mechanism(name, eps)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("eps", EPS_GRID)
def test_unbiased_and_variance_matches_closed_form(name, eps):
    mech = get_mechanism(name, eps)
    inputs = np.append(FIXED_INPUTS, worst_input(mech))
    x = np.repeat(inputs, N_PER_INPUT)
    y = mech.perturb(x, rng_for(2026, ["moments", name, eps])).reshape(len(inputs), N_PER_INPUT)
    for t, row in zip(inputs, y):
        var = float(mech.variance(t))
        label = f"{name} eps={eps:.4g} t={t:.4g}"
        assert_mean(row, t, var, label)
        assert_variance(row, t, var, label)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0, 8.0, 30.0])
def test_sampler_follows_the_exact_law(name, eps):
    """The sampler's output law equals the closed-form pmf (chi-square) or pdf (KS)."""
    mech = get_mechanism(name, eps)
    rng = rng_for(7, ["law", name, eps])
    for t in [-1.0, -0.2, 0.0, 0.7, 1.0]:
        y = mech.perturb(np.full(100_000, t), rng)
        label = f"{name} eps={eps} t={t}"
        if mech.discrete:
            assert_discrete_law(y, mech.support(), mech.pmf(t), label)
        elif not len(mech.support()):
            cdf = _cdf_of(mech, t)
            assert_continuous_law(y, cdf, label)
        else:  # mixed law: atoms by chi-square, the continuous remainder by KS
            atoms = mech.support()
            on_atom = np.isin(y, atoms)
            pmf = mech.pmf(t)
            cont_mass = 1.0 - pmf.sum()
            n = y.size
            assert_mean(on_atom.astype(float), pmf.sum(), pmf.sum() * cont_mass, label + " atom mass")
            if on_atom.sum() > 100:
                assert_discrete_law(y[on_atom], atoms, pmf / pmf.sum(), label + " atoms")
            if cont_mass > 0 and (~on_atom).sum() > 100:
                cdf = _cdf_of(mech, t, scale=1.0 / cont_mass)
                assert_continuous_law(y[~on_atom], cdf, label + " density")
            assert n == y.size


def _cdf_of(mech, t, scale=1.0):
    """CDF of the absolutely continuous part (normalised by ``scale``)."""
    if mech.name == "laplace":
        b = mech.scale
        return lambda y: np.where(y < t, 0.5 * np.exp((y - t) / b), 1.0 - 0.5 * np.exp(-(y - t) / b))
    pieces = []
    comps = getattr(mech, "components", [mech])
    weights = getattr(mech, "weights", [1.0])
    for c, w in zip(comps, weights):
        if c.continuous:
            pieces += [(lo, hi, w * d * scale) for lo, hi, d in c.density_pieces(np.float64(t))]
    return piecewise_cdf(pieces)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("eps", EPS_GRID)
def test_worst_case_variance_is_the_max_over_inputs(name, eps):
    mech = get_mechanism(name, eps)
    grid = np.linspace(-1.0, 1.0, 20001)
    grid_max = float(mech.variance(grid).max())
    worst = mech.worst_case_variance()
    assert worst >= grid_max * (1 - 1e-12)
    # the grid is fine enough that the true max exceeds it by far less than 1e-6 relatively
    assert worst <= grid_max * (1 + 1e-6)


def _exact_ratio(mech, xs, ys):
    """Max over pairs of inputs of the pmf ratio (atoms) and the pdf ratio (outputs ys)."""
    worst = 0.0
    if len(mech.support()):
        pmf = mech.pmf(xs)  # (len(xs), n_atoms)
        worst = max(worst, _max_ratio(pmf))
    if mech.continuous:
        dens = mech.pdf(ys[None, :], xs[:, None])  # (len(xs), len(ys))
        worst = max(worst, _max_ratio(dens))
    return worst


def _max_ratio(table):
    """max over columns of max/min across rows (inf if some row is 0 where another is not)."""
    hi, lo = table.max(axis=0), table.min(axis=0)
    live = hi > 0
    if (lo[live] <= 0).any():
        return math.inf
    return float((hi[live] / lo[live]).max()) if live.any() else 0.0


@pytest.mark.parametrize("name", [n for n in NAMES if MECHANISM_INFO[n].presented_as_ldp])
@pytest.mark.parametrize("eps", EPS_GRID)
def test_exact_ldp_ratio_never_exceeds_e_eps(name, eps):
    mech = get_mechanism(name, eps)
    xs = np.linspace(-1.0, 1.0, 201)
    lo, hi = mech.output_bounds()
    if not math.isfinite(lo):
        lo, hi = -1.0 - 40.0 / eps, 1.0 + 40.0 / eps
    ys = np.linspace(lo, hi, 4001)[1:-1]
    ratio = _exact_ratio(mech, xs, ys)
    assert ratio <= math.exp(eps) * (1 + 1e-9), f"{name}: ratio {ratio} > e^eps {math.exp(eps)}"
    if name != "laplace":  # the bound is attained (it is tight) for every bounded mechanism here
        assert ratio >= math.exp(eps) * (1 - 1e-6)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0, 8.0])
def test_exact_probabilities_sum_to_one_and_are_unbiased(name, eps):
    mech = get_mechanism(name, eps)
    for t in [-1.0, -0.3, 0.0, 0.8, 1.0]:
        atoms = mech.support()
        pmf = mech.pmf(t) if len(atoms) else np.zeros(0)
        assert (pmf >= -1e-15).all()
        mass, mean = pmf.sum(), float(pmf @ atoms) if len(atoms) else 0.0
        if mech.continuous and name != "laplace":
            comps = getattr(mech, "components", [mech])
            weights = getattr(mech, "weights", [1.0])
            for c, w in zip(comps, weights):
                if c.continuous:
                    for lo, hi, d in c.density_pieces(np.float64(t)):
                        mass += w * d * (hi - lo)
                        mean += w * d * (hi**2 - lo**2) / 2
        elif name == "laplace":
            mass, mean = 1.0, t
        assert mass == pytest.approx(1.0, abs=1e-12)
        assert mean == pytest.approx(t, abs=1e-12)


def test_dct_is_not_ldp_and_the_test_records_the_true_ratio():
    """Paper 003's Lemma 1 does not hold: the output support [v−d, v+d] moves with v."""
    mech = get_mechanism("dct", 1.0)  # α = 5: d = 0.2
    assert mech.d == pytest.approx(0.2)
    assert mech.satisfies_ldp is False
    assert mech.pdf(-1.1, -1.0) == pytest.approx(2.5)
    assert mech.pdf(-1.1, 1.0) == 0.0
    xs = np.linspace(-1, 1, 201)
    ys = np.linspace(-1.2, 1.2, 2001)
    assert _exact_ratio(mech, xs, ys) == math.inf
    # What it really is: v + Uniform[−d, d], Var = 1/(3α²ε²) for every v.
    assert mech.worst_case_variance() == pytest.approx(1.0 / (3 * 25))
    assert np.allclose(mech.pdf(np.array([-0.15, 0.0, 0.19]), 0.0), 2.5)


def test_dct_alpha_parameter():
    for alpha in [1.0, 2.0, 5.0]:
        mech = get_mechanism("dct", 0.5, alpha=alpha)
        assert mech.worst_case_variance() == pytest.approx(1.0 / (3 * alpha**2 * 0.25))
    with pytest.raises(ValueError, match="alpha"):
        get_mechanism("dct", 1.0, alpha=0.0)


def test_harmony_stepwise_equals_composed_law():
    mech = get_mechanism("harmony", 1.0)
    rng = rng_for(3, "harmony-steps")
    for t in [-1.0, 0.0, 0.4]:
        y = mech.perturb_stepwise(np.full(200_000, t), rng)
        assert_discrete_law(y, mech.support(), mech.pmf(t), f"harmony stepwise t={t}")
    duchi = get_mechanism("duchi", 1.0)
    assert np.allclose(mech.pmf(FIXED_INPUTS), duchi.pmf(FIXED_INPUTS))


@pytest.mark.parametrize("name", NAMES)
def test_seeding_reproducible_and_streams_independent(name):
    mech = get_mechanism(name, 1.5)
    x = np.linspace(-1, 1, 100_001)
    a = mech.perturb(x, rng_for(11, {"job": name, "rep": 0}))
    b = mech.perturb(x, rng_for(11, {"job": name, "rep": 0}))
    c = mech.perturb(x, rng_for(11, {"job": name, "rep": 1}))
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)
    # Independent streams: the noise of two keys is uncorrelated (|r| < 5/√n).
    r = np.corrcoef(a - x, c - x)[0, 1]
    assert abs(r) < 5.0 / math.sqrt(x.size)


@pytest.mark.parametrize("name", ["laplace", "dct", "pm", "three_outputs", "duchi"])
@pytest.mark.parametrize("eps", [0.5, 4.0, 60.0])
def test_fast_sampler_has_the_law_of_the_inverse_cdf(name, eps):
    """``perturb`` (Laplace: exponential × random sign; DCT: Alg. 3 step by step) against the
    one-uniform inverse-CDF sampler ``_sample``: two-sample KS at every input."""
    from scipy import stats

    mech = get_mechanism(name, eps)
    rng = rng_for(13, ["fast-vs-icdf", name, eps])
    for t in [-1.0, 0.25, 1.0]:
        fast = mech.perturb(np.full(100_000, t), rng)
        ref = mech._sample(np.full(100_000, t), rng.random(100_000))
        if mech.discrete:
            assert_discrete_law(fast, mech.support(), mech.pmf(t), f"{name} eps={eps} t={t} fast")
            assert_discrete_law(ref, mech.support(), mech.pmf(t), f"{name} eps={eps} t={t} icdf")
        else:
            p = stats.ks_2samp(fast, ref).pvalue
            assert p > 1e-4, f"{name} eps={eps} t={t}: KS p = {p:.2e}"


@pytest.mark.parametrize("name", ["hm", "hm_tp"])
@pytest.mark.parametrize("eps", [1.0, 4.0])
def test_mixture_branch_split_has_the_law_of_per_user_choice(name, eps):
    """The mixture takes branch and component output from one uniform per user (the branch's
    share of it, rescaled) and runs each branch only on its own users; the reference draws a
    component per user and samples it with a fresh uniform through its own inverse CDF."""
    from scipy import stats

    mech = get_mechanism(name, eps)
    rng = rng_for(14, ["mixture-split", name, eps])
    n, t = 100_000, 0.6
    fast = mech.perturb(np.full(n, t), rng)
    choice = rng.random(n) < mech.weights[0]
    ref = np.where(
        choice,
        mech.components[0]._sample(np.full(n, t), rng.random(n)),
        mech.components[1]._sample(np.full(n, t), rng.random(n)),
    )
    atoms = mech.support()
    rest = atoms.max() + 1.0  # stands for "not an atom" in the chi-square
    for sample in (fast, ref):  # same atom masses (chi-square on the atoms and the rest)
        on = np.isin(sample, atoms)
        assert_discrete_law(
            np.where(on, sample, rest),
            np.append(atoms, rest),
            np.append(mech.pmf(t), 1 - mech.pmf(t).sum()),
            f"{name} eps={eps} atoms",
        )
    p = stats.ks_2samp(fast[~np.isin(fast, atoms)], ref[~np.isin(ref, atoms)]).pvalue
    assert p > 1e-4, f"{name} eps={eps}: KS p = {p:.2e} on the continuous part"
