"""The claim engine: how a paper's claim gets a verdict.

Every claim is decided by a declared statistical test on per-repetition results (or by exact
computation), following the project's statistical standard (docs/verdicts-standard.md in the repository):

- vocabulary: exactly ``holds``, ``does not hold``, ``inconclusive``, ``not testable``;
- comparisons are paired on the repetition index (common random numbers): the test works on
  per-repetition differences (rates), or on the ratio of the mean errors (MSE, MAE: the plotted
  quantity) with the paired t test of equal means and Fieller's interval;
- a paired t-test when the differences look normal (Shapiro–Wilk p ≥ 0.05), else the Wilcoxon
  signed-rank test with the Hodges–Lehmann estimate and its distribution-free interval;
- each claim is its own family (docs/verdicts-standard.md, "Decision rule"): a claim made over
  several scope points (ε values, datasets, baselines) holds iff every point favours it with raw
  p < α (intersection–union); it does not hold iff a point is significantly against it after Holm
  across the claim's points, or exact computation refutes it anywhere (e.g. two mechanisms with
  the same output law can never make a strict win "hold"); adding a claim changes no other verdict;
- an inconclusive verdict reports the minimal detectable effect (MDE) at the repetitions run and
  the repetitions at which every point would be significant at once with 80 % power.

The building blocks are *points*: one test at one scope point (``paired_point``, ``trend_point``,
``equivalence_point``, ``exact_point``, ``tie_point``; defined in ``ldprepro.claims.stats`` and
importable from here). A claim is a list of points plus its words, scope, kind and data role;
``claim_row`` combines them into a row, ``claim_points`` lists its per-point evidence, ``judge``
builds a figure's table. Tests on constructed cases: tests/test_verdicts.py.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ldprepro.claims.multiplicity import holm
from ldprepro.claims.power import ALPHA, POWER, joint_reps_needed, reps_needed
from ldprepro.claims.readings import (
    FAIR_MARGIN_RATE,
    FAIR_MARGIN_RATIO,
    _fmt,
    _holm_within,
    _labels,
    _test_scale,
    decision,
    fair_robustness,
)
from ldprepro.claims.stats import (
    Point,
    equivalence_point,
    exact_point,
    paired_point,
    proportion_equivalence_point,
    ratio_of_means_point,
    tie_point,
    trend_point,
)

__all__ = [
    "ALPHA",
    "CLAIM_COLUMNS",
    "CLAIM_POINT_COLUMNS",
    "DATA_ROLES",
    "FAIR_MARGIN_RATE",
    "FAIR_MARGIN_RATIO",
    "KINDS",
    "POWER",
    "STATEMENTS",
    "VERDICTS",
    "Claim",
    "Point",
    "claim_points",
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
    "claim_id",
    "paper",
    "figure",
    "claim",
    "scope",
    "kind",
    "test",
    "effect",
    "ci_low",
    "ci_high",
    "ci_level",
    "p_value",
    "p_holm",
    "p_sides",
    "n_reps",
    "n_points",
    "n_favour",
    "mde",
    "reps_needed",
    "data_role",
    "verdict",
    "robustness",
    "evidence",
    "verdict_strict",
    "statement",
    "finding",
    "counted",
    "reconstructed",
    "panels",
]
STATEMENTS = ("experimental", "theorem")

#: The columns of ``claim_points.parquet`` (``claim_points``).
CLAIM_POINT_COLUMNS = [
    "claim_id",
    "claim",
    "data_role",
    "point",
    "test",
    "n",
    "effect",
    "effect_scale",
    "ci_low",
    "ci_high",
    "ci_level",
    "p_value",
    "p_sides",
    "p_holm",
    "favours",
    "exact",
    "note",
]


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
    robustness: str = ""  # "robust", "depends on: …" under the declared alternative readings ("" if none)
    statement: str = "experimental"  # "theorem": a theorem/lemma/algorithm statement, decided exactly
    finding: str = ""  # a theorem row's finding ("bshp: Theorem 7"), the same in every figure citing it
    counted: bool = True  # counts in the headline (not: a finding's repeat, a reconstructed claim, a split)
    reconstructed: bool = False  # rebuilt by us from a truncated sentence of the paper
    panels: str = ""  # "1 of 4 panels" when decided on fewer panels than the paper shows

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"claim {self.claim!r}: kind must be one of {KINDS}, got {self.kind!r}")
        if self.data_role not in DATA_ROLES:
            raise ValueError(f"claim {self.claim!r}: data_role must be one of {DATA_ROLES}, got {self.data_role!r}")
        if self.statement not in STATEMENTS:
            raise ValueError(f"claim {self.claim!r}: statement must be one of {STATEMENTS}, got {self.statement!r}")


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
        robustness=c.robustness or "—",
        statement=c.statement,
        finding=c.finding,
        counted=bool(c.counted and not c.reconstructed),
        reconstructed=bool(c.reconstructed),
        panels=c.panels,
    )
    row.update(values)
    if row.get("verdict_strict") is None:
        row["verdict_strict"] = row["verdict"]
    return row


def _power_text(c: Claim, tested: list[Point], n_run: int) -> tuple[str, float | None]:
    """What more repetitions would do for an inconclusive claim: the repetitions at which every point
    is significant in the claim's favour with 80 % power (``joint_reps_needed``: equivalence power for
    TOST points, the claim's every point at once), at the closed forms' predicted effect where one is
    stated, else the observed one. None — no repetitions figure — when an observed effect is against
    the claim (or outside its margin), or when the predicted effect is: more repetitions would then
    make the claim not hold (docs/verdicts-standard.md, "Design rules")."""
    specs, contrary, predicted_against, predicted = [], [], [], False
    for p in tested:
        d_obs = _test_scale(p)
        if np.isfinite(p.margin):  # TOST: the observed effect against its margin
            if not np.isfinite(d_obs) or abs(d_obs) >= p.margin:
                contrary.append(p)
            specs.append((p.sd, d_obs, p.margin))
            continue
        if not p.favours or not np.isfinite(d_obs) or d_obs == 0:
            contrary.append(p)
            continue
        theory = p.theory if np.isfinite(p.theory) else c.theory_effect
        if theory is None:
            specs.append((p.sd, d_obs, math.nan))
            continue
        predicted = True
        if np.sign(theory) != np.sign(d_obs):  # the claim's direction is the favouring estimate's
            predicted_against.append(p)
        specs.append((p.sd, float(theory), math.nan))
    if contrary:
        return (
            f"the observed effect at {_labels(contrary, 3)} is against the claim (or outside its margin): "
            "more repetitions would not make it hold",
            None,
        )
    if predicted_against:
        return (
            f"the closed forms' predicted effect at {_labels(predicted_against, 3)} is against the claim: "
            "more repetitions would make it not hold",
            None,
        )
    need = joint_reps_needed(specs)
    basis = "the closed forms' predicted effects" if predicted else "the observed effects"
    if not np.isfinite(need):
        return f"at {basis} no number of repetitions up to 1,000,000 gives 80 % power", None
    if need <= n_run:
        return f"at {basis}, {n_run} repetitions already give every point 80 % power jointly", need
    return (
        f"about {int(need):,} repetitions would make every point ({len(specs)}) significant at once with 80 % "
        f"power, at {basis}",
        need,
    )


def claim_row(c: Claim) -> dict:
    """Combine a claim's points into its row. The decision rule (docs/verdicts-standard.md, written
    before the data); each claim is its own family:

    - **holds** iff every tested point favours the claim with raw p < α (the intersection–union
      test, level α without a multiplicity correction) and no exact point refutes it — or every point
      is exact and agrees;
    - **does not hold** iff exact computation refutes the claim at some point, or some point is
      significantly against it after Holm across the claim's points;
    - **inconclusive** otherwise, with the minimal detectable effect and the repetitions that would
      decide it (``_power_text``).

    Two readings (``readings.decision``): ``verdict_strict`` applies the rule to every point as it is (the
    literal reading); ``verdict``, the headline, is the fair reading, in which exact ties and
    differences against the claim within the practical margin are neutral (``readings.neutral_reason``) and a
    claim whose every point is neutral does not hold. The row's effect, CI and p are the fair
    reading's decisive point: the most contrary point of a claim that does not hold (the largest
    exact difference against it, or the most significant one), else the weakest one; ``p_holm`` is
    its Holm-adjusted p within the claim. Per-point evidence: ``claim_points``."""
    pts = list(c.points)
    if not pts:
        return _row(c, test="—", verdict="not testable", evidence=c.evidence or "no results in the claim's scope")
    tests = "; ".join(dict.fromkeys(p.test for p in pts))
    fair, strict = decision(pts, True), decision(pts, False)
    tested, adj_of, shown = fair.tested, fair.adj_of, fair.shown
    verdict = fair.verdict
    n_reps = int(max((p.n for p in tested), default=0)) or None
    evidence = fair.lead + ("" if not c.evidence else ". " + c.evidence)
    if strict.verdict != verdict:
        evidence += f". Literal reading (verdict_strict): {strict.verdict}: {strict.lead}"
    needed = None
    if verdict == "inconclusive":
        power, needed = _power_text(c, tested, n_reps or 0)
        evidence += f". Minimal detectable effect at n = {n_reps}: {_fmt(shown.mde)}; {power}"
    rules = fair_robustness(pts, verdict, strict.verdict)
    robust = c.robustness or ""
    robust = rules if not robust else (robust if not rules else f"{robust}; {rules}")
    exact_shown = shown.exact
    return _row(
        c,
        test=tests,
        effect=shown.effect,
        ci_low=shown.ci_low,
        ci_high=shown.ci_high,
        ci_level=None if exact_shown else shown.ci_level,
        p_value=None if exact_shown else shown.p_value,
        p_holm=None if exact_shown else float(adj_of[id(shown)]),
        p_sides=None if exact_shown else shown.sides,
        n_reps=n_reps,
        n_points=len(pts),
        n_favour=fair.favouring,
        mde=None if not tested else shown.mde,
        reps_needed=needed if needed is not None and needed > (n_reps or 0) else None,
        verdict=verdict,
        verdict_strict=strict.verdict,
        robustness=robust or "—",
        evidence=evidence,
    )


def point_side(p: Point, p_holm: float) -> str:
    """The side a point takes in its claim's verdict (``claim_points``' ``favours``): "claim" when it
    counts for the claim (exact agreement, or in its favour with raw p < α, as the
    intersection–union rule counts it), "against" when it counts against it (exact refutation, or
    against it with Holm-adjusted p < α, as "does not hold" counts it), else "none": an undecided
    point — e.g. a TOST point whose estimate lies inside the margin without significance — is never
    "against", whichever way its estimate leans."""
    if p.exact:
        return "against" if p.refutes else "claim"
    if p.favours and p.significant:
        return "claim"
    if not p.favours and np.isfinite(p_holm) and p_holm < ALPHA:
        return "against"
    return "none"


def claim_points(c: Claim, claim_id: int) -> list[dict]:
    """The per-point evidence of one claim (rows of ``claim_points.parquet``): the point, its test,
    n, effect with its scale, CI with its level, raw p with its sidedness, Holm p within the claim,
    the side it takes (``point_side``), and its exact/tie note."""
    tested = [p for p in c.points if not p.exact]
    adj_of = _holm_within(tested)
    rows = []
    for p in c.points:
        side = point_side(p, adj_of.get(id(p), math.nan))
        rows.append(
            {
                "claim_id": claim_id,
                "claim": c.claim,
                "data_role": c.data_role,
                "point": p.label,
                "test": p.test,
                "n": int(p.n),
                "effect": float(p.effect),
                "effect_scale": p.scale or ("exact value" if p.exact else ""),
                "ci_low": float(p.ci_low),
                "ci_high": float(p.ci_high),
                "ci_level": math.nan if p.exact else float(p.ci_level),
                "p_value": math.nan if p.p_value is None else float(p.p_value),
                "p_sides": 0 if p.exact else int(p.sides),
                "p_holm": float(adj_of.get(id(p), math.nan)),
                "favours": side,
                "exact": bool(p.exact),
                "note": p.note,
            }
        )
    return rows


def finalize(rows: Iterable[dict]) -> pd.DataFrame:
    """The claims table from claim rows (no correction across claims: each claim is its own
    family; a Benjamini–Hochberg q across the whole table is a secondary column of the verdict
    pages, ``claims.tables``, and never changes a verdict)."""
    df = pd.DataFrame(list(rows), columns=CLAIM_COLUMNS)
    df["claim_id"] = np.arange(1, len(df) + 1)
    return validate_claims(df)


def validate_claims(df: pd.DataFrame) -> pd.DataFrame:
    """Check the claims-table contract: columns, verdict vocabulary, data roles."""
    missing = [c for c in CLAIM_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"claims table lacks the columns {missing}")
    bad = sorted((set(df["verdict"]) | set(df["verdict_strict"].fillna(df["verdict"]))) - set(VERDICTS))
    if bad:
        raise ValueError(f"unknown verdicts {bad}; use one of {VERDICTS}")
    statements = sorted(set(df["statement"].fillna("experimental")) - set(STATEMENTS))
    if statements:
        raise ValueError(f"unknown statements {statements}; use one of {STATEMENTS}")
    roles = sorted(set(df["data_role"]) - set(DATA_ROLES))
    if roles:
        raise ValueError(f"unknown data roles {roles}; use one of {DATA_ROLES}")
    df = df[CLAIM_COLUMNS].copy()
    df["robustness"] = df["robustness"].fillna("—").astype(str)
    df["verdict_strict"] = df["verdict_strict"].fillna(df["verdict"]).astype(str)
    df["statement"] = df["statement"].fillna("experimental").astype(str)
    for col in ("finding", "panels"):
        df[col] = df[col].fillna("").astype(str)
    df["reconstructed"] = df["reconstructed"].astype("boolean").fillna(False).astype(bool)
    df["counted"] = df["counted"].astype("boolean").fillna(True).astype(bool) & ~df["reconstructed"]
    for col in ("effect", "ci_low", "ci_high", "ci_level", "p_value", "p_holm", "mde", "reps_needed"):
        df[col] = pd.to_numeric(df[col], errors="coerce").astype("float64")
    for col in ("claim_id", "n_reps", "p_sides", "n_points", "n_favour"):
        df[col] = pd.to_numeric(df[col], errors="coerce").astype("Int64")
    return df.reset_index(drop=True)


class ClaimPoints(tuple):
    """A claims table's per-point evidence (``table.attrs["points"]``: ``claim_points`` rows), read-only
    once judged. pandas deep-copies a frame's ``attrs`` into every frame derived from it (each row an
    iteration yields, each selection); a figure's thousands of points made that seconds per figure.
    Being read-only, the evidence is shared instead (``copy.deepcopy`` returns it as it is)."""

    def __deepcopy__(self, memo):
        return self


def judge(claims: Iterable[Claim | dict]) -> pd.DataFrame:
    """The claims table for claims (Claim objects or ready rows, e.g. ``not_testable``), in order;
    its per-point evidence (``claim_points`` rows, keyed by ``claim_id``) is in
    ``table.attrs["points"]`` for ``claims.tables.write_claims``."""
    rows, points = [], []
    for i, c in enumerate(claims, 1):
        if isinstance(c, Claim):
            rows.append(claim_row(c))
            points += claim_points(c, i)
        else:
            rows.append(c)
    table = finalize(rows)
    table.attrs["points"] = ClaimPoints(points)
    return table
