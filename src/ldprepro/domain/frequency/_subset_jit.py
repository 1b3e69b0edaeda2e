"""Compiled exact joint law of subset selection's support counts (``SS.sample_support_counts``):
numba, imported only when first needed.

The law. A user with value v keeps v with probability p_true and then reports a uniform subset of
[k] \\ {v} of ``need`` = d − 1 (kept) or d (not kept) elements (``subset.py``). The support count of
x is the number of reports containing x. :func:`support_counts` draws the k counts without drawing
a single user's report, by halving the alphabet:

- A node is a block E = [lo, hi) of values, of size s. Every user is, at each node, either an
  *insider* (its value v is in E: it still needs j elements of E \\ {v}) or an *outsider* (v is
  not in E: it needs j elements of E). Given j, the j elements are a uniform subset.
- The node's state is three histograms over j: outsiders; kept insiders; not-kept insiders. Users
  with the same (kind, j) are exchangeable, and which insiders have which value does not change
  their law, so at the root the n insiders are split by ``kept ~ Binomial(n, p_true)``, and at each
  node the insiders whose value lies in the left half L (Σ_{v ∈ L} c_v of them) are a uniformly
  random subset of the node's insiders: a multivariate hypergeometric draw over the (kept, j)
  cells, drawn one cell at a time.
- Splitting E into L (a values) and R (b = s − a): a uniform j-subset of a set of N elements, K of
  them in L, has Hypergeometric(N, K, j) elements in L and the rest in R, and each part is again a
  uniform subset of its half. So the m users of a cell go to the children as Multinomial(m, that
  hypergeometric law): outsiders with N = s, K = a (outsiders of both halves); insiders of L with
  N = s − 1, K = a − 1 (insiders of L, outsiders of R); insiders of R with N = s − 1, K = a
  (outsiders of L, insiders of R).
- A leaf {x}: support_x = the outsiders that need 1 element (x itself) + the kept insiders (value x).

Cost per draw: about one binomial per (node, occupied need level, likely outcome), drawn one draw
at a time; visiting the values one at a time (``SS._draw_joint``) costs a binomial per (value,
occupied need level) but is vectorised over the draws. ``SS.tree_is_cheaper`` picks between them
(measured: timing/records/ss_samplers.md). Memory: the state is O(draws × k), the scratch n + k + 2 entries.

Hypergeometric weights are computed by the ratio of neighbouring terms from the mode outwards, as
far as they stay above 10⁻²⁰ of the mode's (:data:`TAIL`): the omitted outcomes together weigh
less than the double rounding of the drawn probabilities themselves. A multinomial of m users is
drawn as conditional binomials in decreasing order of weight (numba's ``Generator.binomial`` is
numpy's algorithm on the same bit generator), or, when m < :data:`FEW_USERS` × the number of
outcomes, by one inversion per user from ``Generator.random``: both exact, the choice fixed by m and
the law (``few`` overrides it, so the tests run each way on its own).
"""

from __future__ import annotations

import numba
import numpy as np

jit = numba.njit(cache=True, nogil=True, error_model="numpy")

#: outcomes with weight below TAIL × the mode's are never drawn (see the module docstring)
TAIL = 1e-20
#: a multinomial of m users over c outcomes is drawn by one inversion per user when m < FEW_USERS·c
FEW_USERS = 2


@jit
def _weights(N, K, j, w, order, acc):
    """Hypergeometric(N, K, j) (elements in the K-part of a uniform j-subset of N) on its outcomes
    lo, lo + 1, … (the outcomes from the mode outwards while their weight is at least TAIL × the
    mode's): fills w[t] ∝ Pr(lo + t) (w[0] = 1), ``order`` with the t by decreasing weight and
    ``acc`` with the suffix sums over that order. Returns (lo, number of outcomes)."""
    low = max(0, j - (N - K))
    high = min(j, K)
    mode = ((j + 1) * (K + 1)) // (N + 2)
    mode = min(max(mode, low), high)
    # left end: walk down from the mode while the weight stays above TAIL
    x = 1.0
    i = mode
    while i > low:
        x *= i * (N - K - j + i) / ((K - i + 1.0) * (j - i + 1.0))
        if x < TAIL:
            break
        i -= 1
    lo = i
    # weights from lo upwards, relative to w[lo] = 1, until past the mode they fall below TAIL × the peak
    w[0] = 1.0
    t = 0
    peak = 1.0
    while lo + t < high:
        i = lo + t
        nxt = w[t] * (K - i) * (j - i) / ((i + 1.0) * (N - K - j + i + 1.0))
        if lo + t + 1 > mode and nxt < TAIL * peak:
            break
        t += 1
        w[t] = nxt
        peak = max(peak, nxt)
    count = t + 1
    # decreasing order: merge the two monotone sides of the unimodal weights
    m = mode - lo
    left, right = m - 1, m + 1
    order[0] = m
    for q in range(1, count):
        if right >= count or (left >= 0 and w[left] >= w[right]):
            order[q] = left
            left -= 1
        else:
            order[q] = right
            right += 1
    total = 0.0
    for q in range(count - 1, -1, -1):
        total += w[order[q]]
        acc[q] = total
    return lo, count


@jit
def _multinomial(m, count, w, order, acc, got, few, rng):
    """got[t] = how many of m users fall on outcome t (t < count), by the weights _weights left."""
    for t in range(count):
        got[t] = 0
    if count == 1:
        got[0] = m
        return
    if m < few * count:
        for _ in range(m):
            u = rng.random() * acc[0]
            q = 0
            while q < count - 1 and u >= acc[0] - acc[q + 1]:
                q += 1
            got[order[q]] += 1
        return
    rem = m
    for q in range(count):
        if rem == 0:
            break
        t = order[q]
        if q == count - 1:
            got[t] = rem
            break
        p = w[t] / acc[q]
        x = rem if p >= 1.0 else rng.binomial(rem, p)
        got[t] = x
        rem -= x


@jit
def _hypergeometric(N, K, j, w, order, acc, got, rng):
    """One Hypergeometric(N, K, j) draw (the degenerate cases without a draw)."""
    if K == 0 or j == 0:
        return 0
    if K == N:
        return j
    if j == N:
        return K
    lo, count = _weights(N, K, j, w, order, acc)
    _multinomial(1, count, w, order, acc, got, 1, rng)
    for t in range(count):
        if got[t]:
            return lo + t
    return lo  # unreachable: _multinomial places the one user


@jit
def _law(N, K, j, w, order, acc):
    """The weights of Hypergeometric(N, K, j) (:func:`_weights`), a single outcome when degenerate.
    Returns (first outcome, number of outcomes)."""
    if K == 0 or j == 0:
        return 0, 1
    if K == N:
        return j, 1
    return _weights(N, K, j, w, order, acc)


@jit
def _node(lo, hi, cum, o_in, i_in, o_left, o_right, i_left, i_right, x_left, w, order, acc, got, few, rng):
    """Split the node [lo, hi) of every draw r (state o_in[r, 0..s], i_in[r, κ, 0..s−1], κ = 0 not
    kept, 1 kept) into the children's states (zeroed by the caller); each hypergeometric law's
    weights are computed once for all draws."""
    draws = o_in.shape[0]
    s = hi - lo
    a = s // 2
    for r in range(draws):  # the insiders whose value is in the left half, cell by cell
        need = cum[lo + a] - cum[lo]
        left_total = cum[hi] - cum[lo]
        for kappa in range(1, -1, -1):
            for j in range(s):
                g = i_in[r, kappa, j]
                if g == 0 or need == 0:
                    x = 0
                elif need == left_total:
                    x = g
                else:
                    x = _hypergeometric(left_total, g, need, w, order, acc, got, rng)
                x_left[r, kappa, j] = x
                left_total -= g
                need -= x
    for kappa in range(1, -1, -1):
        for j in range(s):
            for side in range(2):  # insiders of L: j_L ~ H(s − 1, a − 1, j); of R: H(s − 1, a, j)
                first, count = -1, 0
                for r in range(draws):
                    m = x_left[r, kappa, j] if side == 0 else i_in[r, kappa, j] - x_left[r, kappa, j]
                    if m == 0:
                        continue
                    if count == 0:
                        first, count = _law(s - 1, a - 1 + side, j, w, order, acc)
                    _multinomial(m, count, w, order, acc, got, few, rng)
                    for t in range(count):
                        if got[t]:
                            if side == 0:
                                i_left[r, kappa, first + t] += got[t]
                                o_right[r, j - first - t] += got[t]
                            else:
                                o_left[r, first + t] += got[t]
                                i_right[r, kappa, j - first - t] += got[t]
    for j in range(s + 1):
        first, count = -1, 0
        for r in range(draws):
            m = o_in[r, j]
            if m == 0:
                continue
            if count == 0:
                first, count = _law(s, a, j, w, order, acc)
            _multinomial(m, count, w, order, acc, got, few, rng)
            for t in range(count):
                if got[t]:
                    o_left[r, first + t] += got[t]
                    o_right[r, j - first - t] += got[t]


@jit
def support_counts(c, p_true, d, draws, rng, few=FEW_USERS):
    """(draws, k) support counts of SS(k, ·, d) for the true counts c, each draw from the exact law.

    The state of a node lives in flat buffers: at a level whose nodes tile [0, k) in order, node i
    = [lo, hi) keeps draw r's outsiders at o[r, lo + i : hi + i + 1] and its insiders at
    ins[r, κ, lo : hi]."""
    k = c.size
    n = np.int64(0)
    cum = np.zeros(k + 1, dtype=np.int64)
    for x in range(k):
        n += c[x]
        cum[x + 1] = n
    out = np.zeros((draws, k), dtype=np.int64)
    scratch = n + k + 2
    w = np.empty(scratch)
    acc = np.empty(scratch)
    order = np.empty(scratch, dtype=np.int64)
    got = np.empty(scratch, dtype=np.int64)
    o_cur = np.zeros((draws, 2 * k + 1), dtype=np.int64)
    o_next = np.zeros((draws, 2 * k + 1), dtype=np.int64)
    i_cur = np.zeros((draws, 2, k), dtype=np.int64)
    i_next = np.zeros((draws, 2, k), dtype=np.int64)
    x_left = np.zeros((draws, 2, k), dtype=np.int64)
    los = np.zeros(k + 1, dtype=np.int64)
    next_los = np.zeros(k + 1, dtype=np.int64)
    for r in range(draws):
        kept = rng.binomial(n, p_true) if n > 0 else 0
        i_cur[r, 1, d - 1] = kept
        i_cur[r, 0, d] = n - kept
    los[0], los[1] = 0, k
    nodes = 1
    while nodes < k:
        o_next[:, :] = 0
        i_next[:, :, :] = 0
        children = 0
        for i in range(nodes):
            lo, hi = los[i], los[i + 1]
            s = hi - lo
            o_in = o_cur[:, lo + i : hi + i + 1]
            i_in = i_cur[:, :, lo:hi]
            if s == 1:  # a leaf waits for the others
                # copied element by element: an array-to-array assignment would compile numba's
                # shape-mismatch error path (string formatting: seconds of compile per process)
                for r in range(draws):
                    o_next[r, lo + children] = o_in[r, 0]
                    o_next[r, lo + children + 1] = o_in[r, 1]
                    for kappa in range(2):
                        i_next[r, kappa, lo] = i_in[r, kappa, 0]
                next_los[children] = lo
                children += 1
                continue
            mid = lo + s // 2
            _node(
                lo, hi, cum, o_in, i_in,
                o_next[:, lo + children : mid + children + 1],
                o_next[:, mid + children + 1 : hi + children + 2],
                i_next[:, :, lo:mid], i_next[:, :, mid:hi],
                x_left, w, order, acc, got, few, rng,
            )  # fmt: skip
            next_los[children] = lo
            next_los[children + 1] = mid
            children += 2
        next_los[children] = k
        nodes = children
        o_cur, o_next = o_next, o_cur
        i_cur, i_next = i_next, i_cur
        los, next_los = next_los, los
    for r in range(draws):
        for x in range(k):  # leaf x: node x, outsiders at o_cur[r, 2x : 2x + 2]
            out[r, x] = o_cur[r, 2 * x + 1] + i_cur[r, 1, x]
    return out
