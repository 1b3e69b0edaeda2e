"""The three models of LDP-SGD (``ldprepro.domain.sgd``): their per-user gradients, the clipped
gradients of many groups at once (:class:`GroupGradients`) and the test metric.

Losses (labels ±1 for classification), with regulariser (λ/2)‖θ‖²:
- linear:   (xᵀθ − y)²                    ∇ = 2(xᵀθ − y)x + λθ
- logistic: log(1 + exp(−y xᵀθ))          ∇ = −y x σ(−y xᵀθ) + λθ
- svm:      max(0, 1 − y xᵀθ)              ∇ = −y x [y xᵀθ < 1] + λθ
"""

from __future__ import annotations

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


class GroupGradients:
    """Clipped gradients of F groups of S users, computed on demand: ``full()`` the (F, S, d) matrix,
    ``at(j)`` only the coordinates j of shape (F, S, k) (what a sampling mechanism reports)."""

    def __init__(self, model: str, theta: np.ndarray, Xg: np.ndarray, yg: np.ndarray, lam: float, clip: float):
        self.theta, self.Xg, self.lam, self.clip = theta, Xg, lam, clip
        margin = np.matmul(Xg, theta[:, :, None])[..., 0]  # (F, S)
        if model == "linear":
            self.coef = 2.0 * (margin - yg)
        elif model == "logistic":
            self.coef = -yg * np.exp(-np.logaddexp(0.0, yg * margin))  # −y·σ(−y xᵀθ), stable
        elif model == "svm":
            self.coef = np.where(yg * margin < 1.0, -yg, 0.0)
        else:
            raise ValueError(f"unknown model {model!r}; known: {MODELS}")

    @property
    def shape(self) -> tuple[int, int, int]:
        return self.Xg.shape

    def full(self) -> np.ndarray:
        g = self.coef[..., None] * self.Xg
        g += self.lam * self.theta[:, None, :]
        return np.clip(g, -self.clip, self.clip, out=g)

    def at(self, j: np.ndarray) -> np.ndarray:
        from ldprepro.domain.mechanisms.multidim import take_last

        xj = take_last(self.Xg, j)
        th = self.theta[np.arange(self.theta.shape[0])[:, None, None], j]
        return np.clip(self.coef[..., None] * xj + self.lam * th, -self.clip, self.clip)


def evaluate(model: str, theta: np.ndarray, X: np.ndarray, y: np.ndarray) -> tuple[str, float]:
    """('test_mse', value) for linear regression, ('misclassification_rate', value) otherwise."""
    metric, values = evaluate_many(model, theta[None, :], X, y)
    return metric, float(values[0])


def evaluate_many(model: str, thetas: np.ndarray, X: np.ndarray, y: np.ndarray) -> tuple[str, np.ndarray]:
    """:func:`evaluate` of every row of ``thetas`` (C, d) on one test set, in one product X·θᵀ."""
    pred = X @ thetas.T  # (n_test, C)
    if model == "linear":
        return "test_mse", np.mean((pred - y[:, None]) ** 2, axis=0)
    return "misclassification_rate", np.mean(np.where(pred >= 0, 1.0, -1.0) != y[:, None], axis=0)
