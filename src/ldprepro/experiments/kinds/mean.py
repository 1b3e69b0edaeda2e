"""Kind ``mean``: mean estimation of a panel's numeric columns (ldprepro.experiments.mean_figures),
behind the experiment-kind contract (ldprepro.experiments.kinds)."""

from __future__ import annotations

import time

from ldprepro.experiments import mean_figures
from ldprepro.pipeline.verify import experiment_grid as grid  # noqa: F401  (the kind's grid)


def run_job(fig, panel, mechanism, df, card, seed, paper, figure, progress, split_of=None) -> list[dict]:
    """One ε at a time (the rows are the same as in one call), to log progress per ε."""
    rows = []
    for i, eps in enumerate(fig["eps"], 1):
        t0 = time.monotonic()
        rows += mean_figures.run_job({**fig, "eps": [eps]}, panel, mechanism, df, card, seed, paper, figure)
        progress("%s: ε = %g done (%d/%d) in %.1f s", mechanism, eps, i, len(fig["eps"]), time.monotonic() - t0)
    return rows


def plot(summary, fig, unavailable, title, png, svg=None, claims=None) -> None:
    """The kind's default plot: one panel per dataset, the metric against ``x`` (ε by default)."""
    from ldprepro.experiments.mean_figures import plot_mean_figure

    plot_mean_figure(summary, fig, unavailable, title, png, svg, claims=claims)
