"""The mechanism interface shared by every numeric LDP mechanism.

A mechanism at a given ε is a frozen object, in the spirit of ``scipy.stats`` frozen
distributions: you can sample it (``perturb``), ask for its conditional variance and its exact
output probabilities. Inputs are numpy arrays in [-1, 1]; all randomness comes from the
``numpy.random.Generator`` passed in.

Exact probabilities. The output law of every mechanism here is a mixture of a finite set of atoms
(``support()`` and ``pmf(x)``) and an absolutely continuous part (``pdf(y, x)``). Purely discrete
mechanisms have ``pdf == 0``; purely continuous ones have an empty support. Because the two parts
are mutually singular, the ε-LDP ratio is checked separately on each: for every pair of inputs,
``pmf`` ratios over atoms and ``pdf`` ratios over outputs must stay ≤ e^ε. ``logpmf`` and
``logpdf`` give the same probabilities in log space: at large ε some of them (e.g. e^{−3ε/2} in
HM) are below the smallest double, so ratios are checked as differences of logs.

Numerical range. Every 1-D mechanism accepts ε ∈ [EPS_MIN, EPS_MAX] = [1e-6, 700] and is exact on
all of it: constants are written in e^{−ε} (``expm1``, ``log1p``, ``logaddexp``) so that nothing
overflows or cancels, and the property tests (tests/test_mechanisms_extreme_eps.py) check
unbiasedness, variance, finiteness and the exact ε-LDP ratio over the whole range. Outside it
``get_mechanism`` raises: above 700, e^ε (the likelihood ratio every test and audit compares
with) is within 1.3% of the largest double; below 1e-6 the variances (~1/ε²) are beyond anything
a sample could check. The config schema carries the same bounds for every ε list.
"""

from __future__ import annotations

import math
import numbers
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from ldprepro.domain.mechanisms import kernels

EMPTY = np.empty(0)

#: Users processed per block: small enough for the temporaries to stay in cache (measured 2-3x
#: faster than whole-array passes at n = 10^6), large enough to amortise Python overhead.
#: The random stream is consumed block by block, so outputs depend only on (seed, input).
CHUNK = 1 << 15

#: Inputs smaller than this run the numpy sampler even where a fused one exists (the outputs are
#: the same): a job that only perturbs a handful of values never imports numba (~0.3 s).
FUSED_MIN_SIZE = 4096


#: The ε range on which every 1-D mechanism is tested to be numerically exact (module docstring).
EPS_MIN, EPS_MAX = 1e-6, 700.0


def _real(eps, what: str) -> float:
    """``eps`` as a float if it is a real number (not a string, bool or None), else TypeError."""
    if isinstance(eps, (bool, np.bool_)) or not isinstance(eps, numbers.Real):
        raise TypeError(f"{what} must be a real number, got {eps!r} ({type(eps).__name__})")
    return float(eps)


def check_eps(eps: float, name: str = "eps") -> float:
    eps = _real(eps, name)
    if not math.isfinite(eps) or eps <= 0:
        raise ValueError(f"{name} must be a finite positive number, got {eps!r}")
    return eps


def check_mechanism_eps(eps, mechanism: str) -> float:
    """ε for the 1-D mechanism ``mechanism``: a real number in [EPS_MIN, EPS_MAX], else an error
    naming the mechanism, the value and the bound."""
    value = _real(eps, f"{mechanism}: eps")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{mechanism}: eps must be a finite positive number, got {eps!r}")
    if not EPS_MIN <= value <= EPS_MAX:
        raise ValueError(
            f"{mechanism}: eps = {value!r} is outside the supported range [{EPS_MIN:g}, {EPS_MAX:g}] "
            f"(the range on which the mechanisms are verified to be numerically exact; above "
            f"{EPS_MAX:g} the likelihood ratio e^eps is no longer a representable double)"
        )
    return value


def as_input(x, lo: float = -1.0, hi: float = 1.0) -> np.ndarray:
    """Convert to a float array and check it lies in [lo, hi] (NaN rejected)."""
    x = np.asarray(x, dtype=float)
    if x.size:
        xmin, xmax = x.min(), x.max()
        if not (lo <= xmin and xmax <= hi):  # also catches NaN
            bad = float(x[~((x >= lo) & (x <= hi))].ravel()[0])  # a plain float: "got 1.2", not np.float64(1.2)
            raise ValueError(f"mechanism input must lie in [{lo}, {hi}], got {bad!r}")
    return x


@dataclass(frozen=True)
class UniformMixture:
    """An output law that is a mixture of two uniforms (``Mechanism.uniform_mixture``): with
    probability ``q``, the same for every input t, uniform on [−half_range, half_range] (the
    background); otherwise uniform on the window [slope·t + offset, slope·t + offset + width), whose
    width does not depend on t. The sum of many users' reports then has an exact law that needs no
    draw per user (``ldprepro.domain.uniform_sum``)."""

    q: float
    half_range: float
    slope: float
    offset: float
    width: float


def samples_as(mech, cls, names: tuple[str, ...] = ("perturb", "_perturb_block", "_sample")) -> bool:
    """Whether ``mech`` samples with ``cls``'s own methods ``names`` (no subclass, e.g. a plugin,
    replaced one of them and with it, possibly, the law)."""
    own = type(mech)
    return isinstance(mech, cls) and all(getattr(own, n) is getattr(cls, n) for n in names)


class Mechanism(ABC):
    """A numeric ε-LDP mechanism on inputs in [-1, 1] with unbiased output.

    Subclasses implement ``_sample(x, u, lo, width)``: the output for inputs ``x`` given one
    independent uniform per input, namely (u − lo)/width (inverse-CDF sampling; ``u`` is never
    modified), and may override ``_perturb_block`` with a faster sampler of the same law (Laplace,
    DCT, mixtures; the tests compare the two). Every sampler is exact up to the 2^-53 grid of
    ``Generator.random``: outcomes rarer than that are not resolved.
    """

    name: str = "mechanism"
    #: True when every output is an atom (finite output set).
    discrete: bool = False
    #: True when the output law has an absolutely continuous part.
    continuous: bool = True
    #: Users per block in ``perturb`` (the random stream is consumed block by block).
    block_users: int = CHUNK

    def __init__(self, eps: float):
        self.eps = check_mechanism_eps(eps, self.name)
        #: a = e^ε, e^{−ε} and 1 − e^{−ε} (exact via expm1 for small ε).
        self.a = math.exp(self.eps)
        self.ie = math.exp(-self.eps)
        self.em = -math.expm1(-self.eps)

    # --- sampling ---------------------------------------------------------------------------
    def perturb(self, x, rng: np.random.Generator) -> np.ndarray:
        """Perturb every entry of ``x`` independently; returns a float array of the same shape."""
        x = np.asarray(x, dtype=float)
        flat = np.ascontiguousarray(x).reshape(-1)
        out = np.empty_like(flat)
        fused = self._fused_sampler() if flat.size >= FUSED_MIN_SIZE and kernels.enabled() else None
        for start in range(0, flat.size, self.block_users):
            block = flat[start : start + self.block_users]
            if fused is None:
                out[start : start + block.size] = self._checked_block(as_input(block), rng)
            elif not fused(block, rng, out[start : start + block.size]):
                as_input(block)  # raises the error naming the first invalid input
        return out.reshape(x.shape)

    def _checked_block(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """``_perturb_block``'s outputs, refused (an error naming the mechanism) unless they are one
        finite float per input: a plugin's NaN or misshapen output never reaches a result."""
        y = self._perturb_block(x, rng)
        if isinstance(y, np.ndarray) and y.shape == x.shape and y.dtype == float and np.isfinite(y).all():
            return y
        from ldprepro.domain.mechanisms.output_check import check_output

        return check_output(self, x, y)

    def _perturb_block(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Outputs for a 1-D block of valid inputs (override for several draws per user)."""
        return self._sample(x, rng.random(x.shape))

    def _sample(self, x: np.ndarray, u: np.ndarray, lo: float = 0.0, width: float = 1.0) -> np.ndarray:
        """Output for inputs ``x`` given the uniforms (u − lo)/width (inverse CDF)."""
        raise NotImplementedError(f"{self.name} has no single-uniform sampler; use perturb()")

    def uniform_mixture(self) -> UniformMixture | None:
        """The output law as a :class:`UniformMixture`, when it is one and this object's sampler
        draws it (PM and its family, DCT); None otherwise (the default). A mean estimate on many
        users then draws the sum of their reports exactly (``ldprepro.domain.uniform_sum``)."""
        return None

    @property
    def single_uniform(self) -> bool:
        """True when ``_sample`` (one uniform per user) is implemented."""
        return type(self)._sample is not Mechanism._sample

    # --- compiled samplers: what code outside the mechanism (SGD's compiled steps) may run -------
    def sample_kernel(self) -> tuple[int, tuple] | None:
        """The compiled twin of the one-uniform sampler ``_sample``: ``(kind, params)``, with
        ``kind`` a sampler constant of ``mechanisms.kernels`` (run by ``_jit._sample_one``) and
        ``params`` its parameters, such that the compiled sampler given the same uniform returns
        the same output as ``_sample`` (bit for bit). Compiled code that hands a mechanism one
        uniform per user (a mixture's branch, SGD's compiled steps) calls this.

        None when no compiled twin is declared: the mechanism has no ``_sample`` (mixtures,
        discretised mechanisms), its ``_sample`` has no twin (Laplace), or a subclass overrides
        ``_sample`` (a plugin, unless it declares a twin); callers then run the numpy sampler.
        Subclasses declare the twin by overriding ``_sample_kernel``."""
        return self._sample_kernel()

    def block_kernel(self) -> tuple[int, tuple, float] | None:
        """The compiled form of ``_perturb_block`` (what ``perturb`` runs on each block of users):
        ``(kind, params, h)`` when it is "one uniform per user into the compiled sampler ``(kind,
        params)`` of :meth:`sample_kernel`, then, if h > 0, Algorithm 5's rounding to the grid of
        step h with a second uniform per user" (a plain or a discretised mechanism); h = 0 means
        no rounding.

        None when ``_perturb_block`` draws otherwise (Laplace's exponential and sign, DCT's bits
        and uniform, a mixture's branches, a subclass's override) or when there is no compiled
        sampler to feed (:meth:`sample_kernel` None, or, for a discretised mechanism, none behind
        its base); callers then run the numpy sampler. Subclasses declare it by overriding
        ``_block_kernel``."""
        return self._block_kernel()

    # --- fused samplers (kernels.py): the same outputs as the numpy samplers, in one pass -------
    def _sample_kernel(self) -> tuple[int, tuple] | None:
        """(kind, params) of the compiled twin of ``_sample`` in ``_jit._sample_one``, if any
        (the hook behind :meth:`sample_kernel`)."""
        return None

    def _block_kernel(self) -> tuple[int, tuple, float] | None:
        """(kind, params, rounding step) when ``_perturb_block`` is "one uniform per user into
        ``_sample``'s twin, then (step > 0) Algorithm 5's rounding with a second uniform" (the
        hook behind :meth:`block_kernel`)."""
        if type(self)._perturb_block is Mechanism._perturb_block and self.single_uniform:
            spec = self.sample_kernel()
            if spec is not None:
                return (*spec, 0.0)
        return None

    def _fused(self) -> kernels.Fused | None:
        """The fused form of ``_perturb_block`` (None: the numpy sampler runs)."""
        spec = self.block_kernel()
        if spec is None:
            return None
        kind, params, step = spec
        return kernels.discretised(kind, params, step) if step > 0 else kernels.single(kind, params)

    def _fused_sampler(self) -> kernels.Fused | None:
        """``_fused()``, built once per mechanism object."""
        try:
            return self.__dict__["_fused_cache"]
        except KeyError:
            fused = self.__dict__["_fused_cache"] = self._fused()
            return fused

    # --- moments ----------------------------------------------------------------------------
    @abstractmethod
    def variance(self, x) -> np.ndarray:
        """Theoretical Var[output | input = x] (the output is unbiased: E[output | x] = x)."""

    def worst_case_variance(self) -> float:
        """max over x in [-1, 1] of ``variance(x)``.

        Default: dense grid plus a bounded refinement around the best grid point. Subclasses with
        a closed form override this.
        """
        return _maximise_on_unit_interval(self.variance)

    def output_bounds(self) -> tuple[float, float]:
        """Smallest interval containing every possible output (over all inputs)."""
        return (-math.inf, math.inf)

    # --- exact probabilities ------------------------------------------------------------------
    def support(self) -> np.ndarray:
        """The atoms of the output law (input-independent superset), sorted."""
        return EMPTY

    def pmf(self, x) -> np.ndarray:
        """P(output = support()[j] | x) as an array of shape ``x.shape + (len(support),)``."""
        x = np.asarray(x, dtype=float)
        return np.zeros(x.shape + (0,))

    def pdf(self, y, x) -> np.ndarray:
        """Density of the absolutely continuous part at ``y`` given ``x`` (broadcast)."""
        return np.zeros(np.broadcast(np.asarray(y), np.asarray(x)).shape)

    def logpmf(self, x) -> np.ndarray:
        """log ``pmf(x)``, exact where ``pmf`` underflows (override); −inf for impossible atoms."""
        with np.errstate(divide="ignore"):
            return np.log(self.pmf(x))

    def logpdf(self, y, x) -> np.ndarray:
        """log ``pdf(y, x)``, exact where ``pdf`` underflows (override); −inf outside the support."""
        with np.errstate(divide="ignore"):
            return np.log(self.pdf(y, x))

    def density_pieces(self, x) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """The continuous part as pieces ``(lo, hi, density)`` with constant density, if it is
        piecewise constant (used by exact discretisation); arrays broadcast with ``x``."""
        raise NotImplementedError(f"{self.name} has no piecewise-constant density")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(eps={self.eps:g})"


def _maximise_on_unit_interval(f, grid_size: int = 4001) -> float:
    """max of a continuous, vectorised f on [-1, 1]: dense grid, then a bounded refinement."""
    grid = np.linspace(-1.0, 1.0, grid_size)
    values = np.asarray(f(grid), dtype=float)
    i = int(np.argmax(values))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid_size - 1)]
    from scipy import optimize  # lazy: a job that never calls this does not pay scipy's import

    res = optimize.minimize_scalar(
        lambda t: -float(f(np.array(t))), bounds=(lo, hi), method="bounded", options={"xatol": 1e-12}
    )
    return float(max(values[i], -res.fun))


class Mixture(Mechanism):
    """With probability ``weights[i]`` run ``components[i]`` (all at the same ε; weights do not
    depend on the input, so the mixture inherits ε-LDP). All components must be unbiased.

    Sampling draws one uniform u per user: branch i serves the users with u in
    [edges[i], edges[i+1]) (so the branch sizes are multinomial(n, weights)). Given its branch,
    u is uniform on that interval, so a component with a one-uniform sampler (``_sample``) takes
    (u − edges[i])/weight as its own uniform: one draw per user in all, exact up to the 2^-53
    grid of u like every sampler here. A component without one (a discretised branch) runs its
    own sampler on its users with fresh draws, after the branch draws. No component is evaluated
    on users it does not serve.
    """

    def __init__(self, eps: float, components: list[Mechanism], weights: list[float], name: str):
        self.name = name
        super().__init__(eps)
        weights = np.asarray(weights, dtype=float)
        if len(components) != len(weights) or not np.isclose(weights.sum(), 1.0) or (weights < 0).any():
            raise ValueError(f"bad mixture weights {weights.tolist()} for {name}")
        keep = weights > 0
        self.components = [c for c, k in zip(components, keep) if k]
        self.weights = weights[keep]
        self._log_weights = np.log(self.weights)
        self.discrete = all(c.discrete for c in self.components)
        self.continuous = any(c.continuous for c in self.components)
        # Branch i serves the users whose uniform lies in [edges[i], edges[i+1]).
        self._edges = np.concatenate([[0.0], np.cumsum(self.weights)])
        self._edges[-1] = 1.0
        atoms = [c.support() for c in self.components]
        self._support = np.unique(np.concatenate(atoms)) if atoms else EMPTY

    def _perturb_block(self, x, rng):
        if len(self.components) == 1:
            return self.components[0]._perturb_block(x, rng)
        u = rng.random(x.shape)
        out = np.empty(x.shape)
        which = np.searchsorted(self._edges[1:-1], u, side="right")
        fresh = []
        for i, c in enumerate(self.components):
            idx = np.flatnonzero(which == i)
            if not idx.size:
                continue
            if c.single_uniform:
                lo = self._edges[i]
                out[idx] = c._sample(x[idx], u[idx], lo, self._edges[i + 1] - lo)
            else:
                fresh.append((c, idx))
        for c, idx in fresh:
            out[idx] = c._perturb_block(x[idx], rng)
        return out

    def _fused(self):
        if len(self.components) == 1:
            return self.components[0]._fused_sampler()
        if type(self)._perturb_block is not Mixture._perturb_block:
            return None
        branches = []
        for c in self.components:
            spec = c.sample_kernel() if c.single_uniform else c.block_kernel()
            if spec is None:
                return None
            if c.single_uniform:
                branches.append((spec[0], spec[1], False, 0.0))
            else:
                branches.append((spec[0], spec[1], True, spec[2]))
        return kernels.mixture(self._edges, branches)

    def variance(self, x):
        # Every component is unbiased, so the between-branch variance is 0 (law of total
        # variance): Var = Σ w_i Var_i, with no cancellation against x² at large ε.
        x = np.asarray(x, dtype=float)
        return sum(w * c.variance(x) for c, w in zip(self.components, self.weights))

    def output_bounds(self):
        bounds = [c.output_bounds() for c in self.components]
        return (min(b[0] for b in bounds), max(b[1] for b in bounds))

    def support(self):
        return self._support

    def pmf(self, x):
        x = np.asarray(x, dtype=float)
        out = np.zeros(x.shape + (len(self._support),))
        for c, w in zip(self.components, self.weights):
            s = c.support()
            if len(s):
                idx = np.searchsorted(self._support, s)
                out[..., idx] += w * c.pmf(x)
        return out

    def logpmf(self, x):
        x = np.asarray(x, dtype=float)
        out = np.full(x.shape + (len(self._support),), -np.inf)
        for c, lw in zip(self.components, self._log_weights):
            s = c.support()
            if len(s):
                idx = np.searchsorted(self._support, s)
                out[..., idx] = np.logaddexp(out[..., idx], lw + c.logpmf(x))
        return out

    def pdf(self, y, x):
        return sum(w * c.pdf(y, x) for c, w in zip(self.components, self.weights))

    def logpdf(self, y, x):
        shape = np.broadcast(np.asarray(y), np.asarray(x)).shape
        out = np.full(shape, -np.inf)
        for c, lw in zip(self.components, self._log_weights):
            if c.continuous:
                out = np.logaddexp(out, lw + c.logpdf(y, x))
        return out
