"""The calibration of the claim engine (ldprepro.claims.calibration, docs/calibration.md): the module
runs at a small replication count and writes its tables; the A/A false "holds" rate is within α;
the ratio-of-means interval (paired t, Fieller) covers at n = 10 where the delta method it replaced
did not."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy import stats

from ldprepro.claims import calibration as cal
from ldprepro.claims.calibration_page import markdown
from ldprepro.claims.power import ALPHA
from ldprepro.claims.stats import equivalence_point, ratio_of_means_point

REPO = Path(__file__).resolve().parents[1]


def test_the_figures_repetition_counts_come_from_config():
    config = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))
    ns = cal.figure_reps(config)
    assert {10, 20, 50, 100, 400, 500} <= set(ns)  # lremh runs, bshp reps, LDP-SGD folds × CV, ...
    assert 3 not in ns and 6 not in ns  # the smoke overrides are not figures' n
    assert cal.figure_reps({"ldpfl": {"fig8": {"folds": 10, "cv_repetitions": 5, "smoke": {"folds": 2}}}}) == [50]


@pytest.mark.parametrize(
    "mechanism, eps, kind", [("duchi", 1.0, "discrete"), ("laplace", 1.0, "laplace"), ("pm", 1.0, "per-user")]
)
def test_the_error_samplers_draw_the_exact_law(mechanism, eps, kind):
    users = cal.synthetic_users(300, 1)
    law = cal.MeanError(mechanism, eps, *users)
    assert law.kind == kind
    err = law.draw(4000, np.random.default_rng(2))
    se_var = law.variance * math.sqrt(2 / err.size)  # Var of a sample variance of Gaussian errors
    assert abs(err.mean()) < 4 * math.sqrt(law.variance / err.size)
    assert abs(err.var() - law.variance) < 4 * se_var


def test_the_module_runs_and_writes_the_tables():
    s = cal.Settings(replications=10, points=5, coverage_replications=6, users=200, seed=5)
    aa, cov = cal.run([10], s, (10, 20))
    assert len(aa) == 2 * len(cal.aa_cases())  # one and five points per case
    assert len(cov) == 2 * len(cal.COVERAGE_PAIRS)
    page = markdown(aa, cov, s, [10])
    assert page.startswith("# Calibration of the claim engine")
    for header in ("## A/A comparisons: false verdicts", "## Coverage of the intervals", "## Verdict"):
        assert header in page
    assert "HM-TP ≡ HM (tie detector)" in page and "PM vs Duchi" in page
    assert page == markdown(*cal.run([10], s, (10, 20)), s, [10])  # deterministic


def test_aa_false_holds_within_alpha_at_small_n():
    """A tie (HM-TP ≡ HM at ε = 0.5) judged by the engine at n = 10: the claim "A lower" holds at
    most α of the time (within Monte-Carlo error)."""
    s = cal.Settings(replications=400, points=5, users=300, seed=11)
    tie = cal.tie_cases()[0]
    one, five = cal.run_aa(tie, 10, s, cal.synthetic_users(s.users, s.seed))
    for row in (one, five):
        assert row["holds"] <= ALPHA + 2 * max(row["holds_se"], math.sqrt(ALPHA * (1 - ALPHA) / row["claims"]))
        assert row["does_not_hold"] <= ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / row["claims"])


def test_ratio_of_means_interval_covers_at_n_10_where_the_delta_method_did_not():
    """Squared errors of a Gaussian mean (scaled χ²₁, the MSE figures' per-repetition errors), true
    ratio 0.7, n = 10: the engine's interval (paired t, Fieller) covers ≥ 95 % − 2 s.e.; the delta
    method's t interval on log ā − log b̄ (the engine's before) covered about 91 %."""
    rng = np.random.default_rng(26)
    m, n, r = 1000, 10, 0.7
    a = r * rng.chisquare(1, (m, n))
    b = rng.chisquare(1, (m, n))
    pts = [ratio_of_means_point(a[i], b[i], "x") for i in range(m)]
    covered = np.mean([p.ci_low <= r <= p.ci_high for p in pts])
    assert covered >= 0.95 - 2 * math.sqrt(0.95 * 0.05 / m)
    delta = cal.delta_method_coverage(a, b, r, float(stats.t.ppf(0.975, n - 1)))
    assert delta < 0.93
    tost = np.mean(
        [(lambda p: p.ci_low <= r <= p.ci_high)(equivalence_point(a[i], b[i], "x", 1.25, means=True)) for i in range(m)]
    )
    assert tost >= 0.90 - 2 * math.sqrt(0.9 * 0.1 / m)


def test_ratio_of_means_test_is_the_paired_t_on_differences_and_its_interval_fiellers():
    rng = np.random.default_rng(3)
    a, b = rng.chisquare(1, 40) * 0.8, rng.chisquare(1, 40)
    pt = ratio_of_means_point(a, b, "x")
    assert pt.p_value == pytest.approx(stats.ttest_rel(a, b).pvalue, rel=1e-9)
    assert pt.effect == pytest.approx(a.mean() / b.mean())
    q = stats.t.ppf(0.975, a.size - 1)
    for r in (pt.ci_low, pt.ci_high):  # the interval's ends are where the t on a − r·b reaches ±q
        d = a - r * b
        assert abs(d.mean() / (d.std(ddof=1) / math.sqrt(d.size))) == pytest.approx(q, rel=1e-6)
    # two repetitions of wildly different errors: the mean of B is not bounded away from 0
    wide = ratio_of_means_point(np.array([1.0, 0.01, 0.2]), np.array([0.001, 2.0, 0.3]), "x")
    assert wide.ci_high == math.inf and wide.ci_low >= 0
