"""ldprepro.pipeline.scheduler_wakeups: Snakemake's scheduler keeps one pending wake-up timer."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

from ldprepro.pipeline import scheduler_wakeups

REPO = Path(__file__).resolve().parents[1]


class _Scheduler:
    """The two members of Snakemake's JobScheduler that the wake-up uses."""

    def __init__(self):
        self._open_jobs = threading.Semaphore(0)

    def _schedule_reevalutation(self, delay):  # replaced by coalesce
        raise AssertionError("not replaced")


def test_many_requests_start_one_daemon_timer_that_wakes_the_scheduler_once():
    assert scheduler_wakeups.coalesce(_Scheduler)
    scheduler = _Scheduler()
    for _ in range(50):
        scheduler._schedule_reevalutation(0.2)
    timers = [t for t in threading.enumerate() if t is scheduler._ldprepro_wakeup[0]]
    assert len(timers) == 1 and timers[0].daemon
    timers[0].join(2.0)
    assert scheduler._open_jobs.acquire(blocking=False)
    assert not scheduler._open_jobs.acquire(blocking=False)  # one wake-up, not fifty
    scheduler._schedule_reevalutation(0.05)  # the next request after it fired starts a new one
    assert scheduler._open_jobs.acquire(timeout=2.0)


def test_a_pending_later_wakeup_does_not_hold_back_a_sooner_one():
    assert scheduler_wakeups.coalesce(_Scheduler)
    scheduler = _Scheduler()
    scheduler._schedule_reevalutation(30.0)  # e.g. Snakemake's wait for queue input
    later = scheduler._ldprepro_wakeup[0]
    scheduler._schedule_reevalutation(0.05)  # the rate limiter's wake-up
    assert scheduler._open_jobs.acquire(timeout=2.0)  # woken by the sooner one, long before 30 s
    assert later.is_alive()
    later.cancel()


def test_a_scheduler_without_the_method_is_left_alone():
    class Other:
        pass

    assert not scheduler_wakeups.coalesce(Other)
    assert not hasattr(Other, scheduler_wakeups.METHOD)


def test_the_installed_snakemake_has_the_method_the_workflow_replaces():
    code = (
        "from snakemake.scheduling.job_scheduler import JobScheduler as J; "
        "from ldprepro.pipeline import scheduler_wakeups as s; "
        "assert s.coalesce() and J._schedule_reevalutation is s._schedule_once"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


def test_scheduler_passes_stay_linear_in_the_jobs_and_the_wall_time(tmp_path):
    """Six jobs of 1.5 s on one core: unpatched, every finished job adds a chain of one pass per
    second (28 passes measured); coalesced, about one pass per job and one per second."""
    (tmp_path / "Snakefile").write_text(
        "from ldprepro.pipeline.scheduler_wakeups import coalesce\n"
        "assert coalesce()\n"
        "rule all:\n"
        "    input: expand('out/{i}.txt', i=range(6))\n"
        "rule a:\n"
        "    output: 'out/{i}.txt'\n"
        "    shell: 'sleep 1.5; touch {output}'\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "1", "--verbose"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
    )
    wall = time.monotonic() - t0
    assert proc.returncode == 0, proc.stderr[-2000:]
    passes = len(re.findall("Resources before job selection", proc.stdout + proc.stderr))
    assert 6 <= passes <= 6 + wall + 3, (passes, wall)
