"""The README's performance block, generated from the benchmark outputs (not a test).

    .venv/bin/python -m timing.readme_block [--results timing/results.json]
        [--figures timing/figure_times.json] [--ipums timing/ipums_results.json]
        [--targets timing/targets.json] [--readme README.md]

Reads ``results.json`` (timing/bench.py), ``figure_times.json`` (timing/figure_times.py),
``ipums_results.json`` (timing/ipums_run.py) and ``targets.json`` (timing/targets.py; run it
after the others) and splices a short summary between ``<!-- performance:start -->`` and ``<!-- performance:end -->``
in the README. Every number comes from those files; unknown keys are ignored.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ldprepro.report.tables import splice_readme

START, END = "<!-- performance:start -->", "<!-- performance:end -->"
TARGET_RATE = 0.5  # issue 16: every 1-D mechanism at ≥ 0.5× the raw uniform rate


def _x(v: float) -> str:
    return f"{v:,.0f}×" if v >= 100 else f"{v:.2g}×" if v < 10 else f"{v:.0f}×"


def _span(rows, key) -> str:
    lo, hi = min(rows, key=lambda m: m[key]), max(rows, key=lambda m: m[key])
    return f"{lo[key]:.2f}× ({lo['what']}) to {hi[key]:.2f}× ({hi['what']})"


def _mechanism_line(n: int, mech: list[dict]) -> str:
    """The mechanisms' rates: fused, numpy (same outputs) and, for any below the target, how
    fast the random numbers it must draw can be drawn at all."""
    plain = [m for m in mech if "discretised" not in m["what"]]
    disc = [m for m in mech if "discretised" in m["what"]]
    text = f"- **1-D mechanisms** at n = {n:,}: the {len(plain)} mechanisms run at {_span(plain, 'ratio_to_reference')}"
    text += " the rate of raw `Generator.random`"
    if all("numpy_ratio_to_reference" in m for m in plain):
        text += f" (their numpy samplers, same outputs: {_span(plain, 'numpy_ratio_to_reference')})"
    below = [m for m in plain if m["ratio_to_reference"] < TARGET_RATE]
    text += f"; {len(below)} of {len(plain)} below the {TARGET_RATE}× target"
    for m in below:
        if "draws_cpu_s" in m:
            own = m["cpu_s"] * m["ratio_to_reference"] / m["draws_cpu_s"]  # reference / own draws
            text += (
                f" ({m['what']}: the random numbers it must draw alone run at {own:.2f}× the uniform rate; "
                f"it reaches {m['ratio_to_own_draws']:.2f}× of that)"
            )
    text += "."
    if disc:
        text += (
            f" Discretised (Algorithm 5 draws a second uniform per rounded output): {_span(disc, 'ratio_to_reference')}"
        )
        if all("ratio_to_own_draws" in m for m in disc):
            text += f", {_span(disc, 'ratio_to_own_draws')} the rate of their own draws"
        text += "."
    return text


def block(
    results: dict,
    figures: dict | None,
    ipums: dict | None = None,
    targets: list | None = None,
    everything: dict | None = None,
) -> str:
    lines = []
    mech = [m for m in results.get("mechanisms", []) if "reference" not in m["what"]]
    if mech:
        lines.append(_mechanism_line(results["meta"]["n_mech"], mech))
    freq = results.get("frequency", [])
    if freq:
        peers = sorted({f.get("peer", "multi-freq-ldpy") for f in freq})
        parts = "; ".join(
            f"{peer}: "
            + ", ".join(
                f"{f['what'].split(' perturb')[0]} {_x(f['speedup_vs_warm_peer'])}"
                for f in freq
                if f.get("peer", "multi-freq-ldpy") == peer
            )
            for peer in peers
        )
        lines.append(f"- **Frequency oracles** against the warmed-up peers (CPU per user, times faster): {parts}.")
    suff = results.get("sufficient", [])
    if suff:
        parts = "; ".join(f"{s['what']}: {_x(s['speedup'])}" for s in suff)
        lines.append(f"- **Exact sufficient statistics** instead of per-user draws (same law): {parts}.")
    jobs = [j for j in results.get("jobs", []) if j.get("after_over_floor")]
    if jobs:
        parts = "; ".join(
            f"{j['what']}: {_x(j['after_over_floor'])} its random-number floor"
            + (
                f", {j['after_over_data_pass']:.1f}× one read of its training rows in storage order"
                if "after_over_data_pass" in j
                else ""
            )
            for j in jobs
        )
        lines.append(f"- **Jobs against their floors**: {parts}.")
    if figures:
        t = figures["totals"]
        worst = max((f for f in figures["figures"] if f.get("cpu_over_floor")), key=lambda f: f["cpu_s"], default=None)
        text = (
            f"- **A paper-scale run** ({t['jobs']} jobs): {t['cpu_s'] / 60:.1f} min CPU in total "
            f"(≥ {t['cpu_s'] / figures['cpus'] / 60:.1f} min on {figures['cpus']} cores)"
        )
        if "before_cpu_s" in t and t.get("before_machine", figures.get("machine")) != figures.get("machine"):
            # another processor: the change measures the hardware as much as the code
            text += f" ({t['before_cpu_s'] / 60:.1f} min in the previous round, on {t['before_machine']})"
        elif "before_cpu_s" in t:
            text += f", {t['before_cpu_s'] / 60:.1f} min before this round"
            if t.get("before_wall_s") and not t.get("before_cpu_exact"):
                text += (
                    f" (that run's CPU is Snakemake's sampled value, a lower bound; its summed job wall was "
                    f"{t['before_wall_s'] / 60:.0f} min, this run's {t['wall_s'] / 60:.0f} min)"
                )
        if figures.get("measured_at"):
            on = f" on {figures['machine']}" if figures.get("machine") else ""
            text += f" (measured {figures['measured_at'][:10]}{on})"
        run = (figures.get("accounts") or {}).get("totals", {})
        if "run_wall_s" in run:
            text += (
                f"; the whole run (`{run['command']}` from a fresh clone, timing/run_workflow.py): "
                f"{run['run_wall_s'] / 60:.1f} min wall, {run['run_cpu_s'] / 60:.1f} min CPU with Snakemake's own "
                f"process, {run['fixed_share']:.1%} of it fixed cost"
            )
        if worst:
            text += (
                f"; the costliest figure, {worst['paper']}/{worst['figure']}, takes {worst['cpu_s'] / 60:.1f} min CPU, "
                f"{worst['cpu_over_floor']:.1f}× its one-uniform-per-user floor"
            )
        lines.append(text + ".")
    if ipums and "totals" in ipums:
        t, m = ipums["totals"], ipums["meta"]
        full = m["fraction"] == 1
        head = (
            "- **IPUMS-sized** ([timing/ipums_results.md](timing/ipums_results.md); SYNTHETIC data in the "
            + (
                "IPUMS format at the papers' sizes"
                if full
                else f"IPUMS format at {m['fraction']:g} of the papers' sizes"
            )
            + ", every figure with an IPUMS panel): "
        )
        if full:
            lines.append(
                head + f"{t['measured_cpu_s'] / 60:.0f} min CPU measured at the papers' sizes, at least "
                f"{t['projected_hours_on_cores']:.1f} h on {t['cores']} cores; peak RSS {t['peak_rss_mb']:,.0f} MB."
            )
        else:
            lines.append(
                head + f"{t['measured_cpu_s'] / 60:.0f} min CPU measured; projected linearly to the papers' sizes "
                f"{t['projected_cpu_s_full_size'] / 3600:.1f} CPU-hours, about {t['projected_hours_on_cores']:.1f} h on "
                f"{t['cores']} cores (a projection, not a measurement nor a bound); peak RSS {t['peak_rss_mb']:,.0f} MB."
            )
        if m.get("figures_not_run"):
            lines[-1] = lines[-1][:-1] + f"; NOT included (run did not complete): {', '.join(m['figures_not_run'])}."
        if figures and "ipums_panels_projected_cpu_s" in t:
            every = figures["totals"]["cpu_s"] + t["ipums_panels_projected_cpu_s"]
            kind = "measured" if full else "projected"
            missing = m.get("figures_not_run") or []
            lines.append(
                f"- **Every figure of the five papers at paper scale, IPUMS-sized panels included**: the offline "
                f"run's {figures['totals']['cpu_s'] / 60:.0f} min CPU (measured) + the IPUMS panels' "
                f"{t['ipums_panels_projected_cpu_s'] / 60:.0f} min ({kind}) = "
                + ("at least " if missing else "")
                + f"{every / 3600:.1f} CPU-hours, at least {every / figures['cpus'] / 3600:.1f} h on "
                f"{figures['cpus']} cores"
                + (f", WITHOUT the {len(missing)} IPUMS figures not run" if missing else "")
                + ("." if full else " (a projection).")
            )
    whole = (everything or {}).get("meta", {})
    if whole.get("everything") and whole.get("fraction") == 1 and not whole.get("collected"):
        lines.append(
            "- **The whole workflow in one run, IPUMS-sized panels included** "
            "([timing/ipums_everything.md](timing/ipums_everything.md), SYNTHETIC IPUMS-format and WISDM data at "
            f"the papers' sizes): {whole['everything']['wall_s'] / 60:.1f} min wall, "
            f"{whole['everything']['cpu_s'] / 60:.0f} min CPU on {everything['totals']['cores']} cores "
            f"(measured {whole['measured_at'][:10]})."
        )
    if targets:
        met = [t for t in targets if t["met"]]
        lines.append(
            f"- **Targets** ([timing/targets.md](timing/targets.md), with the floor arithmetic for each one not "
            f"met): {len(met)} of {len(targets)} met. "
            + "; ".join(f"{t['target']}: {t['measured']} ({'met' if t['met'] else 'not met'})" for t in targets)
            + "."
        )
    meta = results.get("meta", {})
    head = (
        f"Generated by `timing/readme_block.py` from [timing/results.md](timing/results.md) "
        f"({meta.get('date', '?')[:10]}) and [timing/figure_times.md](timing/figure_times.md); CPU time, "
        "minimum of ≥ 5 repeats after a warm-up, every ratio between quantities measured in the same run."
    )
    return "\n".join([head, "", *lines, ""])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", default="timing/results.json", type=Path)
    ap.add_argument("--figures", default="timing/figure_times.json", type=Path)
    ap.add_argument("--ipums", default="timing/ipums_results.json", type=Path)
    ap.add_argument("--targets", default="timing/targets.json", type=Path)
    ap.add_argument("--everything", default="timing/ipums_everything.json", type=Path)
    ap.add_argument("--readme", default="README.md", type=Path)
    args = ap.parse_args(argv)
    results = json.loads(args.results.read_text())
    figures = json.loads(args.figures.read_text()) if args.figures.exists() else None
    ipums = json.loads(args.ipums.read_text()) if args.ipums.exists() else None
    targets = json.loads(args.targets.read_text()) if args.targets.exists() else None
    everything = json.loads(args.everything.read_text()) if args.everything.exists() else None
    splice_readme(args.readme, block(results, figures, ipums, targets, everything), START, END)


if __name__ == "__main__":
    main()
