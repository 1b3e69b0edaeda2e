"""Paper 004's efficiency claims about Figs. 1–2 (paper Sec. 5.3; declared in ``claims.yaml``),
decided on the machine-independent cost of :mod:`ldprepro.papers.lremh.cost`.

The paper plots estimation time; a verdict on measured time depends on the machine and on what
else runs on it (issue 26: the same commit and seed flipped two verdicts), so each claim reads
"time" as the cost in operations counted from the algorithms (paper Sec. 4.4–4.6, Alg. 2: EM's
likelihood table and iterations on its candidates, the LASSO's epochs, LREMH's pruning), recorded
by the jobs as metric ``cost_ops``. The tests are those the time claims used: per run the geometric
mean over the run's subsets, then per-run log ratios paired on the run (``paired_point``), or the
blocked trend of the per-run log cost (``trend_point``). CPU time stays measured and is drawn beside
the cost in the figures; it is the declared alternative reading of "time" (a declaration's
``metric: time_s``, issue 51.4), so the robustness column shows what CPU time says, while every
verdict, effect and p-value stays a function of config and seed (tests/test_lremh_rerun.py).

Each function decides its claim for both stopping rules (``claims.VARIANTS``). Constructed-case
tests: tests/test_lremh_claims.py.
"""

from __future__ import annotations

from ldprepro.claims.comparatives import step_points
from ldprepro.claims.results import Results
from ldprepro.claims.verdicts import paired_point, trend_point
from ldprepro.papers.lremh.claims import UNIT_NOTE, _label, _per_variant, _scope, _setting, per_run
from ldprepro.papers.lremh.cost import COST_DEFINITION, COST_METRIC, CPU_METRIC

COST_NOTE = (
    f"Decided on {COST_METRIC}, the {COST_DEFINITION}. "
    "CPU time is drawn beside it in the figure; the robustness column gives its verdict (the alternative reading)"
)
CPU_NOTE = (
    "Decided on time_s, the CPU time of the estimator call measured in this run (machine-dependent; the "
    "alternative reading of 'time')"
)


def _metric(decl: dict) -> str:
    """The metric "time" is read as: the cost (declared) or CPU time (``metric: time_s``)."""
    metric = decl.get("metric", COST_METRIC)
    if metric not in (COST_METRIC, CPU_METRIC):
        raise ValueError(f"{decl['claim']!r}: metric {metric!r}; one of {COST_METRIC}, {CPU_METRIC}")
    return metric


def _cost_table(res: Results, em_m: str, lr_m: str, metric: str = COST_METRIC):
    """(f, k, run) × {EM, LREMH} per-run geometric mean of ``metric``, and the dataset's scope label."""
    dataset, subsets = _setting(res)
    return per_run(res.raw, metric, [em_m, lr_m], subsets, log=True), dataset


def _note(metric: str = COST_METRIC) -> str:
    return (COST_NOTE if metric == COST_METRIC else CPU_NOTE) + ". " + UNIT_NOTE


def faster(res: Results, decl: dict) -> list:
    """Claim "LREMH is faster than EM" (Sec. 5.3, Figs. 1–2), range over (f, k): paired test on the
    per-run log cost ratios LREMH/EM."""
    metric = _metric(decl)

    def build(em_m, lr_m, rule):
        t, dataset = _cost_table(res, em_m, lr_m, metric)
        pts = [
            paired_point(g[lr_m], g[em_m], _label(f, k) + ": cost LREMH/EM", log=True)
            for (f, k), g in t.groupby(level=["f", "k"])
        ]
        return _scope(dataset, t, rule), pts, _note(metric)

    return _per_variant(res, decl, "range", ["{em}", "{lremh}"], build)


def _rises(table, prefix: str, what: str, x: str, decl: dict) -> list:
    """ "Grows with ``x``": the declared ``shape`` — ``monotone``, every step of the grid rises (paired
    per-run log ratios, ``claims.comparatives.step_points``), or ``slope`` (the default), the blocked
    trend of the per-run log values."""
    if decl.get("shape") == "monotone":
        return step_points(table, f"{prefix}: {what}", decreasing=False, means=False, symbol=x)
    return [trend_point(table, f"{prefix}: slope of log {what} in {x}", decreasing=False)]


def _advantage_trend(res: Results, decl: dict, x: str) -> list:
    """The per-run cost ratio EM/LREMH grows in ``x`` (k or f), per value of the other (``_rises``)."""
    metric = _metric(decl)
    other = "f" if x == "k" else "k"

    def build(em_m, lr_m, rule):
        t, dataset = _cost_table(res, em_m, lr_m, metric)
        ratio = (t[em_m] / t[lr_m]).rename("ratio").reset_index()
        pts = [
            pt
            for v, g in ratio.groupby(other)
            for pt in _rises(
                g.pivot(index="run", columns=x, values="ratio"),
                f"f={v:g}" if other == "f" else f"k={int(v)}",
                "cost(EM/LREMH)",
                x,
                decl,
            )
        ]
        return _scope(dataset, t, rule), pts, _note(metric)

    return _per_variant(res, decl, "trend", ["{em}", "{lremh}"], build)


def advantage_grows_with_k(res: Results, decl: dict) -> list:
    """Claim "LREMH's efficiency advantage grows with the number of attributes" (Sec. 5.3, Figs. 1–2)."""
    return _advantage_trend(res, decl, "k")


def advantage_grows_with_f(res: Results, decl: dict) -> list:
    """Claim "… and with f" (Sec. 5.3, Figs. 1–2)."""
    return _advantage_trend(res, decl, "f")


def competitive_at_low_dimension(res: Results, decl: dict) -> list:
    """Claim "On Adult, EM is competitive at low dimension" (Sec. 5.3, Fig. 2): EM/(factor·LREMH) cost
    below 1 at the lowest k, per f (paired log ratios; the factor is declared)."""
    metric = _metric(decl)
    factor = float(decl["factor"])

    def build(em_m, lr_m, rule):
        t, dataset = _cost_table(res, em_m, lr_m, metric)
        if t.empty:  # no rows of the metric: no point, the claim is not testable
            return _scope(dataset, t, rule), [], _note(metric)
        k0 = int(t.index.get_level_values("k").min())
        low = t.xs(k0, level="k")
        pts = [
            paired_point(g[em_m], factor * g[lr_m], f"f={f:g}, k={k0}: cost EM/({factor:g}·LREMH)", log=True)
            for f, g in low.groupby(level="f")
        ]
        scope = f"{dataset}; lowest k = {k0}; 'competitive' read as EM's cost below {factor:g}× LREMH's (ours); {rule}"
        return scope, pts, _note(metric) + f". Effect = EM/({factor:g}·LREMH) cost: below 1 means competitive"

    return _per_variant(res, decl, "range", ["{em}", "{lremh}"], build)


def em_cost_grows_with_k(res: Results, decl: dict) -> list:
    """Claim "On Adult, EM degrades (its time grows) as k grows" (Sec. 5.3, Fig. 2): trend of EM's per-run
    log cost in k, one point per f."""
    metric = _metric(decl)

    def build(em_m, lr_m, rule):
        t, dataset = _cost_table(res, em_m, lr_m, metric)
        em_t = t[em_m].rename("cost").reset_index()
        pts = [
            pt
            for f, g in em_t.groupby("f")
            for pt in _rises(g.pivot(index="run", columns="k", values="cost"), f"f={f:g}", "EM cost", "k", decl)
        ]
        return _scope(dataset, t, rule), pts, _note(metric)

    return _per_variant(res, decl, "trend", ["{em}", "{lremh}"], build)
