"""Compiled SGD steps of paper 000's graded collection (``graded_sgd.GradedSteps``; paper 000 Sec. 5
and 6.3, docs/papers/hiera.md §7), ``sample_one`` rule: numba, imported only when first needed.

Each transcribes ``GradedGradientCollector.aggregate_fits`` step by step, in its order of
operations and draws, on the users' gradients computed as ``_sgd_jit`` computes them (so it
differs from the numpy steps only in the rounding of xᵀθ; ``tests/test_sgd_kernels.py``):

- :func:`graded_steps`: per-user mechanisms with one uniform per report (PM, Harmony, at the base
  ε or at each level's budget) and graded Laplace v + Lap(2/ε_t) (``scales``: its standard
  Laplace draws × 2/ε_t of the component's level t);
- :func:`hiera_steps`: LHP users (Algorithm 3) and the HierA collector (Algorithm 5, count level,
  PLC by binomial thinning). Its draws depend on the values (the binomials thin the reports'
  counts), so it draws from the job's ``np.random.Generator`` itself, inside the loop: numba's
  Generator methods are numpy's algorithms on the same bit generator, so the stream is the one
  the numpy steps draw, call for call (``random``, ``integers``, ``binomial``).
"""

from __future__ import annotations

import numba
import numpy as np
from numba.np.random.generator_core import next_uint32

from ldprepro.domain._sgd_jit import _clip, _coefs, _eta
from ldprepro.domain.mechanisms._jit import _sample_one

jit = numba.njit(cache=True, nogil=True, error_model="numpy")


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _integer_below(bits, m):
    """``Generator.integers(0, m)`` for 1 ≤ m < 2³², as numpy draws it (``random_bounded_uint64_fill``:
    nothing for m = 1, else Lemire's method on the bit generator's 32-bit outputs); numba's own
    ``integers`` is the same draw, at several times the cost."""
    if m == 1:
        return 0
    prod = np.uint64(next_uint32(bits)) * np.uint64(m)
    leftover = prod & np.uint64(0xFFFFFFFF)
    if leftover < np.uint64(m):
        threshold = (np.uint64(0xFFFFFFFF) - np.uint64(m - 1)) % np.uint64(m)
        while leftover < threshold:
            prod = np.uint64(next_uint32(bits)) * np.uint64(m)
            leftover = prod & np.uint64(0xFFFFFFFF)
    return np.int64(prod >> np.uint64(32))


@jit
def graded_steps(
    X, y, idx, S, t_first, n_steps, theta, eta_1, n_iter, inv_sqrt_t, model, lam, clip, comp, u, side, kinds, params,
    per_level, scales,
):  # fmt: skip
    """Steps t_first … t_first + n_steps − 1 of every fit: at step t user s of fit f reports
    component comp[t − t_first, f, s] through the mechanism of its level side[row, comp]
    (``per_level``; ``*_at_level``) or the one mechanism (kinds[0]), each from one uniform; a step's
    F·S uniforms follow the previous step's and are consumed level after level, users in order
    within a level, as the per-level ``perturb`` calls draw them. With ``scales`` (k,) (graded
    Laplace), u holds standard Laplace draws, one per user in order, and the report is
    g + u·scales[level]. The step is the per-component sum × D/G. Returns the number of entries
    of u used."""
    F, d = theta.shape
    levels = kinds.size
    additive = scales.size > 0
    nxt = np.zeros(levels, dtype=np.int64)  # the next uniform of each level
    acc = np.zeros(d)
    coef = np.zeros(S)
    used = 0
    for tt in range(n_steps):
        t = t_first + tt
        base = (t - 1) * S
        if not per_level:
            nxt[0] = used
        else:
            nxt[:] = 0
            for f in range(F):
                for s in range(S):
                    nxt[side[idx[f, base + s], comp[tt, f, s]]] += 1
            start = used
            for lv in range(levels):
                count = nxt[lv]
                nxt[lv] = start
                start += count
        for f in range(F):
            eta = _eta(eta_1, n_iter, f, t, inv_sqrt_t)
            th = theta[f]
            _coefs(X, y, idx, th, f, base, S, F, model, coef)
            acc[:] = 0.0
            for s in range(S):
                r = idx[f, base + s]
                c = comp[tt, f, s]
                g = _clip(coef[s] * X[r, c] + lam * th[c], clip)
                if additive:
                    acc[c] += g + u[nxt[0]] * scales[side[r, c]]
                    nxt[0] += 1
                    continue
                lv = side[r, c] if per_level else 0
                acc[c] += _sample_one(kinds[lv], params[lv], g, u[nxt[lv]], 0.0, 1.0)
                nxt[lv] += 1
            for c in range(d):
                th[c] = th[c] - eta * (acc[c] * d / S)
        used += F * S
    return used


@jit
def hiera_steps(
    X, y, idx, S, t_first, n_steps, theta, eta_1, n_iter, inv_sqrt_t, model, lam, clip, comp, side, rng,
    grr_keep, keep_probs, merge, plc_keep, clip_estimate,
):  # fmt: skip
    """Steps t_first … t_first + n_steps − 1 of every fit with HierA (μ and the step-5 mode in
    ``merge``, ``hiera.merge_matrix``): user s of fit f reports component c = comp[t − t_first, f, s]
    of level l = side[row, c] through LHP, and the server estimates each component's mean from
    its reports' counts.

    Per step, as ``aggregate_fits`` → ``LHP.perturb`` → ``hiera_estimate_counts`` draw them: the
    F·S users' GRR keep uniforms, their other levels (``integers(0, k − 1)``, shifted past l), the
    discretisation uniforms (v* = +1 w.p. (1 + v)/2), the keep uniforms (kept w.p. p_{t*}); then,
    for each merge entry M[j, i] > 0 with i ≠ j (j outer, i inner), PLC's binomial thinning of the
    level-i counts to level j (``plc_convert_counts``: the +1 counts of every (fit, component), then
    the −1 counts, with keep probability ``plc_keep[i, j]``). Steps 6–7 (``hiera._step6``):
    m* = Σ_j S(V_j*) / Σ_j N_j, the calibrated counts clipped to [0, N] when ``clip_estimate``;
    the step is m*·n_c·D/G (0 for a component nobody reported)."""
    F, d = theta.shape
    k = keep_probs.size
    n = F * S
    v = np.empty(n)
    lv = np.empty(n, dtype=np.int64)
    t_star = np.empty(n, dtype=np.int64)
    u_keep = np.empty(n)
    disc = np.empty(n, dtype=np.bool_)
    counts = np.zeros((F, d, k, 2), dtype=np.int64)
    merged = np.zeros((F, d, k, 2), dtype=np.int64)
    n_c = np.zeros((F, d), dtype=np.int64)
    kp = np.zeros((F, d), dtype=np.int64)
    km = np.zeros((F, d), dtype=np.int64)
    coef = np.zeros(S)
    bits = rng.bit_generator
    for tt in range(n_steps):
        t = t_first + tt
        base = (t - 1) * S
        for f in range(F):  # every fit's values first: the draws of a step come after them
            th = theta[f]
            _coefs(X, y, idx, th, f, base, S, F, model, coef)
            for s in range(S):
                r = idx[f, base + s]
                c = comp[tt, f, s]
                v[f * S + s] = _clip(coef[s] * X[r, c] + lam * th[c], clip)
                lv[f * S + s] = side[r, c]
        # LHP (Algorithm 3): t* = GRR(l) at ε_l (frequency.grr_perturb), then v* (LHP.perturb)
        if k > 1:
            for i in range(n):
                u_keep[i] = rng.random()
            for i in range(n):
                other = _integer_below(bits, k - 1)
                if other >= lv[i]:
                    other += 1
                t_star[i] = lv[i] if u_keep[i] < grr_keep[lv[i]] else other
        else:  # element by element: an array assignment compiles numba's shape-error formatting
            for i in range(n):
                t_star[i] = lv[i]
        for i in range(n):
            disc[i] = rng.random() < (1.0 + v[i]) / 2.0
        counts[:] = 0
        n_c[:] = 0
        for f in range(F):
            for s in range(S):
                i = f * S + s
                keep = rng.random() < keep_probs[t_star[i]]
                c = comp[tt, f, s]
                counts[f, c, t_star[i], 1 if disc[i] == keep else 0] += 1
                n_c[f, c] += 1
        # Algorithm 5 step 5: V_j* = Σ_i M[j, i] copies of V_i converted to level j (PLC, Algorithm 4)
        merged[:] = 0
        for j in range(k):
            for i in range(k):
                mult = merge[j, i]
                if mult == 0:
                    continue
                if i == j:
                    for f in range(F):
                        for c in range(d):
                            merged[f, c, j, 0] += mult * counts[f, c, j, 0]
                            merged[f, c, j, 1] += mult * counts[f, c, j, 1]
                    continue
                q = plc_keep[i, j]
                for f in range(F):  # Bin(0, q) draws nothing: skipping it keeps the stream
                    for c in range(d):
                        kp[f, c] = rng.binomial(counts[f, c, i, 1], q) if counts[f, c, i, 1] else 0
                for f in range(F):
                    for c in range(d):
                        km[f, c] = rng.binomial(counts[f, c, i, 0], q) if counts[f, c, i, 0] else 0
                for f in range(F):
                    for c in range(d):
                        n_minus, n_plus = counts[f, c, i, 0], counts[f, c, i, 1]
                        merged[f, c, j, 0] += mult * (km[f, c] + (n_plus - kp[f, c]))
                        merged[f, c, j, 1] += mult * (kp[f, c] + (n_minus - km[f, c]))
        # steps 6-7, then θ ← θ − η·step
        for f in range(F):
            eta = _eta(eta_1, n_iter, f, t, inv_sqrt_t)
            th = theta[f]
            for c in range(d):
                if n_c[f, c] == 0:
                    step = 0.0
                else:
                    s_first = 0.0
                    s_rest = 0.0
                    total = 0
                    for lev in range(k):
                        if merged[f, c, lev, 0] == 0 and merged[f, c, lev, 1] == 0:
                            continue  # adds 0 to both sums
                        n2 = float(merged[f, c, lev, 0])
                        n1 = float(merged[f, c, lev, 1])
                        big_n = n1 + n2
                        p = keep_probs[lev]
                        n1s = (p * big_n - n2) / (2 * p - 1)
                        n2s = (p * big_n - n1) / (2 * p - 1)
                        if clip_estimate:
                            n1s = min(max(n1s, 0.0), big_n)
                            n2s = min(max(n2s, 0.0), big_n)
                        if lev == 0:
                            s_first = n1s - n2s
                        else:
                            s_rest += n1s - n2s
                        total += merged[f, c, lev, 0] + merged[f, c, lev, 1]
                    m = (s_first + s_rest) / total if total > 0 else 0.0  # nan_to_num(0/0)
                    step = m * n_c[f, c] * d / S
                th[c] = th[c] - eta * step
