"""Multidimensional collection of a vector t ∈ [−1, 1]^d under a total budget ε.

- ``SampledMultiDim``: Wang et al. 2019 Alg. 4 / Zhao et al. Alg. 6 (docs/papers/ldpfl.md §11). Each user samples
  k = max(1, min(d, ⌊ε/2.5⌋)) distinct attributes uniformly, perturbs each with a 1-D mechanism at
  ε/k and reports (d/k)·M(t_j, ε/k) there, 0 elsewhere. Unbiased per coordinate (Lemma 12),
  Var[t*_j] = (d/k)(V_M(t_j; ε/k) + t_j²) − t_j².
- ``DuchiMultiDim``: Duchi et al.'s mechanism as in Wang et al. Alg. 3 (docs/papers/ldpfl.md §2.2), with the
  exactly unbiased and exactly ε-LDP ½-tie handling by default; ``ties="wang"`` reproduces the
  literal pseudo-code (ties in T−, Wang's even-d constant), which is biased and, for even d, not
  ε-LDP — kept only to reproduce the papers' baseline as run.
- ``LaplaceMultiDim``: Laplace with ε/d per attribute (scale 2d/ε).

``group_means(x, rng)`` returns the collector's mean of the reports of F groups of S users
(x of shape (F, S, d)) with exactly the law of ``perturb(x.reshape(-1, d)).reshape(F, S, d).mean(1)``
but from sufficient statistics where the mean depends only on them: the sampled mechanisms sum the
k sampled coordinates with ``bincount`` instead of averaging an n × d mostly-zero matrix, Laplace adds
b·(Γ(S) − Γ(S))/S per coordinate (``ldprepro.domain.sufficient``). Mean estimation (one group of n users)
and LDP-SGD (one group per fit and step) both use it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np

from ldprepro.domain.mechanisms import kernels
from ldprepro.domain.mechanisms.base import FUSED_MIN_SIZE, Mechanism, as_input, check_eps
from ldprepro.domain.mechanisms.basic import Laplace
from ldprepro.domain.random_bits import BITS_PER_UNIFORM, LOWER_BITS, SELECT_BITS, below_after_tie, random_bytes
from ldprepro.domain.sufficient import laplace_group_sum


def sampling_k(eps: float, d: int, divisor: float = 2.5) -> int:
    """k = max(1, min(d, ⌊ε/2.5⌋)) (Zhao Eq. (36), Wang et al. Alg. 4)."""
    return max(1, min(int(d), int(math.floor(eps / divisor))))


def _as_matrix(x, d: int) -> np.ndarray:
    x = as_input(x)
    if x.ndim != 2 or x.shape[1] != d:
        raise ValueError(f"expected an (n, {d}) array of user vectors, got shape {x.shape}")
    return x


def take_last(x: np.ndarray, j: np.ndarray) -> np.ndarray:
    """x[f, s, j[f, s, :]] for x of shape (F, S, d) and indices j of shape (F, S, k): one flat
    ``np.take`` (same result as ``np.take_along_axis(x, j, axis=2)``, with less overhead)."""
    F, S, d = x.shape
    flat = j + (np.arange(F * S, dtype=np.int64) * d).reshape(F, S, 1)
    return np.take(np.ascontiguousarray(x).reshape(-1), flat)


def _as_groups(x, d: int) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    if x.ndim != 3 or x.shape[2] != d or x.shape[1] < 1:
        raise ValueError(f"expected an (F, S, {d}) array of F groups of S >= 1 user vectors, got shape {x.shape}")
    return x


class MultiDimMechanism:
    """Common interface: ``perturb(X, rng)`` for X of shape (n, d); per-coordinate moments."""

    name: str = "multidim"

    def __init__(self, eps: float, d: int):
        self.eps = check_eps(eps)
        self.d = int(d)
        if self.d < 1:
            raise ValueError(f"dimension d must be >= 1, got {d!r}")

    def perturb(self, x, rng: np.random.Generator) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def variance(self, x) -> np.ndarray:  # pragma: no cover - abstract
        """Per-coordinate Var[t*_j | t] for inputs of shape (..., d)."""
        raise NotImplementedError

    def group_means(self, x, rng: np.random.Generator) -> np.ndarray:
        """(F, d) mean report of each of F groups of S users, x of shape (F, S, d). This default is
        the per-user path; subclasses replace it by exact sufficient statistics."""
        x = _as_groups(x, self.d)
        F, S, d = x.shape
        return self.perturb(x.reshape(F * S, d), rng).reshape(F, S, d).mean(axis=1)

    def mean_reporter(self, x):
        """A sampler of the mean report of the n users x (n, d), prepared once for the data:
        ``sample(rng)`` draws it (a mean estimate). The same law as ``group_means`` of one group,
        which it is here; a subclass may draw it more cheaply (the LDP-SGD steps keep
        ``group_means``, whose draws their compiled steps repeat)."""
        return _GroupMeanReports(self, np.asarray(x, dtype=float))

    def mean_report(self, x, rng: np.random.Generator) -> np.ndarray:
        """One draw of the mean report of the n users x (n, d) (``mean_reporter``)."""
        return self.mean_reporter(x).sample(rng)

    def __repr__(self):
        return f"{type(self).__name__}(eps={self.eps:g}, d={self.d})"


class SampledMultiDim(MultiDimMechanism):
    """Wang/Zhao attribute sampling around any 1-D mechanism factory ``make(eps) -> Mechanism``."""

    def __init__(
        self, make: Callable[[float], Mechanism], eps: float, d: int, k: int | None = None, name: str | None = None
    ):
        super().__init__(eps, d)
        self.k = sampling_k(self.eps, self.d) if k is None else int(k)
        if not 1 <= self.k <= self.d:
            raise ValueError(f"number of sampled attributes k must lie in [1, {self.d}], got {k!r}")
        self.mechanism = make(self.eps / self.k)
        self.scale = self.d / self.k
        self.name = name or self.mechanism.name

    def sample_attributes(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """(n, k) distinct attribute indices per user: a uniform k-subset of the d attributes.

        Floyd's algorithm (Bentley & Floyd, "A sample of brilliance", CACM 30(9), 1987), vectorised
        over users: for j = d−k, …, d−1 draw t uniform on {0, …, j} and take t unless already taken,
        else j. Every k-subset has probability 1/C(d, k), from k draws per user instead of d."""
        if self.k == 1:
            return rng.integers(0, self.d, size=(n, 1))
        if self.k == self.d:
            return np.broadcast_to(np.arange(self.d), (n, self.d))
        cols = np.empty((n, self.k), dtype=np.int64)
        if kernels.enabled():  # the same draws in one compiled pass (numpy's takes ~10 ns per index)
            return kernels.loops().floyd_subsets(rng, self.d, cols)
        for i, j in enumerate(range(self.d - self.k, self.d)):
            t = rng.integers(0, j + 1, size=n)
            if i:
                t = np.where((cols[:, :i] == t[:, None]).any(axis=1), j, t)
            cols[:, i] = t
        return cols

    def sampled_group_means(
        self,
        F: int,
        S: int,
        values_at: Callable[[np.ndarray], np.ndarray],
        rng: np.random.Generator,
        j: np.ndarray | None = None,
    ) -> np.ndarray:
        """(F, d) group means from the sampled coordinates only: ``values_at(j)`` returns the users'
        values at the (F, S, k) sampled attribute indices j. Sum per (group, attribute) by bincount;
        the law (and the random stream) is that of :meth:`perturb` followed by the group means.
        ``j`` may be given, drawn beforehand by :meth:`sample_attributes` (the choice of attributes
        does not depend on the values, so an SGD run draws those of many steps at once)."""
        d = self.d
        if j is None:
            j = self.sample_attributes(F * S, rng).reshape(F, S, self.k)
        reports = self.mechanism.perturb(np.asarray(values_at(j), dtype=float).reshape(-1), rng)
        flat = (np.arange(F)[:, None, None] * d + j).reshape(-1)
        sums = np.bincount(flat, weights=reports, minlength=F * d).reshape(F, d)
        return sums * (self.scale / S)

    def group_means(self, x, rng):
        x = _as_groups(x, self.d)
        F, S, _ = x.shape
        return self.sampled_group_means(F, S, lambda j: take_last(x, j), rng)

    def perturb(self, x, rng):
        x = _as_matrix(x, self.d)
        n = x.shape[0]
        idx = self.sample_attributes(n, rng)
        rows = np.arange(n)[:, None]
        out = np.zeros_like(x)
        out[rows, idx] = self.scale * self.mechanism.perturb(x[rows, idx], rng)
        return out

    def variance(self, x):
        x = np.asarray(x, dtype=float)
        return self.scale * (self.mechanism.variance(x) + x * x) - x * x


def sign_words(d: int) -> int:
    """Uniforms per user that carry the d random signs of Duchi's mechanism (one bit each)."""
    return -(-int(d) // BITS_PER_UNIFORM)


def signs_from_uniforms(u: np.ndarray, d: int) -> np.ndarray:
    """(n, d) int8 signs ±1 from (n, sign_words(d)) uniforms: sign c of a user is +1 iff bit
    c mod 53 of k = u[c // 53]·2⁵³ is set, so each sign is a fair coin, independent of the others
    (``_jit.duchi_md_group_means`` and the SGD steps read the same bits)."""
    k = (np.asarray(u, dtype=float) * float(1 << BITS_PER_UNIFORM)).astype(np.int64)
    c = np.arange(int(d))
    bits = (k[:, c // BITS_PER_UNIFORM] >> (c % BITS_PER_UNIFORM)) & 1
    # C order, as the other draws: numpy's group mean sums in memory order, bit for bit the kernels'
    return np.ascontiguousarray(np.where(bits == 1, 1, -1), dtype=np.int8)


def duchi_md_constant(d: int, ties: str = "half") -> float:
    """C_d of docs/papers/ldpfl.md §2.2: 2^{d−1}/C(d−1, ⌊(d−1)/2⌋) for ½-ties (any d); Wang's even-d constant
    (2^{d−1} + C(d, d/2)/2)/C(d−1, d/2) for the literal variant."""
    if ties == "wang" and d % 2 == 0:
        return (2 ** (d - 1) + math.comb(d, d // 2) / 2) / math.comb(d - 1, d // 2)
    return 2 ** (d - 1) / math.comb(d - 1, (d - 1) // 2)


class DuchiMultiDim(MultiDimMechanism):
    """Duchi et al.'s multidimensional mechanism (Wang et al. Alg. 3), output in {−B, B}^d."""

    name = "duchi"

    def __init__(self, eps: float, d: int, ties: str = "half"):
        super().__init__(eps, d)
        if ties not in ("half", "wang"):
            raise ValueError(f"ties must be 'half' (exact) or 'wang' (literal pseudo-code), got {ties!r}")
        self.ties = ties
        a = math.exp(self.eps)
        self.a = a
        self.B = duchi_md_constant(self.d, ties) * (a + 1.0) / (a - 1.0)

    def perturb(self, x, rng):
        """Per user: d uniforms for v (v_c = +1 w.p. ½ + ½t_c), one for the half (T+ w.p.
        e^ε/(e^ε + 1)), then the d uniform random signs s, which need one bit each: ½-ties reads
        them from ``sign_words(d)`` uniforms (53 bits each, ``signs_from_uniforms``); the literal
        variant draws one uniform per sign and redraws by rejection."""
        x = _as_matrix(x, self.d)
        n, d = x.shape
        v = np.where(rng.random((n, d)) < 0.5 + 0.5 * x, 1, -1).astype(np.int8)
        positive = rng.random(n) < self.a / (self.a + 1.0)  # u = 1: output from T+
        if self.ties == "half":
            s = signs_from_uniforms(rng.random((n, sign_words(d))), d)
            dot = np.einsum("ij,ij->i", s, v, dtype=np.int64)
            flip = np.where(positive, dot < 0, dot > 0)
            s[flip] *= -1
        else:
            s = np.where(rng.random((n, d)) < 0.5, 1, -1).astype(np.int8)
            s = self._literal(s, v, positive, rng)
        return self.B * s

    def group_means(self, x, rng):
        """The per-user path's group means (same draws, same outputs, summed in the same order),
        as one compiled pass (``_jit.duchi_md_group_means``) for the ½-ties variant."""
        x = _as_groups(x, self.d)
        F, S, d = x.shape
        if self.ties != "half" or not kernels.enabled() or F * S * d < FUSED_MIN_SIZE:
            return super().group_means(x, rng)
        flat = np.ascontiguousarray(x).reshape(F * S, d)
        u_v = rng.random((F * S, d))
        u_pos = rng.random(F * S)
        u_s = rng.random((F * S, sign_words(d)))
        out = np.empty((F, d))
        p_pos = self.a / (self.a + 1.0)
        if not kernels.loops().duchi_md_group_means(flat, u_v, u_pos, u_s, p_pos, self.B, S, out):
            as_input(flat)  # raises the error naming the first invalid input
        return out

    def mean_reporter(self, x):
        """From ``FUSED_MIN_SIZE`` coordinates on, with ½-ties and the compiled loops: v's coordinates
        from one random byte each (:class:`DuchiMeanReports`); else ``group_means``."""
        x = np.asarray(x, dtype=float)
        if self.ties != "half" or not kernels.enabled() or x.size < FUSED_MIN_SIZE:
            return super().mean_reporter(x)
        return DuchiMeanReports(self, x)

    def _literal(self, s, v, positive, rng):
        """Uniform over T+ = {z·v > 0} if u = 1, else over T− = {z·v ≤ 0} (rejection sampling)."""
        pending = np.ones(len(s), dtype=bool)
        while pending.any():
            idx = np.flatnonzero(pending)
            dot = np.einsum("ij,ij->i", s[idx], v[idx], dtype=np.int64)
            ok = np.where(positive[idx], dot > 0, dot <= 0)
            pending[idx[ok]] = False
            redo = idx[~ok]
            if len(redo):
                s[redo] = np.where(rng.random((len(redo), s.shape[1])) < 0.5, 1, -1)
        return s

    def output_probabilities(self, t) -> tuple[np.ndarray, np.ndarray]:
        """Exact law for one input t ∈ [−1,1]^d (small d): (outputs (2^d, d), probabilities)."""
        t = np.asarray(t, dtype=float)
        if t.shape != (self.d,) or self.d > 14:
            raise ValueError("exact enumeration needs a single input of length d <= 14")
        cube = np.array(list(itertools.product([-1, 1], repeat=self.d)), dtype=float)
        p_v = np.prod(np.where(cube > 0, 0.5 + 0.5 * t, 0.5 - 0.5 * t), axis=1)  # P(v | t)
        dots = cube @ cube.T  # [z, v]
        up, down = self.a / (self.a + 1.0), 1.0 / (self.a + 1.0)
        if self.ties == "half":
            n = 2.0**self.d
            g_plus = np.where(dots > 0, 2.0 / n, np.where(dots == 0, 1.0 / n, 0.0))
            g_minus = np.where(dots < 0, 2.0 / n, np.where(dots == 0, 1.0 / n, 0.0))
        else:
            pos, neg = dots > 0, dots <= 0
            g_plus = pos / pos.sum(axis=0, keepdims=True)
            g_minus = neg / neg.sum(axis=0, keepdims=True)
        p_z_given_v = up * g_plus + down * g_minus  # [z, v]
        return self.B * cube, p_z_given_v @ p_v

    def variance(self, x):
        """Per-coordinate variance B² − t_j² (exact for the unbiased ½-tie variant)."""
        x = np.asarray(x, dtype=float)
        return self.B**2 - x * x


class _GroupMeanReports:
    """``MultiDimMechanism.mean_reporter``'s default: ``group_means`` of the users as one group."""

    def __init__(self, mech: MultiDimMechanism, x: np.ndarray):
        self.mech, self.x = mech, x[None]

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        return self.mech.group_means(self.x, rng)[0]


class DuchiMeanReports:
    """The mean report of users x (n, d) under Duchi et al.'s mechanism (½-ties), with v's d
    coordinates drawn from one random byte each instead of a uniform each: v_c = +1 iff a uniform K
    on 56 bits is below R = rint((½ + ½x_c)·2⁵⁶), compared byte by byte from the most significant,
    so that the first byte decides unless it equals R's (one time in 256) and only then are the six
    further bytes drawn (``domain.random_bits``). P(v_c = +1) = R·2⁻⁵⁶, within 2⁻⁵⁷ of
    ½ + ½x_c (``perturb``'s uniforms: within 2⁻⁵³). Then, as ``perturb``, T+ or T− from a uniform
    and the random signs from the bits of ``sign_words(d)`` uniforms per user; the mean report is
    B times the exact integer sum of the reported signs, over n. R is computed once per data set."""

    def __init__(self, mech: DuchiMultiDim, x: np.ndarray):
        x = np.ascontiguousarray(_as_matrix(x, mech.d))
        self.mech, self.n, self.d = mech, x.shape[0], x.shape[1]
        r = np.rint((0.5 + 0.5 * x.reshape(-1)) * float(1 << SELECT_BITS)).astype(np.int64)
        self.top = (r >> LOWER_BITS).astype(np.int16)  # 0 … 256 (256: R = 2⁵⁶, every byte below)
        self.lower = r & ((1 << LOWER_BITS) - 1)

    def sample(self, rng) -> np.ndarray:
        n, d, mech = self.n, self.d, self.mech
        v = self.discretise(rng)
        u_pos = rng.random(n)
        u_s = rng.random((n, sign_words(d)))
        out = np.empty(d)
        kernels.loops().duchi_md_mean_from_signs(v, u_pos, u_s, mech.a / (mech.a + 1.0), mech.B, out)
        return out

    def discretise(self, rng) -> np.ndarray:
        """v (n × d, ±1): the first bytes of every coordinate's uniform, then the six further bytes
        of the undecided ones, in that order."""
        v = np.empty(self.n * self.d, dtype=np.int8)
        ties = np.empty(self.n * self.d, dtype=np.int64)
        undecided = kernels.loops().duchi_md_discretise_by_byte(random_bytes(v.size, rng), self.top, v, ties)
        if undecided:
            flat = ties[:undecided]
            v[flat] = np.where(below_after_tie(self.lower[flat], rng), 1, -1)
        return v.reshape(self.n, self.d)


class LaplaceMultiDim(MultiDimMechanism):
    """Laplace with budget ε/d on each attribute: scale 2d/ε, variance 8d²/ε² (docs/papers/ldpfl.md §1)."""

    name = "laplace"

    def __init__(self, eps: float, d: int):
        super().__init__(eps, d)
        self.mechanism = Laplace(self.eps / self.d)

    def perturb(self, x, rng):
        return self.mechanism.perturb(_as_matrix(x, self.d), rng)

    def group_means(self, x, rng):
        """Exact: mean of S reports t + Lap(b) is mean(t) + (Σ of S Lap(b))/S per coordinate, the sum
        drawn as ``sufficient.laplace_group_sum`` draws it (b·(Γ(S) − Γ(S)), or for S ≤ 3 the
        difference of two sums of S exponentials)."""
        x = _as_groups(x, self.d)
        F, S, d = x.shape
        return x.mean(axis=1) + laplace_group_sum(self.mechanism.scale, S, rng, (F, d)) / S

    def variance(self, x):
        return self.mechanism.variance(np.asarray(x, dtype=float))
