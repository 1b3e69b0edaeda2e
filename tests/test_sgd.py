"""LDP-SGD: gradients, the non-private optimiser recovering known coefficients, and LDP-SGD's error
falling as ε grows (fixed seeds, tolerances from the sampling variability)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ldprepro.experiments.sgd_figures import design_matrix, run_job
from ldprepro.mechanisms import get_multidim
from ldprepro.seeding import rng_for
from ldprepro.sgd import evaluate, gradients, group_size, ldp_sgd


@pytest.mark.parametrize("model", ["linear", "logistic", "svm"])
def test_gradients_match_finite_differences(model):
    rng = rng_for(1, model)
    X, theta = rng.uniform(-1, 1, (5, 4)), rng.normal(0, 0.5, 4)
    y = rng.uniform(-1, 1, 5) if model == "linear" else np.sign(rng.uniform(-1, 1, 5))
    lam = 0.1

    def loss(th):
        m = X @ th
        per = {"linear": (m - y) ** 2, "logistic": np.logaddexp(0, -y * m), "svm": np.maximum(0, 1 - y * m)}[model]
        return per + lam / 2 * th @ th

    g = gradients(model, theta, X, y, lam)
    h = 1e-6
    num = np.array([(loss(theta + h * e) - loss(theta - h * e)) / (2 * h) for e in np.eye(4)]).T
    assert np.allclose(g, num, atol=1e-5)


def test_group_size_rule():
    assert group_size(100, 1.0) == 461 and group_size(10, 8.0) == 1 and group_size(1, 1.0) == 1


def _linear_problem(n=200_000, d=5, seed=3):
    rng = rng_for(seed, "linear-problem")
    X = rng.uniform(-1, 1, (n, d))
    beta = np.linspace(-0.4, 0.4, d)
    y = X @ beta + rng.normal(0, 0.05, n)
    return X, y, beta


def test_non_private_sgd_recovers_the_coefficients():
    X, y, beta = _linear_problem()
    theta = ldp_sgd(X, y, "linear", None, 100, 0.0, "constant", 0.1, rng_for(4, "np"))
    # 2000 noisy steps of size 0.1: the iterate sits within a few hundredths of the optimum
    assert np.abs(theta - beta).max() < 0.03


def test_ldp_sgd_error_falls_as_eps_grows():
    """Test MSE of PM-SUB LDP-SGD on a synthetic problem at ε = 0.5, 2, 8 (fixed group size, so only
    the noise changes), eight seeds each. The test MSE is right-skewed and multiplicative in the
    noise, so the comparison is on log MSE: each step up in ε must lower the mean log error by
    more than 5 standard errors of the difference."""
    X, y, beta = _linear_problem(n=80_000)
    Xtr, ytr, Xte, yte = X[:60_000], y[:60_000], X[60_000:], y[60_000:]
    means, ses = [], []
    for eps in [0.5, 2.0, 8.0]:
        mech = get_multidim("pm_sub", eps, X.shape[1])
        errs = [evaluate("linear", ldp_sgd(Xtr, ytr, "linear", mech.perturb, 30, 1e-4, "constant_inv_sqrt_T", 1.0,
                                           rng_for(5, {"eps": eps, "s": s})), Xte, yte)[1] for s in range(8)]
        logs = np.log(errs)
        means.append(logs.mean())
        ses.append(logs.std(ddof=1) / np.sqrt(len(logs)))
    for i in range(2):
        assert means[i] - means[i + 1] > 5 * np.hypot(ses[i], ses[i + 1]), (means, ses)


def test_design_matrix_encodings():
    df = pd.DataFrame({"a": [0.0, 10.0, 5.0], "c": pd.Categorical(["x", "y", "z"]), "t": [1, -1, 1]})
    card = {"columns": [{"name": "a", "type": "numeric", "domain": [0, 10]},
                        {"name": "c", "type": "categorical", "categories": ["x", "y", "z"]},
                        {"name": "t", "type": "categorical", "categories": [-1, 1]}]}
    X, y = design_matrix(df, card, {"dataset": "d", "target": "t", "target_kind": "label", "positive": 1,
                                    "features": ["a", "c"]})
    assert X.tolist() == [[-1, 1, -1], [1, -1, 1], [0, -1, -1]]  # k−1 = 2 attributes; z switches none
    assert y.tolist() == [1, -1, 1]
    X, _ = design_matrix(df, card, {"dataset": "d", "target": "a", "features": ["c"], "categorical_on": 1,
                                    "categorical_off": 0, "intercept": True})
    assert X.tolist() == [[1, 0, 1], [0, 1, 1], [0, 0, 1]]
    with pytest.raises(ValueError, match="target column"):
        design_matrix(df, card, {"dataset": "d", "target": "nope"})


def test_run_job_rows_and_reproducibility():
    rng = rng_for(6, "job")
    df = pd.DataFrame({"f1": rng.uniform(-1, 1, 600), "f2": rng.uniform(-1, 1, 600)})
    df["lab"] = np.where(df.f1 + df.f2 > 0, 1, -1)
    card = {"columns": [{"name": "f1", "type": "numeric", "domain": [-1, 1]},
                        {"name": "f2", "type": "numeric", "domain": [-1, 1]},
                        {"name": "lab", "type": "categorical", "categories": [-1, 1]}]}
    fig = {"kind": "sgd", "mechanisms": ["pm"], "eps": [1.0, 4.0], "model": "svm", "lambda": 1e-4,
           "learning_rate": "constant_inv_sqrt_T", "folds": 3, "cv_repetitions": 2, "metric": "misclassification_rate"}
    panel = {"dataset": "toy", "target": "lab", "target_kind": "label", "positive": 1, "features": "f[12]"}
    rows = run_job(fig, panel, "pm", df, card, 1, "ldpfl", "fig10")
    assert len(rows) == 2 * 2 * 3 and {r["rep"] for r in rows} == set(range(6))
    assert rows == run_job(fig, panel, "pm", df, card, 1, "ldpfl", "fig10")
    non_private = run_job(fig, panel, "non_private", df, card, 1, "ldpfl", "fig10")
    assert np.mean([r["value"] for r in non_private]) < 0.2  # a separable toy problem
