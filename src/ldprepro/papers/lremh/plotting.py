"""Paper 004 (RR-LDP / LREMH) Figs. 1–4: the plots (the runner: :mod:`ldprepro.papers.lremh.experiment`).

Time figures (paper Figs. 1–2, Sec. 5.3) draw the measured CPU time (the paper plots time), beside
it the machine-independent cost the efficiency verdicts are decided on
(:mod:`ldprepro.papers.lremh.cost`), and each method's cost ratio to LREMH with its CPU-time ratio
faded beside it as context. AVD figures (Figs. 3–4) draw the AVD and LREMH's pruning diagnostics.
"""

from __future__ import annotations

import pandas as pd

from ldprepro.papers.lremh.cost import COST_METRIC
from ldprepro.papers.lremh.experiment import CONTROLS, LOPUB


def _style(method: str) -> dict:
    """Plot style: the paper's methods as in :func:`ldprepro.report.plotting.style`; the converged-EM
    control (ours) dashed, with open markers, labelled as such."""
    from ldprepro.report.plotting import style

    if method in CONTROLS:
        st = style(CONTROLS[method])
        return {**st, "label": st["label"] + " to convergence (ours)", "ls": "--", "mfc": "none"}
    st = style(method)
    if method in ("em", "lremh"):
        st["label"] += " (gap 0.001)"
    return st


def _yerr(g: pd.DataFrame, log: bool = False) -> list:
    """Asymmetric CI error bars; on a log axis the lower bar stops above zero."""
    low = g["ci_low"].clip(lower=g["mean"] * 1e-2) if log else g["ci_low"]
    return [(g["mean"] - low).clip(lower=0), (g["ci_high"] - g["mean"]).clip(lower=0)]


YLABEL = {
    "time_s": "estimation time (s, CPU)",
    COST_METRIC: "cost (operations, cost model;\ndecides the verdicts)",
    "avd": "AVD of the k-way marginal",
}


def _metric_panel(ax, summary: pd.DataFrame, f: float, metric: str, log: bool) -> None:
    """Each method's mean ``metric`` per k with its 95 % CI bars."""
    from ldprepro.report.plotting import style

    s = summary[(summary["f"] == f) & (summary["metric"] == metric)]
    for m, g in s.groupby("mechanism", sort=False):
        g = g.sort_values("k")
        ax.errorbar(g["k"], g["mean"], yerr=_yerr(g, log=log), capsize=3, **style(m))
    ax.set_ylabel(YLABEL[metric])
    if log:
        ax.set_yscale("log")
    else:
        ax.set_ylim(0, 1.02)


def _ratio_panel(ax, summary: pd.DataFrame, f: float) -> None:
    """Each method's mean cost ÷ the mean cost of LREMH with the same stopping rule (solid, what the
    verdicts use), and its CPU-time ratio faded beside it (context; decides nothing)."""
    from ldprepro.report.plotting import style

    for metric, alpha in ((COST_METRIC, 1.0), ("time_s", 0.35)):
        s = summary[(summary["f"] == f) & (summary["metric"] == metric)]
        means = s.pivot_table(index="k", columns="mechanism", values="mean")
        for m in [m for m in s["mechanism"].unique() if m not in ("lremh", "lremh_converged")]:
            ref = "lremh_converged" if m.endswith("_converged") else "lremh"  # a control ÷ its control
            if m in means and ref in means:
                st = style(m)
                # one legend entry per method (the cost); the faded time line shares its style
                st["label"] = f"{st['label']} ÷ {style(ref)['label']}" if metric == COST_METRIC else "_nolegend_"
                r = (means[m] / means[ref]).dropna()
                ax.plot(r.index, r.to_numpy(), alpha=alpha, **st)
    ax.axhline(1.0, color="k", lw=0.8, ls=":")
    ax.set_yscale("log")
    ax.set_ylabel("mean ÷ mean of LREMH:\ncost (solid), CPU time (faded)")


def _pruning_panel(ax, summary: pd.DataFrame, f: float) -> None:
    """LREMH's AVD, the true mass it pruned and the fraction of candidates it keeps (shares in [0, 1])."""
    from ldprepro.report.plotting import style

    s = summary[(summary["f"] == f) & (summary["mechanism"] == "lremh")]
    st = style("lremh")
    for metric2, ls, mfc, lab in [
        ("avd", "-", st["color"], "LREMH AVD"),
        ("pruned_true_mass", "--", "none", "true mass pruned by LREMH"),
        ("kept_fraction", ":", "white", "fraction of candidates LREMH keeps"),
    ]:
        g = s[s["metric"] == metric2].sort_values("k")
        ax.errorbar(
            g["k"],
            g["mean"],
            yerr=_yerr(g),
            capsize=3,
            ls=ls,
            color=st["color"],
            marker=st["marker"],
            mfc=mfc,
            label=lab,
        )
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("share (0–1): AVD, pruned mass,\ncandidates kept")


def plot_figure(
    summary: pd.DataFrame,
    kind: str,
    title: str,
    unavailable: dict,
    png,
    svg=None,
    claims=None,
    f_values=None,
    privacy: dict | None = None,
) -> None:
    """One column per f. Time figures: estimation time (log), the cost model's operations (log), each
    method's mean cost ÷ LREMH's with the CPU-time ratio faded beside it (ratios of means, from the
    summary). AVD figures: AVD, then LREMH's pruning diagnostics (AVD, true mass pruned, fraction of
    candidates kept). One legend per row, right of the panels."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    from ldprepro.report.plotting import not_available_panel, plain_log_ticks, save_figure, set_suptitle, shared_legend

    # EM and LREMH stopped by LoPub's rule (the alternative reading of the [U] stop) are not drawn: they
    # would double every curve; their verdicts are in the claims' robustness column, their rows in the results
    summary = summary[~summary["mechanism"].isin(list(LOPUB))] if len(summary) else summary
    if unavailable:
        fig, axes = plt.subplots(
            len(unavailable), 1, figsize=(6.0, 0.6 + 0.5 * len(unavailable)), squeeze=False, layout="constrained"
        )
        for ax, (k, v) in zip(axes[:, 0], unavailable.items()):
            not_available_panel(ax, str(k), v)
        set_suptitle(fig, title)
        save_figure(fig, png, svg, claims=claims)
        return
    f_values = sorted(f_values if f_values is not None else summary["f"].unique())
    ncols = max(1, len(f_values))
    panels = ["time_s", COST_METRIC, "ratio"] if kind == "time" else ["avd", "pruning"]
    fig = plt.figure(figsize=(4.2 * ncols, 3.5 * len(panels)), layout="constrained")
    rows = fig.subfigures(len(panels), 1)
    axes = [row.subplots(1, ncols, squeeze=False)[0] for row in rows]
    ks = sorted(int(k) for k in summary["k"].dropna().unique())
    for r, (panel, row_axes) in enumerate(zip(panels, axes)):
        for ax, f in zip(row_axes, f_values):
            if panel == "ratio":
                _ratio_panel(ax, summary, f)
            elif panel == "pruning":
                _pruning_panel(ax, summary, f)
            else:
                _metric_panel(ax, summary, f, panel, log=kind == "time")
            sub = f"f = {f:g}"
            if r == 0 and privacy and f in privacy:
                sub += f"\n{privacy[f]}"
            ax.set_title(sub)
            ax.set_xlabel("dimension k")
            ax.set_xticks(ks)
            if ax.get_yscale() == "log":
                plain_log_ticks(ax)
    for panel, row, row_axes in zip(panels, rows, axes):
        extra = [(Line2D([], [], color="grey", alpha=0.35), "faded: the CPU-time ratio (context only)")]
        shared_legend(row, row_axes, extra=extra if panel == "ratio" else ())
    set_suptitle(fig, title + " (mean over runs × subsets, 95% CI bars)")
    save_figure(fig, png, svg, claims=claims)
