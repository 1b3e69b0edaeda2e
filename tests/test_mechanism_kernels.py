"""The fused (numba) samplers give bit-identical outputs to the numpy samplers they transcribe.

Each mechanism is run twice from the same seed, once with ``LDPREPRO_JIT=0`` (the numpy
reference) and once fused; outputs must agree bit for bit (signed zeros included) over the whole
accepted ε range, across several blocks, for inputs at and between the ends of [−1, 1]. The laws
themselves are tested on the numpy path elsewhere (test_mechanisms*.py), so together the fused
samplers inherit those checks.
"""

from __future__ import annotations

import numpy as np
import pytest

from ldprepro.domain.mechanisms import MECHANISMS, Mixture, get_mechanism, kernels
from ldprepro.domain.mechanisms.base import CHUNK, FUSED_MIN_SIZE
from ldprepro.domain.mechanisms.discretize import discretize

EPS_GRID = [1e-6, 0.05, 0.5, 0.6, 0.62, 0.7, 1.0, 1.7, 2.0, 4.0, 8.0, 40.0, 700.0]
FUSED = [name for name in MECHANISMS if name != "dct"] + ["dct"]


def _inputs(rng, n):
    edge = np.array([-1.0, 1.0, 0.0, -0.0, 0.5, -0.5, np.nextafter(1.0, 0.0), np.nextafter(-1.0, 0.0)])
    return np.concatenate([edge, rng.uniform(-1.0, 1.0, n - edge.size)])


def _both_paths(mech, x, monkeypatch, seed=12345):
    monkeypatch.setenv("LDPREPRO_JIT", "0")
    ref = mech.perturb(x, np.random.default_rng(seed))
    monkeypatch.setenv("LDPREPRO_JIT", "1")
    fused = mech.perturb(x, np.random.default_rng(seed))
    return ref, fused


def _assert_bit_identical(ref, fused, what):
    assert ref.shape == fused.shape
    differ = np.flatnonzero(ref.view(np.uint64) != fused.view(np.uint64))
    assert differ.size == 0, (
        f"{what}: {differ.size} outputs differ, first at {differ[0]}: {ref.flat[differ[0]]!r} vs {fused.flat[differ[0]]!r}"
    )


@pytest.mark.parametrize("name", FUSED)
def test_every_mechanism_has_a_fused_sampler(name):
    """The built-in mechanisms all run fused (else this file would test nothing for them)."""
    assert get_mechanism(name, 1.0)._fused() is not None


@pytest.mark.parametrize("name", FUSED)
@pytest.mark.parametrize("eps", EPS_GRID)
def test_fused_equals_numpy_bit_for_bit(name, eps, monkeypatch):
    mech = get_mechanism(name, eps)
    x = _inputs(np.random.default_rng(7), 2 * mech.block_users + 123)  # three blocks, the last partial
    ref, fused = _both_paths(mech, x, monkeypatch)
    _assert_bit_identical(ref, fused, f"{name} at eps={eps}")


@pytest.mark.parametrize("name", ["pm", "pm_sub", "pm_opt", "hm", "hm_tp"])
@pytest.mark.parametrize("eps", [0.1, 0.62, 1.0, 4.0, 50.0])
def test_fused_discretised_equals_numpy(name, eps, monkeypatch):
    mech = discretize(get_mechanism(name, eps), 10)
    assert mech._fused_sampler() is not None
    x = _inputs(np.random.default_rng(8), CHUNK + 77)
    ref, fused = _both_paths(mech, x, monkeypatch)
    _assert_bit_identical(ref, fused, f"{name}_disc at eps={eps}")


def test_fused_three_branch_mixture_with_a_discretised_branch(monkeypatch):
    """A general mixture (three branches, one drawing its own uniforms) against the numpy path."""
    eps = 1.3
    pm, duchi, three = (get_mechanism(n, eps) for n in ("pm", "duchi", "three_outputs"))
    mech = Mixture(eps, [discretize(pm, 4), duchi, three], [0.5, 0.3, 0.2], name="mix3")
    assert mech._fused_sampler() is not None
    x = _inputs(np.random.default_rng(9), CHUNK + 5)
    ref, fused = _both_paths(mech, x, monkeypatch)
    _assert_bit_identical(ref, fused, "three-branch mixture")


@pytest.mark.parametrize("first", ["pm", "pm_disc", "duchi", "dct"])
@pytest.mark.parametrize("second", ["duchi", "three_outputs", "dct", "pm_sub"])
def test_fused_two_branch_mixtures(first, second, monkeypatch):
    """Every loop of the two-branch mixtures (specialised pairs and the generic one)."""
    eps = 2.0
    base = get_mechanism(first.removesuffix("_disc"), eps)
    head = discretize(base, 3) if first.endswith("_disc") else base
    mech = Mixture(eps, [head, get_mechanism(second, eps)], [0.35, 0.65], name="mix2")
    assert mech._fused_sampler() is not None
    x = _inputs(np.random.default_rng(10), CHUNK + 31)
    ref, fused = _both_paths(mech, x, monkeypatch)
    _assert_bit_identical(ref, fused, f"{first} + {second}")


def test_shapes_and_strided_inputs(monkeypatch):
    mech = get_mechanism("pm_sub", 1.0)
    x = np.random.default_rng(3).uniform(-1, 1, (3000, 4))[:, ::2]  # non-contiguous
    assert x.size >= FUSED_MIN_SIZE
    ref, fused = _both_paths(mech, x, monkeypatch)
    assert fused.shape == (3000, 2)
    _assert_bit_identical(ref, fused, "strided input")


@pytest.mark.parametrize("name", FUSED)
@pytest.mark.parametrize("bad", [1.5, -1.0000001, np.nan])
def test_fused_refuses_bad_input_like_numpy(name, bad, monkeypatch):
    mech = get_mechanism(name, 1.0)
    x = np.zeros(mech.block_users + 10)
    x[mech.block_users + 3] = bad  # in the second block
    messages = []
    for flag in ("0", "1"):
        monkeypatch.setenv("LDPREPRO_JIT", flag)
        with pytest.raises(ValueError, match="must lie in") as err:
            mech.perturb(x, np.random.default_rng(0))
        messages.append(str(err.value))
    assert messages[0] == messages[1]


def test_subclass_overriding_its_sampler_is_not_fused(monkeypatch):
    """A subclass that changes ``_sample`` must not silently run the parent's compiled loop."""
    from ldprepro.domain.mechanisms.piecewise import PM

    class Shifted(PM):
        def _sample(self, x, u, lo=0.0, width=1.0):
            return super()._sample(x, u, lo, width) + 1.0

    mech = Shifted(1.0)
    assert mech._fused() is None
    monkeypatch.setenv("LDPREPRO_JIT", "1")
    y = mech.perturb(np.zeros(1000), np.random.default_rng(0))
    assert abs(y.mean() - 1.0) < 0.2


def test_small_inputs_run_the_numpy_sampler(monkeypatch):
    """Below FUSED_MIN_SIZE the numpy sampler runs (same outputs; numba is not imported for it)."""
    mech = get_mechanism("pm", 1.0)
    calls = []
    monkeypatch.setattr(mech, "_fused", lambda: calls.append(1) or None)
    mech.perturb(np.zeros(FUSED_MIN_SIZE - 1), np.random.default_rng(0))
    assert calls == []
    mech.perturb(np.zeros(FUSED_MIN_SIZE), np.random.default_rng(0))
    assert calls == [1]


def test_jit_switch_is_read_per_call(monkeypatch):
    monkeypatch.setenv("LDPREPRO_JIT", "0")
    assert not kernels.enabled()
    monkeypatch.setenv("LDPREPRO_JIT", "1")
    assert kernels.enabled()


@pytest.mark.parametrize("eps", [0.1, 1.0, 8.0, 700.0])
@pytest.mark.parametrize("shape", [(1, 5000, 3), (7, 40, 16), (2, 600, 100)])
def test_fused_duchi_multidim_group_means_equal_numpy(eps, shape, monkeypatch):
    """Duchi's d-dimensional mechanism: the compiled group means equal the per-user path's
    (perturb, then the mean over each group) bit for bit."""
    from ldprepro.domain.mechanisms import get_multidim

    mech = get_multidim("duchi", eps, shape[2])
    x = np.random.default_rng(11).uniform(-1, 1, shape)
    x[0, 0, :] = 1.0
    x[0, 1, :] = -1.0
    out = []
    for flag in ("0", "1"):
        monkeypatch.setenv("LDPREPRO_JIT", flag)
        rng = np.random.default_rng(4)
        out.append((mech.group_means(x, rng), rng.random()))
    _assert_bit_identical(out[0][0], out[1][0], f"duchi md {shape} eps={eps}")
    assert out[0][1] == out[1][1]


def test_fused_duchi_multidim_refuses_bad_input(monkeypatch):
    from ldprepro.domain.mechanisms import get_multidim

    mech = get_multidim("duchi", 1.0, 8)
    x = np.zeros((1, 1000, 8))
    x[0, 500, 3] = 1.2
    monkeypatch.setenv("LDPREPRO_JIT", "1")
    with pytest.raises(ValueError, match="must lie in"):
        mech.group_means(x, np.random.default_rng(0))


@pytest.mark.parametrize("d,k", [(2, 1), (3, 2), (100, 3), (100, 99), (28, 5), (7, 6)])
@pytest.mark.parametrize("seed", [0, 5])
def test_compiled_attribute_subsets_equal_numpys_draws(d, k, seed, monkeypatch):
    """LDP-SGD's sampled attributes (Floyd, ``sample_attributes``): the compiled loop gives the numpy
    loop's subsets and leaves the generator where it does, so every later draw is unchanged. n = 4099
    users, odd, so the PCG64 32-bit buffer is left half-used; on d = 3 (j ≤ 2) Lemire's rejection
    occurs, rarely, and must be repeated exactly."""
    from ldprepro.domain.mechanisms import get_multidim

    mech = get_multidim("pm", 1.0, d, k=k) if k > 1 else get_multidim("pm", 1.0, d)
    out = []
    for flag in ("0", "1"):
        monkeypatch.setenv("LDPREPRO_JIT", flag)
        rng = np.random.default_rng(seed)
        cols = mech.sample_attributes(4099, rng)
        out.append((cols, rng.bit_generator.state, rng.random(3)))
    np.testing.assert_array_equal(out[0][0], out[1][0])
    assert out[0][1] == out[1][1] and (out[0][2] == out[1][2]).all()
    cols = out[1][0]
    assert cols.shape == (4099, mech.k) and cols.min() >= 0 and cols.max() < d
    assert all(len(set(row)) == mech.k for row in cols.tolist())  # distinct attributes per user


def test_compiled_bounded_integers_repeat_numpys_rejections():
    """``_jit._bounded`` against ``Generator.integers(0, top + 1)`` value by value, on ranges whose
    Lemire rejection threshold is large (top near 2³¹: about half of the draws are rejected) and
    small; the generator's state agrees after each."""
    from ldprepro.domain.mechanisms import _jit

    for top in (1, 2, 6, 99, 2**31, 2**31 + 12345, 2**32 - 3):
        a, b = np.random.default_rng(top % 97), np.random.default_rng(top % 97)
        want = a.integers(0, top + 1, size=257)
        cols = np.empty((257, 1), dtype=np.int64)
        got = _jit.floyd_subsets(b, top + 1, cols)[:, 0]  # k = 1: j = top, no repeats possible
        np.testing.assert_array_equal(got, want)
        assert a.bit_generator.state == b.bit_generator.state, top
