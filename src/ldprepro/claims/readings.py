"""The two readings of a claim (docs/verdicts-standard.md, "Two readings"): the decision rule on a
claim's points in the literal reading (every point as it is: ``verdict_strict``) and in the fair one
(``verdict``, the headline), where exact ties and differences against the claim within a declared
practical margin are neutral; the evidence texts both share. ``ldprepro.claims.verdicts`` combines
them into a claim's row. Tests on constructed cases: tests/test_verdicts.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ldprepro.claims.multiplicity import format_p, holm
from ldprepro.claims.power import ALPHA
from ldprepro.claims.stats import Point

#: The fair reading's default practical margins (docs/verdicts-standard.md, "Two readings"): a
#: difference against a claim smaller than this is neutral. Errors (ratio scale): ×1.01, far inside
#: what the papers' experiments could resolve (the 95 % interval of a plotted MSE at T = 100
#: repetitions is about ±28 %: a squared error of a mean has a coefficient of variation √2);
#: rates: 0.005, under one standard error of a misclassification rate on one test fold of the papers'
#: data sets (√(0.2·0.8/4,500) ≈ 0.006 for Adult's). A declaration may set its own (``fair_margin``).
FAIR_MARGIN_RATIO = 1.01
FAIR_MARGIN_RATE = 0.005
#: the margins the robustness column also tries: the default halved and doubled (on the test scale)
FAIR_MARGIN_SCALES = (0.5, 2.0)


def _fmt(v: float) -> str:
    if v is None or not np.isfinite(v):
        return "—"
    return f"{v:.3g}"


def _labels(points: list[Point], most: int = 6) -> str:
    shown = ", ".join(p.label for p in points[:most])
    return shown + (f" (+{len(points) - most} more)" if len(points) > most else "")


def _holm_within(tested: list[Point]) -> dict[int, float]:
    """{id(point): its Holm-adjusted p across the claim's tested points}."""
    return dict(zip(map(id, tested), holm([p.p_value for p in tested]))) if tested else {}


def _weakest(tested: list[Point]) -> Point:
    """The tested point furthest from deciding the claim its way: a point not in its favour (the
    most significant one against it first), else the favouring point with the largest raw p."""

    def key(p: Point):
        pv = float(np.nan_to_num(p.p_value if p.p_value is not None else np.nan, nan=1.0))
        return (not p.favours, -pv if not p.favours else pv)

    return max(tested, key=key)


def _effect_text(p: Point) -> str:
    if not np.isfinite(p.effect):
        return "no estimate"
    scale = f"{p.scale} " if p.scale else "effect "
    if p.exact:
        return f"{scale}{_fmt(p.effect)} (exact)"
    return f"{scale}{_fmt(p.effect)} [{_fmt(p.ci_low)}, {_fmt(p.ci_high)}] ({round(100 * p.ci_level)} % CI)"


def _test_scale(pt: Point) -> float:
    """The point's effect on its test scale (log-ratio for ratios)."""
    if pt.null == 1.0 and pt.effect > 0:
        return math.log(pt.effect)
    return pt.effect - pt.null


def neutral_reason(p: Point, margin_scale: float = 1.0) -> str:
    """Why a point is neutral in the fair reading ("" if it is not; docs/verdicts-standard.md, "Two
    readings"): an exact tie (identical output laws, equal expectations), or a difference against
    the claim smaller than the point's practical margin (``fair_margin``, on the test scale, times
    ``margin_scale``) that the literal reading counts against it (an exact point, or a significant
    one). A point in the claim's favour is never discounted: the fair reading only forgives."""
    if p.tie:
        return "tie"
    margin = p.fair_margin * margin_scale
    if p.favours or not (np.isfinite(margin) and margin > 0):
        return ""
    d = _test_scale(p)
    return "margin" if np.isfinite(d) and abs(d) < margin else ""


def _contrary_size(p: Point) -> float:
    """How far a point lies against its claim on the test scale (ties 0; no estimate: −1)."""
    d = _test_scale(p)
    return abs(d) if np.isfinite(d) else (0.0 if p.tie else -1.0)


@dataclass
class Decision:
    """A claim's verdict in one reading, the point shown for it and the evidence's lead."""

    verdict: str
    shown: Point
    lead: str
    favouring: int
    tested: list
    adj_of: dict


def decision(pts: list[Point], fair: bool, margin_scale: float = 1.0) -> Decision:
    """The decision rule on a claim's points, in the literal reading (``fair`` False: every point as
    it is) or the fair one (neutral points, ``neutral_reason``, neither support nor refute; a claim
    whose every point is neutral does not hold)."""
    tested_all = [p for p in pts if not p.exact]
    adj_of = _holm_within(tested_all)
    neutral = {id(p): neutral_reason(p, margin_scale) for p in pts} if fair else {}
    sig_against = {id(p) for p in tested_all if not p.favours and np.isfinite(adj_of[id(p)]) and adj_of[id(p)] < ALPHA}
    # a neutral estimated point must be one the literal reading counts against (significant)
    exact = {id(p) for p in pts if p.exact}
    neutral = {k: v for k, v in neutral.items() if v == "tie" or k in sig_against or k in exact}
    live = [p for p in pts if not neutral.get(id(p))]
    refuted = [p for p in live if p.exact and p.refutes]
    exact_ok = [p for p in live if p.exact and not p.refutes]
    tested = [p for p in live if not p.exact]
    won = [p for p in tested if p.favours and p.significant]
    against = [p for p in tested if id(p) in sig_against]
    favour = f"{len(won) + len(exact_ok)}/{len(pts)} points favour the claim" + (
        f" (raw p < {ALPHA:g}" + (" or exact" if exact_ok else "") + ")" if tested_all else " exactly"
    )
    weakest = _weakest(tested) if tested else None
    if not live:
        shown = max(pts, key=_contrary_size)
        lead = (
            f"every point ({len(pts)}) is neutral (exact ties or differences within the margin): none shows the "
            f"claimed difference; {_neutral_text(pts, neutral, margin_scale)}"
        )
        return Decision("does not hold", shown, lead, 0, tested_all, adj_of)
    if refuted:
        shown = max(refuted, key=_contrary_size)
        others = [p for p in refuted if p is not shown]
        lead = f"refuted by exact computation; most contrary point: {shown.label}" + (
            f" ({shown.note})" if shown.note else f", {_effect_text(shown)}"
        )
        if others:
            lead += f"; {len(others)} other point{'s' if len(others) > 1 else ''} refute{'' if len(others) > 1 else 's'} it too: {_labels(others)}"
        verdict, lead = "does not hold", lead + f"; {favour}"
    elif against:
        verdict, shown = "does not hold", min(against, key=lambda p: adj_of[id(p)])
        lead = (
            f"significantly against the claim at {len(against)} point{'s' if len(against) > 1 else ''}; "
            f"most significant: {shown.label}, {_effect_text(shown)}, Holm-adjusted p = {format_p(adj_of[id(shown)])}"
            + (f"; the others: {_labels([p for p in against if p is not shown])}" if len(against) > 1 else "")
            + f"; {favour}"
        )
    elif tested and len(won) == len(tested):
        verdict, shown = "holds", weakest
        lead = f"{favour}; weakest: {shown.label}, {_effect_text(shown)}, p = {format_p(shown.p_value)}"
    elif not tested:
        verdict, shown = "holds", min(exact_ok, key=_contrary_size)
        lead = f"exact computation agrees at every point ({len(exact_ok)})"
    else:
        verdict, shown = "inconclusive", weakest
        undecided = [p for p in tested if p not in won]
        lead = (
            f"{favour}; {len(undecided)} undecided (claim_points.parquet lists them); weakest: {shown.label}, "
            f"{_effect_text(shown)}, p = {format_p(shown.p_value)}"
        )
    if neutral and any(neutral.values()):
        lead += "; " + _neutral_text([p for p in pts if neutral.get(id(p))], neutral, margin_scale)
    return Decision(verdict, shown, lead, len(won) + len(exact_ok), tested_all, adj_of)


def _neutral_text(points: list[Point], why: dict, margin_scale: float) -> str:
    """'neutral (fair reading): 1 exact tie at …; 2 differences against within the margin ×1.01 at …
    (largest ×1.0001)'."""
    ties = [p for p in points if why[id(p)] == "tie"]
    small = [p for p in points if why[id(p)] == "margin"]
    parts = []
    if ties:
        parts.append(
            f"{len(ties)} exact tie{'s' if len(ties) > 1 else ''} at {_labels(ties, 3)}"
            + (f" ({ties[0].note})" if ties[0].note else "")
        )
    if small:
        big = max(small, key=_contrary_size)
        margin = _margin_words(big, margin_scale)
        parts.append(
            f"{len(small)} difference{'s' if len(small) > 1 else ''} against within the margin {margin} at "
            f"{_labels(small, 3)} (largest: {big.label}, {big.note or _effect_text(big)})"
        )
    return "neutral in the fair reading: " + "; ".join(parts)


def _margin_words(p: Point, margin_scale: float = 1.0) -> str:
    m = p.fair_margin * margin_scale
    return f"×{math.exp(m):.4g}" if p.null == 1.0 else f"±{m:.3g}"


def fair_robustness(pts: list[Point], fair: str, strict: str) -> str:
    """The fair reading's own rules as readings: ties and small differences counted as losses (the
    literal reading), and the margin halved and doubled; '' when no point has a tie or a margin."""
    if not any(p.tie or np.isfinite(p.fair_margin) for p in pts):
        return ""
    verdicts = {"ties and differences within the margin counted against (the literal reading)": strict}
    with_margin = [p for p in pts if np.isfinite(p.fair_margin)]
    if with_margin:
        for k in FAIR_MARGIN_SCALES:
            verdicts[f"margin {_margin_words(with_margin[0], k)}"] = decision(pts, True, k).verdict
    differ = {r: v for r, v in verdicts.items() if v != fair}
    rules = "tie handling" + (" and margin" if with_margin else "")
    if not differ:
        return f"fair-reading rules ({rules}): robust"
    return (
        f"fair-reading rules ({rules}): depends on: "
        + "; ".join(f"{r} → {v}" for r, v in differ.items())
        + f" (fair reading: {fair})"
    )
