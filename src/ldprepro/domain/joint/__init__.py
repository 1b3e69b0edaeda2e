"""Paper 004 (docs/papers/lremh.md): RR-LDP on the user side and three server-side estimators of
the joint distribution of a k-subset of attributes: EM, LASSO and LREMH.

* :mod:`.rrldp` — per-attribute unary encoding, concatenation, permanent + instantaneous RR (built
  on :class:`ldprepro.domain.frequency.RapporUE`), labelled privacy report;
* :mod:`.estimators` — EM (factorised, O(N·|Ω_S|) per iteration without materialising the N×|Ω_S|
  likelihood matrix), LASSO (scikit-learn on the expected-bit design matrix), LREMH (LASSO start,
  pruning, EM on the survivors), AVD and the true joint;
(The derivation of the LoPub "coarse" Adult from the UCI files is data preparation:
``ldprepro.data.lopub_adult``.)
"""

from ldprepro.domain.joint.estimators import (
    avd,
    design_matrix,
    em,
    em_candidates,
    lambda_blocks,
    lasso,
    loglik,
    logliks,
    lremh,
    memory_estimate,
    true_joint,
    unbiased_bit_counts,
)
from ldprepro.domain.joint.rrldp import RRLDP, privacy_report

__all__ = [
    "RRLDP",
    "privacy_report",
    "em",
    "em_candidates",
    "lambda_blocks",
    "lasso",
    "lremh",
    "loglik",
    "logliks",
    "avd",
    "true_joint",
    "design_matrix",
    "unbiased_bit_counts",
    "memory_estimate",
]
