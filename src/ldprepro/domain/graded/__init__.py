"""Graded (hierarchical) LDP for numerical data: paper 000, HierA (Hao, Wu, Wan, *Sensors* 2023, 23(3), 1115).

Contract: docs/papers/hiera.md §1-6 and §9. Contents (every name is importable from ``ldprepro.domain.graded``):

* ``levels``: :class:`GradedLevels` — the k sub-intervals D_1..D_k of [-1, 1] and their budgets
  ε_1 > ... > ε_k (§1).
* ``laplace``: :class:`GradedLaplace` — the paper's "graded Laplace" baseline v + Lap(2/ε_{level(v)}) (§2).
  It is **not** ε-LDP for any finite ε (the log density ratio grows linearly in |y|);
  :meth:`GradedLaplace.log_ratio` exposes it for the audit.
* ``lhp``: :class:`LHP` — the user side, Algorithm 3 (§3), with the exact joint pmf Pr(t*, v* | v) (§6.3) and
  :func:`lhp_worst_case_log_ratio` / :func:`lhp_privacy_audit` (§6.3: LHP violates the claimed bound);
  :func:`lhp_report_counts` (the reports' sufficient statistics) and :func:`lhp_sample_counts` /
  :func:`sort_by_level` (exact sampler of the per-level report counts).
* ``plc``: PLC, Algorithm 4 (§4): :func:`plc_keep_prob`, :func:`plc_convert_records`,
  :func:`plc_convert_counts`, :func:`plc`.
* ``hiera``: HierA, Algorithm 5 (§5): :func:`merge_matrix`, :func:`plan` (the §5.2 table), the record-level
  estimator :func:`hiera_estimate_records` and the exact count-level estimator :func:`hiera_estimate_counts`
  (sufficient statistics; binomial thinning for PLC), :func:`hiera_variance` (exact variance, intended
  mode, no clipping), :func:`hiera_expected_estimate` (large-n limit of E[m*], any mode, no clipping) and
  the wrapper :class:`HierA`.

Conventions. Level *indices* are 0-based throughout (index t is the paper's level t+1; index 0 is the least
private level with the largest budget ε_1). μ ("number of data reuses") is 1-based as in the paper,
μ ∈ {1..k}. Perturbed values are ±1 (int8). Per-level report counts are arrays of shape (..., k, 2) with
``counts[..., t, 0]`` = #(v* = -1) and ``counts[..., t, 1]`` = #(v* = +1) among reports with t* = t.
"""

from ldprepro.domain.graded.hiera import (
    STEP5_MODES,
    HierA,
    hiera_estimate_counts,
    hiera_estimate_records,
    hiera_expected_estimate,
    hiera_variance,
    merge_matrix,
    plan,
)
from ldprepro.domain.graded.laplace import GradedLaplace
from ldprepro.domain.graded.levels import GradedLevels
from ldprepro.domain.graded.lhp import (
    LHP,
    LevelSortedData,
    lhp_privacy_audit,
    lhp_report_counts,
    lhp_sample_counts,
    lhp_worst_case_log_ratio,
    sort_by_level,
)
from ldprepro.domain.graded.plc import plc, plc_convert_counts, plc_convert_records, plc_keep_prob

__all__ = [
    "GradedLevels",
    "GradedLaplace",
    "LHP",
    "lhp_worst_case_log_ratio",
    "lhp_privacy_audit",
    "plc_keep_prob",
    "plc_convert_records",
    "plc_convert_counts",
    "plc",
    "STEP5_MODES",
    "merge_matrix",
    "plan",
    "lhp_report_counts",
    "lhp_sample_counts",
    "LevelSortedData",
    "sort_by_level",
    "hiera_estimate_records",
    "hiera_estimate_counts",
    "hiera_variance",
    "hiera_expected_estimate",
    "HierA",
]
