"""The statistical point tests of the claim engine (``ldprepro.claims.verdicts``), following the
project's statistical standard (docs/verdicts-standard.md in the repository).

A *point* is one test at one scope point: a paired comparison on the repetition index
(``paired_point``: a paired t-test when the differences look normal, Shapiro–Wilk p ≥ 0.05, else the
Wilcoxon signed-rank test with the Hodges–Lehmann estimate and its distribution-free interval),
the ratio of the mean errors with the paired t test and Fieller interval (``ratio_of_means_point``), a trend
(``trend_point``), equivalence by TOST (``equivalence_point``, ``proportion_equivalence_point``),
exact computation (``exact_point``) and identical output laws (``tie_point``). The level, power and
sample sizes are in ``claims.power``; Holm's correction and the printing of p-values in
``claims.multiplicity``. Tests on constructed cases: tests/test_verdicts.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ldprepro.claims.multiplicity import format_p
from ldprepro.claims.power import ALPHA, POWER, mde_test_scale, z_quantile
from ldprepro.pipeline.laws import norm_cdf, norm_sf, t_cdf, t_ppf, t_sf

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
    ci_level: float = 1 - ALPHA  # the interval's coverage: 95 %, 90 % for TOST
    sides: int = 2  # the p-value's sidedness: 2, or 1 for TOST and other one-sided tests
    margin: float = math.nan  # TOST: the equivalence margin on the test scale (log-ratio or difference)
    scale: str = ""  # what ``effect`` measures, e.g. "ratio of mean MSE A/B" (the evidence names it)
    tie: bool = False  # an exact tie (identical output laws, equal expectations): neutral in the fair reading
    fair_margin: float = math.nan  # the fair reading's practical margin on the test scale (verdicts.py)

    @property
    def significant(self) -> bool:
        return self.p_value is not None and np.isfinite(self.p_value) and self.p_value < ALPHA


# --------------------------------------------------------------------------------------------
# Points
# --------------------------------------------------------------------------------------------
def cv_inflation(n: int, folds: int | None) -> float:
    """The factor on the naive variance of a mean over ``n`` = folds × CV-repetitions fits that the
    corrected resampled t (Nadeau & Bengio 2003, Mach. Learn. 52:239–281, eq. for the corrected
    repeated k-fold test; Bouckaert & Frank 2004) applies: Var(d̄) ≈ (1/n + n_test/n_train)·σ² with
    n_test/n_train = 1/(folds − 1), i.e. (1 + n/(folds − 1))·σ²/n. Folds of one CV repetition share
    their training data, so their differences are correlated; the naive σ²/n is too small. 1 for
    independent repetitions (``folds`` None)."""
    if folds is None:
        return 1.0
    if int(folds) < 2:
        raise ValueError(f"cross-validation needs at least 2 folds, got {folds}")
    return 1.0 + n / (int(folds) - 1)


def _cv_name(n: int, folds: int) -> str:
    return f"corrected resampled t (Nadeau & Bengio 2003: {folds} folds × {n // folds} CV repetitions)"


def _cv_location_test(d: np.ndarray, folds: int, alpha: float) -> tuple[str, float, float, float, float]:
    """(test name, estimate, ci_low, ci_high, two-sided p) of the corrected resampled t on the
    per-fit differences ``d`` (n − 1 df, as Nadeau & Bengio)."""
    n = d.size
    mean = float(d.mean())
    se = float(d.std(ddof=1)) * math.sqrt(cv_inflation(n, folds) / n)
    half = float(t_ppf(1 - alpha / 2, n - 1)) * se
    return _cv_name(n, folds), mean, mean - half, mean + half, _t_p(mean, se, n - 1, "two")


def _hodges_lehmann(d: np.ndarray, alpha: float) -> tuple[float, float, float]:
    """Hodges–Lehmann estimate (median of the Walsh averages) and its distribution-free
    (1 − α) interval from the normal approximation of the signed-rank statistic."""
    n = d.size
    i, j = np.triu_indices(n)
    w = np.sort((d[i] + d[j]) / 2.0)
    big_n = w.size
    k = int(math.floor(n * (n + 1) / 4 - z_quantile(1 - alpha / 2) * math.sqrt(n * (n + 1) * (2 * n + 1) / 24)))
    k = min(max(k, 0), big_n - 1)
    return float(np.median(w)), float(w[k]), float(w[big_n - 1 - k])


def _location_test(d: np.ndarray, alpha: float = ALPHA) -> tuple[str, float, float, float, float]:
    """(test name, estimate, ci_low, ci_high, two-sided p) for H0: location of ``d`` is 0."""
    n = d.size
    from scipy import stats

    mean, sd = float(d.mean()), float(d.std(ddof=1))
    if sd == 0.0:  # every difference equal: exact
        return "paired t", mean, mean, mean, (1.0 if mean == 0.0 else 0.0)
    normal = n < 3 or n > 5000 or stats.shapiro(d).pvalue >= 0.05
    if normal or n > _HL_MAX_N:
        half = float(t_ppf(1 - alpha / 2, n - 1)) * sd / math.sqrt(n)
        p = float(stats.ttest_1samp(d, 0.0).pvalue)
        name = "paired t" if normal else "paired t (CLT, n > 2000)"
        return name, mean, mean - half, mean + half, p
    if np.all(d == 0):
        return "Wilcoxon signed-rank", 0.0, 0.0, 0.0, 1.0
    p = float(stats.wilcoxon(d, zero_method="zsplit").pvalue)
    est, lo, hi = _hodges_lehmann(d, alpha)
    return "Wilcoxon signed-rank", est, lo, hi, p


def paired_point(
    a,
    b,
    label: str,
    *,
    log: bool = True,
    claim_a_lower: bool = True,
    alpha: float = ALPHA,
    cv_folds: int | None = None,
) -> Point:
    """Paired comparison of per-repetition metrics ``a`` and ``b`` (same repetition index ⇒ same
    users, same split). ``log``: test the log-ratios and report the ratio A/B (for errors spanning
    decades); else the differences A − B. ``claim_a_lower``: the claim says A's metric is lower.
    ``cv_folds``: the repetitions are the fits of repeated ``cv_folds``-fold cross-validation, tested
    by the corrected resampled t (``cv_inflation``) instead of the paired t / Wilcoxon."""
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
    name, est, lo, hi, p = _cv_location_test(d, cv_folds, alpha) if cv_folds else _location_test(d, alpha)
    sd = float(d.std(ddof=1)) * math.sqrt(cv_inflation(n, cv_folds))  # the sd per fit that power sees
    mde = mde_test_scale(sd, n, alpha)
    favours = est < 0 if claim_a_lower else est > 0
    if log:
        name += " on log-ratios"
        return Point(
            label,
            name,
            math.exp(est),
            math.exp(lo),
            math.exp(hi),
            p,
            favours,
            n,
            sd,
            math.exp(mde),
            null=1.0,
            scale="geometric-mean ratio A/B",
        )
    return Point(
        label, name + " on differences", est, lo, hi, p, favours, n, sd, mde, null=0.0, scale="difference A − B"
    )


def _ratio_t(a: np.ndarray, b: np.ndarray, r: float, inflation: float = 1.0) -> tuple[float, float]:
    """(mean, standard error) of a_i − r·b_i, zero in expectation iff mean(A)/mean(B) = r
    (``inflation``: the cross-validation design's variance factor, ``cv_inflation``)."""
    d = a - r * b
    return float(d.mean()), float(d.std(ddof=1)) * math.sqrt(inflation) / math.sqrt(d.size)


def _t_p(mean: float, se: float, df: int, side: str) -> float:
    """p of the t statistic mean/se: "two"-sided, "greater" (H1: > 0) or "less" (H1: < 0)."""
    if se == 0:
        return 0.0 if {"two": mean != 0, "greater": mean > 0, "less": mean < 0}[side] else 1.0
    t = mean / se
    if side == "two":
        return float(2 * t_sf(abs(t), df))
    return float(t_sf(t, df) if side == "greater" else t_cdf(t, df))


def _fieller(a: np.ndarray, b: np.ndarray, q: float, inflation: float = 1.0) -> tuple[float, float]:
    """Paired Fieller interval for mean(A)/mean(B): the hull of the r ≥ 0 whose t statistic on
    a_i − r·b_i is within ±q (high = ∞ when mean(B) is not significantly positive)."""
    n = a.size
    am, bm = float(a.mean()), float(b.mean())
    cov = np.cov(a, b, ddof=1)
    g = q * q * inflation / n
    qa, qb, qc = bm * bm - g * cov[1, 1], -2.0 * (am * bm - g * cov[0, 1]), am * am - g * cov[0, 0]
    disc = qb * qb - 4.0 * qa * qc
    if qa != 0 and disc > 0:
        r1, r2 = sorted(((-qb - math.sqrt(disc)) / (2 * qa), (-qb + math.sqrt(disc)) / (2 * qa)))
        if qa > 0:  # bounded: [r1, r2] (the estimate lies inside)
            return max(r1, 0.0), r2
        return (0.0 if r1 > 0 else max(r2, 0.0)), math.inf  # the set r ≤ r1 or r ≥ r2
    return 0.0, math.inf


def _power_sd(a: np.ndarray, b: np.ndarray, est: float) -> float:
    """The sd on the log-ratio scale at which the normal power formula (``claims.power``) gives the
    power of the test actually run, the paired t on a_i − b_i: sd(a − b)·|log(ā/b̄)|/|ā − b̄|, so that
    |log r|/sd is the standardized mean difference. The delta method's sd(a/ā − b/b̄) is its limit as
    the ratio tends to 1; at a ratio of 1/3 it overstated the power (0.81 predicted at n = 27 where
    0.67 was measured, docs/calibration.md)."""
    diff = float(a.mean() - b.mean())
    if diff == 0 or est == 0:
        return float((a / a.mean() - b / b.mean()).std(ddof=1))
    return float((a - b).std(ddof=1)) * abs(est) / abs(diff)


def ratio_of_means_point(
    a, b, label: str, *, claim_a_lower: bool = True, alpha: float = ALPHA, cv_folds: int | None = None
) -> Point:
    """Paired test of the ratio of the mean metrics, mean(A)/mean(B): the quantity a figure plots
    (an MSE or MAE is an arithmetic mean over repetitions). Test of "ratio = 1": the paired t test
    on a_i − b_i; interval: Fieller's, the r whose paired t test on a_i − r·b_i does not reject
    (n − 1 df). It replaces the delta method on log ā − log b̄, whose interval covered 91 % at
    n = 10 for squared errors of a mean (docs/calibration.md); ``sd`` is the test's own on the
    log-ratio scale (``_power_sd``), for power. Unlike the geometric mean of per-repetition
    ratios, this cannot favour a method whose errors are more dispersed but larger on average.
    ``cv_folds``: fits of repeated cross-validation, the t and Fieller's interval on the corrected
    resampled variance (``cv_inflation``)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"{label}: paired samples must be 1-D and of equal length, got {a.shape} and {b.shape}")
    ok = np.isfinite(a) & np.isfinite(b)
    a, b = a[ok], b[ok]
    n = a.size
    if n < 2 or a.mean() <= 0 or b.mean() <= 0:
        return Point(label, "ratio of means (too few repetitions)", *[math.nan] * 4, False, n, null=1.0)
    est = math.log(a.mean()) - math.log(b.mean())
    infl = cv_inflation(n, cv_folds)
    sd = _power_sd(a, b, est) * math.sqrt(infl)
    p = _t_p(*_ratio_t(a, b, 1.0, infl), n - 1, "two")
    # sd = 0: a proportional to b in every repetition, the ratio is known exactly
    lo, hi = (math.exp(est),) * 2 if sd == 0 else _fieller(a, b, float(t_ppf(1 - alpha / 2, n - 1)), infl)
    favours = est < 0 if claim_a_lower else est > 0
    test = "ratio of means, " + (_cv_name(n, cv_folds) if cv_folds else "paired t") + " with Fieller interval"
    mde = math.exp(mde_test_scale(sd, n, alpha))
    return Point(label, test, math.exp(est), lo, hi, p, favours, n, sd, mde, null=1.0, scale="ratio of means A/B")


def equivalence_point(
    a,
    b,
    label: str,
    margin: float,
    *,
    log: bool = True,
    means: bool = False,
    alpha: float = ALPHA,
    cv_folds: int | None = None,
) -> Point:
    """TOST: is the paired effect within ±``margin`` (a ratio within [1/margin, margin] when
    ``log``)? When equivalence is shown, ``p_value`` is the larger one-sided p and ``favours`` is
    True; when the effect is significantly outside the margin, ``p_value`` is the non-equivalence
    test's p (two-sided: its side is the estimate's) and ``favours`` False (the claim does not hold);
    otherwise TOST's p
    with ``favours`` False (inconclusive). ``cv_folds``: fits of repeated cross-validation, each
    one-sided t on the corrected resampled variance (``cv_inflation``)."""
    a, b = np.asarray(a, dtype=float), np.broadcast_to(np.asarray(b, dtype=float), np.shape(a))
    ok = np.isfinite(a) & np.isfinite(b) & ((a > 0) & (b > 0) if log else True)
    a, b = a[ok], b[ok]
    m = math.log(margin) if log else float(margin)
    if a.size < 2:
        return Point(label, "TOST (too few repetitions)", math.nan, math.nan, math.nan, math.nan, False, a.size)
    if log and means:  # ratio of the means: paired t on a − r·b at r = margin^±1, Fieller interval
        return _equivalence_of_means(a, b, label, margin, alpha, cv_folds)
    d = (np.log(a) - np.log(b)) if log else (a - b)
    n = d.size
    mean, sd = float(d.mean()), float(d.std(ddof=1)) * math.sqrt(cv_inflation(n, cv_folds))
    se = sd / math.sqrt(n)
    if se == 0:
        inside = abs(mean) < m
        p_eq, p_out = (0.0, 1.0) if inside else (1.0, 0.0)
    else:
        p_eq = float(max(t_sf((mean + m) / se, n - 1), t_cdf((mean - m) / se, n - 1)))
        # H0: |effect| ≤ m, against the side the estimate lies on: the side is chosen by the data, so
        # the one-sided p is doubled (size ≤ α at |effect| = m for any margin; one-sided, the size
        # tended to 2α as the margin shrank: 0.08 on A/A pairs at ×1.02, docs/calibration.md)
        p_out = min(1.0, 2 * float(t_sf((abs(mean) - m) / se, n - 1)))
    half = float(t_ppf(1 - alpha, n - 1)) * se
    lo, hi = mean - half, mean + half
    conv = math.exp if log else (lambda v: v)
    on = "log-ratios" if log else "differences"
    test = f"TOST (margin {'×' if log else '±'}{margin:g}) on {on}" + (f", {_cv_name(n, cv_folds)}" if cv_folds else "")
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
        conv(mde_test_scale(sd, n, alpha)),
        null=1.0 if log else 0.0,
        note=f"non-equivalence p = {format_p(p_out)}" + (" (significant)" if p_out < alpha else ""),
        ci_level=1 - 2 * alpha,
        sides=1 if p_report == p_eq else 2,
        margin=m,
        scale="geometric-mean ratio A/B" if log else "difference A − B",
    )


def _equivalence_of_means(
    a: np.ndarray, b: np.ndarray, label: str, margin: float, alpha: float, cv_folds: int | None = None
) -> Point:
    """TOST on the ratio of the means: one-sided paired t tests of a_i − margin^±1·b_i (Fieller's
    pivot, as ``ratio_of_means_point``), the (1 − 2α) Fieller interval; ``sd`` for power."""
    n, m = a.size, math.log(margin)
    if a.mean() <= 0 or b.mean() <= 0:
        return Point(label, "TOST (no positive mean)", math.nan, math.nan, math.nan, math.nan, False, n)
    est = math.log(a.mean()) - math.log(b.mean())
    k = cv_inflation(n, cv_folds)
    sd = float((a / a.mean() - b / b.mean()).std(ddof=1)) * math.sqrt(k)
    p_eq = max(_t_p(*_ratio_t(a, b, margin, k), n - 1, "less"), _t_p(*_ratio_t(a, b, 1 / margin, k), n - 1, "greater"))
    # H0 "within the margin", against the side the estimate lies on
    # (the side chosen by the estimate: doubled, as in ``equivalence_point``)
    side = "greater" if est >= 0 else "less"
    p_out = min(1.0, 2 * _t_p(*_ratio_t(a, b, margin ** (1 if est >= 0 else -1), k), n - 1, side))
    lo, hi = (math.exp(est),) * 2 if sd == 0 else _fieller(a, b, float(t_ppf(1 - alpha, n - 1)), k)
    equivalent = p_eq < alpha
    t_name = _cv_name(n, cv_folds) if cv_folds else "paired t"
    return Point(
        label,
        f"TOST (margin ×{margin:g}) on the ratio of means, {t_name} with Fieller interval",
        math.exp(est),
        lo,
        hi,
        p_eq if equivalent or p_out >= alpha else p_out,
        bool(equivalent),
        n,
        sd,
        math.exp(mde_test_scale(sd, n, alpha)),
        null=1.0,
        note=f"non-equivalence p = {format_p(p_out)}" + (" (significant)" if p_out < alpha else ""),
        ci_level=1 - 2 * alpha,
        sides=1 if equivalent or p_out >= alpha else 2,
        margin=m,
        scale="ratio of means A/B",
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
    p_eq = float(max(norm_sf((est + m) / se), norm_cdf((est - m) / se)))
    half = z_quantile(1 - alpha) * se
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
        math.exp(mde_test_scale(se * math.sqrt(n), int(n), alpha)),
        null=1.0,
        ci_level=1 - 2 * alpha,
        sides=1,
        margin=m,
        scale="ratio of the proportion to its exact value",
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
    tq = float(t_ppf(1 - alpha / 2, df))
    p = float(2 * t_sf(abs(slope) / se, df)) if se > 0 else (0.0 if slope != 0 else 1.0)
    mde = (tq + z_quantile(POWER)) * se
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
        scale="slope, " + scale,
    )


def exact_point(
    label: str,
    holds: bool,
    effect: float = math.nan,
    test: str = "exact computation",
    note: str = "",
    *,
    scale: str = "",
    null: float = math.nan,
) -> Point:
    """A point decided by exact computation (closed forms, exact pmf/pdf): no p-value. ``scale``
    says what ``effect`` measures ("exact ratio …" puts it on a ratio axis around ``null`` = 1 in
    the forest plot); ``null`` NaN: no reference value (an exact value compared with a bound)."""
    return Point(
        label,
        test,
        effect,
        effect,
        effect,
        None,
        bool(holds),
        0,
        exact=True,
        refutes=not holds,
        note=note,
        null=null,
        scale=scale,
    )


def tie_point(label: str, note: str, *, log: bool = True) -> Point:
    """Two mechanisms with the same output law at this point: an exact tie, which refutes any
    strict-win claim in the literal reading and is neutral in the fair one. Its effect is the
    no-effect value of the comparison's scale: a ratio of 1 (``log``) or a difference of 0 (rates
    compared as differences)."""
    null = 1.0 if log else 0.0
    return Point(
        label,
        "identical output laws (exact)",
        null,
        null,
        null,
        None,
        False,
        0,
        exact=True,
        refutes=True,
        note=note,
        null=null,
        scale="identical laws: ratio A/B" if log else "identical laws: difference A − B",
        tie=True,
    )
