"""The computations behind paper 004's claims about Figs. 1–4 (docs/papers/lremh.md §5.3).

The claims themselves are declared as data in ``claims.yaml`` beside this module (the paper's
words, source, scope, readings, kind and test); each declaration names one function here (or, for
the efficiency claims of Figs. 1–2, in ``efficiency.py``), which decides it for both stopping rules on the figure's per-repetition results. The one dispatcher
(:mod:`ldprepro.claims.dispatch`) runs them, like every paper's.

Design (issue 13):

* **Pairing.** Within a run every method sees the same user sample and, per f, the same
  perturbed reports (common random numbers, :func:`ldprepro.papers.lremh.experiment.run_experiment`).
  The k-subsets of one run share that sample and those reports, so they are not independent
  repetitions: the unit of every test is the **run**. Per run and scope point the metric is
  averaged over the run's subsets that every compared method has (geometric mean for costs and
  iteration counts, which are compared as log-ratios; arithmetic mean for AVD, compared as
  differences), then the methods are paired on the run index.
* **Two stopping rules.** Every claim about EM is declared twice: with the paper's gap 0.001 on
  max|Δθ| (the [U] reading, methods ``em``/``lremh``) and with our control, the same EM run to
  convergence (``em_converged``/``lremh_converged``: mean per-user log-likelihood gain ≤ the
  configured gap), so a verdict on "EM" is not a verdict on the stopping rule. LoPub's rule
  |Δ max θ| ≤ 0.001 (``em_lopub``/``lremh_lopub``) is the declared alternative reading of the [U]
  stop (``stop: max_cell`` in a declaration's ``alternatives``): the robustness column gives its
  verdict.
* **Efficiency** (Figs. 1–2, :mod:`ldprepro.papers.lremh.efficiency`) is decided on the
  machine-independent cost of :mod:`ldprepro.papers.lremh.cost` (operations counted from Alg. 2),
  never on measured time, so every verdict depends only on config and seed.
* **Theory rows:** Theorems 1 and 2 of the paper checked against the exact record-level privacy
  loss (:func:`ldprepro.domain.joint.rrldp.record_loss`).

Constructed-case tests: tests/test_lremh_claims.py.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ldprepro.claims.dispatch import claims_for, robustness
from ldprepro.claims.results import Results
from ldprepro.claims.verdicts import Claim, claim_row, exact_point, not_testable, paired_point
from ldprepro.domain.frequency import rappor_channel, rappor_privacy
from ldprepro.domain.joint.rrldp import record_loss
from ldprepro.papers import declared_claims

PAPER = "lremh"
#: (EM, LREMH, how the EM stops, claim suffix)
VARIANTS = (
    ("em", "lremh", "EM stops at the paper's gap 0.001 on max|Δθ| ([U] reading)", ""),
    (
        "em_converged",
        "lremh_converged",
        "our control: EM run to convergence (mean per-user log-likelihood gain of an update ≤ the configured gap)",
        " [control: EM run to convergence]",
    ),
)
UNIT_NOTE = (
    "Unit of the test: the run (per run, the mean over its k-subsets; subsets of a run share one "
    "user sample and one perturbation); methods paired on the run (same users, same reports)"
)


# ------------------------------------------------------------------------------------------------
# per-run tables
# ------------------------------------------------------------------------------------------------
def per_run(raw: pd.DataFrame, metric: str, methods: Sequence[str], subsets: int, *, log: bool) -> pd.DataFrame:
    """(f, k, run) × method table of ``metric``: each method's mean over the run's subsets that
    every method in ``methods`` has (so the compared estimates come from the same reports);
    geometric mean when ``log``."""
    s = raw[(raw["metric"] == metric) & raw["mechanism"].isin(methods)]
    if s.empty:  # no rows of the metric (e.g. no measured time in a constructed case): no (f, k, run)
        return pd.DataFrame(
            columns=list(methods), index=pd.MultiIndex.from_arrays([[], [], []], names=["f", "k", "run"])
        )
    wide = s.pivot_table(index=["f", "k", "rep"], columns="mechanism", values="value", aggfunc="first")
    if not set(methods) <= set(wide.columns):
        return pd.DataFrame(columns=list(methods))
    wide = wide[list(methods)].dropna()
    if log:
        wide = np.log(wide.where(wide > 0))
    run = wide.index.get_level_values("rep") // int(subsets)
    out = wide.groupby([wide.index.get_level_values("f"), wide.index.get_level_values("k"), run]).mean()
    out.index.names = ["f", "k", "run"]
    return np.exp(out) if log else out


def _label(f: float, k: int) -> str:
    return f"f={f:g}, k={int(k)}"


def _scope(dataset: str, table: pd.DataFrame, rule: str) -> str:
    fs = sorted(table.index.get_level_values("f").unique())
    ks = sorted(int(k) for k in table.index.get_level_values("k").unique())
    return f"{dataset}; f ∈ {{{', '.join(f'{f:g}' for f in fs)}}}, k ∈ {{{', '.join(map(str, ks))}}}; {rule}"


def _has(raw: pd.DataFrame, *methods: str) -> bool:
    return set(methods) <= set(raw["mechanism"].unique())


DATASET_LABELS = {
    "nltcs": "NLTCS (20 % sample, as the paper)",
    "adult": "Adult (10 % sample, as the paper)",
    "adult_lopub": "Adult (10 % sample, as the paper)",
}


def _setting(res: Results) -> tuple[str, int]:
    """(the dataset as the scopes name it, subsets per run) of the figure's experiment."""
    exp = res.fig
    return DATASET_LABELS.get(exp["dataset"], exp["dataset"]), int(exp["subsets"])


# ------------------------------------------------------------------------------------------------
# one claim per stopping rule (the efficiency claims of Figs. 1-2 are in efficiency.py)
# ------------------------------------------------------------------------------------------------
#: the [U] stop read as LoPub's rule (a declaration's ``stop: max_cell``): its methods and words
LOPUB_VARIANT = (
    "em_lopub",
    "lremh_lopub",
    "EM stops at LoPub's gap 0.001 on |Δ max θ| (alternative reading of the [U] stop)",
    "",
)
#: the values of a declaration's ``stop`` key (the [U] reading, LoPub's rule)
STOPS = ("max_abs", "max_cell")


def variants(decl: dict) -> tuple:
    """The stopping rules a declaration is decided under: the [U] reading (``stop: max_abs``, the
    default) or LoPub's (``stop: max_cell``, an alternative reading), then the converged control."""
    stop = decl.get("stop", "max_abs")
    if stop not in STOPS:
        raise ValueError(f"{decl['claim']!r}: stop {stop!r}; one of {STOPS}")
    return (LOPUB_VARIANT if stop == "max_cell" else VARIANTS[0], VARIANTS[1])


def _per_variant(res: Results, decl: dict, kind: str, methods, build) -> list:
    """One claim per stopping rule (:func:`variants`): ``build(em_m, lr_m, rule) -> (scope, points,
    evidence)``, or a not-testable row when a method it compares was not run."""
    out: list = []
    dataset, _ = _setting(res)
    for em_m, lr_m, rule, suffix in variants(decl):
        words = decl["claim"] + suffix
        need = [m.format(em=em_m, lremh=lr_m) for m in methods]
        if not _has(res.raw, *need):
            out.append(not_testable(PAPER, res.figure, words, dataset, kind, f"{' or '.join(need)} was not run"))
            out[-1]["counted"] = not suffix  # the control is the claim's robustness, not a claim of its own
            continue
        scope, pts, evidence = build(em_m, lr_m, rule)
        out.append(
            Claim(
                PAPER,
                res.figure,
                words,
                scope,
                kind,
                data_role=res.role,
                points=pts,
                evidence=evidence,
                counted=not suffix,  # the control is the claim's robustness, not a claim of its own
            )
        )
    _stopping_rule_robustness(out)
    return out


def _stopping_rule_robustness(claims: list) -> None:
    """The [U] reading's claim (EM stopped at the paper's gap) is robust to the stopping rule when the
    control (EM run to convergence) gets the same verdict (docs/verdicts-standard.md)."""
    if len(claims) == 2 and all(isinstance(c, Claim) for c in claims):
        u, control = claims
        verdict = claim_row(control)["verdict"]
        u.robustness = robustness({"EM's stop read as convergence (the control)": verdict}, claim_row(u)["verdict"])


# ------------------------------------------------------------------------------------------------
# Figs. 3-4: accuracy
# ------------------------------------------------------------------------------------------------
def _iteration_note(raw: pd.DataFrame, em_m: str, lr_m: str) -> str:
    it = raw[(raw["metric"] == "iterations") & raw["mechanism"].isin([em_m, lr_m])]
    conv = raw[(raw["metric"] == "converged") & raw["mechanism"].isin([em_m, lr_m])]
    parts = []
    for m, name in ((em_m, "EM"), (lr_m, "LREMH")):
        v = it[it["mechanism"] == m]["value"]
        c = conv[conv["mechanism"] == m]["value"]
        if len(v):
            parts.append(
                f"{name} ran {v.min():.0f}–{v.max():.0f} EM updates (median {v.median():.0f})"
                + (f", stopping rule met before max_iter in {c.mean():.0%} of estimates" if len(c) else "")
            )
    return "; ".join(parts)


def _loglik_note(raw: pd.DataFrame, subsets: int) -> str:
    if not _has(raw, "em", "em_converged"):
        return ""
    ll = per_run(raw, "loglik", ["em", "em_converged"], subsets, log=False)
    if ll.empty:
        return ""
    gain = ll["em_converged"] - ll["em"]
    return (
        f"The control's EM reaches a higher mean per-user log-likelihood than the [U] stop in "
        f"{(gain > 0).mean():.0%} of (run, f, k) cells (gain {gain.min():.3g}–{gain.max():.3g} nats per user)"
    )


def _avd_table(res: Results, em_m: str, lr_m: str):
    dataset, subsets = _setting(res)
    return per_run(res.raw, "avd", [em_m, "lasso", lr_m], subsets, log=False), dataset


def more_accurate_than_lasso(res: Results, decl: dict) -> list:
    """LREMH's AVD below LASSO's (its initial value) at every (f, k): paired per-run differences."""

    def build(em_m, lr_m, rule):
        a, dataset = _avd_table(res, em_m, lr_m)
        pts = [
            paired_point(g[lr_m], g["lasso"], f"{_label(f, k)}: AVD LREMH − LASSO", log=False)
            for (f, k), g in a.groupby(level=["f", "k"])
        ]
        return _scope(dataset, a, rule), pts, UNIT_NOTE + ". " + _iteration_note(res.raw, em_m, lr_m)

    return _per_variant(res, decl, "range", ["{em}", "{lremh}", "lasso"], build)


def em_most_accurate(res: Results, decl: dict) -> list:
    """EM's AVD below LASSO's and LREMH's at every (f, k) (a win over the set)."""
    _, subsets = _setting(res)

    def build(em_m, lr_m, rule):
        a, dataset = _avd_table(res, em_m, lr_m)
        pts = []
        for (f, k), g in a.groupby(level=["f", "k"]):
            pts += [
                paired_point(g[em_m], g["lasso"], f"{_label(f, k)}: AVD EM − LASSO", log=False),
                paired_point(g[em_m], g[lr_m], f"{_label(f, k)}: AVD EM − LREMH", log=False),
            ]
        note = UNIT_NOTE + ". " + _iteration_note(res.raw, em_m, lr_m)
        extra = _loglik_note(res.raw, subsets) if em_m == "em_converged" else ""
        return _scope(dataset, a, rule), pts, note + (". " + extra if extra else "")

    return _per_variant(res, decl, "win-over-set", ["{em}", "{lremh}", "lasso"], build)


def fewer_iterations(res: Results, decl: dict) -> list:
    """LREMH runs fewer EM updates than EM from a uniform start: paired per-run log ratios."""
    _, subsets = _setting(res)

    def build(em_m, lr_m, rule):
        a, dataset = _avd_table(res, em_m, lr_m)
        it = per_run(res.raw, "iterations", [em_m, lr_m], subsets, log=True)
        pts = [
            paired_point(g[lr_m], g[em_m], _label(f, k) + ": iterations LREMH/EM", log=True)
            for (f, k), g in it.groupby(level=["f", "k"])
        ]
        return _scope(dataset, a, rule), pts, UNIT_NOTE + ". " + _iteration_note(res.raw, em_m, lr_m)

    return _per_variant(res, decl, "range", ["{em}", "{lremh}", "lasso"], build)


def pruning_only_redundant(res: Results, decl: dict) -> list:
    """The true mass of the pruned candidates below the declared negligible mass at every (f, k)."""
    dataset, subsets = _setting(res)
    negligible = float(decl["negligible_mass"])
    if not _has(res.raw, "lremh"):
        return [not_testable(PAPER, res.figure, decl["claim"], dataset, "range", "lremh was not run")]
    pm = per_run(res.raw, "pruned_true_mass", ["lremh"], subsets, log=False)["lremh"]
    pts = [
        paired_point(
            g.to_numpy(), np.full(len(g), negligible), _label(f, k) + f": pruned true mass − {negligible:g}", log=False
        )
        for (f, k), g in pm.groupby(level=["f", "k"])
    ]
    kept = res.raw[(res.raw["metric"] == "kept_fraction") & (res.raw["mechanism"] == "lremh")]["value"]
    scope = _scope(
        dataset,
        pm.to_frame(),
        f"'only redundant' read as: true mass of the pruned candidates below {negligible:g} (ours)",
    )
    evidence = (
        UNIT_NOTE + ". EM cannot revive a pruned cell, so the pruned true mass is a floor under LREMH's AVD; the "
        f"LASSO over one-hot bits sees only one-way marginals. LREMH kept {kept.min():.1%}–{kept.max():.1%} of the "
        "candidates"
    )
    return [Claim(PAPER, res.figure, decl["claim"], scope, "range", data_role=res.role, points=pts, evidence=evidence)]


# ------------------------------------------------------------------------------------------------
# Theory rows: Theorems 1-2 against the exact record-level loss (decided once per figure)
# ------------------------------------------------------------------------------------------------
def theory_claims(
    figure: str, dataset: str, sizes: Sequence[int], f_values: Sequence[float], p: float, q: float
) -> list[Claim]:
    """Theorem 2 as printed (ε₂ = ln(q*(1−p*)/(p*(1−q*))) for a whole record) and Theorem 1
    (ε₁ = 2d·ln((2−f)/f)), each against the exact worst-case loss of records of ``sizes``."""
    d = len(sizes)
    scope = (
        f"records of d = {d} attributes ({dataset}), f ∈ {{{', '.join(f'{f:g}' for f in f_values)}}}, "
        f"p = {p:g}, q = {q:g}"
    )
    t2, t1 = [], []
    for f in f_values:
        pr = rappor_privacy(float(f), p, q, d)
        qs, ps = rappor_channel(float(f), p, q)
        exact2 = record_loss(sizes, qs, ps)
        printed2 = pr["instantaneous_eps_per_attribute"]
        t2.append(
            exact_point(
                f"f={f:g}",
                printed2 >= exact2 * (1 - 1e-12),
                exact2 / printed2,
                note=f"exact loss {exact2:.4g} = {exact2 / printed2:.4g}·ε₂ > printed ε₂ = {printed2:.4g}"
                if printed2 < exact2 * (1 - 1e-12)
                else f"exact loss {exact2:.4g} ≤ printed {printed2:.4g}",
                scale="exact ratio of privacy losses exact/printed",
                null=1.0,
            )
        )
        exact1 = record_loss(sizes, 1 - float(f) / 2, float(f) / 2)
        printed1 = pr["permanent_eps_record"]
        t1.append(
            exact_point(
                f"f={f:g}",
                math.isclose(printed1, exact1, rel_tol=1e-12),
                exact1 / printed1,
                note=f"exact loss {exact1:.4g}, printed {printed1:.4g}",
                scale="exact ratio of privacy losses exact/printed",
                null=1.0,
            )
        )
    return [
        Claim(
            PAPER,
            figure,
            "Theorem 2: one RR-LDP collection (instantaneous RR, channel q*, p*) of a record satisfies "
            "ε₂-LDP with ε₂ = ln(q*(1−p*)/(p*(1−q*)))",
            scope,
            "closed-form",
            data_role="paper",
            points=t2,
            evidence=(
                "Exact worst-case loss over record pairs differing in every attribute (sum of per-bit maxima; "
                f"checked against enumeration): d·ε₂. The printed value is the per-attribute bound; effect = "
                f"exact/printed = d = {d}"
            ),
        ),
        Claim(
            PAPER,
            figure,
            "Theorem 1: the permanent RR of a record satisfies ε₁-LDP with ε₁ = 2d·ln((2−f)/f) (tight)",
            scope,
            "closed-form",
            data_role="paper",
            points=t1,
            evidence="Exact worst-case loss of the permanent RR (per-bit channel 1 − f/2 vs f/2); effect = exact/printed",
        ),
    ]


def _theory(res: Results, decl: dict, which: int) -> list:
    exp = res.fig
    dataset = DATASET_LABELS.get(exp["dataset"], exp["dataset"]).split(" (")[0]
    if not exp.get("attributes"):
        return [
            not_testable(
                PAPER,
                res.figure,
                decl["claim"],
                dataset,
                "closed-form",
                "the record size d is what the jobs coded from the dataset, which is not available here",
            )
        ]
    sizes = [2] * int(exp["attributes"])  # every attribute has ≥ 2 values
    f_values = [float(f) for f in exp["f"]]
    t2, t1 = theory_claims(res.figure, dataset, sizes, f_values, float(exp["p"]), float(exp["q"]))
    return [t2 if which == 2 else t1]


def theorem2_instantaneous(res: Results, decl: dict) -> list:
    return _theory(res, decl, 2)


def theorem1_permanent(res: Results, decl: dict) -> list:
    return _theory(res, decl, 1)


def figure_claims(
    raw: pd.DataFrame, figure: str, exp: dict, unavailable: dict | None = None, attributes: int | None = None
) -> pd.DataFrame:
    """The claims table of one paper-004 figure: its declarations in ``claims.yaml`` decided by the
    one dispatcher; ``attributes`` is the record size d the jobs coded (the theory rows)."""
    spec, where = declared_claims(PAPER, figure)
    fig = {**exp, "panels": [{"dataset": exp["dataset"]}], "attributes": attributes}
    return claims_for(PAPER, figure, raw, fig, unavailable, spec, where)


def figure_tables(paths, figure: str, exp: dict, unavailable: dict | None = None):
    """(raw results, summary, claims table, record size d) of one figure from its job's result files
    (the render of kind joint_distribution, ldprepro.papers.lremh.kind): d is the attributes the jobs coded (recorded in every row;
    None without results)."""
    from ldprepro.pipeline.results import KEY_COLUMNS, aggregate
    from ldprepro.pipeline.verify import Grid, job_results

    raw = job_results(paths, Grid())  # whole, one method per file, full repetitions, or a named error
    summary = aggregate(raw) if len(raw) else raw.reindex(columns=KEY_COLUMNS)
    d = int(raw["n_attributes"].iloc[0]) if len(raw) and "n_attributes" in raw else None
    return raw, summary, figure_claims(raw, figure, exp, dict(unavailable or {}), attributes=d), d
