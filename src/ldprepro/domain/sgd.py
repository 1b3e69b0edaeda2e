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

Modules: ``sgd_models`` (the losses' gradients, :class:`GroupGradients`, the test metric),
``sgd_collectors`` (the server's estimate of each group's mean gradient), ``sgd_compiled`` (the
bridge to the compiled steps of ``_sgd_jit``); their public names are importable from here.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ldprepro.domain.sgd_collectors import StepBlocks, _FullCollector, _MeanCollector, _SampledCollector
from ldprepro.domain.sgd_compiled import ReportKernel, _Fits
from ldprepro.domain.sgd_models import MODELS, GroupGradients, evaluate, evaluate_many, gradients

__all__ = [
    "MODELS",
    "GroupGradients",
    "ReportKernel",
    "StepBlocks",
    "evaluate",
    "evaluate_many",
    "gradients",
    "group_collector",
    "group_size",
    "ldp_sgd",
    "ldp_sgd_fits",
    "learning_rate",
    "runs_fit_by_fit",
    "take_rows",
]


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


def ldp_sgd(
    X: np.ndarray,
    y: np.ndarray,
    model: str,
    perturb: Callable | None,
    G: int,
    lam: float,
    schedule: str,
    eta0: float,
    rng: np.random.Generator,
    clip: float = 1.0,
    aggregate: Callable | None = None,
    side: np.ndarray | None = None,
) -> np.ndarray:
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


def group_collector(mechanism=None, aggregate_fits: Callable | None = None) -> Callable:
    """``collect(grads, rows, rng) -> (F, d)`` server estimate of each group's mean gradient:
    non-private (mechanism None), a multidimensional mechanism (sampled ones report only their k
    coordinates), or ``aggregate_fits(g, rows, rng)`` (graded collection, needs the users' rows)."""
    from ldprepro.domain.mechanisms.multidim import SampledMultiDim

    if aggregate_fits is not None:
        return lambda grads, rows, rng: aggregate_fits(grads.full(), rows, rng)
    if mechanism is None:
        return _MeanCollector()
    if isinstance(mechanism, SampledMultiDim):
        return _SampledCollector(mechanism)
    return _FullCollector(mechanism)


def ldp_sgd_fits(
    X: np.ndarray,
    y: np.ndarray,
    orders: list[np.ndarray],
    model: str,
    collect: Callable,
    G: int,
    lam: float,
    schedule: str,
    eta0: float,
    rng: np.random.Generator,
    clip: float = 1.0,
    finite: bool | None = None,
) -> np.ndarray:
    """F single-pass mini-batch SGD fits at once; returns θ of shape (F, d).

    ``orders[f]``: the rows of X that fit f trains on, in the order it visits them (its shuffled
    training fold); fit f takes ⌊n_f/G⌋ disjoint groups of G users (one group of n_f if G > n_f), as
    ``ldp_sgd``. ``collect`` is a :func:`group_collector`. Fits whose group sizes differ (G above some
    but not all training sizes) run one at a time. ``finite``: whether X and y are known to be
    finite (a caller running many fits on the same data checks once); None checks here."""
    F, d = len(orders), X.shape[1]
    sizes = np.array([len(o) for o in orders])
    size = np.minimum(G, sizes)
    if F > 1 and np.unique(size).size > 1:
        return np.concatenate(
            [ldp_sgd_fits(X, y, [o], model, collect, G, lam, schedule, eta0, rng, clip, finite) for o in orders]
        )
    S = int(size[0])
    n_iter = np.where(G <= sizes, np.maximum(1, sizes // max(G, 1)), 1)
    T = int(n_iter.max())
    # row indices of every fit's groups; int32 halves the memory at census sizes (F × n_train entries)
    idx = np.empty((F, T * S), dtype=np.int32 if X.shape[0] < 2**31 else np.int64)
    for f, o in enumerate(orders):
        used = o[: n_iter[f] * S]
        idx[f, : used.size] = used
        idx[f, used.size :] = np.resize(o[:S], T * S - used.size)  # padding: steps past n_iter[f] are ignored
    # η_t per fit: only inv_sqrt_t depends on t, and a fit past its last group stops moving
    eta_1 = np.array([learning_rate(schedule, 1, int(m), eta0) for m in n_iter])
    if hasattr(collect, "begin"):
        collect.begin(F, S, T)
    if _compiled_ok(collect, X, y, model, clip, finite):
        fits = _Fits(X, y, idx, S, T, eta_1, n_iter, schedule, model, lam, clip)
        if collect.run_compiled(fits, rng):
            return fits.theta
    theta = np.zeros((F, d))
    for t in range(1, T + 1):
        rows = idx[:, (t - 1) * S : t * S]
        grads = GroupGradients(model, theta, X[rows], y[rows], lam, clip)
        step = collect(grads, rows, rng)
        eta = eta_1 / math.sqrt(t) if schedule == "inv_sqrt_t" else eta_1
        if t > n_iter.min():
            eta = np.where(t <= n_iter, eta, 0.0)
        theta = theta - eta[:, None] * step
    return theta


def runs_fit_by_fit(collect) -> bool:
    """Whether fits with this collector may run one at a time at no cost: compiled steps that draw
    for runs of steps, not per step in Python (else a fit of a million tiny groups pays a Python
    call per step, and batching the fits shares it)."""
    return bool(getattr(collect, "compiled", False)) and not getattr(collect, "draws_per_step", True)


def take_rows(X: np.ndarray, rows: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """X[rows] as a contiguous float64 copy (into ``out`` when given): compiled with prefetching
    (``_sgd_jit.gather_rows``) when the kernels are on, else ``np.take``. Bit-identical either way."""
    from ldprepro.domain.mechanisms import kernels

    X = np.ascontiguousarray(X, dtype=np.float64)
    out = np.empty((rows.size, X.shape[1])) if out is None else out
    if kernels.enabled() and rows.size:
        from ldprepro.domain import _sgd_jit

        return _sgd_jit.gather_rows(X, rows, out)
    return np.take(X, rows, axis=0, out=out)


def _compiled_ok(collect, X, y, model, clip, finite: bool | None = None) -> bool:
    """Whether the fits may run as compiled steps: a collector that has them, the switch on
    (``LDPREPRO_JIT``), and inputs on which the numpy path could not fail (finite data, clipped
    gradients inside the mechanisms' domain [−1, 1]); otherwise the numpy steps run (and raise)."""
    from ldprepro.domain.mechanisms import kernels

    return (
        hasattr(collect, "run_compiled")
        and kernels.enabled()
        and model in MODELS
        and 0.0 < clip <= 1.0
        and (finite if finite is not None else bool(np.isfinite(X).all() and np.isfinite(y).all()))
    )
