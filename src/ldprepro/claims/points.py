"""Generic point builders: one statistical test per scope point, for the declared test kinds.

A declaration (``ldprepro.claims.declarations``) names a test kind; the builders here turn the
figure's per-repetition results into that kind's points (``ldprepro.claims.verdicts``):

- ``outperform``: "a beats every one of ``against``" at every (panel, ε) in scope, paired on the
  repetitions; exact ties where the two output laws are identical (docs/verdicts-standard.md,
  "identical laws are ties");
- ``sweep_trend``: the metric of one mechanism against a swept parameter, per (panel, ε);
- ``mechanism_trend``: every mechanism's metric against ε or the number of users, per panel;
- ``equivalence``: a and b within a declared margin at every x in scope (TOST on means);
- ``ratio_below``: metric(a)/metric(b) below a declared bound at every x in scope.
"""

from __future__ import annotations

import dataclasses
import math

import pandas as pd

from ldprepro.claims.names import label as mechanism_label
from ldprepro.claims.results import Results, log_scale, paired
from ldprepro.claims.verdicts import equivalence_point, tie_point, trend_point
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


def win_points(res: Results, a: str, others: list[str], where=None, check_ties: bool = True, **sel) -> list:
    """Points of "a beats every one of ``others``" at every (dataset, ε) in scope."""
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
                sb = res.series(ds, b, metric, eps=eps, **{k: v for k, v in sel.items() if k not in ("clip",)})
                if sb.empty:
                    continue
                label = f"{ds} ε={eps:g} vs {mechanism_label(b)}"
                tie = law_tie(a, b, eps_num, d, _disc(res, ds, a), _disc(res, ds, b)) if check_ties else None
                if tie:
                    points.append(tie_point(label, tie))
                    continue
                pt = paired(sa, sb, label, log_scale(metric))
                if pt is not None:
                    points.append(_with_theory(pt, res, ds, metric, a, b, eps, sel))
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
            if table.shape[1] > 1:
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
        if table.shape[1] > 1:
            pts.append(trend_point(table, f"{dataset}/{mechanism_label(m)}", decreasing=True, log=True, log_x=True))
    return pts


def ratio_below_points(res: Results, a: str, others: list[str], bound: float, xcol: str = "eps", datasets=None) -> list:
    """Points of "AE(a)/AE(b) < bound" (paired log-ratio test of a against b scaled by bound);
    ``datasets`` given: one panel's points, labelled without its name."""
    pts = []
    for ds in res.datasets if datasets is None else datasets:
        for x in sorted(res.raw.loc[res.raw["dataset"] == ds, xcol].dropna().unique()):
            sa = res.series(ds, a, **{xcol: x})
            for b in others:
                sb = res.series(ds, b, **{xcol: x})
                label = point_label(ds if datasets is None else "", xcol, x) + f" vs {mechanism_label(b)}"
                pt = paired(sa, sb * bound, label + (f" (×{bound:g})" if bound != 1 else ""), True)
                if pt is not None:
                    pts.append(pt)
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
    res: Results, a: str, b: str, margin: float, xcol: str = "eps", where=None, datasets=None
) -> list:
    """Points of "a and b are within ×``margin``" (TOST on the ratio of means) at every x in scope."""
    pts = []
    for ds in res.datasets if datasets is None else datasets:
        for x in [v for v in x_values(res, ds, xcol) if where is None or where(v)]:
            sa, sb = res.series(ds, a, **{xcol: x}), res.series(ds, b, **{xcol: x})
            common = sa.index.intersection(sb.index)
            if len(common):
                label = point_label(ds if datasets is None else "", xcol, x)
                pts.append(
                    equivalence_point(sa.loc[common].to_numpy(), sb.loc[common].to_numpy(), label, margin, means=True)
                )
    return pts
