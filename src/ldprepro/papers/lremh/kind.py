"""Kind ``joint_distribution`` (ldprepro.experiments.kinds.PAPER_KINDS, shape ``experiment``): paper
004's experiments (config section ``lremh:``, docs/papers/lremh.md). One job per experiment (dataset)
runs every run × f × k × subset × method on the same reports, so the timings of a figure come from one
process on one machine, and writes the files of the two figures it feeds: the ``time`` figure's
(cost_ops and lasso_epochs, which decide Figs. 1-2, and CPU time, drawn only) and the ``avd``
figure's (AVD, iterations, candidates, pruning). Each figure is rendered on its own: aggregated, its
claims decided (ldprepro.papers.lremh.claims), drawn with one panel per f; a time figure also writes
the rank agreement of the cost with CPU time (ldprepro.papers.lremh.agreement).
"""

from __future__ import annotations

from pathlib import Path

from ldprepro.data.transform import load
from ldprepro.papers.lremh import experiment


def run_experiment(params, input, output, progress) -> None:
    """One experiment (``params.exp``, ``params.seed``) on its dataset (``input.parquet``), its rows
    written to ``output.time`` and ``output.avd`` (one file per method each)."""
    exp = params.exp
    df, card = load(exp["dataset"], root=Path(input.parquet).parent)
    codes, sizes, names = experiment.dataset_codes(exp["dataset"], df, card)
    progress(f"{exp['dataset']}: {codes.shape[0]} records, attributes {list(zip(names, sizes))}")
    time_rows, rows = experiment.run_experiment(exp, codes, sizes, params.seed, log=progress)
    experiment.write_job_results(exp, time_rows, rows, {"time": output.time, "avd": output.avd})


def render(params, input, output) -> None:
    """One figure (``params.figure``, its ``role``: time or avd) of an experiment (``params.exp``) from
    ``input.results`` (none when its dataset is ``params.unavailable``): summary, claims (decided on the
    machine-independent cost, never on the times), the time figure's cost-time agreement, the figure,
    its caption and forest plot."""
    import json

    from ldprepro.claims.tables import write_claims
    from ldprepro.domain.frequency import rappor_privacy
    from ldprepro.papers.lremh.agreement import cost_time_agreement
    from ldprepro.papers.lremh.claims import DATASET_LABELS, figure_tables
    from ldprepro.papers.lremh.plotting import plot_figure
    from ldprepro.pipeline.io import atomic_write_text, write_parquet
    from ldprepro.report.figure_report import write_figure_report

    exp, role = params.exp, params.role
    title = exp["title"].format(n=params.figure[3:]) + (
        " — estimation time and cost vs k" if role == "time" else " — AVD vs k"
    )
    raw, summary, claims, d = figure_tables(input.results, params.figure, exp, dict(params.unavailable))
    write_parquet(summary, output.summary)
    write_claims(claims, output.claims, output.claim_points)
    if role == "time":  # how the cost ranks the estimates against CPU time (measured: machine-dependent)
        agreement = cost_time_agreement(raw, params.figure, DATASET_LABELS.get(exp["dataset"], exp["dataset"]))
        atomic_write_text(output.agreement, json.dumps(agreement, indent=1, ensure_ascii=False) + "\n")
    privacy = {}
    for f in exp["f"] if d else []:
        pr = rappor_privacy(float(f), exp["p"], exp["q"], d)
        privacy[float(f)] = (
            f"ε₁={pr['permanent_eps_record']:.3g}, ε₂ printed={pr['instantaneous_eps_per_attribute']:.3g}, "
            f"d·ε₂={pr['instantaneous_eps_record']:.3g}"
        )
    # under the figure: each claim's verdict with its test and effect (the full evidence is in claims.parquet)
    shown = [
        {
            "claim": r.claim,
            "verdict": r.verdict,
            "evidence": f"{r.test}; effect {r.effect:.3g} [{r.ci_low:.3g}, {r.ci_high:.3g}]"
            + (f", p_holm = {r.p_holm:.2g}" if r.p_holm == r.p_holm else ""),
        }
        for r in claims.itertuples()
    ]
    plot_figure(
        summary,
        role,
        title,
        dict(params.unavailable),
        output.png,
        output.svg,
        claims=shown,
        f_values=[float(f) for f in exp["f"]],
        privacy=privacy,
    )
    write_figure_report(output, params, input.report_prose)  # its caption and forest plot
