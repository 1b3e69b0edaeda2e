"""The claim engine: how a paper's claim gets a verdict.

Every claim is decided by a declared statistical test on per-repetition results (or by exact
computation), following the project's statistical standard (docs/verdicts-standard.md in the repository):

- vocabulary: exactly ``holds``, ``does not hold``, ``inconclusive``, ``not testable``;
- comparisons are paired on the repetition index (common random numbers): the test works on
  per-repetition differences (rates), or on the ratio of the mean errors (MSE, MAE: the plotted
  quantity) with the paired delta method;
- a paired t-test when the differences look normal (Shapiro–Wilk p ≥ 0.05), else the Wilcoxon
  signed-rank test with the Hodges–Lehmann estimate and its distribution-free interval;
- a claim made over several scope points (ε values, datasets, baselines) holds only if every point
  holds after Holm correction across the points; it does not hold if any point is significantly
  against it, or if exact computation refutes it anywhere (e.g. two mechanisms with the same output
  law can never make a strict win "hold");
- Holm correction across the claims of a figure (``finalize``);
- an inconclusive verdict reports the minimal detectable effect (MDE) at the repetitions run and
  the repetitions that would detect the observed (or the theory's) effect with 80 % power.

The building blocks are *points*: one test at one scope point (``paired_point``, ``trend_point``,
``equivalence_point``, ``exact_point``, ``tie_point``; defined in ``ldprepro.claims.stats`` and
importable from here). A claim is a list of points plus its words, scope, kind and data role;
``claim_row`` combines them, ``finalize`` applies the figure-level Holm correction and fixes the
verdicts. Tests on constructed cases: tests/test_verdicts.py.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ldprepro.claims.stats import (
    ALPHA,
    POWER,
    Point,
    equivalence_point,
    exact_point,
    holm,
    paired_point,
    proportion_equivalence_point,
    ratio_of_means_point,
    reps_needed,
    tie_point,
    trend_point,
)

__all__ = [
    "ALPHA",
    "CLAIM_COLUMNS",
    "DATA_ROLES",
    "KINDS",
    "POWER",
    "VERDICTS",
    "Claim",
    "Point",
    "claim_row",
    "equivalence_point",
    "exact_point",
    "finalize",
    "holm",
    "judge",
    "not_testable",
    "paired_point",
    "proportion_equivalence_point",
    "ratio_of_means_point",
    "reps_needed",
    "tie_point",
    "trend_point",
    "validate_claims",
]

VERDICTS = ("holds", "does not hold", "inconclusive", "not testable")
KINDS = ("closed-form", "pairwise", "win-over-set", "range", "trend", "equivalence")
DATA_ROLES = ("paper", "substitute", "user")  # exact findings on the papers' theorems are "paper", kind closed-form
CLAIM_COLUMNS = [
    "paper",
    "figure",
    "claim",
    "scope",
    "kind",
    "test",
    "effect",
    "ci_low",
    "ci_high",
    "p_value",
    "p_holm",
    "n_reps",
    "mde",
    "reps_needed",
    "data_role",
    "verdict",
    "evidence",
]


def _fmt(v: float) -> str:
    if v is None or not np.isfinite(v):
        return "—"
    return f"{v:.3g}"


def _point_text(pt: Point, adj: float | None) -> str:
    if pt.exact:
        return f"{pt.label}: {'refuted' if pt.refutes else 'holds'} exactly" + (f" ({pt.note})" if pt.note else "")
    p = f"p = {_fmt(pt.p_value)}" + (f", Holm {_fmt(adj)}" if adj is not None and np.isfinite(adj) else "")
    return f"{pt.label}: {_fmt(pt.effect)} [{_fmt(pt.ci_low)}, {_fmt(pt.ci_high)}], {p}"


@dataclass
class Claim:
    """A claim of a paper (or ours, marked so in ``claim``) about one figure.

    ``kind`` is one of KINDS; ``scope`` says which datasets/ε/parameters it speaks about;
    ``theory_effect`` (test scale: log-ratio, difference or slope) is the effect size the theory
    predicts, used for the power statement when the verdict is inconclusive."""

    paper: str
    figure: str
    claim: str
    scope: str
    kind: str
    data_role: str = "paper"
    theory_effect: float | None = None
    points: list[Point] = field(default_factory=list)
    evidence: str = ""

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"claim {self.claim!r}: kind must be one of {KINDS}, got {self.kind!r}")
        if self.data_role not in DATA_ROLES:
            raise ValueError(f"claim {self.claim!r}: data_role must be one of {DATA_ROLES}, got {self.data_role!r}")


def not_testable(
    paper: str, figure: str, claim: str, scope: str, kind: str, reason: str, data_role: str = "paper"
) -> dict:
    """The row of a claim whose data cannot be obtained here."""
    return _row(Claim(paper, figure, claim, scope, kind, data_role), test="—", verdict="not testable", evidence=reason)


def _row(c: Claim, **values) -> dict:
    row = {col: None for col in CLAIM_COLUMNS}
    row.update(
        paper=c.paper,
        figure=c.figure,
        claim=c.claim,
        scope=c.scope,
        kind=c.kind,
        data_role=c.data_role,
        evidence=c.evidence,
    )
    row.update(values)
    return row


def claim_row(c: Claim) -> dict:
    """Combine a claim's points into one row with a provisional verdict (``finalize`` applies the
    figure's Holm correction). Intersection–union: the claim holds only if every point holds."""
    pts = list(c.points)
    if not pts:
        return _row(c, test="—", verdict="not testable", evidence=c.evidence or "no results in the claim's scope")
    tests = "; ".join(dict.fromkeys(p.test for p in pts))
    refuted = [p for p in pts if p.exact and p.refutes]
    tested = [p for p in pts if not p.exact]
    adj = holm([p.p_value for p in tested]) if tested else np.array([])
    adj_of = {id(p): a for p, a in zip(tested, adj)}
    against = [p for p in tested if not p.favours and np.isfinite(adj_of[id(p)]) and adj_of[id(p)] < ALPHA]
    # the decisive point: a refutation, else the point most against the claim (largest adjusted p
    # among the points in favour, or any point not in favour)
    if tested:
        worst = max(tested, key=lambda p: (not p.favours, np.nan_to_num(adj_of[id(p)], nan=1.0)))
        if against:
            worst = min(against, key=lambda p: adj_of[id(p)])
    else:
        worst = refuted[0] if refuted else pts[0]
    shown = refuted[0] if refuted else worst
    details = "; ".join(_point_text(p, adj_of.get(id(p))) for p in pts[:12])
    if len(pts) > 12:
        details += f"; … {len(pts) - 12} more points"
    n_reps = int(max((p.n for p in tested), default=0)) or None
    if refuted:
        candidate, p_claim = "does not hold", None
        lead = (
            "refuted by exact computation at "
            + ", ".join(p.label for p in refuted[:8])
            + (f" (+{len(refuted) - 8})" if len(refuted) > 8 else "")
        )
    elif against:
        candidate, p_claim = "does not hold", float(adj_of[id(worst)])
        lead = "significantly against the claim at " + ", ".join(p.label for p in against[:8])
    elif (
        tested
        and all(p.favours for p in tested)
        and all(np.isfinite(adj_of[id(p)]) and adj_of[id(p)] < ALPHA for p in tested)
    ):
        candidate, p_claim = "holds", float(np.max(adj))
        lead = f"every point ({len(tested)}) significantly in the claim's favour"
    elif not tested:
        candidate, p_claim = "holds", None
        lead = "exact computation agrees at every point"
    else:
        candidate, p_claim = "inconclusive", float(np.nanmax(adj)) if np.isfinite(adj).any() else None
        undecided = [p.label for p in tested if not (p.favours and adj_of[id(p)] < ALPHA)]
        lead = (
            "not decided at " + ", ".join(undecided[:8]) + (f" (+{len(undecided) - 8})" if len(undecided) > 8 else "")
        )
    mde, needed = None, None
    if tested:
        mde = worst.mde
        delta = worst.theory if np.isfinite(worst.theory) else c.theory_effect
        if delta is None and np.isfinite(worst.effect):
            delta = _test_scale(worst)
        needed = reps_needed(worst.sd, delta) if delta is not None else math.inf
    evidence = lead + ". " + details + ("" if not c.evidence else ". " + c.evidence)
    if tested and np.isfinite(worst.theory):
        evidence += (
            f". The closed forms predict an effect of {_fmt(_from_test_scale(worst, worst.theory))} at {worst.label}"
        )
    return _row(
        c,
        test=tests,
        effect=shown.effect,
        ci_low=shown.ci_low,
        ci_high=shown.ci_high,
        p_value=p_claim,
        n_reps=n_reps,
        mde=mde,
        reps_needed=None if needed is None or not np.isfinite(needed) else float(needed),
        verdict=candidate,
        evidence=evidence,
    )


def _test_scale(pt: Point) -> float:
    """The point's effect on its test scale (log-ratio for ratios)."""
    if pt.null == 1.0 and pt.effect > 0:
        return math.log(pt.effect)
    return pt.effect - pt.null


def _from_test_scale(pt: Point, value: float) -> float:
    return math.exp(value) if pt.null == 1.0 else value + pt.null


def finalize(rows: Iterable[dict]) -> pd.DataFrame:
    """Holm across the claims of one figure, then the final verdicts; returns the claims table.

    A provisional 'holds' or 'does not hold' that rests on a p-value becomes 'inconclusive' when
    the figure-level Holm-adjusted p is ≥ α; exact verdicts are unaffected. Inconclusive rows get
    the MDE and the repetitions needed in their evidence."""
    df = pd.DataFrame(list(rows), columns=CLAIM_COLUMNS)
    df["p_holm"] = holm(df["p_value"].astype(float).to_numpy())
    for i, r in df.iterrows():
        if r["verdict"] in ("holds", "does not hold") and pd.notna(r["p_value"]) and not r["p_holm"] < ALPHA:
            df.at[i, "verdict"] = "inconclusive"
            df.at[i, "evidence"] = (
                f"not significant after Holm across the figure's claims (p_holm = {r['p_holm']:.3g}). " + r["evidence"]
            )
        if df.at[i, "verdict"] == "inconclusive":
            mde, need = r["mde"], r["reps_needed"]
            n_txt = "—" if pd.isna(r["n_reps"]) else str(int(r["n_reps"]))
            df.at[i, "evidence"] += f". Minimal detectable effect at n = {n_txt}: {_fmt(mde)}; " + (
                f"about {int(need)} repetitions would detect the effect tested "
                "(the closed forms' prediction where one is stated, else the observed one)"
                if pd.notna(need)
                else "no finite number of repetitions would detect a zero effect"
            )
    return validate_claims(df)


def validate_claims(df: pd.DataFrame) -> pd.DataFrame:
    """Check the claims-table contract: columns, verdict vocabulary, data roles."""
    missing = [c for c in CLAIM_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"claims table lacks the columns {missing}")
    bad = sorted(set(df["verdict"]) - set(VERDICTS))
    if bad:
        raise ValueError(f"unknown verdicts {bad}; use one of {VERDICTS}")
    roles = sorted(set(df["data_role"]) - set(DATA_ROLES))
    if roles:
        raise ValueError(f"unknown data roles {roles}; use one of {DATA_ROLES}")
    df = df[CLAIM_COLUMNS].copy()
    for col in ("effect", "ci_low", "ci_high", "p_value", "p_holm", "mde", "reps_needed"):
        df[col] = pd.to_numeric(df[col], errors="coerce").astype("float64")
    df["n_reps"] = pd.to_numeric(df["n_reps"], errors="coerce").astype("Int64")
    return df.reset_index(drop=True)


def judge(claims: Iterable[Claim | dict]) -> pd.DataFrame:
    """Rows for claims (Claim objects or ready rows, e.g. ``not_testable``) with figure-level Holm."""
    return finalize(claim_row(c) if isinstance(c, Claim) else c for c in claims)
