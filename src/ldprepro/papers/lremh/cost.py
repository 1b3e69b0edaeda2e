"""The machine-independent cost of paper 004's estimators (docs/papers/lremh.md, "Cost model"):
what Figs. 1–2's efficiency claims are decided on (issue 26: a verdict depends only on config
and seed; wall-clock or CPU time depends on the machine and on what else runs on it).

The unit is one arithmetic operation on a (user, candidate) pair or on a nonzero of the LASSO
design matrix, counted from the algorithms' definitions (paper Sec. 4.4–4.6, Alg. 2), not from
our code: the explicit and the factorised EM (``em.impl``) have the same cost. With N users,
the k attributes of S with domains |Ω_j|, C = Π_j |Ω_j| candidates, B = Σ_j |Ω_j| report bits:

* **Likelihood table** (Sec. 4.4 step 2, Alg. 2 lines 12–21, in the efficient form of
  docs/papers/lremh.md §4.1): P(T^i | ω) ∝ Π_{j∈S} λ^i_j(ω_j) for each of N users and each of the m
  candidates EM works on: ``k·N·m``.
* **One EM iteration** (Sec. 4.4 step 3, Alg. 2 lines 29–37; E-step and M-step of §4.2): the
  normaliser Z_i = Σ_ω θ(ω)·P(T^i | ω) and the average of the posteriors θ(ω)·P(T^i | ω)/Z_i, one
  multiply-add per (user, candidate) each: ``2·N·m``.
* **LASSO** (Sec. 4.5, Alg. 2 lines 1–10): the bit counts c_{j,b} (``N·B``), the design matrix M
  (B × C, k ones per column: ``k·C``) and coordinate descent on it: per epoch, each coordinate's
  correlation with the residual and the residual update touch its k nonzeros, ``2·k·C``.
* **Pruning** (Alg. 2 line 11): one comparison θ⁰(ω) > τ per candidate, ``C``.

So EM from uniform costs ``N·C·(k + 2·t)`` after t iterations, LASSO ``N·B + k·C·(1 + 2·e)`` after
e coordinate-descent epochs, and LREMH the LASSO, the pruning and EM on its m kept candidates:
``N·B + k·C·(1 + 2·e) + C + N·m·(k + 2·t)`` — Alg. 2's advantage (1) is m < C, advantage (2) a smaller
t. Every factor is recorded by the jobs (``iterations``, ``candidates``, the LASSO's epochs), so
the cost is a function of config and seed only. Fixed per-call overheads (interpreter, library
set-up) are not operations of the algorithms and are not counted: they dominate the measured CPU
time of the LASSO (and so of LREMH) at the paper's sizes, which therefore favours LREMH less than
the cost does (docs/papers/lremh.md, "Cost model").
"""

from __future__ import annotations

import math
from collections.abc import Sequence

#: the metric name of the cost rows (operations, see the module docstring)
COST_METRIC = "cost_ops"
#: the metric name of the LASSO's coordinate-descent epochs (LASSO and LREMH's step 1)
EPOCHS_METRIC = "lasso_epochs"
#: one line for notes and axis labels
COST_DEFINITION = (
    "machine-independent cost in operations, from the algorithms (paper Sec. 4.4-4.6, Alg. 2): "
    "EM k·N·m + 2·N·m per iteration on m candidates; LASSO N·B + k·C + 2·k·C per epoch; LREMH = LASSO + C + EM on its "
    "kept candidates (docs/papers/lremh.md, 'Cost model')"
)


def em_ops(n_users: int, k: int, candidates: int, iterations: int) -> float:
    """EM on ``candidates`` cells (Sec. 4.4, Alg. 2 lines 12–37): the likelihood table k·N·m, then
    2·N·m per iteration (E-step normaliser and M-step posterior average)."""
    n, m = float(n_users), float(candidates)
    return n * m * (k + 2.0 * float(iterations))


def lasso_ops(n_users: int, sizes: Sequence[int], epochs: int) -> float:
    """The LASSO estimate (Sec. 4.5, Alg. 2 lines 1–10): bit counts N·B, the B × C design matrix
    with k ones per column (k·C), then 2·k·C per coordinate-descent epoch on it."""
    k, C, B = len(sizes), float(math.prod(int(s) for s in sizes)), float(sum(sizes))
    return float(n_users) * B + k * C * (1.0 + 2.0 * float(epochs))


def estimate_ops(
    method: str, n_users: int, sizes: Sequence[int], iterations: int, candidates: int, epochs: int | None
) -> float:
    """The cost of one estimate of ``method`` (``em``/``em_converged``: EM from uniform over Ω_S;
    ``lasso``; ``lremh``/``lremh_converged``: Alg. 2 = LASSO + pruning scan + EM on the kept
    ``candidates``) from what the job recorded about it."""
    k, C = len(sizes), math.prod(int(s) for s in sizes)
    if method in ("em", "em_converged"):
        return em_ops(n_users, k, candidates, iterations)
    if epochs is None:
        raise ValueError(f"{method}: the cost needs the LASSO's coordinate-descent epochs")
    if method == "lasso":
        return lasso_ops(n_users, sizes, epochs)
    if method in ("lremh", "lremh_converged"):
        return lasso_ops(n_users, sizes, epochs) + float(C) + em_ops(n_users, k, candidates, iterations)
    raise ValueError(f"no cost model for method {method!r}")
