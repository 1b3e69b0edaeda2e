"""What the benchmark's sections share (``bench.py``, ``bench_jobs.py``): the sizes (quick / full)
and the timing rule: a warm-up call, then the minimum CPU and wall time over the repeats."""

from __future__ import annotations

import ctypes
import math
import time
from pathlib import Path

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


def measure(fn, repeats: int, pause_s: float = 0.0) -> dict:
    """Warm-up call, then the minimum CPU and wall seconds over ``repeats`` calls, ``pause_s`` apart
    (the pauses are in neither)."""
    fn()
    cpu = wall = math.inf
    for i in range(repeats):
        if i and pause_s:
            time.sleep(pause_s)
        c0, w0 = time.process_time(), time.perf_counter()
        fn()
        cpu, wall = min(cpu, time.process_time() - c0), min(wall, time.perf_counter() - w0)
    return {"cpu_s": cpu, "wall_s": wall}


#: Repeats and the pause between them for a floor's price (figure_times.py, cpu_accounts.py). This
#: machine has slow spells of up to about 3 s, about a quarter of the time, in which the same call
#: takes up to 1.8× its CPU time (``Generator.random``: 2.18 and 3.43 ns per draw in consecutive
#: runs of 7 back-to-back repeats): the repeats are spread over about 4 s so that one spell cannot
#: cover them all.
PRICE_REPEATS, PRICE_PAUSE_S = 21, 0.2


def min_cpu_spread(fn, repeats: int | None = None, pause_s: float | None = None) -> float:
    """:func:`measure`'s minimum CPU seconds, the calls ``pause_s`` apart; by default PRICE_REPEATS
    and PRICE_PAUSE_S (read at the call, so a test can shorten them)."""
    repeats = PRICE_REPEATS if repeats is None else repeats
    pause_s = PRICE_PAUSE_S if pause_s is None else pause_s
    return measure(fn, repeats, pause_s)["cpu_s"]


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


def pin_allocator() -> bool:
    """glibc only: large arrays stay on the heap and freed memory is kept (``mallopt``), so no
    measurement pays page faults that depend on what earlier ones freed. Without it the discretised
    samplers' own draws (two ``Generator.random(10⁶)`` calls) measured 4.4 or 7.3 ms in the same
    script, depending on the allocations before them. True when pinned."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        m_trim_threshold, m_mmap_threshold = -1, -3
        return bool(libc.mallopt(m_mmap_threshold, 1 << 30) and libc.mallopt(m_trim_threshold, 1 << 31))
    except (OSError, AttributeError):
        return False


def write_record(out_dir: Path, stem: str, record, markdown: str) -> None:
    """A timing script's record: ``record`` as ``<stem>.json`` and its rendering ``markdown`` as
    ``<stem>.md`` in ``out_dir`` (created if missing), each written whole (temp file, then rename)."""
    import json

    from ldprepro.pipeline.io import atomic_write_text

    out_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out_dir / f"{stem}.json", json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    atomic_write_text(out_dir / f"{stem}.md", markdown)
