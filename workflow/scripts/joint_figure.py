"""Aggregate one paper-004 figure, judge the paper's claims, draw it (one panel per f)."""
from ldprepro.experiments.joint import avd_claims, plot_figure, time_claims
from ldprepro.frequency import rappor_privacy
from ldprepro.io import write_parquet
from ldprepro.results import KEY_COLUMNS, aggregate, claims_frame, read_results

p = snakemake.params
exp = p.exp
title = exp["title"].format(n=p.figure[3:]) + (" — estimation time vs k" if p.kind == "time" else " — AVD vs k")
raw = read_results(snakemake.input.results)
summary = aggregate(raw) if len(raw) else raw.reindex(columns=KEY_COLUMNS)
write_parquet(summary, snakemake.output.summary)
if len(raw):
    claims = time_claims(summary, p.figure) if p.kind == "time" else avd_claims(summary, p.figure)
else:
    claims = [{"paper": "lremh", "figure": p.figure, "claim": "(every claim of this figure)", "verdict": "not testable",
               "evidence": "the data cannot be obtained here: " + "; ".join(f"{k}: {v}" for k, v in dict(p.unavailable).items())}]
write_parquet(claims_frame(claims), snakemake.output.claims)
d = 16 if exp["dataset"] == "nltcs" else 15
privacy = {}
for f in exp["f"]:
    pr = rappor_privacy(float(f), exp["p"], exp["q"], d)
    privacy[float(f)] = (f"ε₁={pr['permanent_eps_record']:.3g}, ε₂ printed={pr['instantaneous_eps_per_attribute']:.3g}, "
                         f"d·ε₂={pr['instantaneous_eps_record']:.3g}")
plot_figure(summary, p.kind, title, dict(p.unavailable), snakemake.output.png, snakemake.output.svg, claims=claims,
            f_values=[float(f) for f in exp["f"]], privacy=privacy)
