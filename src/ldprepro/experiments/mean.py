"""Mean estimation under LDP: every user perturbs her value(s), the collector averages.

One job = one (figure, dataset, mechanism); it loops over ε (and any other swept parameter) and
repetitions. Each (ε, rep) draws from its own Generator keyed by the job's parameters, so results
do not depend on the order of the loops or on which other jobs run.

Metrics per repetition (averaged over the numeric attributes when there are several):
- ``abs_error``: |m̂ − m| (paper 003's AE, paper 000's MAE after averaging over repetitions);
- ``sq_error``: (m̂ − m)² (paper 002's MSE after averaging).

Theory rows (``rep`` 0, metrics ``sq_error_theory`` / ``abs_error_theory``): the estimate is a
mean of independent unbiased outputs, so E(m̂ − m)² = Σ_i Var[y_i | x_i] / n² exactly, and
E|m̂ − m| ≈ √(2/π)·√(that) by the central limit theorem.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from ..mechanisms import get_mechanism, get_multidim
from ..seeding import rng_for


def make_collector(mechanism: str, eps: float, d: int, params: dict | None = None):
    """The perturbation used for a user's d numeric values at budget ``eps``: the 1-D mechanism
    when d = 1, the paper's multidimensional collection (Zhao Alg. 6 / Duchi MD / Laplace ε/d)
    otherwise."""
    params = dict(params or {})
    if d == 1:
        return get_mechanism(mechanism, eps, **params)
    return get_multidim(mechanism, eps, d, **params)


def mean_error_rows(values: np.ndarray, mechanism: str, eps_list, reps: int, seed: int, key: dict,
                    base: dict, params: dict | None = None, budget_fraction: float = 1.0,
                    collector: Callable | None = None) -> list[dict]:
    """Tidy rows of the mean-estimation error of ``mechanism`` on ``values`` ((n,) or (n, d) in
    [−1, 1]) for every ε in ``eps_list`` and ``reps`` repetitions.

    ``budget_fraction`` scales the budget given to the numeric attributes (paper 002 Fig. 6:
    ε·d_n/d, the rest going to the categorical attributes); ``eps`` in the rows is the total.
    """
    x = np.asarray(values, dtype=float)
    one_d = x.ndim == 1
    d = 1 if one_d else x.shape[1]
    n = x.shape[0]
    truth = x.mean(axis=0)
    rows = []
    for eps in eps_list:
        eps = float(eps)
        eps_numeric = eps * budget_fraction
        mech = (collector or make_collector)(mechanism, eps_numeric, d, params)
        var_of_mean = np.atleast_1d(np.asarray(mech.variance(x), dtype=float).sum(axis=0) / n**2)
        common = {**base, "mechanism": mechanism, "eps": eps, "eps_numeric": eps_numeric, "n_users": n,
                  "n_attributes": d}
        rows.append({**common, "rep": 0, "metric": "sq_error_theory", "value": float(var_of_mean.mean())})
        rows.append({**common, "rep": 0, "metric": "abs_error_theory",
                     "value": float(np.mean(np.sqrt(2.0 / math.pi * var_of_mean)))})
        for rep in range(int(reps)):
            rng = rng_for(seed, {**key, "eps": eps, "rep": rep})
            estimate = mech.perturb(x, rng).mean(axis=0)
            err = np.atleast_1d(estimate - truth)
            rows.append({**common, "rep": rep, "metric": "abs_error", "value": float(np.abs(err).mean())})
            rows.append({**common, "rep": rep, "metric": "sq_error", "value": float((err**2).mean())})
    return rows
