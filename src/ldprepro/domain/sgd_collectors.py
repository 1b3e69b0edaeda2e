"""The server side of one LDP-SGD step (``ldprepro.domain.sgd.group_collector``): ``collect(grads,
rows, rng)`` returns each group's estimated mean gradient, non-private, from a d-dimensional
mechanism that perturbs every coordinate, or from attribute sampling (Alg. 6); each collector also
runs all steps as compiled loops (``run_compiled``) drawing what its numpy steps draw.
:class:`StepBlocks` draws per-step values that do not depend on the gradients in blocks of steps."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ldprepro.domain.sgd_compiled import _Fits, _report_kernel
from ldprepro.domain.sgd_models import GroupGradients


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

    #: Duchi's uniforms drawn per run of steps (512 KiB, one buffer reused): the steps read them
    #: while they are still in cache. Runs of 2²¹ (16 MiB, out of cache by the time they are read)
    #: cost 20–26 % more per user at d = 28 (259 → 206 ns at G = 374, 358 → 309 at G = 2). Whole
    #: steps per run, in order, so the stream is the same whatever the value.
    DUCHI_BLOCK_VALUES = 1 << 16
    #: Laplace ε/d: noise values (2·F·d per step) drawn per run of steps; 2¹⁵ rather than 2²⁰
    #: keeps the exponentials of groups of ≤ 3 users in cache (G = 2, d = 28: 569 → 482 ns per
    #: user; no change at G ≥ 6). The same stream whatever the value (``laplace_sums_per_step``).
    LAPLACE_BLOCK_VALUES = 1 << 15

    def __init__(self, mechanism):
        self.mechanism = mechanism

    @property
    def compiled(self) -> bool:
        """Whether :meth:`run_compiled` runs: Duchi's mechanism (½-ties) or Laplace ε/d."""
        from ldprepro.domain.mechanisms.multidim import DuchiMultiDim, LaplaceMultiDim

        mech = self.mechanism
        return (type(mech) is DuchiMultiDim and mech.ties == "half") or type(mech) is LaplaceMultiDim

    draws_per_step = False  # Duchi: uniforms for runs of steps; Laplace ε/d: noise sums for runs of steps

    def __call__(self, grads: GroupGradients, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return self.mechanism.group_means(grads.full(), rng)

    def run_compiled(self, fits: _Fits, rng: np.random.Generator) -> bool:
        """All steps as compiled loops, drawing what ``group_means`` draws step after step:
        Duchi (½-ties) its uniforms u_v, u_pos and those whose bits are the signs, per step
        (``_sgd_jit.duchi_steps``); Laplace ε/d each step's noise array (``sufficient.laplace_group_sum``), drawn for a run of steps in
        one call, which is the same stream. False (nothing drawn) for any other mechanism."""
        from ldprepro.domain.mechanisms.multidim import DuchiMultiDim, LaplaceMultiDim, sign_words
        from ldprepro.domain.sufficient import laplace_sums_per_step

        mech, F, S, d = self.mechanism, fits.F, fits.S, fits.X.shape[1]
        if type(mech) is DuchiMultiDim and mech.ties == "half":
            per_step = F * S * (d + 1 + sign_words(d))  # u_v, u_pos, the signs' uniforms
            steps_per_run = min(fits.T, max(1, self.DUCHI_BLOCK_VALUES // per_step))
            buffer = np.empty(steps_per_run * per_step)
            t = 1
            while t <= fits.T:
                n_steps = min(fits.T - t + 1, steps_per_run)
                u = buffer[: n_steps * per_step]
                rng.random(out=u)
                fits.run_duchi(u, mech.a / (mech.a + 1.0), mech.B, t, n_steps)
                t += n_steps
            return True
        if type(mech) is LaplaceMultiDim:
            t = 1
            while t <= fits.T:
                n_steps = min(fits.T - t + 1, max(1, self.LAPLACE_BLOCK_VALUES // (2 * F * d)))
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
        """Whether its fits run batched rather than fit by fit (``sgd.runs_fit_by_fit``): DCT, whose
        draws (a byte stream and uniforms per step, as ``perturb`` draws them) are those of all the
        batched fits' users, step after step. Its steps now draw them compiled
        (``_sgd_jit.dct_draws``), not in Python, but running its fits one at a time would give each
        fit other numbers, so DCT keeps the batched stream it has always had."""
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
        them (a byte stream, then uniforms), by a compiled loop (``_sgd_jit.dct_draws``: the same
        numbers, without a Python call per step and chunk). False (nothing drawn) for any other
        mechanism."""
        from ldprepro.domain import _sgd_jit
        from ldprepro.domain.mechanisms import DCT
        from ldprepro.domain.mechanisms.base import CHUNK

        mech = self.mechanism.mechanism
        if type(mech) is not DCT or mech._fused() is None:
            return False
        F, S, k = fits.F, fits.S, self.mechanism.k
        n = F * S * k
        chunks = np.array([min(CHUNK, n - c0) for c0 in range(0, n, CHUNK)], dtype=np.int64)
        bits_per_step = int(((2 * chunks + 7) // 8 * 8).sum())
        for t, n_steps, block in self._attributes.runs(self._step_shape, fits.T, rng, self.BLOCK_VALUES):
            j = np.ascontiguousarray(block, dtype=np.int64)
            bits, u = np.empty(n_steps * bits_per_step, dtype=np.uint8), np.empty(n_steps * n)
            _sgd_jit.dct_draws(rng, n_steps, chunks, bits, u)
            fits.run_dct(j, u, bits, self.mechanism.scale / S, mech, t, n_steps)
        return True


def _skip_uniforms(rng: np.random.Generator, count: int) -> None:
    """Leave ``rng`` as ``rng.random(count)`` would (PCG64 and a plain state: jump ahead)."""
    bg = rng.bit_generator
    if type(bg).__name__ == "PCG64" and not bg.state.get("has_uint32"):
        bg.advance(count)  # one 64-bit output per double; advance() clears only has_uint32
    else:
        rng.random(count)
