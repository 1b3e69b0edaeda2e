"""The machine-independent cost of paper 004's estimators (docs/papers/lremh.md, "Cost model"):
what Figs. 1–2's efficiency claims are decided on (issue 26: a verdict depends only on config
and seed; wall-clock or CPU time depends on the machine and on what else runs on it).

The unit is one arithmetic operation on a (user, candidate) pair or on a nonzero of the LASSO
design matrix, counted for the implementation the config runs (issue 51.4: ``em.impl`` and
``converged.impl``; LREMH's EM is always the explicit candidate-list EM of Alg. 2 step 3). With N
users, the k attributes of S with domains |Ω_j|, C = Π_j |Ω_j| candidates, B = Σ_j |Ω_j| report bits:

* **Explicit EM** (``em_candidates``; Sec. 4.4, Alg. 2 lines 12–37): the likelihood table
  P(T^i | ω) ∝ Π_{j∈S} λ^i_j(ω_j) of each of N users and each of the m candidates, ``k·N·m``, then per
  iteration the normaliser Z_i = Σ_ω θ(ω)·P(T^i | ω) and the average of the posteriors, one
  multiply-add per (user, candidate) each: ``2·N·m``.
* **Factorised EM** (``em``; the same estimate, two tensor contractions per iteration): the λ arrays
  once, ``N·B``; per iteration, with the domains sorted w_1 ≤ … ≤ w_k and P_j = w_1·…·w_j, the
  per-user outer products of the first k − 1 attributes' λ (``N·(P_1 + … + P_{k−1})``), the
  normaliser (``N·C`` multiply-adds and ``N·w_k``), the division by it (``N·P_{k−1}``) and the
  posterior sums (``N·C``): ``N·(2·C + P_1 + … + P_{k−1} + P_{k−1} + w_k)``. There is no likelihood
  table; the products are rebuilt every iteration.
* **LASSO** (Sec. 4.5, Alg. 2 lines 1–10): a fixed cost per fit, :data:`LASSO_FIXED_OPS` (the
  solver's set-up: input checks, copies, the solver's start), the bit counts c_{j,b} (``N·B``), the
  design matrix M (B × C, k ones per column: ``k·C``) and coordinate descent on it: per epoch, each
  coordinate's correlation with the residual and the residual update touch its k nonzeros,
  ``2·k·C``.
* **Pruning** (Alg. 2 line 11): one comparison θ⁰(ω) > τ per candidate, ``C``.

So explicit EM from uniform costs ``N·C·(k + 2·t)`` after t iterations, LASSO
``F + N·B + k·C·(1 + 2·e)`` after e coordinate-descent epochs (F = :data:`LASSO_FIXED_OPS`), and
LREMH the LASSO, the pruning and explicit EM on its m kept candidates:
``F + N·B + k·C·(1 + 2·e) + C + N·m·(k + 2·t)`` — Alg. 2's advantage (1) is m < C, advantage (2) a
smaller t. Every factor is recorded by the jobs (``iterations``, ``candidates``, the LASSO's epochs)
or declared, so the cost is a function of config and seed only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

#: the metric name of the cost rows (operations, see the module docstring)
COST_METRIC = "cost_ops"
#: the metric name of the measured CPU time of an estimate (the alternative reading of "time")
CPU_METRIC = "time_s"
#: the metric name of the LASSO's coordinate-descent epochs (LASSO and LREMH's step 1)
EPOCHS_METRIC = "lasso_epochs"
#: the fixed cost of one LASSO fit in operations [I]: scikit-learn's per-fit set-up (input checks,
#: copies, the solver's start) takes about half a millisecond of CPU whatever the problem's size, which
#: is 1–3 × 10⁶ of the explicit EM's counted operations at its measured CPU time per operation
#: (timing/records/lremh_lasso_fixed.md, a one-off study: 2.6 × 10⁶ when written; a first probe
#: gave 1.2 × 10⁶). Declared, so that the cost stays a function of config and seed; only its order of
#: magnitude is claimed. Without it the count ranked the LASSO-based methods cheaper than CPU time does.
LASSO_FIXED_OPS = 2.0e6
#: the EM implementations the config can run (``em.impl``, ``converged.impl``)
EM_IMPLS = ("explicit", "factorised")
#: one line for notes and axis labels
COST_DEFINITION = (
    "machine-independent cost in operations of the implementation the config runs (paper Sec. 4.4-4.6, Alg. 2): "
    "explicit EM k·N·m + 2·N·m per iteration on m candidates, factorised EM N·B + N·(2·C + its outer products) per "
    "iteration; LASSO 2·10⁶ fixed + N·B + k·C + 2·k·C per epoch; LREMH = LASSO + C + explicit EM on its kept "
    "candidates (docs/papers/lremh.md, 'Cost model')"
)


def em_ops(n_users: int, k: int, candidates: int, iterations: int) -> float:
    """The explicit EM on ``candidates`` cells (Sec. 4.4, Alg. 2 lines 12–37): the likelihood table
    k·N·m, then 2·N·m per iteration (E-step normaliser and M-step posterior average)."""
    n, m = float(n_users), float(candidates)
    return n * m * (k + 2.0 * float(iterations))


def factorised_em_ops(n_users: int, sizes: Sequence[int], iterations: int) -> float:
    """The factorised EM over all of Ω_S (``ldprepro.domain.joint.em``): the λ arrays N·B once, then
    per iteration N·(2·C + P_1 + … + P_{k−1} + P_{k−1} + w_k) with the domains sorted w_1 ≤ … ≤ w_k
    and P_j = w_1·…·w_j (the per-user outer products, the division by the normaliser, the two
    contractions; module docstring)."""
    w = sorted(int(s) for s in sizes)
    prefix = [math.prod(w[: j + 1]) for j in range(len(w) - 1)]
    rest = prefix[-1] if prefix else 1
    per_iteration = 2.0 * math.prod(w) + sum(prefix) + rest + w[-1]
    return float(n_users) * (float(sum(w)) + per_iteration * float(iterations))


def lasso_ops(n_users: int, sizes: Sequence[int], epochs: int) -> float:
    """The LASSO estimate (Sec. 4.5, Alg. 2 lines 1–10): its fixed cost :data:`LASSO_FIXED_OPS`, bit
    counts N·B, the B × C design matrix with k ones per column (k·C), then 2·k·C per
    coordinate-descent epoch on it."""
    k, C, B = len(sizes), float(math.prod(int(s) for s in sizes)), float(sum(sizes))
    return LASSO_FIXED_OPS + float(n_users) * B + k * C * (1.0 + 2.0 * float(epochs))


def estimate_ops(
    method: str,
    n_users: int,
    sizes: Sequence[int],
    iterations: int,
    candidates: int,
    epochs: int | None,
    impl: str | None = "explicit",
) -> float:
    """The cost of one estimate of ``method`` (``em``/``em_converged``/``em_lopub``: EM from uniform
    over Ω_S, in the implementation ``impl`` the config runs; ``lasso``; ``lremh``/``lremh_converged``/
    ``lremh_lopub``: Alg. 2 = LASSO + pruning scan + explicit EM on the kept ``candidates``) from what
    the job recorded about it."""
    k, C = len(sizes), math.prod(int(s) for s in sizes)
    if method in ("em", "em_converged", "em_lopub"):
        if impl not in EM_IMPLS:
            raise ValueError(f"{method}: no cost model for EM implementation {impl!r}; one of {EM_IMPLS}")
        if impl == "factorised":
            return factorised_em_ops(n_users, sizes, iterations)
        return em_ops(n_users, k, candidates, iterations)
    if epochs is None:
        raise ValueError(f"{method}: the cost needs the LASSO's coordinate-descent epochs")
    if method == "lasso":
        return lasso_ops(n_users, sizes, epochs)
    if method in ("lremh", "lremh_converged", "lremh_lopub"):
        return lasso_ops(n_users, sizes, epochs) + float(C) + em_ops(n_users, k, candidates, iterations)
    raise ValueError(f"no cost model for method {method!r}")
