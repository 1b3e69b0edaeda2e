"""Paper 001 (BSHP / WSHP) claims (Sec. 6 of the paper): declared as data in ``claims.yaml`` beside
this module (words, source, kind, the test in words, the points computation), decided by the one
dispatcher (``ldprepro.claims.dispatch``) with a panel per city; ``on_cities`` and ``exact`` turn a
declaration into claims, the points themselves are computed in ``papers.bshp.points``.
"""

from __future__ import annotations

import pandas as pd

from ldprepro.claims import verdicts as V
from ldprepro.claims.results import Results
from ldprepro.papers import decide_figure
from ldprepro.papers.bshp.figure_data import FigureData
from ldprepro.papers.bshp.points import (
    bandwidth,
    gain_grows,
    halved,
    higher_ratio,
    ratio_trend,
    same_scale,
    scope_text,
    sweep_vs_baseline,
    theorem7,
    theory_agreement,
    vs_baseline,
)

PAPER = "bshp"
THEOREM7 = "BSHP/WSHP satisfy ε'-LDP with ε' = ln(1 + r(e^ε − 1)) < ε (Theorem 7)"
#: The point computations a declaration may name (``points:`` in claims.yaml).
POINTS = {
    "vs_baseline": vs_baseline,
    "gain_grows": gain_grows,
    "higher_ratio": higher_ratio,
    "ratio_trend": ratio_trend,
    "halved": halved,
    "same_scale": same_scale,
    "sweep_vs_baseline": sweep_vs_baseline,
    "theorem7": theorem7,
    "bandwidth": bandwidth,
    "theory_agreement": theory_agreement,
}
#: The declaration keys each point computation takes as parameters (so a declared alternative
#: reading can change them: ``alternatives`` in claims.yaml, decided again by the dispatcher).
PARAMETERS = {
    "vs_baseline": ("metric",),
    "gain_grows": ("shape", "large_eps"),
    "same_scale": ("margin",),
    "theory_agreement": ("margin",),
}


def _figure_data(res: Results) -> FigureData:
    """The figure's indexed results, built once per dispatched ``res`` and shared by its claims."""

    def build(r: Results) -> FigureData:
        fig = r.fig
        return FigureData(r.raw, fig, r.figure, city_entries(fig), r.unavailable, tuple(fig.get("folds", (3, 5, 7))))

    return res.derived("bshp.figure_data", build)


def _variants(decl: dict, d: FigureData) -> list[tuple[str, dict]]:
    """(words, options) of a declaration: one per sampling ratio of the figure for ``per_ratio``."""
    if decl.get("per_ratio"):
        return [(decl["claim"].format(r=r), {"ratio": r}) for r in sorted(d.ratios, reverse=True)]
    return [(decl["claim"], {})]


def _compute(decl: dict):
    """The declaration's point computation with its declared parameters (``PARAMETERS``) bound."""
    fn, name = POINTS[decl["points"]], decl["points"]
    params = {k: decl[k] for k in PARAMETERS.get(name, ()) if k in decl}
    return lambda *args, **kw: fn(*args, **params, **kw)


def on_cities(res: Results, decl: dict) -> list:
    """A claim decided on the cities of one data role (the dispatcher's ``res``): the declared
    ``points`` computation on them, scoped by city (``focus``: only the figure's focus city)."""
    d = _figure_data(res)
    cities = [c for c in d.cities if d.cities[c]["data_role"] == res.role and d.dataset(c) not in d.unavailable]
    out = []
    for words, opts in _variants(decl, d):
        chosen = cities
        if decl.get("focus") and d.fig.get("focus_city"):
            focus = d.fig["focus_city"]
            if d.cities[focus]["data_role"] != res.role:
                continue
            chosen = [c for c in cities if c == focus]
            if not chosen:
                out.append(
                    V.not_testable(
                        PAPER,
                        d.figure,
                        words,
                        scope_text(d, [focus], [], "—"),
                        decl["kind"],
                        "data not available here: " + _why(d, [focus]),
                        data_role=res.role,
                    )
                )
                continue
        pts, what, ev = _compute(decl)(d, chosen, **opts)
        out.append(
            V.Claim(
                PAPER,
                d.figure,
                words,
                scope_text(d, chosen, [], what),
                decl["kind"],
                data_role=res.role,
                points=pts,
                evidence=ev + _role_note(res.role),
            )
        )
    return out


def exact(res: Results, decl: dict) -> list:
    """A claim decided once per figure from the closed forms alone (Theorem 7, bandwidth): about the
    mechanisms, not any city's data, so its role is ``paper``. Exact computations on a city's data
    (Lemma 6 on its true counts) are ``on_cities`` claims: one row per data role, so a substitute
    city never sits in a ``paper`` row."""
    d = _figure_data(res)
    out = []
    for words, opts in _variants(decl, d):
        pts, scope, ev = _compute(decl)(d, **opts)
        out.append(
            V.Claim(PAPER, d.figure, words, scope, decl["kind"], data_role="paper", points=pts, evidence=ev)
            if pts
            else V.not_testable(
                PAPER,
                d.figure,
                words,
                scope,
                decl["kind"],
                "no city's data can be obtained here: " + _why(d),
                data_role="paper",
            )
        )
    return out


def _role_note(role: str) -> str:
    return "" if role == "paper" else "; substitute data (our extension, not a reproduction of the paper)"


def _why(d: FigureData, cities: list[str] | None = None) -> str:
    cities = list(d.cities) if cities is None else cities
    return "; ".join(f"{c}: {d.unavailable.get(d.dataset(c), 'no results')}" for c in cities)


def city_entries(fig: dict) -> dict:
    """{city: its panel} of a figure entry whose panels name their ``city`` (the section's
    ``cities``, ldprepro.experiments.kinds.section_entry); a panel without one is named by its dataset."""
    return {p.get("city", p["dataset"]): p for p in fig["panels"]}


def judge_figure(
    raw: pd.DataFrame, fig: dict, figure: str, cities: dict, unavailable: dict, folds=(3, 5, 7)
) -> pd.DataFrame:
    """The figure's claims table (verdicts.CLAIM_COLUMNS) for a figure naming its ``cities``
    ({city: {dataset, title, data_role}}): the histogram entry the workflow renders (its panels the
    cities, ldprepro.experiments.kinds.section_entry) decided as every figure is
    (``papers.decide_figure``: its declarations in ``claims.yaml``, a panel per city; each claim its
    own family, docs/verdicts-standard.md), after the pairing checks on every result."""
    entry = {**fig, "panels": [{"city": c, **cities[c]} for c in fig["cities"]], "folds": list(folds)}
    FigureData(raw, entry, figure, city_entries(entry), unavailable, tuple(folds))  # the pairing checks
    return decide_figure(PAPER, figure, raw, entry, unavailable)
