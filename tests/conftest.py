"""Suite-wide pytest hooks.

Under ``-n 2 --dist loadfile`` (pyproject.toml) a test file is one unit of work, handed to whichever
worker runs low. The files listed here each take one to six minutes (the full smoke workflow, the
workflow reruns, the real SLURM cluster, the plugin reruns, BSHP's size checks): they are collected
first, and ``--no-loadscope-reorder`` keeps that order, so no worker starts one of them while the
other has nothing left to do. (pytest-xdist's own reordering puts the files with the most tests
first, which put the full smoke run, 14 tests, near the end of a 10-minute suite.) The order of
the tests inside a file never changes.
"""

from __future__ import annotations

#: the longest test files, longest first (their call and fixture times in a --durations=0 run)
LONGEST_FIRST = (
    "test_pipeline_smoke.py",
    "test_workflow_runs.py",
    "test_plugin_mechanism.py",
    "test_slurm.py",
    "test_bshp_claims.py",
)


def pytest_collection_modifyitems(session, config, items):
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(LONGEST_FIRST)))  # stable: the rest keep their order
