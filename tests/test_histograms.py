"""Paper 001 (BSHP / WSHP): the acceptance tests of docs/papers/bshp.md §9,
per-user vs sufficient-statistic paths, the baseline, and the experiment runner.

Tolerances come from the theory (Lemma 6 standard errors, tests/stats_helpers.py); seeds are fixed."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from stats_helpers import Z, assert_discrete_law, assert_mean, assert_variance

from ldprepro.domain.frequency import SUE
from ldprepro.domain.histograms import (
    BitSampling,
    SplitBaseline,
    integrated_partition,
    interval_weights,
    paper_claimed_epsilon,
    rappor_f,
    waterfill,
    wshp_ratios,
)
from ldprepro.experiments.histograms import run_rows
from ldprepro.pipeline.seeding import rng_for

METHODS = ("split_baseline", "bshp", "wshp")


def run_job(fig, protocol, dataset, method, positions, seed, figure) -> list[dict]:
    """Every ε × r × repetition of one collector on one dataset (the histogram kind's job rows)."""
    entry = {**protocol, **fig}
    return [row for e in fig["eps"] for row in run_rows(entry, "bshp", figure, dataset, method, positions, seed, e)]


P357 = integrated_partition([3, 5, 7])
#: a skewed interval histogram of n = 20,000 contributors (salary-like: mass in the low intervals)
COUNTS = np.array([3100, 2400, 3300, 1900, 2200, 900, 2600, 1500, 700, 600, 500, 200, 100])
N = int(COUNTS.sum())


def _intervals(counts):
    return np.repeat(np.arange(len(counts)), counts)


# ---------------------------------------------------------------------------------------- §9.1
def test_partition_357_has_13_intervals_and_the_spec_maps():
    assert P357.K == 13
    assert np.allclose(P357.cuts * 105, [0, 15, 21, 30, 35, 42, 45, 60, 63, 70, 75, 84, 90, 105])
    # docs/papers/bshp.md §2, 1-based I1..I13
    spec = {
        3: [[1, 2, 3, 4], [5, 6, 7, 8, 9], [10, 11, 12, 13]],
        5: [[1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11], [12, 13]],
        7: [[1], [2, 3], [4, 5, 6], [7], [8, 9, 10], [11, 12], [13]],
    }
    for i, m in enumerate(P357.folds):
        assert [[j + 1 for j in b] for b in P357.bins[i]] == spec[m]


def test_partition_dedups_shared_checkpoints_and_assigns_left_closed_intervals():
    p = integrated_partition([2, 4, 8])
    assert p.K == 8 and np.allclose(p.widths, 1 / 8)
    assert p.bins[0] == ((0, 1, 2, 3), (4, 5, 6, 7))
    # left-closed, right-open; v_max falls in the last interval
    assert list(p.interval_of([0.0, 0.125, 0.124999, 0.5, 1.0])) == [0, 1, 0, 4, 7]
    with pytest.raises(ValueError, match="outside"):
        p.interval_of([1.5])
    # every query bin is a union of integrated intervals, each interval in exactly one bin per query
    for i in range(len(P357.folds)):
        assert (P357.bin_matrix(i).sum(axis=0) == 1).all()


def test_query_answers_sum_the_integrated_intervals():
    h3, h5, h7 = P357.query_answers(COUNTS)
    assert h3.tolist() == [COUNTS[:4].sum(), COUNTS[4:9].sum(), COUNTS[9:].sum()]
    assert h7[3] == COUNTS[6] and all(h.sum() == N for h in (h3, h5, h7))


# ---------------------------------------------------------------------------------------- §9.2-3
@pytest.mark.parametrize("method", ["bshp", "wshp"])
def test_unbiased_and_lemma6_variance_sufficient_statistics(method):
    """ε = 3, r = 0.5, n = 20k, 3000 runs: |mean(n̂_j) − n_j| < 4 SE and empirical/Lemma 6 variance
    in [0.9, 1.1] for every j (docs/papers/bshp.md §9.2-3), plus the 5-SE variance check of stats_helpers."""
    ratios = 0.5 if method == "bshp" else wshp_ratios(P357, 0.5, 3.0)
    col = BitSampling(P357, 3.0, ratios)
    C, Nj = col.sample_aggregates(COUNTS, rng_for(1, {"test": "bshp-unbiased", "method": method}), size=3000)
    est = col.estimate_counts(C, Nj, N)
    var = col.variance(COUNTS)
    for j in range(P357.K):
        se = math.sqrt(var[j] / 3000)
        assert abs(est[:, j].mean() - COUNTS[j]) < 4 * se, (j, est[:, j].mean(), COUNTS[j], se)
        ratio = est[:, j].var(ddof=1) / var[j]
        assert 0.9 <= ratio <= 1.1, (j, ratio)
        assert_variance(est[:, j], COUNTS[j], var[j], label=f"{method} interval {j}")


def test_unbiased_and_lemma6_variance_per_user_path():
    """The per-user path (n × K bits and masks) meets the same moments (fewer runs: 5 SE)."""
    col = BitSampling(P357, 3.0, 0.5)
    x = _intervals(COUNTS)
    runs = 300
    est = np.empty((runs, P357.K))
    bits_per_user = np.empty(runs)
    for t in range(runs):
        bits, mask = col.perturb(x, rng_for(2, {"test": "bshp-per-user", "rep": t}))
        C, Nj = col.aggregate(bits, mask)
        est[t] = col.estimate_counts(C, Nj, N)
        bits_per_user[t] = mask.sum(axis=1).mean()
    var = col.variance(COUNTS)
    for j in range(P357.K):
        assert_mean(est[:, j], COUNTS[j], var[j], label=f"interval {j}")
        assert_variance(est[:, j], COUNTS[j], var[j], label=f"interval {j}")
    # bandwidth: every user uploads Binomial(K, r) bits
    assert_mean(bits_per_user, P357.K * 0.5, P357.K * 0.25 / N, label="bits per user")


@pytest.mark.parametrize("ratios", [0.3, "wshp"])
def test_per_user_and_sufficient_statistic_paths_have_the_same_law(ratios):
    """Small n: the per-user aggregates (C_j, N_j) against the exact law the sufficient-statistic
    sampler draws from (chi-square), and the sampler's own draws against it."""
    counts = np.array([3, 0, 5, 1, 2, 0, 4, 1, 0, 2, 1, 0, 1])
    n = int(counts.sum())
    r = wshp_ratios(P357, 0.6, 2.0) if ratios == "wshp" else ratios
    col = BitSampling(P357, 2.0, r)
    x = _intervals(counts)
    reps = 20000
    C_pu = np.empty((reps, P357.K), dtype=np.int64)
    N_pu = np.empty((reps, P357.K), dtype=np.int64)
    rng = rng_for(3, {"test": "paths", "ratios": str(ratios)})
    for t in range(reps):
        C_pu[t], N_pu[t] = col.aggregate(*col.perturb(x, rng))
    C_ss, N_ss = col.sample_aggregates(counts, rng_for(4, {"test": "paths", "ratios": str(ratios)}), size=reps)
    support = np.arange(n + 1)
    for j in [0, 1, 2, 6, 12]:
        rj = col.ratios[j]
        # C_j = Bin(n_j, r p) + Bin(n − n_j, r q); N_j = Bin(n, r)
        law_c = np.convolve(
            stats.binom.pmf(np.arange(counts[j] + 1), counts[j], rj * col.p),
            stats.binom.pmf(np.arange(n - counts[j] + 1), n - counts[j], rj * col.q),
        )
        law_n = stats.binom.pmf(support, n, rj)
        for label, C, Nj in [("per-user", C_pu, N_pu), ("sufficient", C_ss, N_ss)]:
            assert_discrete_law(C[:, j].astype(float), support.astype(float), law_c, label=f"{label} C_{j}")
            assert_discrete_law(Nj[:, j].astype(float), support.astype(float), law_n, label=f"{label} N_{j}")


def test_ratio_estimator_is_consistent_and_not_worse():
    col_ht = BitSampling(P357, 3.0, 0.5)
    col_ratio = BitSampling(P357, 3.0, 0.5, estimator="ratio")
    C, Nj = col_ht.sample_aggregates(COUNTS, rng_for(5, {"test": "ratio"}), size=3000)
    ht, ratio = col_ht.estimate_counts(C, Nj, N), col_ratio.estimate_counts(C, Nj, N)
    var = col_ht.variance(COUNTS)
    # asymptotically unbiased: bias is O(1), far below the 5-SE band of the HT estimator's sd
    for j in range(P357.K):
        assert abs(ratio[:, j].mean() - COUNTS[j]) <= Z * math.sqrt(var[j] / 3000)
    assert ((ratio - COUNTS) ** 2).mean() <= ((ht - COUNTS) ** 2).mean()


# ---------------------------------------------------------------------------------------- §9.4
def test_r_equal_1_is_basic_rappor_on_the_integrated_partition():
    eps = 2.5
    col = BitSampling(P357, eps, 1.0)
    sue = SUE(P357.K, eps)
    x = _intervals(COUNTS)
    bits, mask = col.perturb(x, rng_for(6, {"test": "r1"}))
    assert mask.all()
    C, Nj = col.aggregate(bits, mask)
    assert (Nj == N).all()
    plain = sue.perturb(x, rng_for(6, {"test": "r1"}))
    assert np.array_equal(bits, plain)
    assert np.allclose(col.estimate_counts(C, Nj, N), sue.estimate_from_reports(plain))
    assert np.allclose(col.variance(COUNTS), sue.count_variance(N, COUNTS))
    assert col.expected_bits_per_user == P357.K


# ---------------------------------------------------------------------------------------- §9.5-6
def test_wshp_equal_weights_and_equal_widths_give_the_overall_ratio():
    p = integrated_partition([2, 4])
    for eps in (0.5, 3.0, 15.0):
        for r_bar in (0.3, 0.8, 1.0):
            assert np.allclose(wshp_ratios(p, r_bar, eps), r_bar, rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    "weights",
    ["equal", [[1, 1, 3], [1, 1, 1, 1, 3], [1, 1, 1, 1, 1, 1, 3]], [[5, 1, 1], [1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1, 1]]],
)
def test_water_filling_preserves_bandwidth_and_caps_at_one(weights):
    for eps in (1.0, 3.0, 15.0):
        for r_bar in np.arange(0.05, 1.0001, 0.05):
            r = wshp_ratios(P357, r_bar, eps, weights)
            assert abs(r.sum() - P357.K * r_bar) < 1e-9
            assert r.max() <= 1.0 and r.min() > 0
            # KKT: the uncapped ratios are proportional to √c_j, and every capped one would exceed 1
            w = P357.widths
            c = interval_weights(P357, weights) * (w * SUE(13, eps).p + (1 - w) * SUE(13, eps).q)
            free = r < 1 - 1e-12
            if free.any():
                kappa = r[free] / np.sqrt(c[free])
                assert np.allclose(kappa, kappa[0], rtol=1e-10)
                assert (kappa[0] * np.sqrt(c[~free]) >= 1 - 1e-12).all()


def test_water_filling_minimises_the_weighted_variance():
    """No feasible perturbation of the allocation lowers Σ c_j / r_j."""
    c = np.array([4.0, 1.0, 0.25, 9.0, 1.0])
    r = waterfill(c, 3.5)
    obj = (c / r).sum()
    rng = rng_for(7, {"test": "waterfill"})
    for _ in range(2000):
        d = rng.normal(size=c.size) * 0.02
        d -= d.mean()
        r2 = r + d
        if (r2 > 0).all() and (r2 <= 1).all():
            assert (c / r2).sum() >= obj - 1e-12
    with pytest.raises(ValueError):
        waterfill(c, 6.0)


def test_wshp_weights_are_validated():
    with pytest.raises(ValueError, match="5-fold"):
        interval_weights(P357, [[1, 1, 1], [1, 1], [1] * 7])
    with pytest.raises(ValueError, match="positive"):
        interval_weights(P357, [[1, 1, 0], [1] * 5, [1] * 7])


# ---------------------------------------------------------------------------------------- §9.7
@pytest.mark.parametrize("eps", [0.5, 3.0, 15.0])
def test_privacy_bookkeeping_reports_eps_not_the_amplified_claim(eps):
    f = rappor_f(eps)
    assert f == pytest.approx(2 / (math.exp(eps / 2) + 1), rel=1e-15)
    for ratios in (0.4, 0.8, wshp_ratios(P357, 0.4, eps)):
        col = BitSampling(P357, eps, ratios)
        assert col.p == pytest.approx(1 - f / 2, rel=1e-14) and col.q == pytest.approx(f / 2, rel=1e-14)
        assert col.guarantee == eps
        # what the curator sees (values and which bits were sampled) leaks exactly ε ...
        assert col.privacy_loss_exact() == pytest.approx(eps, rel=1e-12)
        # ... more than the paper's Theorem 7 claims
        assert col.paper_claimed_epsilon < eps
    assert paper_claimed_epsilon(eps, 1.0) == pytest.approx(eps)


# ---------------------------------------------------------------------------------------- baseline
def test_split_baseline_is_unbiased_with_the_sue_variance_at_eps_over_m():
    base = SplitBaseline(P357, 6.0)
    assert [o.eps for o in base.oracles] == [2.0, 2.0, 2.0] and base.bits_per_user == 15
    x = _intervals(COUNTS)
    truth = P357.query_answers(COUNTS)
    var = base.query_variances(COUNTS)
    reps = 400
    est_pu = [np.empty((reps, m)) for m in P357.folds]
    est_ss = [np.empty((3000, m)) for m in P357.folds]
    for t in range(reps):
        e = base.estimate_counts(base.aggregate(base.perturb(x, rng_for(8, {"rep": t}))), N)
        for i in range(3):
            est_pu[i][t] = e[i]
    for t in range(3000):
        e = base.estimate_counts(base.sample_aggregates(COUNTS, rng_for(9, {"rep": t})), N)
        for i in range(3):
            est_ss[i][t] = e[i]
    for i in range(3):
        for l in range(P357.folds[i]):
            for label, est in [("per-user", est_pu[i]), ("sufficient", est_ss[i])]:
                assert_mean(est[:, l], truth[i][l], var[i][l], label=f"{label} q{i} bin {l}")
                assert_variance(est[:, l], truth[i][l], var[i][l], label=f"{label} q{i} bin {l}")


# ---------------------------------------------------------------------------------------- runner
FIG = {"kind": "histogram", "plot": "values", "eps": [3.0, 15.0], "ratios": [0.8, 0.4], "reps": 4}


def test_runner_rows_are_deterministic_and_mse_matches_theory_on_average():
    # positions in [0, 1] whose intervals are exactly COUNTS
    mids = (P357.cuts[:-1] + P357.cuts[1:]) / 2
    pos = np.repeat(mids, COUNTS)
    prot = {"column": "salary", "folds": [3, 5, 7]}
    for method in METHODS:
        a = run_job(FIG, prot, "fixture", method, pos, 11, "fig1")
        b = run_job(FIG, prot, "fixture", method, pos, 11, "fig1")
        assert a == b
        metrics = {r["metric"] for r in a}
        assert {"mse", "mse_theory", "bits_per_user", "estimate", "truth"} <= metrics
        if method == "split_baseline":
            assert {r["value"] for r in a if r["metric"] == "bits_per_user"} == {15.0}
            assert all(math.isnan(r["eps_paper_claim"]) for r in a)
    # per-user and sufficient-statistic simulation: mean MSE over many runs vs its exact expectation
    fig = {"kind": "histogram", "plot": "mse_eps", "eps": [4.0], "ratios": [0.6], "reps": 200}
    for simulation in ("sufficient_statistics", "per_user"):
        for method in ("bshp", "wshp", "split_baseline"):
            rows = run_job(fig, {**prot, "simulation": simulation}, "fixture", method, pos, 12, "fig4")
            mse = np.array([r["value"] for r in rows if r["metric"] == "mse" and r["query"] == 0])
            theory = next(r["value"] for r in rows if r["metric"] == "mse_theory" and r["query"] == 0)
            se = mse.std(ddof=1) / math.sqrt(mse.size)
            assert abs(mse.mean() - theory) <= Z * se, (simulation, method, mse.mean(), theory, se)


# ---------------------------------------------------------------------------------------- end to end
@pytest.mark.slow
@pytest.mark.integration
def test_unavailable_city_is_drawn_as_not_available(tmp_path):
    import pandas as pd

    from ldprepro.experiments.kinds import histogram
    from ldprepro.pipeline.results import KEY_COLUMNS

    panels = [{"city": "nyc", "dataset": "salary_nyc", "title": "New York City"}]
    empty = pd.DataFrame(columns=KEY_COLUMNS)
    reason = {"salary_nyc": "needs network (Socrata API)"}
    fig = {"kind": "histogram", "panels": panels, "mechanisms": list(METHODS), "ratios": [0.8]}
    histogram.plot(empty, {**fig, "plot": "values"}, reason, "fig1", tmp_path / "v.png", tmp_path / "v.svg")
    histogram.plot(empty, {**fig, "plot": "mse_eps"}, reason, "fig4", tmp_path / "m.png", tmp_path / "m.svg")
    for name in ("v.svg", "m.svg"):
        assert "not available" in (tmp_path / name).read_text()


def test_a_collector_registered_by_name_runs_in_a_histogram_figure():
    """The kind runs any collector registered like the built-in ones (a mechanism plugin's module
    calls register_collector): here bit sampling at half the figure's ratio, whose rows are
    bshp's at that ratio, exact rows included; the parse-time check then knows its name."""
    from ldprepro.domain.histograms import BitSampling
    from ldprepro.experiments import histograms
    from ldprepro.pipeline.mechanism_names import registered_collectors

    pos = np.random.default_rng(4).beta(2, 5, 2000)
    base = {"folds": [3, 5, 7], "eps": [4.0], "reps": 3}
    histograms.register_collector("half_bshp", lambda part, eps, r, o: BitSampling(part, eps, r / 2))
    try:
        assert "half_bshp" in registered_collectors()
        with pytest.raises(ValueError, match="already registered"):
            histograms.register_collector("half_bshp", lambda *a: None)
        mine = pd.DataFrame(run_rows({**base, "ratios": [0.8]}, "p", "f", "d", "half_bshp", pos, 5, 4.0))
    finally:
        del histograms.COLLECTORS["half_bshp"]
    bshp = pd.DataFrame(run_rows({**base, "ratios": [0.4]}, "p", "f", "d", "bshp", pos, 5, 4.0))
    theory = mine[mine["metric"] == "mse_theory"]
    assert len(theory) == 4 and theory["theory_exact"].all()
    keyed = ["metric", "query", "bin", "rep"]
    a = mine[mine["metric"] == "mse_theory"].sort_values(keyed)["value"].to_numpy()
    b = bshp[bshp["metric"] == "mse_theory"].sort_values(keyed)["value"].to_numpy()
    assert np.array_equal(a, b)  # the same collector law; only the name (and so the random stream) differs
    assert "half_bshp" not in registered_collectors()
