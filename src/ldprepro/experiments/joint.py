"""Paper 004 (RR-LDP / LREMH) Figs. 1–4: runner, claims and plotting.

One job per experiment (dataset) runs every method on the same reports, so the timings of EM,
LASSO and LREMH come from the same process on the same machine. Per run: a fresh user sample
(20 % of NLTCS, 10 % of Adult), then per f one RR-LDP collection (two-stage path), then per k and
per fixed random k-subset the three estimators on the subset's bit blocks. Only the estimation is
timed (``time.perf_counter`` around the estimator call, BLAS limited to one thread).

Timing rows (metrics ``time_s``, ``time_ratio_to_lremh``) go to the time figure's files; every other
metric (``avd``, ``iterations``, ``candidates``, LREMH's ``pruned_true_mass`` and ``kept_fraction``)
goes to the AVD figure's files, which are byte-reproducible; the timing files are not.
``rep`` = run × (number of subsets) + subset index.
"""

from __future__ import annotations

import itertools
import math
import time

import numpy as np
import pandas as pd

from ..joint import RRLDP, avd, em, em_candidates, lasso, lremh, memory_estimate, true_joint
from ..joint.adult import derive_lopub_adult
from ..seeding import rng_for
from ..results import verdict_of

PAPER = "lremh"
METHODS = ("em", "lasso", "lremh")
TIME_METRICS = ("time_s", "time_ratio_to_lremh")


# ------------------------------------------------------------------------------------------------
# configuration helpers (used by workflow/rules/joint.smk)
# ------------------------------------------------------------------------------------------------


def experiment_params(section: dict, name: str, scale: str) -> dict:
    """The experiment entry merged with the section's shared settings; ``smoke`` overrides (sizes
    and repetitions only) applied when ``scale == 'smoke'``."""
    shared = {k: v for k, v in section.items() if k != "experiments"}
    entry = dict(section["experiments"][name])
    smoke = entry.pop("smoke", {})
    out = {**shared, **entry}
    if scale == "smoke":
        out.update(smoke)
    out["name"] = name
    return out


def experiment_outputs(exp: dict, kind: str) -> list[str]:
    fig = exp["time_figure"] if kind == "time" else exp["avd_figure"]
    return [f"results/{PAPER}/{fig}/{exp['name']}__{m}.parquet" for m in exp["methods"]]


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


def _estimators(exp: dict) -> dict:
    e, la = exp["em"], exp["lasso"]
    em_kw = {"gap": float(e["gap"]), "stop": e["stop"], "max_iter": int(e["max_iter"])}
    la_kw = {"alpha": float(la["alpha"]), "mode": la["mode"], "max_iter": int(la["max_iter"])}

    def run_em(bl, qs, ps):
        if e.get("impl", "explicit") == "factorised":
            return em(bl, qs, ps, **em_kw)
        sizes = [b.shape[1] for b in bl]
        C = int(np.prod(sizes))
        cand = np.stack(np.unravel_index(np.arange(C), sizes), axis=1)
        return em_candidates(bl, qs, ps, cand, np.ones(C), **em_kw)

    tau = float(exp["lremh"]["tau"])
    return {
        "em": run_em,
        "lasso": lambda bl, qs, ps: lasso(bl, qs, ps, **la_kw),
        "lremh": lambda bl, qs, ps: lremh(bl, qs, ps, tau=tau, **em_kw, lasso_kw=la_kw),
    }


def run_experiment(exp: dict, codes: np.ndarray, sizes: list[int], seed: int, log=print) -> tuple[list, list]:
    """Every (run × f × k × subset × method) of one experiment: (time rows, other rows)."""
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
                for k, ss in subsets.items():
                    for si, S in enumerate(ss):
                        sz = [sizes[j] for j in S]
                        blocks = rr.blocks(reports, S)
                        truth = true_joint(sample[:, S], sz)
                        base = {"paper": PAPER, "dataset": dataset, "eps": eps, "f": f, "k": k,
                                "n_users": n_users, "rep": run * len(ss) + si}
                        secs = {}
                        for m in methods:
                            t0 = time.perf_counter()
                            est = estimators[m](blocks, rr.q_star, rr.p_star)
                            secs[m] = time.perf_counter() - t0
                            r = {**base, "figure": exp["avd_figure"], "mechanism": m}
                            rows += [{**r, "metric": "avd", "value": avd(truth, est.theta)},
                                     {**r, "metric": "iterations", "value": float(est.iterations)},
                                     {**r, "metric": "candidates", "value": float(est.candidates)}]
                            if m == "lremh":
                                pruned = est.info["pruned"]
                                rows += [{**r, "metric": "pruned_true_mass", "value": float(truth[pruned].sum())},
                                         {**r, "metric": "kept_fraction", "value": est.candidates / truth.size}]
                        for m in methods:
                            r = {**base, "figure": exp["time_figure"], "mechanism": m}
                            time_rows.append({**r, "metric": "time_s", "value": secs[m]})
                            if "lremh" in secs and m != "lremh":
                                time_rows.append({**r, "metric": "time_ratio_to_lremh",
                                                  "value": secs[m] / max(secs["lremh"], 1e-12)})
                log(f"{dataset} run {run} f={f:g}: done")
    return time_rows, rows


def feasibility_table(sizes: list[int], n_users: int, ks=range(2, 9), budget_gib: float = 24.0) -> pd.DataFrame:
    """Worst-case (largest domains) candidate count and estimator memory per k."""
    worst = sorted(sizes, reverse=True)
    out = []
    for k in ks:
        mem = memory_estimate(worst[:k], n_users)
        out.append({"k": k, "candidates": mem["candidates"], "em_factorised_gib": mem["em"] / 2**30,
                    "em_explicit_gib": mem["em_explicit"] / 2**30, "lasso_gib": mem["lasso"] / 2**30,
                    "lremh_gib": mem["lremh"] / 2**30,
                    "fits": max(mem["em"], mem["em_explicit"], mem["lremh"]) / 2**30 <= budget_gib})
    return pd.DataFrame(out)


# ------------------------------------------------------------------------------------------------
# claims
# ------------------------------------------------------------------------------------------------


def _row(figure, claim, verdict, evidence):
    return {"paper": PAPER, "figure": figure, "claim": claim, "verdict": verdict, "evidence": evidence}


_verdict = verdict_of


def _table(summary: pd.DataFrame, metric: str, value: str = "mean") -> pd.DataFrame:
    s = summary[summary["metric"] == metric]
    return s.pivot_table(index=["f", "k"], columns="mechanism", values=value)


def _rising(series: pd.Series) -> list[bool]:
    v = series.to_numpy()
    return list(np.diff(v) > 0)


def time_claims(summary: pd.DataFrame, figure: str) -> list[dict]:
    out = []
    t = _table(summary, "time_s")
    hi = _table(summary, "time_s", "ci_high")
    lo = _table(summary, "time_s", "ci_low")
    if not {"em", "lremh"} <= set(t.columns):
        return [_row(figure, "LREMH is faster than EM for every dimension k", "not testable", "EM or LREMH missing")]
    faster = (t["lremh"] < t["em"]).to_numpy()
    sig = (hi["lremh"] < lo["em"]).to_numpy()
    ratio = t["em"] / t["lremh"]
    out.append(_row(figure, "For any dimension k, LREMH is faster than EM (mean estimation time)", _verdict(faster),
                    f"LREMH mean time below EM's at {faster.sum()}/{faster.size} (f, k) points "
                    f"({sig.sum()} with non-overlapping 95% CIs); EM/LREMH time ratio "
                    + ", ".join(f"f={f:g},k={k}: {r:.2g}" for (f, k), r in ratio.items())))
    rise_k, rise_f = [], []
    for f, g in ratio.groupby(level="f"):
        rise_k += _rising(g.droplevel("f").sort_index())
    for k, g in ratio.groupby(level="k"):
        rise_f += _rising(g.droplevel("k").sort_index())
    out.append(_row(figure, "LREMH's efficiency advantage over EM grows with the number of attributes k",
                    _verdict(rise_k), f"EM/LREMH time ratio rises at {int(np.sum(rise_k))}/{len(rise_k)} steps in k "
                    "(per f)"))
    out.append(_row(figure, "LREMH's efficiency advantage over EM grows with f", _verdict(rise_f),
                    f"EM/LREMH time ratio rises at {int(np.sum(rise_f))}/{len(rise_f)} steps in f (per k)"))
    if figure == "fig2":
        em_t = t["em"].groupby(level="k").mean()
        ks = sorted(em_t.index)
        comp = ratio.groupby(level="k").mean()
        grows = _rising(em_t.sort_index())
        out.append(_row(figure, "On Adult EM is competitive at low dimension but degrades as k grows",
                        _verdict(grows + [bool(comp.loc[ks[0]] <= 2.0)]),
                        f"EM mean time (over f) {', '.join(f'k={k}: {em_t[k]:.3g} s' for k in ks)}; EM/LREMH ratio "
                        f"at k={ks[0]}: {comp.loc[ks[0]]:.2g} (≤ 2 counted as competitive), at k={ks[-1]}: "
                        f"{comp.loc[ks[-1]]:.2g}"))
    return out


def avd_claims(summary: pd.DataFrame, figure: str) -> list[dict]:
    out = []
    a = _table(summary, "avd")
    if not set(METHODS) <= set(a.columns):
        return [_row(figure, "LREMH balances accuracy between EM and LASSO", "not testable", "a method is missing")]
    half = (_table(summary, "avd", "ci_high") - _table(summary, "avd", "ci_low")) / 2
    lo = np.minimum(a["em"], a["lasso"]) - half["lremh"]
    hi = np.maximum(a["em"], a["lasso"]) + half["lremh"]
    between = ((a["lremh"] >= lo) & (a["lremh"] <= hi)).to_numpy()
    d_lasso = (a["lremh"] - a["lasso"]).abs()
    out.append(_row(figure, "LREMH's accuracy balances EM and LASSO (its AVD lies between theirs)", _verdict(between),
                    f"within [min, max] of EM and LASSO (± LREMH's 95% CI) at {between.sum()}/{between.size} (f, k) "
                    f"points; |AVD(LREMH) − AVD(LASSO)| ≤ {d_lasso.max():.3g} everywhere (LREMH ≈ LASSO); "
                    "AVD EM/LASSO/LREMH: " + "; ".join(
                        f"f={f:g},k={k}: {r['em']:.3f}/{r['lasso']:.3f}/{r['lremh']:.3f}" for (f, k), r in a.iterrows())))
    em_best = (a["em"] <= a[["lasso", "lremh"]].min(axis=1)).to_numpy()
    it = _table(summary, "iterations")
    out.append(_row(figure, "EM is accurate (but slow and sensitive to its initial value)", _verdict(em_best),
                    f"EM has the lowest AVD at {em_best.sum()}/{em_best.size} (f, k) points; with the gap 0.001 on "
                    f"max|Δθ| EM from uniform ran {it['em'].min():.3g}–{it['em'].max():.3g} iterations (mean per point), "
                    f"LREMH {it['lremh'].min():.3g}–{it['lremh'].max():.3g}"))
    pm = _table(summary, "pruned_true_mass")["lremh"]
    kept = _table(summary, "kept_fraction")["lremh"]
    share = (pm / a["lremh"]).clip(upper=1.0)
    small = (pm <= 0.01).to_numpy()
    out.append(_row(figure, "LREMH's pruning removes only redundant candidates (Alg. 2 step 2); caveat: the LASSO "
                    "over one-hot bits sees only the one-way marginals",
                    _verdict(small),
                    f"true mass in pruned cells (which EM can never revive, a floor under LREMH's AVD) ≤ 0.01 at "
                    f"{small.sum()}/{small.size} (f, k) points; range {pm.min():.3g}–{pm.max():.3g}; it is "
                    f"{share.min():.0%}–{share.max():.0%} of LREMH's AVD; LREMH kept {kept.min():.1%}–{kept.max():.1%} "
                    "of the candidates"))
    return out


# ------------------------------------------------------------------------------------------------
# plotting
# ------------------------------------------------------------------------------------------------


def _yerr(g: pd.DataFrame, log: bool = False) -> list:
    """Asymmetric CI error bars; on a log axis the lower bar stops above zero."""
    low = g["ci_low"].clip(lower=g["mean"] * 1e-2) if log else g["ci_low"]
    return [(g["mean"] - low).clip(lower=0), (g["ci_high"] - g["mean"]).clip(lower=0)]


def plot_figure(summary: pd.DataFrame, kind: str, title: str, unavailable: dict, png, svg=None, claims=None,
                f_values=None, privacy: dict | None = None) -> None:
    """Top row: estimation time (log) or AVD per f; bottom row: each method's mean time divided by
    LREMH's mean time (the ratio of means, from the summary), or LREMH's pruning diagnostics (AVD,
    true mass pruned, fraction of candidates kept; all shares in [0, 1]). One legend per row, right
    of the panels."""
    import matplotlib.pyplot as plt

    from ..plotting import not_available_panel, plain_log_ticks, save_figure, set_suptitle, shared_legend, style

    if unavailable:
        fig, axes = plt.subplots(len(unavailable), 1, figsize=(6.0, 0.6 + 0.5 * len(unavailable)), squeeze=False,
                                 layout="constrained")
        for ax, (k, v) in zip(axes[:, 0], unavailable.items()):
            not_available_panel(ax, str(k), v)
        set_suptitle(fig, title)
        save_figure(fig, png, svg, claims=claims)
        return
    f_values = sorted(f_values if f_values is not None else summary["f"].unique())
    ncols = max(1, len(f_values))
    fig = plt.figure(figsize=(4.2 * ncols, 7.0), layout="constrained")
    top_fig, bottom_fig = fig.subfigures(2, 1)
    top_axes = top_fig.subplots(1, ncols, squeeze=False)[0]
    bottom_axes = bottom_fig.subplots(1, ncols, squeeze=False)[0]
    metric = "time_s" if kind == "time" else "avd"
    ks = sorted(int(k) for k in summary["k"].dropna().unique())
    for ax, f in zip(top_axes, f_values):
        s = summary[(summary["f"] == f) & (summary["metric"] == metric)]
        for m, g in s.groupby("mechanism", sort=False):
            g = g.sort_values("k")
            ax.errorbar(g["k"], g["mean"], yerr=_yerr(g, log=kind == "time"), capsize=3, **style(m))
        sub = f"f = {f:g}"
        if privacy and f in privacy:
            sub += f"\n{privacy[f]}"
        ax.set_title(sub)
        ax.set_xlabel("dimension k")
        ax.set_xticks(ks)
        ax.set_ylabel("estimation time (s)" if kind == "time" else "AVD of the k-way marginal")
        if kind == "time":
            ax.set_yscale("log")
        else:
            ax.set_ylim(0, 1.02)
    # second row: time ratios (time figures) or LREMH's pruning floor (AVD figures)
    for ax, f in zip(bottom_axes, f_values):
        if kind == "time":
            s = summary[(summary["f"] == f) & (summary["metric"] == "time_s")]
            means = s.pivot_table(index="k", columns="mechanism", values="mean")
            for m in [m for m in s["mechanism"].unique() if m != "lremh"]:
                if m in means and "lremh" in means:
                    st = style(m)
                    st["label"] = f"{st['label']} ÷ LREMH"
                    r = (means[m] / means["lremh"]).dropna()
                    ax.plot(r.index, r.to_numpy(), **st)
            ax.axhline(1.0, color="k", lw=0.8, ls=":")
            ax.set_yscale("log")
            ax.set_ylabel("mean time ÷ mean LREMH time")
        else:
            s = summary[(summary["f"] == f) & (summary["mechanism"] == "lremh")]
            st = style("lremh")
            for metric2, ls, mfc, lab in [("avd", "-", st["color"], "LREMH AVD"),
                                          ("pruned_true_mass", "--", "none", "true mass pruned by LREMH"),
                                          ("kept_fraction", ":", "white", "fraction of candidates LREMH keeps")]:
                g = s[s["metric"] == metric2].sort_values("k")
                ax.errorbar(g["k"], g["mean"], yerr=_yerr(g), capsize=3, ls=ls, color=st["color"],
                            marker=st["marker"], mfc=mfc, label=lab)
            ax.set_ylim(0, 1.02)
            ax.set_ylabel("share (0–1): AVD, pruned mass,\ncandidates kept")
        ax.set_xlabel("dimension k")
        ax.set_xticks(ks)
        ax.set_title(f"f = {f:g}")
    for ax in [*top_axes, *bottom_axes]:
        if ax.get_yscale() == "log":
            plain_log_ticks(ax)
    shared_legend(top_fig, top_axes)
    shared_legend(bottom_fig, bottom_axes)
    set_suptitle(fig, title + " (mean over runs × subsets, 95% CI bars)")
    save_figure(fig, png, svg, claims=claims)
