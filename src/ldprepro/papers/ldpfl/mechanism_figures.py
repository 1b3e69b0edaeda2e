"""Paper 002 (Zhao et al.) Fig. 1 and Fig. 4: mechanism-level figures that need no dataset.

Fig. 1: worst-case noise variance vs ε of Laplace, Duchi, PM, HM, Three-Outputs, PM-OPT, PM-SUB
and HM-TP — the closed forms of docs/papers/ldpfl.md §0, plus a
Monte-Carlo check at a few ε: the mean squared error of ``perturb`` at the worst-case input,
over independent repetitions.

Fig. 4: the three-piece output density of PM-OPT (p on [ℓ(t), r(t)], p/a elsewhere on [−A, A])
for a few inputs: the exact pdf next to a histogram of ``perturb``'s outputs.

This module computes their rows and draws them (the compute jobs import nothing of the claim engine);
the claims about both are declared in ``claims.yaml`` beside it and decided by the one dispatcher
with the exact computations of ``mechanism_claims``.
"""

from __future__ import annotations

import numpy as np

from ldprepro.domain.mechanisms import get_mechanism
from ldprepro.domain.mechanisms.worst_case import worst_input as worst_case_input
from ldprepro.pipeline.seeding import rng_for

PAPER = "ldpfl"


def worst_input(mech) -> float:
    """The input in [0, 1] maximising the variance (symmetric mechanisms), on a fine grid."""
    return worst_case_input(mech, lo=0.0, points=20001)


def fig1_rows(mechanism: str, eps_grid, mc_eps, mc_n: int, mc_reps: int, seed: int) -> list[dict]:
    """Analytic worst-case variance on ``eps_grid`` and Monte-Carlo repetitions at ``mc_eps``."""
    rows = []
    base = {"paper": PAPER, "figure": "fig1", "mechanism": mechanism}
    for eps in eps_grid:
        mech = get_mechanism(mechanism, float(eps))
        rows.append(
            {
                **base,
                "dataset": "analytic",
                "eps": float(eps),
                "rep": 0,
                "metric": "worst_case_variance",
                "t_input": worst_input(mech),
                "n_users": 0,
                "value": mech.worst_case_variance(),
            }
        )
    for eps in mc_eps:
        mech = get_mechanism(mechanism, float(eps))
        t = worst_input(mech)
        x = np.full(int(mc_n), t)
        for rep in range(int(mc_reps)):
            rng = rng_for(
                seed, {"paper": PAPER, "figure": "fig1", "mechanism": mechanism, "eps": float(eps), "rep": rep}
            )
            y = mech.perturb(x, rng)
            rows.append(
                {
                    **base,
                    "dataset": "monte_carlo",
                    "eps": float(eps),
                    "rep": rep,
                    "metric": "worst_case_variance",
                    "t_input": t,
                    "n_users": int(mc_n),
                    "value": float(np.mean((y - t) ** 2)),
                }
            )
    return rows


def fig4_rows(eps: float, inputs, n: int, bins: int, seed: int, mechanism: str = "pm_opt") -> list[dict]:
    """Exact density and a histogram of ``perturb`` outputs (density scale) for each input."""
    mech = get_mechanism(mechanism, float(eps))
    edges = np.linspace(-mech.A, mech.A, int(bins) + 1)
    centres = 0.5 * (edges[:-1] + edges[1:])
    width = edges[1] - edges[0]
    rows = []
    base = {"paper": PAPER, "figure": "fig4", "mechanism": mechanism, "eps": float(eps), "rep": 0}
    for t in inputs:
        rng = rng_for(
            seed, {"paper": PAPER, "figure": "fig4", "mechanism": mechanism, "eps": float(eps), "t": float(t)}
        )
        y = mech.perturb(np.full(int(n), float(t)), rng)
        counts, _ = np.histogram(y, bins=edges)
        common = {**base, "t_input": float(t), "n_users": int(n)}
        for c, k in zip(centres, counts):
            rows.append(
                {**common, "dataset": "monte_carlo", "metric": "density", "y": float(c), "value": k / (n * width)}
            )
        # the exact pdf on a fine grid, with both sides of each jump
        jumps = np.array([mech.left(t), mech.right(t)])
        fine = np.sort(np.concatenate([np.linspace(-mech.A, mech.A, 801), jumps - 1e-9, jumps + 1e-9]))
        fine = fine[(fine >= -mech.A) & (fine <= mech.A)]
        for yy, e in zip(fine, mech.pdf(fine, float(t))):
            rows.append(
                {**common, "n_users": 0, "dataset": "analytic", "metric": "density", "y": float(yy), "value": float(e)}
            )
    return rows


def plot_fig1(summary, png, svg=None, claims=None) -> None:
    """Zhao et al. Fig. 1: the closed-form worst-case variance (lines) with the Monte Carlo check
    (markers, 95% CI) on a log axis, and below it each mechanism divided by the best closed form at
    each ε, where the curves that bunch together on the log axis (ε < 2) separate and the Monte Carlo
    CIs are visible."""
    import matplotlib.pyplot as plt

    from ldprepro.report.plotting import MECHANISM_STYLE, save_figure, set_suptitle, shared_legend, style

    fig, (ax, ax_ratio) = plt.subplots(
        2, 1, figsize=(7.5, 6.6), sharex=True, layout="constrained", gridspec_kw={"height_ratios": [1.4, 1.0]}
    )
    ana = summary[summary["dataset"] == "analytic"]
    mc = summary[summary["dataset"] == "monte_carlo"]
    best = ana.groupby("eps")["mean"].min()
    top = 1.0
    order = list(MECHANISM_STYLE)  # the paper's order of the mechanisms
    groups = sorted(ana.groupby("mechanism", sort=False), key=lambda kv: order.index(kv[0]) if kv[0] in order else 99)
    for name, g in groups:
        st = style(name)
        ratio = g["mean"].to_numpy() / best.loc[g["eps"]].to_numpy()
        ax.plot(g["eps"], g["mean"], color=st["color"], ls=st["ls"], label=st["label"])
        ax_ratio.plot(g["eps"], ratio, color=st["color"], ls=st["ls"])
        top = max(top, float(ratio.max()))
        m = mc[mc["mechanism"] == name]
        if len(m):
            ax.errorbar(
                m["eps"],
                m["mean"],
                yerr=[m["mean"] - m["ci_low"], m["ci_high"] - m["mean"]],
                fmt=st["marker"],
                color=st["color"],
                mfc=st["mfc"],
                capsize=2,
                lw=0.8,
            )
            b = best.reindex(m["eps"]).to_numpy()
            r = m["mean"].to_numpy() / b
            ax_ratio.errorbar(
                m["eps"],
                r,
                yerr=[r - m["ci_low"].to_numpy() / b, m["ci_high"].to_numpy() / b - r],
                fmt=st["marker"],
                color=st["color"],
                mfc=st["mfc"],
                capsize=2,
                lw=0.8,
            )
    ax.set_yscale("log")
    ax.set_ylabel("worst-case noise variance\n(input domain [−1, 1])")
    ax.set_title("(a) lines: closed form; markers: Monte Carlo mean with 95% CI")
    ax_ratio.axhline(1.0, color="black", lw=0.8)
    ax_ratio.set_ylim(0.98, min(1.6, 1.02 * top))
    ax_ratio.set_xlabel("privacy budget ε")
    ax_ratio.set_ylabel("÷ best closed form at each ε")
    ax_ratio.set_title("(b) relative to the best mechanism at each ε (1 = best; Monte Carlo CIs ÷ the same)")
    shared_legend(fig, [ax])
    set_suptitle(fig, "Zhao et al. Fig. 1: worst-case noise variance vs ε")
    save_figure(fig, png, svg, claims=claims)


def plot_fig4(df, eps: float, png, svg=None, claims=None) -> None:
    """Zhao et al. Fig. 4: a histogram of PM-OPT's outputs against the exact three-piece pdf."""
    import matplotlib.pyplot as plt

    from ldprepro.report.plotting import save_figure, set_suptitle, shared_legend, style

    inputs = sorted(df["t_input"].unique())
    fig, axes = plt.subplots(
        1, len(inputs), figsize=(3.0 * len(inputs), 3.2), sharey=True, squeeze=False, layout="constrained"
    )
    for ax, t in zip(axes[0], inputs):
        g = df[df["t_input"] == t]
        mc, ex = g[g["dataset"] == "monte_carlo"], g[g["dataset"] == "analytic"]
        ax.bar(
            mc["y"],
            mc["value"],
            width=float(np.diff(np.sort(mc["y"].unique()))[0]),
            color=style("pm_opt")["color"],
            alpha=0.5,
            label="histogram of perturb()",
        )
        ax.plot(ex["y"], ex["value"], color="#000000", lw=1.2, label="exact pdf")
        ax.set_title(f"input t = {t:g}")
        ax.set_xlabel("output t*")
    axes[0][0].set_ylabel("density")
    shared_legend(fig, axes[0])
    set_suptitle(fig, f"Zhao et al. Fig. 4: PM-OPT output density, ε = {eps:g}")
    save_figure(fig, png, svg, claims=claims)
