"""Kind ``output_density`` (ldprepro.experiments.kinds.PAPER_KINDS, shape ``in_render``): Zhao et al.
Fig. 4 (paper 002), a piecewise mechanism's three-piece output density at a few inputs: the exact pdf
beside a histogram of ``perturb``'s outputs (``ldprepro.papers.ldpfl.mechanism_figures.fig4_rows``),
computed, decided and drawn by one job (seconds: a second process would cost more than it saves).
"""

from __future__ import annotations


def render(params, input, output) -> None:
    """The figure's rows (``output.results``), its claims (claims.yaml [fig4]), the figure, its caption
    and forest plot. ``params``: the rule's (``fig``, ``seed``, the report's)."""
    from ldprepro.claims.tables import write_claims
    from ldprepro.papers.ldpfl.mechanism_claims import figure_claims
    from ldprepro.papers.ldpfl.mechanism_figures import fig4_rows, plot_fig4
    from ldprepro.pipeline.results import tidy_frame, write_results
    from ldprepro.report.figure_report import write_figure_report

    fig = params.fig
    rows = fig4_rows(fig["eps"], fig["inputs"], fig["users"], fig["bins"], params.seed, mechanism=fig["mechanism"])
    df = tidy_frame(rows)
    write_results(df, output.results)
    claims = figure_claims(df, params.figure, fig)
    write_claims(claims, output.claims, output.claim_points)
    plot_fig4(df, fig["eps"], output.png, output.svg, claims=claims)
    write_figure_report(output, params, input.report_prose)  # its caption and forest plot
