"""Gradient collection under graded privacy levels: HierA's linear regression (paper 000, Sec. 5 and
6.3; docs/papers/hiera.md §7).

Every user of a group holds a clipped gradient g ∈ [−1, 1]^D (D = d features + the intercept). The
privacy level of component j "is not based on the size of the component but on the privacy
classification of the attribute data corresponding to the component" [P]: it is the level of the
user's attribute x_j (the intercept takes the level of y [U], or the most private level). The
collector returns an estimate of the group's mean gradient.

How the D components share the budget is not stated [U]. Two rules:

- ``sample_one`` (default, Harmony/PM style): each user draws one component j uniformly, privatises
  g_j with the full budget of its level, and the collector estimates component j from the users who
  drew it, scaled by n_j·D/G (the Wang et al. form: the mean over all G users of D·report at the drawn
  component and 0 elsewhere). For the per-user mechanisms this is exactly that mean; for HierA, whose
  estimator works on the reports' counts, the component's HierA estimate m̂_j stands for the mean
  of its n_j reports.
- ``every_component`` (literal reading, flagged as NOT LDP-composed): every component is privatised
  with its own level's full budget; the collector averages per component.

Mechanisms: ``hiera`` (LHP users + HierA collector, Algorithm 5), ``graded_laplace`` (Lap(2/ε_t) at
the component's level; the paper's baseline, not ε-LDP for any finite ε), and ``harmony`` / ``pm`` at
the base budget ε (the most private level's) for every component [P]. Ours, as a budget-matched
reference: ``harmony_at_level`` / ``pm_at_level`` run Harmony / PM at the component's level budget
ε_t, the same budget the graded methods spend, so that a graded method's lead over the base-ε
baselines can be told apart from the extra budget it spends.

HierA's step-6 clipping shrinks a component's estimate when few users report it (about G/D per
component; docs/papers/hiera.md §6.1): the clipped collector is biased towards 0 and has a lower variance. The
unclipped one (``clip=False``, intended step 5) is exactly unbiased.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ldprepro.domain.graded import LHP, GradedLaplace, GradedLevels, hiera_estimate_counts
from ldprepro.domain.mechanisms import get_mechanism

GRADED_SGD_MECHANISMS = ("hiera", "graded_laplace", "harmony", "pm", "harmony_at_level", "pm_at_level")
COMPONENT_RULES = ("sample_one", "every_component")


@dataclass
class GradedGradientCollector:
    """Estimate a group's mean gradient from graded-LDP reports; ``aggregate(g, level, rng)`` takes
    the (G, D) clipped gradients and the (G, D) 0-based privacy levels of their components."""

    mechanism: str
    levels: GradedLevels
    mu: int = 2
    step5_mode: str = "intended"
    clip: bool = True
    component_rule: str = "sample_one"

    def __post_init__(self) -> None:
        if self.mechanism not in GRADED_SGD_MECHANISMS:
            raise ValueError(f"unknown graded SGD mechanism {self.mechanism!r}; known: {GRADED_SGD_MECHANISMS}")
        if self.component_rule not in COMPONENT_RULES:
            raise ValueError(f"component_rule must be one of {COMPONENT_RULES}, got {self.component_rule!r}")
        base = float(self.levels.eps.min())  # the most private level's budget, ε
        self._flat = get_mechanism(self.mechanism, base) if self.mechanism in ("harmony", "pm") else None
        self._per_level = (
            [get_mechanism(self.mechanism.removesuffix("_at_level"), float(e)) for e in self.levels.eps]
            if self.mechanism.endswith("_at_level")
            else None
        )
        self._laplace = GradedLaplace(self.levels)
        self._lhp = LHP(self.levels)

    def report_kernels(self) -> tuple[np.ndarray, np.ndarray, bool] | None:
        """(kinds, params, per_level) of the compiled samplers behind :meth:`aggregate_fits` under the
        ``sample_one`` rule (one per level for ``*_at_level``, else one), or None when its reports
        are not one compiled uniform draw each (HierA, graded Laplace, ``every_component``)."""
        if self.component_rule != "sample_one":
            return None
        mechs = self._per_level if self._per_level is not None else [self._flat]
        if any(m is None or m.block_kernel() is None or m.block_kernel()[2] > 0 for m in mechs):
            return None
        specs = [m.block_kernel() for m in mechs]
        params = np.zeros((len(specs), max(len(s[1]) for s in specs)))
        for i, (_, p, _) in enumerate(specs):
            params[i, : len(p)] = p
        return np.array([s[0] for s in specs], dtype=np.int64), params, self._per_level is not None

    def aggregate(self, g: np.ndarray, level: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """(D,) estimate of one group's mean gradient from its (G, D) gradients and levels."""
        if level.shape != g.shape:
            raise ValueError(f"level must have the gradients' shape {g.shape}, got {level.shape}")
        return self.aggregate_fits(g[None], level[None], rng)[0]

    def aggregate_fits(
        self, g: np.ndarray, level: np.ndarray, rng: np.random.Generator, comp: np.ndarray | None = None
    ) -> np.ndarray:
        """(F, D) estimates for F groups at once (one per SGD fit), g and level of shape (F, G, D);
        the groups' reports are independent, and each group's estimate is the one-group estimate.
        ``comp`` (F, G): the components the users report under ``sample_one``, uniform on the D
        components and drawn beforehand (they do not depend on the values); None draws them here."""
        F, G, D = g.shape
        if level.shape != g.shape:
            raise ValueError(f"level must have the gradients' shape {g.shape}, got {level.shape}")
        fit = np.arange(F)[:, None]
        if self.component_rule == "sample_one":
            comp = rng.integers(0, D, size=(F, G)) if comp is None else comp
            rows = np.arange(G)[None, :]
            v, lv = g[fit, rows, comp].reshape(-1), level[fit, rows, comp].reshape(-1)
        else:
            comp = np.broadcast_to(np.tile(np.arange(D), G), (F, G * D))
            v, lv = g.reshape(-1), level.reshape(-1)
        cell = (fit * D + comp).reshape(-1)  # (fit, component) of each report
        n_j = np.bincount(cell, minlength=F * D).reshape(F, D)
        if self.mechanism == "hiera":
            t_star, s = self._lhp.perturb(v, rng, level=lv)
            k = self.levels.k
            counts = np.bincount((cell * k + t_star) * 2 + (s > 0), minlength=F * D * k * 2).reshape(F, D, k, 2)
            with np.errstate(invalid="ignore"):
                m = np.asarray(hiera_estimate_counts(counts, self.levels, self.mu, rng, self.step5_mode, self.clip))
            sums = np.where(n_j > 0, np.nan_to_num(m) * n_j, 0.0)
        else:
            if self.mechanism == "graded_laplace":
                reports = self._laplace.perturb(v, rng, level=lv)
            elif self._per_level is not None:
                reports = np.empty_like(v)
                for t, mech in enumerate(self._per_level):
                    at = lv == t
                    reports[at] = mech.perturb(v[at], rng)
            else:
                reports = self._flat.perturb(v, rng)
            sums = np.bincount(cell, weights=reports, minlength=F * D).reshape(F, D)
        if self.component_rule == "sample_one":
            return sums * D / G
        return sums / G


class GradedSteps:
    """The SGD collector (``sgd.group_collector``) of a :class:`GradedGradientCollector` whose users
    hold the (n, D) component levels ``side``: ``collect(grads, rows, rng)`` is
    ``aggregate_fits(grads.full(), side[rows], rng, comp)``. Under ``sample_one`` the reported
    components (independent of the values) are drawn in blocks of ``BLOCK_VALUES`` (``sgd.StepBlocks``,
    as the sampled collector draws its attributes), and each step then draws its reports.
    ``run_compiled`` runs the steps compiled under ``sample_one``, drawing what the numpy steps draw:
    a block of components, then, for the block's steps, the per-user mechanisms' uniforms (PM,
    Harmony, at the base ε or at each level's) or graded Laplace's standard Laplace draws, one per
    user, in one call (``_graded_jit.graded_steps``); HierA's LHP draws and PLC binomials step by
    step inside the compiled loop, from the same Generator (``_graded_jit.hiera_steps``)."""

    #: Components drawn per block (the block's steps × F × S).
    BLOCK_VALUES = 1 << 20

    def __init__(self, collector: GradedGradientCollector, side: np.ndarray):
        from ldprepro.domain.sgd_collectors import StepBlocks

        self.collector, self.side = collector, side
        self._kernels = collector.report_kernels()
        self._components = StepBlocks(self._draw_components)
        self._step_shape = None

    def _draw_components(self, steps: int, rng: np.random.Generator) -> np.ndarray:
        return rng.integers(0, self.side.shape[1], size=(steps, *self._step_shape))

    def begin(self, F: int, S: int, T: int) -> None:
        """A run of T steps of F groups of S users starts: no block is drawn for steps past it."""
        self._step_shape = (F, S)
        self._components.begin(T)

    @property
    def compiled(self) -> bool:
        """Whether :meth:`run_compiled` runs: ``sample_one`` with a compiled sampler behind every
        report, graded Laplace or HierA."""
        col = self.collector
        return self._kernels is not None or (
            col.component_rule == "sample_one" and col.mechanism in ("hiera", "graded_laplace")
        )

    draws_per_step = False  # components and uniforms for runs of steps; HierA's draws in the compiled loop

    def __call__(self, grads, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        comp = None
        if self.collector.component_rule == "sample_one":
            F, S, _ = grads.shape
            self._step_shape = (F, S)
            comp = self._components.next_step(self._step_shape, rng, self.BLOCK_VALUES)
        return self.collector.aggregate_fits(grads.full(), self.side[rows], rng, comp)

    def run_compiled(self, fits, rng: np.random.Generator) -> bool:
        """All steps compiled, drawing what :meth:`__call__` draws step after step; False (nothing
        drawn) when :attr:`compiled` is not."""
        if not self.compiled:
            return False
        col = self.collector
        side = np.ascontiguousarray(self.side)
        F, S = fits.F, fits.S
        if col.mechanism == "hiera":
            from ldprepro.domain.graded import merge_matrix, plc_keep_prob

            levels, k = col.levels, col.levels.k
            grr_keep = 1.0 / (1.0 + (k - 1) * np.exp(-levels.eps))  # as frequency.grr_perturb
            plc_keep = np.ones((k, k))
            for i in range(k):
                for j in range(i + 1, k):
                    plc_keep[i, j] = plc_keep_prob(levels, i, j)
            merge = merge_matrix(col.mu, col.step5_mode, k)
            if np.any(np.triu(merge, 1)):  # pragma: no cover - every mode merges towards more private levels
                raise RuntimeError("HierA's merge converts only towards more private levels")
        for t, n_steps, comp in self._components.runs(self._step_shape, fits.T, rng, self.BLOCK_VALUES):
            comp = np.ascontiguousarray(comp)
            if col.mechanism == "hiera":
                fits.run_hiera(comp, side, rng, grr_keep, levels.keep_probs, merge, plc_keep, col.clip, t, n_steps)
            elif col.mechanism == "graded_laplace":
                lap = rng.laplace(0.0, 1.0, size=n_steps * F * S)  # GradedLaplace.perturb's draws, step after step
                fits.run_graded(comp, lap, side, np.zeros(1, np.int64), np.zeros((1, 1)), False, t, n_steps,
                                scales=2.0 / col.levels.eps)  # fmt: skip
            else:
                kinds, params, per_level = self._kernels
                fits.run_graded(comp, rng.random(n_steps * F * S), side, kinds, params, per_level, t, n_steps)
        return True


def mean_budget_factor(level: np.ndarray, levels: GradedLevels) -> float:
    """Average budget of a component's report relative to the base ε (ε_t/ε averaged over users and
    components; each component is equally likely to be drawn)."""
    return float((levels.eps / levels.eps.min())[level].mean())


def component_levels(
    X: np.ndarray, y: np.ndarray, levels: GradedLevels, intercept_column: int | None, intercept_level: str = "target"
) -> np.ndarray:
    """(n, D) privacy level of each gradient component: the level of the user's attribute value x_j;
    for the intercept column the level of y (``"target"`` [U]) or the most private level. int8 when
    the levels fit (k ≤ 127): an SGD job copies these rows once per fit, beside the data's."""
    src = np.array(X, dtype=float, copy=True)
    if intercept_column is not None:
        if intercept_level == "target":
            src[:, intercept_column] = y
        elif intercept_level == "most_private":
            src[:, intercept_column] = levels.edges[-2]
        else:
            raise ValueError(f"intercept_level must be 'target' or 'most_private', got {intercept_level!r}")
    level = levels.level_of(src)
    return level.astype(np.int8) if levels.k <= 127 else level
