"""The compiled loop behind ``uniform_sum.subset_sum`` (numba; imported only when first needed)."""

from __future__ import annotations

import numba


@numba.njit(cache=True, nogil=True)
def mark_new(idx, values, taken, need, total):
    """Walk ``idx`` in order; each index not yet ``taken`` is taken and ``values[index]`` added to
    ``total``, until ``need`` are taken. Returns (how many were taken, total)."""
    got = 0
    for i in idx:
        if got == need:
            break
        if not taken[i]:
            taken[i] = True
            total += values[i]
            got += 1
    return got, total
