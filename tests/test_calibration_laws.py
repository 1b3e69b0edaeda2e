"""The calibration of every test path on the figures' error laws (issue 52.1-52.2): the laws draw
what they say, the page's rows are per direction, power is measured, and every test string of the
recorded claims table belongs to a listed path (``calibration_laws_page.TEST_PATHS``)."""

from pathlib import Path

import numpy as np
import pandas as pd

from ldprepro.claims import calibration as cal
from ldprepro.claims import calibration_laws as L
from ldprepro.claims.calibration_laws_page import law_sections, path_of

REPO = Path(__file__).resolve().parents[1]


def test_every_test_string_of_the_claims_table_belongs_to_a_calibrated_path():
    ref = pd.read_csv(REPO / "tests/reference/claims_smoke.csv", keep_default_na=False, na_values=[""])
    tests = {t for s in ref["test"].dropna() if s != "—" for t in s.split("; ")}
    missing = sorted(t for t in tests if path_of(t) is None)
    assert not missing, missing


def test_laws_draw_their_design():
    rng = np.random.default_rng(0)
    cv = L.cv_law(5, 2, 8.0, n_users=200)
    a, b = cv.draw(2, 10, rng)
    assert a.shape == (2, 10) and cv.cv_folds == 5 and ((0 <= a) & (a <= 1)).all()
    assert not np.array_equal(a, b)  # independent noise per arm, the same folds
    hist = L.histogram_law(2.0, "tv", bins=8, n_users=500)
    a, _ = hist.draw(3, 4, rng)
    assert a.shape == (3, 4) and (a >= 0).all() and (a <= 1).all()
    users = cal.synthetic_users(300, 1)
    multi = L.multi_mean_law("duchi", 1.0, 10, users)
    assert multi.draw(2, 3, rng)[0].shape == (2, 3)


def test_at_the_margin_and_the_rows():
    b = np.array([1.0, 2.0])
    assert np.allclose(L.at_margin("means", 1.1, b), [1.1, 2.2]) and np.allclose(L.at_margin("diff", 0.05, b), b - 0.05)
    law = L.mean_law("laplace", 1.0, "sq", cal.synthetic_users(300, 1))
    rows = L.law_rows(law, 20, 30, 0, L.aa_cases(law, {"means": [1.25]}))
    assert [r["path"] for r in rows][-2:] == [
        "TOST ×1.25 on ratio of means, A/A",
        "TOST ×1.25 on ratio of means, at the margin",
    ]
    assert rows[0]["nominal"] == {"holds": 0.025, "does_not_hold": 0.025}
    assert rows[-1]["nominal"] == {"holds": 0.05, "does_not_hold": None}
    assert all(0 <= r["holds"] <= 1 for r in rows)


def test_the_tie_detector_rows_and_the_page():
    ties = L.tie_rows()
    assert all(r["said"] for r in ties if r["tied"])  # every exact tie is found
    users = cal.synthetic_users(200, 1)
    power = L.power_rows(users, [10], 20, 0, cap=200)
    large = [r for r in power if r["size"] == "large"]
    assert any(r["is_n80"] for r in large) and all(0 <= r["predicted"] <= 1 for r in power)
    laws = {"paths": [L.trend_row(L.mean_law("laplace", 1.0, "sq", users), 10, 10, 0)], "power": power, "ties": ties}
    page = "\n".join(law_sections(laws, cal.Settings(), 0.05))
    assert "## Power, measured" in page and "## The claims table's test paths" in page and "★" in page


def test_a_per_direction_level_flags_a_doubled_one_sided_error():
    """The old rule compared each direction with α + 2 s.e.: a one-sided error of 0.05 passed."""
    row = {"test": "ratio of means, 95 %", "errors": ("holds", "does not hold"), "points": 1, "claims": 1000}
    doubled = row | {"holds": 0.05, "holds_se": 0.0069, "does_not_hold": 0.0, "does_not_hold_se": 0.0}
    assert not cal.within_level(doubled)
    assert cal.within_level(row | {"holds": 0.027, "holds_se": 0.005, "does_not_hold": 0.02, "does_not_hold_se": 0.004})
