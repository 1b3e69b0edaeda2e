"""Compiled pieces of the explicit-candidate EM (:func:`ldprepro.domain.joint.estimators.em_candidates`;
docs/papers/lremh.md §4.1): numba, imported only when that EM first runs.

The likelihood of candidate ω for user i is, up to a candidate-independent factor,
Π_j λ^i_j(ω_j) = table[c], where c is how many of ω's k bits user i reported as 1 (§4.1). The
kernels compute exactly the values numpy's ``table[ones]`` gives, without numpy's temporaries: the
counts in uint8 as ``ones += bits`` adds them, then one table lookup per (candidate, user) written
straight into the float64 output (numpy first widens the uint8 counts to an index array eight times
their size, then gathers). The EM's BLAS products then run on the same matrix, so its iterates are
bit for bit those of the numpy code (``tests/test_joint.py``).

``bits``: the k attributes' reported bit rows stacked, (Σ_j |Ω_j|, N) uint8, users along the last
axis; ``rows``: (m, k) the row of ``bits`` holding candidate ω's bit of attribute j (ω_j plus the
attribute's offset).
"""

from __future__ import annotations

import numba
import numpy as np

jit = numba.njit(cache=True, nogil=True, error_model="numpy")


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _count_ones(bits, rows, c, a, b, count):
    """count[i − a] = Σ_j bits[rows[c, j], i] for users a ≤ i < b, added in uint8 as numpy's
    ``ones += bits[...]`` adds them."""
    r = bits[rows[c, 0]]
    for i in range(a, b):
        count[i - a] = r[i]
    for j in range(1, rows.shape[1]):
        r = bits[rows[c, j]]
        for i in range(a, b):
            count[i - a] += r[i]


@jit
def ones_counts(bits, rows, a, b, out):
    """out[c, i − a] = Σ_j bits[rows[c, j], i] for users a ≤ i < b, in uint8 (k ≤ 255)."""
    for c in range(rows.shape[0]):
        _count_ones(bits, rows, c, a, b, out[c])


@jit
def likelihoods(bits, rows, table, a, b, out):
    """out[c, i − a] = table[Σ_j bits[rows[c, j], i]] for users a ≤ i < b (float64). For k ≤ 4 the
    k bits are summed in registers and looked up in one pass over the users (half the time of
    counting into a buffer first, the paper's k = 2–4 on Adult); the same sums, so the same values."""
    k = rows.shape[1]
    if k > 4:
        count = np.empty(b - a, np.uint8)
        for c in range(rows.shape[0]):
            _count_ones(bits, rows, c, a, b, count)
            o = out[c]
            for i in range(b - a):
                o[i] = table[count[i]]
        return
    for c in range(rows.shape[0]):
        o = out[c]
        r0 = bits[rows[c, 0]]
        if k == 1:
            for i in range(a, b):
                o[i - a] = table[r0[i]]
            continue
        r1 = bits[rows[c, 1]]
        if k == 2:
            for i in range(a, b):
                o[i - a] = table[r0[i] + r1[i]]
            continue
        r2 = bits[rows[c, 2]]
        if k == 3:
            for i in range(a, b):
                o[i - a] = table[r0[i] + r1[i] + r2[i]]
            continue
        r3 = bits[rows[c, 3]]
        for i in range(a, b):
            o[i - a] = table[r0[i] + r1[i] + r2[i] + r3[i]]


@jit
def lookup(table, ones, out):
    """out[c, i] = table[ones[c, i]]: the likelihoods from cached counts."""
    m, n = ones.shape
    for c in range(m):
        o = out[c]
        s = ones[c]
        for i in range(n):
            o[i] = table[s[i]]
