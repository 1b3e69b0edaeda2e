"""Kind ``variance_curve`` (ldprepro.experiments.kinds.PAPER_KINDS, shape ``mechanisms``): Zhao et
al. Fig. 1 (paper 002, docs/papers/ldpfl.md §0), the closed-form worst-case noise variance of every
mechanism of ``ldpfl.fig1`` on the fine ε grid ``eps_grid``, with its Monte-Carlo check at ``mc_eps``
(``ldprepro.papers.ldpfl.mechanism_figures.fig1_rows``), one data-free job writing a file per mechanism.

Its rows keep the figure's own layout, not the contract's ``<metric>_theory`` convention: the closed
form is the panel ``dataset = "analytic"`` (rep 0, one row per ε of the fine grid) and the
simulation the panel ``monte_carlo``. The curve is drawn on ε where nothing is simulated, so its
rows are no expectation of a measured row at the same point; the paper's claims are decided exactly
on the ``analytic`` rows (``ldprepro.papers.ldpfl.mechanism_claims``). A new worst-case-variance
figure is of the general kind ``variance`` (ldprepro.experiments.kinds.variance).
"""

from __future__ import annotations

import numpy as np

from ldprepro.papers.ldpfl.mechanism_figures import fig1_rows
from ldprepro.pipeline.verify import Grid


def eps_grid(fig: dict) -> np.ndarray:
    """The closed form's ε: ``eps_grid.start`` to ``stop`` by ``step`` (both ends included)."""
    g = fig["eps_grid"]
    return np.round(np.arange(g["start"], g["stop"] + g["step"] / 2, g["step"]), 10)


def run_job(fig, panel, mechanism, df, card, seed, paper, figure, progress, split_of=None) -> list[dict]:
    """One mechanism's rows: the closed form on the ε grid, then the Monte-Carlo repetitions (each
    mechanism's stream is keyed by its name, so one job can draw them all)."""
    rows = fig1_rows(mechanism, eps_grid(fig), fig["mc_eps"], fig["mc_users"], fig["mc_reps"], seed)
    progress("%s: %d rows", mechanism, len(rows))
    return rows


def grid(fig: dict) -> Grid:
    """The closed form on ``eps_grid`` (one row per ε) and the Monte-Carlo runs at ``mc_eps``
    (``mc_reps`` each); one file per mechanism."""
    g = fig["eps_grid"]
    steps = int(round((g["stop"] - g["start"]) / g["step"]))
    points = [round(g["start"] + i * g["step"], 10) for i in range(steps + 1)]
    return Grid(
        eps={"analytic": points, "monte_carlo": list(fig["mc_eps"])},
        reps={"analytic": 1, "monte_carlo": int(fig["mc_reps"])},
        named="mechanism",
    )


def render(params, input, output) -> None:
    """Aggregate the figure, decide its claims (claims.yaml [fig1]) and draw it, with its caption and
    forest plot. ``params``: the rule's (``fig``, the report's); ``input.jobs``: the result files."""
    from ldprepro.claims.tables import write_claims
    from ldprepro.papers.ldpfl.mechanism_claims import figure_claims
    from ldprepro.papers.ldpfl.mechanism_figures import plot_fig1
    from ldprepro.pipeline.io import write_parquet
    from ldprepro.pipeline.results import aggregate
    from ldprepro.pipeline.verify import job_results
    from ldprepro.report.figure_report import write_figure_report

    raw = job_results(input.jobs, grid(params.fig))  # the configured grid, or a named error
    summary = aggregate(raw)
    write_parquet(summary, output.summary)
    claims = figure_claims(raw, params.figure)
    write_claims(claims, output.claims, output.claim_points)
    plot_fig1(summary, output.png, output.svg, claims=claims)
    write_figure_report(output, params, input.report_prose)  # its caption and forest plot
