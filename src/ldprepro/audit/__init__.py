"""Privacy audit: is the claimed ε of every mechanism and protocol the pipeline runs true?

For each subject (a mechanism at a claimed ε) the audit reports

- the **exact privacy loss**: the maximum log ratio of the output pmf/pdf over pairs of inputs and
  over outputs, computed from the closed forms (``inf`` where the support moves with the input);
- an **empirical lower bound** from the real perturbation code (never a sufficient-statistic
  shortcut): N trials on each of two inputs x0, x1 chosen to maximise the exact ratio, the
  likelihood-ratio-optimal event S = {y : f(y|x0)/f(y|x1) ≥ t} with t chosen on an independent
  pilot sample, Clopper–Pearson bounds on TPR = P(S|x0) and FPR = P(S|x1), and
  ε_emp = ln(TPR_low / FPR_high); with confidence 1−α, ε_emp is below the true loss;
- a **verdict**: "holds" if the exact loss ≤ claimed ε (and ε_emp ≤ claimed), else "violated"
  with the measured loss. A violation is a finding about a paper, or a bug if this project
  presents the mechanism as ε-LDP (the tests fail then).

Modules: ``subjects`` (:class:`Subject` and the subjects of each family), ``empirical`` (the
empirical lower bound, Clopper–Pearson, ``audit_rows``, ``run_family``), ``figure`` (``audit_figure``, ``plot_audit``);
their public names are importable from ``ldprepro.audit``.
"""

from ldprepro.audit.empirical import audit_rows, clopper_pearson, empirical_lower_bound, run_family
from ldprepro.audit.figure import plot_audit
from ldprepro.audit.subjects import (
    FAMILIES,
    Subject,
    bshp_subjects,
    duchi_md_subject,
    frequency_subjects,
    graded_subjects,
    multidim_subjects,
    numeric_subject,
    numeric_subjects,
    rappor_subjects,
    sampled_md_exact,
    subjects_for,
)

__all__ = [
    "FAMILIES",
    "Subject",
    "audit_rows",
    "bshp_subjects",
    "clopper_pearson",
    "duchi_md_subject",
    "empirical_lower_bound",
    "frequency_subjects",
    "graded_subjects",
    "multidim_subjects",
    "numeric_subject",
    "numeric_subjects",
    "plot_audit",
    "rappor_subjects",
    "run_family",
    "sampled_md_exact",
    "subjects_for",
]
