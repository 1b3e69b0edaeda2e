"""Aggregate one paper-004 figure, judge the paper's claims (ldprepro.papers.lremh.claims), draw it (one panel per f)."""

from ldprepro.pipeline.jobsetup import done, ready, start

start(snakemake)  # the job's log, warnings and threads, before the heavy imports

import json

from ldprepro.claims.tables import write_claims
from ldprepro.domain.frequency import rappor_privacy
from ldprepro.papers.lremh.agreement import cost_time_agreement
from ldprepro.papers.lremh.claims import DATASET_LABELS, figure_tables
from ldprepro.papers.lremh.plotting import plot_figure
from ldprepro.pipeline.io import atomic_write_text, write_parquet
from ldprepro.report.figure_report import write_figure_report

ready()

p = snakemake.params
exp = p.exp
title = exp["title"].format(n=p.figure[3:]) + (
    " — estimation time and cost vs k" if p.kind == "time" else " — AVD vs k"
)
# the claims depend only on config and seed: the efficiency claims read the cost rows, never the times
raw, summary, claims, d = figure_tables(snakemake.input.results, p.figure, exp, dict(p.unavailable))
write_parquet(summary, snakemake.output.summary)
write_claims(claims, snakemake.output.claims, snakemake.output.claim_points)
if p.kind == "time":  # how the cost ranks the estimates against CPU time (measured: machine-dependent)
    agreement = cost_time_agreement(raw, p.figure, DATASET_LABELS.get(exp["dataset"], exp["dataset"]))
    atomic_write_text(snakemake.output.agreement, json.dumps(agreement, indent=1, ensure_ascii=False) + "\n")
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
    p.kind,
    title,
    dict(p.unavailable),
    snakemake.output.png,
    snakemake.output.svg,
    claims=shown,
    f_values=[float(f) for f in exp["f"]],
    privacy=privacy,
)
write_figure_report(snakemake.output, snakemake.params, snakemake.input.report_prose)  # its caption and forest plot
done("lremh_figure: " + ", ".join(map(str, snakemake.output)))
