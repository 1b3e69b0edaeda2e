"""Kind ``sgd``: LDP stochastic gradient descent (ldprepro.experiments.sgd_figures), behind the
experiment-kind contract (ldprepro.experiments.kinds)."""

from __future__ import annotations

import time

from ldprepro.pipeline.verify import experiment_grid as grid  # noqa: F401  (the kind's grid)


def run_job(fig, panel, mechanism, df, card, seed, paper, figure, progress, split_of=None) -> list[dict]:
    """Every ε in one call, fit after fit (each fit's rows are gathered once for all ε); progress
    per fit. ``split_of``: the earlier figure whose cross-validation splits this panel shares."""
    from ldprepro.experiments import sgd_figures  # the render imports this module too: it needs no fits

    t0 = time.monotonic()

    def fit_done(done_fits, total):
        progress("%s: fit %d/%d done (every ε) after %.1f s", mechanism, done_fits, total, time.monotonic() - t0)

    return sgd_figures.run_job(fig, panel, mechanism, df, card, seed, paper, figure, fit_done, split_of)


def plot(summary, fig, unavailable, title, png, svg=None, claims=None) -> None:
    """The kind's default plot: one panel per dataset, the metric against ``x`` (ε by default)."""
    from ldprepro.experiments.mean_figures import plot_mean_figure

    plot_mean_figure(summary, fig, unavailable, title, png, svg, claims=claims)
