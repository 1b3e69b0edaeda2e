"""Mean estimation under LDP: every user perturbs her value(s), the collector averages.

One job = one (figure, dataset, mechanism); it loops over ε (and any other swept parameter) and
repetitions. Each (ε, rep) draws from its own Generator keyed by the job's parameters, so results
do not depend on the order of the loops or on which other jobs run.

Metrics per repetition (averaged over the numeric attributes when there are several):
- ``abs_error``: |m̂ − m| (paper 003's AE, paper 000's MAE after averaging over repetitions);
- ``sq_error``: (m̂ − m)² (paper 002's MSE after averaging).

Theory rows (``rep`` 0, metrics ``sq_error_theory`` / ``abs_error_theory``): for a mean of
independent unbiased outputs E(m̂ − m)² = Σ_i Var[y_i | x_i] / n² exactly (HierA: its own exact
variance, intended reading without clipping), and E|m̂ − m| ≈ √(2/π)·√(that) by the central
limit theorem. Estimators without a closed form (biased readings) get no theory rows.

Which theory rows are exact is declared here, and only here: every theory row carries
``theory_exact`` (True: the value is the exact expectation of the measured metric for the
estimator that was run, on the job's data). ``abs_error_theory`` is never exact (a CLT
approximation); ``sq_error_theory`` is exact when the estimator's ``exact_sq_error`` says so —
unbiased outputs with their exact variance (every registered 1-D mechanism, discretised or not, the
multidimensional collections with Duchi's ½-ties, graded Laplace, the at-level references), not
HierA with clipping (the theory is the unclipped estimator's) nor Duchi's literal-ties variant. The
claim engine decides a claim exactly wherever every compared curve has an exact row
(``ldprepro.claims.points``), and checks the simulation against those rows in a claim of its own.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ldprepro.domain.binary_sum import BLOCKS_FROM, BinaryCount
from ldprepro.domain.mechanisms import get_mechanism, get_multidim
from ldprepro.domain.mechanisms.base import Mechanism
from ldprepro.domain.mechanisms.basic import Laplace, binary_reports
from ldprepro.domain.mechanisms.multidim import LaplaceMultiDim, MultiDimMechanism
from ldprepro.domain.sufficient import laplace_sum
from ldprepro.domain.uniform_sum import UniformMixtureSum
from ldprepro.pipeline.seeding import rngs_for


class PerturbAndAverage:
    """Users perturb with ``mech``; the collector averages. Var(m̂) = Σ_i Var_i / n².

    ``estimate`` draws the mean from exact sufficient statistics where the mean depends only on
    them (1-D Laplace: mean(x) + b·(Γ(n) − Γ(n))/n; from ``BLOCKS_FROM`` users on, Duchi's 1-D
    mechanism and Harmony: C·(2S − n)/n with S the number of +C reports, ``domain.binary_sum``, and
    PM, its family and DCT: the sum of their uniform-mixture reports, ``domain.uniform_sum``
    (``exact_sum_kind``); multidimensional mechanisms: their ``mean_reporter``, e.g. the sampled
    coordinates summed by bincount, Duchi's coordinates discretised from a random byte each);
    ``estimate_per_user`` perturbs every user (same law, used by the audit and the tests)."""

    def __init__(self, mech):
        self.mech = mech
        #: ``var_of_mean`` is the exact E(m̂ − m)² of ``estimate``: the mechanism's outputs are
        #: unbiased with the stated variance (the mechanism contract), except Duchi's literal ties
        self.exact_sq_error = getattr(mech, "ties", "half") == "half"
        self._mean, self._mean_of = None, None
        if type(mech) is Laplace or isinstance(mech, LaplaceMultiDim):
            self._laplace_scale = mech.scale if type(mech) is Laplace else mech.mechanism.scale
        else:
            self._laplace_scale = None
        self._sum, self._sum_of = None, None

    def estimate(self, x, rng):
        if self._laplace_scale is not None:
            # mean of t + Lap(b) over n users: mean(t) (fixed for the job, computed once) + b·(Γ(n) − Γ(n))/n
            if self._mean_of is not x:
                self._mean, self._mean_of = np.asarray(x, dtype=float).mean(axis=0), x
            n = np.shape(x)[0]
            return self._mean + laplace_sum(self._laplace_scale, n, rng, size=np.shape(self._mean)) / n
        one_attribute = np.ndim(x) <= 2 and np.size(x) == np.shape(x)[0]
        if one_attribute and not self.draws_every_report(np.shape(x)[0]):  # the reports' sum, exactly
            if self._sum_of is not x:
                self._sum = report_sum(self.mech, x, exact_sum_kind(self.mech, np.shape(x)[0]))
                self._sum_of = x
            return np.full(np.shape(x)[1:], self._sum.sample(rng) / np.shape(x)[0])
        if isinstance(self.mech, MultiDimMechanism):
            if self._sum_of is not x:  # the data's sampler, prepared once
                self._sum, self._sum_of = self.mech.mean_reporter(x), x
            return self._sum.sample(rng)
        return self.estimate_per_user(x, rng)

    def estimate_per_user(self, x, rng):
        return self.mech.perturb(x, rng).mean(axis=0)

    def draws_every_report(self, n_users: int) -> bool:
        """Whether ``estimate`` draws every user's report (False: from sufficient statistics)."""
        return self._laplace_scale is None and exact_sum_kind(self.mech, n_users) is None

    def var_of_mean(self, x):
        return np.asarray(self.mech.variance(x), dtype=float).sum(axis=0) / x.shape[0] ** 2


def binary_sum(mech, count: BinaryCount, rng) -> float:
    """The sum of ``count.n`` reports ±C of ``mech``: C·(2S − n), S the number of +C (one draw)."""
    return mech.c * (2 * count.sample(rng) - count.n)


def exact_sum_kind(mech, n_users: int) -> str | None:
    """How the sum of ``n_users`` reports of the 1-D mechanism ``mech`` is drawn without a draw per
    user, or None (every user perturbed): from ``BLOCKS_FROM`` users on, "count" for a ±C mechanism
    (Duchi, Harmony: ``domain.binary_sum``), "mixture" for a uniform mixture (PM and its family,
    DCT: ``domain.uniform_sum``). A function of the mechanism and n only: the random stream never
    depends on the machine."""
    if n_users < BLOCKS_FROM or not isinstance(mech, Mechanism):
        return None
    if binary_reports(mech):
        return "count"
    return "mixture" if mech.uniform_mixture() is not None else None


class _CountSum:
    """The sum of the ±C reports of users ``x`` (``domain.binary_sum``), one draw per ``sample``."""

    def __init__(self, mech, x):
        self.mech, self.count = mech, BinaryCount(mech.prob_plus(x))

    def sample(self, rng) -> float:
        return binary_sum(self.mech, self.count, rng)


def report_sum(mech, x, kind: str):
    """The exact sampler of the sum of the reports of users ``x`` under ``mech``, of ``kind`` (what
    ``exact_sum_kind`` says): ``sample(rng)`` draws the sum once."""
    if kind == "count":
        return _CountSum(mech, x)
    if kind == "mixture":
        return UniformMixtureSum(mech.uniform_mixture(), x)
    raise ValueError(f"no exact sampler of the reports' sum of kind {kind!r} (count, mixture)")


class HierAEstimator:
    """Paper 000: LHP users + the HierA collector (Algorithm 5) on levels {5,4,3,2,1}·ε (docs/papers/hiera.md §1),
    sampled through the exact count-level path. Theory from ``graded.hiera_variance``: the exact
    variance of the intended-mode estimate without clipping (with clipping it is the unclipped
    reference; clipping matters only for small groups, docs/papers/hiera.md §6.1); none for the biased readings."""

    def __init__(
        self, eps: float, mu: int = 2, step5_mode: str = "intended", clip: bool = True, multipliers=(5, 4, 3, 2, 1)
    ):
        from ldprepro.domain.graded import GradedLevels, HierA

        self.levels = GradedLevels.from_base_eps(eps, k=len(multipliers), multipliers=list(multipliers))
        self.model = HierA(self.levels, mu=mu, step5_mode=step5_mode, clip=clip)
        #: the theory is the unclipped intended-mode variance: exact only for that estimator
        self.exact_sq_error = step5_mode == "intended" and not clip
        self._sorted, self._sorted_for = None, None

    def estimate(self, x, rng):
        """Count path with the users sorted by level once per data set (not once per repetition)."""
        from ldprepro.domain.graded import sort_by_level

        if self._sorted_for is not x:
            self._sorted, self._sorted_for = sort_by_level(x, self.levels), x
        return self.model.estimate_from_counts(self._sorted.sample_counts(rng), rng)

    def estimate_per_user(self, x, rng):
        return self.model.run(x, rng, path="record")

    def draws_every_report(self, n_users: int) -> bool:
        """Whether ``estimate`` draws a uniform per user: below ``binary_sum.BLOCKS_FROM`` users of
        distinct values (from it, or on data summarised by value, the levels' counts are drawn as
        counts)."""
        return n_users < BLOCKS_FROM

    def var_of_mean(self, x):
        from ldprepro.domain.graded import hiera_variance

        if self.model.step5_mode != "intended":
            return None
        return hiera_variance(x, self.levels, self.model.mu)


class GradedLaplaceEstimator(PerturbAndAverage):
    """Paper 000's baseline: Lap(2/ε_level(x)) with the budget of the user's own level (not LDP)."""

    def __init__(self, eps: float, multipliers=(5, 4, 3, 2, 1)):
        from ldprepro.domain.graded import GradedLaplace, GradedLevels

        super().__init__(
            GradedLaplace(GradedLevels.from_base_eps(eps, k=len(multipliers), multipliers=list(multipliers)))
        )
        self._level_sizes, self._sized_for = None, None

    def estimate(self, x, rng):
        """mean(x) + Σ_levels b_l·(Γ(n_l) − Γ(n_l))/n: exact, with n_l the users at level l."""
        x = np.asarray(x, dtype=float)
        if self._sized_for is not x:
            levels = self.mech.levels
            self._level_sizes = np.bincount(levels.level_of(x).reshape(-1), minlength=levels.k)
            self._sized_for = x
        noise = laplace_sum(2.0 / self.mech.levels.eps, self._level_sizes, rng).sum()
        return x.mean(axis=0) + noise / x.shape[0]

    def draws_every_report(self, n_users: int) -> bool:
        return False  # the levels' Laplace sums, two Gamma draws each


class AtLevelEstimator:
    """Budget-matched reference for paper 000 (ours): each user runs ``base`` (Harmony or PM) with
    the budget of her own level, {5,4,3,2,1}·ε, so the average budget equals HierA's and graded
    Laplace's. Not LDP at any single ε (the budget depends on the input's level); it separates
    "graded methods are better" from "graded methods spend more". Unbiased: each output is."""

    def __init__(self, base: str, eps: float, multipliers=(5, 4, 3, 2, 1)):
        from ldprepro.domain.graded import GradedLevels

        self.levels = GradedLevels.from_base_eps(eps, k=len(multipliers), multipliers=list(multipliers))
        self.mechs = [get_mechanism(base, float(e)) for e in self.levels.eps]
        self.exact_sq_error = True  # unbiased outputs, each with its level's exact variance
        self._by_level, self._grouped_for = None, None

    def _groups(self, x):
        level = self.levels.level_of(x)
        return [(np.flatnonzero(level == t), m) for t, m in enumerate(self.mechs)]

    def estimate(self, x, rng):
        """Σ over levels of the level's users' outputs, / n. The users are grouped by level once
        per data set (``x`` is fixed across a job's repetitions); each repetition draws, level by
        level, the sum of the level's reports: exactly without a draw per user where the level's
        mechanism has such a sampler on ``BLOCKS_FROM`` users or more (``exact_sum_kind``: Harmony's
        count of +C reports, PM's uniform mixture), else by perturbing ``x[idx]``."""
        if self._grouped_for is not x:
            kinds = [exact_sum_kind(m, x.shape[0]) for m in self.mechs]
            self._by_level = [
                (x[idx], m, report_sum(m, x[idx], kind) if kind is not None else None)
                for (idx, m), kind in zip(self._groups(x), kinds)
                if idx.size
            ]
            self._grouped_for = x
        total = 0.0
        for values, mech, summed in self._by_level:
            total += summed.sample(rng) if summed is not None else float(mech.perturb(values, rng).sum())
        return total / x.shape[0]

    def var_of_mean(self, x):
        return sum(float(np.sum(m.variance(x[idx]))) for idx, m in self._groups(x) if idx.size) / x.shape[0] ** 2

    def draws_every_report(self, n_users: int) -> bool:
        """Whether ``estimate`` perturbs the users of some level (fewer than ``BLOCKS_FROM`` users, or a
        level whose mechanism has no exact sampler of its reports' sum)."""
        return any(exact_sum_kind(m, n_users) is None for m in self.mechs)


#: Estimators that are not "perturb with a 1-D mechanism and average".
ESTIMATORS = {
    "hiera": HierAEstimator,
    "graded_laplace": GradedLaplaceEstimator,
    "harmony_at_level": lambda eps, **kw: AtLevelEstimator("harmony", eps, **kw),
    "pm_at_level": lambda eps, **kw: AtLevelEstimator("pm", eps, **kw),
}


def make_collector(mechanism: str, eps: float, d: int, params: dict | None = None):
    """The estimator for users' d numeric values at budget ``eps``: the 1-D mechanism when d = 1,
    the paper's multidimensional collection (Zhao Alg. 6 / Duchi MD / Laplace ε/d) otherwise, or
    one of ESTIMATORS (paper 000's HierA and graded Laplace, 1-D)."""
    params = dict(params or {})
    if mechanism in ESTIMATORS:
        if d != 1:
            raise ValueError(f"{mechanism} estimates one attribute at a time, got {d} attributes")
        return ESTIMATORS[mechanism](eps, **params)
    if d == 1:
        return PerturbAndAverage(get_mechanism(mechanism, eps, **params))
    return PerturbAndAverage(get_multidim(mechanism, eps, d, **params))


def mean_error_rows(
    values: np.ndarray,
    mechanism: str,
    eps_list,
    reps: int,
    seed: int,
    key: dict,
    base: dict,
    params: dict | None = None,
    budget_fraction: float = 1.0,
    collector: Callable | None = None,
) -> list[dict]:
    """Tidy rows of the mean-estimation error of ``mechanism`` on ``values`` ((n,) or (n, d) in
    [−1, 1]) for every ε in ``eps_list`` and ``reps`` repetitions.

    ``budget_fraction`` scales the budget given to the numeric attributes (paper 002 Fig. 6:
    ε·d_n/d, the rest going to the categorical attributes); ``eps`` in the rows is the total.
    """
    x = np.asarray(values, dtype=float)
    one_d = x.ndim == 1
    d = 1 if one_d else x.shape[1]
    n = x.shape[0]
    truth = x.mean(axis=0)
    rows = []
    for eps in eps_list:
        eps = float(eps)
        eps_numeric = eps * budget_fraction
        est = (collector or make_collector)(mechanism, eps_numeric, d, params)
        common = {
            **base,
            "mechanism": mechanism,
            "eps": eps,
            "eps_numeric": eps_numeric,
            "n_users": n,
            "n_attributes": d,
        }
        var = est.var_of_mean(x)
        if var is not None:
            var_of_mean = np.atleast_1d(np.asarray(var, dtype=float))
            rows.append(
                {
                    **common,
                    "rep": 0,
                    "metric": "sq_error_theory",
                    "value": float(var_of_mean.mean()),
                    "theory_exact": bool(getattr(est, "exact_sq_error", False)),
                }
            )
            rows.append(
                {
                    **common,
                    "rep": 0,
                    "metric": "abs_error_theory",
                    "value": float(np.mean(np.sqrt(2.0 / math.pi * var_of_mean))),
                    "theory_exact": False,  # the central limit theorem's approximation
                }
            )
        # one keyed generator per repetition, built together (rngs_for: rng_for's, state for state);
        # the errors of all repetitions in one array pass (each row reduced as a lone one would be)
        gens = rngs_for(seed, [{**key, "eps": eps, "rep": rep} for rep in range(int(reps))])
        if not gens:
            continue
        err = np.array([np.atleast_1d(est.estimate(x, rng)) for rng in gens]).reshape(len(gens), -1) - truth
        abs_errors, sq_errors = np.abs(err).mean(axis=1).tolist(), (err**2).mean(axis=1).tolist()
        for rep, (abs_error, sq_error) in enumerate(zip(abs_errors, sq_errors)):
            rows.append({**common, "rep": rep, "metric": "abs_error", "value": abs_error})
            rows.append({**common, "rep": rep, "metric": "sq_error", "value": sq_error})
    return rows
