"""Paper 004's verdicts are reproducible on rerun (issue 26): both LREMH experiments, run twice at
smoke scale with the same seed through the job's and the figure's code (``run_experiment`` →
``write_job_results`` → ``figure_tables`` → ``write_claims``, as the kind joint_distribution's
run_experiment and render call them, ldprepro.papers.lremh.kind), give identical claims tables and byte-identical per-point evidence
(``claim_points.parquet``) for Figs. 1–4, although the CPU times they measure differ between the runs. With the efficiency claims decided on measured time, the
effects and p-values of Figs. 1–2's rows changed from one run to the next.

One field may differ, by design (issue 51.4): the robustness column of a time claim gives the verdict of
the alternative reading "time = CPU time", which is measured. Every other column, and the robustness
column with that reading's verdict taken out, must be identical; AVD figures' tables (no CPU-time
reading) byte for byte."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from smoke_checks import CPU_READING, without_cpu_reading

from ldprepro.claims.tables import write_claims
from ldprepro.papers.lremh.claims import figure_tables
from ldprepro.papers.lremh.cost import COST_METRIC
from ldprepro.papers.lremh.experiment import experiment_outputs, experiment_params, run_experiment, write_job_results
from ldprepro.pipeline.seeding import rng_for

REPO = Path(__file__).resolve().parents[1]
CONFIG = yaml.safe_load((REPO / "config.yaml").read_text())
#: record counts and domain sizes shaped like the paper's data (NLTCS: 21,574 × 16 binary; Adult:
#: 45,222 records, the 15 domain sizes of docs/papers/lremh.md §5.1); the records are synthetic so that the test needs
#: no data files
SHAPES = {
    "nltcs": (21_574, [2] * 16),
    "adult": (45_222, [16, 7, 16, 16, 16, 7, 14, 6, 5, 2, 16, 16, 16, 41, 2]),
}


def synthetic_codes(name: str) -> tuple[np.ndarray, list[int]]:
    """Correlated, skewed records: a latent class per record shifts every attribute's value."""
    n, sizes = SHAPES[name]
    rng = rng_for(CONFIG["seed"], {"test": "lremh_rerun", "dataset": name})
    latent = rng.integers(0, 3, n)
    cols = [(latent + np.minimum(rng.geometric(0.6, n) - 1, s - 1)) % s for s in sizes]
    return np.column_stack(cols).astype(np.int64), sizes


def build(name: str, workdir: Path) -> dict[str, Path]:
    """One smoke-scale experiment through the job's and the figure's code; {figure: claims.parquet}
    (its claim_points.parquet beside it)."""
    exp = experiment_params(CONFIG["lremh"], name, "smoke")
    codes, sizes = synthetic_codes(name)
    time_rows, rows = run_experiment(exp, codes, sizes, CONFIG["seed"], log=lambda *_: None)
    outputs = {kind: [workdir / p for p in experiment_outputs(exp, kind)] for kind in ("time", "avd")}
    write_job_results(exp, time_rows, rows, outputs)
    claims = {}
    for figure, kind in ((exp["time_figure"], "time"), (exp["avd_figure"], "avd")):
        _, _, table, _ = figure_tables(outputs[kind], figure, exp, {})
        claims[figure] = workdir / f"results/lremh/{figure}/claims.parquet"
        write_claims(table, claims[figure], claims[figure].with_name("claim_points.parquet"))
    return claims


def test_without_cpu_reading():
    cpu = f"{CPU_READING} of the call (time_s, measured) → holds"
    ctl = "EM's stop read as convergence (the control) → inconclusive"
    assert without_cpu_reading(f"depends on: {cpu.replace('holds', 'inconclusive')} (as declared: holds)") == "robust"
    assert without_cpu_reading(f"robust (same verdict under: {cpu})") == "robust"
    assert without_cpu_reading(f"depends on: {ctl} (as declared: holds); same verdict under: {cpu}") == (
        f"depends on: {ctl} (as declared: holds)"
    )
    assert without_cpu_reading(f"depends on: {ctl}; {cpu} (as declared: x)") == f"depends on: {ctl} (as declared: x)"
    assert without_cpu_reading("robust") == "robust"


@pytest.mark.parametrize("name", ["nltcs", "adult"])
def test_lremh_claims_are_identical_on_rerun(name, tmp_path):
    first = build(name, tmp_path / "first")
    second = build(name, tmp_path / "second")
    exp = experiment_params(CONFIG["lremh"], name, "smoke")
    for figure in first:
        a, b = pd.read_parquet(first[figure]), pd.read_parquet(second[figure])
        if figure == exp["time_figure"]:
            assert a["robustness"].str.contains(CPU_READING).any()  # the reading is shown
            a["robustness"], b["robustness"] = (t["robustness"].map(without_cpu_reading) for t in (a, b))
        assert a.equals(b), (figure, a.compare(b) if a.shape == b.shape else (a.shape, b.shape))
        paths = [first[figure].with_name("claim_points.parquet")]
        paths += [first[figure]] if figure == exp["avd_figure"] else []
        for path in paths:
            twin = second[figure].with_name(path.name)
            assert path.read_bytes() == twin.read_bytes(), (figure, path.name)
    t1, t2 = (
        figure_tables([run / p for p in experiment_outputs(exp, "time")], exp["time_figure"], exp, {})[0]
        for run in (tmp_path / "first", tmp_path / "second")
    )
    cost = [t[t["metric"] == COST_METRIC].reset_index(drop=True) for t in (t1, t2)]
    # the cost rows are a function of config and seed; every estimate has one
    assert len(cost[0]) and cost[0].equals(cost[1])
    assert len(cost[0]) == (t1["metric"] == "time_s").sum()
    # the efficiency rows are decided, not merely present
    fig = pd.read_parquet(first[exp["time_figure"]])
    assert (fig["verdict"] != "not testable").all(), fig[["claim", "verdict", "evidence"]]
    points = pd.read_parquet(first[exp["time_figure"]].with_name("claim_points.parquet"))
    assert points["claim_id"].nunique() == len(fig)
