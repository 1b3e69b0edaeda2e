"""Histogram publication of a numeric column by named collectors: the computation of the
``histogram`` experiment kind (ldprepro.experiments.kinds.histogram). Paper 001's figures (BSHP /
WSHP vs the split baseline, Secs. 4–6 of the paper; docs/papers/bshp.md) are of this kind.

Several consumers ask for equal-width histograms of one numeric column (``folds``: 3-, 5-, 7-fold in
paper 001); a collector answers all of them from the users' reports (ldprepro.domain.histograms).
The collectors are named (:data:`COLLECTORS`): ``split_baseline`` (§4: every consumer answered
separately with ε/m, all bits uploaded), ``bshp`` (§5: bit sampling at one ratio r) and ``wshp``
(§5.3: bit sampling with water-filled ratios r_j around r); a module may register more with
:func:`register_collector` (a mechanism plugin, ``mechanism_plugins``, is imported by every job).

Options (figure entry keys, with their defaults): ``column`` (the numeric column), ``folds``,
``estimator`` (``horvitz_thompson``, Theorem 5; or ``ratio``, §5.2), ``wshp_weights`` (``equal``
or one weight list per query), ``mse_over`` (``frequency``: ĥ/n, or ``count``), ``simulation``
(``sufficient_statistics``: exact binomial aggregates; ``per_user``: every contributor's bits),
``max_users``.

One job = (figure, dataset, collector); it loops ε × r × repetitions, each repetition with its own
Generator keyed by (paper, figure, dataset, collector, ε, r, rep). Rows (tidy,
``pipeline.results.tidy_frame`` with :data:`COLUMN_ORDER`):

* ``mse`` (query 0 = mean over the consumers; query m = the m-fold consumer):
  (1/m_i) Σ_l (ĥ_{i,l} − h_{i,l})², over frequencies (ĥ/n) or counts (``mse_over``);
* ``mse_theory``: its exact expectation (Lemma 6 / the SUE variance) where the collector has exact
  variances (the HT estimator, the baseline); rep 0, ``theory_exact`` True (the contract's one
  convention for exact rows, ldprepro.experiments.kinds);
* ``bits_per_user``: bits uploaded per contributor in that run (Σ_j N_j / n; baseline Σ m_i);
* ``tv_distance``: ½ Σ_l |ĥ_l − h_l| / n per query, and their mean (query 0);
* ``estimate`` / ``truth`` per (query, bin), for figures that draw the histograms (``plot: values``).
Parameter columns: ``r`` (sampling ratio; 1 for a collector that uploads every bit),
``eps_paper_claim`` (Theorem 7's ε', NaN for the baseline; the guarantee is ``eps``),
``n_users``, ``unit``, ``estimator``, ``simulation``, ``query``, ``bin``, ``extra_rep`` (True for the
repetitions beyond the paper's ``reps``, run for the claims' tests only).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ldprepro.domain.histograms import BitSampling, SplitBaseline, integrated_partition, wshp_ratios
from ldprepro.pipeline.repetitions import repetitions_run
from ldprepro.pipeline.seeding import rngs_for

#: the column order of the rows after the key columns (``tidy_frame``'s ``extra_order``)
COLUMN_ORDER = ["r", "query", "bin"]
#: ``bin`` of a row about a whole query
NO_BIN = -1
#: the option defaults (module docstring)
DEFAULTS = {
    "folds": [3, 5, 7],
    "estimator": "horvitz_thompson",
    "wshp_weights": "equal",
    "mse_over": "frequency",
    "simulation": "sufficient_statistics",
}


@dataclass(frozen=True)
class Collector:
    """A named histogram collector. ``build(partition, eps, r, options)`` returns the collector of
    one (ε, r): a ``SplitBaseline``-like object (``samples_bits`` False: it uploads every bit, r is
    1) or a ``BitSampling``-like one (aggregates (C, N), estimate from C, N, n).
    ``exact(options)``: whether its estimator has exact variances (``query_variances``), which
    give the ``mse_theory`` rows."""

    name: str
    build: Callable
    samples_bits: bool
    exact: Callable[[dict], bool]


def _estimator(options: dict) -> str:
    return options.get("estimator", DEFAULTS["estimator"])


COLLECTORS: dict[str, Collector] = {}


def register_collector(
    name: str, build: Callable, samples_bits: bool = True, exact: Callable[[dict], bool] | None = None
) -> None:
    """Register a collector under ``name`` (see :class:`Collector`); ``exact`` defaults to "exact
    variances with the Horvitz-Thompson estimator"."""
    if name in COLLECTORS:
        raise ValueError(f"histogram collector {name!r} is already registered")
    COLLECTORS[name] = Collector(
        name, build, samples_bits, exact or (lambda options: _estimator(options) == "horvitz_thompson")
    )


register_collector("split_baseline", lambda part, eps, r, o: SplitBaseline(part, eps), False, lambda o: True)
register_collector("bshp", lambda part, eps, r, o: BitSampling(part, eps, r, _estimator(o)))
register_collector(
    "wshp",
    lambda part, eps, r, o: BitSampling(
        part, eps, wshp_ratios(part, r, eps, o.get("wshp_weights", DEFAULTS["wshp_weights"])), _estimator(o)
    ),
)


def get_collector(name: str) -> Collector:
    if name not in COLLECTORS:
        raise ValueError(f"unknown histogram collector {name!r}; registered: {', '.join(COLLECTORS)}")
    return COLLECTORS[name]


def column_positions(df: pd.DataFrame, card: dict, column: str, max_users: int | None = None) -> np.ndarray:
    """(x − v_min)/(v_max − v_min) of a numeric column, with v_min, v_max the card's domain (the
    data's min and max, docs/papers/bshp.md §8.1)."""
    cols = {c["name"]: c for c in card.get("columns", [])}
    if column not in cols or cols[column].get("type") != "numeric":
        raise ValueError(
            f"dataset {card.get('dataset')!r}: no numeric column {column!r} "
            f"(the histogram figure's column); numeric columns: "
            f"{[c for c, v in cols.items() if v.get('type') == 'numeric']}"
        )
    lo, hi = (float(v) for v in cols[column]["domain"])
    if not hi > lo:
        raise ValueError(f"dataset {card.get('dataset')!r}: column {column!r} has an empty domain [{lo}, {hi}]")
    x = df[column].to_numpy(dtype=float)
    if max_users:
        x = x[: int(max_users)]
    return (x - lo) / (hi - lo)


def run_once(
    collector, samples_bits: bool, intervals: np.ndarray, counts: np.ndarray, rng: np.random.Generator, simulation: str
) -> tuple[list[np.ndarray], float]:
    """One collection: (each consumer's estimated counts, bits uploaded per contributor)."""
    n = intervals.shape[0]
    if not samples_bits:
        if simulation == "per_user":
            support = collector.aggregate(collector.perturb(intervals, rng))
        else:
            support = collector.sample_aggregates(counts, rng)
        return collector.estimate_counts(support, n), float(collector.bits_per_user)
    if simulation == "per_user":
        C, N = collector.aggregate(*collector.perturb(intervals, rng))
    else:
        C, N = collector.sample_aggregates(counts, rng)
    return collector.partition.query_answers(collector.estimate_counts(C, N, n)), float(N.sum()) / n


def _query_rows(common: dict, metric: str, rep: int, overall: float, per_query, folds) -> list[dict]:
    """A metric's row over every consumer (query 0) and one per consumer (query m)."""
    rows = [{**common, "query": 0, "bin": NO_BIN, "rep": rep, "metric": metric, "value": overall}]
    return rows + [
        {**common, "query": m, "bin": NO_BIN, "rep": rep, "metric": metric, "value": v}
        for m, v in zip(folds, per_query)
    ]


def run_rows(
    fig: dict, paper: str, figure: str, dataset: str, name: str, positions: np.ndarray, seed: int, eps: float
) -> list[dict]:
    """Every r × repetition of collector ``name`` at one ε on one dataset's positions in [0, 1]."""
    options = {**DEFAULTS, **fig}
    simulation = options["simulation"]
    if simulation not in ("sufficient_statistics", "per_user"):
        raise ValueError(f"{paper}.{figure}: simulation must be sufficient_statistics or per_user, got {simulation!r}")
    spec = get_collector(name)
    unit = options["mse_over"]
    partition = integrated_partition(options["folds"])
    intervals = partition.interval_of(positions)
    n = intervals.shape[0]
    counts = np.bincount(intervals, minlength=partition.K)
    truth = partition.query_answers(counts)
    scale = float(n) if unit == "frequency" else 1.0
    ratios = [float(r) for r in fig["ratios"]] if spec.samples_bits else [1.0]
    estimator = _estimator(options)
    paper_reps = int(fig["reps"])
    n_reps = repetitions_run(fig)
    per_bin = fig.get("plot") == "values"
    folds = partition.folds
    rows = []
    eps = float(eps)
    for r in ratios:
        col = spec.build(partition, eps, r, options)
        common = {
            "paper": paper,
            "figure": figure,
            "dataset": dataset,
            "mechanism": name,
            "eps": eps,
            "r": r,
            "eps_paper_claim": col.paper_claimed_epsilon if spec.samples_bits else np.nan,
            "n_users": n,
            "unit": unit,
            "estimator": estimator if spec.samples_bits else "split",
            "simulation": simulation,
            "extra_rep": False,
        }
        if spec.exact(options):
            var = [v / scale**2 for v in col.query_variances(counts)]
            per_query = [float(v.mean()) for v in var]
            exact = _query_rows(common, "mse_theory", 0, float(np.mean(per_query)), per_query, folds)
            rows += [{**row, "theory_exact": True} for row in exact]  # the contract's exact rows
        rep_key = {"paper": paper, "figure": figure, "dataset": dataset, "mechanism": name, "eps": eps, "r": r}
        # one keyed generator per repetition, built together (rngs_for: rng_for's, state for state)
        for rep, rng in enumerate(rngs_for(seed, [{**rep_key, "rep": rep} for rep in range(n_reps)])):
            est, bits = run_once(col, spec.samples_bits, intervals, counts, rng, simulation)
            common["extra_rep"] = rep >= paper_reps
            mse = [float(np.mean(((e - h) / scale) ** 2)) for e, h in zip(est, truth)]
            rows += _query_rows(common, "mse", rep, float(np.mean(mse)), mse, folds)
            rows.append({**common, "query": 0, "bin": NO_BIN, "rep": rep, "metric": "bits_per_user", "value": bits})
            # shape of one publication: total-variation distance ½ Σ_l |ĥ_l − h_l| / n
            tv = [float(0.5 * np.abs(e - h).sum() / n) for e, h in zip(est, truth)]
            rows += _query_rows(common, "tv_distance", rep, float(np.mean(tv)), tv, folds)
            if per_bin:
                for m, e, h in zip(folds, est, truth):
                    for b in range(m):
                        for metric, value in (("estimate", e[b]), ("truth", h[b])):
                            rows.append(
                                {
                                    **common,
                                    "query": m,
                                    "bin": b,
                                    "rep": rep,
                                    "metric": metric,
                                    "value": float(value / scale),
                                }
                            )
    return rows
