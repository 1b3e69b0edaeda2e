"""Generic point builders: one statistical test per scope point, for the declared test kinds.

A declaration (``ldprepro.claims.declarations``) names a test kind; the builders here turn the
figure's per-repetition results into that kind's points (``ldprepro.claims.verdicts``):

- ``outperform``: "a beats every one of ``against``" at every (panel, ε) in scope, paired on the
  repetitions; exact ties where the two output laws are identical (docs/verdicts-standard.md,
  "identical laws are ties");
- ``sweep_trend``: the metric of one mechanism against a swept parameter, per (panel, ε);
- ``mechanism_trend``: every mechanism's metric against ε or the number of users, per panel;
- ``no_worse``: "a is no worse than every one of ``against``" (A ≤ B, ties allowed; within ×``margin``
  when simulated: a one-sided non-inferiority test) at every (panel, ε) in scope;
- ``equivalence``: a and b within a declared margin at every x in scope (TOST on means);
- ``ratio_below``: metric(a)/metric(b) below a declared bound at every x in scope;
- ``theory_agreement``: the simulated curves against their exact expectations (TOST, pooled per
  mechanism).

Exact first: wherever every compared curve has an exact expectation of the plotted metric at a
point (a ``<metric>_theory`` row with ``theory_exact`` true, declared by the jobs,
``ldprepro.experiments.mean``), that point is decided by the exact ratio of the expectations
(``exact_point``), not by the repetitions; an exact ratio of 1 (identical expectations) refutes a
strict win as a tie does. Points without exact expectations (approximate theory such as the CLT's
MAE, HierA clipped, biased readings, LDP-SGD) stay simulated.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from ldprepro.claims.names import label as mechanism_label
from ldprepro.claims.results import Results, log_scale, paired
from ldprepro.claims.verdicts import (
    FAIR_MARGIN_RATE,
    FAIR_MARGIN_RATIO,
    equivalence_point,
    exact_point,
    tie_point,
    trend_point,
)
from ldprepro.domain.mechanisms import get_mechanism, sampling_k
from ldprepro.domain.ties import same_output_law


def _one_d(mechanism: str, eps: float, discretize=None):
    base = mechanism.removesuffix("_disc")
    try:
        return get_mechanism(
            base, eps, discretize=None if discretize is None or pd.isna(discretize) else int(discretize)
        )
    except (ValueError, KeyError):
        return None


def law_tie(a: str, b: str, eps_numeric: float, d: int, disc_a=None, disc_b=None) -> str | None:
    """Why ``a`` and ``b`` have the same output law at this point (None if they differ): both run
    Zhao et al.'s attribute sampling (Alg. 6) with the same k, so the per-attribute 1-D mechanisms
    at ε/k decide; Laplace and Duchi have their own multidimensional forms."""
    if {a, b} & {"laplace", "duchi"} and d > 1:
        return None
    k = sampling_k(eps_numeric, d) if d > 1 else 1
    ma, mb = _one_d(a, eps_numeric / k, disc_a), _one_d(b, eps_numeric / k, disc_b)
    if ma is None or mb is None or not same_output_law(ma, mb):
        return None
    return f"{mechanism_label(a)} ≡ {mechanism_label(b)} at per-attribute ε = {eps_numeric / k:.3g} (k = {k})"


def _point_meta(res: Results, dataset: str, eps: float) -> tuple[float, int]:
    r = res.raw[(res.raw["dataset"] == dataset) & (res.raw["eps"] == eps)]
    eps_num = float(r["eps_numeric"].iloc[0]) if "eps_numeric" in r and r["eps_numeric"].notna().any() else eps
    d = (
        int(r["n_attributes"].iloc[0])
        if "n_attributes" in r and r["n_attributes"].notna().any()
        else (int(r["n_features"].iloc[0]) if "n_features" in r and r["n_features"].notna().any() else 1)
    )
    return eps_num, d


def _disc(res: Results, dataset: str, mechanism: str):
    """The discretisation m a mechanism ran with on this panel (None: continuous)."""
    if "discretize" not in res.raw:
        return None
    d = res.raw.loc[(res.raw["dataset"] == dataset) & (res.raw["mechanism"] == mechanism), "discretize"].dropna()
    return None if d.empty else d.iloc[0]


#: how the evidence names the expectation of a metric
METRIC_WORDS = {"sq_error": "MSE", "abs_error": "MAE"}
#: exact expectations closer than this (relative) are equal: the two curves' laws give the same MSE
EXACT_TIE_RTOL = 1e-12


def exact_value(res: Results, dataset: str, mechanism: str, metric: str, **sel) -> float | None:
    """The exact expectation of ``metric`` for this curve point (the jobs' ``<metric>_theory`` row
    marked ``theory_exact``), or None when there is none (approximate theory, no closed form)."""
    t = res.series(dataset, mechanism, f"{metric}_theory", theory_exact=True, **sel)
    if len(t) != 1 or not np.isfinite(t.iloc[0]) or not t.iloc[0] > 0:
        return None
    return float(t.iloc[0])


def exact_ratio_point(label: str, metric: str, ta: float, tb: float, holds, wording: str = "") -> object:
    """An exact point on the ratio of two exact expectations ``ta/tb``; ``holds(q)`` decides it."""
    q = ta / tb
    what = METRIC_WORDS.get(metric, f"E[{metric}]")
    pt = exact_point(
        label,
        bool(holds(q)),
        effect=q,
        test=f"exact expected {what} ratio (closed form on the data)",
        note=(f"exact {what} ratio {q:.4g}" if abs(q - 1) >= 1e-3 else f"exact {what} ratio {q:.7f}") + wording,
    )
    return dataclasses.replace(pt, null=1.0, scale=f"exact ratio of the expected {what} A/B")


def fair_margin(metric: str, declared: float | None = None) -> float:
    """The fair reading's practical margin of a comparison on ``metric``, on the test scale: log of
    a ratio margin for errors, a difference for rates (``verdicts.FAIR_MARGIN_RATIO`` /
    ``FAIR_MARGIN_RATE`` unless the declaration gives its own ``fair_margin``)."""
    if log_scale(metric):
        return math.log(FAIR_MARGIN_RATIO if declared is None else float(declared))
    return FAIR_MARGIN_RATE if declared is None else float(declared)


def _pair_point(res: Results, ds: str, eps: float, a: str, b: str, label: str, check_ties: bool, sel: dict):
    """One point of "a beats b" at (ds, ε): an exact tie (identical output laws), else the exact
    ratio of the expected errors where both have one, else the paired test on the repetitions;
    None when a curve is missing."""
    metric = res.metric_of(ds)
    sel_b = {k: v for k, v in sel.items() if k not in ("clip",)}
    sa, sb = res.series(ds, a, metric, eps=eps, **sel), res.series(ds, b, metric, eps=eps, **sel_b)
    if sa.empty or sb.empty:
        return None
    eps_num, d = _point_meta(res, ds, eps)
    tie = law_tie(a, b, eps_num, d, _disc(res, ds, a), _disc(res, ds, b)) if check_ties else None
    if tie:
        return tie_point(label, tie, log=log_scale(metric))
    ta, tb = exact_value(res, ds, a, metric, eps=eps, **sel), exact_value(res, ds, b, metric, eps=eps, **sel_b)
    if ta is not None and tb is not None:
        equal = math.isclose(ta, tb, rel_tol=EXACT_TIE_RTOL)
        pt = exact_ratio_point(
            label,
            metric,
            ta,
            tb,
            lambda q, equal=equal: q < 1 and not equal,
            " (equal expectations: a tie, no strict win)" if equal else "",
        )
        return dataclasses.replace(pt, tie=equal)
    pt = paired(sa, sb, label, log_scale(metric), cv_folds=res.cv_folds)
    return None if pt is None else _with_theory(pt, res, ds, metric, a, b, eps, sel)


def _scope(res: Results, where, margin):
    """(dataset, ε, the fair reading's margin of the dataset's metric) of every point in scope."""
    for ds in res.datasets:
        m = fair_margin(res.metric_of(ds), margin)
        for eps in res.eps_values(ds):
            if where is None or where(eps):
                yield ds, eps, m


def win_points(
    res: Results, a: str, others: list[str], where=None, check_ties: bool = True, margin=None, **sel
) -> list:
    """Points of "a beats every one of ``others``" at every (dataset, ε) in scope; each carries the
    fair reading's margin (``fair_margin``; ``margin``: the declaration's own)."""
    points = []
    for ds, eps, m in _scope(res, where, margin):
        for b in others:
            pt = _pair_point(res, ds, eps, a, b, f"{ds} ε={eps:g} vs {mechanism_label(b)}", check_ties, sel)
            if pt is not None:
                points.append(dataclasses.replace(pt, fair_margin=m))
    return points


def _best(res: Results, ds: str, eps: float, mechanisms: list[str]) -> str | None:
    """The mechanism of ``mechanisms`` with the lowest error at (ds, ε): the lowest exact expectation
    where every one has one, else the lowest mean over the repetitions (None if none was run)."""
    metric = res.metric_of(ds)
    exact = {m: exact_value(res, ds, m, metric, eps=eps) for m in mechanisms if res.has(m)}
    exact = {m: v for m, v in exact.items() if not res.series(ds, m, metric, eps=eps).empty}
    if exact and all(v is not None for v in exact.values()):
        return min(exact, key=lambda m: (exact[m], mechanisms.index(m)))
    means = {m: res.series(ds, m, metric, eps=eps).mean() for m in mechanisms if res.has(m)}
    means = {m: v for m, v in means.items() if np.isfinite(v)}
    return min(means, key=lambda m: (means[m], mechanisms.index(m))) if means else None


def best_of_points(
    res: Results, proposed: list[str], existing: list[str], where=None, check_ties: bool = True, margin=None
) -> list:
    """Points of a collective claim, "our approaches outperform existing solutions", as the paper
    states it: at every (dataset, ε) in scope the best of the proposed mechanisms against the best of
    the existing ones (the lowest exact expected error, else the lowest mean error), compared as
    ``win_points`` compares two mechanisms."""
    points = []
    for ds, eps, m in _scope(res, where, margin):
        a, b = _best(res, ds, eps, proposed), _best(res, ds, eps, existing)
        if a is None or b is None:
            continue
        label = f"{ds} ε={eps:g}: best proposed {mechanism_label(a)} vs best existing {mechanism_label(b)}"
        pt = _pair_point(res, ds, eps, a, b, label, check_ties, {})
        if pt is not None:
            points.append(dataclasses.replace(pt, fair_margin=m))
    return points


def no_worse_points(res: Results, a: str, others: list[str], margin: float = 1.0, where=None, **sel) -> list:
    """Points of "a is no worse than every one of ``others``" (metric(a) ≤ metric(b), ties allowed) at
    every (dataset, ε) in scope. Exact first: the ratio q of the exact expectations decides, holding
    when q ≤ ``margin`` (q = 1 within :data:`EXACT_TIE_RTOL` is a tie, which holds); identical output
    laws hold too. Simulated points test non-inferiority one-sided, "mean(a) < ``margin`` × mean(b)"
    (paired on the repetitions): with margin 1 that needs evidence that a is better, so declare the
    margin you accept as "no worse" (e.g. 1.05) where the expectations are not known exactly."""
    points = []
    for ds in res.datasets:
        metric = res.metric_of(ds)
        for eps in res.eps_values(ds):
            if where is not None and not where(eps):
                continue
            sa = res.series(ds, a, metric, eps=eps, **sel)
            if sa.empty:
                continue
            eps_num, d = _point_meta(res, ds, eps)
            for b in others:
                sb = res.series(ds, b, metric, eps=eps, **sel)
                if sb.empty:
                    continue
                label = f"{ds} ε={eps:g} vs {mechanism_label(b)}" + (f" (×{margin:g})" if margin != 1 else "")
                tie = law_tie(a, b, eps_num, d, _disc(res, ds, a), _disc(res, ds, b))
                if tie:
                    points.append(exact_point(label, True, 1.0, "identical output laws (exact)", tie + ": a tie"))
                    continue
                ta, tb = (
                    exact_value(res, ds, a, metric, eps=eps, **sel),
                    exact_value(res, ds, b, metric, eps=eps, **sel),
                )
                if ta is not None and tb is not None:
                    equal = math.isclose(ta, tb, rel_tol=EXACT_TIE_RTOL)
                    points.append(
                        exact_ratio_point(
                            label,
                            metric,
                            ta,
                            tb,
                            lambda q, equal=equal: equal or q <= margin,
                            " (equal expectations: a tie, no worse)" if equal else "",
                        )
                    )
                    continue
                pt = paired(sa, sb * margin, label, log_scale(metric), cv_folds=res.cv_folds)
                if pt is not None:
                    points.append(pt)
    return points


def _with_theory(pt, res: Results, ds: str, metric: str, a: str, b: str, eps: float, sel: dict):
    """Attach the effect the closed forms predict (log of the theory metrics' ratio) for power."""
    ta = res.series(ds, a, f"{metric}_theory", eps=eps, **sel)
    tb = res.series(ds, b, f"{metric}_theory", eps=eps, **{k: v for k, v in sel.items() if k != "clip"})
    if ta.empty or tb.empty or not (ta.iloc[0] > 0 and tb.iloc[0] > 0):
        return pt
    return dataclasses.replace(pt, theory=math.log(float(ta.iloc[0]) / float(tb.iloc[0])))


def outperform_kind(res: Results, others: list[str], where=None) -> str:
    """The kind of an "outperforms" claim: a range over several ε or panels, a win over a set of
    baselines at one point, or a pairwise comparison."""
    in_scope = [e for e in res.eps_values() if where is None or where(e)]
    return (
        "range" if len(in_scope) > 1 or len(res.datasets) > 1 else ("win-over-set" if len(others) > 1 else "pairwise")
    )


def _exact_curve(res: Results, dataset: str, mechanism: str, metric: str, xcol: str, xs: list, **sel):
    """{x: exact expectation} of one curve over ``xs``, or None unless every x has one."""
    r = res.raw
    if "theory_exact" not in r or xcol not in r:
        return None
    rows = r[
        (r["dataset"] == dataset)
        & (r["mechanism"] == mechanism)
        & (r["metric"] == f"{metric}_theory")
        & (r["theory_exact"] == True)  # noqa: E712  (an object column: True, False or missing)
    ]
    for col, val in sel.items():
        rows = rows[rows[col] == val]
    values = rows.groupby(xcol)["value"].agg(["first", "count"])
    if not set(xs) <= set(values.index) or (values.loc[xs, "count"] != 1).any():
        return None
    out = {float(x): float(values.loc[x, "first"]) for x in xs}
    return out if all(np.isfinite(v) and v > 0 for v in out.values()) else None


def exact_trend_point(curve: dict, label: str, metric: str, log_x: bool = False, decreasing: bool = True):
    """The trend of an exact expectation in x: least-squares slope of its log against x (log x if
    ``log_x``), the statistic the simulated trend estimates, computed without sampling noise; the
    note says whether the curve is also monotone."""
    xs = np.array(sorted(curve))
    y = np.log([curve[x] for x in xs])
    slope = float(np.polyfit(np.log(xs) if log_x else xs, y, 1)[0])
    steps = np.diff(y)
    monotone = bool(np.all(steps < 0) if decreasing else np.all(steps > 0))
    what = METRIC_WORDS.get(metric, f"E[{metric}]")
    per = f"per unit {'log ' if log_x else ''}parameter"
    pt = exact_point(
        label,
        slope < 0 if decreasing else slope > 0,
        effect=slope,
        test=f"exact expected {what}, slope of its log {per}",
        note=f"slope {slope:.3g}; " + ("monotone" if monotone else "not monotone") + " over the grid",
    )
    return dataclasses.replace(pt, scale=f"slope of the log expected {what} {per}")


def sweep_trend_points(
    res: Results, mechanism: str, sweep: str, log_x: bool = False, log: bool | None = True, datasets=None
) -> list:
    """One trend point per (dataset, ε): the metric of ``mechanism`` against its swept parameter,
    repetitions as blocks; ``log=None``: log scale for error metrics, linear for rates."""
    pts = []
    for ds in res.datasets if datasets is None else datasets:
        metric = res.metric_of(ds)
        for eps in res.eps_values(ds):
            r = res.raw[
                (res.raw["dataset"] == ds)
                & (res.raw["eps"] == eps)
                & (res.raw["metric"] == metric)
                & (res.raw["mechanism"] == mechanism)
            ]
            table = r.pivot_table(index="rep", columns=sweep, values="value")
            exact = _exact_curve(res, ds, mechanism, metric, sweep, list(table.columns), eps=eps)
            if exact is not None and len(exact) > 1:
                pts.append(exact_trend_point(exact, f"{ds} ε={eps:g}", metric, log_x=log_x))
            elif table.shape[1] > 1:
                pts.append(
                    trend_point(
                        table,
                        f"{ds} ε={eps:g}",
                        decreasing=True,
                        log=log_scale(metric) if log is None else log,
                        log_x=log_x,
                    )
                )
    return pts


def mechanism_trend_points(res: Results, dataset: str, x: str) -> list:
    """One decreasing-trend point per mechanism of a panel: log error against log ``x`` (ε or the
    number of users), repetitions as blocks."""
    metric, pts = res.metric_of(dataset), []
    for m in sorted(res.raw.loc[res.raw["dataset"] == dataset, "mechanism"].unique()):
        r = res.raw[(res.raw["dataset"] == dataset) & (res.raw["mechanism"] == m) & (res.raw["metric"] == metric)]
        table = r.pivot_table(index="rep", columns=x, values="value")
        exact = _exact_curve(res, dataset, m, metric, x, list(table.columns))
        if exact is not None and len(exact) > 1:
            pts.append(exact_trend_point(exact, f"{dataset}/{mechanism_label(m)}", metric, log_x=True))
        elif table.shape[1] > 1:
            pts.append(trend_point(table, f"{dataset}/{mechanism_label(m)}", decreasing=True, log=True, log_x=True))
    return pts


def ratio_below_points(
    res: Results, a: str, others: list[str], bound: float, xcol: str = "eps", datasets=None, margin=None
) -> list:
    """Points of "AE(a)/AE(b) < bound" (paired log-ratio test of a against b scaled by bound);
    ``datasets`` given: one panel's points, labelled without its name."""
    pts = []
    for ds in res.datasets if datasets is None else datasets:
        for x in sorted(res.raw.loc[res.raw["dataset"] == ds, xcol].dropna().unique()):
            sa = res.series(ds, a, **{xcol: x})
            for b in others:
                sb = res.series(ds, b, **{xcol: x})
                label = point_label(ds if datasets is None else "", xcol, x) + f" vs {mechanism_label(b)}"
                metric = res.metric_of(ds)
                ta, tb = exact_value(res, ds, a, metric, **{xcol: x}), exact_value(res, ds, b, metric, **{xcol: x})
                # a plain "smaller than" (bound 1) gets the fair reading's margin; a bound is its own margin
                fair = {"fair_margin": fair_margin(metric, margin)} if bound == 1 else {}
                if ta is not None and tb is not None and len(sa) and len(sb):
                    pt = exact_ratio_point(
                        label + (f" (×{bound:g})" if bound != 1 else ""), metric, ta, tb, lambda q: q < bound
                    )
                    pts.append(
                        dataclasses.replace(pt, tie=bound == 1 and math.isclose(ta, tb, rel_tol=EXACT_TIE_RTOL), **fair)
                    )
                    continue
                pt = paired(
                    sa, sb * bound, label + (f" (×{bound:g})" if bound != 1 else ""), True, cv_folds=res.cv_folds
                )
                if pt is not None:
                    pts.append(dataclasses.replace(pt, **fair))
    return pts


X_SYMBOLS = {"eps": "ε", "n_users": "n"}


def point_label(dataset: str, xcol: str, x) -> str:
    """ "<panel> ε=1" or "n=500": how a point at ``xcol = x`` is named in the evidence."""
    return " ".join(s for s in (dataset, f"{X_SYMBOLS.get(xcol, xcol)}={x:g}") if s)


def x_values(res: Results, dataset: str, xcol: str) -> list:
    """The values of ``xcol`` (ε, number of users, ...) present on a panel, sorted."""
    if xcol == "eps":
        return res.eps_values(dataset)
    return sorted(res.raw.loc[res.raw["dataset"] == dataset, xcol].dropna().unique())


def equivalence_points(
    res: Results, a: str, b: str, margin: float, xcol: str = "eps", where=None, datasets=None, **sel
) -> list:
    """Points of "a and b are within ×``margin``" (TOST on the ratio of means) at every x in scope
    (``sel``: a further curve parameter held fixed, e.g. the domain size k of a frequency figure)."""
    pts = []
    for ds in res.datasets if datasets is None else datasets:
        for x in [v for v in x_values(res, ds, xcol) if where is None or where(v)]:
            sa, sb = res.series(ds, a, **{xcol: x}, **sel), res.series(ds, b, **{xcol: x}, **sel)
            common = sa.index.intersection(sb.index)
            if len(common):
                label = point_label(ds if datasets is None else "", xcol, x)
                metric = res.metric_of(ds)
                ta = exact_value(res, ds, a, metric, **{xcol: x}, **sel)
                tb = exact_value(res, ds, b, metric, **{xcol: x}, **sel)
                if ta is not None and tb is not None:
                    pts.append(
                        exact_ratio_point(
                            label, metric, ta, tb, lambda q: 1 / margin < q < margin, f" (margin ×{margin:g})"
                        )
                    )
                    continue
                folds = res.cv_folds if res.cv_folds and len(common) % res.cv_folds == 0 else None
                pts.append(
                    equivalence_point(
                        sa.loc[common].to_numpy(), sb.loc[common].to_numpy(), label, margin, means=True, cv_folds=folds
                    )
                )
    return pts


def theory_agreement_points(res: Results, margin: float, metric: str | None = None, datasets=None) -> list:
    """The Monte-Carlo check of exact-first: per mechanism, the per-repetition ratios
    ``metric / its exact expectation`` (mean 1 when the implementation follows its closed form),
    pooled over every curve point of the role's panels that has an exact expectation (every ε,
    size and curve parameter); TOST of their mean against 1 with the declared margin."""
    r = res.raw if datasets is None else res.raw[res.raw["dataset"].isin(datasets)]
    if not len(r) or "theory_exact" not in r:
        return []
    pts = []
    for m in sorted(r["mechanism"].unique()):
        z, n_points, n_panels = [], 0, set()
        for ds in sorted(r.loc[r["mechanism"] == m, "dataset"].unique()):
            met = metric or res.metric_of(ds)
            rows = r[(r["dataset"] == ds) & (r["mechanism"] == m)]
            theory = rows[(rows["metric"] == f"{met}_theory") & (rows["theory_exact"] == True)]  # noqa: E712
            measured = rows[rows["metric"] == met]
            if theory.empty or measured.empty:
                continue
            keys = [
                c
                for c in theory.columns
                if c not in ("rep", "metric", "value", "theory_exact") and theory[c].notna().any()
            ]
            fill = {c: "∅" for c in keys}
            t = theory[keys + ["value"]].astype({c: object for c in keys}).fillna(fill)
            mm = measured[keys + ["value"]].astype({c: object for c in keys}).fillna(fill)
            joined = mm.merge(t, on=keys, suffixes=("", "_exact"), validate="many_to_one")
            if joined.empty:
                continue
            z.append((joined["value"] / joined["value_exact"]).to_numpy(dtype=float))
            n_points += len(t.merge(mm[keys].drop_duplicates(), on=keys))
            n_panels.add(ds)
        if not z:
            continue
        values = np.concatenate(z)
        label = (
            f"{mechanism_label(m)}: {values.size} repetition ratios pooled over {n_points} curve points "
            f"({len(n_panels)} panel{'s' if len(n_panels) != 1 else ''})"
        )
        pts.append(equivalence_point(values, np.ones_like(values), label, margin, means=True))
    return pts
