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


@numba.njit(cache=True, nogil=True)
def select_by_byte(first_bytes, values, threshold, ties):
    """User i is selected when ``first_bytes[i]`` < ``threshold`` (the first byte of her 56-bit
    uniform is below the first byte of the 56-bit threshold); an equal byte leaves her undecided:
    her index goes to ``ties``. Returns (selected, Σ values of the selected, undecided). Two
    branch-free passes: the sum, kept in eight partial sums (index mod 8, added pairwise at the
    end), then the count and the undecided (one user in 256)."""
    s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = 0.0
    n = values.size
    full = n - n % 8
    for i in range(0, full, 8):
        s0 += values[i] * (first_bytes[i] < threshold)
        s1 += values[i + 1] * (first_bytes[i + 1] < threshold)
        s2 += values[i + 2] * (first_bytes[i + 2] < threshold)
        s3 += values[i + 3] * (first_bytes[i + 3] < threshold)
        s4 += values[i + 4] * (first_bytes[i + 4] < threshold)
        s5 += values[i + 5] * (first_bytes[i + 5] < threshold)
        s6 += values[i + 6] * (first_bytes[i + 6] < threshold)
        s7 += values[i + 7] * (first_bytes[i + 7] < threshold)
    for i in range(full, n):
        s0 += values[i] * (first_bytes[i] < threshold)
    selected = 0
    undecided = 0
    for i in range(n):
        b = first_bytes[i]
        selected += b < threshold
        if b == threshold:
            ties[undecided] = i
            undecided += 1
    return selected, ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7)), undecided
