"""Shape and interaction tests: claims whose words compare, not just rank (docs/verdicts-standard.md,
"Kinds of claim and their tests").

- **Shape** ("grows", "decreases", "the larger x, the smaller y"): the metric moves the claim's way
  at *every* step of the grid (``step_points``: one paired test per adjacent pair of x values, each
  point of an intersection–union claim), optionally within a declared tolerance per step. A fitted
  slope can favour a claim whose curve turns back at one step; it stays available as the secondary
  reading (``shape: slope``, declared as an alternative: the claim's robustness shows whether it
  agrees).
- **Interaction** ("…especially for small ε"): the gain at small ε exceeds the gain at large ε
  (``interaction_points``): per repetition, the mean log-ratio A/B over the small-ε points minus that
  over the large-ε points (differences of rates for rate metrics), tested by the paired test on those
  contrasts (``stats.paired_point``; the corrected resampled t under cross-validation). One point per
  (panel, baseline); the claim holds iff every contrast is significantly negative.

Tests on constructed cases: tests/test_comparatives.py.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from ldprepro.claims.names import label as mechanism_label
from ldprepro.claims.results import Results, log_scale
from ldprepro.claims.stats import Point, exact_point, paired_point, ratio_of_means_point

SHAPES = ("monotone", "slope")


def _x(v) -> str:
    return f"{v:g}" if isinstance(v, int | float | np.integer | np.floating) else str(v)


def step_points(
    table: pd.DataFrame,
    label: str,
    *,
    decreasing: bool = True,
    log: bool = True,
    means: bool = True,
    tolerance: float = 0.0,
    symbol: str = "x",
    cv_folds: int | None = None,
) -> list[Point]:
    """The shape test of a curve: ``table`` has one row per repetition and one column per x value
    (sorted); one paired point per step x_j → x_{j+1}, the claim being that the metric falls
    (``decreasing``) or rises there. ``log``: a ratio test — of the means (``means``: the plotted
    mean error) or the geometric mean of per-repetition ratios — with the step allowed to go the
    wrong way by at most ×(1 + ``tolerance``); else differences, by at most ``tolerance``."""
    t = table.dropna(how="any").sort_index(axis=1)
    xs = list(t.columns)
    pts = []
    for lo, hi in zip(xs, xs[1:]):
        a, b = t[hi].to_numpy(dtype=float), t[lo].to_numpy(dtype=float)
        name = f"{label} {symbol} {_x(lo)}→{_x(hi)}"
        if log:
            scale = (1 + tolerance) if decreasing else 1 / (1 + tolerance)
            name += f" (×{scale:.4g})" if tolerance else ""
            if means:
                pt = ratio_of_means_point(a, scale * b, name, claim_a_lower=decreasing, cv_folds=cv_folds)
            else:
                pt = paired_point(a, scale * b, name, log=True, claim_a_lower=decreasing, cv_folds=cv_folds)
        else:
            shift = tolerance if decreasing else -tolerance
            name += f" (±{tolerance:g})" if tolerance else ""
            pt = paired_point(a, b + shift, name, log=False, claim_a_lower=decreasing, cv_folds=cv_folds)
        pts.append(dataclasses.replace(pt, scale=f"step {symbol} → next: {pt.scale}"))
    return pts


def exact_step_point(curve: dict, label: str, what: str, decreasing: bool = True, tolerance: float = 0.0) -> Point:
    """The shape of an exact curve {x: expectation}: it holds iff every step moves the claim's way
    (within ×(1 + ``tolerance``)); effect = the step ratio furthest from it."""
    xs = sorted(curve)
    ratios = np.array([curve[b] / curve[a] for a, b in zip(xs, xs[1:])])
    worst = float(ratios.max() if decreasing else ratios.min())
    ok = bool(np.all(ratios < 1 + tolerance) if decreasing else np.all(ratios > 1 / (1 + tolerance)))
    wrong = [f"{_x(a)}→{_x(b)}" for (a, b), r in zip(zip(xs, xs[1:]), ratios) if (r >= 1) == decreasing]
    return exact_point(
        label,
        ok,
        worst,
        test=f"exact expected {what}, every step of the grid",
        note=("moves the claim's way at every step" if not wrong else "wrong way at " + ", ".join(wrong))
        + (f" (tolerance ×{1 + tolerance:g})" if tolerance else ""),
        scale=f"exact step ratio of the expected {what} (the step furthest from the claim)",
        null=1.0,
    )


def interaction_points(res: Results, a: str, others: list[str], small, large) -> list[Point]:
    """ "A's gain over each of ``others`` is larger at small ε than at large ε": per (panel, baseline),
    per repetition, mean over the small-ε points (``small(ε)``) of log(A/B) minus its mean over the
    large-ε points (``large(ε)``, never a small one); the claim is that the contrast is negative
    (A's relative error lower where ε is small). Rates: differences A − B instead of log-ratios."""
    pts = []
    for ds in res.datasets:
        grid = res.eps_values(ds)
        s_eps = [e for e in grid if small(e)]
        l_eps = [e for e in grid if large(e) and not small(e)]
        if not s_eps or not l_eps:
            continue
        log = log_scale(res.metric_of(ds))
        sa = {e: res.series(ds, a, eps=e) for e in s_eps + l_eps}
        for b in others:
            cols = {}
            for e in s_eps + l_eps:
                sb = res.series(ds, b, eps=e)
                common = sa[e].index.intersection(sb.index)
                if not len(common):
                    break
                x, y = sa[e].loc[common], sb.loc[common]
                if log and not ((x > 0).all() and (y > 0).all()):
                    break
                cols[e] = np.log(x) - np.log(y) if log else x - y
            if len(cols) < len(s_eps) + len(l_eps):
                continue
            t = pd.DataFrame(cols).dropna(how="any")
            if len(t) < 2:
                continue
            small_mean, large_mean = t[s_eps].mean(axis=1).to_numpy(), t[l_eps].mean(axis=1).to_numpy()
            folds = res.cv_folds if res.cv_folds and len(t) % res.cv_folds == 0 else None
            label = f"{ds} vs {mechanism_label(b)}: ε ≤ {max(s_eps):g} vs ε ≥ {min(l_eps):g}"
            pt = paired_point(small_mean, large_mean, label, log=False, cv_folds=folds)
            what = "log-ratio A/B" if log else "difference A − B"
            pts.append(dataclasses.replace(pt, scale=f"mean {what} at small ε − at large ε"))
    return pts


def top_third(grid: list[float]):
    """The large-ε scope of an interaction by default: the top third of the ε grid."""
    big = grid[len(grid) - max(1, len(grid) // 3) :]
    lo = big[0] if big else math.inf
    return lambda e: e >= lo


def _curve_table(res: Results, dataset: str, mechanism: str, metric: str, x: str, **sel) -> pd.DataFrame:
    r = res.raw[(res.raw["dataset"] == dataset) & (res.raw["mechanism"] == mechanism) & (res.raw["metric"] == metric)]
    for col, val in sel.items():
        r = r[r[col] == val]
    return r.pivot_table(index="rep", columns=x, values="value")


def _curve_steps(res: Results, ds: str, m: str, x: str, label: str, tolerance: float, log, **sel) -> list[Point]:
    """The shape points of one curve: exact when every x has an exact expectation, else simulated."""
    from ldprepro.claims.points import METRIC_WORDS, _exact_curve

    metric = res.metric_of(ds)
    table = _curve_table(res, ds, m, metric, x, **sel)
    if table.shape[1] < 2:
        return []
    exact = _exact_curve(res, ds, m, metric, x, list(table.columns), **sel)
    if exact is not None and len(exact) > 1:
        what = METRIC_WORDS.get(metric, f"E[{metric}]")
        return [exact_step_point(exact, label, what, tolerance=tolerance)]
    use_log = log_scale(metric) if log is None else log
    symbol = {"eps": "ε", "n_users": "n"}.get(x, x)
    return step_points(table, label, log=use_log, tolerance=tolerance, symbol=symbol, cv_folds=res.cv_folds)


def sweep_step_points(res: Results, mechanism: str, sweep: str, tolerance=0.0, log=None, datasets=None) -> list:
    """The shape version of ``points.sweep_trend_points``: per (panel, ε), every step of the sweep."""
    return [
        pt
        for ds in (res.datasets if datasets is None else datasets)
        for eps in res.eps_values(ds)
        for pt in _curve_steps(res, ds, mechanism, sweep, f"{ds} ε={eps:g}", tolerance, log, eps=eps)
    ]


def mechanism_step_points(res: Results, dataset: str, x: str, tolerance=0.0) -> list:
    """The shape version of ``points.mechanism_trend_points``: per mechanism, every step of ``x``."""
    mechanisms = sorted(res.raw.loc[res.raw["dataset"] == dataset, "mechanism"].unique())
    return [
        pt
        for m in mechanisms
        for pt in _curve_steps(res, dataset, m, x, f"{dataset}/{mechanism_label(m)}", tolerance, True)
    ]
