"""The audit's figure: claimed vs exact vs empirical ε of every audited subject, one panel per family."""

from __future__ import annotations

import numpy as np


def plot_audit(df, png, svg=None) -> None:
    import matplotlib.pyplot as plt

    from ldprepro.report.plotting import save_figure

    fams = [
        f for f in ("numeric", "discretised", "multidim", "frequency", "histogram", "graded") if f in set(df["family"])
    ]
    heights = [max(2.0, 0.28 * df[df["family"] == f]["subject"].nunique()) for f in fams]
    fig, axes = plt.subplots(
        len(fams), 1, figsize=(9, sum(heights) + 1.5), squeeze=False, gridspec_kw={"height_ratios": heights}
    )
    cap = 30.0
    for ax, fam in zip(axes[:, 0], fams):
        g = df[df["family"] == fam]
        subjects = list(dict.fromkeys(g["subject"]))
        ypos = {s: i for i, s in enumerate(subjects)}
        for _, r in g.iterrows():
            y = ypos[r["subject"]]
            ex = min(r["exact_loss"] / r["eps_claimed"], cap)
            ax.plot(ex, y, "o", color="#d62728" if r["verdict"] == "violated" else "#1f77b4", ms=4, alpha=0.7)
            if np.isfinite(r["eps_empirical"]):
                ax.plot(
                    min(max(r["eps_empirical"] / r["eps_claimed"], 1e-2), cap), y, "^", color="#2ca02c", ms=4, alpha=0.6
                )
        ax.axvline(1.0, color="black", lw=1)
        ax.set_xscale("log")
        ax.set_xlim(0.3, cap * 1.2)
        ax.set_yticks(range(len(subjects)))
        ax.set_yticklabels(subjects, fontsize="small")
        ax.set_title(f"{fam}: loss / claimed ε (1 = claim met exactly; {cap:g} = capped, incl. ∞)")
        ax.grid(True, axis="x", alpha=0.3)
    axes[0, 0].plot([], [], "o", color="#1f77b4", label="exact loss (claim holds)")
    axes[0, 0].plot([], [], "o", color="#d62728", label="exact loss (claim violated)")
    axes[0, 0].plot([], [], "^", color="#2ca02c", label="empirical lower bound")
    axes[0, 0].legend(loc="lower right")
    fig.suptitle("Privacy audit: claimed vs exact vs empirical ε, every mechanism the pipeline runs")
    fig.tight_layout()
    save_figure(fig, png, svg)
