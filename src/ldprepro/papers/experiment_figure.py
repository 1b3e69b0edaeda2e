"""Render one experiment figure from its jobs' result files: aggregate the curve, judge the paper's
claims, draw the figure (partial panels allowed; a panel whose dataset is unavailable says so) and
write its caption and forest plot, whatever the figure's kind (ldprepro.experiments.kinds).
workflow/scripts/experiment_figure.py runs it for one figure, or
for every figure with nothing to compute here, one after another (rule figures_not_available).

The curve is drawn from the paper's repetitions (``reps``); the claims are tested on every
repetition run (``test_reps`` adds ours, for power)."""

from __future__ import annotations

from ldprepro.claims.tables import write_claims
from ldprepro.experiments import kinds
from ldprepro.papers import decide_figure
from ldprepro.pipeline.io import write_parquet
from ldprepro.pipeline.results import KEY_COLUMNS, aggregate
from ldprepro.pipeline.verify import job_results
from ldprepro.report.figure_report import write_figure_report


def _cards(paths) -> dict:
    """{dataset: its data card} of the card files ``paths`` (``data/processed/<dataset>.json``)."""
    from pathlib import Path

    from ldprepro.pipeline.verify import read_json

    return {Path(p).stem: read_json(p) for p in paths}


def render_experiment_figure(params, output, jobs, report_prose, cards=None) -> None:
    """``params``: the figure's ``paper``, ``figure``, ``fig`` (its config entry), ``unavailable``
    ({dataset: reason}) and report parameters; ``output``: its ``summary``, ``claims``,
    ``claim_points``, ``png``, ``svg``, ``caption`` and ``forest`` paths (anything with these
    attributes, as Snakemake's params and outputs); ``jobs``: its result files, checked against
    the configured grid; ``report_prose``: the caption's hand-written prose file; ``cards``: the
    panels' data card files, for a kind whose plot reads them (``render_cards``)."""
    fig = params.fig
    kind = kinds.load(fig["kind"])  # its grid and its default plot (ldprepro.experiments.kinds)
    raw = job_results(jobs, kind.grid(fig))  # the configured grid, exactly, or a named error
    if hasattr(kind, "drawn_rows"):  # the kind's own (histogram: the rows not marked extra_rep)
        drawn = kind.drawn_rows(raw, fig)
    else:
        paper_reps = int(fig["reps"]) if "reps" in fig else None
        drawn = raw[raw["rep"] < paper_reps] if paper_reps is not None and len(raw) else raw
    summary = aggregate(drawn) if len(drawn) else raw.reindex(columns=KEY_COLUMNS)
    write_parquet(summary, output.summary)
    # the rows the claim language reads, when the kind says (histogram: each collector's curve over every consumer)
    rows_for = getattr(kind, "claim_rows", None)
    claim_rows = rows_for(raw, fig) if rows_for is not None else None
    claims = decide_figure(params.paper, params.figure, raw, fig, dict(params.unavailable), claim_rows)
    write_claims(claims, output.claims, output.claim_points)
    kind.plot(
        summary,
        fig,
        dict(params.unavailable),
        fig.get("title", f"{params.paper} {params.figure}"),
        output.png,
        output.svg,
        claims=claims,
        **({"cards": _cards(cards or [])} if kinds.get_kind(fig["kind"]).render_cards else {}),
    )
    write_figure_report(output, params, report_prose)  # its caption and forest plot
