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
``equivalence_point``, ``exact_point``, ``tie_point``). A claim is a list of points plus its words,
scope, kind and data role; ``claim_row`` combines them, ``finalize`` applies the figure-level Holm
correction and fixes the verdicts. Tests on constructed cases: tests/test_verdicts.py.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

ALPHA = 0.05
POWER = 0.80
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
#: Above this many pairs the Hodges–Lehmann interval (O(n²) Walsh averages) is replaced by the
#: t interval, which the central limit theorem makes accurate at that size.
_HL_MAX_N = 2000


@dataclass(frozen=True)
class Point:
    """One test at one scope point.

    ``effect`` and its CI are on the reported scale: a ratio A/B (geometric mean) for log-scale
    comparisons, a difference A − B otherwise, a slope for trends. ``favours`` says whether the
    estimate points the claim's way. ``p_value`` is two-sided (one-sided for equivalence), None for
    exact points. ``sd`` is the standard deviation of the per-repetition quantity on the test scale
    (differences or log-ratios), used for power; ``null`` is the reported-scale value of no effect.
    """

    label: str
    test: str
    effect: float
    ci_low: float
    ci_high: float
    p_value: float | None
    favours: bool
    n: int
    sd: float = math.nan
    mde: float = math.nan
    null: float = 0.0
    exact: bool = False
    refutes: bool = False  # exact computation contradicts the claim here
    note: str = ""
    theory: float = math.nan  # the effect the closed forms predict here (test scale), for power

    @property
    def significant(self) -> bool:
        return self.p_value is not None and np.isfinite(self.p_value) and self.p_value < ALPHA


# --------------------------------------------------------------------------------------------
# Points
# --------------------------------------------------------------------------------------------
def _z(q: float) -> float:
    return float(stats.norm.ppf(q))


def _mde_test_scale(sd: float, n: int, alpha: float = ALPHA, power: float = POWER) -> float:
    """Smallest true mean difference a two-sided level-α test detects with the given power."""
    if n < 2 or not np.isfinite(sd):
        return math.inf
    return (_z(1 - alpha / 2) + _z(power)) * sd / math.sqrt(n)


def reps_needed(sd: float, delta: float, alpha: float = ALPHA, power: float = POWER) -> float:
    """n ≈ ((z₁₋α/₂ + z₁₋β)·σ_d / δ)², the repetitions that detect a true effect δ (test scale)."""
    if not np.isfinite(sd) or not np.isfinite(delta) or delta == 0:
        return math.inf
    if sd == 0:
        return 2.0
    return float(math.ceil(((_z(1 - alpha / 2) + _z(power)) * sd / abs(delta)) ** 2))


def _hodges_lehmann(d: np.ndarray, alpha: float) -> tuple[float, float, float]:
    """Hodges–Lehmann estimate (median of the Walsh averages) and its distribution-free
    (1 − α) interval from the normal approximation of the signed-rank statistic."""
    n = d.size
    i, j = np.triu_indices(n)
    w = np.sort((d[i] + d[j]) / 2.0)
    big_n = w.size
    k = int(math.floor(n * (n + 1) / 4 - _z(1 - alpha / 2) * math.sqrt(n * (n + 1) * (2 * n + 1) / 24)))
    k = min(max(k, 0), big_n - 1)
    return float(np.median(w)), float(w[k]), float(w[big_n - 1 - k])


def _location_test(d: np.ndarray, alpha: float = ALPHA) -> tuple[str, float, float, float, float]:
    """(test name, estimate, ci_low, ci_high, two-sided p) for H0: location of ``d`` is 0."""
    n = d.size
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    if sd == 0.0:  # every difference equal: exact
        return "paired t", mean, mean, mean, (1.0 if mean == 0.0 else 0.0)
    normal = n < 3 or n > 5000 or stats.shapiro(d).pvalue >= 0.05
    if normal or n > _HL_MAX_N:
        half = float(stats.t.ppf(1 - alpha / 2, n - 1)) * sd / math.sqrt(n)
        p = float(stats.ttest_1samp(d, 0.0).pvalue)
        name = "paired t" if normal else "paired t (CLT, n > 2000)"
        return name, mean, mean - half, mean + half, p
    if np.all(d == 0):
        return "Wilcoxon signed-rank", 0.0, 0.0, 0.0, 1.0
    p = float(stats.wilcoxon(d, zero_method="zsplit").pvalue)
    est, lo, hi = _hodges_lehmann(d, alpha)
    return "Wilcoxon signed-rank", est, lo, hi, p


def paired_point(a, b, label: str, *, log: bool = True, claim_a_lower: bool = True, alpha: float = ALPHA) -> Point:
    """Paired comparison of per-repetition metrics ``a`` and ``b`` (same repetition index ⇒ same
    users, same split). ``log``: test the log-ratios and report the ratio A/B (for errors spanning
    decades); else the differences A − B. ``claim_a_lower``: the claim says A's metric is lower."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"{label}: paired samples must be 1-D and of equal length, got {a.shape} and {b.shape}")
    ok = np.isfinite(a) & np.isfinite(b)
    if log:
        ok &= (a > 0) & (b > 0)
    a, b = a[ok], b[ok]
    n = a.size
    if n < 2:
        return Point(
            label,
            "paired test (too few repetitions)",
            math.nan,
            math.nan,
            math.nan,
            math.nan,
            False,
            n,
            null=1.0 if log else 0.0,
        )
    d = np.log(a) - np.log(b) if log else a - b
    name, est, lo, hi, p = _location_test(d, alpha)
    sd = float(d.std(ddof=1))
    mde = _mde_test_scale(sd, n, alpha)
    favours = est < 0 if claim_a_lower else est > 0
    if log:
        name += " on log-ratios"
        return Point(label, name, math.exp(est), math.exp(lo), math.exp(hi), p, favours, n, sd, math.exp(mde), null=1.0)
    return Point(label, name + " on differences", est, lo, hi, p, favours, n, sd, mde, null=0.0)


def ratio_of_means_point(a, b, label: str, *, claim_a_lower: bool = True, alpha: float = ALPHA) -> Point:
    """Paired test of the ratio of the mean metrics, mean(A)/mean(B): the quantity a figure plots
    (an MSE or MAE is an arithmetic mean over repetitions). Delta method on the paired
    repetitions: log ā − log b̄ has influence values a_i/ā − b_i/b̄, whose sample variance / n is
    its variance; t interval and test with n − 1 degrees of freedom. Unlike the geometric mean of
    per-repetition ratios, this cannot favour a method whose per-repetition errors are more
    dispersed but larger on average."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"{label}: paired samples must be 1-D and of equal length, got {a.shape} and {b.shape}")
    ok = np.isfinite(a) & np.isfinite(b)
    a, b = a[ok], b[ok]
    n = a.size
    if n < 2 or a.mean() <= 0 or b.mean() <= 0:
        return Point(
            label, "ratio of means (too few repetitions)", math.nan, math.nan, math.nan, math.nan, False, n, null=1.0
        )
    est = math.log(a.mean()) - math.log(b.mean())
    infl = a / a.mean() - b / b.mean()
    sd = float(infl.std(ddof=1))
    se = sd / math.sqrt(n)
    if se == 0:
        p = 1.0 if est == 0 else 0.0
        lo = hi = est
    else:
        tq = float(stats.t.ppf(1 - alpha / 2, n - 1))
        p = float(2 * stats.t.sf(abs(est) / se, n - 1))
        lo, hi = est - tq * se, est + tq * se
    favours = est < 0 if claim_a_lower else est > 0
    return Point(
        label,
        "ratio of means, paired delta-method t",
        math.exp(est),
        math.exp(lo),
        math.exp(hi),
        p,
        favours,
        n,
        sd,
        math.exp(_mde_test_scale(sd, n, alpha)),
        null=1.0,
    )


def equivalence_point(
    a, b, label: str, margin: float, *, log: bool = True, means: bool = False, alpha: float = ALPHA
) -> Point:
    """TOST: is the paired effect within ±``margin`` (a ratio within [1/margin, margin] when
    ``log``)? When equivalence is shown, ``p_value`` is the larger one-sided p and ``favours`` is
    True; when the effect is significantly outside the margin, ``p_value`` is that one-sided
    non-equivalence test's p and ``favours`` False (the claim does not hold); otherwise TOST's p
    with ``favours`` False (inconclusive)."""
    a, b = np.asarray(a, dtype=float), np.broadcast_to(np.asarray(b, dtype=float), np.shape(a))
    ok = np.isfinite(a) & np.isfinite(b) & ((a > 0) & (b > 0) if log else True)
    a, b = a[ok], b[ok]
    m = math.log(margin) if log else float(margin)
    if a.size < 2:
        return Point(label, "TOST (too few repetitions)", math.nan, math.nan, math.nan, math.nan, False, a.size)
    if log and means:  # ratio of the means, paired delta method (see ratio_of_means_point)
        d = a / a.mean() - b / b.mean()
        mean, sd = math.log(a.mean()) - math.log(b.mean()), float(d.std(ddof=1))
    else:
        d = (np.log(a) - np.log(b)) if log else (a - b)
        mean, sd = float(d.mean()), float(d.std(ddof=1))
    n = d.size
    se = sd / math.sqrt(n)
    if se == 0:
        inside = abs(mean) < m
        p_eq, p_out = (0.0, 1.0) if inside else (1.0, 0.0)
    else:
        p_eq = float(max(stats.t.sf((mean + m) / se, n - 1), stats.t.cdf((mean - m) / se, n - 1)))
        p_out = float(stats.t.sf((abs(mean) - m) / se, n - 1))  # H0: |effect| ≤ m
    half = float(stats.t.ppf(1 - alpha, n - 1)) * se
    lo, hi = mean - half, mean + half
    conv = math.exp if log else (lambda v: v)
    on = "the ratio of means" if log and means else ("log-ratios" if log else "differences")
    test = f"TOST (margin {'×' if log else '±'}{margin:g}) on {on}"
    # equivalent: TOST's p in favour; else, when the effect is significantly outside the margin, the
    # non-equivalence p against the claim (so the engine can say "does not hold"); else TOST's p
    equivalent = p_eq < alpha
    p_report = p_eq if equivalent or p_out >= alpha else p_out
    return Point(
        label,
        test,
        conv(mean),
        conv(lo),
        conv(hi),
        p_report,
        bool(equivalent),
        n,
        sd,
        conv(_mde_test_scale(sd, n, alpha)),
        null=1.0 if log else 0.0,
        note=f"non-equivalence p = {p_out:.3g}" + (" (significant)" if p_out < alpha else ""),
    )


def proportion_equivalence_point(
    successes: int, n: int, p_exact: float, label: str, margin: float, alpha: float = ALPHA
) -> Point:
    """TOST on a binomial proportion against its exact value: is p̂/p within [1/margin, margin]?
    Normal approximation on the log scale (se of log p̂ ≈ √((1 − p)/(n·p)))."""
    if n <= 0 or not 0 < p_exact < 1:
        raise ValueError(f"{label}: need n > 0 and 0 < p_exact < 1, got n={n}, p={p_exact}")
    est = math.log(max(successes, 0.5) / n) - math.log(p_exact)
    se = math.sqrt((1 - p_exact) / (n * p_exact))
    m = math.log(margin)
    p_eq = float(max(stats.norm.sf((est + m) / se), stats.norm.cdf((est - m) / se)))
    half = _z(1 - alpha) * se
    return Point(
        label,
        f"TOST on a proportion (margin ×{margin:g})",
        math.exp(est),
        math.exp(est - half),
        math.exp(est + half),
        p_eq,
        bool(p_eq < alpha),
        int(n),
        se * math.sqrt(n),
        math.exp(_mde_test_scale(se * math.sqrt(n), int(n), alpha)),
        null=1.0,
    )


def trend_point(
    table: pd.DataFrame,
    label: str,
    *,
    decreasing: bool = True,
    log: bool = True,
    log_x: bool = False,
    alpha: float = ALPHA,
) -> Point:
    """Trend of a metric in a parameter: ``table`` has one row per repetition and one column per
    parameter value. Regression of the (log) metric on the parameter with the repetition as a
    blocking factor (values demeaned within each repetition); effect = slope with its t interval,
    reported per unit of the parameter (of log parameter if ``log_x``), on the log scale if ``log``."""
    t = table.dropna(how="any")
    x_vals = np.asarray(t.columns, dtype=float)
    y = t.to_numpy(dtype=float)
    if log:
        if (y <= 0).any():
            raise ValueError(f"{label}: log-scale trend needs positive metrics")
        y = np.log(y)
    x = np.log(x_vals) if log_x else x_vals
    r, k = y.shape
    if r < 2 or k < 2:
        return Point(
            label, "blocked regression slope (too few repetitions)", math.nan, math.nan, math.nan, math.nan, False, r
        )
    yc = y - y.mean(axis=1, keepdims=True)
    xc = np.broadcast_to(x - x.mean(), y.shape)
    sxx = float((xc**2).sum())
    slope = float((xc * yc).sum() / sxx)
    resid = yc - slope * xc
    df = r * k - r - 1
    s2 = float((resid**2).sum() / df)
    se = math.sqrt(s2 / sxx)
    tq = float(stats.t.ppf(1 - alpha / 2, df))
    p = float(2 * stats.t.sf(abs(slope) / se, df)) if se > 0 else (0.0 if slope != 0 else 1.0)
    mde = (tq + _z(POWER)) * se
    scale = ("log " if log else "") + "metric per unit " + ("log " if log_x else "") + "parameter"
    favours = slope < 0 if decreasing else slope > 0
    # sd of one repetition's slope-equivalent, for the power formula: se·√r
    return Point(
        label,
        f"blocked regression slope ({scale})",
        slope,
        slope - tq * se,
        slope + tq * se,
        p,
        favours,
        r,
        se * math.sqrt(r),
        mde,
        null=0.0,
    )


def exact_point(
    label: str, holds: bool, effect: float = math.nan, test: str = "exact computation", note: str = ""
) -> Point:
    """A point decided by exact computation (closed forms, exact pmf/pdf): no p-value."""
    return Point(label, test, effect, effect, effect, None, bool(holds), 0, exact=True, refutes=not holds, note=note)


def tie_point(label: str, note: str) -> Point:
    """Two mechanisms with the same output law at this point: an exact tie, which refutes any
    strict-win claim."""
    return Point(
        label,
        "identical output laws (exact)",
        1.0,
        1.0,
        1.0,
        None,
        False,
        0,
        exact=True,
        refutes=True,
        note=note,
        null=1.0,
    )


# --------------------------------------------------------------------------------------------
# Claims
# --------------------------------------------------------------------------------------------
def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm–Bonferroni step-down adjusted p-values (NaN stays NaN)."""
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    if ok.size == 0:
        return out
    order = ok[np.argsort(p[ok], kind="mergesort")]
    m = ok.size
    running = 0.0
    for rank, idx in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[idx]))
        out[idx] = running
    return out


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
