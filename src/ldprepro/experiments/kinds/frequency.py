"""Kind ``frequency``: frequency oracles (GRR, SUE, OUE, OLH, BLH, SS, HR; ldprepro.domain.frequency)
estimating the counts of k values, against ε or k, behind the experiment-kind contract
(ldprepro.experiments.kinds).

A panel is a categorical ``column`` of a dataset (k = its number of categories), or synthetic
counts (``synthetic: uniform | zipf``, ``zipf_s``, ``users``) over every k of the entry's ``k`` list,
spread by largest remainder (:func:`synthetic_counts`, as the benchmark's (k, ε) plane).

Each repetition draws the oracle's aggregated support counts from their exact law given the true
counts (``sample_support_counts``), all repetitions of a (mechanism, ε, k) at once from one
generator keyed by (paper, figure, dataset, mechanism, ε, k), and estimates the counts with the
oracle's unbiased estimator. Metrics (every one written; the entry's ``metric`` is drawn):

- ``variance``: (1/k) Σ_v (ĉ_v − c_v)², the count estimates' squared error averaged over the
  domain; its exact expectation (1/k) Σ_v Var[ĉ_v] (the estimators are unbiased; Wang et al.,
  USENIX Security 2017, Var[ĉ_v] = (c_v p(1−p) + (n−c_v) q(1−q))/(p−q)²) is the
  ``variance_theory`` row, exact;
- ``mse``: the same for the frequency estimates f̂_v = ĉ_v/n, (1/k) Σ_v (f̂_v − f_v)², exact
  ``mse_theory`` = (1/(k n²)) Σ_v Var[ĉ_v];
- ``l1``: Σ_v |f̂_v − f_v|, the L1 distance of the frequency vectors (no closed form: simulated only).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ldprepro.domain.frequency import EPS_ORACLES, get_oracle
from ldprepro.pipeline.errors import BadInput
from ldprepro.pipeline.repetitions import repetitions_run
from ldprepro.pipeline.seeding import rng_for
from ldprepro.pipeline.verify import Grid

#: the metrics every job writes, and how the y axis names them
METRICS = {
    "variance": "variance of the count estimates\n(mean over the k values)",
    "mse": "MSE of the frequency estimates\n(mean over the k values)",
    "l1": "L1 error of the frequency vector",
}
#: metrics with an exact expectation (a ``<metric>_theory`` row, ``theory_exact`` true)
EXACT_METRICS = ("variance", "mse")


def synthetic_counts(distribution: str, k: int, users: int, zipf_s: float = 1.1) -> np.ndarray:
    """True counts of a synthetic panel, deterministic: ``users`` users spread over k values in
    proportion to the distribution (``uniform``, or ``zipf`` with Pr(i) ∝ (i + 1)^−s), rounded by
    largest remainder so that they sum to ``users`` exactly."""
    if distribution == "uniform":
        w = np.ones(int(k))
    elif distribution == "zipf":
        w = np.arange(1, int(k) + 1, dtype=float) ** -float(zipf_s)
    else:
        raise ValueError(f"synthetic counts: unknown distribution {distribution!r}; choose uniform or zipf")
    exact = int(users) * w / w.sum()
    counts = np.floor(exact).astype(np.int64)
    short = int(users) - int(counts.sum())
    counts[np.argsort(-(exact - counts), kind="stable")[:short]] += 1
    return counts


def category_codes(
    df: pd.DataFrame, column: str, dataset: str, where: str = "frequency panel"
) -> tuple[np.ndarray, int]:
    """Integer codes 0..k−1 of a categorical column (missing values dropped), and k."""
    if column not in df.columns:
        raise KeyError(f"{where}: dataset {dataset!r} has no column {column!r}; columns: {list(df.columns)}")
    codes, uniques = pd.factorize(df[column].dropna(), sort=True)
    if len(uniques) < 2:
        raise ValueError(f"{where}: column {column!r} of {dataset!r} has {len(uniques)} category; needs ≥ 2")
    return codes.astype(np.int64), len(uniques)


def panel_counts(fig: dict, panel: dict, df: pd.DataFrame | None) -> list[tuple[int, np.ndarray]]:
    """[(k, true counts)] of a panel: one per k of the entry's ``k`` (synthetic), else the column's."""
    if "synthetic" in panel:
        if not fig.get("k"):
            raise BadInput(f"frequency panel {panel['dataset']!r} is synthetic: the figure needs k: [domain sizes]")
        s = panel.get("zipf_s", 1.1)
        return [(int(k), synthetic_counts(panel["synthetic"], int(k), int(panel["users"]), s)) for k in fig["k"]]
    if "column" not in panel:
        raise BadInput(f"frequency panel {panel['dataset']!r}: name its categorical column (column: NAME)")
    codes, k = category_codes(df, panel["column"], panel["dataset"])
    return [(k, np.bincount(codes, minlength=k))]


def run_job(fig, panel, mechanism, df, card, seed, paper, figure, progress, split_of=None) -> list[dict]:
    """Every (k × ε × repetition) of one oracle on one panel; theory rows first per point."""
    if mechanism not in EPS_ORACLES:
        raise BadInput(f"{paper}.{figure}: {mechanism!r} is not a frequency oracle; known: {', '.join(EPS_ORACLES)}")
    reps = repetitions_run(fig)
    rows = []
    for k, counts in panel_counts(fig, panel, df):
        n = int(counts.sum())
        for eps in fig["eps"]:
            eps = float(eps)
            oracle = get_oracle(mechanism, k, eps)
            common = {
                "paper": paper,
                "figure": figure,
                "dataset": panel["dataset"],
                "mechanism": mechanism,
                "eps": eps,
                "k": k,
                "n_users": n,
            }
            var_mean = float(np.mean(oracle.count_variance(n, counts)))
            exact = {"variance": var_mean, "mse": var_mean / n**2}
            for metric, value in exact.items():
                rows.append({**common, "rep": 0, "metric": f"{metric}_theory", "value": value, "theory_exact": True})
            rng = rng_for(seed, common)  # (paper, figure, dataset, mechanism, ε, k, n)
            est = oracle.estimate_counts(oracle.sample_support_counts(counts, rng, size=reps), n)
            err = np.asarray(est, dtype=float) - counts
            measured = {
                "variance": (err**2).mean(axis=1),
                "mse": ((err / n) ** 2).mean(axis=1),
                "l1": np.abs(err).sum(axis=1) / n,
            }
            for metric, values in measured.items():
                rows += [{**common, "rep": r, "metric": metric, "value": float(v)} for r, v in enumerate(values)]
        progress("%s: k = %d done (%d ε values, %d repetitions)", mechanism, k, len(fig["eps"]), reps)
    return rows


def grid(fig: dict) -> Grid:
    """ε, the repetitions run, and k where every panel is synthetic (a column's k is its own)."""
    synthetic = all("synthetic" in p for p in fig["panels"])
    return Grid(eps=list(fig["eps"]), reps=repetitions_run(fig), axes={"k": list(fig["k"])} if synthetic else {})


def plot(summary, fig, unavailable, title, png, svg=None, claims=None) -> None:
    """The metric against ``x`` (ε, or k: one curve per oracle and ε), dashed: its exact expectation."""
    from ldprepro.experiments.mean_figures import plot_mean_figure

    x = fig.get("x", "eps")
    if x == "eps" and len(fig.get("k") or []) > 1:
        raise BadInput(f"{title}: x: eps draws one k; with k {fig['k']} draw x: k (one curve per oracle and ε)")
    shown = {**fig, "ylabel": fig.get("ylabel", METRICS[fig["metric"]])}
    plot_mean_figure(summary, shown, unavailable, title, png, svg, claims=claims)
