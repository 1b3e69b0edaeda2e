"""The claim engine on constructed cases with known truth (issue 13)."""

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

from ldprepro.claims.verdicts import (
    ALPHA,
    CLAIM_COLUMNS,
    Claim,
    equivalence_point,
    exact_point,
    holm,
    judge,
    paired_point,
    ratio_of_means_point,
    reps_needed,
    tie_point,
    trend_point,
)


def _errors(rng, n, scale):
    """Per-repetition squared errors of an unbiased estimator with variance ``scale``."""
    return scale * rng.chisquare(1, n)


def _claim(points, kind="pairwise", **kw):
    return Claim("p", "fig", "A beats B", "test scope", kind, points=points, **kw)


def test_identical_laws_never_hold_statistically():
    """Same output law, many independent experiments: 'holds' at most at the test's level."""
    holds = 0
    for seed in range(200):
        rng = np.random.default_rng(seed)
        a, b = _errors(rng, 100, 1.0), _errors(rng, 100, 1.0)
        v = judge([_claim([paired_point(a, b, "ε=1")])])["verdict"].iloc[0]
        assert v in ("holds", "inconclusive", "does not hold")
        holds += v == "holds"
    # one-sided share of a two-sided 5% test: ≈ 2.5%; 200 trials → ≤ 12 with overwhelming probability
    assert holds <= 12


def test_identical_laws_detected_exactly_never_hold():
    rng = np.random.default_rng(1)
    a = _errors(rng, 5000, 1.0)
    b = a * 1.2  # the sample even favours A, but the laws are declared identical at this point
    pts = [paired_point(a, b, "ε=2"), tie_point("ε=0.5", "HM-TP ≡ HM at ε/k < ln 2")]
    row = judge([_claim(pts, kind="range")]).iloc[0]
    assert row["verdict_strict"] == "does not hold"  # literal: a tie is no win
    assert "exact" in row["evidence"]


def test_ten_percent_better_with_enough_repetitions_holds():
    rng = np.random.default_rng(2)
    # per-repetition log-ratio sd of two independent χ²₁ errors is ≈ 3.1: n for δ = log 1.1 ≈ 8,300
    n = int(reps_needed(3.1, math.log(1 / 0.9)) * 1.5)
    a, b = _errors(rng, n, 0.9), _errors(rng, n, 1.0)
    row = judge([_claim([paired_point(a, b, "ε=1")])]).iloc[0]
    assert row["verdict"] == "holds"
    assert row["ci_low"] < 0.9 < row["ci_high"] or abs(row["effect"] - 0.9) < 0.05
    assert row["ci_high"] < 1.0


def test_significantly_worse_does_not_hold():
    rng = np.random.default_rng(3)
    a, b = _errors(rng, 3000, 1.5), _errors(rng, 3000, 1.0)
    row = judge([_claim([paired_point(a, b, "ε=1")])]).iloc[0]
    assert row["verdict"] == "does not hold"
    assert row["effect"] > 1


def test_universal_claim_false_at_one_exact_point_does_not_hold():
    eps = np.linspace(0.1, 8, 100)
    curve_a, curve_b = 1 / eps, 1 / eps * 1.01
    curve_a[37] = curve_b[37] * 1.0001  # false at exactly one point
    pts = [exact_point(f"ε={e:g}", ca <= cb) for e, ca, cb in zip(eps, curve_a, curve_b)]
    row = judge([_claim(pts, kind="closed-form")]).iloc[0]
    assert row["verdict"] == "does not hold"
    assert pd.isna(row["p_value"])
    assert f"ε={eps[37]:g}" in row["evidence"]


def test_exact_claim_true_everywhere_holds():
    pts = [exact_point(f"ε={e:g}", True) for e in (1, 2, 3)]
    assert judge([_claim(pts, kind="closed-form")])["verdict"].iloc[0] == "holds"


def test_underpowered_comparison_is_inconclusive_with_mde():
    rng = np.random.default_rng(5)  # an observed ratio 0.92 in the claim's favour, p = 0.9
    a, b = _errors(rng, 20, 0.95), _errors(rng, 20, 1.0)
    row = judge([_claim([paired_point(a, b, "ε=1")], theory_effect=math.log(0.95))]).iloc[0]
    assert row["verdict"] == "inconclusive"
    assert row["mde"] > 1.5  # a 20-repetition χ² comparison cannot see less than a 1.5× ratio
    # the theory's 5% effect needs ((1.96 + 0.84)·σ_d / log(0.95))² ≈ 10⁴ repetitions at σ_d ≈ 2-3
    assert 2_000 < row["reps_needed"] < 50_000
    assert "Minimal detectable effect" in row["evidence"]


def _point_at_p(target: float, label: str = "pt", against: bool = False, n: int = 5):
    """A paired difference point whose t-test p is exactly ``target`` (in the claim's favour: A lower)."""
    from scipy import stats

    t_needed = stats.t.isf(target / 2, n - 1)
    d = np.linspace(-1.0, 1.0, n)
    d = d / d.std(ddof=1) + (t_needed / math.sqrt(n)) * (1 if against else -1)
    b = np.ones(n)
    return paired_point(b + d, b, label, log=False)


def test_holm_values():
    assert np.allclose(holm([0.01, 0.04, 0.03]), [0.03, 0.06, 0.06])
    assert np.isnan(holm([np.nan, 0.01])[0])


def test_every_point_significant_raw_holds_intersection_union():
    """21 points all in the claim's favour at raw p < α (largest 0.044) hold: the intersection–union
    test needs no correction (issue 26: Holm made such a claim inconclusive)."""
    pts = [_point_at_p(p, f"pt{i}") for i, p in enumerate(np.linspace(0.001, 0.044, 21))]
    row = judge([_claim(pts, kind="range")]).iloc[0]
    assert all(p.p_value < ALPHA for p in pts)
    assert row["verdict"] == "holds"
    assert row["p_value"] == pytest.approx(0.044) and row["p_holm"] >= ALPHA  # the weakest point, Holm shown apart
    assert row["n_points"] == 21 and row["n_favour"] == 21
    assert row["evidence"].startswith("21/21 points favour the claim") and "weakest: pt20" in row["evidence"]


def test_a_contrary_point_significant_after_holm_does_not_hold():
    favour = [_point_at_p(0.001, f"pt{i}") for i in range(4)]
    strong_against = _point_at_p(0.001, "bad", against=True)  # Holm within 5 points: 0.005 < α
    assert judge([_claim(favour + [strong_against])])["verdict"].iloc[0] == "does not hold"
    # raw 0.02 against, the smallest of 5 p-values: Holm 5 × 0.02 = 0.1, not significantly against
    weak_against = _point_at_p(0.02, "bad", against=True)
    row = judge([_claim([_point_at_p(0.03, f"pt{i}") for i in range(4)] + [weak_against])]).iloc[0]
    assert row["verdict"] == "inconclusive"
    assert "against the claim" in row["evidence"] and pd.isna(row["reps_needed"])  # no reps for a contrary effect


def test_adding_a_control_claim_changes_no_other_verdict():
    """Each claim is its own family: the paper's claims keep their verdicts whatever else the
    figure declares (Holm across a figure's claims used to make them inconclusive)."""
    paper = [_claim([_point_at_p(p, "pt")]) for p in (0.02, 0.03, 0.04)]
    control = Claim("p", "fig", "[control] A beats B", "s", "pairwise", points=[_point_at_p(0.5, "c")])
    alone = judge(paper)
    with_control = judge(paper + [control])
    assert (alone["verdict"] == "holds").all()
    assert with_control["verdict"].tolist()[:3] == alone["verdict"].tolist()
    assert with_control["p_value"].tolist()[:3] == alone["p_value"].tolist()


def test_exact_tie_shows_the_other_points():
    pts = [tie_point("ε=1", "same law"), _point_at_p(0.001, "ε=2"), _point_at_p(0.002, "ε=4")]
    row = judge([_claim(pts)]).iloc[0]
    assert row["verdict_strict"] == "does not hold"
    literal = row["evidence"].split("Literal reading (verdict_strict): ")[1]
    assert "most contrary point: ε=1" in literal and "2/3 points favour" in literal


def test_claim_points_table_lists_every_point_with_its_scale_level_and_sides():
    pts = [
        _point_at_p(0.01, "ε=1"),
        equivalence_point(np.ones(30) * 1.01 + np.linspace(-0.01, 0.01, 30), np.ones(30), "ε=2", 1.1),
    ]
    table = judge([_claim(pts)])
    points = pd.DataFrame(table.attrs["points"])
    assert list(points["point"]) == ["ε=1", "ε=2"] and (points["claim_id"] == 1).all()
    assert list(points["ci_level"]) == [0.95, 0.90] and list(points["p_sides"]) == [2, 1]
    assert points["effect_scale"].str.len().min() > 0
    np.testing.assert_allclose(points["p_holm"], holm(points["p_value"]))


def test_the_evidence_rides_along_derived_frames_without_being_copied():
    """pandas deep-copies attrs into every derived frame (each row of an iteration): the points are
    shared, so a figure's thousands of points cost nothing per row, and stay the same evidence."""
    import copy

    table = judge([_claim([_point_at_p(0.01, "ε=1"), _point_at_p(0.02, "ε=2")])])
    derived = [table.iloc[0], table[table["verdict"].notna()], next(table.iterrows())[1]]
    assert all(d.attrs["points"] is table.attrs["points"] for d in derived)
    assert copy.deepcopy(table).attrs["points"] is table.attrs["points"]
    assert [r["point"] for r in table.attrs["points"]] == ["ε=1", "ε=2"]


def test_the_claims_file_holds_the_table_and_the_points_file_the_evidence(tmp_path):
    """write_claims: claims.parquet without the in-memory evidence (pandas would store it again in
    the file's metadata, and every frame derived from the table read back would deep-copy it);
    claim_points.parquet with every point."""
    from ldprepro.claims.tables import write_claims
    from ldprepro.pipeline.verify import read_table

    table = judge([_claim([_point_at_p(0.01, "ε=1"), _point_at_p(0.02, "ε=2")])])
    write_claims(table, tmp_path / "claims.parquet", tmp_path / "claim_points.parquet")
    back = read_table(tmp_path / "claims.parquet")
    assert back.attrs == {} and list(back["claim"]) == list(table["claim"])
    assert table.attrs["points"]  # the table in memory keeps its evidence
    assert list(read_table(tmp_path / "claim_points.parquet")["point"]) == ["ε=1", "ε=2"]


def test_tiny_p_values_are_printed_as_such_never_zero():
    from ldprepro.claims.multiplicity import format_p

    assert format_p(0.0) == "< 1e-300" and format_p(1e-320) == "< 1e-300"
    assert format_p(0.0123) == "0.0123" and format_p(None) == "—"


def test_joint_power_matches_the_one_point_formula_and_simulation():
    from scipy import stats as st

    from ldprepro.claims.power import joint_reps_needed

    # one two-sided point: the textbook n = ((z_.975 + z_.8)·σ/δ)² (within rounding)
    n1 = joint_reps_needed([(1.0, 0.2, math.nan)])
    assert abs(n1 - ((st.norm.ppf(0.975) + st.norm.ppf(0.8)) / 0.2) ** 2) <= 1
    # three equal points need more (the claim's multiplicity) and each must reach 0.8^(1/3)
    n3 = joint_reps_needed([(1.0, 0.2, math.nan)] * 3)
    assert n3 > 1.3 * n1
    # TOST: equivalence power, simulated at the returned n, is ≥ 0.8 and at 0.8·n below it
    sd, margin = 1.0, 0.1
    n_eq = int(joint_reps_needed([(sd, 0.0, margin)]))
    rng = np.random.default_rng(0)

    def tost_power(n):
        d = rng.normal(0.0, sd, size=(4000, n))
        m, se = d.mean(1), d.std(1, ddof=1) / math.sqrt(n)
        tq = st.t.ppf(0.95, n - 1)
        return float(np.mean((m + margin) / se > tq) * 0 + np.mean(((m + margin) / se > tq) & ((margin - m) / se > tq)))

    assert tost_power(n_eq) >= 0.77 and tost_power(int(0.7 * n_eq)) < 0.75
    assert joint_reps_needed([(sd, 0.2, margin)]) == math.inf  # outside the margin: never equivalent


def test_range_claim_needs_every_point():
    rng = np.random.default_rng(5)
    good = [paired_point(_errors(rng, 4000, 0.7), _errors(rng, 4000, 1.0), f"ε={e}") for e in (1, 2)]
    flat = paired_point(_errors(rng, 4000, 1.0), _errors(rng, 4000, 1.0), "ε=4")
    assert judge([_claim(good, kind="range")])["verdict"].iloc[0] == "holds"
    assert judge([_claim(good + [flat], kind="range")])["verdict"].iloc[0] == "inconclusive"


def test_trend_detects_a_decrease_and_refuses_a_flat_curve():
    rng = np.random.default_rng(6)
    mus = [1, 2, 3, 4, 5]
    falling = pd.DataFrame({m: _errors(rng, 3000, 1.0 - 0.1 * m) for m in mus})
    flat = pd.DataFrame({m: _errors(rng, 100, 1.0) for m in mus})
    rising = pd.DataFrame({m: _errors(rng, 3000, 1.0 + 0.2 * m) for m in mus})
    assert judge([_claim([trend_point(falling, "x")], kind="trend")])["verdict"].iloc[0] == "holds"
    assert judge([_claim([trend_point(flat, "x")], kind="trend")])["verdict"].iloc[0] == "inconclusive"
    assert judge([_claim([trend_point(rising, "x")], kind="trend")])["verdict"].iloc[0] == "does not hold"


def test_equivalence_tost():
    rng = np.random.default_rng(7)
    same = equivalence_point(_errors(rng, 5000, 1.0), _errors(rng, 5000, 1.0), "x", 1.25)
    far = equivalence_point(_errors(rng, 5000, 2.0), _errors(rng, 5000, 1.0), "x", 1.25)
    assert judge([_claim([same], kind="equivalence")])["verdict"].iloc[0] == "holds"
    assert judge([_claim([far], kind="equivalence")])["verdict"].iloc[0] != "holds"


def test_wilcoxon_for_skewed_differences_and_t_for_normal_ones():
    rng = np.random.default_rng(8)
    skewed = paired_point(rng.exponential(1, 200) + 1, np.ones(200), "x", log=False)
    normal = paired_point(rng.normal(1, 0.1, 200) + 1, np.ones(200), "x", log=False)
    assert skewed.test.startswith("Wilcoxon")
    assert normal.test.startswith("paired t")
    assert skewed.ci_low < skewed.effect < skewed.ci_high


def test_contract_columns_and_vocabulary():
    out = judge([_claim([exact_point("a", True)])])
    assert list(out.columns) == CLAIM_COLUMNS
    with pytest.raises(ValueError, match="kind"):
        Claim("p", "f", "c", "s", "partly")
    with pytest.raises(ValueError, match="data_role"):
        Claim("p", "f", "c", "s", "pairwise", data_role="ours")


def test_ratio_of_means_follows_the_means_not_the_geometric_means():
    """A method with larger mean error but more dispersed (often tiny) errors: the geometric mean
    of per-repetition ratios favours it, the ratio of means — what the figure plots — does not."""
    from ldprepro.claims.verdicts import ratio_of_means_point

    rng = np.random.default_rng(9)
    n = 20000
    b = rng.exponential(1.0, n)  # mean 1
    a = 1.2 * rng.chisquare(1, n)  # mean 1.2, but median ≈ 0.55
    geo = paired_point(a, b, "x")
    assert geo.effect < 1 and geo.favours  # the log-ratio test would say A is better
    rom = ratio_of_means_point(a, b, "x")
    assert rom.ci_low < 1.2 < rom.ci_high and not rom.favours
    assert judge([_claim([rom])])["verdict"].iloc[0] == "does not hold"


def test_equivalence_far_outside_the_margin_does_not_hold():
    rng = np.random.default_rng(10)
    rate = rng.normal(0.23, 0.02, 50)  # a misclassification rate far from "random" (0.5 ± 0.05)
    pt = equivalence_point(rate, np.full(50, 0.5), "3 outputs", 0.05, log=False)
    assert not pt.favours and pt.p_value < 1e-10
    assert judge([_claim([pt], kind="equivalence")])["verdict"].iloc[0] == "does not hold"


# --------------------------------------------------------------------------------------------
# The fair reading (docs/verdicts-standard.md, "Two readings"): one test per rule, constructed cases
# --------------------------------------------------------------------------------------------
DEFAULT_MARGIN = math.log(1.01)  # the default fair margin ×1.01 on the test scale


def _exact_ratio(label, q, margin=DEFAULT_MARGIN, tie=False):
    """An exact point on a ratio of expected errors A/B (the claim: A lower), as win_points builds it."""
    pt = exact_point(label, q < 1 and not tie, effect=q, note=f"exact MSE ratio {q:.7f}")
    return dataclasses.replace(pt, null=1.0, tie=tie, fair_margin=margin)


def test_a_refutation_by_ties_alone_is_neutral_in_the_fair_reading():
    pts = [tie_point("ε=0.5 vs HM", "Three-Outputs ≡ HM"), _exact_ratio("ε=0.5 vs PM", 0.89)]
    pts += [_exact_ratio("ε=0.5 vs Laplace", 0.005)]
    row = judge([_claim(pts)]).iloc[0]
    assert (row["verdict_strict"], row["verdict"]) == ("does not hold", "holds")
    assert "1 exact tie at ε=0.5 vs HM" in row["evidence"]
    assert row["effect"] == pytest.approx(0.89)  # the weakest point that decides it, not the tie
    assert "tie handling" in row["robustness"] and "(the literal reading) → does not hold" in row["robustness"]


def test_a_claim_whose_every_point_ties_does_not_hold_in_either_reading():
    row = judge([_claim([tie_point("ε=0.1", "same law"), _exact_ratio("ε=0.2", 1.0, tie=True)])]).iloc[0]
    assert (row["verdict_strict"], row["verdict"]) == ("does not hold", "does not hold")
    assert "every point (2) is neutral" in row["evidence"]


def test_an_exact_difference_within_the_margin_is_neutral_and_beyond_it_refutes():
    within = judge([_claim([_exact_ratio("μ=0 ε=4", 1.0001), _exact_ratio("μ=0 ε=2", 0.93)])]).iloc[0]
    assert (within["verdict_strict"], within["verdict"]) == ("does not hold", "holds")
    assert "within the margin ×1.01" in within["evidence"]
    beyond = judge([_claim([_exact_ratio("μ=1 ε=1", 1.014), _exact_ratio("μ=0 ε=2", 0.93)])]).iloc[0]
    assert (beyond["verdict_strict"], beyond["verdict"]) == ("does not hold", "does not hold")
    # the margin doubled (×1.0201) would forgive 1.014: the robustness column says so
    assert "margin ×1.02 → holds" in beyond["robustness"]


def test_a_point_in_the_claims_favour_is_never_discounted():
    row = judge([_claim([_exact_ratio("ε=4", 0.9999)])]).iloc[0]
    assert (row["verdict_strict"], row["verdict"]) == ("holds", "holds")


def test_a_significant_estimated_difference_within_the_margin_is_neutral():
    rng = np.random.default_rng(5)
    b = rng.chisquare(1, 200_000)
    a = b * 1.004  # 0.4 % worse in every repetition: significant, but within ×1.01
    contrary = dataclasses.replace(ratio_of_means_point(a, b, "ε=8"), fair_margin=math.log(1.01))
    row = judge([_claim([contrary, _exact_ratio("ε=1", 0.5)])]).iloc[0]
    assert (row["verdict_strict"], row["verdict"]) == ("does not hold", "holds")


def test_the_worst_exact_point_is_the_evidence_then_how_many_agree():
    pts = [_exact_ratio("ε=1", 1.011, margin=math.nan), _exact_ratio("ε=8", 6.15, margin=math.nan)]
    pts += [_exact_ratio("ε=2", 1.2, margin=math.nan), _exact_ratio("ε=4", 0.5, margin=math.nan)]
    row = judge([_claim(pts)]).iloc[0]
    assert row["verdict"] == "does not hold" and row["effect"] == pytest.approx(6.15)
    assert "most contrary point: ε=8" in row["evidence"] and "2 other points refute it too" in row["evidence"]


def test_the_claims_table_carries_the_finding_and_headline_columns():
    rows = judge(
        [
            _claim([_exact_ratio("ε=1", 0.5)], finding="p: Theorem 1", statement="theorem"),
            _claim([_exact_ratio("ε=1", 0.5)], finding="p: Theorem 1", statement="theorem", counted=False),
            _claim([_exact_ratio("ε=1", 0.5)], reconstructed=True, panels="1 of 4 panels"),
        ]
    )
    assert list(rows["counted"]) == [True, False, False]  # a repeat, a reconstructed claim
    assert list(rows["statement"]) == ["theorem", "theorem", "experimental"]
    assert rows["panels"].iloc[2] == "1 of 4 panels" and list(rows.columns) == CLAIM_COLUMNS


def test_no_repetitions_figure_for_an_effect_against_the_claim():
    """hiera Fig. 1 "MAE decreases as μ grows" (issue 52.2): the closed forms predict the MAE rising
    with μ (theory effect +log(1.05)/4 per unit μ); more repetitions would make the claim not hold, so
    no repetitions figure is printed — whether the observed slopes are against it or, by chance, for it."""
    rng = np.random.default_rng(7)
    mu = [1, 2, 3, 4, 5]
    theory = math.log(1.05) / 4

    def trend(slope):  # 10 repetitions of an MAE curve in μ with noise
        y = np.exp(slope * np.array(mu) + rng.normal(0, 0.3, (10, 5)))
        return trend_point(pd.DataFrame(y, columns=mu), "ds ε=1", decreasing=True)

    rising, falling = trend(theory), trend(-0.01)
    assert not rising.favours and falling.favours and not falling.significant
    for pts, words in (
        ([rising], "observed effect at ds ε=1 is against the claim"),
        ([falling], "predicted effect at ds ε=1 is against the claim"),
    ):
        row = judge([_claim(pts, kind="trend", theory_effect=theory)]).iloc[0]
        assert row["verdict"] == "inconclusive" and words in row["evidence"]
        assert pd.isna(row["reps_needed"]) and "repetitions would make every point" not in row["evidence"]
    # a predicted effect in the claim's favour still gives the figure
    row = judge([_claim([falling], kind="trend", theory_effect=-theory)]).iloc[0]
    assert row["reps_needed"] > 10 and "closed forms' predicted effects" in row["evidence"]
