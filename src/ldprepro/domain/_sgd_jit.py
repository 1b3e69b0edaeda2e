"""Compiled steps of ``sgd.ldp_sgd_fits`` (numba; imported only when first needed).

One call runs a run of consecutive SGD steps of F fits: for each fit the group's users' margins
xᵀθ (read from the rows of X in place, without gathering them into a copy), the clipped gradient
coordinates, their perturbation and the server's mean, then θ ← θ − η·step. It transcribes
``sgd.GroupGradients`` and the collectors' numpy code in the same order of operations and draws,
so it differs from them only in rounding: of the dot product xᵀθ (BLAS sums in another order) and
of the logistic loss's σ (one exponential here, three transcendental calls in numpy); ``tests/test_sgd_kernels.py`` checks the two paths agree to
that precision and that the compiled one consumes the same random numbers.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic
from numba.np.random.generator_core import next_uint32

from ldprepro.domain.mechanisms._jit import _dct_one, _round, _sample_one, duchi_signs

jit = numba.njit(cache=True, nogil=True, error_model="numpy")


@intrinsic
def _prefetch(typingctx, arr, row, col):
    """Hint the CPU to fetch element (row, col) of a 2-D array into cache (``llvm.prefetch``: read,
    high locality). A hint only: it changes no value. The fits visit the rows of X in a shuffled
    order, so each row is a cache miss; fetching a few users ahead overlaps those misses."""
    sig = types.void(arr, row, col)

    def codegen(context, builder, signature, args):
        ary_t = signature.args[0]
        ary = context.make_array(ary_t)(context, builder, args[0])
        r = context.cast(builder, args[1], signature.args[1], types.intp)
        c = context.cast(builder, args[2], signature.args[2], types.intp)
        ptr = cgutils.get_item_pointer(context, builder, ary_t, ary, [r, c])
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]), "llvm.prefetch.p0"
        )
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return sig, codegen


#: How many users ahead the margins loop prefetches rows of X.
AHEAD = 8


@jit
def gather_rows(X, rows, out):
    """out[i] = X[rows[i]] for every i (``np.take(X, rows, axis=0, out=out)``), each row prefetched
    AHEAD rows before it is copied: the rows are visited in a shuffled order, so each is a cache
    miss, and fetching ahead overlaps them. A plain copy: the values are X's, bit for bit."""
    n, d = rows.size, X.shape[1]
    for i in range(n):
        if i + AHEAD < n:
            ahead = rows[i + AHEAD]
            for c in range(0, d, 8):
                _prefetch(X, ahead, c)
            _prefetch(X, ahead, d - 1)
        r = rows[i]
        for c in range(d):
            out[i, c] = X[r, c]
    return out


LINEAR, LOGISTIC, SVM = 0, 1, 2


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _coef(model, margin, y):
    """∂loss/∂margin as ``GroupGradients`` computes it."""
    if model == LINEAR:
        return 2.0 * (margin - y)
    if model == LOGISTIC:  # −y·σ(−y·margin) with one exponential (numpy: exp(−logaddexp(0, ·)))
        return -y / (1.0 + math.exp(y * margin))
    return -y if y * margin < 1.0 else 0.0


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _clip(g, c):
    """np.clip(g, −c, c)."""
    return min(max(g, -c), c)


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _coefs(X, y, idx, th, f, base, S, F, model, coef):
    """coef[s] = ∂loss/∂margin of user s of fit f's group at this step (``GroupGradients.coef``).
    The margins xᵀθ come first, in a short loop, so that the rows' cache misses overlap; each
    row is prefetched AHEAD users before it is read (this fit's or a later fit's user)."""
    d = th.size
    for s in range(S):
        later = f * S + s + AHEAD
        if later < F * S:
            ahead = idx[later // S, base + later % S]
            for c in range(0, d, 8):  # its row, one cache line at a time
                _prefetch(X, ahead, c)
        r = idx[f, base + s]
        m0 = m1 = m2 = m3 = 0.0
        c = 0
        while c + 4 <= d:
            m0 += X[r, c] * th[c]
            m1 += X[r, c + 1] * th[c + 1]
            m2 += X[r, c + 2] * th[c + 2]
            m3 += X[r, c + 3] * th[c + 3]
            c += 4
        while c < d:
            m0 += X[r, c] * th[c]
            c += 1
        coef[s] = (m0 + m1) + (m2 + m3)
    for s in range(S):
        coef[s] = _coef(model, coef[s], y[idx[f, base + s]])


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _eta(eta_1, n_iter, f, t, inv_sqrt_t):
    """η_t of fit f (0 past its last group)."""
    eta = eta_1[f] / math.sqrt(t) if inv_sqrt_t else eta_1[f]
    return 0.0 if t > n_iter[f] else eta


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _branch(edges, u):
    """The mixture branch of uniform u: the number of interior edges ≤ u
    (``np.searchsorted(edges[1:-1], u, side="right")``, as ``Mixture._perturb_block``)."""
    b = 0
    for e in range(1, edges.size - 1):
        b += edges[e] <= u
    return b


@jit
def steps(
    X, y, idx, S, t_first, n_steps, theta, eta_1, n_iter, inv_sqrt_t, model, lam, clip,
    sampled, j, u, scale, kinds, params, edges, fresh, rounding, chunk, noise,
):  # fmt: skip
    """Steps t_first … t_first + n_steps − 1 of every fit (θ updated in place); returns the
    number of entries of u consumed.

    ``sampled`` False: the mean of the clipped gradients (``grads.full().mean(1)``), plus
    ``noise[tt, f]`` when noise has rows (Laplace ε/d: its exact group-mean noise, drawn by the
    caller). ``sampled`` True: Alg. 6 sampling, user s of fit f at step t reports coordinates
    j[t−t_first, f, s, :] (value i = (f·S + s)·k + q of the step's F·S·k) through the 1-D
    mechanism (kinds, params, edges, fresh, rounding), and the server sums the reports per
    coordinate (``np.bincount``) scaled by d/(k·S). The uniforms are read in the layout in which
    ``Mechanism.perturb`` draws them, ``chunk`` values at a time (``base.CHUNK``):

    - one branch, no rounding: u per value;
    - one branch with rounding (``Discretized``, Alg. 5): the chunk's u, then its rounding v;
    - a mixture: the chunk's u (which picks the branch; a branch without ``fresh`` samples from
      its share of it), then, branch by branch, each ``fresh`` branch's own uniforms for its
      users in order and, if it rounds, their rounding uniforms (``Mixture._perturb_block``)."""
    F, d = theta.shape
    k = j.shape[3] if sampled else 0
    n = F * S * k
    branches = kinds.size
    plain_rounding = branches == 1 and rounding[0] > 0.0
    any_fresh = fresh.any()
    taken = np.zeros(branches, dtype=np.int64)  # next fresh uniform of each branch
    v_next = np.zeros(branches, dtype=np.int64)  # next rounding uniform of each fresh branch
    counts = np.zeros(branches, dtype=np.int64)
    acc = np.zeros(d)
    coef = np.zeros(S)
    touched = np.empty(S * k, dtype=np.int64)  # the coordinates reported in a step (sampled)
    seen = np.zeros(d, dtype=np.bool_)
    with_noise = noise.shape[0] > 0
    pos = 0
    for tt in range(n_steps):
        t = t_first + tt
        base = (t - 1) * S
        i = 0  # the value's index among the step's n reports
        c0 = 0  # its chunk: first value, length, where its u and (plain rounding) v start
        c_end = 0
        u0 = 0
        v0 = 0
        for f in range(F):
            eta = _eta(eta_1, n_iter, f, t, inv_sqrt_t)
            th = theta[f]
            _coefs(X, y, idx, th, f, base, S, F, model, coef)
            if not sampled:  # sampled: acc is zero here (only the reported coordinates are reset)
                acc[:] = 0.0
            n_touched = 0
            for s in range(S):
                r = idx[f, base + s]
                cs = coef[s]
                if not sampled:
                    for c in range(d):
                        acc[c] += _clip(cs * X[r, c] + lam * th[c], clip)
                    continue
                for q in range(k):
                    if i == c_end:  # a new chunk of the step's values: lay out its uniforms
                        c0 = i
                        c_end = min(n, i + chunk)
                        u0 = pos
                        pos += c_end - c0
                        if plain_rounding:
                            v0 = pos
                            pos += c_end - c0
                        if any_fresh:
                            counts[:] = 0
                            for w in range(u0, u0 + c_end - c0):
                                counts[_branch(edges, u[w])] += 1
                            for b in range(branches):
                                if fresh[b]:
                                    taken[b] = pos
                                    pos += counts[b]
                                    if rounding[b] > 0.0:
                                        v_next[b] = pos
                                        pos += counts[b]
                    c = j[tt, f, s, q]
                    g = _clip(cs * X[r, c] + lam * th[c], clip)
                    ui = u[u0 + i - c0]
                    if branches == 1:
                        out = _sample_one(kinds[0], params[0], g, ui, 0.0, 1.0)
                        if plain_rounding:
                            out = _round(out, u[v0 + i - c0], rounding[0])
                    else:
                        b = _branch(edges, ui)
                        if fresh[b]:
                            out = _sample_one(kinds[b], params[b], g, u[taken[b]], 0.0, 1.0)
                            taken[b] += 1
                            if rounding[b] > 0.0:
                                out = _round(out, u[v_next[b]], rounding[b])
                                v_next[b] += 1
                        else:
                            lo = edges[b]
                            out = _sample_one(kinds[b], params[b], g, ui, lo, edges[b + 1] - lo)
                    acc[c] += out
                    touched[n_touched] = c
                    n_touched += 1
                    i += 1
            if sampled:  # a coordinate nobody reported has acc 0: θ − η·0 is θ, bit for bit
                for w in range(n_touched):
                    c = touched[w]
                    if not seen[c]:
                        seen[c] = True
                        th[c] = th[c] - eta * (acc[c] * scale)
                for w in range(n_touched):
                    c = touched[w]
                    acc[c] = 0.0
                    seen[c] = False
                continue
            for c in range(d):
                step = acc[c] / S
                if with_noise:
                    step = step + noise[tt, f, c]
                th[c] = th[c] - eta * step
    return pos


@jit
def duchi_steps(
    X, y, idx, S, t_first, n_steps, theta, eta_1, n_iter, inv_sqrt_t, model, lam, clip, u, p_pos, B,
):  # fmt: skip
    """Steps of every fit with Duchi et al.'s d-dimensional mechanism (½-ties; Wang et al. Alg. 3;
    ``DuchiMultiDim.group_means`` on ``grads.full()``): per step the F·S users' uniforms u_v
    (F·S·d), u_pos (F·S) and the uniforms whose bits are the random signs (F·S·w, w = ⌈d/53⌉),
    in that order, as ``_jit.duchi_md_group_means`` reads them; the step is the group's mean
    report. Returns the number of entries of u consumed."""
    F, d = theta.shape
    n = F * S
    w = (d + 52) // 53
    acc = np.zeros(d)
    coef = np.zeros(S)
    sign_s = np.zeros(d, dtype=np.int64)
    pos = 0
    for tt in range(n_steps):
        t = t_first + tt
        base = (t - 1) * S
        for f in range(F):
            eta = _eta(eta_1, n_iter, f, t, inv_sqrt_t)
            th = theta[f]
            _coefs(X, y, idx, th, f, base, S, F, model, coef)
            acc[:] = 0.0
            for s in range(S):
                r = idx[f, base + s]
                cs = coef[s]
                user = f * S + s
                duchi_signs(u, pos + n * d + n + user * w, w, sign_s)
                dot = 0
                for c in range(d):
                    g = _clip(cs * X[r, c] + lam * th[c], clip)
                    v = 1 if u[pos + user * d + c] < 0.5 + 0.5 * g else -1
                    dot += sign_s[c] * v
                flip = dot < 0 if u[pos + n * d + user] < p_pos else dot > 0
                sign = -1 if flip else 1
                for c in range(d):
                    acc[c] += B * (sign * sign_s[c])
            for c in range(d):
                th[c] = th[c] - eta * (acc[c] / S)
        pos += n * d + n + n * w
    return pos


@jit
def dct_steps(
    X, y, idx, S, t_first, n_steps, theta, eta_1, n_iter, inv_sqrt_t, model, lam, clip,
    j, u, bits, scale, chunk, keep, inv_keep, inv_gap, dd, m,
):  # fmt: skip
    """``steps`` (Alg. 6 sampling) around paper 003's DCT (``DCT._perturb_block``), whose draws per
    chunk of c values are a byte stream of ⌈2c/8⌉ bytes, unpacked (category bit i, fresh bit
    c + i), then c uniforms: ``bits`` and ``u`` hold them chunk after chunk. Returns the numbers
    of uniforms and of unpacked bits used."""
    F, d = theta.shape
    k = j.shape[3]
    n = F * S * k
    acc = np.zeros(d)
    coef = np.zeros(S)
    pos = 0
    pos_bits = 0
    for tt in range(n_steps):
        t = t_first + tt
        base = (t - 1) * S
        i = 0
        c0 = 0
        c_end = 0
        cn = 0
        u0 = 0
        b0 = 0
        for f in range(F):
            eta = _eta(eta_1, n_iter, f, t, inv_sqrt_t)
            th = theta[f]
            _coefs(X, y, idx, th, f, base, S, F, model, coef)
            acc[:] = 0.0
            for s in range(S):
                r = idx[f, base + s]
                cs = coef[s]
                for q in range(k):
                    if i == c_end:
                        c0 = i
                        c_end = min(n, i + chunk)
                        cn = c_end - c0
                        b0 = pos_bits
                        pos_bits += (2 * cn + 7) // 8 * 8
                        u0 = pos
                        pos += cn
                    c = j[tt, f, s, q]
                    g = _clip(cs * X[r, c] + lam * th[c], clip)
                    w = i - c0
                    acc[c] += _dct_one(g, u[u0 + w], bits[b0 + w], bits[b0 + cn + w], keep, inv_keep, inv_gap, dd, m)
                    i += 1
            for c in range(d):
                th[c] = th[c] - eta * (acc[c] * scale)
    return pos, pos_bits


@jit
def dct_draws(rng, n_steps, chunks, bits, u):
    """The draws of ``n_steps`` steps of Alg. 6 sampling around DCT, step after step and chunk
    after chunk (``chunks``: the values per chunk of one step), as ``DCT._perturb_block`` draws
    them in Python: ``rng.bytes(⌈2c/8⌉)`` unpacked most significant bit first, then
    ``rng.random(c)``. ``Generator.bytes`` takes ⌈length/4⌉ 32-bit outputs of the bit generator
    (``integers(0, 2³², dtype=uint32)``: one ``next_uint32`` each) and keeps their little-endian
    bytes up to the length. Fills ``bits`` (8·⌈2c/8⌉ per chunk) and ``u`` (c per chunk) in that
    order; ``tests/test_sgd_kernels.py`` checks both against the Python draws and the generator's
    final state."""
    bit_generator = rng.bit_generator
    pb = 0
    pu = 0
    for _ in range(n_steps):
        for ci in range(chunks.size):
            c = chunks[ci]
            length = (2 * c + 7) // 8
            for w in range((length - 1) // 4 + 1):
                word = next_uint32(bit_generator)
                for byte_index in range(min(4, length - 4 * w)):
                    byte = (word >> np.uint32(8 * byte_index)) & np.uint32(0xFF)
                    for b in range(8):
                        bits[pb] = (byte >> np.uint32(7 - b)) & np.uint32(1)
                        pb += 1
            for _ in range(c):
                u[pu] = rng.random()
                pu += 1
    return pb, pu
