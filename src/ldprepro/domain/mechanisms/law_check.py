"""Is the output law a 1-D mechanism declares (``support``/``pmf``/``pdf``) true? Checked before any
exact privacy loss is computed from it (the audit, the benchmark's privacy table, and every job
that runs a plugin mechanism: ``registry.require_verified_plugins``).

:func:`verify_law` checks, at one ε:

(c) a law is declared: atoms (``support``) or a density part (``continuous`` with ``pdf``
    overridden); the base class's empty defaults declare none, so nothing could be computed from them;
(a) the declared law is a probability law: at 201 inputs on [−1, 1] the pmf has one value per
    atom, every value finite and ≥ 0; at x = −1, 0, 1 the pdf is finite and ≥ 0 on a grid of
    200,001 points over ``output_bounds`` (±(1 + 60/ε) where they are infinite) plus the edges of
    any declared ``density_pieces``, and pmf + ∫pdf (midpoint rule on that grid: exact for
    piecewise-constant densities) is 1 within :data:`MASS_TOL` (the contract's tolerance);
(b) ``perturb`` samples from it: N = :data:`N_SAMPLES` outputs at each of x = −1, 0, 1 (fixed seed)
    are classified into the declared atoms (the same double exactly), :data:`N_BINS` bins of equal
    declared density mass (an atom inside the density's range joins the bin around it), and
    "elsewhere" (outside the atoms and the density's range, declared mass max(0, 1 − total)). Categories whose expected count is < 5 are pooled and judged by the
    exact binomial upper tail (an output the law says is impossible fails at once); the others by
    Pearson's chi-square. Each of the two tests runs at level :data:`ALPHA`/2 per input, so a
    correct mechanism fails with probability ≤ 3 × 1e-6 per ε (a false alarm is essentially never
    seen; the seed is fixed, so the outcome is reproducible).

Range. The declared pdf is integrated in double precision, so a density piece must be wider than
~10^4 doubles (:data:`RESOLVABLE_ULPS`): every built-in mechanism passes at every ε ≤ 50 (measured
at 0.1 … 50); above ~55 the PM family's window (2/(e^{ε/2} − 1) wide) is too narrow and the check
reports its mass error as unverifiable, saying that the piece is below double precision. The
pipeline's audit and benchmark grids stop at ε = 8.

Power. A sampler that returns x unchanged (no noise) fails for certain: its N outputs fall in
one category of declared probability p ≤ 1/2 (1/N_BINS for a density), so either they are
impossible under the law or the chi-square statistic is N(1 − p)/p ≥ 20,000, against a critical
value below 140 for any df ≤ 60 at 5e-7. Measured power against samplers less noisy than their
declared law (20 seeds each, ε = 0.5 and 4): Laplace noise of scale 2/(rε) declared as 2/ε fails
always for r = 2 (statistic ≈ 6,850), r = 1.2 (≈ 660) and r = 1.1 (≈ 250), in 35% of seeds for
r = 1.05 and never for r = 1.02 (statistic ≈ 70, within the test's noise). tests/test_law_check.py
checks r = 2 for Laplace and binary randomised response at every ε of the audit's grid. A sampler
that differs from its law by less than that is left to the audit's empirical lower bound.

``perturb`` output that is not a float array of the input's shape with finite values is not a
law problem but an error: :class:`MechanismOutputError`, naming the mechanism.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import special  # not scipy.stats: its import costs every audit and table job ~0.5 CPU-s

from ldprepro.domain.mechanisms.base import Mechanism, Mixture
from ldprepro.domain.mechanisms.output_check import MechanismOutputError, check_output, describe  # noqa: F401

MASS_TOL = 1e-4  # |pmf + ∫pdf − 1| allowed (as contract.check_mechanism)
ALPHA = 1e-6  # level of the goodness-of-fit test at each input (two tests at ALPHA/2 each)
N_SAMPLES = 20_000  # outputs drawn at each extreme input
N_BINS = 50  # bins of equal declared density mass
INPUTS = (-1.0, 0.0, 1.0)
N_GRID = 200_001


class _LawProblem(ValueError):
    """A declared law that is not a probability law (the message says where)."""


@dataclass
class LawCheck:
    """Outcome of :func:`verify_law`: ``ok`` when no problem was found; ``reason`` says what failed."""

    name: str
    eps: float
    problems: list[str] = field(default_factory=list)
    #: per input: the goodness-of-fit statistic, its df and p-value (for reports and tests)
    fit: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def reason(self) -> str:
        return "; ".join(self.problems)


def _declares_density(mech) -> bool:
    return bool(mech.continuous) and type(mech).pdf is not Mechanism.pdf


def _piece_edges(mech, x: float) -> np.ndarray:
    """Edges of the declared piecewise-constant density (none if not declared): integration
    breakpoints only; the masses are always computed from ``pdf`` itself."""
    parts = mech.components if isinstance(mech, Mixture) else [mech]
    edges = []
    for part in parts:
        if not part.continuous:
            continue
        try:
            pieces = part.density_pieces(np.asarray(x, dtype=float))
        except Exception:  # not piecewise constant, or not declared: the uniform grid alone
            continue
        for lo, hi, _ in pieces:
            edges += [float(np.asarray(lo)), float(np.asarray(hi))]
    return np.asarray(edges, dtype=float)


#: a declared density piece narrower than this many doubles cannot be integrated from ``pdf``
RESOLVABLE_ULPS = 1e4


def _unresolvable(mech, x: float) -> bool:
    """Whether a declared density piece at input x is too narrow for double precision (e.g. PM's
    window, 2/(e^{ε/2} − 1) wide, is ~6 doubles wide near 1 at ε = 70)."""
    edges = _piece_edges(mech, x).reshape(-1, 2)
    if not edges.size:
        return False
    width = np.abs(edges[:, 1] - edges[:, 0])
    ulp = np.spacing(np.maximum(np.abs(edges[:, 0]), np.abs(edges[:, 1])))
    return bool(np.any((width > 0) & (width < RESOLVABLE_ULPS * ulp)) | np.any(width == 0))


def _range(mech) -> tuple[float, float]:
    lo, hi = (float(v) for v in mech.output_bounds())
    if not (math.isfinite(lo) and math.isfinite(hi)):
        lo, hi = -1.0 - 60.0 / mech.eps, 1.0 + 60.0 / mech.eps
    return lo, hi


#: a cell whose midpoint density differs from the mean of its ends by more than this fraction of
#: the largest density holds a step (or a kink): it is split where the density jumps
STEP_TOL = 1e-9
#: bisection steps locating a jump inside a cell (2^-60 of a cell: below a double's resolution)
BISECTIONS = 60


def _pdf_at(mech, y: np.ndarray, x: float) -> np.ndarray:
    dens = np.asarray(mech.pdf(y, np.float64(x)), dtype=float)
    if dens.shape != y.shape:
        raise _LawProblem(f"pdf(y, x) returned shape {dens.shape} for {y.shape} outputs")
    bad = ~np.isfinite(dens) | (dens < 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise _LawProblem(f"pdf({y[i]:.6g} | x={x:g}) = {float(dens[i])!r} (must be finite and ≥ 0)")
    return dens


def _density_cells(mech, x: float) -> tuple[np.ndarray, np.ndarray]:
    """(edges, mass of each cell) of the declared density at input x: the midpoint rule on a grid of
    :data:`N_GRID` points plus the edges of any declared ``density_pieces``, and, in every cell where
    the density steps (its midpoint value is not the mean of its ends), the midpoint rule on each
    side of the step, located by bisection. So a piecewise-constant density is integrated exactly
    whether or not it declares its pieces (the Staircase mechanism's infinitely many steps, issue
    54), and a smooth one as before."""
    lo, hi = _range(mech)
    edges = _piece_edges(mech, x)
    edges = edges[(edges > lo) & (edges < hi) & np.isfinite(edges)]
    grid = np.unique(np.concatenate([np.linspace(lo, hi, N_GRID), edges]))
    mids = 0.5 * (grid[1:] + grid[:-1])
    dens = _pdf_at(mech, mids, x)
    mass = dens * np.diff(grid)
    ends = _pdf_at(mech, grid, x)
    steps = np.flatnonzero(
        np.abs(dens - 0.5 * (ends[1:] + ends[:-1])) > STEP_TOL * max(float(ends.max()), float(dens.max()))
    )
    if steps.size:
        a, b = grid[steps].copy(), grid[steps + 1].copy()
        fa = ends[steps]
        for _ in range(BISECTIONS):  # keep the jump between a and b: f(a) on the left side
            m = 0.5 * (a + b)
            left = np.abs(_pdf_at(mech, m, x) - fa) <= np.abs(_pdf_at(mech, m, x) - ends[steps + 1])
            a, b = np.where(left, m, a), np.where(left, b, m)
        s = 0.5 * (a + b)
        lo_c, hi_c = grid[steps], grid[steps + 1]
        mass[steps] = (s - lo_c) * _pdf_at(mech, 0.5 * (lo_c + s), x) + (hi_c - s) * _pdf_at(mech, 0.5 * (s + hi_c), x)
    return grid, mass


def total_mass(mech, x: float) -> tuple[float, float]:
    """(Σ pmf, ∫ pdf) of the declared law at input x: the one computation of the law's total
    probability, used by :func:`verify_law` and ``contract.check_mechanism``."""
    atoms = np.asarray(mech.support(), dtype=float)
    p = float(_pmf(mech, np.array([float(x)]), atoms)[0].sum()) if len(atoms) else 0.0
    d = float(_density_cells(mech, x)[1].sum()) if _declares_density(mech) else 0.0
    return p, d


def mass_problem(mech, x: float, pmf_sum: float, integral: float) -> str:
    """'' when Σ pmf + ∫ pdf is 1 within :data:`MASS_TOL`, else which declared quantity is off and by
    how much (issue 54 item 6)."""
    total = pmf_sum + integral
    if abs(total - 1.0) <= MASS_TOL:
        return ""
    parts = []
    if len(mech.support()):
        parts.append(f"the pmf's atoms sum to {pmf_sum:.10g}")
    if _declares_density(mech):
        parts.append(f"the pdf integrates to {integral:.10g} over {_range(mech)}")
    why = (
        " — a declared density piece is narrower than double precision resolves at this ε, so the law "
        "cannot be checked numerically here (it may still be correct)"
        if _unresolvable(mech, x)
        else ""
    )
    return (
        f"at x = {x:g} {' and '.join(parts)}: the declared law's total probability is {total:.10g}, off by "
        f"{total - 1.0:+.3g} (tolerance {MASS_TOL:g}){why}"
    )


def _pmf(mech, xs: np.ndarray, atoms: np.ndarray) -> np.ndarray:
    p = np.asarray(mech.pmf(xs), dtype=float)
    if p.shape != xs.shape + (len(atoms),):
        raise _LawProblem(f"pmf(x) has shape {p.shape}, expected {xs.shape + (len(atoms),)} (one column per atom)")
    bad = ~np.isfinite(p) | (p < 0)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise _LawProblem(f"pmf(x={xs[i]:.6g}) at atom {atoms[j]:.6g} = {float(p[i, j])!r} (must be finite and ≥ 0)")
    return p


def _classify(y: np.ndarray, atoms: np.ndarray, grid: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """(index of the atom each output is, −1 if none; index of its density cell, −1 if none). An
    output is an atom only if it is that double exactly (as the audit's likelihood ratio reads it):
    a sampler that puts information in the low bits of an atom does not sample the declared law."""
    atom_of = np.full(y.shape, -1)
    if len(atoms):
        j = np.minimum(np.searchsorted(atoms, y), len(atoms) - 1)
        atom_of = np.where(atoms[j] == y, j, -1)
    cell_of = np.full(y.shape, -1)
    if grid is not None:
        inside = (atom_of < 0) & (y >= grid[0]) & (y <= grid[-1])
        cell_of[inside] = np.clip(np.searchsorted(grid, y[inside], side="right") - 1, 0, grid.size - 2)
    return atom_of, cell_of


def _merged(atoms: np.ndarray, grid: np.ndarray | None, bin_of_cell: np.ndarray | None) -> np.ndarray:
    """Category map: an atom that lies inside the density's range shares the category of the density
    bin around it (at large ε a sampler's continuous outputs can round onto such an atom: e.g. HM's
    Duchi atom 1 + 2/(e^ε − 1) is the double 1.0, the edge of PM's window, for ε ≳ 37)."""
    n_atoms = len(atoms)
    merge = np.arange(n_atoms + N_BINS + 1)
    if grid is not None and bin_of_cell is not None:
        inside = (atoms >= grid[0]) & (atoms <= grid[-1])
        cells = np.clip(np.searchsorted(grid, atoms[inside], side="right") - 1, 0, grid.size - 2)
        merge[np.flatnonzero(inside)] = n_atoms + bin_of_cell[cells]
    return merge


def _fit(probs: np.ndarray, counts: np.ndarray, alpha: float) -> tuple[str, dict]:
    """Chi-square on the categories expected ≥ 5 times, exact binomial tail on the pooled rest.
    Returns (problem or '', details)."""
    n = int(counts.sum())
    probs = probs / probs.sum()
    common = probs * n >= 5
    pool_p, pool_k = float(probs[~common].sum()), int(counts[~common].sum())
    info = {"n": n}
    if pool_k and pool_p * n < 5:
        tail = float(special.bdtrc(pool_k - 1, n, pool_p)) if pool_p > 0 else 0.0  # P(K ≥ pool_k)
        info["rare"] = (pool_k, pool_p * n, tail)
        if tail < alpha / 2:
            return (
                f"{pool_k} of {n} outputs fell where the declared law expects {pool_p * n:.3g} (p = {tail:.3g})",
                info,
            )
    elif pool_k or pool_p > 0:  # enough expected mass to pool into one more chi-square category
        probs = np.append(probs[common], pool_p)
        counts = np.append(counts[common], pool_k)
        common = np.ones(probs.size, bool)
    exp, obs = probs[common] * n, counts[common]
    if exp.size >= 2:
        stat = float(np.sum((obs - exp) ** 2 / exp))
        df = exp.size - 1
        p = float(special.chdtrc(df, stat))  # the chi-square survival function
        info.update(stat=stat, df=df, p=p)
        if p < alpha / 2:
            return f"outputs do not follow the declared law (chi-square {stat:.4g}, df {df}, p = {p:.3g})", info
    return "", info


def _declared_categories(mech, x: float, atoms: np.ndarray):
    """Declared probability of each atom, density bin and 'elsewhere', and a classifier of outputs."""
    p_atoms = _pmf(mech, np.array([x]), atoms)[0] if len(atoms) else np.zeros(0)
    grid, cell_mass, bin_of_cell, p_bins = None, None, None, np.zeros(N_BINS)
    if _declares_density(mech):
        grid, cell_mass = _density_cells(mech, x)
        cum = np.cumsum(cell_mass)
        total = cum[-1]
        if total > 0:
            bin_of_cell = np.minimum(((cum - 0.5 * cell_mass) / total * N_BINS).astype(int), N_BINS - 1)
            p_bins = np.bincount(bin_of_cell, weights=cell_mass, minlength=N_BINS)
    mass = float(p_atoms.sum() + p_bins.sum())
    elsewhere = max(0.0, 1.0 - mass)
    return (
        mass,
        np.concatenate([p_atoms, p_bins, [elsewhere]]),
        grid,
        bin_of_cell,
        float(p_atoms.sum()),
        float(p_bins.sum()),
    )


def verify_law(mech: Mechanism, name: str | None = None, n: int = N_SAMPLES, seed: int = 0, alpha: float = ALPHA):
    """Check (a)-(c) of the module doc at the mechanism's ε; returns a :class:`LawCheck`.
    Raises :class:`MechanismOutputError` if ``perturb`` returns non-finite or misshapen output."""
    name = name or getattr(mech, "registered_name", None) or getattr(mech, "name", "mechanism")
    check = LawCheck(name, float(mech.eps))
    atoms = np.asarray(mech.support(), dtype=float)
    if not len(atoms) and not _declares_density(mech):
        check.problems.append("declares no output law (no pmf atoms and no pdf): nothing to compute a loss from")
        return check
    if len(atoms) and (not np.isfinite(atoms).all() or np.any(np.diff(atoms) <= 0)):
        check.problems.append("support() must be finite and strictly increasing")
        return check
    try:
        if len(atoms):
            xs = np.linspace(-1.0, 1.0, 201)
            totals = _pmf(mech, xs, atoms).sum(axis=1)
            if not _declares_density(mech):
                worst = int(np.argmax(np.abs(totals - 1.0)))
                if abs(totals[worst] - 1.0) > MASS_TOL:
                    check.problems.append(f"pmf sums to {totals[worst]:.8g} at x = {xs[worst]:.3g}, not 1")
                    return check
        laws = {x: _declared_categories(mech, x, atoms) for x in INPUTS}
    except _LawProblem as exc:
        check.problems.append(str(exc))
        return check
    except Exception as exc:  # the declared law cannot be evaluated: a problem of the law
        check.problems.append(f"the declared law cannot be evaluated: {type(exc).__name__}: {exc}")
        return check
    for x, (_mass, _probs, _grid, _bins, pmf_sum, integral) in laws.items():
        problem = mass_problem(mech, x, pmf_sum, integral)
        if problem:
            check.problems.append(problem)
    if check.problems:
        return check
    rng = np.random.default_rng(seed)
    for x in INPUTS:
        _mass, probs, grid, bin_of_cell, *_sums = laws[x]
        xin = np.full(n, x)
        try:
            raw = mech.perturb(xin, rng)
        except MechanismOutputError:
            raise
        except Exception as exc:
            raise MechanismOutputError(
                f"{describe(mech)}: perturb raised {type(exc).__name__} at x = {x:g}: {exc}"
            ) from exc
        y = check_output(mech, xin, raw)
        atom_of, cell_of = _classify(y, atoms, grid)
        cat = np.full(n, len(atoms) + N_BINS)  # elsewhere
        cat[atom_of >= 0] = atom_of[atom_of >= 0]
        in_cell = cell_of >= 0
        if bin_of_cell is not None:
            cat[in_cell] = len(atoms) + bin_of_cell[cell_of[in_cell]]
        merge = _merged(atoms, grid, bin_of_cell)
        merged_probs = np.bincount(merge, weights=probs, minlength=probs.size)
        counts = np.bincount(merge[cat], minlength=probs.size)
        keep = (merged_probs > 0) | (counts > 0)
        problem, info = _fit(merged_probs[keep], counts[keep].astype(float), alpha)
        check.fit[x] = info
        if problem:
            check.problems.append(f"perturb at x = {x:g}: {problem}")
    return check


def verified_exact_loss(mech: Mechanism, name: str | None = None, **kwargs) -> tuple[float, str]:
    """(exact loss, '') when the declared law passes :func:`verify_law`, else (NaN, reason): an
    unverified law never gets an exact loss."""
    from ldprepro.domain.mechanisms.privacy_loss import numeric_exact_loss

    check = verify_law(mech, name, **kwargs)
    if not check.ok:
        return math.nan, check.reason
    loss = numeric_exact_loss(mech)
    if math.isnan(loss):
        return math.nan, "the exact loss computed from the declared law is NaN"
    return loss, ""
