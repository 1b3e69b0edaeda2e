"""What every job's set-up (``ldprepro.pipeline.jobsetup.start``) guards (issue 29): a job whose
code fingerprint includes the plugins loads them and has each plugin mechanism it builds verified
(strict: an unverifiable law stops it, naming the mechanism; the audit and the benchmark report
it instead); a data job neither loads nor runs them. Each case runs a fake job in a subprocess
(the set-up changes the process's logging, stdout and signal handlers)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PLUGINS = REPO / "tests" / "plugins"

JOB = """
import sys
from types import SimpleNamespace
import ldprepro.domain.mechanisms.law_check  # numpy, scipy: imported before the clock starts (a test)
from ldprepro.pipeline import jobsetup
rule, code, plugin, log, runtime = sys.argv[1:6]
smk = SimpleNamespace(
    threads=1, rule=rule, wildcards={}, log=[log], config={"mechanism_plugins": [plugin]},
    params=SimpleNamespace(code=code), resources=SimpleNamespace(runtime=float(runtime) if runtime else None),
)
jobsetup.start(smk)
from ldprepro.domain.mechanisms import MECHANISMS, get_mechanism
print("registered:", ",".join(MECHANISMS))
mech = get_mechanism(sys.argv[6], 1.0)
import numpy as np
print("ran:", mech.perturb(np.zeros(10), np.random.default_rng(0)).shape)
"""


def fake_job(tmp_path: Path, rule: str, code: str, plugin: Path, mechanism: str, runtime: str = ""):
    log = tmp_path / f"{rule}.log"
    proc = subprocess.run(
        [sys.executable, "-c", JOB, rule, code, str(plugin), str(log), runtime, mechanism],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
        timeout=120,
    )
    return proc, proc.stdout + proc.stderr, log.read_text() if log.exists() else ""


def test_an_experiment_job_refuses_a_plugin_whose_law_is_unverifiable(tmp_path):
    proc, out, log = fake_job(tmp_path, "figure_job", "abc+plugins:123", PLUGINS / "no_noise.py", "no_noise")
    assert proc.returncode != 0 and "ran:" not in out
    message = "mechanism 'no_noise' (mechanism_plugins) at ε = 1: its declared law cannot be verified: declares no"
    assert message in out and message in log
    assert "check_mechanism" in out  # what to do


def test_the_benchmark_job_runs_it_and_logs_why_it_cannot_be_best(tmp_path):
    proc, out, log = fake_job(
        tmp_path, "benchmark_job_mean_adult", "abc+plugins:123", PLUGINS / "no_noise.py", "no_noise"
    )
    assert proc.returncode == 0, out[-2000:]
    assert "ran: (10,)" in out and "plugin mechanism 'no_noise' at ε = 1: unverifiable law: declares no" in log


def test_a_job_stops_on_nan_output_of_a_plugin_naming_it(tmp_path):
    proc, out, _ = fake_job(
        tmp_path, "benchmark_job_mean_adult", "abc+plugins:123", PLUGINS / "bad_laws.py", "nan_output"
    )
    assert proc.returncode != 0 and "MechanismOutputError: mechanism 'nan_output' (class NanOutput in " in out


def test_a_data_job_does_not_load_the_plugins(tmp_path):
    """Its fingerprint leaves the plugins out (common.smk ``code(..., plugins=False)``), so it must
    not run their code either: a plugin that fails in jobs cannot fail (and delete) a download."""
    proc, out, _ = fake_job(tmp_path, "data_fetch", "abc", PLUGINS / "fails_in_jobs.py", "laplace")
    assert proc.returncode == 0, out[-2000:]
    assert "registered: laplace," in out and "needs_fancy_dependency" not in out


def test_a_job_past_its_runtime_is_stopped_naming_the_mechanism_that_hung(tmp_path):
    """Issue 29.5: a plugin whose perturb never returns used to hang its job with no limit. The
    job's `runtime` resource (here 0.03 min; Snakemake passes whole minutes) now stops it, and the
    console and the job log say which mechanism was running and how to raise the limit."""
    import time

    t0 = time.monotonic()
    proc, out, log = fake_job(tmp_path, "figure_job", "abc+plugins:1", PLUGINS / "hangs.py", "hangs", runtime="0.03")
    assert time.monotonic() - t0 < 60
    assert proc.returncode != 0
    message = (
        "figure_job: stopped after its wall-time limit of 0.09 min (3 × its runtime resource of 0.03 min) while running "
        "mechanism 'hangs' (class Hangs in "
    )
    assert message in out and message in log, out[-2000:]
    assert "hangs.py) at ε = 1, in _perturb_block()" in out
    assert "snakemake --set-resources figure_job:runtime=<minutes>" in out
