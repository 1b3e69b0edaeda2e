"""What the benchmark's sections share (``bench.py``, ``bench_jobs.py``): the sizes (quick / full)
and the timing rule: a warm-up call, then the minimum CPU and wall time over the repeats."""

from __future__ import annotations

import math
import time

SIZES = {  # quick / full
    "n_mech": (200_000, 1_000_000),
    "repeats": (5, 7),
    "peer_n": (5_000, 20_000),
    "hiera_reps": (10, 100),
    "sgd_fits": (10, 50),
    "sgd_before_fits": (1, 2),
    "census_n": (300_000, 2_895_705),  # the synthetic BR extract's rows after cleaning (ipums_scale.py, fraction 1)
    "census_fits": (2, 4),
}


def slow_repeats(repeats: int) -> int:
    """Repeats for the slow measurements (jobs, the peer): half the fast ones, never fewer than 5."""
    return max(5, repeats // 2)


def measure(fn, repeats: int) -> dict:
    """Warm-up call, then the minimum CPU and wall seconds over ``repeats`` calls."""
    fn()
    cpu = wall = math.inf
    for _ in range(repeats):
        c0, w0 = time.process_time(), time.perf_counter()
        fn()
        cpu, wall = min(cpu, time.process_time() - c0), min(wall, time.perf_counter() - w0)
    return {"cpu_s": cpu, "wall_s": wall}


def pair(what: str, before, after, repeats: int, floor=None, **extra) -> dict:
    b, a = measure(before, repeats), measure(after, repeats)
    row = {
        "what": what,
        "before_cpu_s": b["cpu_s"],
        "after_cpu_s": a["cpu_s"],
        "before_wall_s": b["wall_s"],
        "after_wall_s": a["wall_s"],
        "speedup": b["cpu_s"] / a["cpu_s"],
        **extra,
    }
    if floor is not None:
        f = measure(floor, repeats)
        row.update(floor_cpu_s=f["cpu_s"], after_over_floor=a["cpu_s"] / f["cpu_s"])
    return row
