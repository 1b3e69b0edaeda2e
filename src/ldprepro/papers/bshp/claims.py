"""Paper 001 (BSHP / WSHP) claims (Sec. 6 of the paper, issue 13): each is declared once in
``CLAIMS`` with its words, kind and test, and decided by ``ldprepro.claims.verdicts`` on the
per-repetition results (``judge_figure``); the functions that compute each claim's points are in
``papers.bshp.points``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from ldprepro.claims import verdicts as V
from ldprepro.papers.bshp.figure_data import FigureData
from ldprepro.papers.bshp.points import (
    bandwidth,
    gain_trend,
    halved,
    higher_ratio,
    ratio_trend,
    same_scale,
    scope_text,
    sweep_vs_baseline,
    theorem7,
    theory_gain_trend,
    theory_vs_baseline,
    vs_baseline,
)
from ldprepro.papers.bshp.runs import PAPER


@dataclass(frozen=True)
class ClaimSpec:
    """A claim declared once: the paper's words (or ours, marked), its kind, the declared test and
    the function that turns the figure's data into points. ``split`` = one claim per data role
    (decided on data); otherwise one theory claim (decided exactly)."""

    key: str
    words: str
    kind: str
    test: str
    decide: Callable
    split: bool = True
    per_ratio: bool = False  # one scoped claim per sampling ratio of the figure ({r} in the words)
    focus: bool = False  # scoped to the figure's ``focus_city`` when it names one


THEOREM7 = "BSHP/WSHP satisfy ε'-LDP with ε' = ln(1 + r(e^ε − 1)) < ε (Theorem 7)"

#: Every claim of paper 001's evaluation (Sec. 6), by figure kind. Words in quotes are the paper's;
#: "(ours …)" marks a scoped split of a paper claim or a check of ours.
CLAIMS: dict[str, tuple[ClaimSpec, ...]] = {
    "values": (
        ClaimSpec(
            "outperform",
            "The proposed algorithms outperform the baseline method (lower MSE of the published "
            "histograms; 'the difference is actually very significant')",
            "pairwise",
            "paired test on per-repetition log MSE ratios, each method vs the baseline, Holm across the points",
            vs_baseline("mse"),
        ),
        ClaimSpec(
            "shape",
            "The proposed algorithms achieve more accurate shapes for histograms than the baseline",
            "pairwise",
            "paired test on per-repetition log ratios of the total-variation distance to the "
            "true histogram, each method vs the baseline",
            vs_baseline("tv_distance"),
        ),
        ClaimSpec(
            "bandwidth",
            "Only part of the bits is collected under sampling (bandwidth saving)",
            "closed-form",
            "exact expected bits per contributor vs the baseline's",
            bandwidth,
            split=False,
        ),
        ClaimSpec("theorem7", THEOREM7, "closed-form", "exact worst-case privacy loss", theorem7, split=False),
    ),
    "mse_eps": (
        ClaimSpec(
            "reduce",
            "The proposed algorithms can reduce the MSE for histograms (compared with the baseline, "
            "every ε and ratio of the figure)",
            "range",
            "paired test on per-repetition log MSE ratios at each (method, r, ε), Holm across the points",
            vs_baseline("mse"),
        ),
        ClaimSpec(
            "reduce_per_ratio",
            "(ours: the claim above split by sampling ratio, r = {r:g}) The proposed "
            "algorithms reduce the MSE compared with the baseline at every ε",
            "range",
            "paired test on per-repetition log MSE ratios at each (method, ε), Holm across the points",
            vs_baseline("mse"),
            per_ratio=True,
        ),
        ClaimSpec(
            "reduce_per_ratio_theory",
            "(ours: the claim above split by sampling ratio, r = {r:g}, exact "
            "expected MSE, Lemma 6) The proposed algorithms reduce the MSE compared with the baseline at every "
            "ε",
            "closed-form",
            "exact expected MSE ratio at each (city, method, ε)",
            theory_vs_baseline,
            split=False,
            per_ratio=True,
        ),
        ClaimSpec(
            "larger_eps",
            "The improvement is more significant when the privacy budget is relatively large",
            "trend",
            "regression slope of per-repetition log(MSE_method/MSE_baseline) on ε, repetition as block",
            gain_trend,
        ),
        ClaimSpec(
            "larger_eps_theory",
            "The improvement is more significant when the privacy budget is relatively "
            "large (exact expected MSE, Lemma 6)",
            "closed-form",
            "slope of the exact log expected gain in ε",
            theory_gain_trend,
            split=False,
        ),
        ClaimSpec(
            "higher_ratio",
            "A higher sampling ratio can improve the general performance (r = 0.8 beats r = 0.4)",
            "range",
            "paired test on per-repetition log MSE ratios at each (method, ε), Holm across the points",
            higher_ratio,
        ),
        ClaimSpec("theorem7", THEOREM7, "closed-form", "exact worst-case privacy loss", theorem7, split=False),
    ),
    "mse_ratio": (
        ClaimSpec(
            "improves",
            "The general performance is improved [as the sampling ratio grows from 0.3 to 0.7] for all three datasets",
            "trend",
            "regression slope of per-repetition log MSE on r, repetition as block",
            ratio_trend,
        ),
        ClaimSpec(
            "halved",
            "The MSE value is reduced by at least 50% (San Francisco)",
            "pairwise",
            "paired test of the log-ratio MSE(r_max)/(0.5·MSE(r_min)) against 0",
            halved,
            focus=True,
        ),
        ClaimSpec(
            "same_scale",
            "However, the performance actually stays on the same scale for each dataset",
            "equivalence",
            "TOST on per-repetition log MSE ratios with the stated margin",
            same_scale,
        ),
        ClaimSpec(
            "sweep_vs_baseline",
            "(ours, not a claim of the paper) The sampling methods beat the split baseline at every ratio of the sweep",
            "range",
            "paired test on per-repetition log MSE ratios at each (method, r), Holm across the points",
            sweep_vs_baseline,
        ),
        ClaimSpec("theorem7", THEOREM7, "closed-form", "exact worst-case privacy loss", theorem7, split=False),
    ),
}


def claims_for(d: FigureData) -> list:
    """Every declared claim of the figure as engine Claims (one per data role for claims on data,
    one theory claim for the exact ones; one per ratio for ``per_ratio`` specs) or not-testable
    rows; ``judge_figure`` judges them."""
    out = []
    for spec in CLAIMS[d.fig["kind"]]:
        variants = (
            [(spec.words.format(r=r), {"ratio": r}) for r in sorted(d.ratios, reverse=True)]
            if spec.per_ratio
            else [(spec.words, {})]
        )
        for words, opts in variants:
            if not spec.split:
                pts, scope, ev = spec.decide(d, **opts)
                out.append(
                    V.Claim(PAPER, d.figure, words, scope, spec.kind, data_role="paper", points=pts, evidence=ev)
                    if pts
                    else V.not_testable(
                        PAPER,
                        d.figure,
                        words,
                        scope,
                        spec.kind,
                        "no city's data can be obtained here: " + _why(d),
                        data_role="paper",
                    )
                )
                continue
            for role, cities, missing in d.groups():
                focus = d.fig.get("focus_city") if spec.focus else None
                if focus:
                    if focus not in cities + missing:
                        continue
                    cities, missing = [c for c in cities if c == focus], [c for c in missing if c == focus]
                if not cities:
                    out.append(
                        V.not_testable(
                            PAPER,
                            d.figure,
                            words,
                            scope_text(d, missing, [], "—"),
                            spec.kind,
                            "data not available here: " + _why(d, missing),
                            data_role=role,
                        )
                    )
                    continue
                pts, what, ev = spec.decide(d, cities, **opts)
                out.append(
                    V.Claim(
                        PAPER,
                        d.figure,
                        words,
                        scope_text(d, cities, missing, what),
                        spec.kind,
                        data_role=role,
                        points=pts,
                        evidence=ev + _role_note(role),
                    )
                )
    return out


def _role_note(role: str) -> str:
    return "" if role == "paper" else "; substitute data (our extension, not a reproduction of the paper)"


def _why(d: FigureData, cities: list[str] | None = None) -> str:
    cities = d.fig["cities"] if cities is None else cities
    return "; ".join(f"{c}: {d.unavailable.get(d.dataset(c), 'no results')}" for c in cities)


def judge_figure(
    raw: pd.DataFrame, fig: dict, figure: str, cities: dict, unavailable: dict, folds=(3, 5, 7)
) -> pd.DataFrame:
    """The figure's claims table (verdicts.CLAIM_COLUMNS), Holm across its claims."""
    d = FigureData(raw, fig, figure, cities, unavailable, tuple(folds))
    return V.judge(claims_for(d))


def figure_claims(table: pd.DataFrame, width: int = 160) -> list[dict]:
    """The claims table's rows for printing under the figure: the full rows, with the evidence cut
    to its first sentence (where it held or failed) and the data role named."""
    rows = []
    for row in table.to_dict("records"):
        lead = str(row["evidence"]).split(". ")[0]
        if len(lead) > width:
            lead = lead[: width - 1] + "…"
        rows.append(
            {
                **row,
                "evidence": f"{row['data_role']} data; {lead}" if row["kind"] != "closed-form" else f"exact; {lead}",
            }
        )
    return rows


def paper_repetitions(raw: pd.DataFrame) -> pd.DataFrame:
    """The paper's T repetitions only (what the figure plots), without the ``extra_rep`` label."""
    if "extra_rep" not in raw.columns:
        return raw
    return raw[~raw["extra_rep"].astype(bool)].drop(columns="extra_rep")
