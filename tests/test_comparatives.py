"""Shape and interaction tests on constructed cases (issue 52.4, ``ldprepro.claims.comparatives``)."""

import numpy as np
import pandas as pd

from ldprepro.claims.comparatives import exact_step_point, interaction_points, step_points, top_third
from ldprepro.claims.declarations import decide, validate
from ldprepro.claims.results import Results
from ldprepro.claims.verdicts import Claim, judge, trend_point


def _verdict(points, kind="trend") -> str:
    return judge([Claim("p", "f", "c", "s", kind, points=points)])["verdict"].iloc[0]


def test_a_curve_that_turns_back_at_one_step_fails_the_shape_test_though_its_slope_favours_it():
    """LREMH's "grows with k" at f = 0.3 falls at k = 8 while the slope says it grows: the slope is
    not the claim's words; every step is."""
    rng = np.random.default_rng(1)
    xs = [2, 4, 6, 8, 10]
    curve = np.array([1.0, 2.0, 4.0, 3.0, 6.0])  # rises, except 6 → 8
    table = pd.DataFrame(curve * np.exp(rng.normal(0, 0.05, (30, 5))), columns=xs)
    slope = trend_point(table, "f=0.3", decreasing=False)
    assert slope.favours and slope.significant and _verdict([slope]) == "holds"
    steps = step_points(table, "f=0.3", decreasing=False, means=False, symbol="k")
    assert [p.label for p in steps] == ["f=0.3 k 2→4", "f=0.3 k 4→6", "f=0.3 k 6→8", "f=0.3 k 8→10"]
    assert [p.favours for p in steps] == [True, True, False, True]
    assert _verdict(steps) == "does not hold"
    # a declared tolerance of ×1.5 per step lets the 4 → 3 step pass (3 > 4/1.5)
    assert _verdict(step_points(table, "f=0.3", decreasing=False, means=False, tolerance=0.5)) == "holds"


def test_exact_steps():
    falls = exact_step_point({1: 3.0, 2: 2.0, 3: 1.5}, "ds", "MAE")
    turns = exact_step_point({1: 3.0, 2: 2.0, 3: 2.5}, "ds", "MAE")
    assert not falls.refutes and turns.refutes and turns.effect == 1.25 and "2→3" in turns.note


def _results(gain_small: float, gain_large: float, n: int = 40, seed: int = 2) -> Results:
    """MAE of A and B at ε ∈ {0.1, 0.2, 0.5, 1, 2, 4}: A's ratio to B is ``gain_small`` at ε ≤ 0.2
    and ``gain_large`` at ε ≥ 2."""
    rng = np.random.default_rng(seed)
    rows = []
    for e in (0.1, 0.2, 0.5, 1.0, 2.0, 4.0):
        ratio = gain_small if e <= 0.2 else (gain_large if e >= 2 else (gain_small + gain_large) / 2)
        for rep in range(n):
            b = rng.gamma(4, 0.25) / e
            rows += [
                ("d", "b", "abs_error", e, rep, b),
                ("d", "a", "abs_error", e, rep, ratio * b * rng.lognormal(0, 0.1)),
            ]
    raw = pd.DataFrame(rows, columns=["dataset", "mechanism", "metric", "eps", "rep", "value"])
    return Results(raw, {"metric": "abs_error", "panels": [{"dataset": "d"}]}, "paper", "p", "f")


def test_especially_for_small_eps_is_an_interaction():
    """ "A beats B, especially for small ε": A winning at small ε is not enough — its gain must exceed
    its gain at large ε (the top third of the grid)."""
    small, large = (lambda e: e <= 0.2), top_third([0.1, 0.2, 0.5, 1.0, 2.0, 4.0])
    more = interaction_points(_results(0.6, 0.9), "a", ["b"], small, large)
    same = interaction_points(_results(0.6, 0.6), "a", ["b"], small, large)
    assert [p.label for p in more] == ["d vs b: ε ≤ 0.2 vs ε ≥ 2"]
    assert _verdict(more, "range") == "holds" and more[0].effect < 0
    assert _verdict(same, "range") == "inconclusive"  # a win everywhere, the same gain: not "especially"
    assert _verdict(interaction_points(_results(0.9, 0.6), "a", ["b"], small, large), "range") == "does not hold"


def test_interaction_and_shape_are_declarable():
    decl = validate(
        [
            {
                "claim": "…especially for small ε",
                "scope": "ε ≤ {eps_hi}",
                "test": "interaction",
                "mechanism": "a",
                "against": ["b"],
                "eps": {"max": 0.2},
            },
            {
                "claim": "A's MAE decreases as ε grows",
                "scope": "s",
                "test": "mechanism_trend",
                "x": "eps",
                "shape": "monotone",
                "alternatives": [{"reading": "a negative slope", "shape": "slope"}],
            },
        ],
        "test",
    )
    res = _results(0.6, 0.9)
    (inter,) = decide(res, decl[0])
    assert inter.kind == "range" and inter.scope == "ε ≤ 0.2" and len(inter.points) == 1
    (shape,) = decide(res, decl[1])
    assert len(shape.points) == 2 * 5 and all("ε " in p.label and "→" in p.label for p in shape.points)
