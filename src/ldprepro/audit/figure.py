"""The audit figure: one panel per family, every subject's exact privacy loss and empirical lower
bound over its claimed ε (results/audit/audit.png, drawn by the audit_table job from the rows of
:func:`ldprepro.audit.empirical.run_family`)."""

from __future__ import annotations

import numpy as np


def plot_audit(df, png, svg=None) -> None:
    """Draw the audit (:func:`audit_figure`) to ``png`` (and ``svg``)."""
    from ldprepro.report.plotting import save_figure

    save_figure(audit_figure(df), png, svg)


def audit_figure(df):
    """One panel per family: every subject's exact loss and empirical lower bound over its claimed
    ε. Constrained layout keeps the figure title above the first panel's title at any height (the
    figure grows with the number of subjects; tight_layout let the two overlap on tall figures)."""
    import matplotlib.pyplot as plt

    from ldprepro.domain.mechanisms.law_check import ALPHA, N_SAMPLES
    from ldprepro.report.plotting import set_suptitle

    fams = [
        f for f in ("numeric", "discretised", "multidim", "frequency", "histogram", "graded") if f in set(df["family"])
    ]
    heights = [max(2.0, 0.28 * df[df["family"] == f]["subject"].nunique()) for f in fams]
    fig, axes = plt.subplots(
        len(fams),
        1,
        figsize=(9, sum(heights) + 1.5),
        squeeze=False,
        gridspec_kw={"height_ratios": heights},
        layout="constrained",
    )
    cap = 30.0
    for ax, fam in zip(axes[:, 0], fams):
        g = df[df["family"] == fam]
        subjects = list(dict.fromkeys(g["subject"]))
        ypos = {s: i for i, s in enumerate(subjects)}
        for _, r in g.iterrows():
            y = ypos[r["subject"]]
            if r["verdict"] == "unverifiable":  # no exact loss: its declared law failed law_check
                ax.plot(cap, y, "x", color="#7f7f7f", ms=5)
                continue
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
    axes[0, 0].plot([], [], "o", color="#1f77b4", label="exact loss of the declared law (claim holds)")
    axes[0, 0].plot([], [], "o", color="#d62728", label="exact loss of the declared law (claim violated)")
    axes[0, 0].plot([], [], "^", color="#2ca02c", label="empirical lower bound")
    if (df["verdict"] == "unverifiable").any():
        axes[0, 0].plot([], [], "x", color="#7f7f7f", label="declared law unverifiable (no exact loss)")
    axes[0, 0].legend(loc="lower right")
    set_suptitle(
        fig,
        "Privacy audit: claimed vs exact vs empirical ε, every mechanism the pipeline runs. Exact loss: of the "
        f"declared law (pmf/pdf); samplers checked against it with {N_SAMPLES:,} draws per input (α = {ALPHA:g}): "
        f"a deviation on outputs rarer than ~1/{N_SAMPLES:,} cannot be excluded",
    )
    return fig
