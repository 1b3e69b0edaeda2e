"""The bridge to the compiled SGD steps (``_sgd_jit``): a 1-D mechanism's sampler as the steps run it
(:class:`ReportKernel`, built by ``_report_kernel``) and the state of F fits run by compiled steps
(``_Fits``)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ldprepro.domain.sgd_models import MODELS


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
                spec = c.sample_kernel()
                specs.append(None if spec is None else (*spec, False, 0.0))
            else:
                spec = c.block_kernel()
                specs.append(None if spec is None else (spec[0], spec[1], True, spec[2]))
        edges = mech._edges
    else:
        if isinstance(mech, Mixture):
            mech = mech.components[0]
        spec = mech.block_kernel()
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

    def run_graded(self, comp, u, side, kinds, params, per_level, t_first=1, n_steps=None, scales=None) -> None:
        """Steps with paper 000's graded collection, per-user reports (``_graded_jit.graded_steps``;
        ``scales``: graded Laplace, u its standard Laplace draws)."""
        from ldprepro.domain import _graded_jit

        scales = np.zeros(0) if scales is None else scales
        used = _graded_jit.graded_steps(
            *self._common(t_first, n_steps)[:13], comp, u, side, kinds, params, per_level, scales,
        )  # fmt: skip
        if used != u.size:  # pragma: no cover - bookkeeping
            raise RuntimeError(f"compiled graded SGD steps used {used} of {u.size} uniforms")

    def run_hiera(self, comp, side, rng, grr_keep, keep_probs, merge, plc_keep, clip_estimate, t_first, n_steps):
        """Steps with LHP users and the HierA collector (``_graded_jit.hiera_steps``), drawing from
        ``rng`` as the numpy steps do."""
        from ldprepro.domain import _graded_jit

        _graded_jit.hiera_steps(
            *self._common(t_first, n_steps)[:13], comp, side, rng, grr_keep, keep_probs, merge, plc_keep,
            bool(clip_estimate),
        )  # fmt: skip

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
