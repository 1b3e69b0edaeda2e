"""The audited subjects: every mechanism and protocol the pipeline runs, at a claimed ε, as a
:class:`Subject` (its exact privacy loss from the closed forms, the real perturbation code, and the
exact log likelihood ratio of its outputs), built per family (``subjects_for``): numeric,
multidim, frequency (with paper 004's RR-LDP), graded (paper 000) and histogram (paper 001)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ldprepro.domain.mechanisms import DuchiMultiDim, get_mechanism
from ldprepro.domain.mechanisms.base import Mechanism
from ldprepro.domain.mechanisms.law_check import verified_exact_loss
from ldprepro.domain.mechanisms.multidim import sampling_k
from ldprepro.domain.mechanisms.privacy_loss import (
    _log_law,
    _max_log_ratio,
)


@dataclass
class Subject:
    """One audited mechanism at one claimed ε.

    ``sample(x, n, rng)`` runs the real perturbation code n times on input x and returns one output
    per trial (1-D array; structured outputs are encoded as numbers); ``log_lr(y, x0, x1)`` is the
    exact log f(y|x0)/f(y|x1) for those outputs.
    """

    name: str
    family: str
    eps_claimed: float
    presented_as_ldp: bool
    exact_loss: float
    pair: tuple
    sample: Callable
    log_lr: Callable
    claim_source: str = ""
    notes: str = ""
    extra: dict = field(default_factory=dict)
    #: why the declared law could not be verified ('' when it was): the verdict is then
    #: "unverifiable", with no exact loss and no empirical bound (``law_check.verify_law``)
    unverifiable: str = ""
    #: whether a declared 1-D law behind it was checked by ``law_check.verify_law`` (its sampler
    #: tested against it): what the row proves says so (``empirical.what_it_proves``)
    law_checked: bool = False


def _numeric_log_lr(mech: Mechanism):
    atoms = mech.support()

    def log_lr(y, x0, x1):
        y = np.asarray(y, dtype=float)
        out = np.empty_like(y)
        on_atom = np.isin(y, atoms) if len(atoms) else np.zeros(y.shape, bool)
        if on_atom.any():
            idx = np.searchsorted(atoms, y[on_atom])
            l0 = _log_law(mech.pmf(x0), lambda: mech.logpmf(x0))[idx]
            l1 = _log_law(mech.pmf(x1), lambda: mech.logpmf(x1))[idx]
            out[on_atom] = l0 - l1
        if (~on_atom).any():
            yc = y[~on_atom]
            out[~on_atom] = _log_law(mech.pdf(yc, x0), lambda: mech.logpdf(yc, x0)) - _log_law(
                mech.pdf(yc, x1), lambda: mech.logpdf(yc, x1)
            )
        return out

    return log_lr


def numeric_subject(
    mech: Mechanism, name: str, family: str, claim_source: str, presented_as_ldp: bool = True, pair=(1.0, -1.0)
) -> Subject:
    """A 1-D mechanism's subject; its declared law is verified first (``verified_exact_loss``):
    a law that fails gets no exact loss, no empirical bound, and the verdict "unverifiable"."""
    loss, reason = verified_exact_loss(mech, name)
    return Subject(
        name=name,
        family=family,
        eps_claimed=mech.eps,
        presented_as_ldp=presented_as_ldp,
        exact_loss=loss,
        pair=pair,
        sample=None if reason else (lambda x, n, rng: mech.perturb(np.full(n, float(x)), rng)),
        log_lr=None if reason else _numeric_log_lr(mech),
        claim_source=claim_source,
        notes=f"unverifiable: {reason}" if reason else "",
        unverifiable=reason,
        law_checked=True,
    )


def numeric_subjects(eps: float, discretize_m=(1, 10)) -> list[Subject]:
    """Every registered 1-D mechanism (built-in or plugin, ``ldprepro.domain.mechanisms.MECHANISMS``),
    judged by the exact loss of its pmf/pdf, then the discretised variants."""
    from ldprepro.domain.mechanisms import MECHANISM_INFO, MECHANISMS

    out = []
    for name in MECHANISMS:
        info = MECHANISM_INFO[name]
        pair = (-1.0, 1.0) if name == "dct" else (1.0, -1.0)
        s = numeric_subject(get_mechanism(name, eps), name, "numeric", info.source, info.presented_as_ldp, pair)
        if name == "dct" and not s.unverifiable:
            s.notes = "output support [v−d, v+d] moves with v"
        out.append(s)
    for m in discretize_m:
        for n in ["pm", "pm_sub", "hm", "hm_tp"]:
            mech = get_mechanism(n, eps, discretize=m)
            if mech.continuous:  # hm below its threshold has no continuous branch
                continue
            out.append(numeric_subject(mech, f"{n}_disc(m={m})", "discretised", "paper 002 Alg. 5 (post-processing)"))
    return out


def _enumerate_duchi_md(mech: DuchiMultiDim):
    vertices = [np.array(v, dtype=float) for v in itertools.product([-1.0, 1.0], repeat=mech.d)]
    table = np.array([mech.output_probabilities(v)[1] for v in vertices])
    return vertices, table


def duchi_md_subject(eps: float, d: int, ties: str) -> Subject:
    """Duchi's d-dimensional mechanism; outputs encoded as the integer of their sign pattern.
    P(z|t) is multilinear in t, so the worst ratio is attained at vertices of the cube."""
    mech = DuchiMultiDim(eps, d, ties=ties)
    vertices, table = _enumerate_duchi_md(mech)
    hi = np.argmax(table.max(axis=0) / np.maximum(table.min(axis=0), 1e-300))
    x0, x1 = int(np.argmax(table[:, hi])), int(np.argmin(table[:, hi]))
    weights = 2 ** np.arange(d)[::-1]

    def sample(x, n, rng):
        z = mech.perturb(np.tile(vertices[x], (n, 1)), rng)
        return ((z > 0).astype(int) * weights).sum(axis=1).astype(float)

    outs, _ = mech.output_probabilities(vertices[0])
    codes = ((outs > 0).astype(int) * weights).sum(axis=1)
    order = np.argsort(codes)

    def log_lr(y, a, b):
        p0, p1 = table[a][order], table[b][order]
        with np.errstate(divide="ignore"):
            return (np.log(p0) - np.log(p1))[y.astype(int)]

    name = f"duchi_md(d={d}, ties={ties})"
    return Subject(
        name,
        "multidim",
        eps,
        ties == "half",
        _max_log_ratio(table),
        (x0, x1),
        sample,
        log_lr,
        "Wang et al. Alg. 3" + (" as printed" if ties == "wang" else ", ½-tie version (ours)"),
        extra={"vertices": [v.tolist() for v in vertices]},
    )


def sampled_md_exact(name: str, eps: float, d: int) -> float:
    """Alg. 6: k attributes at ε/k each, the sampled set independent of the data: the loss between
    inputs differing in every attribute is k times the per-attribute loss (NaN if the 1-D law at
    ε/k is not verified, ``law_check``)."""
    return _sampled_md(name, eps, d)[0]


def _sampled_md(name: str, eps: float, d: int) -> tuple[float, str]:
    k = sampling_k(eps, d)
    loss, reason = verified_exact_loss(get_mechanism(name, eps / k), name)
    return k * loss, reason


def _composed_subject(name: str, eps: float, loss_reason: tuple[float, str], source: str, notes: str) -> Subject:
    loss, reason = loss_reason
    return Subject(
        name,
        "multidim",
        eps,
        True,
        loss,
        (None, None),
        None,
        None,
        source,
        notes=f"unverifiable: {reason}" if reason else notes,
        unverifiable=reason,
        law_checked=True,
    )


def multidim_subjects(eps: float, dims=(2, 3, 4), sampled_d=16) -> list[Subject]:
    out = []
    for d in dims:
        for ties in ("half", "wang"):
            if ties == "wang" and d % 2:
                continue  # identical to the exact version for odd d
            out.append(duchi_md_subject(eps, d, ties))
    for name in ["pm", "pm_sub", "three_outputs", "hm", "hm_tp"]:
        out.append(
            _composed_subject(
                f"{name}_sampled(d={sampled_d})",
                eps,
                _sampled_md(name, eps, sampled_d),
                "paper 002 Alg. 6 / Wang et al. Alg. 4",
                f"k = {sampling_k(eps, sampled_d)} attributes at ε/k; exact loss by composition",
            )
        )
    lap, reason = verified_exact_loss(get_mechanism("laplace", eps / sampled_d), "laplace")
    out.append(
        _composed_subject(
            f"laplace_md(d={sampled_d})",
            eps,
            (sampled_d * lap, reason),
            "ε/d per attribute",
            "exact loss by composition",
        )
    )
    return out


def _oracle_subject(oracle, name, eps_claimed, presented, source, exact, notes=""):
    """Unary-encoding or GRR oracle; inputs 0 and 1; outputs encoded as the report (GRR) or as the
    pair of bits (b0, b1) of the two values that differ (the other bits have the same law)."""
    from ldprepro.domain.frequency import GRR

    if isinstance(oracle, GRR):
        pmf = oracle.pmf(np.array([0, 1]))

        def sample(x, n, rng):
            return oracle.perturb(np.full(n, x), rng).astype(float)

        def log_lr(y, a, b):
            return np.log(pmf[a][y.astype(int)]) - np.log(pmf[b][y.astype(int)])
    else:

        def sample(x, n, rng):
            bits = oracle.perturb(np.full(n, x), rng)
            return (2 * bits[:, 0] + bits[:, 1]).astype(float)

        def log_lr(y, a, b):
            y = y.astype(int)
            b0, b1 = y // 2, y % 2

            def lp(v):  # log P(bits 0,1 | value v)
                p = [oracle.p_true if v == j else oracle.p_other for j in (0, 1)]
                return np.where(b0 == 1, np.log(p[0]), np.log1p(-p[0])) + np.where(
                    b1 == 1, np.log(p[1]), np.log1p(-p[1])
                )

            return lp(a) - lp(b)

    return Subject(name, "frequency", eps_claimed, presented, exact, (0, 1), sample, log_lr, source, notes)


#: where each ε-parameterised oracle's claim of ε-LDP comes from
ORACLE_SOURCES = {
    "grr": "Kairouz et al. 2016",
    "sue": "Wang et al. 2017",
    "oue": "Wang et al. 2017",
    "olh": "Wang et al. 2017 Sec. 4",
    "blh": "Wang et al. 2017 Sec. 4",
    "ss": "Ye & Barg 2018",
    "hr": "Acharya, Sun & Zhang 2019",
}


def _support_pair_subject(oracle, name: str, eps: float, source: str) -> Subject:
    """Local hashing, subset selection, Hadamard response: inputs 0 and 1; the real reports are
    reduced to the pair (supports 0, supports 1), coded 2a + b, on which their likelihood ratio
    between 0 and 1 depends (``support_pair_pmf``, sufficient for the pair), so the empirical bound
    loses nothing by the reduction and ``log_lr`` is exact."""
    from ldprepro.domain.frequency import HR, SS, splitmix_hash

    def sample(x, n, rng):
        reports = oracle.perturb(np.full(n, x), rng)
        if isinstance(oracle, HR):
            a, b = oracle.in_set(0, reports), oracle.in_set(1, reports)
        elif isinstance(oracle, SS):
            a, b = reports[:, 0] == 1, reports[:, 1] == 1
        else:
            seeds, y = reports
            a, b = splitmix_hash(seeds, 0, oracle.g) == y, splitmix_hash(seeds, 1, oracle.g) == y
        return (2 * a.astype(int) + b.astype(int)).astype(float)

    law = oracle.support_pair_pmf()  # law[a, b] under value 0; under value 1 its transpose
    with np.errstate(divide="ignore"):
        log_law = {0: np.log(law).reshape(-1), 1: np.log(law.T).reshape(-1)}

    def log_lr(y, a, b):
        return log_law[a][y.astype(int)] - log_law[b][y.astype(int)]

    return Subject(name, "frequency", eps, True, oracle.epsilon_exact, (0, 1), sample, log_lr, source)


def frequency_subjects(
    eps: float, k_values=(2, 16), rappor=((0.5, 0.5, 0.75),), rappor_d=(1, 16), oracles=None
) -> list[Subject]:
    """Every ε-parameterised frequency oracle (``EPS_ORACLES``: GRR, SUE, OUE, OLH, BLH, SS, HR) at
    each domain size of ``k_values``."""
    from ldprepro.domain.frequency import EPS_ORACLES, get_oracle

    out = []
    for k in k_values:
        for name in oracles or EPS_ORACLES:
            oracle = get_oracle(name, k, eps)
            label, source = f"{name}(k={k})", ORACLE_SOURCES.get(name, "")
            if name in ("grr", "sue", "oue"):
                out.append(_oracle_subject(oracle, label, eps, True, source, _oracle_exact(oracle)))
            else:
                out.append(_support_pair_subject(oracle, label, eps, source))
    return out


def rappor_subjects(params=((0.1, 0.5, 0.75), (0.5, 0.5, 0.75)), d_values=(1, 16), k: int = 2) -> list[Subject]:
    """Paper 004's RR-LDP: Theorem 2 claims ε₂ = ln(q*(1−p*)/(p*(1−q*))) for a whole record; the
    record-level loss with d attributes is d times that (the empirical bound runs on one attribute)."""
    from ldprepro.domain.frequency import RapporUE

    out = []
    for f, p, q in params:
        oracle = RapporUE(k, f, p, q)
        per_attr = _oracle_exact(oracle)
        for d in d_values:
            s = _oracle_subject(
                oracle,
                f"rr_ldp(f={f:g}, d={d})",
                per_attr,
                True,
                "paper 004 Theorem 2",
                d * per_attr,
                notes=f"record of d = {d} attributes; the empirical bound uses one attribute",
            )
            s.presented_as_ldp = d == 1
            out.append(s)
    return out


def _oracle_exact(oracle) -> float:
    from ldprepro.domain.frequency import GRR

    if isinstance(oracle, GRR):
        return _max_log_ratio(oracle.pmf(np.arange(oracle.k)))
    pt, po = oracle.p_true, oracle.p_other
    return abs(math.log(pt * (1 - po) / (po * (1 - pt))))


def graded_subjects(eps: float) -> list[Subject]:
    """Paper 000: LHP (HierA's user side) against Theorem 2 under the max and the min reading, and
    the graded Laplace baseline (unbounded ratio)."""
    from ldprepro.domain.graded import LHP, GradedLaplace, GradedLevels, lhp_privacy_audit

    levels = GradedLevels.from_base_eps(eps)
    audit = lhp_privacy_audit(levels)
    lhp = LHP(levels)
    grid = np.linspace(-1, 1, 401)
    grid_levels = levels.level_of(grid)
    table = lhp.pmf_table(grid).reshape(len(grid), -1)  # (v, output), output code = 2·t* + (v* > 0)
    log_table = np.log(table)
    ratio = (log_table[:, None, :] - log_table[None, :, :]).max(axis=2)  # (v, v')

    def sample(x, n, rng):
        t, s = lhp.perturb(np.full(n, x), rng)
        return (2 * t + (s > 0)).astype(float)

    def log_lr(y, a, b):
        ta, tb = lhp.pmf_table(np.array([a]))[0].reshape(-1), lhp.pmf_table(np.array([b]))[0].reshape(-1)
        return np.log(ta[y.astype(int)]) - np.log(tb[y.astype(int)])

    out = []
    for reading in ("max", "min"):
        claimed = audit[f"claimed_{reading}"]
        li, lj = np.unravel_index(np.argmax(audit["L"] - claimed), claimed.shape)
        # the pair of values in levels (li, lj) that attains the worst ratio (grid of 401 values)
        sub = np.where((grid_levels[:, None] == li) & (grid_levels[None, :] == lj), ratio, -np.inf)
        i, j = np.unravel_index(np.argmax(sub), sub.shape)
        out.append(
            Subject(
                f"lhp({reading} reading)",
                "graded",
                float(claimed[li, lj]),
                False,
                float(audit["L"][li, lj]),
                (float(grid[i]), float(grid[j])),
                sample,
                log_lr,
                "paper 000 Theorem 2",
                notes=f"budgets {tuple(float(b) for b in levels.budgets)}; worst level pair "
                f"({li + 1}, {lj + 1}); {int(audit[f'violates_{reading}'].sum())} of "
                f"{audit['L'].size} level pairs exceed r = {reading}(ε_x, ε_x')",
            )
        )
    gl = GradedLaplace(levels)
    lo_v, hi_v = 0.9, -0.9  # most private level (scale 2/ε) vs least private (2/(5ε))

    def gl_log_lr(y, a, b):
        return gl.logpdf(y, a) - gl.logpdf(y, b)

    out.append(
        Subject(
            "graded_laplace",
            "graded",
            float(levels.eps.max()),
            False,
            math.inf,
            (lo_v, hi_v),
            lambda x, n, rng: gl.perturb(np.full(n, x), rng),
            gl_log_lr,
            "paper 000 baseline",
            notes="Laplace scales differ between levels: the log-ratio grows linearly in |y|",
        )
    )
    return out


def bshp_subjects(eps: float, ratio: float = 0.8, folds=(3, 5, 7)) -> list[Subject]:
    """Paper 001's bit sampling: what the curator sees is which bits were uploaded and their values.
    Inputs: values in intervals 0 and 1; outputs of those two bits coded 3·o₀ + o₁ with
    o = 0 (not sampled), 1 (uploaded 0), 2 (uploaded 1); the other bits have the same law."""
    from ldprepro.domain.histograms import BitSampling, integrated_partition

    bs = BitSampling(integrated_partition(list(folds)), eps, ratio)
    p, q, r = bs.p, bs.q, float(bs.ratios[0])
    law = {1: np.array([1 - r, r * (1 - p), r * p]), 0: np.array([1 - r, r * (1 - q), r * q])}

    def sample(x, n, rng):
        bits, mask = bs.perturb(np.full(n, x), rng)
        o = np.where(mask[:, :2], 1 + bits[:, :2], 0)
        return (3 * o[:, 0] + o[:, 1]).astype(float)

    def log_lr(y, a, b):
        y = y.astype(int)
        o0, o1 = y // 3, y % 3

        def lp(v):  # value in interval v: bit v is 1, the other 0
            return np.log(law[int(v == 0)][o0]) + np.log(law[int(v == 1)][o1])

        return lp(a) - lp(b)

    exact = bs.privacy_loss_exact()
    common = dict(family="histogram", exact_loss=exact, pair=(0, 1), sample=sample, log_lr=log_lr)
    return [
        Subject(
            name=f"bshp(r={r:g}) vs paper's ε'",
            eps_claimed=bs.paper_claimed_epsilon,
            presented_as_ldp=False,
            claim_source="paper 001 Theorem 7",
            notes="amplification claim: the curator sees which bits were sampled",
            **common,
        ),
        Subject(
            name=f"bshp(r={r:g})",
            eps_claimed=eps,
            presented_as_ldp=True,
            claim_source="this project (the guarantee is ε)",
            **common,
        ),
    ]


FAMILIES = ("numeric", "multidim", "frequency", "graded", "histogram")


def subjects_for(family: str, eps: float, cfg: dict) -> list[Subject]:
    """The audited subjects of one family at claimed budget ``eps`` (config: the ``audit`` entry)."""
    if family == "numeric":
        return numeric_subjects(eps, cfg.get("discretize_m", (1, 10)))
    if family == "multidim":
        return multidim_subjects(eps, cfg.get("duchi_md_d", (2, 3, 4)), cfg.get("sampled_d", 16))
    if family == "frequency":
        return frequency_subjects(eps, cfg.get("oracle_k", (2, 16)))
    if family == "graded":
        return graded_subjects(eps)
    if family == "histogram":
        return bshp_subjects(eps, cfg.get("bshp_ratio", 0.8))
    raise ValueError(f"unknown audit family {family!r}; known: {FAMILIES}")
