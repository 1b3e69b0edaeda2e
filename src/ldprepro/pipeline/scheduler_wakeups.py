"""One pending wake-up of Snakemake's job scheduler at a time (applied by workflow/rules/common.smk).

Snakemake 9's scheduler loop (``snakemake.scheduling.job_scheduler.JobScheduler.schedule``) ends
every pass by starting a ``threading.Timer`` that wakes it again one timespan of its job-rate
limiter later (``--max-jobs-per-timespan``, default 100/1s). A pass also runs when a job finishes,
and that pass starts a timer of its own, so every finished job adds one more chain of passes per
second for the rest of the run: the passes per second grow with the jobs finished. Each pass
re-evaluates the params and resources of every job that is waiting for a core and runs the job
selector. Measured: 549 passes for 12 jobs of 8 s on one core; Snakemake's own process took 121 CPU-s
of this workflow's paper-scale run at c7bc049 (1,338 s wall), and 8.8 CPU-s with this module
(timing/figure_times.md, fresh clone at d420208).

:func:`coalesce` replaces the method that starts those timers by one that starts a timer only when
no pending one wakes the scheduler as soon. The rate limiter keeps its meaning (a pass at least
once per timespan while one is needed; finished jobs still wake the scheduler themselves), and the
timer is a daemon thread, so the process no longer waits for a last timer after the run's final
job. If Snakemake's scheduler no longer has that method, nothing is changed and :func:`coalesce`
says so.
"""

from __future__ import annotations

import threading
import time

#: the method of Snakemake's JobScheduler that starts a wake-up timer (sic: Snakemake's spelling)
METHOD = "_schedule_reevalutation"


def _schedule_once(scheduler, delay: float) -> None:
    """Start a daemon timer that wakes ``scheduler`` after ``delay`` seconds, unless a pending one
    wakes it by then (a pending later one, e.g. a queue-input wait, does not hold back a sooner
    wake-up)."""
    deadline = time.monotonic() + delay
    pending = getattr(scheduler, "_ldprepro_wakeup", None)
    if pending is not None and pending[0].is_alive() and pending[1] <= deadline:
        return
    timer = threading.Timer(delay, scheduler._open_jobs.release)
    timer.daemon = True
    scheduler._ldprepro_wakeup = (timer, deadline)
    timer.start()


def coalesce(scheduler_class=None) -> bool:
    """Make ``scheduler_class`` (default: Snakemake's JobScheduler) start a wake-up timer only when no
    pending one wakes it as soon. Returns whether its method was replaced (False: Snakemake has no
    such method any more, the scheduler is left as it is)."""
    if scheduler_class is None:
        try:
            from snakemake.scheduling.job_scheduler import JobScheduler as scheduler_class
        except ImportError:
            return False
    if not callable(getattr(scheduler_class, METHOD, None)):
        return False
    setattr(scheduler_class, METHOD, _schedule_once)
    return True
