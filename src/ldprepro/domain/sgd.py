"""Mini-batch LDP stochastic gradient descent (paper 002's LDP-FedSGD, Algorithm 1; paper 003 §4;
Wang et al. 2019's ERM) for linear regression, logistic regression and linear SVM.

Each user takes part in exactly one group (a single pass, so each user's privacy cost is ε):
for group r the server broadcasts θ, every user in the group computes her gradient of the
regularised loss, clips each coordinate to [−1, 1], perturbs the vector with a multidimensional
LDP mechanism (or not, for the non-private reference), and the server moves θ against the group
mean. A whole group's gradients are computed and perturbed as one matrix.

Losses (labels ±1 for classification), with regulariser (λ/2)‖θ‖²:
- linear:   (xᵀθ − y)²                    ∇ = 2(xᵀθ − y)x + λθ
- logistic: log(1 + exp(−y xᵀθ))          ∇ = −y x σ(−y xᵀθ) + λθ
- svm:      max(0, 1 − y xᵀθ)              ∇ = −y x [y xᵀθ < 1] + λθ
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

MODELS = ("linear", "logistic", "svm")


def gradients(model: str, theta: np.ndarray, X: np.ndarray, y: np.ndarray, lam: float) -> np.ndarray:
    """Per-user gradients, shape (n, d)."""
    margin = X @ theta
    if model == "linear":
        coef = 2.0 * (margin - y)
    elif model == "logistic":
        z = -y * margin
        coef = -y * np.exp(-np.logaddexp(0.0, -z))  # −y·σ(z), stable
    elif model == "svm":
        coef = np.where(y * margin < 1.0, -y, 0.0)
    else:
        raise ValueError(f"unknown model {model!r}; known: {MODELS}")
    return coef[:, None] * X + lam * theta[None, :]


def group_size(d: int, eps: float, rule: str = "d_log_d_over_eps2", fixed: int | None = None) -> int:
    """G = ⌈d·ln d / ε²⌉ (Wang et al.'s Ω(d log d/ε²) with constant 1 [I]), at least 1."""
    if rule == "fixed":
        return int(fixed)
    if rule == "d_log_d_over_eps2":
        return max(1, math.ceil(d * math.log(max(d, 2)) / eps**2))
    raise ValueError(f"unknown group-size rule {rule!r}")


def learning_rate(schedule: str, t: int, n_iter: int, eta0: float) -> float:
    """η_t: 'inv_sqrt_t' = η0/√t (HierA [R]); 'constant_inv_sqrt_T' = η0/√T; 'constant' = η0."""
    if schedule == "inv_sqrt_t":
        return eta0 / math.sqrt(t)
    if schedule == "constant_inv_sqrt_T":
        return eta0 / math.sqrt(max(n_iter, 1))
    if schedule == "constant":
        return eta0
    raise ValueError(f"unknown learning-rate schedule {schedule!r}")


def ldp_sgd(
    X: np.ndarray,
    y: np.ndarray,
    model: str,
    perturb: Callable | None,
    G: int,
    lam: float,
    schedule: str,
    eta0: float,
    rng: np.random.Generator,
    clip: float = 1.0,
    aggregate: Callable | None = None,
    side: np.ndarray | None = None,
) -> np.ndarray:
    """Single-pass mini-batch SGD; ``perturb(matrix, rng)`` privatises a group's clipped gradients
    (None: non-private) and the server averages them. Alternatively ``aggregate(matrix, side_rows,
    rng)`` returns the server's estimate of the group's mean gradient directly, given per-user side
    information ``side`` (rows aligned with X; e.g. the privacy level of each component, for
    collectors such as HierA that estimate from report counts). Users are shuffled once and split
    into ⌊n/G⌋ disjoint groups."""
    if perturb is not None and aggregate is not None:
        raise ValueError("give either perturb or aggregate, not both")
    n, d = X.shape
    theta = np.zeros(d)
    order = rng.permutation(n)
    n_iter = max(1, n // G) if G <= n else 1
    size = min(G, n)
    for t in range(1, n_iter + 1):
        idx = order[(t - 1) * size : t * size]
        g = np.clip(gradients(model, theta, X[idx], y[idx], lam), -clip, clip)
        if aggregate is not None:
            step = aggregate(g, side[idx], rng)
        else:
            step = (g if perturb is None else perturb(g, rng)).mean(axis=0)
        theta = theta - learning_rate(schedule, t, n_iter, eta0) * step
    return theta


class GroupGradients:
    """Clipped gradients of F groups of S users, computed on demand: ``full()`` the (F, S, d) matrix,
    ``at(j)`` only the coordinates j of shape (F, S, k) (what a sampling mechanism reports)."""

    def __init__(self, model: str, theta: np.ndarray, Xg: np.ndarray, yg: np.ndarray, lam: float, clip: float):
        self.theta, self.Xg, self.lam, self.clip = theta, Xg, lam, clip
        margin = np.matmul(Xg, theta[:, :, None])[..., 0]  # (F, S)
        if model == "linear":
            self.coef = 2.0 * (margin - yg)
        elif model == "logistic":
            self.coef = -yg * np.exp(-np.logaddexp(0.0, yg * margin))  # −y·σ(−y xᵀθ), stable
        elif model == "svm":
            self.coef = np.where(yg * margin < 1.0, -yg, 0.0)
        else:
            raise ValueError(f"unknown model {model!r}; known: {MODELS}")

    @property
    def shape(self) -> tuple[int, int, int]:
        return self.Xg.shape

    def full(self) -> np.ndarray:
        g = self.coef[..., None] * self.Xg
        g += self.lam * self.theta[:, None, :]
        return np.clip(g, -self.clip, self.clip, out=g)

    def at(self, j: np.ndarray) -> np.ndarray:
        from ldprepro.domain.mechanisms.multidim import take_last

        xj = take_last(self.Xg, j)
        th = self.theta[np.arange(self.theta.shape[0])[:, None, None], j]
        return np.clip(self.coef[..., None] * xj + self.lam * th, -self.clip, self.clip)


class _MeanCollector:
    """Non-private: the mean of the group's clipped gradients."""

    compiled = True
    draws_per_step = False

    def __call__(self, grads: GroupGradients, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return grads.full().mean(axis=1)

    def run_compiled(self, fits: _Fits, rng: np.random.Generator) -> bool:
        """All steps as compiled loops (``_sgd_jit.steps``); no randomness."""
        fits.run()
        return True


class _FullCollector:
    """A d-dimensional mechanism that perturbs every coordinate (``mechanism.group_means`` on
    the full clipped gradients): Duchi et al.'s mechanism, Laplace with ε/d per attribute."""

    def __init__(self, mechanism):
        self.mechanism = mechanism

    @property
    def compiled(self) -> bool:
        """Whether :meth:`run_compiled` runs: Duchi's mechanism (½-ties) or Laplace ε/d."""
        from ldprepro.domain.mechanisms.multidim import DuchiMultiDim, LaplaceMultiDim

        mech = self.mechanism
        return (type(mech) is DuchiMultiDim and mech.ties == "half") or type(mech) is LaplaceMultiDim

    draws_per_step = False  # Duchi: uniforms for runs of steps; Laplace ε/d: Gamma sums for runs of steps

    def __call__(self, grads: GroupGradients, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return self.mechanism.group_means(grads.full(), rng)

    def run_compiled(self, fits: _Fits, rng: np.random.Generator) -> bool:
        """All steps as compiled loops, drawing what ``group_means`` draws step after step:
        Duchi (½-ties) its uniforms u_v, u_pos, u_s per step (``_sgd_jit.duchi_steps``); Laplace
        ε/d each step's two Gamma arrays (``sufficient.laplace_sum``), drawn for a run of steps in
        one call, which is the same stream. False (nothing drawn) for any other mechanism."""
        from ldprepro.domain.mechanisms.multidim import DuchiMultiDim, LaplaceMultiDim
        from ldprepro.domain.sufficient import laplace_sums_per_step

        mech, F, S, d = self.mechanism, fits.F, fits.S, fits.X.shape[1]
        if type(mech) is DuchiMultiDim and mech.ties == "half":
            per_step = 2 * F * S * d + F * S
            t = 1
            while t <= fits.T:
                n_steps = min(fits.T - t + 1, max(1, (1 << 21) // per_step))
                u = rng.random(n_steps * per_step)
                fits.run_duchi(u, mech.a / (mech.a + 1.0), mech.B, t, n_steps)
                t += n_steps
            return True
        if type(mech) is LaplaceMultiDim:
            t = 1
            while t <= fits.T:
                n_steps = min(fits.T - t + 1, max(1, (1 << 20) // (2 * F * d)))
                noise = laplace_sums_per_step(mech.mechanism.scale, S, rng, n_steps, (F, d)) / S
                fits.run(t_first=t, n_steps=n_steps, noise=noise)
                t += n_steps
            return True
        return False


class StepBlocks:
    """Per-step draws that do not depend on the values (an SGD step's sampled attributes or
    reported components), drawn for as many steps as fit in ``block_values`` entries at once and
    never past the run's last step (``begin``). ``draw(steps, rng)`` returns the block, of shape
    (steps, *step_shape). The numpy steps take one step at a time (``next_step``), the compiled
    steps a run of steps within one block (``runs``): the same draws in the same order."""

    def __init__(self, draw: Callable[[int, np.random.Generator], np.ndarray]):
        self.draw = draw
        self.begin(None)

    def begin(self, T: int | None) -> None:
        """A run of T steps starts (None: of unknown length)."""
        self._block, self._next, self._left = None, 0, T

    def _current(self, step_shape: tuple, rng: np.random.Generator, block_values: int) -> np.ndarray:
        """The block the next step uses (a new one when it is used up)."""
        if self._block is None or self._block.shape[1:] != step_shape or self._next == self._block.shape[0]:
            steps = max(1, block_values // math.prod(step_shape))
            if self._left is not None:
                steps = max(1, min(steps, self._left))
                self._left -= steps
            self._block, self._next = self.draw(steps, rng), 0
        return self._block

    def next_step(self, step_shape: tuple, rng: np.random.Generator, block_values: int) -> np.ndarray:
        """The next step's draws."""
        out = self._current(step_shape, rng, block_values)[self._next]
        self._next += 1
        return out

    def runs(self, step_shape: tuple, T: int, rng: np.random.Generator, block_values: int):
        """(t_first, n_steps, draws of those steps) for steps 1 … T, a run per block; the caller
        draws the run's reports before the next block is drawn."""
        t = 1
        while t <= T:
            block = self._current(step_shape, rng, block_values)
            n_steps = min(T - t + 1, block.shape[0] - self._next)
            yield t, n_steps, block[self._next : self._next + n_steps]
            self._next += n_steps
            t += n_steps


class _SampledCollector:
    """Sampled multidimensional collection; the users' sampled attributes (independent of θ) are
    drawn for as many steps as fit in one block of ``BLOCK_VALUES`` indices (8 MiB), so that a fit of
    millions of tiny groups (G = 2 at ε = 8) draws them in a few calls, not one per few steps; a
    block never reaches past the run's last step (``begin``)."""

    #: Attribute indices drawn per block (the block's steps × F × S × k).
    BLOCK_VALUES = 1 << 20

    def __init__(self, mechanism):
        self.mechanism = mechanism
        self._kernel = _report_kernel(mechanism.mechanism)
        self._attributes, self._step_shape = StepBlocks(self._draw_attributes), None

    def _draw_attributes(self, steps: int, rng: np.random.Generator) -> np.ndarray:
        F, S, k = self._step_shape
        return self.mechanism.sample_attributes(steps * F * S, rng).reshape(steps, F, S, k)

    def begin(self, F: int, S: int, T: int) -> None:
        """A run of T steps of F groups of S users starts: no block is drawn for steps past it."""
        self._step_shape = (F, S, self.mechanism.k)
        self._attributes.begin(T)

    @property
    def compiled(self) -> bool:
        """Whether :meth:`run_compiled` runs: a compiled sampler behind the 1-D mechanism, or DCT."""
        from ldprepro.domain.mechanisms import DCT

        mech = self.mechanism.mechanism
        return self._kernel is not None or (type(mech) is DCT and mech._fused() is not None)

    @property
    def draws_per_step(self) -> bool:
        """Whether its compiled steps still draw step by step in Python (DCT: a byte stream and
        uniforms per step, as ``perturb`` draws them), so fits should share those calls (batched)."""
        return self._kernel is None

    def __call__(self, grads: GroupGradients, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        F, S, _ = grads.shape
        self._step_shape = (F, S, self.mechanism.k)
        j = self._attributes.next_step(self._step_shape, rng, self.BLOCK_VALUES)
        return self.mechanism.sampled_group_means(F, S, grads.at, rng, j=j)

    def run_compiled(self, fits: _Fits, rng: np.random.Generator) -> bool:
        """All steps as compiled loops, drawing what ``__call__`` draws in the same order: a block
        of attributes when the last is used up, then each step's report uniforms, so a run of
        steps within one block takes its uniforms at once. When the count depends on the draws
        (a mixture with a discretised branch draws per branch user), an upper bound is drawn and
        the generator then set to where the steps left it. False (nothing drawn) when the 1-D
        mechanism has no compiled sampler."""
        kernel = self._kernel
        if kernel is None:
            return self._run_dct(fits, rng)
        F, S, k = fits.F, fits.S, self.mechanism.k
        for t, n_steps, block in self._attributes.runs(self._step_shape, fits.T, rng, self.BLOCK_VALUES):
            j = np.ascontiguousarray(block, dtype=np.int64)
            values = n_steps * F * S * k
            if kernel.per_value:
                fits.run(True, j, rng.random(values * kernel.per_value), self.mechanism.scale / S, kernel, t, n_steps)
            else:
                state = rng.bit_generator.state
                used = fits.run(True, j, rng.random(values * kernel.most_per_value), self.mechanism.scale / S,
                                kernel, t, n_steps, exact=False)  # fmt: skip
                rng.bit_generator.state = state
                _skip_uniforms(rng, used)
        return True

    def _run_dct(self, fits: _Fits, rng: np.random.Generator) -> bool:
        """Paper 003's DCT (``_sgd_jit.dct_steps``): its draws do not depend on the values, so a
        run of steps has them drawn first, step by step and chunk by chunk as ``perturb`` draws
        them (a byte stream, then uniforms). False (nothing drawn) for any other mechanism."""
        from ldprepro.domain.mechanisms import DCT
        from ldprepro.domain.mechanisms.base import CHUNK

        mech = self.mechanism.mechanism
        if type(mech) is not DCT or mech._fused() is None:
            return False
        F, S, k = fits.F, fits.S, self.mechanism.k
        n = F * S * k
        chunks = [min(CHUNK, n - c0) for c0 in range(0, n, CHUNK)]
        for t, n_steps, block in self._attributes.runs(self._step_shape, fits.T, rng, self.BLOCK_VALUES):
            j = np.ascontiguousarray(block, dtype=np.int64)
            bits, u = [], []
            for _ in range(n_steps):
                for c in chunks:
                    bits.append(np.unpackbits(np.frombuffer(rng.bytes((2 * c + 7) // 8), dtype=np.uint8)))
                    u.append(rng.random(c))
            fits.run_dct(j, np.concatenate(u), np.concatenate(bits), self.mechanism.scale / S, mech, t, n_steps)
        return True


def _skip_uniforms(rng: np.random.Generator, count: int) -> None:
    """Leave ``rng`` as ``rng.random(count)`` would (PCG64 and a plain state: jump ahead)."""
    bg = rng.bit_generator
    if type(bg).__name__ == "PCG64" and not bg.state.get("has_uint32"):
        bg.advance(count)  # one 64-bit output per double; advance() clears only has_uint32
    else:
        rng.random(count)


class ReportKernel(NamedTuple):
    """A 1-D mechanism's sampler as ``_sgd_jit.steps`` runs it: per branch (one for a plain
    mechanism) its compiled sampler kind and parameters, the branch's share [edges[b],
    edges[b+1]) of the user's uniform, whether it draws its own uniforms (``fresh``: a
    discretised mixture branch) and its rounding step h (0: none; Alg. 5 otherwise);
    ``per_value`` uniforms per reported value, 0 when that depends on the draws (then at most
    ``most_per_value``)."""

    kinds: np.ndarray
    params: np.ndarray
    edges: np.ndarray
    fresh: np.ndarray
    rounding: np.ndarray
    per_value: int
    most_per_value: int


def _report_kernel(mech) -> ReportKernel | None:
    """The :class:`ReportKernel` of a 1-D mechanism whose ``perturb`` runs compiled samplers
    (``mechanisms._jit._sample_one``): a plain sampler, possibly discretised (Alg. 5), or a
    mixture whose branches sample from their share of the uniform or (discretised branches)
    from their own; else None."""
    from ldprepro.domain.mechanisms import Mixture

    if isinstance(mech, Mixture) and len(mech.components) > 1:
        if type(mech)._perturb_block is not Mixture._perturb_block:
            return None
        specs = []
        for c in mech.components:
            if c.single_uniform:
                spec = c._sample_kernel()
                specs.append(None if spec is None else (*spec, False, 0.0))
            else:
                spec = c._block_kernel()
                specs.append(None if spec is None else (spec[0], spec[1], True, spec[2]))
        edges = mech._edges
    else:
        if isinstance(mech, Mixture):
            mech = mech.components[0]
        spec = mech._block_kernel()
        specs = [None if spec is None else (spec[0], spec[1], False, spec[2])]
        edges = np.array([0.0, 1.0])
    if any(s is None for s in specs):
        return None
    params = np.zeros((len(specs), max(len(s[1]) for s in specs)))
    for b, (_, p, _, _) in enumerate(specs):
        params[b, : len(p)] = p
    fresh = np.array([s[2] for s in specs], dtype=np.bool_)
    rounding = np.array([s[3] for s in specs], dtype=np.float64)
    if fresh.any():
        per_value, most = 0, 1 + max(1 + (h > 0) for f, h in zip(fresh, rounding) if f)
    else:
        per_value = most = 2 if len(specs) == 1 and rounding[0] > 0 else 1
    return ReportKernel(
        np.array([s[0] for s in specs], dtype=np.int64), params, np.asarray(edges, dtype=np.float64),
        fresh, rounding, per_value, int(most),
    )  # fmt: skip


class _Fits:
    """The state of F fits run by compiled steps: the data, the fits' rows and step sizes, θ."""

    _NO_KERNEL = ReportKernel(np.zeros(1, np.int64), np.zeros((1, 1)), np.array([0.0, 1.0]),
                              np.zeros(1, np.bool_), np.zeros(1), 1, 1)  # fmt: skip

    def __init__(self, X, y, idx, S, T, eta_1, n_iter, schedule, model, lam, clip):
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.idx, self.S, self.T = idx, S, T
        self.F = idx.shape[0]
        self.eta_1, self.n_iter = eta_1.astype(np.float64), n_iter.astype(np.int64)
        self.inv_sqrt_t = schedule == "inv_sqrt_t"
        self.model = MODELS.index(model)
        self.lam, self.clip = float(lam), float(clip)
        self.theta = np.zeros((self.F, self.X.shape[1]))

    def _common(self, t_first, n_steps):
        return (
            self.X, self.y, self.idx, self.S, t_first, self.T if n_steps is None else n_steps, self.theta,
            self.eta_1, self.n_iter, self.inv_sqrt_t, self.model, self.lam, self.clip,
        )  # fmt: skip

    def run(self, sampled=False, j=None, u=None, scale=0.0, kernel=None, t_first=1, n_steps=None,
            noise=None, exact=True) -> int:  # fmt: skip
        """Compiled steps (``_sgd_jit.steps``); returns the number of uniforms of u they used,
        which must be all of them when ``exact``."""
        from ldprepro.domain import _sgd_jit
        from ldprepro.domain.mechanisms.base import CHUNK

        j = np.zeros((0, 0, 0, 0), dtype=np.int64) if j is None else j
        u = np.empty(0) if u is None else u
        noise = np.zeros((0, 0, 0)) if noise is None else noise
        kr = self._NO_KERNEL if kernel is None else kernel
        used = _sgd_jit.steps(
            *self._common(t_first, n_steps), sampled, j, u, float(scale),
            kr.kinds, kr.params, kr.edges, kr.fresh, kr.rounding, CHUNK, noise,
        )  # fmt: skip
        if (used != u.size) if exact else (used > u.size):  # pragma: no cover - bookkeeping
            raise RuntimeError(f"compiled SGD steps used {used} of {u.size} uniforms")
        return used

    def run_graded(self, comp, u, side, kinds, params, per_level, t_first=1, n_steps=None) -> None:
        """Steps with paper 000's graded collection (``_sgd_jit.graded_steps``)."""
        from ldprepro.domain import _sgd_jit

        used = _sgd_jit.graded_steps(
            *self._common(t_first, n_steps)[:13], comp, u, side, kinds, params, per_level,
        )  # fmt: skip
        if used != u.size:  # pragma: no cover - bookkeeping
            raise RuntimeError(f"compiled graded SGD steps used {used} of {u.size} uniforms")

    def run_dct(self, j, u, bits, scale, mech, t_first, n_steps) -> None:
        """Steps with Alg. 6 sampling around DCT (``_sgd_jit.dct_steps``)."""
        from ldprepro.domain import _sgd_jit
        from ldprepro.domain.mechanisms.base import CHUNK

        used = _sgd_jit.dct_steps(
            *self._common(t_first, n_steps), j, u, bits, float(scale), CHUNK, mech.keep, mech._inv_keep,
            mech._inv_replace - mech._inv_keep, mech.d, mech.m,
        )  # fmt: skip
        if used != (u.size, bits.size):  # pragma: no cover - bookkeeping
            raise RuntimeError(f"compiled DCT SGD steps used {used} of {(u.size, bits.size)} draws")

    def run_duchi(self, u, p_pos, B, t_first, n_steps) -> None:
        from ldprepro.domain import _sgd_jit

        used = _sgd_jit.duchi_steps(*self._common(t_first, n_steps), u, float(p_pos), float(B))
        if used != u.size:  # pragma: no cover - bookkeeping
            raise RuntimeError(f"compiled Duchi SGD steps used {used} of {u.size} uniforms")


def group_collector(mechanism=None, aggregate_fits: Callable | None = None) -> Callable:
    """``collect(grads, rows, rng) -> (F, d)`` server estimate of each group's mean gradient:
    non-private (mechanism None), a multidimensional mechanism (sampled ones report only their k
    coordinates), or ``aggregate_fits(g, rows, rng)`` (graded collection, needs the users' rows)."""
    from ldprepro.domain.mechanisms.multidim import SampledMultiDim

    if aggregate_fits is not None:
        return lambda grads, rows, rng: aggregate_fits(grads.full(), rows, rng)
    if mechanism is None:
        return _MeanCollector()
    if isinstance(mechanism, SampledMultiDim):
        return _SampledCollector(mechanism)
    return _FullCollector(mechanism)


def ldp_sgd_fits(
    X: np.ndarray,
    y: np.ndarray,
    orders: list[np.ndarray],
    model: str,
    collect: Callable,
    G: int,
    lam: float,
    schedule: str,
    eta0: float,
    rng: np.random.Generator,
    clip: float = 1.0,
    finite: bool | None = None,
) -> np.ndarray:
    """F single-pass mini-batch SGD fits at once; returns θ of shape (F, d).

    ``orders[f]``: the rows of X that fit f trains on, in the order it visits them (its shuffled
    training fold); fit f takes ⌊n_f/G⌋ disjoint groups of G users (one group of n_f if G > n_f), as
    ``ldp_sgd``. ``collect`` is a :func:`group_collector`. Fits whose group sizes differ (G above some
    but not all training sizes) run one at a time. ``finite``: whether X and y are known to be
    finite (a caller running many fits on the same data checks once); None checks here."""
    F, d = len(orders), X.shape[1]
    sizes = np.array([len(o) for o in orders])
    size = np.minimum(G, sizes)
    if F > 1 and np.unique(size).size > 1:
        return np.concatenate(
            [ldp_sgd_fits(X, y, [o], model, collect, G, lam, schedule, eta0, rng, clip, finite) for o in orders]
        )
    S = int(size[0])
    n_iter = np.where(G <= sizes, np.maximum(1, sizes // max(G, 1)), 1)
    T = int(n_iter.max())
    # row indices of every fit's groups; int32 halves the memory at census sizes (F × n_train entries)
    idx = np.empty((F, T * S), dtype=np.int32 if X.shape[0] < 2**31 else np.int64)
    for f, o in enumerate(orders):
        used = o[: n_iter[f] * S]
        idx[f, : used.size] = used
        idx[f, used.size :] = np.resize(o[:S], T * S - used.size)  # padding: steps past n_iter[f] are ignored
    # η_t per fit: only inv_sqrt_t depends on t, and a fit past its last group stops moving
    eta_1 = np.array([learning_rate(schedule, 1, int(m), eta0) for m in n_iter])
    if hasattr(collect, "begin"):
        collect.begin(F, S, T)
    if _compiled_ok(collect, X, y, model, clip, finite):
        fits = _Fits(X, y, idx, S, T, eta_1, n_iter, schedule, model, lam, clip)
        if collect.run_compiled(fits, rng):
            return fits.theta
    theta = np.zeros((F, d))
    for t in range(1, T + 1):
        rows = idx[:, (t - 1) * S : t * S]
        grads = GroupGradients(model, theta, X[rows], y[rows], lam, clip)
        step = collect(grads, rows, rng)
        eta = eta_1 / math.sqrt(t) if schedule == "inv_sqrt_t" else eta_1
        if t > n_iter.min():
            eta = np.where(t <= n_iter, eta, 0.0)
        theta = theta - eta[:, None] * step
    return theta


def runs_fit_by_fit(collect) -> bool:
    """Whether fits with this collector may run one at a time at no cost: compiled steps that draw
    for runs of steps, not per step in Python (else a fit of a million tiny groups pays a Python
    call per step, and batching the fits shares it)."""
    return bool(getattr(collect, "compiled", False)) and not getattr(collect, "draws_per_step", True)


def take_rows(X: np.ndarray, rows: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """X[rows] as a contiguous float64 copy (into ``out`` when given): compiled with prefetching
    (``_sgd_jit.gather_rows``) when the kernels are on, else ``np.take``. Bit-identical either way."""
    from ldprepro.domain.mechanisms import kernels

    X = np.ascontiguousarray(X, dtype=np.float64)
    out = np.empty((rows.size, X.shape[1])) if out is None else out
    if kernels.enabled() and rows.size:
        from ldprepro.domain import _sgd_jit

        return _sgd_jit.gather_rows(X, rows, out)
    return np.take(X, rows, axis=0, out=out)


def _compiled_ok(collect, X, y, model, clip, finite: bool | None = None) -> bool:
    """Whether the fits may run as compiled steps: a collector that has them, the switch on
    (``LDPREPRO_JIT``), and inputs on which the numpy path could not fail (finite data, clipped
    gradients inside the mechanisms' domain [−1, 1]); otherwise the numpy steps run (and raise)."""
    from ldprepro.domain.mechanisms import kernels

    return (
        hasattr(collect, "run_compiled")
        and kernels.enabled()
        and model in MODELS
        and 0.0 < clip <= 1.0
        and (finite if finite is not None else bool(np.isfinite(X).all() and np.isfinite(y).all()))
    )


def evaluate(model: str, theta: np.ndarray, X: np.ndarray, y: np.ndarray) -> tuple[str, float]:
    """('test_mse', value) for linear regression, ('misclassification_rate', value) otherwise."""
    metric, values = evaluate_many(model, theta[None, :], X, y)
    return metric, float(values[0])


def evaluate_many(model: str, thetas: np.ndarray, X: np.ndarray, y: np.ndarray) -> tuple[str, np.ndarray]:
    """:func:`evaluate` of every row of ``thetas`` (C, d) on one test set, in one product X·θᵀ."""
    pred = X @ thetas.T  # (n_test, C)
    if model == "linear":
        return "test_mse", np.mean((pred - y[:, None]) ** 2, axis=0)
    return "misclassification_rate", np.mean(np.where(pred >= 0, 1.0, -1.0) != y[:, None], axis=0)
