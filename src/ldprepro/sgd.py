"""Mini-batch LDP stochastic gradient descent (paper 002's LDP-FedSGD, Algorithm 1; paper 003 §4;
Wang et al. 2019's ERM) for linear regression, logistic regression and linear SVM.

Each user takes part in exactly one group (a single pass, so each user's privacy cost is ε):
for group r the server broadcasts θ, every user in the group computes her gradient of the
regularised loss, clips each coordinate to [−1, 1], perturbs the vector with a multidimensional
LDP mechanism (or not, for the non-private reference), and the server moves θ against the group
mean. A whole group's gradients are computed and perturbed as one matrix.

Losses (labels ±1 for classification), with regulariser (λ/2)‖θ‖²:
- linear:   (xᵀθ − y)²                    ∇ = 2(xᵀθ − y)x + λθ
- logistic: log(1 + exp(−y xᵀθ))          ∇ = −y x σ(−y xᵀθ) + λθ
- svm:      max(0, 1 − y xᵀθ)              ∇ = −y x [y xᵀθ < 1] + λθ
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

MODELS = ("linear", "logistic", "svm")


def gradients(model: str, theta: np.ndarray, X: np.ndarray, y: np.ndarray, lam: float) -> np.ndarray:
    """Per-user gradients, shape (n, d)."""
    margin = X @ theta
    if model == "linear":
        coef = 2.0 * (margin - y)
    elif model == "logistic":
        z = -y * margin
        coef = -y * np.exp(-np.logaddexp(0.0, -z))  # −y·σ(z), stable
    elif model == "svm":
        coef = np.where(y * margin < 1.0, -y, 0.0)
    else:
        raise ValueError(f"unknown model {model!r}; known: {MODELS}")
    return coef[:, None] * X + lam * theta[None, :]


def group_size(d: int, eps: float, rule: str = "d_log_d_over_eps2", fixed: int | None = None) -> int:
    """G = ⌈d·ln d / ε²⌉ (Wang et al.'s Ω(d log d/ε²) with constant 1 [I]), at least 1."""
    if rule == "fixed":
        return int(fixed)
    if rule == "d_log_d_over_eps2":
        return max(1, math.ceil(d * math.log(max(d, 2)) / eps**2))
    raise ValueError(f"unknown group-size rule {rule!r}")


def learning_rate(schedule: str, t: int, n_iter: int, eta0: float) -> float:
    """η_t: 'inv_sqrt_t' = η0/√t (HierA [R]); 'constant_inv_sqrt_T' = η0/√T; 'constant' = η0."""
    if schedule == "inv_sqrt_t":
        return eta0 / math.sqrt(t)
    if schedule == "constant_inv_sqrt_T":
        return eta0 / math.sqrt(max(n_iter, 1))
    if schedule == "constant":
        return eta0
    raise ValueError(f"unknown learning-rate schedule {schedule!r}")


def ldp_sgd(X: np.ndarray, y: np.ndarray, model: str, perturb: Callable | None, G: int, lam: float,
            schedule: str, eta0: float, rng: np.random.Generator, clip: float = 1.0,
            aggregate: Callable | None = None, side: np.ndarray | None = None) -> np.ndarray:
    """Single-pass mini-batch SGD; ``perturb(matrix, rng)`` privatises a group's clipped gradients
    (None: non-private) and the server averages them. Alternatively ``aggregate(matrix, side_rows,
    rng)`` returns the server's estimate of the group's mean gradient directly, given per-user side
    information ``side`` (rows aligned with X; e.g. the privacy level of each component, for
    collectors such as HierA that estimate from report counts). Users are shuffled once and split
    into ⌊n/G⌋ disjoint groups."""
    if perturb is not None and aggregate is not None:
        raise ValueError("give either perturb or aggregate, not both")
    n, d = X.shape
    theta = np.zeros(d)
    order = rng.permutation(n)
    n_iter = max(1, n // G) if G <= n else 1
    size = min(G, n)
    for t in range(1, n_iter + 1):
        idx = order[(t - 1) * size : t * size]
        g = np.clip(gradients(model, theta, X[idx], y[idx], lam), -clip, clip)
        if aggregate is not None:
            step = aggregate(g, side[idx], rng)
        else:
            step = (g if perturb is None else perturb(g, rng)).mean(axis=0)
        theta = theta - learning_rate(schedule, t, n_iter, eta0) * step
    return theta


def evaluate(model: str, theta: np.ndarray, X: np.ndarray, y: np.ndarray) -> tuple[str, float]:
    """('test_mse', value) for linear regression, ('misclassification_rate', value) otherwise."""
    pred = X @ theta
    if model == "linear":
        return "test_mse", float(np.mean((pred - y) ** 2))
    return "misclassification_rate", float(np.mean(np.where(pred >= 0, 1.0, -1.0) != y))
