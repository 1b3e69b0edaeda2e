"""Paper 001 (BSHP / WSHP): the claim functions, which turn a figure's data into the points of
the declared tests (``ldprepro.claims.verdicts``).

On data: ``(data, cities of one data role[, ratio]) -> (points, scope, evidence)``; exact (theory)
claims: ``(data[, ratio]) -> (points, scope, evidence)``. ``papers.bshp.claims`` declares which
claim each of them decides (``CLAIMS``).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from ldprepro.claims import verdicts as V
from ldprepro.domain.histograms import integrated_partition
from ldprepro.papers.bshp.figure_data import FigureData, curve_name
from ldprepro.papers.bshp.runs import BASELINE, collector_for


def _paired(d: FigureData, metric: str, a: tuple, b: tuple, label: str, scale_b: float = 1.0) -> V.Point:
    """Paired test of the mean ``metric`` of curve ``a`` against curve ``b`` (each (dataset,
    mechanism, r, ε)), on the repetition index (``verdicts.ratio_of_means_point``)."""
    sa, sb = d.series(metric, *a), d.series(metric, *b)
    if not sa.index.equals(sb.index):
        raise ValueError(f"bshp {d.figure}: {label}: unequal repetitions {len(sa)} and {len(sb)}")
    return V.ratio_of_means_point(sa.to_numpy(), scale_b * sb.to_numpy(), label)


def scope_text(d: FigureData, cities: list[str], missing: list[str], what: str) -> str:
    names = ", ".join(d.cities[c].get("title", c).split(" (")[0] for c in cities)
    out = f"{names}; {what}"
    if missing:
        out += "; without " + ", ".join(f"{c} ({d.unavailable[d.dataset(c)]})" for c in missing)
    return out


def _reps_note(d: FigureData) -> str:
    t, n = d.n_reps
    return (
        f"n = {n} paired repetitions: the paper's T = {t} (plotted) + {n - t} of ours for the test"
        if n > t
        else f"n = {n} paired repetitions (the paper's T)"
    )


def _theory_ratio_note(d: FigureData, pairs: list[tuple[tuple, tuple]]) -> str:
    """The exact expected-MSE ratios (Lemma 6 / SUE variance) of the compared curves, as a range."""
    r = np.array([d.theory(*a) / d.theory(*b) for a, b in pairs])
    r = r[np.isfinite(r)]
    return "" if not r.size else f"exact expected MSE ratio (Lemma 6) {r.min():.3g}–{r.max():.3g}"


# --- the claim functions: (data, spec, cities of one data role) -> (points, scope, evidence) ----
def vs_baseline(metric: str):
    """Every sampling curve (at every ratio, or at ``ratio`` only) against the baseline at every ε, paired."""

    def decide(d: FigureData, cities: list[str], ratio: float | None = None):
        rs = d.ratios if ratio is None else [ratio]
        pts, pairs = [], []
        for c in cities:
            ds = d.dataset(c)
            for m in d.sampling:
                for r in rs:
                    for e in d.eps:
                        a, b = (ds, m, r, e), (ds, BASELINE, 1.0, e)
                        pairs.append((a, b))
                        pts.append(_paired(d, metric, a, b, f"{c} {curve_name(m, r)} ε={e:g}"))
        what = (
            f"{', '.join(d.sampling)} at r = {', '.join(f'{r:g}' for r in rs)} vs the split baseline, "
            f"ε = {_grid(d.eps)}"
        )
        unit = "MSE" if metric == "mse" else "total-variation distance ½Σ|ĥ−h|/n"
        ev = f"effect = ratio of the mean {unit} (mean over the consumers) method/baseline; {_reps_note(d)}"
        if metric == "mse":
            ev += "; " + _theory_ratio_note(d, pairs)
        return pts, what, ev

    return decide


def _grid(values) -> str:
    v = sorted(float(x) for x in values)
    if len(v) > 3 and np.allclose(np.diff(v), v[1] - v[0]):
        return f"{v[0]:g}–{v[-1]:g} (step {v[1] - v[0]:g})"
    return ", ".join(f"{x:g}" for x in v)


def _steps(eps: list[float]) -> list[tuple[float, float]]:
    return list(zip(eps[:-1], eps[1:]))


def gain_grows(d: FigureData, cities: list[str]):
    """Shape test of 'the improvement is more significant when ε is relatively large' on the
    repetitions: at every step ε → ε' of the grid, the per-repetition ratio MSE_method/MSE_baseline
    is lower at ε' (the gain grows), paired on the repetition (log scale), Holm across the steps."""
    pts = []
    for c in cities:
        ds = d.dataset(c)
        for m in d.sampling:
            for r in d.ratios:
                q = {e: d.series("mse", ds, m, r, e) / d.series("mse", ds, BASELINE, 1.0, e) for e in d.eps}
                for lo, hi in _steps(d.eps):
                    pts.append(
                        V.paired_point(q[hi].to_numpy(), q[lo].to_numpy(), f"{c} {curve_name(m, r)} ε={lo:g}→{hi:g}")
                    )
    return (
        pts,
        f"{', '.join(d.sampling)} at r = {', '.join(f'{r:g}' for r in d.ratios)}, every step of ε = {_grid(d.eps)}",
        (
            "shape test: the gain grows at every step of the ε grid; effect = geometric mean over the repetitions of "
            "(MSE_method/MSE_baseline at the larger ε) / (the same at the smaller ε), below 1 = the improvement "
            f"grows; paired on the repetition, Holm across the steps; {_reps_note(d)}"
        ),
    )


def higher_ratio(d: FigureData, cities: list[str]):
    """The largest ratio against the smallest, per method and ε, paired."""
    hi, lo = d.ratios[-1], d.ratios[0]
    pts, pairs = [], []
    for c in cities:
        ds = d.dataset(c)
        for m in d.sampling:
            for e in d.eps:
                a, b = (ds, m, hi, e), (ds, m, lo, e)
                pairs.append((a, b))
                pts.append(_paired(d, "mse", a, b, f"{c} {m} ε={e:g}"))
    return (
        pts,
        f"{', '.join(d.sampling)}, r = {hi:g} vs r = {lo:g}, ε = {_grid(d.eps)}",
        (
            f"effect = ratio of the mean MSEs, r = {hi:g} over r = {lo:g}; {_reps_note(d)}; "
            + _theory_ratio_note(d, pairs)
        ),
    )


def ratio_trend(d: FigureData, cities: list[str]):
    """Trend of the per-repetition log MSE in r (blocked on the repetition): decreasing."""
    (e,) = d.eps
    pts = []
    for c in cities:
        ds = d.dataset(c)
        for m in d.sampling:
            table = pd.DataFrame({r: d.series("mse", ds, m, r, e) for r in d.ratios})
            pts.append(V.trend_point(table, f"{c} {m}", decreasing=True, log=True))
    return (
        pts,
        f"{', '.join(d.sampling)}, r = {_grid(d.ratios)}, ε = {e:g}",
        (f"effect = slope of log MSE per unit r (negative = falls as r grows), repetition as block; {_reps_note(d)}"),
    )


def halved(d: FigureData, cities: list[str]):
    """MSE(r_max) ≤ ½·MSE(r_min): the paired log-ratio MSE(r_max)/(½·MSE(r_min)) below 0."""
    (e,) = d.eps
    hi, lo = d.ratios[-1], d.ratios[0]
    pts, raw_ratio = [], []
    for c in cities:
        ds = d.dataset(c)
        for m in d.sampling:
            a, b = (ds, m, hi, e), (ds, m, lo, e)
            pts.append(_paired(d, "mse", a, b, f"{c} {m}", scale_b=0.5))
            raw_ratio.append(f"{c} {m} {pts[-1].effect * 0.5:.3g}")
    return (
        pts,
        f"{', '.join(d.sampling)}, r = {lo:g} → {hi:g}, ε = {e:g}",
        (
            f"effect = ratio of the mean MSEs MSE(r = {hi:g}) / (0.5·MSE(r = {lo:g})), below 1 = reduced by more than "
            f"50%; the plain ratios MSE(r = {hi:g})/MSE(r = {lo:g}) are {', '.join(raw_ratio)}; {_reps_note(d)}"
        ),
    )


def same_scale(d: FigureData, cities: list[str]):
    """TOST: MSE(r_min)/MSE(r_max) within the stated factor (same order of magnitude)."""
    (e,) = d.eps
    hi, lo = d.ratios[-1], d.ratios[0]
    margin = float(d.fig.get("same_scale_factor", 10.0))
    pts = []
    for c in cities:
        ds = d.dataset(c)
        for m in d.sampling:
            a, b = d.series("mse", ds, m, lo, e), d.series("mse", ds, m, hi, e)
            pts.append(V.equivalence_point(a.to_numpy(), b.to_numpy(), f"{c} {m}", margin, means=True))
    return (
        pts,
        f"{', '.join(d.sampling)}, r = {lo:g} vs r = {hi:g}, ε = {e:g}",
        (
            f"'same scale' read as: the MSE ratio between the smallest and the largest ratio lies within a factor "
            f"{margin:g} (bshp.{d.figure}.same_scale_factor), tested by two one-sided t-tests on the log ratio of the "
            f"mean MSEs (90% interval); effect = MSE(r = {lo:g})/MSE(r = {hi:g}), ratio of means; {_reps_note(d)}"
        ),
    )


def sweep_vs_baseline(d: FigureData, cities: list[str]):
    (e,) = d.eps
    pts = []
    for c in cities:
        ds = d.dataset(c)
        for m in d.sampling:
            for r in d.ratios:
                pts.append(_paired(d, "mse", (ds, m, r, e), (ds, BASELINE, 1.0, e), f"{c} {m}@{r:g}"))
    return (
        pts,
        f"{', '.join(d.sampling)}, r = {_grid(d.ratios)} vs the split baseline, ε = {e:g}",
        (f"effect = ratio of the mean MSEs method/baseline; {_reps_note(d)}"),
    )


# --- exact (theory) claims: (data) -> (points, scope, evidence) --------------------------------
def _partition(d: FigureData):
    folds = sorted({int(q) for q in d.raw["query"].unique() if q > 0}) if len(d.raw) else []
    return integrated_partition(folds or list(d.folds))


def theorem7(d: FigureData):
    """Theorem 7 against the exact worst-case privacy loss of what the curator sees (uploaded bits
    and which bits were sampled), at every (method, ε, r) of the figure."""
    partition = _partition(d)
    pts = []
    for m in d.sampling:
        for e in d.eps:
            for r in d.ratios:
                col = collector_for(m, partition, e, r, {})
                with np.errstate(invalid="ignore", divide="ignore"):  # 0/0 where WSHP caps a ratio at 1
                    loss = col.privacy_loss_exact()
                claim = col.paper_claimed_epsilon
                pts.append(
                    V.exact_point(
                        f"{m} ε={e:g} r={r:g}",
                        loss <= claim + 1e-9,
                        effect=loss - claim,
                        test="exact worst-case privacy loss (enumeration)",
                        note=f"loss {loss:.4f} vs ε' = {claim:.4f}",
                    )
                )
    return (
        pts,
        f"{', '.join(d.sampling)}, ε = {_grid(d.eps)}, r = {_grid(d.ratios)}",
        (
            "effect = exact worst-case log-likelihood ratio minus the claimed ε'; the curator sees which bits were "
            "sampled, so the loss equals ε, not ε' (the pipeline reports ε as the guarantee)"
        ),
    )


def bandwidth(d: FigureData):
    """Expected bits uploaded per contributor, Σ_j r_j, against the baseline's Σ_i m_i (exact);
    the measured means are quoted."""
    partition = _partition(d)
    base_bits = float(sum(partition.folds))
    pts, measured = [], []
    for m in d.sampling:
        for e in d.eps:
            for r in d.ratios:
                bits = collector_for(m, partition, e, r, {}).expected_bits_per_user
                pts.append(
                    V.exact_point(
                        f"{m} ε={e:g} r={r:g}",
                        bits < base_bits,
                        effect=bits / base_bits,
                        test="exact expected bits per contributor",
                        note=f"{bits:.2f} vs {base_bits:g} bits",
                    )
                )
    if len(d.raw):
        b = d.raw[d.raw["metric"] == "bits_per_user"].groupby(["mechanism", "r"])["value"].mean()
        measured = [f"{curve_name(m, r)} {v:.2f}" for (m, r), v in b.items()]
    return (
        pts,
        f"{', '.join(d.sampling)}, r = {_grid(d.ratios)}",
        (
            f"effect = expected bits per contributor / the baseline's {base_bits:g} (K·r̄ with K = {partition.K})"
            + (f"; measured means over the runs: {', '.join(measured)}" if measured else "")
        ),
    )


def theory_vs_baseline(d: FigureData, cities: list[str], ratio: float):
    """Exact expected MSE (Lemma 6 on each city's true counts) of every sampling method at ``ratio``
    against the baseline's, at every ε, on the cities of one data role: below 1 everywhere for the
    claim to hold."""
    pts = []
    for c in cities:
        ds = d.dataset(c)
        for m in d.sampling:
            for e in d.eps:
                q = d.theory(ds, m, ratio, e) / d.theory(ds, BASELINE, 1.0, e)
                if np.isfinite(q):
                    pts.append(
                        V.exact_point(
                            f"{c} {curve_name(m, ratio)} ε={e:g}",
                            q < 1,
                            effect=q,
                            test="exact expected MSE (Lemma 6)",
                            note=f"ratio {q:.3f}",
                        )
                    )
    return (
        pts,
        f"{', '.join(d.sampling)} at r = {ratio:g}, ε = {_grid(d.eps)}",
        (
            "effect = exact expected MSE ratio method/baseline from the closed forms on each city's true interval "
            "counts (no sampling noise); decides the points the repetitions cannot (ratios within a few % of 1)"
        ),
    )


def theory_gain_grows(d: FigureData, cities: list[str]):
    """The shape test of ``gain_grows`` on the exact expected gain G(ε) = E[MSE_baseline]/E[MSE_method]
    (Lemma 6 on each city's true counts), checked step by step: a curve holds iff G rises at every
    step ε → ε' of the grid; effect = the smallest step ratio G(ε')/G(ε) (below 1: a falling step)."""
    pts = []
    for c in cities:
        ds = d.dataset(c)
        for m in d.sampling:
            for r in d.ratios:
                g = np.array([d.theory(ds, BASELINE, 1.0, e) / d.theory(ds, m, r, e) for e in d.eps])
                if not np.isfinite(g).all():
                    continue
                step = g[1:] / g[:-1]
                falls = [f"{lo:g}→{hi:g}" for (lo, hi), s_ in zip(_steps(d.eps), step) if not s_ > 1]
                peak = d.eps[int(np.argmax(g))]
                pts.append(
                    V.exact_point(
                        f"{c} {curve_name(m, r)}",
                        not falls,
                        effect=float(step.min()),
                        test="exact expected MSE (Lemma 6), the gain at every step of ε",
                        note=f"gain {g[0]:.2f} at ε={d.eps[0]:g}, peak {g.max():.2f} at ε={peak:g}, "
                        f"{g[-1]:.2f} at ε={d.eps[-1]:g}"
                        + (f"; does not grow at ε = {_list(falls)}" if falls else "; grows at every step"),
                    )
                )
                pts[-1] = dataclasses.replace(pts[-1], null=1.0, scale="smallest step ratio of the exact expected gain")
    return (
        pts,
        f"{', '.join(d.sampling)} at r = {', '.join(f'{r:g}' for r in d.ratios)}, every step of ε = {_grid(d.eps)}",
        (
            "shape test on the exact expected gain E[MSE_baseline]/E[MSE_method] from the closed forms on each city's "
            "true interval counts (no sampling noise): it must rise at every step of the ε grid; effect = the "
            "smallest step ratio (below 1 = the gain falls somewhere). The sampling noise n_j(1 − r)/r does not "
            "vanish as ε grows, the baseline's privacy noise does"
        ),
    )


def _list(items: list[str], k: int = 6) -> str:
    return ", ".join(items[:k]) + (f" (+{len(items) - k})" if len(items) > k else "")


def theory_agreement(d: FigureData, cities: list[str], margin: float):
    """The Monte-Carlo check of the exact rows: per method, each repetition's MSE over its exact
    expectation (Lemma 6 / the SUE variance; mean 1), pooled over the role's cities, ratios and ε;
    TOST of the mean within ×``margin``."""
    pts = []
    for m in [*d.sampling, BASELINE]:
        z, n_curves = [], 0
        for c in cities:
            ds = d.dataset(c)
            for r in [1.0] if m == BASELINE else d.ratios:
                for e in d.eps:
                    t = d.theory(ds, m, r, e)
                    if np.isfinite(t) and t > 0:
                        z.append(d.series("mse", ds, m, r, e).to_numpy() / t)
                        n_curves += 1
        if z:
            v = np.concatenate(z)
            label = f"{m}: {v.size} repetition ratios pooled over {n_curves} curve points"
            pts.append(V.equivalence_point(v, np.ones_like(v), label, margin, means=True))
    return (
        pts,
        f"{', '.join([*d.sampling, BASELINE])}, r = {_grid(d.ratios)}, ε = {_grid(d.eps)}",
        (
            "pooled per method: each repetition's MSE divided by the exact expected MSE of its curve point (mean 1 "
            f"when the implementation follows Lemma 6); effect = their mean; TOST with margin ×{margin:g}; "
            + _reps_note(d)
        ),
    )
