"""Paper 001 (BSHP / WSHP) jobs: one (figure, dataset, method) job's rows.

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

The claims on these rows: ``papers.bshp.claims``; the figures: ``papers.bshp.plots``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ldprepro.domain.histograms import BitSampling, SplitBaseline, integrated_partition, wshp_ratios
from ldprepro.pipeline.repetitions import repetitions_run
from ldprepro.pipeline.seeding import rngs_for

PAPER = "bshp"
BASELINE = "split_baseline"
METHODS = (BASELINE, "bshp", "wshp")
NO_BIN = -1


# --------------------------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------------------------


def salary_positions(df: pd.DataFrame, card: dict, column: str, max_users: int | None = None) -> np.ndarray:
    """(x − v_min)/(v_max − v_min) of the salary column, with v_min, v_max the card's domain (the
    data's min and max, docs/papers/bshp.md §8.1)."""
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


def collector_for(method: str, partition, eps: float, r: float, protocol: dict):
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
    n_reps = repetitions_run(fig)
    rows = []
    for eps in fig["eps"]:
        eps = float(eps)
        for r in ratios:
            col = collector_for(method, partition, eps, r, protocol)
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
            rep_key = {"paper": PAPER, "figure": figure, "dataset": dataset, "mechanism": method, "eps": eps, "r": r}
            # one keyed generator per repetition, built together (rngs_for: rng_for's, state for state)
            for rep, rng in enumerate(rngs_for(seed, [{**rep_key, "rep": rep} for rep in range(n_reps)])):
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
