"""Point sides and forest references (issue 52.5): an undecided point is "none", never "against";
every ratio axis is drawn around 1 on a log scale, every difference axis around 0, an exact tie at
the reference, and a difference claim refuted by a tie prints a difference of 0."""

import numpy as np
import pandas as pd
import pytest

from ldprepro.claims.verdicts import Claim, claim_points, equivalence_point, exact_point, judge, tie_point
from ldprepro.report import forest


def _sides(points) -> list[str]:
    return [r["favours"] for r in claim_points(Claim("p", "f", "c", "s", "equivalence", points=points), 1)]


def test_a_tost_point_inside_its_margin_but_not_significant_is_undecided_not_against():
    rng = np.random.default_rng(3)
    a = rng.gamma(2, 1.0, 10)
    b = a * np.exp(rng.normal(-0.06, 0.5, 10))  # a ratio inside ×1.25, too noisy to show it
    pt = equivalence_point(a, b, "n=10", 1.25)
    assert 1 / 1.25 < pt.effect < 1.25 and not pt.favours and pt.p_value >= 0.05
    assert _sides([pt]) == ["none"]


def test_sides_follow_the_decision_rule():
    rng = np.random.default_rng(4)
    a = rng.gamma(2, 1.0, 40)
    inside = equivalence_point(a, a * np.exp(rng.normal(0, 0.01, 40)), "eq", 1.25)  # equivalent
    outside = equivalence_point(a, a * np.exp(rng.normal(1.0, 0.01, 40)), "out", 1.25)  # far outside
    assert _sides([inside, outside]) == ["claim", "against"]
    assert _sides([exact_point("x", True, 0.5), exact_point("y", False, 2.0)]) == ["claim", "against"]


def test_a_tie_on_a_difference_comparison_is_a_difference_of_zero():
    tie = tie_point("ε=1 vs HM", "same law", log=False)
    assert (tie.effect, tie.null) == (0.0, 0.0) and "difference" in tie.scale
    row = judge([Claim("p", "f", "c", "s", "pairwise", points=[tie])]).iloc[0]
    assert row["verdict"] == "does not hold" and row["effect"] == 0.0
    assert tie_point("r", "same law").effect == 1.0


def test_forest_references():
    ratio = pd.Series(["exact ratio of worst-case variances a/best"] * 2)
    assert forest._reference(ratio, pd.Series([0.5, 2.0])) == (1.0, True)
    assert forest._reference(pd.Series(["difference A − B"]), pd.Series([-0.1])) == (0.0, False)
    assert forest._reference(pd.Series(["identical laws: difference A − B"]), pd.Series([0.0])) == (0.0, False)
    assert forest._reference(pd.Series(["exact value"]), pd.Series([3.0])) == (None, False)


def test_bh_q_is_computed_per_direction():
    from ldprepro.claims.tables import with_q

    claims = pd.DataFrame(
        {
            "verdict": ["holds", "holds", "does not hold", "inconclusive", "holds"],
            "p_value": [0.01, 0.04, 0.001, 0.5, None],
        }
    )
    q = with_q(claims)["q_bh"].to_numpy()
    assert np.allclose(q[:2], [0.02, 0.04])  # BH over the two tested "holds" rows only
    assert q[2] == 0.001  # alone in its direction
    assert np.isnan(q[3]) and np.isnan(q[4])  # inconclusive, exact


def test_cv_fits_are_tested_by_the_corrected_resampled_t():
    """ldpfl Fig. 10 (issue 52.3): 10 folds × 5 CV repetitions are 50 fits, not 50 independent
    repetitions; the corrected resampled t (Nadeau & Bengio 2003) inflates the variance of the mean
    difference by 1 + 50/9 and names itself."""
    import math

    from scipy import stats

    from ldprepro.claims.stats import cv_inflation, paired_point, ratio_of_means_point

    rng = np.random.default_rng(11)
    a = 0.2 + rng.normal(0, 0.01, 50)
    b = a + 0.004 + rng.normal(0, 0.01, 50)
    assert cv_inflation(50, 10) == 1 + 50 / 9 and cv_inflation(50, None) == 1.0
    pt = paired_point(a, b, "ε=1", log=False, cv_folds=10)
    d = a - b
    t = d.mean() / (d.std(ddof=1) * math.sqrt(1 / 50 + 1 / 9))
    assert pt.p_value == pytest.approx(2 * stats.t.sf(abs(t), 49), rel=1e-9)
    assert "corrected resampled t (Nadeau & Bengio 2003: 10 folds × 5 CV repetitions)" in pt.test
    naive = paired_point(a, b, "ε=1", log=False)
    assert pt.p_value > naive.p_value and (pt.ci_high - pt.ci_low) > 2 * (naive.ci_high - naive.ci_low)
    rom = ratio_of_means_point(a, b, "ε=1", cv_folds=10)
    assert "corrected resampled t" in rom.test and rom.p_value == pytest.approx(pt.p_value, rel=1e-9)


def test_the_non_equivalence_p_is_two_sided():
    """Its side is the estimate's, chosen by the data: one-sided, its size on A/A pairs tended to 2α
    as the margin shrank (0.08 at ×1.02, docs/calibration.md); doubled, it is at most α."""
    import math

    from scipy import stats

    rng = np.random.default_rng(5)
    d = rng.normal(0.6, 1.0, 30)
    a, b = np.exp(d), np.ones(30)
    pt = equivalence_point(a, b, "x", 1.02)
    m, se = d.mean(), d.std(ddof=1) / math.sqrt(30)
    p_out = 2 * stats.t.sf((abs(m) - math.log(1.02)) / se, 29)
    assert pt.p_value == pytest.approx(p_out, rel=1e-9) and pt.sides == 2 and not pt.favours
    assert _sides([pt]) == ["against"]
