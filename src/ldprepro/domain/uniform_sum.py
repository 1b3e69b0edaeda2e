"""The exact law of a sum of reports that are mixtures of uniforms, drawn without a draw per user.

PM and its family (docs/papers/ldpfl.md §3) and DCT (docs/papers/dct.md §2) report, given the input
t (``Mechanism.uniform_mixture``):

- with probability q, the same for every t, a value uniform on [−A, A] (the background);
- otherwise a value uniform on the window [s·t + o, s·t + o + w), whose width w is the same for
  every t.

(PM: its density p on the window and p/a elsewhere on [−A, A] is the density p/a on all of [−A, A],
mass q = 2A·p/a, plus the excess p − p/a on the window, mass 1 − q. DCT: q = 0 and the window is
[t − d, t + d).) A mean estimate needs only the sum of the n reports. Each user is background
independently with the same probability q, so the M background users are M ~ Binomial(n, q) of
them, a uniformly random M-subset; the background reports are A·(2U − 1) and a window report is
s·t + o + w/2 + (w/2)(2U − 1), with U uniform on [0, 1) and independent of everything else. Hence

    Σ_i y_i = A·C(M) + s·Σ_{window users} t_i + (o + w/2)(n − M) + (w/2)·C(n − M),

where C(m) is a sum of m independent centred uniforms 2U − 1.

**C(m) exactly** (:func:`centred_uniform_sums`). ``Generator.random`` returns K·2⁻⁵³ with K uniform
on {0, …, 2⁵³ − 1}, whose 53 bits are independent fair coins. So Σ_{i<m} K_i = Σ_b 2^b·B_b with
B_b ~ Binomial(m, ½) independent, and Σ_{i<m} (2U_i − 1) = 2⁻⁵³·(Σ_b 2^b(2B_b − m) − m): 53
binomial draws give the law of m calls of ``Generator.random`` exactly, summed in integer arithmetic
and rounded once (the per-user sampler rounds at every addition).

**The window users' Σ t_i** (:func:`subset_sum`). The smaller of the two sets, background or window,
is drawn as a uniformly random subset: uniform indices (``Generator.integers``), an index already
taken skipped, until the subset is complete (given that an index is new, it is uniform on the users
not yet taken, so the subset is uniform). The window's Σ t is then that subset's sum or Σ t minus
it. Cost: about min(q, 1 − q)·n index draws (PM: q = e^{−ε/2}, so 5 % of the users at ε = 0.1, 39 %
at ε = 1, 0.7 % at ε = 10; DCT: none) instead of a uniform and a sample per user.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ldprepro.domain.mechanisms import kernels
from ldprepro.domain.mechanisms.base import UniformMixture, as_input
from ldprepro.domain.random_bits import BITS_PER_UNIFORM, LOWER_BITS, SELECT_BITS, below_after_tie, random_bytes

#: The smaller of background and window is drawn as a subset when it is at most this share of the
#: users (min(q, 1 − q)), else every user's side by a byte (:func:`select_sum`). At 10⁶ users a
#: subset costs about 5 ns per member (a uniform integer, then a value read from anywhere in
#: memory), the bytes about 0.8 ns per user (measured on this project's machine, AMD EPYC; PM's
#: per-user sampler: 3.2 ns). A constant, never a measurement at run time: the random stream must
#: not depend on the machine.
SUBSET_SHARE_UP_TO = 0.1


def centred_uniform_sums(counts, rng: np.random.Generator) -> np.ndarray:
    """For each m in ``counts``, one draw of Σ_{i<m} (2U_i − 1), U_i independent ``Generator.random``
    uniforms, exactly (module docstring): one array of 53 binomials per count."""
    counts = np.asarray(counts, dtype=np.int64).reshape(-1)
    if np.any(counts < 0):
        raise ValueError(f"a sum of uniforms needs a count >= 0, got {int(counts.min())}")
    bits = rng.binomial(np.repeat(counts, BITS_PER_UNIFORM), 0.5).reshape(counts.size, BITS_PER_UNIFORM)
    out = np.empty(counts.size)
    for j, m in enumerate(counts.tolist()):
        # Σ_b 2^b(2B_b − m) − m in exact (Python) integers, then one rounding and an exact scaling
        numerator = sum((2 * int(b) - m) << k for k, b in enumerate(bits[j].tolist())) - m
        out[j] = math.ldexp(float(numerator), -BITS_PER_UNIFORM)
    return out


def subset_sum(values: np.ndarray, k: int, rng: np.random.Generator) -> float:
    """Σ of ``values`` over a uniformly random k-subset of its indices (module docstring), for
    0 ≤ k ≤ len(values)/2: uniform indices in batches, repeats skipped, summed in draw order."""
    n = values.size
    if not 0 <= 2 * k <= n:
        raise ValueError(f"subset_sum draws at most half of the {n} values, asked for {k}")
    taken = np.zeros(n, dtype=np.bool_)
    total, need = 0.0, k
    while need:
        free = n - (k - need)
        # about the expected number of draws for `need` new indices among `free` (coupon
        # collector), a little more so that one batch nearly always suffices; a function of
        # (n, k, need) only, so the random stream is the same on every machine
        batch = int(n * math.log(free / (free - need)) * 1.05) + 16
        got, total = _mark(rng.integers(0, n, size=batch), values, taken, need, total)
        need -= got
    return total


def select_sum(values: np.ndarray, rho: float, rng: np.random.Generator) -> tuple[int, float]:
    """Each of the users (``values``) selected independently with probability ρ: (how many, Σ of
    their values). User i is selected when her uniform K_i on 56 bits is below R = ρ·2⁵⁶ rounded to
    an integer (so with probability R·2⁻⁵⁶, within 2⁻⁵⁷ of ρ), compared byte by byte from the most
    significant: her first byte (one random byte per user) decides unless it equals R's,
    which happens with probability 1/256; only those users draw their six further bytes
    (``domain.random_bits``)."""
    from ldprepro.domain import _uniform_sum_jit

    n = values.size
    r = round(Fraction(float(rho)) * (1 << SELECT_BITS))
    if r <= 0:
        return 0, 0.0
    if r >= 1 << SELECT_BITS:
        return n, float(values.sum())
    first = random_bytes(n, rng)
    ties = np.empty(n, dtype=np.int64)
    loop = _uniform_sum_jit.select_by_byte if kernels.enabled() else _uniform_sum_jit.select_by_byte.py_func
    selected, total, undecided = loop(first, values, np.uint8(r >> LOWER_BITS), ties)
    if undecided:
        below = below_after_tie(np.full(undecided, r & ((1 << LOWER_BITS) - 1)), rng)
        chosen = ties[:undecided][below]
        selected += int(chosen.size)
        total += float(values[chosen].sum())
    return int(selected), float(total)


def _mark(idx, values, taken, need, total):
    """Walk ``idx`` in order; each index not yet taken is taken and its value added to ``total``,
    until ``need`` are taken: (how many were taken, total). Compiled unless LDPREPRO_JIT=0 (then
    the same loop in Python, same result)."""
    from ldprepro.domain import _uniform_sum_jit

    loop = _uniform_sum_jit.mark_new if kernels.enabled() else _uniform_sum_jit.mark_new.py_func
    return loop(idx, values, taken, need, total)


class UniformMixtureSum:
    """The sum of the reports of users with inputs ``x`` under a mechanism whose law is
    ``mixture``, drawn exactly (module docstring). Prepared once per data set; each :meth:`sample`
    is one independent draw."""

    def __init__(self, mixture: UniformMixture, x):
        self.mixture = mixture
        # inputs outside [−1, 1] (or NaN) are refused by name, as the per-user sampler refuses them
        self.t = np.ascontiguousarray(as_input(np.asarray(x, dtype=float)).reshape(-1))
        self.n = self.t.size
        self.total = float(self.t.sum())

    def sample(self, rng: np.random.Generator) -> float:
        """One draw of Σ_i y_i."""
        mix, n = self.mixture, self.n
        if mix.q <= 0.0:
            window, t_window = n, self.total
        elif min(mix.q, 1.0 - mix.q) <= SUBSET_SHARE_UP_TO:
            background = int(rng.binomial(n, mix.q))
            window = n - background
            if background <= window:
                t_window = self.total - subset_sum(self.t, background, rng)
            else:
                t_window = subset_sum(self.t, window, rng)
        else:
            window, t_window = select_sum(self.t, 1.0 - mix.q, rng)
        c_background, c_window = centred_uniform_sums([n - window, window], rng)
        half = 0.5 * mix.width
        return mix.half_range * c_background + mix.slope * t_window + (mix.offset + half) * window + half * c_window
