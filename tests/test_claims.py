"""The mean-estimation and LDP-SGD claims on constructed per-repetition results with known truth."""

import numpy as np
import pandas as pd
import pytest

from ldprepro.claims.points import law_tie
from ldprepro.claims.verdicts import CLAIM_COLUMNS
from ldprepro.domain.mechanisms import get_mechanism
from ldprepro.domain.ties import same_output_law
from ldprepro.papers import decide_figure as claims_for

RNG = np.random.default_rng(0)


def _row(dataset, mechanism, eps, rep, metric, value, **extra):
    """One tidy result row of paper 002's Fig. 7 (16 attributes)."""
    return {
        "paper": "ldpfl",
        "figure": "fig7",
        "dataset": dataset,
        "mechanism": mechanism,
        "eps": eps,
        "eps_numeric": eps,
        "n_attributes": 16,
        "rep": rep,
        "metric": metric,
        "value": value,
        **extra,
    }


def _rows(dataset, mechanism, eps, scale, reps, metric="sq_error", **extra):
    """Per-repetition squared errors of an unbiased mean with variance ``scale``."""
    values = scale * RNG.chisquare(1, reps)
    return [_row(dataset, mechanism, eps, r, metric, v, **extra) for r, v in enumerate(values)]


FIG7 = {"metric": "sq_error", "panels": [{"dataset": "g16"}], "mechanisms": []}


def test_same_output_law_detects_zhao_ties_and_differences():
    assert same_output_law(get_mechanism("three_outputs", 0.5), get_mechanism("duchi", 0.5))
    assert same_output_law(get_mechanism("hm_tp", 0.5), get_mechanism("hm", 0.5))
    assert not same_output_law(get_mechanism("pm", 2.0), get_mechanism("pm_sub", 2.0))
    assert not same_output_law(get_mechanism("three_outputs", 2.0), get_mechanism("duchi", 2.0))
    # Alg. 6 samples k = 1 attribute at ε = 0.5: HM-TP ≡ HM per attribute; Duchi MD has its own form
    assert law_tie("hm_tp", "hm", 0.5, 16) is not None
    assert law_tie("hm_tp", "duchi", 0.5, 16) is None


def test_identical_laws_make_a_strict_win_claim_fail_whatever_the_sample():
    # PM-SUB "wins" by 30% in the sample at ε = 4, but HM-TP vs HM at ε = 0.5 is an exact tie
    rows = []
    for m, s in (("laplace", 2.0), ("duchi", 2.0), ("pm", 2.0), ("hm", 1.0)):
        rows += _rows("g16", m, 0.5, s, 400)
    rows += _rows("g16", "hm_tp", 0.5, 0.7, 400)
    out = claims_for("ldpfl", "fig7", pd.DataFrame(rows), FIG7)
    row = out[out["claim"].str.contains(r"\(HM-TP alone\)")].iloc[0]
    assert row["verdict_strict"] == "does not hold"  # the literal reading: a tie is no win
    assert "HM-TP ≡ HM" in row["evidence"]


def test_ten_percent_better_on_enough_repetitions_holds_and_noise_is_inconclusive():
    rows = []
    for m in ("laplace", "duchi", "pm", "hm"):
        rows += _rows("g16", m, 4.0, 1.0, 12000)
    rows += _rows("g16", "pm_sub", 4.0, 0.85, 12000)
    rows += _rows("g16", "three_outputs", 4.0, 1.0, 12000)
    out = claims_for("ldpfl", "fig7", pd.DataFrame(rows), FIG7).set_index("claim")
    assert out.loc[out.index.str.contains(r"\(PM-SUB alone\)"), "verdict"].iloc[0] == "holds"
    assert out.loc[out.index.str.contains(r"\(Three-Outputs alone\)"), "verdict"].iloc[0] in (
        "inconclusive",
        "does not hold",
    )
    assert sorted(out.reset_index().columns) == sorted(CLAIM_COLUMNS)


def test_roles_are_judged_apart_and_missing_paper_data_is_not_testable():
    fig = {"metric": "abs_error", "panels": [{"dataset": "ipums_us"}, {"dataset": "synth", "data_role": "substitute"}]}
    rows = []
    for mu in (1, 2, 3):
        rows += [
            {**r, "paper": "hiera", "figure": "fig1", "mu": mu, "metric": "abs_error"}
            for r in _rows("synth", "hiera", 1.0, 1.0, 50)
        ]
        rows.append(
            {
                "paper": "hiera",
                "figure": "fig1",
                "dataset": "synth",
                "mechanism": "hiera",
                "eps": 1.0,
                "mu": mu,
                "rep": 0,
                "metric": "abs_error_theory",
                "value": 0.1 * (1 + 0.05 * mu),
            }
        )
    out = claims_for("hiera", "fig1", pd.DataFrame(rows), fig, unavailable={"ipums_us": "no IPUMS extract"})
    paper = out[out["data_role"] == "paper"]
    assert (paper["verdict"] == "not testable").all() and "no IPUMS extract" in paper["evidence"].iloc[0]
    sub = out[out["data_role"] == "substitute"].set_index("kind")
    assert sub.loc["closed-form", "verdict"] == "does not hold"  # exact: the theory MAE rises with μ
    assert sub.loc["trend", "verdict"] in ("inconclusive", "does not hold")


def test_the_dispatcher_notes_missing_panels_on_claims_and_on_not_testable_rows_alike():
    """A declared function may answer with a not-testable row; the dispatcher's missing-panel note
    and control prefix apply to it as to a decided claim."""
    from ldprepro.claims.dispatch import claims_for

    rows = []
    for m in ("pm", "laplace"):
        rows += _rows("g16", m, 1.0, 1.0 if m == "pm" else 2.0, 50)
    fig = {"metric": "sq_error", "panels": [{"dataset": "g16"}, {"dataset": "gone"}]}
    decls = [
        {
            "claim": "PM beats Laplace",
            "scope": "every ε",
            "test": "outperform",
            "mechanism": "pm",
            "against": ["laplace"],
        },
        {"claim": "a check that cannot run", "scope": "—", "test": "function", "function": f"{__name__}:_cannot_run"},
    ]
    out = claims_for("toy", "fig1", pd.DataFrame(rows), fig, {"gone": "not mirrored"}, decls).set_index("claim")
    assert "panels not available here: gone" in out.loc["PM beats Laplace", "evidence"]
    assert out.loc["a check that cannot run", "verdict"] == "not testable"
    assert "panels not available here: gone" in out.loc["a check that cannot run", "evidence"]


def _cannot_run(res, decl):
    from ldprepro.claims.verdicts import not_testable

    return [not_testable(res.paper, res.figure, decl["claim"], decl["scope"], "range", "a method was not run")]


@pytest.mark.parametrize(
    "bad, message",
    [
        (
            {"claim": "c", "scope": "s"},
            r"config.yaml x.fig1.claims\[0\]: a claim declaration needs 'claim', 'scope' and 'test'",
        ),
        ({"claim": "c", "scope": "s", "test": "beats"}, r"\[0\] \('c'\): unknown test 'beats'; known: outperform"),
        (
            {"claim": "c", "scope": "s", "test": "outperform", "mechanism": "pm", "against": ["hm"], "margin": 2},
            r"unknown keys \['margin'\] for test 'outperform'",
        ),
        (
            {"claim": "c", "scope": "s", "test": "outperform", "mechanism": "pm"},
            r"test 'outperform' needs \['against'\]",
        ),
        (
            {"claim": "c", "scope": "s", "test": "outperform", "mechanism": "pm", "against": ["hm"], "eps": "large"},
            r"\('c'\): eps scope 'large': use smallest, lowest_third or \{min, max, below\}",
        ),
        ({"claim": "c", "scope": "s", "test": "function", "function": "nowhere"}, r"write it as 'package.module:name'"),
    ],
)
def test_a_bad_declaration_is_refused_naming_where_it_was_declared(bad, message):
    from ldprepro.claims.declarations import DeclarationError, validate

    with pytest.raises(DeclarationError, match=message):
        validate([bad], "config.yaml x.fig1.claims")


def test_a_claim_is_decided_again_under_each_declared_alternative_reading():
    """Issue 26.7: the robustness column says whether the verdict survives our other readings."""
    from ldprepro.claims.dispatch import claims_for as dispatch

    rows = []
    for eps, scale in ((0.5, 1.3), (2.0, 0.8), (4.0, 0.8)):  # A wins at ε ≥ 2, loses at ε = 0.5
        rows += _rows("g16", "pm", eps, 1.0, 3000)
        rows += _rows("g16", "pm_sub", eps, scale, 3000)
    decl = {
        "claim": "PM-SUB beats PM when ε is large",
        "scope": "ε ≥ 2",
        "test": "outperform",
        "mechanism": "pm_sub",
        "against": ["pm"],
        "eps": {"min": 2},
        "check_ties": False,
        "alternatives": [
            {"reading": "'large' read as ε ≥ 4", "eps": {"min": 4}},
            {"reading": "'large' read as every ε", "eps": {"min": 0.1}},
        ],
    }
    out = dispatch("ldpfl", "fig7", pd.DataFrame(rows), FIG7, declarations=[decl]).iloc[0]
    assert out["verdict"] == "holds"
    assert out["robustness"].startswith("depends on: 'large' read as every ε → does not hold")
    assert "ε ≥ 4" not in out["robustness"] and "(as declared: holds)" in out["robustness"]
    robust = dispatch(
        "ldpfl", "fig7", pd.DataFrame(rows), FIG7, declarations=[{**decl, "alternatives": decl["alternatives"][:1]}]
    )
    # robust to the declared reading, and to the fair reading's own rules, which it says it covers
    assert robust.iloc[0]["robustness"] == "robust; fair-reading rules (tie handling and margin): robust"
    plain = dispatch(
        "ldpfl", "fig7", pd.DataFrame(rows), FIG7, declarations=[{k: v for k, v in decl.items() if k != "alternatives"}]
    )
    # no alternative declared: the column still covers the fair reading's rules
    assert plain.iloc[0]["robustness"] == "fair-reading rules (tie handling and margin): robust"


def test_an_alternative_with_a_key_its_test_does_not_take_is_refused():
    from ldprepro.claims.declarations import DeclarationError, validate

    decl = {
        "claim": "c",
        "scope": "s",
        "test": "outperform",
        "mechanism": "pm",
        "against": ["duchi"],
        "alternatives": [{"reading": "r", "margin": 2}],
    }
    with pytest.raises(DeclarationError, match=r"x\.claims\[0\]\.alternatives\[0\]"):
        validate([decl], "x.claims")


# --- exact first: claims decided by the exact expectations the jobs declare ------------------
def _theory(dataset, mechanism, eps, value, metric="sq_error", exact=True, **extra):
    return _row(dataset, mechanism, eps, 0, f"{metric}_theory", value, theory_exact=exact, **extra)


WIN = {"claim": "PM-SUB beats PM", "scope": "every ε", "test": "outperform", "mechanism": "pm_sub", "against": ["pm"]}


def _dispatch(rows, decls, metric="sq_error"):
    from ldprepro.claims.dispatch import claims_for as dispatch

    fig = {"metric": metric, "panels": [{"dataset": "g16"}]}
    return dispatch("toy", "fig1", pd.DataFrame(rows), fig, {}, decls)


def _decide(rows, decls, metric="sq_error"):
    return _dispatch(rows, decls, metric).set_index("claim")


def _decide_points(rows, decls, metric="sq_error"):
    return _dispatch(rows, decls, metric).attrs["points"]


def test_a_claim_with_exact_expectations_is_decided_exactly_not_by_the_repetitions():
    # 5 repetitions cannot show a 3 % difference; the exact expected MSE ratio 0.97 decides it
    rows = _rows("g16", "pm", 4.0, 1.0, 5) + _rows("g16", "pm_sub", 4.0, 0.97, 5)
    rows += [_theory("g16", "pm", 4.0, 1.0), _theory("g16", "pm_sub", 4.0, 0.97)]
    row = _decide(rows, [WIN]).loc["PM-SUB beats PM"]
    assert row["verdict"] == "holds" and pd.isna(row["p_value"])
    assert row["effect"] == pytest.approx(0.97) and "exact expected MSE ratio" in row["test"]


def test_an_exact_ratio_of_one_refutes_a_strict_win_like_a_tie():
    rows = _rows("g16", "pm", 4.0, 1.0, 400) + _rows("g16", "pm_sub", 4.0, 0.5, 400)  # the sample "wins"
    rows += [_theory("g16", "pm", 4.0, 0.25), _theory("g16", "pm_sub", 4.0, 0.25)]
    row = _decide(rows, [WIN]).loc["PM-SUB beats PM"]
    assert row["verdict_strict"] == "does not hold" and "a tie" in row["evidence"]
    assert row["verdict"] == "does not hold"  # fair: its only point is neutral, none shows a win


@pytest.mark.parametrize("metric, exact", [("abs_error", False), ("sq_error", False)])
def test_approximate_theory_leaves_the_claim_to_the_repetitions(metric, exact):
    """abs_error_theory (CLT) and theory rows not marked exact (HierA clipped) never decide."""
    rows = _rows("g16", "pm", 4.0, 1.0, 400, metric=metric) + _rows("g16", "pm_sub", 4.0, 0.5, 400, metric=metric)
    rows += [_theory("g16", "pm", 4.0, 1.0, metric, exact), _theory("g16", "pm_sub", 4.0, 2.0, metric, exact)]
    row = _decide(rows, [WIN], metric).loc["PM-SUB beats PM"]
    assert row["verdict"] == "holds" and pd.notna(row["p_value"]) and "exact" not in row["test"]


def test_exact_points_in_equivalence_and_ratio_below_claims():
    rows = _rows("g16", "pm", 1.0, 1.0, 5) + _rows("g16", "duchi", 1.0, 1.0, 5)
    rows += [_theory("g16", "pm", 1.0, 1.05), _theory("g16", "duchi", 1.0, 1.0)]
    decls = [
        {"claim": "close", "scope": "-", "test": "equivalence", "a": "pm", "b": "duchi", "margin": 1.1},
        {"claim": "not close", "scope": "-", "test": "equivalence", "a": "pm", "b": "duchi", "margin": 1.02},
        {"claim": "below", "scope": "-", "test": "ratio_below", "mechanism": "pm", "against": ["duchi"], "bound": 1},
    ]
    out = _decide(rows, decls)
    assert out.loc["close", "verdict"] == "holds" and pd.isna(out.loc["close", "p_value"])
    assert out.loc["not close", "verdict"] == "does not hold"
    assert out.loc["below", "verdict"] == "does not hold" and out.loc["below", "effect"] == pytest.approx(1.05)


def test_an_exact_trend_uses_the_expectations():
    rows, decl = [], {"claim": "falls with ε", "scope": "-", "test": "mechanism_trend", "x": "eps"}
    for eps, v in ((0.5, 4.0), (1.0, 1.0), (2.0, 0.25)):
        rows += _rows("g16", "pm", eps, 1.0, 3)  # flat in the sample
        rows.append(_theory("g16", "pm", eps, v))
    row = _decide(rows, [decl]).loc["falls with ε"]
    assert row["verdict"] == "holds" and pd.isna(row["p_value"]) and row["effect"] == pytest.approx(-2.0)


AGREE = {"claim": "(ours) agrees", "scope": "-", "test": "theory_agreement", "margin": 1.1, "per_role": True}


@pytest.mark.parametrize("factor, verdict", [(1.0, "holds"), (2.0, "does not hold")])
def test_the_monte_carlo_row_checks_the_simulation_against_the_exact_values(factor, verdict):
    """Each repetition's squared error over its exact expectation has mean 1: pooled per mechanism
    over the curve points, TOST within ×1.1; an implementation off by ×2 is caught."""
    rows = []
    for m in ("pm", "duchi"):
        for eps, v in ((1.0, 0.5), (4.0, 0.1)):
            rows += _rows("g16", m, eps, v * (factor if m == "duchi" else 1.0), 5000)
            rows.append(_theory("g16", m, eps, v))
    rows += _rows("g16", "hiera", 1.0, 0.3, 1000) + [_theory("g16", "hiera", 1.0, 0.1, exact=False)]
    row = _decide(rows, [AGREE]).loc["(ours) agrees"]
    assert row["verdict"] == verdict and row["kind"] == "equivalence"
    assert row["n_points"] == 2  # PM and Duchi; HierA has no exact expectation: not part of the check
    assert "10000 repetition ratios pooled over 2 curve points (1 panel)" in row["evidence"]


def test_ldpfl_mse_figures_declare_the_monte_carlo_row():
    from ldprepro.papers import paper_section

    for fig in ("fig6", "fig7", "fig11"):
        tests = [d["test"] for d in paper_section("ldpfl", fig)["claims"]]
        assert tests.count("theory_agreement") == 1, fig


def test_an_exact_loss_too_small_for_any_sample_is_refuted_and_shown_with_its_digits():
    """ldpfl Fig. 7 at ε = 0.5 on Gaussian μ = 0: PM-SUB's exact MSE is 1.0001 × PM's; the
    repetitions cannot see it, the exact ratio decides it and the evidence shows it is not 1."""
    rows = _rows("g16", "pm", 0.5, 1.0, 5) + _rows("g16", "pm_sub", 0.5, 0.9, 5)
    rows += [_theory("g16", "pm", 0.5, 1.0), _theory("g16", "pm_sub", 0.5, 1.000116)]
    row = _decide(rows, [WIN]).loc["PM-SUB beats PM"]
    assert row["verdict_strict"] == "does not hold" and "1.000116" in row["evidence"]
    assert row["verdict"] == "does not hold"  # fair: within the margin, so no point shows the claimed win


def test_a_collective_claim_is_decided_best_proposed_against_best_existing():
    """'Our approaches outperform existing solutions' (paper 002, Fig. 6), with paper 002's Table II:
    Three-Outputs best at small ε, PM-SUB at large ε. Best against best holds at both; the split
    mechanism by mechanism (ours, stricter) does not: each loses where the paper assigns the other."""
    rows = []
    for eps, values in (
        (0.5, {"three_outputs": 0.6, "pm_sub": 1.3, "pm": 1.2, "duchi": 1.0}),
        (4.0, {"three_outputs": 0.9, "pm_sub": 0.5, "pm": 0.8, "duchi": 1.0}),
    ):
        for m, v in values.items():
            rows += _rows("g16", m, eps, v, 5) + [_theory("g16", m, eps, v)]
    collective = {**WIN, "claim": "ours win", "mechanism": ["pm_sub", "three_outputs"], "against": ["pm", "duchi"]}
    split = [
        {**WIN, "claim": f"{m} alone", "mechanism": m, "against": ["pm", "duchi"]} for m in ("pm_sub", "three_outputs")
    ]
    out = _decide(rows, [collective, *split])
    assert out.loc["ours win", "verdict"] == "holds" and out.loc["ours win", "n_points"] == 2
    # the row shows the weaker of the two points: 0.5/0.8 at ε = 4 (PM-SUB vs PM; 0.6/1.0 at ε = 0.5)
    assert out.loc["ours win", "effect"] == pytest.approx(0.5 / 0.8)
    points = pd.DataFrame(_decide_points(rows, [collective]))
    assert list(points["point"]) == [
        "g16 ε=0.5: best proposed Three-Outputs vs best existing Duchi",
        "g16 ε=4: best proposed PM-SUB vs best existing PM",
    ]
    assert (out.loc[["pm_sub alone", "three_outputs alone"], "verdict"] == "does not hold").all()


def test_a_finding_counts_once_in_the_figure_its_declaration_names():
    from ldprepro.claims.declarations import DeclarationError, validate
    from ldprepro.claims.dispatch import headline_fields

    thm = {"claim": "T", "scope": "s", "test": "function", "function": "m:f", "finding": "p: Theorem 1"}
    with pytest.raises(DeclarationError, match="counted_in"):
        validate([thm], "here", import_functions=False)
    thm["counted_in"] = "fig2"
    assert headline_fields(thm, "fig2") == {
        "statement": "theorem",
        "finding": "p: Theorem 1",
        "counted": True,
        "reconstructed": False,
    }
    assert headline_fields(thm, "fig3")["counted"] is False  # a repeat
    assert headline_fields({**WIN, "reconstructed": True}, "fig1")["counted"] is False
    assert headline_fields({**WIN, "counted": False}, "fig1")["counted"] is False  # an (ours, stricter) split


def test_every_finding_of_the_papers_is_counted_in_a_figure_that_declares_it():
    from ldprepro.papers import PAPER_KEYS, paper_dir, paper_section
    from ldprepro.pipeline.parse import load_yaml

    homes: dict[str, set] = {}
    for paper in PAPER_KEYS:
        figures = [k for k in load_yaml((paper_dir(paper) / "claims.yaml").read_text()) if k.startswith("fig")]
        for fig in figures:
            flat = []
            for d in paper_section(paper, fig)["claims"]:
                flat += d if isinstance(d, list) else [d]
            for d in flat:
                if d.get("finding"):
                    homes.setdefault(d["finding"], set()).add((d["counted_in"], fig == d["counted_in"]))
    assert {"bshp: Theorem 7", "dct: Lemma 1", "lremh: Theorem 2", "hiera: Theorem 3"} <= set(homes)
    for finding, seen in homes.items():
        assert len({home for home, _ in seen}) == 1 and any(here for _, here in seen), finding


def test_a_verdict_on_fewer_panels_than_the_paper_shows_says_so():
    """ldpfl Fig. 6 on Vehicle only (3 of the paper's 4 panels not obtainable here): a claim about the
    whole figure says "1 of 2 panels" here; a claim about one panel (per_dataset) does not."""
    rows = _rows("g16", "pm", 4.0, 1.0, 5) + _rows("g16", "pm_sub", 4.0, 0.9, 5)
    rows += [_theory("g16", "pm", 4.0, 1.0), _theory("g16", "pm_sub", 4.0, 0.9)]
    from ldprepro.claims.dispatch import claims_for as dispatch

    fig = {"metric": "sq_error", "panels": [{"dataset": "g16"}, {"dataset": "ipums_br"}]}
    per_panel = {**WIN, "claim": "on {dataset}", "scope": "{dataset}", "per_dataset": True}
    out = dispatch("toy", "fig1", pd.DataFrame(rows), fig, {"ipums_br": "no extract"}, [WIN, per_panel])
    out = out.set_index("claim")
    assert out.loc["PM-SUB beats PM", "panels"] == "1 of 2 panels" and out.loc["on {dataset}", "panels"] == ""
    assert out.loc["PM-SUB beats PM", "verdict"] == "holds"


def test_robustness_names_a_shown_reading_even_when_it_agrees():
    """An alternative declared ``show: true`` (paper 004's CPU time, issue 51.4) is named with its
    verdict in the robustness column whether or not it agrees; the others only when they differ."""
    from ldprepro.claims.dispatch import _combine, robustness

    verdicts = {"CPU time": "holds", "a margin": "holds"}
    assert robustness(verdicts, "holds") == "robust"
    assert robustness(verdicts, "holds", {"CPU time"}) == "robust (same verdict under: CPU time → holds)"
    both = robustness({"CPU time": "holds", "a margin": "inconclusive"}, "holds", {"CPU time"})
    assert both == "depends on: a margin → inconclusive (as declared: holds); same verdict under: CPU time → holds"
    assert _combine("depends on: x → y (as declared: holds)", "robust (same verdict under: CPU time → holds)") == (
        "depends on: x → y (as declared: holds); same verdict under: CPU time → holds"
    )
    assert _combine("robust", "robust (same verdict under: CPU time → holds)").startswith("robust (same")


def test_a_win_on_cross_validation_fits_uses_the_corrected_resampled_t():
    """LDP-SGD figures pair fits of repeated cross-validation (folds of one CV repetition share
    training data): the outperform test, single or collective, names the corrected resampled t
    (issue 52.3); the merge that moved the pair test into one function had dropped the correction."""
    from ldprepro.claims.dispatch import claims_for as dispatch

    rows = []
    for m, rate in (("pm_sub", 0.20), ("pm", 0.22), ("three_outputs", 0.21)):
        values = rate + 0.01 * RNG.standard_normal(50)
        rows += [_row("vehicle", m, 4.0, r, "misclassification", v) for r, v in enumerate(values)]
    fig = {"metric": "misclassification", "panels": [{"dataset": "vehicle"}], "folds": 10, "cv_repetitions": 5}
    single = {**WIN, "claim": "single"}
    collective = {**WIN, "claim": "collective", "mechanism": ["pm_sub", "three_outputs"]}
    out = dispatch("toy", "fig1", pd.DataFrame(rows), fig, {}, [single, collective]).set_index("claim")
    for claim in ("single", "collective"):
        assert "corrected resampled t (Nadeau & Bengio 2003: 10 folds × 5 CV repetitions)" in out.loc[claim, "test"]
