"""LDP-SGD figures (papers 000, 002, 003) driven by config entries with ``kind: sgd``.

One job per (figure, dataset, mechanism) loops over ε, cross-validation repetitions and folds;
every (ε, repetition, fold) trains with its own Generator keyed by the job's parameters. Rows:
metric ``misclassification_rate`` (logistic, SVM) or ``test_mse`` (linear) on the held-out fold,
``rep`` = repetition × k + fold. The non-private reference is the mechanism ``non_private``.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
from sklearn.model_selection import KFold

from ..data.transform import to_unit
from ..mechanisms import get_multidim
from ..seeding import rng_for
from ..sgd import evaluate, group_size, ldp_sgd


def design_matrix(df: pd.DataFrame, card: dict, panel: dict) -> tuple[np.ndarray, np.ndarray]:
    """Features in [−1, 1] (numeric: card domains; categorical: k−1 binary attributes with the
    configured on/off values) and the target (numeric → [−1, 1]; label → ±1)."""
    cols = {c["name"]: c for c in card["columns"]}
    target = panel["target"]
    if target not in cols:
        raise ValueError(f"panel {panel['dataset']}: target column {target!r} is not in the dataset")
    features = panel.get("features")
    if isinstance(features, str):
        names = [c for c in cols if c != target and re.fullmatch(features, c)]
    elif features:
        names = list(features)
    else:
        names = [c for c in cols if c != target and cols[c]["type"] in ("numeric", "categorical")]
    blocks = []
    on, off = panel.get("categorical_on", 1.0), panel.get("categorical_off", -1.0)
    for name in names:
        c = cols[name]
        if c["type"] == "numeric":
            blocks.append(to_unit(df[name].to_numpy(dtype=float), c["domain"])[:, None])
        else:
            cats = list(c.get("categories") or pd.unique(df[name]))
            codes = pd.Categorical(df[name], categories=cats).codes
            block = np.full((len(df), len(cats) - 1), off)
            for j in range(len(cats) - 1):  # value j < k−1 switches attribute j on; the last switches none
                block[codes == j, j] = on
            blocks.append(block)
    if panel.get("intercept", False):
        blocks.append(np.ones((len(df), 1)))
    X = np.hstack(blocks)
    kind = panel.get("target_kind", "numeric")
    if kind == "label":
        y = np.where(df[target].to_numpy() == panel["positive"], 1.0, -1.0)
    elif kind == "above_median":
        v = df[target].to_numpy(dtype=float)
        y = np.where(v > np.median(v), 1.0, -1.0)
    else:
        y = to_unit(df[target].to_numpy(dtype=float), cols[target]["domain"])
    return X, y


def run_job(fig: dict, panel: dict, mechanism: str, df: pd.DataFrame, card: dict, seed: int,
            paper: str, figure: str) -> list[dict]:
    X, y = design_matrix(df, card, panel)
    if fig.get("max_users"):
        X, y = X[: fig["max_users"]], y[: fig["max_users"]]
    n, d = X.shape
    model = fig["model"]
    disc = fig.get("discretize") if mechanism in fig.get("discretize_mechanisms", []) else None
    rows = []
    for eps in fig["eps"]:
        eps = float(eps)
        G = group_size(d, eps, fig.get("group_size", "d_log_d_over_eps2"), fig.get("group_size_fixed"))
        collector = None if mechanism == "non_private" else get_multidim(mechanism, eps, d, discretize=disc)
        perturb = None if collector is None else collector.perturb
        for cv_rep in range(int(fig["cv_repetitions"])):
            key = {"paper": paper, "figure": figure, "dataset": panel["dataset"], "mechanism": mechanism,
                   "eps": eps, "cv_rep": cv_rep, "discretize": disc}
            split_seed = int(rng_for(seed, {**key, "purpose": "folds"}).integers(2**31 - 1))
            folds = KFold(n_splits=int(fig["folds"]), shuffle=True, random_state=split_seed)
            for fold, (train, test) in enumerate(folds.split(X)):
                rng = rng_for(seed, {**key, "fold": fold})
                theta = ldp_sgd(X[train], y[train], model, perturb, G, fig["lambda"], fig["learning_rate"],
                                fig.get("eta0", 1.0), rng)
                metric, value = evaluate(model, theta, X[test], y[test])
                rows.append({"paper": paper, "figure": figure, "dataset": panel["dataset"], "mechanism": mechanism,
                             "eps": eps, "discretize": disc, "n_users": n, "n_features": d, "group_size": G,
                             "cv_rep": cv_rep, "fold": fold, "rep": cv_rep * int(fig["folds"]) + fold,
                             "metric": metric, "value": value})
    return rows
