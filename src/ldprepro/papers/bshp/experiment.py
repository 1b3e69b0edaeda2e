"""Paper 001 (BSHP / WSHP) experiments: jobs, claims and figures.

Config (``config.yaml``, key ``bshp``): ``protocol`` (folds, estimator, WSHP weights, MSE unit,
simulation path), ``cities`` (city → dataset, title, ``data_role``: ``paper`` or ``substitute``)
and ``fig1`` … ``fig5``. Every figure entry names its cities, methods, ε list, sampling ratios and
repetitions (``reps`` = the paper's T, which the figure plots; ``claim_reps`` = the repetitions
run for the claims' tests, the extra ones ours); ``kind`` is ``values`` (Figs. 1–3: published vs
true histograms), ``mse_eps`` (Fig. 4) or ``mse_ratio`` (Fig. 5).

One job = (figure, dataset, method); it loops ε × r × repetitions, each with its own Generator
keyed by the job's parameters. Rows (tidy, ``results.tidy_frame``):

* ``mse`` (query 0 = mean over the consumers; query m = the m-fold consumer):
  (1/m_i) Σ_l (ĥ_{i,l} − h_{i,l})², over frequencies (ĥ/n) or counts (``protocol.mse_over``);
* ``mse_theory``: its exact expectation from Lemma 6 / the SUE variance (HT estimator only);
* ``bits_per_user``: bits uploaded per contributor in that run (Σ_j N_j / n; baseline Σ m_i);
* ``estimate`` / ``truth`` per (query, bin) for ``values`` figures.
Parameter columns: ``r`` (sampling ratio; 1 for the baseline, which uploads every bit),
``eps_paper_claim`` (Theorem 7's ε', NaN for the baseline; the guarantee is ``eps``),
``n_users``, ``unit``, ``estimator``, ``simulation``, ``query``, ``bin``, ``extra_rep`` (True for the
repetitions beyond the paper's T, run for the claims' tests only).

Claims (Sec. 6 of the paper, issue 13): each is declared once in ``CLAIMS`` with its words, kind
and test, and decided by ``ldprepro.claims.verdicts`` on the per-repetition results (``judge_figure``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ldprepro.claims import verdicts as V
from ldprepro.domain.histograms import BitSampling, SplitBaseline, integrated_partition, wshp_ratios
from ldprepro.pipeline.seeding import rng_for

PAPER = "bshp"
BASELINE = "split_baseline"
METHODS = (BASELINE, "bshp", "wshp")
NO_BIN = -1


# --------------------------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------------------------


def salary_positions(df: pd.DataFrame, card: dict, column: str, max_users: int | None = None) -> np.ndarray:
    """(x − v_min)/(v_max − v_min) of the salary column, with v_min, v_max the card's domain (the
    data's min and max, spec §8.1)."""
    cols = {c["name"]: c for c in card.get("columns", [])}
    if column not in cols or cols[column].get("type") != "numeric":
        raise ValueError(
            f"dataset {card.get('dataset')!r}: no numeric column {column!r} "
            f"(bshp.protocol.column); numeric columns: "
            f"{[c for c, v in cols.items() if v.get('type') == 'numeric']}"
        )
    lo, hi = (float(v) for v in cols[column]["domain"])
    if not hi > lo:
        raise ValueError(f"dataset {card.get('dataset')!r}: column {column!r} has an empty domain [{lo}, {hi}]")
    x = df[column].to_numpy(dtype=float)
    if max_users:
        x = x[: int(max_users)]
    return (x - lo) / (hi - lo)


# --------------------------------------------------------------------------------------------
# one job
# --------------------------------------------------------------------------------------------


def _collector(method: str, partition, eps: float, r: float, protocol: dict):
    if method == BASELINE:
        return SplitBaseline(partition, eps)
    if method == "bshp":
        return BitSampling(partition, eps, r, protocol.get("estimator", "horvitz_thompson"))
    if method == "wshp":
        ratios = wshp_ratios(partition, r, eps, protocol.get("wshp_weights", "equal"))
        return BitSampling(partition, eps, ratios, protocol.get("estimator", "horvitz_thompson"))
    raise ValueError(f"unknown bshp method {method!r}; choose one of {METHODS}")


def run_once(
    collector, intervals: np.ndarray, counts: np.ndarray, rng: np.random.Generator, simulation: str
) -> tuple[list[np.ndarray], float]:
    """One collection: (each consumer's estimated counts, bits uploaded per contributor)."""
    n = intervals.shape[0]
    partition = collector.partition
    if isinstance(collector, SplitBaseline):
        if simulation == "per_user":
            support = collector.aggregate(collector.perturb(intervals, rng))
        else:
            support = collector.sample_aggregates(counts, rng)
        return collector.estimate_counts(support, n), float(collector.bits_per_user)
    if simulation == "per_user":
        C, N = collector.aggregate(*collector.perturb(intervals, rng))
    else:
        C, N = collector.sample_aggregates(counts, rng)
    return partition.query_answers(collector.estimate_counts(C, N, n)), float(N.sum()) / n


def run_job(
    fig: dict, protocol: dict, dataset: str, method: str, positions: np.ndarray, seed: int, figure: str
) -> list[dict]:
    """Every ε × r × repetition of ``method`` on one dataset's positions in [0, 1]."""
    simulation = protocol.get("simulation", "sufficient_statistics")
    if simulation not in ("sufficient_statistics", "per_user"):
        raise ValueError(f"bshp.protocol.simulation must be sufficient_statistics or per_user, got {simulation!r}")
    unit = protocol.get("mse_over", "frequency")
    partition = integrated_partition(protocol["folds"])
    intervals = partition.interval_of(positions)
    n = intervals.shape[0]
    counts = np.bincount(intervals, minlength=partition.K)
    truth = partition.query_answers(counts)
    scale = float(n) if unit == "frequency" else 1.0
    ratios = [1.0] if method == BASELINE else [float(r) for r in fig["ratios"]]
    estimator = protocol.get("estimator", "horvitz_thompson")
    paper_reps = int(fig["reps"])
    n_reps = max(paper_reps, int(fig.get("claim_reps", paper_reps)))
    rows = []
    for eps in fig["eps"]:
        eps = float(eps)
        for r in ratios:
            col = _collector(method, partition, eps, r, protocol)
            common = {
                "paper": PAPER,
                "figure": figure,
                "dataset": dataset,
                "mechanism": method,
                "eps": eps,
                "r": r,
                "eps_paper_claim": np.nan if method == BASELINE else col.paper_claimed_epsilon,
                "n_users": n,
                "unit": unit,
                "estimator": "split" if method == BASELINE else estimator,
                "simulation": simulation,
                "extra_rep": False,
            }
            if method == BASELINE or estimator == "horvitz_thompson":
                var = [v / scale**2 for v in col.query_variances(counts)]
                per_query = [float(v.mean()) for v in var]
                rows.append(
                    {
                        **common,
                        "query": 0,
                        "bin": NO_BIN,
                        "rep": 0,
                        "metric": "mse_theory",
                        "value": float(np.mean(per_query)),
                    }
                )
                rows += [
                    {**common, "query": m, "bin": NO_BIN, "rep": 0, "metric": "mse_theory", "value": v}
                    for m, v in zip(partition.folds, per_query)
                ]
            for rep in range(n_reps):
                rng = rng_for(
                    seed,
                    {
                        "paper": PAPER,
                        "figure": figure,
                        "dataset": dataset,
                        "mechanism": method,
                        "eps": eps,
                        "r": r,
                        "rep": rep,
                    },
                )
                est, bits = run_once(col, intervals, counts, rng, simulation)
                common["extra_rep"] = rep >= paper_reps
                mse = [float(np.mean(((e - h) / scale) ** 2)) for e, h in zip(est, truth)]
                rows.append(
                    {**common, "query": 0, "bin": NO_BIN, "rep": rep, "metric": "mse", "value": float(np.mean(mse))}
                )
                rows += [
                    {**common, "query": m, "bin": NO_BIN, "rep": rep, "metric": "mse", "value": v}
                    for m, v in zip(partition.folds, mse)
                ]
                rows.append({**common, "query": 0, "bin": NO_BIN, "rep": rep, "metric": "bits_per_user", "value": bits})
                # shape of one publication: total-variation distance ½ Σ_l |ĥ_l − h_l| / n
                tv = [float(0.5 * np.abs(e - h).sum() / n) for e, h in zip(est, truth)]
                rows.append(
                    {
                        **common,
                        "query": 0,
                        "bin": NO_BIN,
                        "rep": rep,
                        "metric": "tv_distance",
                        "value": float(np.mean(tv)),
                    }
                )
                rows += [
                    {**common, "query": m, "bin": NO_BIN, "rep": rep, "metric": "tv_distance", "value": v}
                    for m, v in zip(partition.folds, tv)
                ]
                if fig["kind"] == "values":
                    for m, e, h in zip(partition.folds, est, truth):
                        for l in range(m):
                            rows.append(
                                {
                                    **common,
                                    "query": m,
                                    "bin": l,
                                    "rep": rep,
                                    "metric": "estimate",
                                    "value": float(e[l] / scale),
                                }
                            )
                            rows.append(
                                {
                                    **common,
                                    "query": m,
                                    "bin": l,
                                    "rep": rep,
                                    "metric": "truth",
                                    "value": float(h[l] / scale),
                                }
                            )
    return rows


# --------------------------------------------------------------------------------------------
# claims (issue 13): each claim declared once, decided by a declared test on per-repetition data
# --------------------------------------------------------------------------------------------
#
# Pairing. Within a repetition every method sees the same users: a job reads the whole city
# (or its first ``max_users`` rows, the same for every method), so the population is common;
# only the mechanism's own noise differs, drawn from a Generator keyed by (method, ε, r, rep).
# The noise of two methods is therefore independent, and pairing on the repetition index is
# valid but brings no variance reduction (the data, the only shared randomness, are fixed).
# ``FigureData`` checks that every method of a dataset saw the same number of users and the
# same repetitions before pairing.


def curve_name(mechanism: str, r: float) -> str:
    return mechanism if mechanism == BASELINE else f"{mechanism}@{r:g}"


@dataclass
class FigureData:
    """One figure's per-repetition results, indexed for the claims.

    ``raw``: the tidy job rows of every available city (the paper's T repetitions and ours:
    ``extra_rep``); ``cities``: {city: entry} of the figure with each entry's ``data_role``
    (``paper`` or ``substitute``); ``unavailable``: {dataset: reason}; ``folds``: the consumers'
    queries (protocol), needed by the closed-form claims when no results exist."""

    raw: pd.DataFrame
    fig: dict
    figure: str
    cities: dict
    unavailable: dict
    folds: tuple = (3, 5, 7)

    def __post_init__(self):
        for name, city in self.cities.items():
            role = city.get("data_role")
            if role not in ("paper", "substitute"):
                raise ValueError(
                    f"config.yaml: bshp.cities.{name}.data_role must be 'paper' or 'substitute', got {role!r}"
                )
        raw = self.raw
        self._series: dict[tuple, pd.Series] = {}
        self._theory: dict[tuple, float] = {}
        if len(raw):
            users = raw.groupby("dataset")["n_users"].nunique()
            if (users > 1).any():
                raise ValueError(
                    f"bshp {self.figure}: the methods of {list(users[users > 1].index)} saw different "
                    "numbers of users; the comparisons would not be paired"
                )
            keys = ["metric", "query", "dataset", "mechanism", "r", "eps"]
            per = raw[raw["metric"].isin(["mse", "tv_distance", "bits_per_user"])]
            for k, g in per.groupby(keys, sort=False):
                self._series[k] = g.set_index("rep")["value"].sort_index()
            th = raw[raw["metric"] == "mse_theory"]
            self._theory = {k: float(v) for k, v in th.groupby(keys)["value"].first().items()}
            reps = {k: tuple(s.index) for k, s in self._series.items() if k[0] == "mse" and k[1] == 0}
            bad = {k for k, v in reps.items() if v != next(iter(reps.values()))}
            if bad:
                raise ValueError(
                    f"bshp {self.figure}: the curves {sorted(bad)[:3]} have other repetitions than "
                    f"{next(iter(reps))}; paired tests need the same repetition indices"
                )

    # --- lookups -------------------------------------------------------------------------------
    def series(self, metric: str, dataset: str, mechanism: str, r: float, eps: float, query: int = 0) -> pd.Series:
        key = (metric, query, dataset, mechanism, 1.0 if mechanism == BASELINE else float(r), float(eps))
        if key not in self._series:
            raise ValueError(
                f"bshp {self.figure}: no per-repetition {metric} for {dataset} {curve_name(mechanism, r)} "
                f"at ε = {eps:g} (query {query})"
            )
        return self._series[key]

    def theory(self, dataset: str, mechanism: str, r: float, eps: float) -> float:
        key = ("mse_theory", 0, dataset, mechanism, 1.0 if mechanism == BASELINE else float(r), float(eps))
        return self._theory.get(key, np.nan)

    @property
    def n_reps(self) -> tuple[int, int]:
        """(the paper's T, repetitions run) of this figure's results."""
        if not len(self.raw):
            return int(self.fig["reps"]), 0
        return int(self.fig["reps"]), int(self.raw["rep"].nunique())

    @property
    def sampling(self) -> list[str]:
        return [m for m in self.fig["methods"] if m != BASELINE]

    @property
    def eps(self) -> list[float]:
        return [float(e) for e in self.fig["eps"]]

    @property
    def ratios(self) -> list[float]:
        return sorted(float(r) for r in self.fig["ratios"])

    def dataset(self, city: str) -> str:
        return self.cities[city]["dataset"]

    def groups(self) -> list[tuple[str, list[str], list[str]]]:
        """[(data role, available cities, unavailable cities)] of the figure, paper data first."""
        out = []
        for role in ("paper", "substitute"):
            names = [c for c in self.fig["cities"] if self.cities[c]["data_role"] == role]
            if names:
                out.append(
                    (
                        role,
                        [c for c in names if self.dataset(c) not in self.unavailable],
                        [c for c in names if self.dataset(c) in self.unavailable],
                    )
                )
        return out


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


def _paired(d: FigureData, metric: str, a: tuple, b: tuple, label: str, scale_b: float = 1.0) -> V.Point:
    """Paired test of the mean ``metric`` of curve ``a`` against curve ``b`` (each (dataset,
    mechanism, r, ε)), on the repetition index (``verdicts.ratio_of_means_point``)."""
    sa, sb = d.series(metric, *a), d.series(metric, *b)
    if not sa.index.equals(sb.index):
        raise ValueError(f"bshp {d.figure}: {label}: unequal repetitions {len(sa)} and {len(sb)}")
    return V.ratio_of_means_point(sa.to_numpy(), scale_b * sb.to_numpy(), label)


def _scope(d: FigureData, cities: list[str], missing: list[str], what: str) -> str:
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
def _vs_baseline(metric: str):
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


def _gain_trend(d: FigureData, cities: list[str]):
    """Trend in ε of the per-repetition ratio MSE_method / MSE_baseline (blocked on the repetition):
    'more significant improvement at large ε' = the ratio falls as ε grows."""
    pts = []
    for c in cities:
        ds = d.dataset(c)
        for m in d.sampling:
            for r in d.ratios:
                table = pd.DataFrame(
                    {e: d.series("mse", ds, m, r, e) / d.series("mse", ds, BASELINE, 1.0, e) for e in d.eps}
                )
                pts.append(V.trend_point(table, f"{c} {curve_name(m, r)}", decreasing=True, log=True))
    return (
        pts,
        f"{', '.join(d.sampling)} at r = {', '.join(f'{r:g}' for r in d.ratios)}, ε = {_grid(d.eps)}",
        (
            "effect = slope of log(MSE_method/MSE_baseline) per unit ε (negative = the improvement grows with ε), "
            f"repetition as block; {_reps_note(d)}"
        ),
    )


def _higher_ratio(d: FigureData, cities: list[str]):
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


def _ratio_trend(d: FigureData, cities: list[str]):
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


def _halved(d: FigureData, cities: list[str]):
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


def _same_scale(d: FigureData, cities: list[str]):
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


def _sweep_vs_baseline(d: FigureData, cities: list[str]):
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


def _theorem7(d: FigureData):
    """Theorem 7 against the exact worst-case privacy loss of what the curator sees (uploaded bits
    and which bits were sampled), at every (method, ε, r) of the figure."""
    partition = _partition(d)
    pts = []
    for m in d.sampling:
        for e in d.eps:
            for r in d.ratios:
                col = _collector(m, partition, e, r, {})
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


def _bandwidth(d: FigureData):
    """Expected bits uploaded per contributor, Σ_j r_j, against the baseline's Σ_i m_i (exact);
    the measured means are quoted."""
    partition = _partition(d)
    base_bits = float(sum(partition.folds))
    pts, measured = [], []
    for m in d.sampling:
        for e in d.eps:
            for r in d.ratios:
                bits = _collector(m, partition, e, r, {}).expected_bits_per_user
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


def _theory_vs_baseline(d: FigureData, ratio: float):
    """Exact expected MSE (Lemma 6 on each city's true counts) of every sampling method at ``ratio``
    against the baseline's, at every ε: below 1 everywhere for the claim to hold."""
    pts, avail = [], [c for c in d.fig["cities"] if d.dataset(c) not in d.unavailable]
    for c in avail:
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
        _scope(d, avail, [], f"{', '.join(d.sampling)} at r = {ratio:g}, ε = {_grid(d.eps)}"),
        (
            "effect = exact expected MSE ratio method/baseline from the closed forms on each city's true interval "
            "counts (no sampling noise); decides the points the repetitions cannot (ratios within a few % of 1)"
        ),
    )


def _theory_gain_trend(d: FigureData):
    """Exact expected gain E[MSE_baseline]/E[MSE_method] (Lemma 6 on each city's true counts):
    least-squares slope of its log in ε over the figure's grid; holds where it is positive."""
    pts = []
    for c in d.fig["cities"]:
        ds = d.dataset(c)
        if ds in d.unavailable:
            continue
        for m in d.sampling:
            for r in d.ratios:
                g = np.array([d.theory(ds, BASELINE, 1.0, e) / d.theory(ds, m, r, e) for e in d.eps])
                if not np.isfinite(g).all():
                    continue
                slope = float(np.polyfit(d.eps, np.log(g), 1)[0])
                peak = d.eps[int(np.argmax(g))]
                pts.append(
                    V.exact_point(
                        f"{c} {curve_name(m, r)}",
                        slope > 0,
                        effect=slope,
                        test="exact expected MSE (Lemma 6), slope of the log gain in ε",
                        note=f"gain {g[0]:.2f} at ε={d.eps[0]:g}, peak {g.max():.2f} at ε={peak:g}, "
                        f"{g[-1]:.2f} at ε={d.eps[-1]:g}",
                    )
                )
    avail = [c for c in d.fig["cities"] if d.dataset(c) not in d.unavailable]
    return (
        pts,
        _scope(
            d, avail, [], f"{', '.join(d.sampling)} at r = {', '.join(f'{r:g}' for r in d.ratios)}, ε = {_grid(d.eps)}"
        ),
        (
            "effect = least-squares slope of log(E[MSE_baseline]/E[MSE_method]) per unit ε from the closed forms on "
            "each city's true interval counts (no sampling noise); positive = the expected improvement grows with ε. "
            "The sampling noise n_j(1 − r)/r does not vanish as ε grows, the baseline's privacy noise does"
        ),
    )


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
            _vs_baseline("mse"),
        ),
        ClaimSpec(
            "shape",
            "The proposed algorithms achieve more accurate shapes for histograms than the baseline",
            "pairwise",
            "paired test on per-repetition log ratios of the total-variation distance to the "
            "true histogram, each method vs the baseline",
            _vs_baseline("tv_distance"),
        ),
        ClaimSpec(
            "bandwidth",
            "Only part of the bits is collected under sampling (bandwidth saving)",
            "closed-form",
            "exact expected bits per contributor vs the baseline's",
            _bandwidth,
            split=False,
        ),
        ClaimSpec("theorem7", THEOREM7, "closed-form", "exact worst-case privacy loss", _theorem7, split=False),
    ),
    "mse_eps": (
        ClaimSpec(
            "reduce",
            "The proposed algorithms can reduce the MSE for histograms (compared with the baseline, "
            "every ε and ratio of the figure)",
            "range",
            "paired test on per-repetition log MSE ratios at each (method, r, ε), Holm across the points",
            _vs_baseline("mse"),
        ),
        ClaimSpec(
            "reduce_per_ratio",
            "(ours: the claim above split by sampling ratio, r = {r:g}) The proposed "
            "algorithms reduce the MSE compared with the baseline at every ε",
            "range",
            "paired test on per-repetition log MSE ratios at each (method, ε), Holm across the points",
            _vs_baseline("mse"),
            per_ratio=True,
        ),
        ClaimSpec(
            "reduce_per_ratio_theory",
            "(ours: the claim above split by sampling ratio, r = {r:g}, exact "
            "expected MSE, Lemma 6) The proposed algorithms reduce the MSE compared with the baseline at every "
            "ε",
            "closed-form",
            "exact expected MSE ratio at each (city, method, ε)",
            _theory_vs_baseline,
            split=False,
            per_ratio=True,
        ),
        ClaimSpec(
            "larger_eps",
            "The improvement is more significant when the privacy budget is relatively large",
            "trend",
            "regression slope of per-repetition log(MSE_method/MSE_baseline) on ε, repetition as block",
            _gain_trend,
        ),
        ClaimSpec(
            "larger_eps_theory",
            "The improvement is more significant when the privacy budget is relatively "
            "large (exact expected MSE, Lemma 6)",
            "closed-form",
            "slope of the exact log expected gain in ε",
            _theory_gain_trend,
            split=False,
        ),
        ClaimSpec(
            "higher_ratio",
            "A higher sampling ratio can improve the general performance (r = 0.8 beats r = 0.4)",
            "range",
            "paired test on per-repetition log MSE ratios at each (method, ε), Holm across the points",
            _higher_ratio,
        ),
        ClaimSpec("theorem7", THEOREM7, "closed-form", "exact worst-case privacy loss", _theorem7, split=False),
    ),
    "mse_ratio": (
        ClaimSpec(
            "improves",
            "The general performance is improved [as the sampling ratio grows from 0.3 to 0.7] for all three datasets",
            "trend",
            "regression slope of per-repetition log MSE on r, repetition as block",
            _ratio_trend,
        ),
        ClaimSpec(
            "halved",
            "The MSE value is reduced by at least 50% (San Francisco)",
            "pairwise",
            "paired test of the log-ratio MSE(r_max)/(0.5·MSE(r_min)) against 0",
            _halved,
            focus=True,
        ),
        ClaimSpec(
            "same_scale",
            "However, the performance actually stays on the same scale for each dataset",
            "equivalence",
            "TOST on per-repetition log MSE ratios with the stated margin",
            _same_scale,
        ),
        ClaimSpec(
            "sweep_vs_baseline",
            "(ours, not a claim of the paper) The sampling methods beat the split baseline at every ratio of the sweep",
            "range",
            "paired test on per-repetition log MSE ratios at each (method, r), Holm across the points",
            _sweep_vs_baseline,
        ),
        ClaimSpec("theorem7", THEOREM7, "closed-form", "exact worst-case privacy loss", _theorem7, split=False),
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
                            _scope(d, missing, [], "—"),
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
                        _scope(d, cities, missing, what),
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


# --------------------------------------------------------------------------------------------
# figures
# --------------------------------------------------------------------------------------------


def panel_title(city: dict, card: dict | None, n_users: int | None) -> str:
    title = city.get("title", city["dataset"])
    if card and card.get("sample"):
        title += "\nSAMPLE, not the paper's full data"
    if n_users:
        title += f" (n = {n_users:,})"
    return title


def _curve_style(mechanism: str, r: float, ratios: list[float]):
    from ldprepro.report.plotting import style

    st = style(mechanism)
    label = st["label"] if mechanism == BASELINE else f"{st['label']}, r = {r:g}"
    ls = "-"
    if mechanism != BASELINE and len(ratios) > 1 and r != max(ratios):
        ls = "--"
    return {**st, "label": label, "ls": ls}


def plot_mse_figure(
    summary: pd.DataFrame,
    fig_cfg: dict,
    cities: dict,
    cards: dict,
    unavailable: dict,
    title: str,
    png,
    svg=None,
    claims=None,
) -> None:
    """Fig. 4 (x = ε) or Fig. 5 (x = r, baseline as a flat reference line): one panel per city with
    data, then the unavailable cities as one-line notices; one legend right of the panels."""
    import matplotlib.pyplot as plt

    from ldprepro.report.plotting import not_available_panel, save_figure, set_suptitle, shared_legend

    x = "eps" if fig_cfg["kind"] == "mse_eps" else "r"
    names = [n for n in fig_cfg["cities"] if cities[n]["dataset"] not in unavailable]
    missing = [n for n in fig_cfg["cities"] if cities[n]["dataset"] in unavailable]
    ncols = max(1, len(names) or len(missing))
    heights = ([4.0] if names else []) + [0.22] * len(missing)  # one full-width line per missing city
    fig = plt.figure(figsize=(4.8 * ncols, sum(heights) + 0.8), layout="constrained")
    grid = fig.add_gridspec(len(heights), ncols, height_ratios=heights)
    s = summary[(summary["metric"].isin(["mse", "mse_theory"])) & (summary["query"] == 0)] if len(summary) else summary
    ratios = [float(r) for r in fig_cfg["ratios"]]
    axes, drew_theory = [], False
    for i, name in enumerate(names):
        ax = fig.add_subplot(grid[0, i])
        axes.append(ax)
        city = cities[name]
        ds = city["dataset"]
        g = s[s["dataset"] == ds]
        n_users = int(g["n_users"].iloc[0]) if len(g) else None
        keys = ["mechanism", "r"] if x == "eps" else ["mechanism"]
        order = {m: i for i, m in enumerate(fig_cfg["methods"])}
        groups = sorted(g.groupby(keys), key=lambda kv: (order.get(kv[0][0], 99), -kv[1]["r"].iloc[0]))
        for key, c in groups:
            mech, r = key[0], float(c["r"].iloc[0])
            st = _curve_style(mech, r if x == "eps" else max(ratios), ratios)
            if x == "r" and mech != BASELINE:
                st["label"] = st["label"].split(",")[0]
            meas = c[c["metric"] == "mse"].sort_values(x)
            theory = c[c["metric"] == "mse_theory"].sort_values(x)
            if x == "r" and mech == BASELINE:
                ax.axhline(float(meas["mean"].iloc[0]), color=st["color"], label=f"{st['label']}, every bit uploaded")
                ax.axhspan(float(meas["ci_low"].iloc[0]), float(meas["ci_high"].iloc[0]), color=st["color"], alpha=0.15)
                continue
            ax.plot(
                meas[x],
                meas["mean"],
                marker=st["marker"],
                mfc=st["mfc"],
                color=st["color"],
                ls=st["ls"],
                label=st["label"],
            )
            ax.fill_between(
                meas[x],
                meas["ci_low"].clip(lower=meas["mean"] * 1e-3),
                meas["ci_high"],
                color=st["color"],
                alpha=0.15,
                lw=0,
            )
            if len(theory):
                ax.plot(theory[x], theory["mean"], ls=":", color=st["color"], lw=0.9, alpha=0.9)
                drew_theory = True
        ax.set_yscale("log")
        ax.set_title(panel_title(city, cards.get(ds), n_users))
        ax.set_xlabel("total privacy budget ε" if x == "eps" else "sampling ratio r")
        unit = g["unit"].iloc[0] if len(g) else "frequency"
        ax.set_ylabel(f"MSE of the consumers' histograms ({unit})")
    for j, name in enumerate(missing):
        city = cities[name]
        not_available_panel(
            fig.add_subplot(grid[len(heights) - len(missing) + j, :]),
            city.get("title", city["dataset"]),
            unavailable[city["dataset"]],
        )
    shared_legend(fig, axes)
    key = "markers: mean of the runs with 95% CI band" + ("; dotted: Lemma 6 theory" if drew_theory else "")
    set_suptitle(fig, f"{title} ({key})")
    save_figure(fig, png, svg, claims=claims)


def _edge_labels(m: int) -> list[str]:
    """Labels for the m + 1 bin edges of an m-fold query, as fractions of [v_min, v_max] (every other
    one when there are more than 6 bins, so they stay horizontal and legible)."""
    edges = np.linspace(0, 1, m + 1)
    every = 1 if m <= 6 else 2
    return [f"{e:.2g}" if k % every == 0 or k == m else "" for k, e in enumerate(edges)]


def plot_values_figure(
    summary: pd.DataFrame,
    fig_cfg: dict,
    cities: dict,
    cards: dict,
    unavailable: dict,
    title: str,
    png,
    svg=None,
    claims=None,
) -> None:
    """Figs. 1–3: per query (panel), the true histogram and each method's published histogram (mean
    over the runs, error bar ± 1 sd of one publication)."""
    import matplotlib.pyplot as plt

    from ldprepro.report.plotting import not_available_panel, save_figure, set_suptitle, shared_legend

    (name,) = fig_cfg["cities"]
    city = cities[name]
    ds = city["dataset"]
    folds = sorted({int(q) for q in summary.loc[summary["metric"] == "estimate", "query"]}) if len(summary) else []
    if ds in unavailable or not folds:
        fig, ax = plt.subplots(figsize=(6.0, 0.8), layout="constrained")
        not_available_panel(ax, city.get("title", ds), unavailable.get(ds, "no results"))
        set_suptitle(fig, title)
        save_figure(fig, png, svg, claims=claims)
        return
    ncols = len(folds)
    fig, axes = plt.subplots(
        2,
        ncols,
        figsize=(4.8 * ncols, 6.6),
        squeeze=False,
        sharex="col",
        gridspec_kw={"height_ratios": [3, 2]},
        layout="constrained",
    )
    est = summary[summary["metric"] == "estimate"]
    tru = summary[summary["metric"] == "truth"]
    n_users = int(est["n_users"].iloc[0])
    curves = list(est.groupby(["mechanism", "r"], sort=False).groups)
    order = {m: i for i, m in enumerate(fig_cfg["methods"])}
    curves.sort(key=lambda k: (order.get(k[0], 99), -k[1]))
    ratios = sorted({float(r) for mech, r in curves if mech != BASELINE})
    width = 0.8 / (len(curves) + 1)
    unit = "frequency" if est["unit"].iloc[0] == "frequency" else "count"
    for ax, err_ax, m in zip(axes[0], axes[1], folds):
        t = tru[tru["query"] == m].groupby("bin")["mean"].first().sort_index()
        bins = t.index.to_numpy()
        ax.bar(
            bins - 0.4 + width / 2, t.to_numpy(), width, color="white", edgecolor="black", lw=0.8, label="ground truth"
        )
        for k, (mech, r) in enumerate(curves):
            e = est[(est["query"] == m) & (est["mechanism"] == mech) & (est["r"] == r)].sort_values("bin")
            vals = e["mean"].to_numpy()
            if fig_cfg.get("clip_for_plot", False):
                vals = np.clip(vals, 0, None)
            st = _curve_style(mech, r, ratios)
            # the smaller sampling ratio of a method: hatched bars in the method's colour
            hatch = "///" if st["ls"] != "-" else None
            pos = e["bin"].to_numpy() - 0.4 + width * (k + 1.5)
            for a, y in ((ax, vals), (err_ax, e["mean"].to_numpy() - t.reindex(e["bin"]).to_numpy())):
                a.bar(
                    pos,
                    y,
                    width,
                    yerr=e["std"].to_numpy(),
                    color=st["color"],
                    alpha=0.85,
                    hatch=hatch,
                    edgecolor="white" if hatch else None,
                    lw=0,
                    label=st["label"] if a is ax else None,
                    error_kw={"lw": 0.7, "capsize": 1.5},
                )
        for a in (ax, err_ax):
            a.set_xticks(np.arange(m + 1) - 0.5, _edge_labels(m))
            a.set_xlim(-0.5, m - 0.5)
            a.axhline(0, color="black", lw=0.5)
            a.grid(False, axis="x")
        ax.set_title(f"{m}-fold query ({m} salary bins)")
        ax.tick_params(labelbottom=False)
        ax.set_ylabel(unit)
        err_ax.set_ylabel(f"published − true ({unit})")
        err_ax.set_xlabel("salary, as a fraction of [v_min, v_max]")
    shared_legend(fig, axes[0])
    eps = ", ".join(f"{e:g}" for e in sorted(est["eps"].unique()))
    set_suptitle(
        fig,
        f"{title} — {panel_title(city, cards.get(ds), n_users).replace(chr(10), ' — ')}; ε = {eps}; "
        f"bars: mean of {int(est['n'].max())} runs, error bars ± 1 sd of one publication; "
        "lower row: error of the mean published histogram",
    )
    save_figure(fig, png, svg, claims=claims)


# workflow helper figure_cities: in ldprepro.pipeline.parse (parse-time, no pandas); re-exported here.
from ldprepro.pipeline.parse import figure_cities  # noqa: E402,F401
