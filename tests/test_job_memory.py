"""Issue 27: a job keeps the memory it frees for its next arrays (``jobsetup.keep_freed_memory``), so
a large temporary built over and over (LREMH's likelihood matrix, an SGD fit's gathered rows) is
mapped and zeroed by the kernel once, not on every call; the resources line reports the kernel's
share of the job's CPU."""

from __future__ import annotations

import math
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from ldprepro.pipeline import jobsetup

REPO = Path(__file__).resolve().parents[1]

_ALLOCATIONS = """
import ctypes, sys
from ldprepro.pipeline import jobsetup
took = jobsetup.keep_freed_memory()
import numpy as np


class Mallinfo2(ctypes.Structure):  # glibc >= 2.33, malloc.h
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]


mallinfo2 = ctypes.CDLL(None).mallinfo2
mallinfo2.restype = Mallinfo2
a = np.ones(1 << 25)  # 256 MiB, far above glibc's 32 MiB mmap threshold
first = mallinfo2()
del a
b = np.ones(1 << 25)
second = mallinfo2()
# mapped apart from the heap while alive; the heap's size after the first and the second array
print(took, first.hblkhd, first.arena, second.arena)
"""


def _allocations(malloc: str) -> tuple[bool, int, int, int]:
    out = subprocess.run(
        [sys.executable, "-c", _ALLOCATIONS],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(REPO / "src"), "LDPREPRO_MALLOC": malloc},
    )
    took, mapped, heap_first, heap_second = out.stdout.split()
    return took == "True", int(mapped), int(heap_first), int(heap_second)


@pytest.mark.skipif(platform.libc_ver() < ("glibc", "2.33"), reason="the setting is glibc's mallopt (mallinfo2: 2.33)")
def test_a_job_reuses_freed_memory_instead_of_mapping_it_afresh():
    """With the setting a 256 MiB array comes from the heap, and the next one reuses its memory (the
    heap does not grow); with glibc's defaults (the control) each is a mapping of its own, faulted
    in and zeroed by the kernel page by page, and unmapped when freed."""
    size = 1 << 28
    took, mapped, heap_first, heap_second = _allocations("")
    assert took and mapped < size <= heap_first
    assert heap_second == heap_first, "the second array did not reuse the first one's memory"
    took, mapped, heap_first, _ = _allocations("system")
    assert not took and mapped >= size and heap_first < size


def test_the_resources_line_reports_the_kernels_share_and_old_lines_still_parse():
    new = "INFO resources: cpu_s=7.000 wall_s=8.000 max_rss_mb=90.0 setup_cpu_s=0.400 rule=lremh_job sys_cpu_s=1.250\n"
    got = jobsetup.logged_resources(new)
    assert got["cpu_s"] == 7.0 and got["rule"] == "lremh_job" and got["sys_cpu_s"] == 1.25
    old = "INFO resources: cpu_s=7.000 wall_s=8.000 max_rss_mb=90.0 setup_cpu_s=0.400 rule=figure_job\n"
    assert math.isnan(jobsetup.logged_resources(old)["sys_cpu_s"])
    assert jobsetup.logged_resources(old)["rule"] == "figure_job"
