"""One-call correctness check of a 1-D mechanism against the contract, as the math defines it.

    from ldprepro.domain.mechanisms.contract import check_mechanism
    report = check_mechanism("my_mech", eps_grid=(0.5, 1, 4))
    assert report.ok, report

Checks, at every ε of the grid (the tests in tests/test_mechanisms.py run the same properties with
tighter, mechanism-specific tools on every registered mechanism):

- shapes: ``perturb`` keeps the shape of x, returns floats, refuses x outside [−1, 1] naming it;
- unbiasedness and variance: at fixed inputs (including the worst-case input), the sample mean is
  within ``z`` standard errors of x, and the mean squared error within ``z`` standard errors of
  ``variance(x)`` (standard error estimated on an independent half);
- normalisation: the pmf's atoms plus the integral of the pdf over ``output_bounds`` is 1;
- the declared law is the one ``perturb`` samples (``law_check.verify_law``: a law declared, finite
  and ≥ 0, goodness of fit of samples at x = −1, 0, 1), as the audit requires before an exact loss;
- privacy: the exact loss from the pmf/pdf (``privacy_loss.numeric_exact_loss``, the same
  computation as the audit's) is ≤ ε, for mechanisms registered as presented as LDP.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ldprepro.domain.mechanisms.worst_case import worst_input

Z = 5.0  # |z| above which a moment is reported: a false alarm has probability ~6e-7 per check


@dataclass
class ContractReport:
    name: str
    failures: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures

    def __str__(self) -> str:
        head = f"{self.name}: {len(self.checked)} checks, {len(self.failures)} failed"
        return "\n  ".join([head, *self.failures])


def _worst_input(mech) -> float:
    return worst_input(mech)  # on 2001 points of [−1, 1]


def _unknown_name_message(name: str, known) -> str:
    """What to do when ``check_mechanism`` is given a name nobody registered: a plugin's mechanisms
    exist only once its module has been imported (``load_plugins``), as a pipeline job does with
    config.yaml's ``mechanism_plugins``."""
    return (
        f"check_mechanism: no mechanism {name!r} is registered. If it comes from a plugin, load the "
        "plugin first: ldprepro.mechanisms.load_plugins(['path/to/my_plugin.py']) with the modules "
        "listed under mechanism_plugins in config.yaml (a pipeline job does this itself), or pass the "
        f"factory instead of its name, check_mechanism(MyMech). Known: {', '.join(known)}"
    )


def check_mechanism(
    name_or_factory, eps_grid=(0.5, 1.0, 4.0), n: int = 200_000, seed: int = 0, presented_as_ldp: bool | None = None
) -> ContractReport:
    """Run the contract checks on a registered name (or a factory ``f(eps)``); see the module doc.
    A name that is not registered (a plugin not loaded yet) raises ValueError saying what to do."""
    from ldprepro.domain.mechanisms import MECHANISM_INFO, get_mechanism
    from ldprepro.domain.mechanisms.law_check import mass_problem, total_mass, verify_law
    from ldprepro.domain.mechanisms.privacy_loss import numeric_exact_loss

    if isinstance(name_or_factory, str):
        name = name_or_factory
        if name not in MECHANISM_INFO:
            raise ValueError(_unknown_name_message(name, MECHANISM_INFO))
        make = lambda e: get_mechanism(name, e)  # noqa: E731
        ldp = MECHANISM_INFO[name].presented_as_ldp if presented_as_ldp is None else presented_as_ldp
    else:
        name = getattr(name_or_factory, "__name__", "mechanism")
        make = name_or_factory
        ldp = True if presented_as_ldp is None else presented_as_ldp
    report = ContractReport(name)
    rng = np.random.default_rng(seed)

    def check(label: str, passed: bool, detail: str) -> None:
        report.checked.append(label)
        if not passed:
            report.failures.append(f"{label}: {detail}")

    for eps in eps_grid:
        mech = make(float(eps))
        tag = f"ε={eps:g}"
        for shape in [(), (7,), (3, 4)]:
            y = np.asarray(mech.perturb(np.zeros(shape), rng))
            check(f"{tag} shape {shape}", y.shape == shape and y.dtype == float, f"got {y.shape} {y.dtype}")
        try:
            mech.perturb(np.array([0.0, 1.5]), rng)
            check(f"{tag} refuses x = 1.5", False, "perturb accepted an input outside [−1, 1]")
        except ValueError as exc:
            check(f"{tag} refuses x = 1.5", "1.5" in str(exc), f"the error does not name the value: {exc}")
        for t in (-1.0, 0.0, 0.6, _worst_input(mech)):
            var = float(mech.variance(t))
            y = mech.perturb(np.full(n, t), rng)
            se = math.sqrt(var / n)
            z = (y.mean() - t) / se if se > 0 else (0.0 if y.mean() == t else math.inf)
            check(f"{tag} unbiased at x={t:.3g}", abs(z) <= Z, f"mean {y.mean():.6g} is {z:+.1f} SE from {t:.6g}")
            sq = (y - t) ** 2
            tested, spare = sq[n // 2 :], sq[: n // 2]
            tol = Z * spare.std(ddof=1) / math.sqrt(tested.size) + 1e-12 * var
            check(
                f"{tag} variance at x={t:.3g}",
                abs(tested.mean() - var) <= tol,
                f"E(y−x)² = {tested.mean():.6g} vs variance(x) = {var:.6g} (tolerance {tol:.2g})",
            )
            try:  # the law check's own computation (law_check.total_mass): one check, one answer
                problem = mass_problem(mech, t, *total_mass(mech, t))
            except ValueError as exc:  # a pmf or pdf that cannot be evaluated: reported by verify_law too
                problem = str(exc)
            check(f"{tag} total probability at x={t:.3g}", not problem, problem)
        law = verify_law(mech, name)
        check(f"{tag} declared law verified", law.ok, law.reason)
        loss = numeric_exact_loss(mech)
        if ldp:
            check(f"{tag} exact loss ≤ ε", loss <= eps * (1 + 1e-9), f"exact loss {loss:.6g} > ε = {eps:g}")
        else:
            check(f"{tag} exact loss computed", not math.isnan(loss), "exact loss is NaN")
    return report
