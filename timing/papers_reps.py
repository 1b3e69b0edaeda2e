"""What the offline run's extra repetitions cost (issue 27; not a test).

Some figures run more repetitions than their paper: ``test_reps`` (HierA Figs. 1–2, DCT Fig. 2)
and ``claim_reps`` (BSHP Figs. 1–5) size the claims' statistical tests (their power is declared in
``config.yaml`` beside each); the paper's ``reps`` draw the plotted curve. This module prices them
from one run's job logs: a compute job of such a figure (its panel jobs, not its render job) spends
its work — its CPU after start-up (``setup_cpu_s``) — on its repetitions, so at the paper's
repetitions it would spend work × reps / run_reps. The result is a projection from measured job
times, not a measurement, and says so wherever it is printed (``figure_times.md``, ``targets.md``).

Run as a script, it writes the config overlay that measures the same instead: every such figure's
``test_reps``/``claim_reps`` set to its paper's ``reps`` (``snakemake --configfile config.yaml
OVERLAY``; targets.py reads that run's record, ``run_papers_reps.json``, when there is one)::

    .venv/bin/python -m timing.papers_reps --overlay /tmp/papers_reps.yaml
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd
import yaml

from ldprepro.pipeline import resources as R
from ldprepro.pipeline.repetitions import extra_key, repetitions_run


def extra_repetitions(config: dict) -> list[dict]:
    """(paper, figure, reps, run_reps, key) of every figure whose jobs run more repetitions than its
    paper's ``reps`` (the rule: ``ldprepro.pipeline.repetitions``)."""
    out = []
    for paper, section in config.items():
        if not isinstance(section, dict):
            continue
        for figure, entry in section.items():
            if not (isinstance(entry, dict) and figure.startswith("fig") and "reps" in entry):
                continue
            key = extra_key(entry)
            if key is not None:
                out.append(
                    {
                        "paper": paper,
                        "figure": figure,
                        "reps": int(entry["reps"]),
                        "run_reps": repetitions_run(entry),
                        "key": key,
                    }
                )
    return out


def computes(rule: str) -> bool:
    """Whether a rule's jobs compute (a kind's figure jobs, BSHP's city jobs, ...), by the family the
    workflow sizes them as (ldprepro.pipeline.resources.rule_family): not a render or table rule."""
    return R.runs_a_kind(rule) or R.rule_family(rule) not in (None, "render", "tables")


def price(config: dict, job_logs: pd.DataFrame) -> dict:
    """The extra repetitions' CPU in one run: per figure, its compute jobs (logs under
    ``<paper>/<figure>/`` whose rule is not a render rule), their work and the part of it the extra
    repetitions take; in all, ``saved_cpu_s``."""
    rows = []
    for fig in extra_repetitions(config):
        prefix = f"{fig['paper']}/{fig['figure']}/"
        jobs = job_logs[job_logs["log"].str.startswith(prefix) & job_logs["rule"].map(computes)]
        if jobs.empty:
            continue
        work = float((jobs["cpu_s"] - jobs["setup_cpu_s"].fillna(0.0)).sum())
        rows.append(
            {
                **fig,
                "jobs": len(jobs),
                "work_cpu_s": work,
                "extra_cpu_s": work * (1.0 - fig["reps"] / fig["run_reps"]),
            }
        )
    return {"figures": rows, "saved_cpu_s": sum(r["extra_cpu_s"] for r in rows)}


def markdown(priced: dict, run_cpu_s: float | None, cores: int | None) -> str:
    """A paragraph for figure_times.md."""
    if not priced or not priced["figures"]:
        return ""
    parts = [
        f"{r['paper']} {r['figure']} ({r['key']} {r['run_reps']} vs the paper's {r['reps']}: "
        f"{r['extra_cpu_s']:.1f} of {r['work_cpu_s']:.1f} s over {r['jobs']} job{'s' if r['jobs'] != 1 else ''})"
        for r in priced["figures"]
    ]
    text = (
        "\n## The extra repetitions (projection)\n\n"
        "Figures that run more repetitions than their paper, for their claims' tests, and the CPU "
        "those extra repetitions take in this run, assuming a compute job's work (its CPU after "
        f"start-up) is proportional to its repetitions (timing/papers_reps.py): {'; '.join(parts)}. "
        f"In all **{priced['saved_cpu_s']:.1f} s**"
    )
    if run_cpu_s and cores:
        left = run_cpu_s - priced["saved_cpu_s"]
        text += (
            f": at the papers' repetitions this run would take about {left:.1f} s CPU, "
            f"at least {left / cores / 60:.1f} min on {cores} cores (not measured)"
        )
    return text + ".\n"


def overlay(config: dict) -> dict:
    """The config overlay that runs every figure at its paper's repetitions: {paper: {figure: {key:
    reps}}} for each figure whose jobs run more (Snakemake merges it into config.yaml)."""
    out: dict = {}
    for fig in extra_repetitions(config):
        out.setdefault(fig["paper"], {})[fig["figure"]] = {fig["key"]: fig["reps"]}
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description="Write the config overlay that runs the papers' repetitions.")
    ap.add_argument("--config", default=Path(__file__).resolve().parent.parent / "config.yaml", type=Path)
    ap.add_argument("--overlay", required=True, type=Path, help="where to write the overlay (YAML)")
    args = ap.parse_args(argv)
    data = overlay(yaml.safe_load(args.config.read_text()))
    if not data:
        sys.exit(f"{args.config}: no figure runs more repetitions than its paper; nothing to write")
    args.overlay.write_text(
        "# generated by timing/papers_reps.py: every figure at its paper's repetitions\n"
        + yaml.safe_dump(data, sort_keys=True)
    )
    print(f"{args.overlay}: {sum(len(v) for v in data.values())} figures at their papers' repetitions")


if __name__ == "__main__":
    main()
