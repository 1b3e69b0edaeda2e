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

from .mechanisms._jit import _sample_one

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
def _report(kinds, params, edges, g, u):
    """The 1-D mechanism's output for value g from uniform u: one sampler (edges = [0, 1]) or a
    mixture whose branches sample from their share of u (``Mixture._perturb_block``)."""
    branches = kinds.size
    if branches == 1:
        return _sample_one(kinds[0], params[0], g, u, 0.0, 1.0)
    y = 0.0
    for b in range(branches):
        lo = edges[b]
        hi = edges[b + 1]
        yb = _sample_one(kinds[b], params[b], g, u, lo, hi - lo)
        inside = (u >= lo) & ((u < hi) | (b == branches - 1))
        y = yb if inside else y
    return y


@jit
def steps(
    X, y, idx, S, t_first, n_steps, theta, eta_1, n_iter, inv_sqrt_t, model, lam, clip,
    sampled, j, u, scale, kinds, params, edges,
):  # fmt: skip
    """Steps t_first … t_first + n_steps − 1 of every fit (θ updated in place).

    ``sampled`` False: the non-private mean of the clipped gradients (``grads.full().mean(1)``);
    True: Alg. 6 sampling, user s of fit f at step t reports coordinates j[t−t_first, f, s, :]
    through the mechanism (kinds, params, edges) with the uniforms u, consumed in the order of
    (step, fit, user, coordinate), and the server sums them per coordinate (``np.bincount``)
    scaled by d/(k·S)."""
    F, d = theta.shape
    k = j.shape[3] if sampled else 0
    acc = np.zeros(d)
    coef = np.zeros(S)
    pos = 0
    for tt in range(n_steps):
        t = t_first + tt
        base = (t - 1) * S
        for f in range(F):
            eta = eta_1[f] / math.sqrt(t) if inv_sqrt_t else eta_1[f]
            if t > n_iter[f]:
                eta = 0.0
            th = theta[f]
            # margins first, in a short loop, so that the rows' cache misses overlap
            for s in range(S):
                later = f * S + s + AHEAD  # the user AHEAD places on (this fit's or a later fit's)
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
            acc[:] = 0.0
            for s in range(S):
                r = idx[f, base + s]
                cs = coef[s]
                if sampled:
                    for q in range(k):
                        c = j[tt, f, s, q]
                        g = _clip(cs * X[r, c] + lam * th[c], clip)
                        acc[c] += _report(kinds, params, edges, g, u[pos])
                        pos += 1
                else:
                    for c in range(d):
                        acc[c] += _clip(cs * X[r, c] + lam * th[c], clip)
            for c in range(d):
                step = acc[c] * scale if sampled else acc[c] / S
                th[c] = th[c] - eta * step
    return pos
