"""The compiled per-user loops behind ``kernels`` (numba; imported only when first needed).

Each loop is the scalar transcription of a numpy reference sampler, operation for operation and
in the same order (no fast-math, so no reassociation or fused multiply-add), hence bit-identical
outputs from the same uniforms; ``tests/test_mechanism_kernels.py`` checks that on every
mechanism at ε from 1e-6 to 700. The numpy references, named at each function, stay the
specification.

A loop returns True when every input lies in [−1, 1] (False if one is outside or NaN: the
caller then raises the error ``base.as_input`` would have raised, naming the value).
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba.np.random.generator_core import next_uint32

#: error_model "numpy": a float division by zero gives inf instead of a checked branch (which
#: would stop the loops from vectorising); no division here can have a zero divisor.
jit = numba.njit(cache=True, nogil=True, error_model="numpy")
#: Per-user helpers are inlined into the loops (a call per user would cost more than its body).
inline = numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")

#: Sampler kinds (``kernels.KIND_*`` mirrors them); the parameters are per kind, see _sample_one.
PIECEWISE, BINARY, THREE_OUTPUTS, DCT_ONE_UNIFORM = 0, 1, 2, 3


@inline
def _piecewise(x, u, slope, c_left, k_win, p_win, k_out, a, two_a):
    """``Piecewise._sample`` for one user (u already mapped to [0, 1))."""
    y = x * slope
    y += c_left
    y += u * k_win
    v = max(u - p_win, 0.0)  # np.maximum; u − p_win is never −0.0
    y += v * k_out
    y -= (y > a) * two_a
    return y


@inline
def _binary(x, u, c, lo, width):
    """``_BinaryOutput._sample`` for one user."""
    k = 2.0 * c / width
    t = u * -k
    t += k * lo + c
    t += x
    return math.copysign(c, t)


@inline
def _three_outputs(x, u, p00, decay, c, lo, width):
    """``ThreeOutputs._sample`` for one user."""
    p0 = abs(x)
    p0 *= -p00 * decay * width
    p0 += p00 * width
    p_minus = x * (-0.5 * width / c)
    p_minus -= 0.5 * p0
    p_minus += 0.5 * width + lo
    out = (u >= p_minus) * 1.0
    p_minus += p0
    out += (u >= p_minus) * 1.0
    out -= 1.0
    out *= c
    return out


@inline
def _sample_one(kind, p, x, u, lo, width):
    """One output from one uniform mapped to [0, 1) by (u − lo)/width, for kind:

    - PIECEWISE (``Piecewise._sample``): p = slope, c_left, k_win, p_win, k_out, A, 2A;
    - BINARY (``_BinaryOutput._sample``): p = C;
    - THREE_OUTPUTS (``ThreeOutputs._sample``): p = P00, 1 − e^{−ε}, C;
    - DCT_ONE_UNIFORM (``DCT._sample`` then ``DCT._place``): p = d, m.
    """
    if kind == PIECEWISE:
        if lo != 0.0 or width != 1.0:
            u = (u - lo) / width
        return _piecewise(x, u, p[0], p[1], p[2], p[3], p[4], p[5], p[6])
    if kind == BINARY:
        return _binary(x, u, p[0], lo, width)
    if kind == THREE_OUTPUTS:
        return _three_outputs(x, u, p[0], p[1], p[2], lo, width)
    # DCT_ONE_UNIFORM
    w = (u - lo) * (2.0 / width)
    inner = w < 1.0
    w -= (not inner) * 1.0
    return _dct_place(x, inner, w, p[0], p[1])


@inline
def _valid(x):
    """x in [−1, 1] (False for NaN), as ``base.as_input`` checks."""
    return -1.0 <= x <= 1.0


@inline
def _dct_place(x, inner, w, d, m):
    """``DCT._place`` for one user."""
    t = w * d
    t -= m
    jump = math.copysign(m, t)
    jump *= (not inner) * 1.0
    t += x
    t += jump
    return t


@inline
def _round(y, v, h):
    """``Discretized.round`` for one value y and its uniform v (Algorithm 5, Eq. (35))."""
    scaled = y / h
    k = math.floor(scaled)
    scaled -= k
    k += (v < scaled) * 1.0
    k *= h
    return k


@jit
def single(kind, p, x, u, out):
    """out[i] = the kind's sampler at (x[i], u[i]) (``Mechanism._perturb_block``); one loop per
    kind, free of branches on the data, so that it vectorises."""
    ok = True
    if kind == PIECEWISE:
        slope, c_left, k_win, p_win, k_out, a, two_a = p[0], p[1], p[2], p[3], p[4], p[5], p[6]
        for i in range(x.size):
            ok &= _valid(x[i])
            out[i] = _piecewise(x[i], u[i], slope, c_left, k_win, p_win, k_out, a, two_a)
    elif kind == BINARY:
        c = p[0]
        for i in range(x.size):
            ok &= _valid(x[i])
            out[i] = _binary(x[i], u[i], c, 0.0, 1.0)
    elif kind == THREE_OUTPUTS:
        p00, decay, c = p[0], p[1], p[2]
        for i in range(x.size):
            ok &= _valid(x[i])
            out[i] = _three_outputs(x[i], u[i], p00, decay, c, 0.0, 1.0)
    else:
        for i in range(x.size):
            ok &= _valid(x[i])
            out[i] = _sample_one(kind, p, x[i], u[i], 0.0, 1.0)
    return ok


@jit
def discretised(kind, p, h, x, u, v, out):
    """``Discretized._perturb_block``: the base sampler from u, then rounding with v."""
    ok = single(kind, p, x, u, out)
    for i in range(x.size):
        out[i] = _round(out[i], v[i], h)
    return ok


@jit
def branch_counts(u, edges, counts):
    """Users per mixture branch: branch j holds edges[j] ≤ u < edges[j+1] (``Mixture``)."""
    above = np.zeros(edges.size, dtype=np.int64)  # above[j] = #{u ≥ edges[j]}, j interior
    for j in range(1, edges.size - 1):
        e = edges[j]
        total = 0
        for i in range(u.size):
            total += u[i] >= e
        above[j] = total
    above[0] = u.size
    for j in range(edges.size - 1):
        counts[j] = above[j] - above[j + 1]


@jit
def mixture(kinds, params, edges, fresh, steps, offsets, x, u, fresh_u, fresh_v, out):
    """``Mixture._perturb_block``: user i's branch j from u[i]; a branch with ``fresh[j] == 0``
    samples from u[i] rescaled to its interval, one with ``fresh[j] == 1`` takes its users' next
    uniforms from ``fresh_u`` (from ``offsets[j]`` on) and, when ``steps[j] > 0`` (a discretised
    branch), rounds with the matching entry of ``fresh_v``."""
    if not fresh.any():
        return _mixture_one_uniform(kinds, params, edges, x, u, out)
    taken = offsets.copy()
    top = fresh_u.size - 1  # the caller appends one spare entry, so this is never −1
    branches = kinds.size
    ok = True
    for i in range(x.size):
        xi = x[i]
        ok &= _valid(xi)
        ui = u[i]
        y = 0.0
        # Every branch is evaluated and the user's own kept (no mispredicted branch per user);
        # a fresh branch reads its next uniforms (an in-range spare when it has no users left).
        for j in range(branches):
            lo = edges[j]
            hi = edges[j + 1]
            inside = (ui >= lo) & ((ui < hi) | (j == branches - 1))
            if fresh[j] == 0:
                yj = _sample_one(kinds[j], params[j], xi, ui, lo, hi - lo)
            else:
                k = min(taken[j], top)
                taken[j] += inside
                yj = _sample_one(kinds[j], params[j], xi, fresh_u[k], 0.0, 1.0)
                if steps[j] > 0.0:
                    yj = _round(yj, fresh_v[k], steps[j])
            y = yj if inside else y
        out[i] = y
    return ok


@jit
def mixture_two_fresh_first(kind0, kind1, p0, p1, step0, edge, x, u, first, fresh_u, fresh_v, out):
    """``Mixture._perturb_block`` with two branches, the first drawing its own uniforms (a
    discretised HM or HM-TP: the continuous branch, rounded by Algorithm 5) for its users
    ``first`` (those with u < edge, in order), the second sampling from its share of u."""
    ok = True
    rest = 1.0 - edge
    if kind1 == BINARY:
        c = p1[0]
        for i in range(x.size):
            ok &= _valid(x[i])
            out[i] = _binary(x[i], u[i], c, edge, rest)
    elif kind1 == THREE_OUTPUTS:
        p00, decay, c = p1[0], p1[1], p1[2]
        for i in range(x.size):
            ok &= _valid(x[i])
            out[i] = _three_outputs(x[i], u[i], p00, decay, c, edge, rest)
    else:
        for i in range(x.size):
            ok &= _valid(x[i])
            out[i] = _sample_one(kind1, p1, x[i], u[i], edge, rest)
    for t in range(first.size):
        i = first[t]
        y = _sample_one(kind0, p0, x[i], fresh_u[t], 0.0, 1.0)
        if step0 > 0.0:
            y = _round(y, fresh_v[t], step0)
        out[i] = y
    return ok


@jit
def _mixture_one_uniform(kinds, params, edges, x, u, out):
    """``mixture`` when every branch samples from its share of u: every branch is evaluated and
    the user's own is kept, which avoids a mispredicted branch per user (the others' outputs,
    computed from a uniform outside their interval, are discarded)."""
    if kinds.size == 2:
        return _mixture_two(kinds[0], kinds[1], params[0], params[1], edges[1], x, u, out)
    ok = True
    branches = kinds.size
    for i in range(x.size):
        xi = x[i]
        ui = u[i]
        ok &= _valid(xi)
        y = 0.0
        for j in range(branches):
            lo = edges[j]
            hi = edges[j + 1]
            yj = _sample_one(kinds[j], params[j], xi, ui, lo, hi - lo)
            inside = (ui >= lo) & ((ui < hi) | (j == branches - 1))
            y = yj if inside else y
        out[i] = y
    return ok


@jit
def _mixture_two(kind0, kind1, p0, p1, edge, x, u, out):
    """``_mixture_one_uniform`` with two branches, [0, edge) and [edge, 1), each loop written
    for its pair of kinds (HM: piecewise + binary; HM-TP: piecewise + Three-Outputs)."""
    ok = True
    rest = 1.0 - edge
    if kind0 == PIECEWISE and kind1 == BINARY:
        slope, c_left, k_win, p_win, k_out, a, two_a = p0[0], p0[1], p0[2], p0[3], p0[4], p0[5], p0[6]
        c = p1[0]
        for i in range(x.size):
            xi, ui = x[i], u[i]
            ok &= _valid(xi)
            y0 = _piecewise(xi, ui / edge, slope, c_left, k_win, p_win, k_out, a, two_a)
            y1 = _binary(xi, ui, c, edge, rest)
            out[i] = y0 if ui < edge else y1
    elif kind0 == PIECEWISE and kind1 == THREE_OUTPUTS:
        slope, c_left, k_win, p_win, k_out, a, two_a = p0[0], p0[1], p0[2], p0[3], p0[4], p0[5], p0[6]
        p00, decay, c = p1[0], p1[1], p1[2]
        for i in range(x.size):
            xi, ui = x[i], u[i]
            ok &= _valid(xi)
            y0 = _piecewise(xi, ui / edge, slope, c_left, k_win, p_win, k_out, a, two_a)
            y1 = _three_outputs(xi, ui, p00, decay, c, edge, rest)
            out[i] = y0 if ui < edge else y1
    else:
        for i in range(x.size):
            xi, ui = x[i], u[i]
            ok &= _valid(xi)
            y0 = _sample_one(kind0, p0, xi, ui, 0.0, edge)
            y1 = _sample_one(kind1, p1, xi, ui, edge, rest)
            out[i] = y0 if ui < edge else y1
    return ok


@jit
def laplace_words(x, w, ke, we, scale, out, slow, slow_e):
    """``exponential.laplace_block`` for the words inside their layer's rectangle: x ± b·E with
    E = ri·WE[layer], minus when bit 0 is set. The other words' indices go to ``slow`` and their
    ri·WE[layer] to ``slow_e``; :func:`laplace_finish` rewrites their outputs. Returns (inputs
    valid, number of slow words)."""
    ok = True
    n_slow = 0
    for i in range(x.size):
        xi = x[i]
        ok &= _valid(xi)
        wi = w[i]
        layer = (wi >> np.uint64(3)) & np.uint64(255)
        position = np.int64(wi >> np.uint64(11))
        e = position * we[layer]
        noise = e * scale
        out[i] = xi - noise if wi & np.uint64(1) else xi + noise
        if position >= ke[layer]:
            slow[n_slow] = i
            slow_e[n_slow] = e
            n_slow += 1
    return ok, n_slow


@jit
def laplace_finish(x, w, slow, slow_e, exp_minus_e, u, fresh, fe, gap, r, scale, out):
    """``exponential.finish_slow`` for the slow words of :func:`laplace_words` (``exp_minus_e`` =
    numpy's exp(−slow_e), as the numpy path computes it), then x ± b·E for them."""
    for j in range(slow.size):
        i = slow[j]
        wi = w[i]
        layer = (wi >> np.uint64(3)) & np.uint64(255)
        height = gap[layer] * u[j]
        height += fe[layer]
        e = slow_e[j] if height < exp_minus_e[j] else fresh[j]
        if layer == 0:
            e = r + fresh[j]
        noise = e * scale
        out[i] = x[i] - noise if wi & np.uint64(1) else x[i] + noise


@inline
def _dct_one(xi, ui, category, fresh, keep, inv_keep, inv_gap, d, m):
    """``DCT._perturb_block`` for one value: keep/replace from ui < keep (the category bit if
    kept, the fresh bit otherwise), ui rescaled within the chosen interval, then the placement."""
    kept = ui < keep
    bit = category if kept else fresh  # both loaded: a select, not a branch
    replaced = (not kept) * 1.0
    ui -= replaced * keep
    replaced *= inv_gap
    replaced += inv_keep
    ui *= replaced
    return _dct_place(xi, bit == 1, ui, d, m)


@jit
def dct(x, u, bits, keep, inv_keep, inv_gap, d, m, out):
    """``DCT._perturb_block`` (Algorithm 3): ``bits`` the unpacked byte stream, category bit i
    and fresh bit n + i; keep/replace from u[i] < keep, u rescaled within the chosen interval."""
    n = x.size
    ok = True
    for i in range(n):
        xi = x[i]
        ok &= _valid(xi)
        out[i] = _dct_one(xi, u[i], bits[i], bits[n + i], keep, inv_keep, inv_gap, d, m)
    return ok


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def duchi_signs(u, first, w, out):
    """out[c] = ±1: bit c mod 53 of u[first + c // 53]·2⁵³ (``multidim.signs_from_uniforms``; 2⁵³ =
    9007199254740992), each uniform's bits unpacked in a loop of their own (reading them inside the
    coordinate loop made the SGD steps slower than drawing a uniform per sign). The random signs of
    Duchi's mechanism, for its group means and for the compiled SGD steps."""
    d = out.size
    for wi in range(w):
        k = np.int64(u[first + wi] * 9007199254740992.0)
        c0 = wi * 53
        for b in range(min(53, d - c0)):
            out[c0 + b] = ((k >> b) & 1) * 2 - 1


@jit
def duchi_md_group_means(x, u_v, u_pos, u_s, p_pos, b, S, out):
    """``DuchiMultiDim.group_means`` (½-ties; Wang et al. Alg. 3): user i of the F·S users (rows of
    x, group i // S) discretises v_c = +1 iff u_v[i, c] < ½ + ½x[i, c], picks T+ iff u_pos[i] <
    p_pos, takes the random signs s_c from the bits of u_s[i] (bit c mod 53 of u_s[i, c // 53]·2⁵³,
    ``multidim.signs_from_uniforms``), flips s when s·v has the wrong sign (s·v < 0 for T+, > 0 for
    T−), and reports B·s; out[f] = the mean report of group f, summed user by user as numpy's mean
    over the group axis does."""
    n, d = x.shape
    w = u_s.shape[1]
    ok = True
    s = np.empty(d, dtype=np.int64)
    out[:] = 0.0
    for i in range(n):
        duchi_signs(u_s[i], 0, w, s)
        dot = 0
        for c in range(d):
            xc = x[i, c]
            ok &= _valid(xc)
            v = 1 if u_v[i, c] < 0.5 + 0.5 * xc else -1
            dot += s[c] * v
        flip = dot < 0 if u_pos[i] < p_pos else dot > 0
        sign = -1 if flip else 1
        f = i // S
        for c in range(d):
            out[f, c] += b * (sign * s[c])
    for f in range(out.shape[0]):
        for c in range(d):
            out[f, c] = out[f, c] / S
    return ok


@jit
def duchi_md_discretise_by_byte(first_bytes, top, v, ties):
    """``multidim.DuchiMeanReports``' discretisation: v[k] = +1 when the first byte of the k-th
    coordinate's 56-bit uniform (``first_bytes[k]``) is below ``top[k]``, the first byte of its
    R = rint((½ + ½x)·2⁵⁶) (256 when R = 2⁵⁶), −1 when above, 0 when equal (then k goes to
    ``ties``, decided by the uniform's six further bytes). Returns the number of ties."""
    undecided = 0
    for k in range(first_bytes.size):
        b = np.int16(first_bytes[k])
        t = top[k]
        v[k] = (b < t) * 1 - (b > t) * 1
        if b == t:
            ties[undecided] = k
            undecided += 1
    return undecided


@jit
def duchi_md_mean_from_signs(v, u_pos, u_s, p_pos, b, out):
    """``multidim.DuchiMeanReports`` after the discretisation v (±1, n × d): user i picks T+ iff
    u_pos[i] < p_pos, takes the random signs s from the bits of u_s[i] (``duchi_signs``), flips
    s when s·v has the wrong sign (< 0 for T+, > 0 for T−) and reports B·s; out = the mean report,
    B times the sum of the signs (counted exactly, in integers) over n."""
    n, d = v.shape
    w = u_s.shape[1]
    s = np.empty(d, dtype=np.int64)
    total = np.zeros(d, dtype=np.int64)
    for i in range(n):
        duchi_signs(u_s[i], 0, w, s)
        dot = 0
        for c in range(d):
            dot += s[c] * v[i, c]
        flip = dot < 0 if u_pos[i] < p_pos else dot > 0
        sign = -1 if flip else 1
        for c in range(d):
            total[c] += sign * s[c]
    for c in range(d):
        out[c] = b * total[c] / n


@inline
def _bounded(bit_generator, top):
    """An integer uniform on {0, …, top} (0 ≤ top < 2³² − 1), drawn as ``Generator.integers(0, top + 1)``
    draws each of its values: no draw for top = 0, else Lemire's multiply-and-reject on the bit
    generator's 32-bit outputs (numpy's ``buffered_bounded_lemire_uint32``)."""
    if top == 0:
        return 0
    excl = np.uint64(top) + np.uint64(1)
    m = np.uint64(next_uint32(bit_generator)) * excl
    low = m & np.uint64(0xFFFFFFFF)
    if low < excl:
        threshold = (np.uint64(0xFFFFFFFF) - np.uint64(top)) % excl
        while low < threshold:
            m = np.uint64(next_uint32(bit_generator)) * excl
            low = m & np.uint64(0xFFFFFFFF)
    return np.int64(m >> np.uint64(32))


@jit
def floyd_subsets(rng, d, cols):
    """Each row of ``cols`` (n × k) a uniform k-subset of {0, …, d − 1} by Floyd's algorithm, with the
    draws of ``MultiDimMechanism.sample_attributes``' numpy loop in its order: for i = 0 … k − 1
    (j = d − k + i) every user's t uniform on {0, …, j}, user after user, then j in place of a t the
    user already took. Same values and generator state (tests/test_mechanism_kernels.py)."""
    bit_generator = rng.bit_generator
    n, k = cols.shape
    for i in range(k):
        j = d - k + i
        for s in range(n):
            t = _bounded(bit_generator, j)
            for q in range(i):
                if cols[s, q] == t:
                    t = j
                    break
            cols[s, i] = t
    return cols
