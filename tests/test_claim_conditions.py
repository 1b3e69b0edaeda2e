"""A claim's ``where`` condition (ldprepro.claims.conditions) and the ``no_worse`` test (A ≤ B, ties
allowed), on constructed results."""

from __future__ import annotations

import pandas as pd
import pytest

from ldprepro.claims import conditions
from ldprepro.claims.declarations import DeclarationError, validate
from ldprepro.claims.dispatch import claims_for


def test_a_condition_is_evaluated_at_the_point():
    olh_wins = conditions.parse("k > 3*exp(eps) + 2")
    assert olh_wins({"eps": 3.0, "k": 64})  # 3e³ + 2 = 62.3
    assert not olh_wins({"eps": 3.5, "k": 64})
    assert conditions.parse("1 < eps <= 4 and not n < 10")({"eps": 4, "n": 10})
    assert conditions.parse("log(k) / sqrt(eps) ** 2 >= -1 or k == 2")({"eps": 1, "k": 2})
    assert conditions.names("k > 3*exp(eps) + 2") == {"k", "eps"}


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('true')",
        "eps.real > 1",
        "k[0] > 1",
        "'a' < 'b'",
        "x > 1",
        "exp(eps, 2) > 1",
        "",
        "eps >",
    ],
)
def test_a_condition_that_is_not_arithmetic_is_refused(text):
    with pytest.raises(conditions.ConditionError):
        conditions.parse(text)


def test_a_condition_on_a_value_the_point_lacks_says_so():
    with pytest.raises(conditions.ConditionError, match="the point has no k"):
        conditions.parse("k > 2")({"eps": 1.0, "k": None})


def test_a_declaration_with_a_bad_condition_is_refused_naming_it():
    decl = {"claim": "c", "scope": "s", "test": "outperform", "mechanism": "a", "against": ["b"], "where": "eps.x"}
    with pytest.raises(DeclarationError, match=r"where\[0\] \('c'\): where: condition 'eps.x'"):
        validate([decl], "where")


def test_a_bad_condition_in_an_alternative_reading_is_refused_too():
    decl = {"claim": "c", "scope": "s", "test": "no_worse", "mechanism": "a", "against": ["b"], "where": "eps > 1"}
    decl["alternatives"] = [{"reading": "from ε = 2", "where": "eps >> 2"}]
    with pytest.raises(DeclarationError, match=r"where: condition 'eps >> 2': RShift is not allowed"):
        validate([decl], "where")


def _exact_results(ratios: dict[float, float]) -> pd.DataFrame:
    """Two mechanisms with exact expectations: b's is 1, a's ``ratios[ε]``; 4 repetitions each."""
    rows = []
    for eps, q in ratios.items():
        for mech, t in (("a", q), ("b", 1.0)):
            base = {"paper": "p", "figure": "fig1", "dataset": "d", "mechanism": mech, "eps": eps}
            rows.append({**base, "rep": 0, "metric": "variance_theory", "value": t, "theory_exact": True})
            rows += [{**base, "rep": r, "metric": "variance", "value": t * (1 + 0.01 * r)} for r in range(4)]
    return pd.DataFrame(rows)


def _decide(raw: pd.DataFrame, decl: dict) -> pd.Series:
    fig = {"kind": "variance", "metric": "variance", "panels": [{"dataset": "d"}]}
    declarations = {"relabel": [], "claims": [decl]}
    table = claims_for("p", "fig1", raw, fig, {}, declarations, "test", default_role="paper")
    return table.set_index("claim").iloc[0]


def test_no_worse_admits_a_tie_that_refutes_a_strict_win():
    raw = _exact_results({1.0: 0.5, 2.0: 1.0})  # a better at ε = 1, equal at ε = 2
    common = {"scope": "every ε", "mechanism": "a", "against": ["b"]}
    assert _decide(raw, {"claim": "A ≤ B", "test": "no_worse", **common})["verdict"] == "holds"
    strict_win = _decide(raw, {"claim": "A < B", "test": "outperform", **common})
    # the literal reading: the tie at ε = 2 refutes a strict win; the fair one: a tie is neutral
    assert (strict_win["verdict_strict"], strict_win["verdict"]) == ("does not hold", "holds")


def test_no_worse_is_refuted_exactly_and_a_margin_widens_it():
    raw = _exact_results({1.0: 1.04})
    common = {"scope": "ε = 1", "mechanism": "a", "against": ["b"], "test": "no_worse"}
    assert _decide(raw, {"claim": "A ≤ B", **common})["verdict"] == "does not hold"
    assert _decide(raw, {"claim": "A ≤ 1.05 B", "margin": 1.05, **common})["verdict"] == "holds"


def test_where_narrows_the_points_decided():
    raw = _exact_results({1.0: 0.5, 2.0: 2.0})
    decl = {"claim": "A < B for ε < 1.5", "scope": "s", "test": "outperform", "mechanism": "a", "against": ["b"]}
    assert _decide(raw, {**decl, "where": "eps < 1.5"})["verdict"] == "holds"
    assert _decide(raw, decl)["verdict"] == "does not hold"
