"""Fused per-user samplers: the mechanisms' numpy samplers as one compiled pass each.

A numpy sampler makes several passes over its block (about 1 ms per 10⁶ users each); the fused
loop in ``_jit`` makes one, reading the same uniforms in the same order and repeating the numpy
sampler's floating-point operations in the same order, so its outputs are bit-identical
(``tests/test_mechanism_kernels.py``). Only the built-in samplers have a fused form; any other
mechanism (a plugin, a subclass overriding its sampler) runs its numpy code.

``numba`` is imported on the first fused call, not with the package, so jobs that never perturb
do not pay its import. Set ``LDPREPRO_JIT=0`` to run the numpy samplers instead (same outputs,
slower), e.g. where numba cannot compile.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np

#: Sampler kinds understood by ``_jit._sample_one`` (kept equal to its constants).
PIECEWISE, BINARY, THREE_OUTPUTS, DCT_ONE_UNIFORM = 0, 1, 2, 3

#: A fused block sampler: ``fused(x_block, rng, out_block)`` writes the block's outputs and
#: returns True, or False if an input lies outside [−1, 1] (the outputs are then meaningless).
Fused = Callable[[np.ndarray, np.random.Generator, np.ndarray], bool]

_loops = None


def enabled() -> bool:
    """Whether fused samplers are used (``LDPREPRO_JIT`` unset or not "0")."""
    return os.environ.get("LDPREPRO_JIT", "1") != "0"


def loops():
    """The compiled loops (``_jit``), imported on first use."""
    global _loops
    if _loops is None:
        from ldprepro.domain.mechanisms import _jit

        _loops = _jit
    return _loops


def _params(values) -> np.ndarray:
    return np.asarray(values, dtype=np.float64)


def single(kind: int, params) -> Fused:
    """Fused form of ``Mechanism._perturb_block`` for a one-uniform ``_sample``."""
    p = _params(params)

    def fused(x, rng, out):
        return loops().single(kind, p, x, rng.random(x.size), out)

    return fused


def discretised(kind: int, params, step: float) -> Fused:
    """Fused form of ``Discretized._perturb_block``: base uniforms, then rounding uniforms."""
    p = _params(params)
    h = float(step)

    def fused(x, rng, out):
        u = rng.random(x.size)
        v = rng.random(x.size)
        return loops().discretised(kind, p, h, x, u, v, out)

    return fused


def mixture(edges: np.ndarray, branches: list[tuple[int, tuple, bool, float]]) -> Fused:
    """Fused form of ``Mixture._perturb_block``. ``branches[j]`` = (kind, params, fresh, step):
    ``fresh`` False samples from the branch uniform rescaled to the branch's interval; True
    draws the branch's own uniforms after the branch uniforms, in branch order (then, when
    ``step`` > 0, its rounding uniforms: a discretised branch)."""
    kinds = np.array([b[0] for b in branches], dtype=np.int64)
    width = max(len(b[1]) for b in branches)
    params = np.zeros((len(branches), width))
    for j, b in enumerate(branches):
        params[j, : len(b[1])] = b[1]
    fresh = np.array([1 if b[2] else 0 for b in branches], dtype=np.int64)
    steps = np.array([float(b[3]) for b in branches])
    edges = np.asarray(edges, dtype=np.float64)
    empty = np.empty(0)
    fresh_first = len(branches) == 2 and fresh[0] == 1 and fresh[1] == 0

    def fused(x, rng, out):
        jit = loops()
        u = rng.random(x.size)
        if fresh_first:  # the common case (discretised HM, HM-TP): index the first branch
            first = np.flatnonzero(u < edges[1])
            fresh_u = rng.random(first.size)
            fresh_v = rng.random(first.size) if steps[0] > 0 else fresh_u
            p0, p1 = params
            return jit.mixture_two_fresh_first(
                kinds[0], kinds[1], p0, p1, steps[0], edges[1], x, u, first, fresh_u, fresh_v, out
            )
        offsets = np.zeros(len(branches), dtype=np.int64)
        fresh_u = fresh_v = empty
        if fresh.any():
            counts = np.zeros(len(branches), dtype=np.int64)
            jit.branch_counts(u, edges, counts)
            parts_u, parts_v, total = [], [], 0
            for j in np.flatnonzero(fresh):
                offsets[j] = total
                n_j = int(counts[j])
                total += n_j
                parts_u.append(rng.random(n_j))
                parts_v.append(rng.random(n_j) if steps[j] > 0 else np.zeros(n_j))
            spare = np.full(1, 0.5)  # read, never used, when a branch has no users left
            fresh_u, fresh_v = np.concatenate([*parts_u, spare]), np.concatenate([*parts_v, spare])
        return jit.mixture(kinds, params, edges, fresh, steps, offsets, x, u, fresh_u, fresh_v, out)

    return fused


def laplace(scale: float) -> Fused:
    """Fused form of ``Laplace._perturb_block`` (``exponential.laplace_block``: one 64-bit word
    per user; the few words outside their layer's rectangle finished with the numpy path's draws
    and exponentials)."""
    from ldprepro.domain.mechanisms import exponential

    scale = float(scale)
    table = exponential.tables()

    def fused(x, rng, out):
        slow, slow_e = np.empty(x.size, dtype=np.int64), np.empty(x.size)  # only ~2 % of them written
        jit = loops()
        w = exponential.words(rng, x.size)
        ok, k = jit.laplace_words(x, w, table.ke, table.we, scale, out, slow, slow_e)
        if k:
            u, fresh = exponential.slow_draws(rng, k)
            e = slow_e[:k]
            exp_minus_e = np.exp(-e)
            jit.laplace_finish(x, w, slow[:k], e, exp_minus_e, u, fresh, table.fe, table.gap, exponential.R, scale, out)
        return ok

    return fused


def dct(keep: float, inv_keep: float, inv_replace: float, d: float, m: float) -> Fused:
    """Fused form of ``DCT._perturb_block`` (two bits per user, then one uniform per user)."""
    inv_gap = inv_replace - inv_keep

    def fused(x, rng, out):
        bits = np.unpackbits(np.frombuffer(rng.bytes((2 * x.size + 7) // 8), dtype=np.uint8))
        u = rng.random(x.size)
        return loops().dct(x, u, bits, keep, inv_keep, inv_gap, d, m, out)

    return fused
