"""Paper 004 (RR-LDP / LREMH) Figs. 1–4: the runner (claims: :mod:`ldprepro.papers.lremh.claims` and
:mod:`~ldprepro.papers.lremh.efficiency`; cost model: :mod:`~ldprepro.papers.lremh.cost`; plots:
:mod:`~ldprepro.papers.lremh.plotting`).

One job per experiment (dataset) runs every method on the same reports, so the timings of EM,
LASSO and LREMH come from the same process on the same machine. Per run: a fresh user sample
(20 % of NLTCS, 10 % of Adult), then per f one RR-LDP collection (two-stage path), then per k and
per fixed random k-subset the estimators on the subset's bit blocks (common random numbers: every
method sees the same reports). Only the estimation is timed: the CPU time of the job's process
(``time.process_time``) around the estimator call, BLAS limited to one thread, so that the jobs
running beside it on a shared machine do not enter the timings (wall-clock timings flipped
verdicts between otherwise identical runs).

Besides the paper's EM, LASSO and LREMH (EM stopped by the paper's gap 0.001, [U] reading
max|Δθ|), the control ``em_converged`` / ``lremh_converged`` (ours, issue 13) runs the same EM to
convergence (config ``lremh.converged``), on the first ``converged.subsets`` subsets of each run, and
``em_lopub`` / ``lremh_lopub`` run the same EM and LREMH stopped by LoPub's rule |Δ max θ| ≤ gap
(config ``lremh.lopub``; the paper's ref. [12], whose code the paper very probably ran: the
alternative reading of the [U] stopping rule), on every subset.

The time figure's files hold the timing rows (metrics ``time_s``, ``time_ratio_to_lremh``: drawn,
never deciding a verdict) and, beside them, the machine-independent cost of every estimate
(``cost_ops``, :mod:`ldprepro.papers.lremh.cost`; with ``lasso_epochs``, the LASSO's
coordinate-descent epochs it counts), on which Figs. 1–2's efficiency claims are decided. Every other
metric (``avd``, ``iterations``, ``converged``, ``loglik``, ``candidates``, LREMH's
``pruned_true_mass`` and ``kept_fraction``) goes to the AVD figure's files. Every row but the timing
rows is a function of config and seed. ``rep`` = run × (number of subsets) + subset index.
"""

from __future__ import annotations

import itertools
import math
import time

import numpy as np
import pandas as pd

from ldprepro.data.lopub_adult import derive_lopub_adult
from ldprepro.domain.joint import (
    RRLDP,
    avd,
    em,
    em_candidates,
    lambda_blocks,
    lasso,
    logliks,
    lremh,
    memory_estimate,
    true_joint,
)
from ldprepro.papers.lremh.cost import COST_METRIC, EPOCHS_METRIC, estimate_ops
from ldprepro.pipeline.seeding import rng_for

PAPER = "lremh"
METHODS = ("em", "lasso", "lremh", "em_converged", "lremh_converged", "em_lopub", "lremh_lopub")
TIME_METRICS = ("time_s", "time_ratio_to_lremh")
#: methods whose estimate starts with the LASSO of Alg. 2 lines 1–10 (their cost counts its epochs)
LASSO_BASED = ("lasso", "lremh", "lremh_converged", "lremh_lopub")


# ------------------------------------------------------------------------------------------------
# configuration helpers (used by workflow/rules/experiments.smk, kind joint_distribution)
# ------------------------------------------------------------------------------------------------


# experiment_params / experiment_outputs: in ldprepro.pipeline.parse (parse-time, no pandas); re-exported.
from ldprepro.pipeline.parse import experiment_outputs, experiment_params  # noqa: E402,F401

# ------------------------------------------------------------------------------------------------
# data
# ------------------------------------------------------------------------------------------------


def dataset_codes(dataset: str, df: pd.DataFrame, card: dict) -> tuple[np.ndarray, list[int], list[str]]:
    """(N, d) integer codes, domain sizes, column names. ``adult`` (the UCI table) is discretised
    here with :func:`derive_lopub_adult`; ``adult_lopub`` and ``nltcs`` are already coded."""
    if dataset == "adult":
        coded = derive_lopub_adult(df)
        sizes = [int(coded[c].max()) + 1 for c in coded.columns]
        return coded.to_numpy(np.int64), sizes, list(coded.columns)
    cols = [c for c in card["columns"]]
    sizes = [len(c["categories"]) for c in cols]
    names = [c["name"] for c in cols]
    codes = np.column_stack([np.asarray(df[n].astype("int64")) for n in names])
    return codes, sizes, names


def draw_subsets(d: int, k: int, count: int, seed: int, dataset: str) -> list[tuple[int, ...]]:
    """``count`` distinct random k-subsets of range(d) (all of them if fewer exist), fixed per
    (dataset, k) and shared by every run and f."""
    total = math.comb(d, k)
    if total <= count:
        return list(itertools.combinations(range(d), k))
    rng = rng_for(seed, {"paper": PAPER, "dataset": dataset, "what": "subsets", "k": int(k)})
    seen: list[tuple[int, ...]] = []
    while len(seen) < count:
        s = tuple(sorted(int(x) for x in rng.choice(d, size=k, replace=False)))
        if s not in seen:
            seen.append(s)
    return seen


# ------------------------------------------------------------------------------------------------
# runner
# ------------------------------------------------------------------------------------------------


#: the converged-EM control (ours, issue 13): the same estimators run to convergence
CONTROLS = {"em_converged": "em", "lremh_converged": "lremh"}
#: the same estimators stopped by LoPub's |Δ max θ| rule (the alternative reading of the [U] stop)
LOPUB = {"em_lopub": "em", "lremh_lopub": "lremh"}


def em_impl(exp: dict, method: str) -> str | None:
    """The EM implementation ``method``'s EM from uniform runs (``em.impl``, or the control's
    ``converged.impl``); None for LASSO and the LREMH methods (their EM is the explicit
    candidate-list EM, Alg. 2 step 3)."""
    if method in ("em", "em_lopub"):
        return exp["em"].get("impl", "explicit")
    if method == "em_converged":
        return (exp.get("converged") or {}).get("impl", "factorised")
    return None


def _estimators(exp: dict) -> dict:
    e, la = exp["em"], exp["lasso"]
    em_kw = {"gap": float(e["gap"]), "stop": e["stop"], "max_iter": int(e["max_iter"])}
    la_kw = {"alpha": float(la["alpha"]), "mode": la["mode"], "max_iter": int(la["max_iter"])}
    cv = exp.get("converged") or {}
    conv_kw = {
        "gap": float(cv.get("gap", 1e-6)),
        "stop": cv.get("stop", "loglik"),
        "max_iter": int(cv.get("max_iter", 3000)),
    }

    def em_with(kw, impl):
        def run_em(bl, qs, ps):
            if impl == "factorised":
                return em(bl, qs, ps, **kw)
            sizes = [b.shape[1] for b in bl]
            C = int(np.prod(sizes))
            cand = np.stack(np.unravel_index(np.arange(C), sizes), axis=1)
            return em_candidates(bl, qs, ps, cand, np.ones(C), **kw)

        return run_em

    lopub_kw = {**em_kw, "stop": (exp.get("lopub") or {}).get("stop", "max_cell")}
    tau = float(exp["lremh"]["tau"])
    return {
        "em": em_with(em_kw, em_impl(exp, "em")),
        "lasso": lambda bl, qs, ps: lasso(bl, qs, ps, **la_kw),
        "lremh": lambda bl, qs, ps: lremh(bl, qs, ps, tau=tau, **em_kw, lasso_kw=la_kw),
        "em_converged": em_with(conv_kw, em_impl(exp, "em_converged")),
        "lremh_converged": lambda bl, qs, ps: lremh(bl, qs, ps, tau=tau, **conv_kw, lasso_kw=la_kw),
        "em_lopub": em_with(lopub_kw, em_impl(exp, "em_lopub")),
        "lremh_lopub": lambda bl, qs, ps: lremh(bl, qs, ps, tau=tau, **lopub_kw, lasso_kw=la_kw),
    }


def time_reference(method: str) -> str | None:
    """The LREMH a method's time is divided by in the ``time_ratio_to_lremh`` rows: LREMH with the
    same stopping rule (None for LREMH itself)."""
    if method in ("lremh", "lremh_converged", "lremh_lopub"):
        return None
    return {"em_converged": "lremh_converged", "em_lopub": "lremh_lopub"}.get(method, "lremh")


def runs_control(exp: dict, method: str, k: int, subset_index: int) -> bool:
    """Whether ``method`` runs at (k, subset): the control runs on the first ``converged.subsets``
    subsets of each run and at the ``converged.k`` dimensions only (its cost, see config.yaml); every
    other method (LoPub's stop included) everywhere."""
    if method not in CONTROLS:
        return True
    cv = exp.get("converged") or {}
    ks = cv.get("k")
    return subset_index < int(cv.get("subsets", exp["subsets"])) and (ks is None or int(k) in {int(x) for x in ks})


def lasso_epochs(estimators: dict, blocks, rr, lasso_estimate=None, known: dict | None = None) -> int:
    """The coordinate-descent epochs of the LASSO of Alg. 2 lines 1–10 on these reports: LREMH's
    step 1 is the ``lasso`` method's call with the same arguments (deterministic, cyclic coordinate
    descent), so its epochs are the LASSO estimate's; taken from ``lasso_estimate`` or from an
    epoch count already known for this cell, else from an untimed LASSO fit (cost bookkeeping only)."""
    if lasso_estimate is not None:
        return int(lasso_estimate.info["lasso_iter"])
    if known:
        return int(next(iter(known.values())))
    return int(estimators["lasso"](blocks, rr.q_star, rr.p_star).info["lasso_iter"])


def run_experiment(exp: dict, codes: np.ndarray, sizes: list[int], seed: int, log=print) -> tuple[list, list]:
    """Every (run × f × k × subset × method) of one experiment: (time-figure rows: CPU time and the
    machine-independent cost of each estimate; other rows).

    Common random numbers: within a run every method sees the same user sample and, per f, the
    same perturbed reports; ``rep`` identifies (run, subset), so methods pair on it. Per EM-based
    estimate the rows also record its iterations, whether its stopping rule was met before
    ``max_iter`` (``converged``), and the mean per-user log-likelihood of the returned joint
    (``loglik``, up to a joint-independent constant, computed outside the timed region)."""
    from threadpoolctl import threadpool_limits

    dataset = exp["name"]
    n_all, d = codes.shape
    n_users = int(round(exp["sample_fraction"] * n_all))
    estimators = _estimators(exp)
    methods = list(exp["methods"])
    subsets = {int(k): draw_subsets(d, int(k), int(exp["subsets"]), seed, dataset) for k in exp["k"]}
    for k, ss in subsets.items():
        log(f"{dataset} k={k}: subsets {ss}")
    time_rows, rows = [], []
    with threadpool_limits(limits=1):
        # warm-up (imports, first-call overheads) outside the timed region
        warm = RRLDP(sizes[:2], 0.5, exp["p"], exp["q"])
        wrep = warm.perturb(codes[:50, :2], rng_for(seed, {"paper": PAPER, "what": "warmup"}))
        for m in methods:
            estimators[m](warm.blocks(wrep, [0, 1]), warm.q_star, warm.p_star)
        for run in range(int(exp["runs"])):
            rng = rng_for(seed, {"paper": PAPER, "dataset": dataset, "what": "sample", "run": run})
            sample = codes[np.sort(rng.choice(n_all, size=n_users, replace=False))]
            for f in exp["f"]:
                f = float(f)
                rr = RRLDP(sizes, f, exp["p"], exp["q"])
                prng = rng_for(seed, {"paper": PAPER, "dataset": dataset, "what": "perturb", "f": f, "run": run})
                reports, _ = rr.perturb_two_stage(sample, prng)
                eps = rr.privacy()["instantaneous_eps_record"]
                # every attribute's λ arrays once per collection, for the subsets' loglik rows
                lams = lambda_blocks(rr.blocks(reports, range(d)), rr.q_star, rr.p_star)
                spent = dict.fromkeys(methods, 0.0)
                for k, ss in subsets.items():
                    for si, S in enumerate(ss):
                        sz = [sizes[j] for j in S]
                        blocks = rr.blocks(reports, S)
                        truth = true_joint(sample[:, S], sz)
                        base = {
                            "paper": PAPER,
                            "dataset": dataset,
                            "eps": eps,
                            "f": f,
                            "k": k,
                            "n_users": n_users,
                            "n_attributes": d,
                            "rep": run * len(ss) + si,
                        }
                        secs, ops, epochs = {}, {}, {}
                        scored = []  # (loglik row, estimate): scored together after the methods ran
                        for m in methods:
                            if not runs_control(exp, m, k, si):
                                continue
                            t0 = time.process_time()
                            est = estimators[m](blocks, rr.q_star, rr.p_star)
                            secs[m] = time.process_time() - t0
                            spent[m] += secs[m]
                            if m in LASSO_BASED:
                                epochs[m] = lasso_epochs(estimators, blocks, rr, est if m == "lasso" else None, epochs)
                            ops[m] = estimate_ops(
                                m, n_users, sz, est.iterations, est.candidates, epochs.get(m), em_impl(exp, m)
                            )
                            r = {**base, "figure": exp["avd_figure"], "mechanism": m}
                            rows += [
                                {**r, "metric": "avd", "value": avd(truth, est.theta)},
                                {**r, "metric": "iterations", "value": float(est.iterations)},
                                {**r, "metric": "candidates", "value": float(est.candidates)},
                            ]
                            if m != "lasso":
                                scored.append(({**r, "metric": "loglik", "value": None}, est.theta))
                                rows += [
                                    {**r, "metric": "converged", "value": float(est.info["converged"])},
                                    scored[-1][0],
                                ]
                            if m in ("lremh", "lremh_converged", "lremh_lopub"):
                                pruned = est.info["pruned"]
                                rows += [
                                    {**r, "metric": "pruned_true_mass", "value": float(truth[pruned].sum())},
                                    {**r, "metric": "kept_fraction", "value": est.candidates / truth.size},
                                ]
                        # one pass over the reports for every estimate's log-likelihood (logliks)
                        thetas = [theta for _, theta in scored]
                        lls = logliks(blocks, rr.q_star, rr.p_star, thetas, [lams[j] for j in S]) if scored else []
                        for (row, _), ll in zip(scored, lls):
                            row["value"] = ll / n_users
                        for m in secs:
                            r = {**base, "figure": exp["time_figure"], "mechanism": m}
                            time_rows.append({**r, "metric": "time_s", "value": secs[m]})
                            time_rows.append({**r, "metric": COST_METRIC, "value": ops[m]})
                            if m in epochs:
                                time_rows.append({**r, "metric": EPOCHS_METRIC, "value": float(epochs[m])})
                            ref = time_reference(m)
                            if ref in secs:
                                time_rows.append(
                                    {**r, "metric": "time_ratio_to_lremh", "value": secs[m] / max(secs[ref], 1e-12)}
                                )
                log(
                    f"{dataset} run {run} f={f:g}: done; estimation seconds "
                    + ", ".join(f"{m} {v:.1f}" for m, v in spent.items())
                )
    return time_rows, rows


def feasibility_table(sizes: list[int], n_users: int, ks=range(2, 9), budget_gib: float = 24.0) -> pd.DataFrame:
    """Worst-case (largest domains) candidate count and estimator memory per k."""
    worst = sorted(sizes, reverse=True)
    out = []
    for k in ks:
        mem = memory_estimate(worst[:k], n_users)
        out.append(
            {
                "k": k,
                "candidates": mem["candidates"],
                "em_factorised_gib": mem["em"] / 2**30,
                "em_explicit_gib": mem["em_explicit"] / 2**30,
                "lasso_gib": mem["lasso"] / 2**30,
                "lremh_gib": mem["lremh"] / 2**30,
                "fits": max(mem["em"], mem["em_explicit"], mem["lremh"]) / 2**30 <= budget_gib,
            }
        )
    return pd.DataFrame(out)


def write_job_results(exp: dict, time_rows: list, rows: list, outputs: dict) -> None:
    """The job's result files (ldprepro.papers.lremh.kind.run_experiment): ``outputs["time"]`` and
    ``outputs["avd"]`` list one parquet per method, in the order of ``exp["methods"]``
    (:func:`experiment_outputs`); the time figure's files get the timing and cost rows."""
    from ldprepro.pipeline.results import tidy_frame, write_results

    for kind, data in (("time", time_rows), ("avd", rows)):
        frame = tidy_frame(data, extra_order=["f", "k", "n_users"])
        for path, method in zip(outputs[kind], exp["methods"]):
            write_results(frame[frame["mechanism"] == method].reset_index(drop=True), path)
