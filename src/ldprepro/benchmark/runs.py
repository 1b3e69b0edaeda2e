"""Benchmark jobs: one task on one dataset, every mechanism, every ε, every repetition.

Common random numbers: the generator of repetition r at budget ε is keyed by (task, dataset,
columns, ε, r) and not by the mechanism, so every mechanism of a cell sees the same user sample
and the same seed; the repetitions are independent, which is what the paired tests of
:mod:`.winners` need. (Frequency task: one generator per (dataset, ε), the same for every oracle,
draws all repetitions at once.)
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ldprepro.benchmark.naming import panel_columns, panel_label
from ldprepro.domain.frequency import EPS_ORACLES, get_oracle
from ldprepro.domain.mechanisms import MECHANISMS
from ldprepro.experiments.kinds.frequency import category_codes, synthetic_counts  # noqa: F401 (also the plane's)
from ldprepro.experiments.mean import mean_error_rows
from ldprepro.experiments.mean_figures import panel_values
from ldprepro.pipeline.seeding import rng_for

FREQUENCY_ORACLES = EPS_ORACLES


def subsample(n: int, max_users: int | None, seed: int, panel: dict) -> np.ndarray:
    """Row indices of the users a job runs on: all of them, or ``max_users`` drawn without
    replacement (keyed by the panel, the same for every mechanism). For unbiased mean estimators
    the ratio of two mechanisms' MSEs, Σ Var_i(A) / Σ Var_i(B), does not depend on n, so a
    uniform subsample keeps the comparison while making repetitions affordable."""
    if not max_users or int(max_users) >= n:
        return np.arange(n)
    rng = rng_for(seed, {"benchmark_subsample": panel_label(panel)})
    return np.sort(rng.choice(n, size=int(max_users), replace=False))


def mechanisms_for(entry: dict) -> list[str]:
    """The configured mechanism list, or every registered 1-D mechanism (``all``): a mechanism
    registered through the registry joins the benchmark without a config edit."""
    names = entry.get("mechanisms", "all")
    names = list(MECHANISMS) if names == "all" else list(names)
    unknown = [m for m in names if m not in MECHANISMS]
    if unknown:
        raise ValueError(f"config.yaml benchmark.mechanisms: unknown mechanism(s) {unknown}; known: {list(MECHANISMS)}")
    return names


def mean_job(entry: dict, panel: dict, df: pd.DataFrame, card: dict, seed: int) -> list[dict]:
    """MSE of the mean of the panel's numeric columns (rescaled to [−1, 1] as every figure does):
    the 1-D mechanism for one column, the papers' multidimensional collection for several."""
    spec = {**panel, "columns": panel_columns(panel)} if "column" in panel else panel  # one column: 1-D
    values = panel_values(df, card, spec)
    values = values[subsample(len(values), entry.get("max_users"), seed, panel)]
    name = panel_label(panel)
    key = {"task": "mean", "dataset": name}  # no mechanism: common random numbers
    rows = []
    for mech in mechanisms_for(entry):
        rows += mean_error_rows(
            values,
            mech,
            entry["eps"],
            int(entry["reps"]),
            seed,
            key,
            {"paper": "benchmark", "figure": "mean", "task": "mean", "dataset": name},
        )
    return [r for r in rows if r["metric"] in ("sq_error", "sq_error_theory")]


def frequency_counts(panel: dict, df: pd.DataFrame | None) -> np.ndarray:
    """True counts of a frequency panel: a categorical column's, or a synthetic plane panel's."""
    if "synthetic" in panel:
        return synthetic_counts(panel["synthetic"], panel["k"], panel["users"], panel.get("zipf_s", 1.1))
    codes, k = category_codes(df, panel["column"], panel["dataset"], "benchmark")
    return np.bincount(codes, minlength=k)


def frequency_job(entry: dict, panel: dict, df: pd.DataFrame | None, seed: int) -> list[dict]:
    """MSE of the estimated frequency vector, averaged over the k categories, for every configured
    oracle (``oracles``; default GRR, SUE, OUE, OLH, BLH, SS, HR), with its exact expectation (the
    mean exact variance, ``sq_error_theory``). Each repetition draws the oracle's aggregated support
    counts from their exact law given the true counts (``sample_support_counts``: a sufficient
    statistic, or per-user draws where the oracle's module says so), all repetitions of an ε at once
    from one generator keyed by (task, dataset, ε), the same for every oracle (the repetitions are
    independent, and paired by their index). Synthetic plane panels run ``panel["reps"]`` repetitions."""
    counts = frequency_counts(panel, df)
    k = counts.size
    n = int(counts.sum())  # every user: the counts are a sufficient statistic, n costs nothing
    truth = counts / n
    name = panel_label(panel)
    reps = int(panel.get("reps", entry["reps"]))
    rows = []
    for oracle_name in entry.get("oracles", FREQUENCY_ORACLES):
        if oracle_name not in FREQUENCY_ORACLES:
            raise ValueError(
                f"config.yaml benchmark.frequency.oracles: unknown oracle {oracle_name!r}; known: {FREQUENCY_ORACLES}"
            )
        for eps in entry["eps"]:
            eps = float(eps)
            oracle = get_oracle(oracle_name, k, eps)
            common = {
                "paper": "benchmark",
                "figure": "frequency",
                "task": "frequency",
                "dataset": name,
                "mechanism": oracle_name,
                "eps": eps,
                "n_users": n,
                "n_attributes": k,
            }
            theory = float(oracle.frequency_variance(n, truth).mean())
            rows.append({**common, "rep": 0, "metric": "sq_error_theory", "value": theory})
            rng = rng_for(seed, {"task": "frequency", "dataset": name, "eps": eps})
            est = oracle.estimate_frequencies(oracle.sample_support_counts(counts, rng, size=reps), n)
            mse = ((est - truth) ** 2).mean(axis=1)
            rows += [{**common, "rep": rep, "metric": "sq_error", "value": float(v)} for rep, v in enumerate(mse)]
    return rows


def sgd_job(entry: dict, panel: dict, df: pd.DataFrame, card: dict, seed: int) -> list[dict]:
    """LDP-SGD (Zhao et al. Alg. 4, as the ldpfl figures run it) for every mechanism: the
    configured test metric per (ε, cross-validation repetition × fold). The folds are keyed by the
    dataset, not the mechanism, so every mechanism is trained and tested on the same splits and the
    repetitions pair across mechanisms."""
    from ldprepro.experiments.sgd_figures import run_job

    fig = {k: v for k, v in entry.items() if k not in ("panels", "mechanisms")} | {"kind": "sgd"}
    name = panel_label(panel)
    rows = []
    for mech in mechanisms_for(entry):
        for r in run_job(fig, panel, mech, df, card, seed, "benchmark", "sgd"):
            if r["metric"] == fig["metric"]:
                rows.append({**r, "task": "sgd", "dataset": name, "n_attributes": r.get("n_features", 0)})
    return rows
