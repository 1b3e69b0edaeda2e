"""The compiled SGD steps (``_sgd_jit``) against the numpy steps of ``sgd.ldp_sgd_fits``.

The two paths draw the same random numbers in the same order and differ only in the rounding of
xᵀθ (BLAS sums in another order) and of the logistic σ, so their θ agree to rounding: a path that
took a different uniform, attribute, user or step size would differ by the noise itself (orders of
magnitude more), which ``test_a_changed_stream_is_detected`` confirms. The generator is left in
the same state by both.
"""

from __future__ import annotations

import numpy as np
import pytest

from ldprepro.domain.mechanisms import get_multidim
from ldprepro.domain.sgd import group_collector, ldp_sgd_fits
from ldprepro.domain.sgd_collectors import _skip_uniforms
from ldprepro.domain.sgd_compiled import _report_kernel
from ldprepro.pipeline.seeding import rng_for

#: Alg. 6 sampling around every compiled 1-D sampler and DCT, Duchi's d-dimensional mechanism,
#: Laplace ε/d.
MECHANISMS = ["pm_sub", "pm", "pm_opt", "duchi", "harmony", "three_outputs", "hm", "hm_tp", "laplace", "dct"]
#: Zhao Alg. 5 on the continuous mechanisms (a mixture's continuous branch draws its own uniforms).
DISCRETISED = ["pm", "pm_sub", "hm", "hm_tp"]


def _data(model, n=700, d=6, seed=3):
    rng = rng_for(seed, "sgd-kernels")
    X = rng.uniform(-1, 1, (n, d))
    X[:, 0] = np.where(X[:, 0] > 0, 1.0, -1.0)  # a binary column, as the k−1 encodings give
    y = np.clip(X @ np.linspace(-0.4, 0.4, d) + rng.normal(0, 0.1, n), -1, 1)
    if model != "linear":
        y = np.where(y >= 0, 1.0, -1.0)
    return X, y


def _both(monkeypatch, X, y, orders, model, make_collector, G, schedule="constant_inv_sqrt_T"):
    out = []
    for flag in ("0", "1"):
        monkeypatch.setenv("LDPREPRO_JIT", flag)
        rng = rng_for(5, "noise")
        theta = ldp_sgd_fits(X, y, orders, model, make_collector(), G, 1e-3, schedule, 1.0, rng)
        out.append((theta, rng.random()))
    return out


@pytest.mark.parametrize("model", ["linear", "logistic", "svm"])
@pytest.mark.parametrize("mechanism", [*MECHANISMS, None])
@pytest.mark.parametrize("eps", [0.7, 4.0])
def test_compiled_steps_equal_numpy_steps_to_rounding(model, mechanism, eps, monkeypatch):
    X, y = _data(model)
    orders = [rng_for(6, f).permutation(X.shape[0]) for f in range(4)]
    d = X.shape[1]

    def collector():
        return group_collector(None if mechanism is None else get_multidim(mechanism, eps, d))

    (ref, ref_next), (fast, fast_next) = _both(monkeypatch, X, y, orders, model, collector, G=7)
    np.testing.assert_allclose(fast, ref, rtol=1e-9, atol=1e-12)
    assert fast_next == ref_next  # the same number of draws, in the same calls


@pytest.mark.parametrize("G", [1, 2, 3, 4])
def test_compiled_laplace_steps_draw_the_numpy_steps_noise_for_small_groups(G, monkeypatch):
    """Groups of ≤ 3 users take their Laplace sums from exponentials, larger ones from two Gamma
    draws (``sufficient.laplace_group_sum``): either way the compiled run of steps draws what the
    numpy steps draw one step at a time."""
    X, y = _data("logistic")
    orders = [rng_for(9, f).permutation(X.shape[0]) for f in range(3)]

    def collector():
        return group_collector(get_multidim("laplace", 8.0, X.shape[1]))

    (ref, ref_next), (fast, fast_next) = _both(monkeypatch, X, y, orders, "logistic", collector, G=G)
    np.testing.assert_allclose(fast, ref, rtol=1e-9, atol=1e-12)
    assert fast_next == ref_next


@pytest.mark.parametrize("d", [53, 54, 120])
def test_compiled_duchi_steps_read_every_sign_word(d, monkeypatch):
    """Duchi's signs span ⌈d/53⌉ uniforms per user: at d = 53, 54 and 120 (one, two, three words)
    the compiled steps equal the numpy steps and draw the same numbers."""
    X, y = _data("logistic", n=300, d=d)
    orders = [rng_for(8, f).permutation(X.shape[0]) for f in range(2)]

    def collector():
        return group_collector(get_multidim("duchi", 2.0, d))

    (ref, ref_next), (fast, fast_next) = _both(monkeypatch, X, y, orders, "logistic", collector, G=5)
    np.testing.assert_allclose(fast, ref, rtol=1e-9, atol=1e-12)
    assert fast_next == ref_next


def test_unequal_folds_and_inv_sqrt_t_schedule(monkeypatch):
    """Training folds of different sizes run fit by fit, the collector's block of sampled
    attributes carried from one fit to the next; the 1/√t schedule."""
    X, y = _data("logistic", n=500)
    orders = [rng_for(7, f).permutation(X.shape[0] - f) for f in range(3)]

    def collector():
        return group_collector(get_multidim("hm_tp", 2.0, X.shape[1]))

    (ref, ref_next), (fast, fast_next) = _both(monkeypatch, X, y, orders, "logistic", collector, 3, "inv_sqrt_t")
    np.testing.assert_allclose(fast, ref, rtol=1e-9, atol=1e-12)
    assert fast_next == ref_next


def test_large_groups_and_more_steps_than_a_block(monkeypatch):
    """More steps than one block of sampled attributes (blocks of 64 indices here), and a group
    larger than the prefetch distance."""
    from ldprepro.domain.sgd_collectors import _SampledCollector

    monkeypatch.setattr(_SampledCollector, "BLOCK_VALUES", 64)
    X, y = _data("linear", n=2_000, d=9)
    orders = [rng_for(8, f).permutation(X.shape[0]) for f in range(2)]
    for G in (1, 40):
        (ref, _), (fast, _) = _both(
            monkeypatch, X, y, orders, "linear", lambda: group_collector(get_multidim("pm", 1.0, 9)), G
        )
        np.testing.assert_allclose(fast, ref, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("mechanism,G", [("duchi", 5), ("duchi", 1), ("laplace", 2), ("laplace", 9)])
def test_full_collectors_draw_the_same_stream_in_runs_of_any_length(mechanism, G, monkeypatch):
    """Duchi's uniforms and Laplace ε/d's noise are drawn for runs of steps (``_FullCollector``'s
    block sizes): with runs of one step, of a few steps (the last run shorter) and of the default
    length, the fits are bit-identical and equal the numpy steps, and the generator ends in the
    same state."""
    from ldprepro.domain.sgd_collectors import _FullCollector

    X, y = _data("logistic", n=400, d=7)
    orders = [rng_for(11, f).permutation(X.shape[0]) for f in range(3)]

    def collector():
        return group_collector(get_multidim(mechanism, 2.0, X.shape[1]))

    per_step_values = 3 * G * (X.shape[1] + 2) if mechanism == "duchi" else 2 * 3 * X.shape[1]
    runs = []
    for steps in (None, 1, 3):
        if steps is not None:
            monkeypatch.setattr(_FullCollector, "DUCHI_BLOCK_VALUES", steps * per_step_values)
            monkeypatch.setattr(_FullCollector, "LAPLACE_BLOCK_VALUES", steps * per_step_values)
        (ref, ref_next), (fast, fast_next) = _both(monkeypatch, X, y, orders, "logistic", collector, G=G)
        np.testing.assert_allclose(fast, ref, rtol=1e-9, atol=1e-12)
        assert fast_next == ref_next
        runs.append((fast, fast_next))
    for fast, fast_next in runs[1:]:
        np.testing.assert_array_equal(fast, runs[0][0])
        assert fast_next == runs[0][1]


@pytest.mark.parametrize("chunks,n_steps,half_word", [([5], 3, False), ([1], 4, True), ([32768, 17], 2, False),
                                                     ([3, 8, 13], 5, True)])  # fmt: skip
def test_compiled_dct_draws_are_the_python_draws(chunks, n_steps, half_word):
    """``_sgd_jit.dct_draws`` against ``DCT._perturb_block``'s draws made in Python (``rng.bytes``
    unpacked, then ``rng.random``) step after step and chunk after chunk: the same bits and
    uniforms, and the generator left in the same state, also when it starts with a buffered
    32-bit half word (one ``integers(…, dtype=uint32)`` drawn before)."""
    from ldprepro.domain import _sgd_jit

    python_rng, compiled_rng = rng_for(3, "dct-draws"), rng_for(3, "dct-draws")
    if half_word:
        for r in (python_rng, compiled_rng):
            r.integers(0, 2**32, dtype=np.uint32)
    bits, u = [], []
    for _ in range(n_steps):
        for c in chunks:
            bits.append(np.unpackbits(np.frombuffer(python_rng.bytes((2 * c + 7) // 8), dtype=np.uint8)))
            u.append(python_rng.random(c))
    bits, u = np.concatenate(bits), np.concatenate(u)
    got_bits, got_u = np.empty(bits.size, dtype=np.uint8), np.empty(u.size)
    used = _sgd_jit.dct_draws(compiled_rng, n_steps, np.array(chunks, dtype=np.int64), got_bits, got_u)
    assert used == (bits.size, u.size)
    np.testing.assert_array_equal(got_bits, bits)
    np.testing.assert_array_equal(got_u, u)
    assert compiled_rng.integers(0, 2**32, dtype=np.uint32) == python_rng.integers(0, 2**32, dtype=np.uint32)
    assert compiled_rng.random() == python_rng.random()


def test_a_changed_stream_is_detected(monkeypatch):
    """The tolerance above separates rounding from a different draw: the same fits from another
    seed differ far beyond it."""
    X, y = _data("linear")
    orders = [rng_for(6, f).permutation(X.shape[0]) for f in range(4)]
    a = ldp_sgd_fits(
        X, y, orders, "linear", group_collector(get_multidim("pm", 2.0, 6)), 7, 1e-3, "constant", 1.0, rng_for(1)
    )
    b = ldp_sgd_fits(
        X, y, orders, "linear", group_collector(get_multidim("pm", 2.0, 6)), 7, 1e-3, "constant", 1.0, rng_for(2)
    )
    assert not np.allclose(a, b, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("model", ["linear", "logistic"])
@pytest.mark.parametrize("mechanism", DISCRETISED)
@pytest.mark.parametrize("m", [1, 3, 10])
@pytest.mark.parametrize("eps", [0.7, 4.0])
def test_discretised_reports_equal_numpy_steps_to_rounding(model, mechanism, m, eps, monkeypatch):
    X, y = _data(model)
    orders = [rng_for(6, f).permutation(X.shape[0]) for f in range(4)]

    def collector():
        return group_collector(get_multidim(mechanism, eps, X.shape[1], discretize=m))

    (ref, ref_next), (fast, fast_next) = _both(monkeypatch, X, y, orders, model, collector, G=7)
    np.testing.assert_allclose(fast, ref, rtol=1e-9, atol=1e-12)
    assert fast_next == ref_next


@pytest.mark.parametrize(
    "mechanism,m", [("pm", 10), ("hm_tp", 10), ("hm", 2), ("pm", None), ("duchi", None), ("dct", None)]
)
def test_a_step_larger_than_a_chunk(mechanism, m, monkeypatch):
    """One step of 2 × 20,000 reports (more than ``base.CHUNK``): the uniforms are laid out chunk
    by chunk as ``perturb`` draws them; Duchi's compiled group means (F·S·d ≥ FUSED_MIN_SIZE)."""
    X, y = _data("logistic", n=20_000, d=3)
    orders = [rng_for(9, f).permutation(X.shape[0]) for f in range(2)]

    def collector():
        return group_collector(get_multidim(mechanism, 1.0, 3, discretize=m))

    (ref, ref_next), (fast, fast_next) = _both(monkeypatch, X, y, orders, "logistic", collector, G=20_000)
    np.testing.assert_allclose(fast, ref, rtol=1e-9, atol=1e-12)
    assert fast_next == ref_next


def test_report_kernels_lay_out_their_uniforms():
    """One uniform per value (plain and one-uniform mixtures), two with Alg. 5's rounding, a
    number that depends on the draws (at most three) for a mixture with a discretised branch."""
    assert _report_kernel(get_multidim("pm", 2.0, 6).mechanism).per_value == 1
    assert _report_kernel(get_multidim("hm", 2.0, 6).mechanism).per_value == 1
    plain = _report_kernel(get_multidim("pm", 2.0, 6, discretize=4).mechanism)
    assert (plain.per_value, plain.rounding[0]) == (2, pytest.approx(plain.rounding[0]))
    assert plain.rounding[0] > 0 and not plain.fresh.any()
    mixed = _report_kernel(get_multidim("hm_tp", 2.0, 6, discretize=4).mechanism)
    assert (mixed.per_value, mixed.most_per_value) == (0, 3)
    assert mixed.fresh.tolist() == [True, False]


@pytest.mark.parametrize("mechanism", ["laplace", "dct"])
def test_mechanisms_without_a_compiled_report_run_the_numpy_steps(mechanism, monkeypatch):
    """1-D samplers that draw other than uniforms (Laplace's exponentials, DCT's bits) have no
    compiled report (DCT's steps have their own kernel); Duchi with Wang's literal ties
    (rejection sampling) runs numpy steps."""
    mech = get_multidim(mechanism, 2.0, 6)
    one_d = getattr(mech, "mechanism", None)
    assert _report_kernel(one_d) is None
    X, y = _data("linear")
    fits = []
    for flag in ("0", "1"):
        monkeypatch.setenv("LDPREPRO_JIT", flag)
        wang = group_collector(get_multidim("duchi", 2.0, 6, duchi_ties="wang"))
        fits.append(ldp_sgd_fits(X, y, [np.arange(700)], "linear", wang, 7, 0.0, "constant", 1.0, rng_for(4)))
    np.testing.assert_array_equal(fits[0], fits[1])


def test_skipping_uniforms_keeps_a_buffered_half_word():
    """``_skip_uniforms`` leaves the generator as drawing the uniforms would, also when it holds a
    buffered 32-bit half (after ``integers``), which ``advance`` would drop."""
    for warm in (lambda r: None, lambda r: r.integers(0, 10, size=7)):
        a, b = rng_for(3, "skip"), rng_for(3, "skip")
        warm(a), warm(b)
        a.random(1234)
        _skip_uniforms(b, 1234)
        assert a.integers(0, 2**31, size=5).tolist() == b.integers(0, 2**31, size=5).tolist()
        assert a.random() == b.random()


def test_clip_above_one_still_raises_through_the_numpy_path(monkeypatch):
    """Gradients clipped to [−2, 2] are outside the mechanisms' domain: the compiled path is not
    taken and the numpy path raises, as before."""
    monkeypatch.setenv("LDPREPRO_JIT", "1")
    X, y = _data("linear")
    X = X * 50.0
    with pytest.raises(ValueError, match="must lie in"):
        ldp_sgd_fits(
            X, y, [np.arange(700)], "linear", group_collector(get_multidim("pm", 2.0, 6)), 7, 0.0, "constant",
            1.0, rng_for(1), clip=2.0,
        )  # fmt: skip


@pytest.mark.parametrize("mechanism", ["pm", "harmony", "pm_at_level", "harmony_at_level", "hiera", "graded_laplace"])
@pytest.mark.parametrize("eps", [0.3, 2.0])
@pytest.mark.parametrize("block", [None, 100])
def test_graded_collection_compiled_steps_equal_numpy_steps(mechanism, eps, block, monkeypatch):
    """Paper 000's graded collection (Fig. 3): a block of components, then per step one uniform per
    user (level by level for the *_at_level references), one standard Laplace draw per user (graded
    Laplace), or LHP's draws and PLC's binomials (HierA, drawn inside the compiled loop).
    ``block``: components per block (None: the default, one block here; 100: many blocks, the last
    cut by the last step)."""
    from ldprepro.domain.graded import GradedLevels
    from ldprepro.domain.graded_sgd import GradedGradientCollector, GradedSteps, component_levels

    if block is not None:
        monkeypatch.setattr(GradedSteps, "BLOCK_VALUES", block)
    X, y = _data("linear", n=900, d=5)
    levels = GradedLevels.from_base_eps(eps, k=5)
    side = component_levels(X, y, levels, intercept_column=None)
    assert len(np.unique(side)) > 2  # several levels, so the per-level layout is exercised
    orders = [rng_for(10, f).permutation(X.shape[0]) for f in range(3)]

    def collector():
        return GradedSteps(GradedGradientCollector(mechanism, levels), side)

    for G in (9, 120):
        (ref, ref_next), (fast, fast_next) = _both(monkeypatch, X, y, orders, "linear", collector, G, "inv_sqrt_t")
        np.testing.assert_allclose(fast, ref, rtol=1e-9, atol=1e-12)
        assert fast_next == ref_next
    assert collector().compiled


@pytest.mark.parametrize(
    "name, kwargs, expected",
    [
        ("laplace", {}, True),
        ("duchi", {}, True),
        ("duchi", {"duchi_ties": "wang"}, False),
        ("pm", {}, True),
        ("hm_tp", {"discretize": 3}, True),
        ("three_outputs", {}, True),
        ("dct", {}, True),
    ],
)
def test_compiled_flag_says_whether_compiled_steps_run(name, kwargs, expected, monkeypatch):
    """``collect.compiled`` decides whether an SGD job runs a setting fit by fit (compiled steps) or
    batched (numpy steps); it must say exactly what ``run_compiled`` does."""
    X, y = _data("linear")
    orders = [rng_for(6, f).permutation(X.shape[0]) for f in range(2)]
    collect = group_collector(get_multidim(name, 1.0, X.shape[1], **kwargs))
    ran = []
    real = type(collect).run_compiled

    def spy(self, fits, rng):
        ran.append(real(self, fits, rng))
        return ran[-1]

    monkeypatch.setattr(type(collect), "run_compiled", spy)
    ldp_sgd_fits(X, y, orders, "linear", collect, 7, 1e-3, "constant", 1.0, rng_for(1))
    assert collect.compiled is expected and ran == [expected]


def test_dct_settings_run_batched_not_fit_by_fit():
    """DCT's compiled steps draw step by step in Python (its byte stream and uniforms as perturb
    draws them), so a job runs its fits batched; every other compiled collector fit by fit."""
    from ldprepro.domain.sgd import runs_fit_by_fit

    assert not runs_fit_by_fit(group_collector(get_multidim("dct", 1.0, 6)))
    assert runs_fit_by_fit(group_collector(get_multidim("pm", 1.0, 6)))
    assert runs_fit_by_fit(group_collector(get_multidim("duchi", 1.0, 6)))
    assert not runs_fit_by_fit(group_collector(get_multidim("duchi", 1.0, 6, duchi_ties="wang")))
    assert runs_fit_by_fit(group_collector())


@pytest.mark.parametrize(
    "mu, mode, k, clip",
    [(1, "intended", 5, True), (2, "intended", 5, False), (3, "printed", 5, True), (3, "prose", 5, False),
     (2, "intended", 2, True), (3, "intended", 3, False)],
)  # fmt: skip
def test_hiera_compiled_steps_equal_numpy_steps_in_every_setting(mu, mode, k, clip, monkeypatch):
    """HierA's compiled steps (LHP's draws and PLC's binomials from the job's Generator, inside the
    loop) against ``aggregate_fits`` for every μ, step-5 mode, number of levels and step-6 clipping:
    θ to rounding and the generator left in the same state."""
    from ldprepro.domain.graded import GradedLevels
    from ldprepro.domain.graded_sgd import GradedGradientCollector, GradedSteps, component_levels

    X, y = _data("linear", n=600, d=4)
    levels = GradedLevels.from_base_eps(0.8, k=k)
    side = component_levels(X, y, levels, intercept_column=None)
    orders = [rng_for(11, f).permutation(X.shape[0]) for f in range(2)]

    def collector():
        return GradedSteps(GradedGradientCollector("hiera", levels, mu=mu, step5_mode=mode, clip=clip), side)

    for G in (5, 80):
        (ref, ref_next), (fast, fast_next) = _both(monkeypatch, X, y, orders, "linear", collector, G, "inv_sqrt_t")
        np.testing.assert_allclose(fast, ref, rtol=1e-9, atol=1e-12)
        assert fast_next == ref_next


def test_bounded_integers_are_numpys():
    """``_graded_jit._integer_below`` draws what ``Generator.integers(0, m)`` draws (Lemire's method on
    32-bit outputs, with its rejections for large m), sharing the buffered half-word with ``random``."""
    import numba

    from ldprepro.domain._graded_jit import _integer_below

    @numba.njit
    def draw(rng, m, n):
        ints, us = np.empty(n, np.int64), np.empty(n)
        for i in range(n):
            ints[i] = _integer_below(rng.bit_generator, m)
            us[i] = rng.random()
        return ints, us

    for m in (1, 2, 3, 4, 5, 7, 3_000_000_000, 2**32 - 1):
        a, b = rng_for(2, {"m": m}), rng_for(2, {"m": m})
        ints, us = draw(a, m, 400)
        ref = [(b.integers(0, m), b.random()) for _ in range(400)]
        assert ints.tolist() == [r[0] for r in ref] and us.tolist() == [r[1] for r in ref]
        assert a.random() == b.random()
