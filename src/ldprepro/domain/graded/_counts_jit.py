"""Compiled count of HierA's +1 reports (``LevelSortedData.sample_counts``; paper 000 Algorithm 3
step 3, docs/papers/hiera.md §3): numba, imported only when first needed.

:func:`plus_counts` draws each user's uniform from the job's ``np.random.Generator`` inside the
loop (numba's ``Generator.random`` is numpy's ``next_double`` on the same bit generator), so it
reads the same uniforms, in the same order, as the numpy reference
``LevelSortedData._plus_counts_streamed`` and leaves the generator where that leaves it
(``tests/test_graded.py``), without writing a single uniform to memory.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True, error_model="numpy")
def plus_counts(rng, prob_plus, bounds, out):
    """out[l] = #{users i of level l (bounds[l] ≤ i < bounds[l+1]) : u_i < prob_plus[i]}, u_i the
    generator's next uniform, users in order."""
    for lvl in range(out.size):
        count = np.int64(0)
        for i in range(bounds[lvl], bounds[lvl + 1]):
            count += rng.random() < prob_plus[i]
        out[lvl] = count
