"""Exact privacy loss of a 1-D mechanism from the output law it declares.

The loss of an ε-LDP mechanism is max over inputs x, x' and outputs y of log f(y|x)/f(y|x')
(docs/verdicts-standard.md, "privacy"): computed here on a grid of inputs from the exact pmf (atoms)
and pdf (continuous part), in log space where the probabilities underflow. The privacy audit
(``ldprepro.audit``) and the mechanism contract (``contract.check_mechanism``) both use it.
"""

from __future__ import annotations

import math

import numpy as np

from ldprepro.domain.mechanisms.base import Mechanism


def _max_log_ratio(table: np.ndarray) -> float:
    """max over columns (outputs) of log(max_row / min_row); inf if an output is impossible for
    some input and possible for another."""
    hi, lo = table.max(axis=0), table.min(axis=0)
    live = hi > 0
    if (lo[live] <= 0).any():
        return math.inf
    return float(np.log(hi[live] / lo[live]).max()) if live.any() else 0.0


def _max_log_ratio_log(log_table: np.ndarray) -> float:
    """``_max_log_ratio`` on a table of log-probabilities (exact where the probabilities underflow,
    e.g. HM's P(−C | 1) ≈ e^{−1050} at ε = 700)."""
    hi, lo = log_table.max(axis=0), log_table.min(axis=0)
    live = hi > -np.inf
    if (lo[live] == -np.inf).any():
        return math.inf
    return float((hi[live] - lo[live]).max()) if live.any() else 0.0


def _log_law(prob: np.ndarray, log_prob) -> np.ndarray:
    """log of ``prob``, with ``log_prob()`` (the mechanism's exact log law) only where ``prob``
    underflowed to 0: the audit reads the law the mechanism samples from (``pmf``/``pdf``), and
    stays exact where those are below the smallest double at large ε."""
    with np.errstate(divide="ignore"):
        out = np.log(prob)
        under = out == -np.inf
        if under.any():
            out = np.where(under, log_prob(), out)
    return out


def numeric_exact_loss(mech: Mechanism, n_inputs: int = 201, n_outputs: int = 4001) -> float:
    """Exact loss of a 1-D mechanism from its pmf (atoms) and pdf (continuous part), in log space
    where they underflow (``logpmf``/``logpdf``)."""
    xs = np.linspace(-1.0, 1.0, n_inputs)
    loss = 0.0
    if len(mech.support()):
        loss = max(loss, _max_log_ratio_log(_log_law(mech.pmf(xs), lambda: mech.logpmf(xs))))
    if mech.continuous:
        lo, hi = mech.output_bounds()
        if not math.isfinite(lo):
            lo, hi = -1.0 - 40.0 / mech.eps, 1.0 + 40.0 / mech.eps
        ys = np.linspace(lo, hi, n_outputs)[1:-1][None, :]
        loss = max(loss, _max_log_ratio_log(_log_law(mech.pdf(ys, xs[:, None]), lambda: mech.logpdf(ys, xs[:, None]))))
    return loss
