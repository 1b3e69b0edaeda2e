"""Graded gradient collection for HierA's linear regression (paper 000 §5; docs/papers/hiera.md §7):
LHP with the level given by the attribute, unbiasedness of every collector against its closed-form
variance, and the component levels."""

from __future__ import annotations

import numpy as np
import pytest

from ldprepro.domain.graded import LHP, GradedLaplace, GradedLevels
from ldprepro.domain.graded_sgd import GradedGradientCollector, component_levels
from ldprepro.domain.mechanisms import get_mechanism
from ldprepro.pipeline.seeding import rng_for

LEVELS = GradedLevels.from_base_eps(0.5)
LEVELS_1 = GradedLevels.from_base_eps(1.0)


def test_lhp_with_an_explicit_level_uses_that_levels_channel():
    """v = 0.9 lies in the most private level (index 4); forced to level 0, the reported level must
    follow GRR at ε_0 = 2.5 and the value the keep probability of the reported level."""
    n = 400_000
    v = np.full(n, 0.9)
    t_star, s = LHP(LEVELS).perturb(v, rng_for(1, "lhp-level"), level=np.zeros(n, dtype=np.int64))
    freq = np.bincount(t_star, minlength=5) / n
    expected = LEVELS.level_channel[0]
    assert np.all(np.abs(freq - expected) <= 5 * np.sqrt(expected * (1 - expected) / n))
    c = 2 * LEVELS.keep_probs - 1
    for t in range(5):
        sel = s[t_star == t]
        p_plus = (1 + 0.9 * c[t]) / 2
        assert abs(np.mean(sel == 1) - p_plus) <= 5 * np.sqrt(p_plus * (1 - p_plus) / sel.size)


def test_explicit_level_is_validated():
    with pytest.raises(ValueError, match="shape"):
        LHP(LEVELS).perturb(np.zeros(3), rng_for(0, "x"), level=np.zeros(2, dtype=np.int64))
    with pytest.raises(ValueError, match="0..4"):
        GradedLaplace(LEVELS).perturb(np.zeros(2), rng_for(0, "x"), level=np.array([0, 5]))


def test_graded_laplace_scale_follows_the_given_level():
    n = 200_000
    out = GradedLaplace(LEVELS).perturb(np.zeros(n), rng_for(2, "gl"), level=np.full(n, 4))
    var = 2 * (2 / LEVELS.eps[4]) ** 2  # level 4 has ε = 0.5
    # sample variance of a Laplace: SE from its 4th moment (kurtosis 6 → Var(s²) ≈ (μ4 − σ⁴)/n = 5σ⁴/n)
    assert abs(out.var() - var) <= 5 * np.sqrt(5 * var**2 / n)


def _variance_ratio_se(est: np.ndarray) -> np.ndarray:
    """Standard error of s²/σ² over R draws per column: √((κ − 1)/R), κ the (sample) kurtosis."""
    z = est - est.mean(axis=0)
    kurt = (z**4).mean(axis=0) / (z**2).mean(axis=0) ** 2
    return np.sqrt((kurt - 1) / est.shape[0])


def _theory_variance(mechanism, g, level, rule):
    """Var of the collector's estimate of each component's group mean (per-user mechanisms)."""
    G, D = g.shape
    if mechanism == "graded_laplace":
        V = 2 * (2 / LEVELS_1.eps[level]) ** 2
    elif mechanism.endswith("_at_level"):
        V = np.empty_like(g)
        for t, e in enumerate(LEVELS_1.eps):
            V[level == t] = get_mechanism(mechanism.removesuffix("_at_level"), float(e)).variance(g[level == t])
    else:
        V = get_mechanism(mechanism, float(LEVELS_1.eps.min())).variance(g)
    if rule == "sample_one":
        return (D * (V + g**2) - g**2).sum(axis=0) / G**2
    return V.sum(axis=0) / G**2


@pytest.mark.parametrize("rule", ["sample_one", "every_component"])
@pytest.mark.parametrize("mechanism", ["harmony", "pm", "graded_laplace", "hiera", "harmony_at_level", "pm_at_level"])
def test_collectors_are_unbiased(mechanism, rule):
    """Mean of R independent group estimates against the true group mean, within 5 standard errors
    (closed-form variance for the per-user mechanisms; HierA, a count-level estimator, unclipped,
    against the sample SE of its R estimates)."""
    rng = rng_for(3, {"g": mechanism, "rule": rule})
    G, D, R = 60, 4, 10_000
    g = rng.uniform(0.2, 1, (G, D))  # a mean far from 0, so that a wrong scale shows as bias
    level = rng.integers(0, 5, (G, D))
    col = GradedGradientCollector(mechanism, LEVELS_1, mu=2, clip=False, component_rule=rule)
    est = np.array([col.aggregate(g, level, rng) for _ in range(R)])
    if mechanism == "hiera":
        se = est.std(axis=0, ddof=1) / np.sqrt(R)
    else:
        var = _theory_variance(mechanism, g, level, rule)
        se = np.sqrt(var / R)
        # the spread of the estimates matches the closed form too
        assert np.all(np.abs(est.var(axis=0, ddof=1) / var - 1) <= 5 * _variance_ratio_se(est))
    assert np.all(np.abs(est.mean(axis=0) - g.mean(axis=0)) <= 5 * se)


def test_component_levels():
    X = np.array([[-0.9, 0.1, 1.0], [0.7, -0.3, 1.0]])
    y = np.array([-0.5, 0.65])
    assert component_levels(X, y, LEVELS, 2).tolist() == [[0, 2, 1], [4, 1, 4]]
    assert component_levels(X, y, LEVELS, 2, "most_private")[:, 2].tolist() == [4, 4]
    with pytest.raises(ValueError, match="intercept_level"):
        component_levels(X, y, LEVELS, 2, "nope")


def test_collector_rejects_unknown_settings():
    with pytest.raises(ValueError, match="unknown graded SGD mechanism"):
        GradedGradientCollector("duchi", LEVELS)
    with pytest.raises(ValueError, match="component_rule"):
        GradedGradientCollector("pm", LEVELS, component_rule="all")


def test_clipped_hiera_shrinks_components_reported_by_few_users():
    """The paper's step-6 clipping (docs/papers/hiera.md §6.1) at ~2 reports per component: the estimate of a
    component whose every value is 0.5 is pulled towards 0 by far more than 5 SE, while the
    unclipped collector is centred on 0.5 (documented, and why Fig. 3 draws both)."""
    G, D, R = 10, 5, 4000
    g = np.full((G, D), 0.5)
    level = np.full((G, D), 2)
    means = {}
    for clip in (True, False):
        rng = rng_for(4, {"clip": clip})
        col = GradedGradientCollector("hiera", LEVELS, mu=2, clip=clip)
        est = np.array([col.aggregate(g, level, rng) for _ in range(R)]).ravel()
        means[clip] = (est.mean(), est.std(ddof=1) / np.sqrt(est.size))
    (m_clip, se_clip), (m_raw, se_raw) = means[True], means[False]
    assert abs(m_raw - 0.5) <= 5 * se_raw
    assert 0.5 - m_clip > 5 * se_clip and m_clip < m_raw - 5 * np.hypot(se_clip, se_raw)


def test_budget_matched_reference_uses_the_level_budget():
    """harmony_at_level at level t behaves as Harmony at ε_t: with every component at the least
    private level (5ε), its variance is Harmony's at 5ε, below Harmony's at ε."""
    G, D, R = 40, 2, 4000
    g = np.zeros((G, D))
    level = np.zeros((G, D), dtype=np.int64)
    rng = rng_for(5, "at-level")
    est = np.array([GradedGradientCollector("harmony_at_level", LEVELS).aggregate(g, level, rng) for _ in range(R)])
    var = (D * get_mechanism("harmony", float(LEVELS.eps[0])).variance(g)).sum(axis=0) / G**2
    assert np.all(np.abs(est.var(axis=0, ddof=1) / var - 1) <= 5 * _variance_ratio_se(est))


@pytest.mark.parametrize("mechanism", ["graded_laplace", "hiera", "pm_at_level"])
def test_compiled_sgd_step_is_unbiased_with_the_closed_form_variance(mechanism, monkeypatch):
    """One compiled SGD step (``GradedSteps.run_compiled``) from θ = 0 of R fits on the same group of G
    users (linear model, λ = 0, η = 1, so θ₁ = −step): the mean of the R steps is the group's mean
    clipped gradient within 5 standard errors, and (per-user mechanisms) their variance is the
    closed form of ``_theory_variance`` within 5 standard errors of the variance ratio; HierA,
    unclipped (unbiased), against the sample SE of its R steps."""
    from ldprepro.domain.graded_sgd import GradedSteps
    from ldprepro.domain.sgd import ldp_sgd_fits

    monkeypatch.setenv("LDPREPRO_JIT", "1")
    rng = rng_for(7, {"compiled-step": mechanism})
    G, R = 60, 8000
    X = np.hstack([rng.uniform(0.2, 1, (G, 2)), rng.uniform(-1, -0.2, (G, 2))])  # means far from 0
    y = rng.uniform(0.1, 0.45, G)
    g = np.clip(-2 * y[:, None] * X, -1, 1)  # ∇ of (xᵀθ − y)² at θ = 0
    level = component_levels(X, y, LEVELS_1, None)
    assert len(np.unique(level)) >= 3
    collect = GradedSteps(GradedGradientCollector(mechanism, LEVELS_1, mu=2, clip=False), level)
    assert collect.compiled
    est = -ldp_sgd_fits(X, y, [np.arange(G)] * R, "linear", collect, G, 0.0, "constant", 1.0, rng)
    if mechanism == "hiera":
        se = est.std(axis=0, ddof=1) / np.sqrt(R)
    else:
        var = _theory_variance(mechanism, g, level, "sample_one")
        se = np.sqrt(var / R)
        assert np.all(np.abs(est.var(axis=0, ddof=1) / var - 1) <= 5 * _variance_ratio_se(est))
    assert np.all(np.abs(est.mean(axis=0) - g.mean(axis=0)) <= 5 * se)
