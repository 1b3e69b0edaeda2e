"""Privacy beside performance: the exact loss of every (mechanism, ε) of the benchmark and the
audit's empirical lower bound where the audit covered that ε.

A mechanism whose exact loss exceeds the ε it is run at is not ε-LDP and can never be "best"
(:mod:`.winners`); nor can one whose declared law fails the check of
:func:`ldprepro.domain.mechanisms.law_check.verify_law` (no law, a law that is not a probability
law, or samples that do not follow it): it is "unverifiable", with the reason, and no exact loss. The exact loss of a 1-D mechanism is the audit's own computation from its
pmf/pdf (:func:`ldprepro.domain.mechanisms.privacy_loss.numeric_exact_loss`), so a mechanism
added to the registry is judged by its law, not by what it claims. A multidimensional collection
inherits the verdict of its 1-D mechanism (Zhao et al. Alg. 6 samples k attributes at ε/k each:
sequential composition; Duchi's and Laplace's collections are ε-LDP by their papers' proofs and
audited in the audit's ``multidim`` family). Frequency oracles: their exact ratio max p/q (``epsilon_exact``).
"""

from __future__ import annotations

import math

import pandas as pd

from ldprepro.domain.frequency import get_oracle
from ldprepro.domain.mechanisms import get_mechanism
from ldprepro.domain.mechanisms.law_check import verified_exact_loss

#: the audit's relative tolerance on "exact loss ≤ ε" (floating point of the log-ratio computation)
TOLERANCE = 1e-9


def exact_loss(task: str, mechanism: str, eps: float, k: int | None = None) -> float:
    """Exact privacy loss of ``mechanism`` run at ``eps`` (frequency oracles need their k); NaN
    when the mechanism's declared law is not verified (:func:`verified_loss`)."""
    return verified_loss(task, mechanism, eps, k)[0]


def verified_loss(task: str, mechanism: str, eps: float, k: int | None = None) -> tuple[float, str]:
    """(exact loss, '') or, for a 1-D mechanism whose declared law fails
    :func:`ldprepro.domain.mechanisms.law_check.verify_law`, (NaN, the reason)."""
    if task == "frequency":
        return float(get_oracle(mechanism, int(k), float(eps)).epsilon_exact), ""
    return verified_exact_loss(get_mechanism(mechanism, float(eps)), mechanism)


def privacy_table(cells: pd.DataFrame, audit: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per distinct (task, mechanism, ε, k) of ``cells``: exact loss, ``ldp`` and the
    audit's empirical lower bound (NaN where the audit did not run that subject at that ε).
    ``k`` is the domain size of a frequency oracle, 0 for numeric mechanisms."""
    keys = cells[["task", "mechanism", "eps", "k"]].drop_duplicates()
    rows = []
    losses = {}  # a numeric mechanism's loss is the same for every task that runs it
    for task, mech, eps, k in keys.itertuples(index=False):
        k = int(k)
        law = (task == "frequency", mech, float(eps), k)
        if law not in losses:
            losses[law] = verified_loss(task, mech, eps, k or None)
        loss, unverifiable = losses[law]
        rows.append(
            {
                "task": task,
                "mechanism": mech,
                "eps": float(eps),
                "k": k,
                "exact_loss": loss,
                "ldp": not unverifiable and bool(loss <= float(eps) + TOLERANCE * max(1.0, float(eps))),
                "eps_empirical": _empirical(audit, task, mech, eps, k),
                "unverifiable": unverifiable,
            }
        )
    return pd.DataFrame(rows)


def _empirical(audit: pd.DataFrame | None, task: str, mech: str, eps: float, k: int | None) -> float:
    if audit is None or audit.empty:
        return math.nan
    subject = mech if task == "mean" else f"{mech}(k={k})"
    hit = audit[(audit["subject"] == subject) & ((audit["eps_claimed"] - float(eps)).abs() < 1e-12)]
    return float(hit["eps_empirical"].iloc[0]) if len(hit) else math.nan
