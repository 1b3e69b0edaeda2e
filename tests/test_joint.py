"""Paper 004 (docs/papers/lremh.md): RR-LDP user side, EM / LASSO / LREMH, acceptance tests §6.

Fixed seeds; tolerances from theory (standard errors as the spec states them), never tuned.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldprepro.data.lopub_adult import equal_width_codes
from ldprepro.domain.frequency import rappor_channel
from ldprepro.domain.joint import (
    RRLDP,
    avd,
    design_matrix,
    em,
    em_candidates,
    lasso,
    lremh,
    privacy_report,
    true_joint,
    unbiased_bit_counts,
)
from ldprepro.pipeline.seeding import rng_for

NLTCS_SIZES = [2] * 16
ADULT_SIZES = [16, 7, 16, 16, 16, 7, 14, 6, 5, 2, 16, 16, 16, 41, 2]
SEED = 20261121


def random_records(sizes, n, rng, skew=True):
    """Correlated records: attribute j depends on attribute j-1 (so joints are not products)."""
    codes = np.empty((n, len(sizes)), dtype=np.int64)
    codes[:, 0] = rng.integers(0, sizes[0], n)
    for j in range(1, len(sizes)):
        follow = rng.random(n) < 0.6
        codes[:, j] = np.where(follow, codes[:, j - 1] % sizes[j], rng.integers(0, sizes[j], n))
    return codes


# ---------------------------------------------------------------------------------------- §6.1
@pytest.mark.parametrize("sizes,length", [(NLTCS_SIZES, 32), (ADULT_SIZES, 196)])
def test_encoding_lengths_and_one_hot(sizes, length):
    rr = RRLDP(sizes, 0.5)
    assert rr.length == length
    codes = random_records(sizes, 500, rng_for(SEED, "enc"))
    enc = rr.encode(codes)
    assert enc.shape == (500, length)
    assert (enc.sum(axis=1) == len(sizes)).all()
    for j, off in enumerate(rr.offsets):
        assert (enc[:, off : off + sizes[j]].argmax(axis=1) == codes[:, j]).all()
    with pytest.raises(ValueError):
        rr.encode(np.full((1, len(sizes)), 99))


# ---------------------------------------------------------------------------------------- §6.2
@pytest.mark.parametrize("f", [0.1, 0.5])
@pytest.mark.parametrize("path", ["two_stage", "one_shot"])
def test_channel_probabilities(f, path):
    """Empirical P(T=1|s=1), P(T=1|s=0) over 10^6 bits each within 3 SE of q*, p* (docs/papers/lremh.md §6.2)."""
    rr = RRLDP([2] * 8, f)
    qs, ps = rappor_channel(f, 0.5, 0.75)
    assert math.isclose(qs, 0.75 - 0.125 * f) and math.isclose(ps, 0.5 + 0.125 * f)
    rng = rng_for(SEED, {"test": "channel", "f": f, "path": path})
    codes = rng.integers(0, 2, size=(125_000, 8))  # 10^6 one-bits and 10^6 zero-bits
    s = rr.encode(codes).astype(bool)
    t = rr.perturb_two_stage(codes, rng)[0] if path == "two_stage" else rr.perturb(codes, rng)
    for mask, prob in [(s, qs), (~s, ps)]:
        n = mask.sum()
        assert n == 1_000_000
        se = math.sqrt(prob * (1 - prob) / n)
        assert abs(t[mask].mean() - prob) <= 3 * se, (path, f, t[mask].mean(), prob)


def test_permanent_stage_alone():
    rr = RRLDP([3, 4], 0.4)
    rng = rng_for(SEED, "perm")
    codes = rng.integers(0, 3, size=(100_000, 2)) % np.array([3, 4])
    s = rr.encode(codes).astype(bool)
    perm = rr.permanent(codes, rng)
    for mask, prob in [(s, 0.8), (~s, 0.2)]:
        se = math.sqrt(prob * (1 - prob) / mask.sum())
        assert abs(perm[mask].mean() - prob) <= 5 * se


# ---------------------------------------------------------------------------------------- §6.3
def test_unbiased_bit_counts():
    """Mean of t_{j,b} over 2,000 runs within 4 SE of the true count (docs/papers/lremh.md §6.3)."""
    sizes, n, runs = [3, 5], 400, 2000
    rr = RRLDP(sizes, 0.3)
    rng = rng_for(SEED, "unbiased")
    codes = random_records(sizes, n, rng)
    true = rr.encode(codes).sum(axis=0).astype(float)
    ts = np.array(
        [
            unbiased_bit_counts(rr.blocks(rr.perturb_two_stage(codes, rng)[0], [0, 1]), rr.q_star, rr.p_star)
            for _ in range(runs)
        ]
    )
    qs, ps = rr.q_star, rr.p_star
    var = (true * qs * (1 - qs) + (n - true) * ps * (1 - ps)) / (qs - ps) ** 2
    se = np.sqrt(var / runs)
    assert (np.abs(ts.mean(axis=0) - true) <= 4 * se).all(), (ts.mean(axis=0) - true) / se


# ---------------------------------------------------------------------------------------- §6.4
@pytest.mark.parametrize("sizes", [[3, 4], [2, 3, 5]])
def test_em_recovers_nearly_noiseless_joint(sizes):
    """f = 0, q = 0.999, p = 0.001, N = 10^4, gap 1e-6: AVD < 0.01 to the empirical joint."""
    rng = rng_for(SEED, {"test": "em_noiseless", "sizes": sizes})
    codes = random_records(sizes, 10_000, rng)
    rr = RRLDP(sizes, 0.0, p=0.001, q=0.999)
    rep = rr.perturb_two_stage(codes, rng)[0]
    est = em(rr.blocks(rep, range(len(sizes))), rr.q_star, rr.p_star, gap=1e-6)
    assert est.info["converged"]
    assert avd(true_joint(codes, sizes), est.theta) < 0.01


def test_em_guard_for_exactly_noiseless_channel():
    sizes = [2, 3]
    codes = random_records(sizes, 2000, rng_for(SEED, "exact"))
    rr = RRLDP(sizes, 0.0, p=0.0, q=1.0)
    rep = rr.perturb(codes, rng_for(SEED, "exact2"))
    assert (rep == rr.encode(codes)).all()
    est = em(rr.blocks(rep, [0, 1]), rr.q_star, rr.p_star, gap=1e-9)
    assert np.isfinite(est.theta).all() and avd(true_joint(codes, sizes), est.theta) < 1e-6


# ---------------------------------------------------------------------------------------- §6.5
def test_lasso_marginals_match_unbiased_counts():
    """One-way marginals of the LASSO joint within 0.02 of t_{j,b}/N at large N (docs/papers/lremh.md §6.5)."""
    sizes = [3, 4, 5]
    rng = rng_for(SEED, "lasso")
    codes = random_records(sizes, 100_000, rng)
    rr = RRLDP(sizes, 0.1)
    blocks = rr.blocks(rr.perturb(codes, rng), [0, 1, 2])
    est = lasso(blocks, rr.q_star, rr.p_star)
    assert est.theta.min() >= 0 and math.isclose(est.theta.sum(), 1.0)
    t = unbiased_bit_counts(blocks, rr.q_star, rr.p_star) / 100_000
    marg = design_matrix(sizes) @ est.theta
    assert np.abs(marg - t).max() <= 0.02
    # it sees only the one-way marginals: the product of the true marginals fits equally well
    truth = true_joint(codes, sizes)
    assert np.abs(design_matrix(sizes) @ truth - t).max() <= 0.02


def test_design_matrix_columns_are_encodings():
    sizes = [2, 3, 4]
    M = design_matrix(sizes).toarray()
    assert M.shape == (9, 24) and (M.sum(axis=0) == 3).all()
    rr = RRLDP(sizes, 0.5)
    vals = np.stack(np.unravel_index(np.arange(24), sizes), axis=1)
    assert (M.T == rr.encode(vals)).all()


# ---------------------------------------------------------------------------------------- §6.6
@pytest.mark.parametrize("stop", ["max_abs", "max_cell"])
def test_lremh_without_pruning_equals_em(stop):
    """LREMH with τ = −∞ and a uniform start is EM (two independent code paths: the explicit
    candidate-list EM and the factorised tensor EM)."""
    sizes = [3, 2, 4]
    rng = rng_for(SEED, {"test": "lremh_eq", "stop": stop})
    codes = random_records(sizes, 3000, rng)
    rr = RRLDP(sizes, 0.3)
    blocks = rr.blocks(rr.perturb(codes, rng), [0, 1, 2])
    a = em(blocks, rr.q_star, rr.p_star, gap=1e-5, stop=stop)
    b = lremh(blocks, rr.q_star, rr.p_star, tau=-math.inf, start="uniform", gap=1e-5, stop=stop)
    assert a.iterations == b.iterations > 1 and b.candidates == 24
    np.testing.assert_allclose(a.theta, b.theta, rtol=1e-9, atol=1e-12)


def test_lremh_pruned_cells_stay_zero_and_em_start_from_lasso():
    sizes = [4, 4]
    rng = rng_for(SEED, "prune")
    codes = random_records(sizes, 5000, rng)
    rr = RRLDP(sizes, 0.1)
    blocks = rr.blocks(rr.perturb(codes, rng), [0, 1])
    la = lasso(blocks, rr.q_star, rr.p_star)
    est = lremh(blocks, rr.q_star, rr.p_star)
    pruned = est.info["pruned"]
    assert (la.theta[pruned] <= 0).all() and (est.theta[pruned] == 0).all()
    assert est.candidates == 16 - pruned.size == np.count_nonzero(la.theta)
    # starting at θ⁰ restricted, zero EM iterations would return θ⁰: check the update starts there
    one = em_candidates(
        blocks,
        rr.q_star,
        rr.p_star,
        np.stack(np.unravel_index(np.flatnonzero(la.theta), sizes), 1),
        la.theta[la.theta > 0],
        max_iter=1,
    )
    assert one.iterations == 1


def test_em_factorised_equals_explicit_with_a_start_and_mixed_sizes():
    sizes = [5, 2, 3, 2]
    rng = rng_for(SEED, "fact")
    codes = random_records(sizes, 1500, rng)
    rr = RRLDP(sizes, 0.5)
    blocks = rr.blocks(rr.perturb(codes, rng), range(4))
    start = rng.random(60)
    a = em(blocks, rr.q_star, rr.p_star, theta0=start / start.sum(), gap=1e-7)
    cand = np.stack(np.unravel_index(np.arange(60), sizes), axis=1)
    b = em_candidates(blocks, rr.q_star, rr.p_star, cand, start, gap=1e-7)
    assert a.iterations == b.iterations
    np.testing.assert_allclose(a.theta, b.theta, rtol=1e-9, atol=1e-13)


def test_logliks_are_the_posterior_sums_loglik_bit_for_bit(monkeypatch):
    """logliks (several joints in one pass, the jobs' ``loglik`` rows) gives exactly the
    log-likelihood _posterior_sum computes for each joint alone, in one user chunk or several,
    for one attribute or mixed sizes (the unsorted order exercises the attribute permutation; sizes
    up to 3 and above 3 both ways of _row_outer)."""
    import ldprepro.domain.joint.estimators as est

    rng = rng_for(SEED, "logliks")
    for sizes in ([3], [5, 2, 3, 2], [2, 2, 2, 2, 2], [6, 3, 4, 2]):
        codes = random_records(sizes, 700, rng)
        rr = RRLDP(sizes, 0.4)
        blocks = rr.blocks(rr.perturb(codes, rng), range(len(sizes)))
        C = math.prod(sizes)
        sparse = rng.random(C) * (rng.random(C) < 0.5)
        sparse[0] += 0.1
        thetas = [rng.random(C), np.full(C, 1.0 / C), sparse]
        for chunk in (1 << 24, 7 * 100):  # one chunk; ~100 users per chunk
            monkeypatch.setattr(est, "_CHUNK_ELEMENTS", chunk)
            perm = sorted(range(len(sizes)), key=lambda j: (sizes[j], j))
            wsizes = [sizes[j] for j in perm]
            lams = est._lambda_blocks([blocks[j] for j in perm], rr.q_star, rr.p_star)
            direct = []
            for theta in thetas:
                th = theta.reshape(sizes).transpose(perm).reshape(-1)
                direct.append(est._posterior_sum(th / th.sum(), lams, wsizes)[1])
            assert est.logliks(blocks, rr.q_star, rr.p_star, thetas) == direct
            # λ arrays computed once for all attributes (the jobs) and passed in: the same values
            lams_all = est.lambda_blocks(blocks, rr.q_star, rr.p_star)
            assert est.logliks(blocks, rr.q_star, rr.p_star, thetas, lams_all) == direct
            assert [est.loglik(blocks, rr.q_star, rr.p_star, t) for t in thetas] == direct


def test_explicit_em_does_the_same_arithmetic_with_or_without_its_caches(monkeypatch):
    """em_candidates keeps the (candidate, user) likelihoods, or else their counts of reported
    1-bits, or recomputes both per user chunk, with the compiled kernels or numpy: the iterates
    are bit for bit the same."""
    import ldprepro.domain.joint.estimators as est

    sizes = [5, 2, 3, 2]
    rng = rng_for(SEED, "caches")
    codes = random_records(sizes, 2000, rng)
    rr = RRLDP(sizes, 0.3)
    blocks = rr.blocks(rr.perturb(codes, rng), range(4))
    cand = np.stack(np.unravel_index(np.arange(60), sizes), axis=1)
    by_kernels = {}
    for compiled_from in (0, 1 << 62):  # the compiled likelihood kernels, or numpy's lookup
        runs = []
        for cache, ones_cache in [(1 << 27, 1 << 30), (0, 1 << 30), (0, 0)]:
            monkeypatch.setattr(est, "_CACHE_ELEMENTS", cache)
            monkeypatch.setattr(est, "_ONES_CACHE_ELEMENTS", ones_cache)
            monkeypatch.setattr(est, "_CHUNK_ELEMENTS", 60 * 300)  # 300 users per chunk
            monkeypatch.setattr(est, "_COMPILED_MIN_ELEMENTS", compiled_from)
            runs.append(em_candidates(blocks, rr.q_star, rr.p_star, cand, np.ones(60), gap=1e-6))
        # the chunked paths sum G per chunk in the same order: identical bits; the one-matrix path agrees
        assert runs[1].iterations == runs[2].iterations and np.array_equal(runs[1].theta, runs[2].theta)
        assert runs[1].info["loglik_trace"] == runs[2].info["loglik_trace"]
        np.testing.assert_allclose(runs[0].theta, runs[1].theta, rtol=1e-9, atol=1e-13)
        by_kernels[compiled_from] = runs
    # the kernels build the same matrices as numpy: every path gives the same bits either way
    for compiled, numpy_run in zip(by_kernels[0], by_kernels[1 << 62]):
        assert np.array_equal(compiled.theta, numpy_run.theta)
        assert compiled.info["loglik_trace"] == numpy_run.info["loglik_trace"]


def test_compiled_likelihoods_are_numpys_table_lookup_of_the_summed_bits():
    """The explicit EM's kernels give exactly numpy's ``table[ones]`` with ``ones`` the uint8 sum of
    each candidate's k bit rows: on a user range inside the block and on a strided view of cached
    counts (the chunked path), so the BLAS products see the same matrix either way."""
    from ldprepro.domain.joint import _likelihood_jit as kernels

    rng = rng_for(SEED, "kernels")
    sizes = [5, 2, 7]
    n = 1003
    blocks = [rng.integers(0, 2, (n, s), dtype=np.uint8) for s in sizes]
    cand = np.stack([rng.integers(0, s, 40) for s in sizes], axis=1)
    table = rng.random(len(sizes) + 1) * 3
    bits = np.ascontiguousarray(np.concatenate([b.T for b in blocks]))
    rows = np.ascontiguousarray(cand + np.array([0, 5, 7]))
    a, b = 101, 877
    ones = blocks[0].T[cand[:, 0], a:b].copy()
    for j in (1, 2):
        ones += blocks[j].T[cand[:, j], a:b]
    got_ones = np.empty_like(ones)
    kernels.ones_counts(bits, rows, a, b, got_ones)
    assert np.array_equal(got_ones, ones) and ones.max() == 3
    got = np.empty(ones.shape)
    kernels.likelihoods(bits, rows, table, a, b, got)
    assert np.array_equal(got, table[ones])
    all_ones = np.empty((40, n), np.uint8)
    kernels.ones_counts(bits, rows, 0, n, all_ones)
    view = all_ones[:, a:b]  # not contiguous
    got_view = np.empty(view.shape)
    kernels.lookup(table, view, got_view)
    assert np.array_equal(got_view, table[ones])


def test_explicit_em_refuses_a_candidate_outside_its_attributes_domain():
    sizes = [3, 2]
    rng = rng_for(SEED, "bad-candidate")
    rr = RRLDP(sizes, 0.5)
    blocks = rr.blocks(rr.perturb(random_records(sizes, 50, rng), rng), [0, 1])
    with pytest.raises(ValueError, match=r"candidate 1 has value 2 for attribute 1, outside its domain 0\.\.1"):
        em_candidates(blocks, rr.q_star, rr.p_star, np.array([[0, 1], [2, 2]]), np.ones(2))


# ---------------------------------------------------------------------------------------- §6.7
def test_privacy_report_labels_and_values():
    text = privacy_report(0.1, 0.5, 0.75, 16)
    assert "Theorem 1" in text and "eps1 = 2d ln((2-f)/f) = 94.2" in text
    assert "as printed" in text and "= 0.983" in text
    assert "d x eps2" in text and "= 15.7" in text
    rr = RRLDP(NLTCS_SIZES, 0.5)
    pr = rr.privacy()
    assert round(pr["permanent_eps_record"], 1) == 35.2 and round(pr["instantaneous_eps_record"], 2) == 8.59
    assert "eps1 = 2d ln((2-f)/f) = 35.16" in rr.privacy_report()


# ---------------------------------------------------------------------------------------- Adult derivation
def test_equal_width_bins_are_right_closed():
    v = np.array([1, 7, 8, 13, 14, 50, 51, 99])
    # edges 1, 7.125, ..., 50 (= edge 8), ..., 99
    assert equal_width_codes(v).tolist() == [0, 0, 1, 1, 2, 7, 8, 15]


def test_adult_derivation_equals_lopub_file(tmp_path):
    """Our discretisation of the UCI files equals the mirrored LoPub coarse Adult, code for code.
    Both datasets are built by the pipeline's data rules from the mirror (fails on CI without it)."""
    from test_pipeline_smoke import build_with_mirror, smoke_config

    from ldprepro.data.lopub_adult import derive_lopub_adult
    from ldprepro.data.transform import load

    build_with_mirror(tmp_path, smoke_config(), ["data/processed/adult.parquet", "data/processed/adult_lopub.parquet"])
    root = tmp_path / "data" / "processed"
    ours = derive_lopub_adult(load("adult", root=root)[0])
    ref = load("adult_lopub", root=root)[0]
    assert ours.shape == ref.shape == (45_222, 15)
    assert list(ours.columns) == list(ref.columns)
    for c in ref.columns:
        assert (ours[c].to_numpy() == ref[c].to_numpy().astype(np.int64)).all(), c
    assert [int(ours[c].max()) + 1 for c in ours.columns] == ADULT_SIZES


# ---------------------------------------------------------------------------------------- smoke end to end
