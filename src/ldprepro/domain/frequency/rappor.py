"""RAPPOR-style permanent + instantaneous randomised response over a unary encoding (RR-LDP of paper
004, docs/papers/lremh.md §2-3): :class:`RapporUE`, its combined channel :func:`rappor_channel` and
its labelled privacy figures :func:`rappor_privacy`."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ldprepro.domain.frequency.base import _check_prob
from ldprepro.domain.frequency.unary import UnaryEncoding


def rappor_channel(f: float, p: float, q: float) -> tuple[float, float]:
    """Combined RAPPOR channel (docs/papers/lremh.md §2, eq. 8-9): returns (q*, p*) with
    q* = Pr(T=1 | s=1) = ½f(p+q) + (1-f)q and p* = Pr(T=1 | s=0) = ½f(p+q) + (1-f)p."""
    f = _check_prob(f, "f")
    p = _check_prob(p, "p")
    q = _check_prob(q, "q")
    base = 0.5 * f * (p + q)
    return base + (1 - f) * q, base + (1 - f) * p


def rappor_privacy(f: float, p: float, q: float, d: int = 1) -> dict[str, float]:
    """Labelled privacy figures of the RAPPOR-style RR for records of ``d`` attributes (docs/papers/lremh.md §3).

    * ``permanent_eps_record``: Theorem 1, ε₁ = 2d ln((1 - f/2)/(f/2)) (correct as printed);
    * ``instantaneous_eps_per_attribute``: Theorem 2 as printed, ln(q*(1-p*)/(p*(1-q*)));
    * ``instantaneous_eps_record``: d × the per-attribute value, the correct record-level bound (the
      paper's Theorem 2 omits the factor d).
    """
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
        raise ValueError(f"number of attributes d must be a positive integer, got {d!r}")
    qs, ps = rappor_channel(f, p, q)
    with np.errstate(divide="ignore"):
        perm = 2 * d * float(np.log((1 - f / 2) / (f / 2))) if f > 0 else math.inf
        inst = float(abs(np.log(qs) + np.log1p(-ps) - np.log(ps) - np.log1p(-qs)))
    return {
        "q_star": qs,
        "p_star": ps,
        "permanent_eps_record": perm,
        "instantaneous_eps_per_attribute": inst,
        "instantaneous_eps_record": d * inst,
    }


class RapporUE(UnaryEncoding):
    """RAPPOR-style permanent + instantaneous randomised response over a unary encoding
    (RR-LDP, docs/papers/lremh.md §2-3; Erlingsson et al. 2014 with one-hot instead of Bloom filter).

    * Permanent RR (:meth:`permanent`, memoised per user in a deployment): each bit is kept with
      probability 1-f, else set to 0 or 1 with probability f/2 each.
    * Instantaneous RR (:meth:`instantaneous`, fresh per collection): reports 1 with probability ``q``
      if the permanent bit is 1 and ``p`` if it is 0 (spec's naming; the paper uses q=0.75, p=0.5).
    * Combined channel: ``q_star`` = ½f(p+q)+(1-f)q = Pr(1 | bit 1), ``p_star`` = ½f(p+q)+(1-f)p =
      Pr(1 | bit 0); hence ``p_true = q_star`` and ``p_other = p_star`` in this module's notation.

    :meth:`perturb` draws Bernoulli(q*)/Bernoulli(p*) in one shot; :meth:`perturb_two_stage` runs the
    two stages. They agree in distribution for a single collection.

    Privacy (labelled, docs/papers/lremh.md §3): :meth:`permanent_epsilon` (Theorem 1, ε₁ = 2d ln((1-f/2)/(f/2))),
    :attr:`instantaneous_epsilon_per_attribute` (Theorem 2 as printed) and
    :meth:`instantaneous_epsilon_record` (d × that; the paper omits d). ``epsilon_exact`` is the
    one-attribute value, equal to ``instantaneous_epsilon_per_attribute``.
    """

    name = "rappor"

    def __init__(self, k: int, f: float, p: float = 0.5, q: float = 0.75):
        self.f = _check_prob(f, "f", open_high=True)
        self.p = _check_prob(p, "p")
        self.q = _check_prob(q, "q")
        if self.p == self.q:
            raise ValueError(f"instantaneous RR needs p != q, got p = q = {p!r}")
        self.q_star, self.p_star = rappor_channel(self.f, self.p, self.q)
        super().__init__(k, self.q_star, self.p_star)

    def __repr__(self) -> str:
        return f"RapporUE(k={self.k}, f={self.f!r}, p={self.p!r}, q={self.q!r})"

    # --- stages --------------------------------------------------------------------------------
    def encode(self, values: Any) -> np.ndarray:
        """One-hot encoding: (n, k) uint8."""
        v = self._validate(values)
        out = np.zeros((v.shape[0], self.k), dtype=np.uint8)
        out[np.arange(v.shape[0]), v] = 1
        return out

    def permanent(self, values: Any, rng: np.random.Generator) -> np.ndarray:
        """Permanent RR of the one-hot encoding (eq. 6): (n, k) uint8. Per bit: keep w.p. 1-f,
        0 w.p. f/2, 1 w.p. f/2 (i.e. Pr(1 | 1) = 1 - f/2, Pr(1 | 0) = f/2)."""
        v = self._validate(values)
        return self._draw_bits(v, 1.0 - self.f / 2, self.f / 2, rng)

    def instantaneous(self, permanent_bits: Any, rng: np.random.Generator) -> np.ndarray:
        """Instantaneous RR (eq. 7) of memoised permanent bits: (n, k) uint8, 1 w.p. q if the bit is 1,
        p if 0."""
        b = np.asarray(permanent_bits)
        if b.ndim != 2 or b.shape[1] != self.k:
            raise ValueError(f"permanent bits must be an (n, {self.k}) matrix, got shape {b.shape}")
        bad = (b != 0) & (b != 1)
        if bad.any():
            raise ValueError(f"permanent bits must be 0/1, got {b[bad][0].item()!r}")
        prob = np.where(b.astype(bool), self.q, self.p)
        return (rng.random(b.shape) < prob).view(np.uint8)

    def perturb_two_stage(self, values: Any, rng: np.random.Generator) -> np.ndarray:
        """Permanent then instantaneous RR (one collection of fresh users)."""
        return self.instantaneous(self.permanent(values, rng), rng)

    def pmf_bit_permanent(self, true_bit: Any, bit: Any) -> np.ndarray:
        """Pr(permanent bit = ``bit`` | encoded bit = ``true_bit``)."""
        tb = np.asarray(true_bit).astype(bool)
        b = np.asarray(bit).astype(bool)
        p1 = np.where(tb, 1.0 - self.f / 2, self.f / 2)
        return np.where(b, p1, 1.0 - p1)

    # --- privacy (labelled) ---------------------------------------------------------------------
    def permanent_epsilon(self, d: int = 1) -> float:
        """Theorem 1: ε₁ = 2d ln((1 - f/2)/(f/2)) for records of ``d`` attributes (correct as printed)."""
        return rappor_privacy(self.f, self.p, self.q, d)["permanent_eps_record"]

    @property
    def instantaneous_epsilon_per_attribute(self) -> float:
        """Theorem 2 as printed: ln(q*(1-p*)/(p*(1-q*))), the bound for ONE attribute."""
        return rappor_privacy(self.f, self.p, self.q, 1)["instantaneous_eps_per_attribute"]

    def instantaneous_epsilon_record(self, d: int) -> float:
        """Correct record-level instantaneous bound d·ln(q*(1-p*)/(p*(1-q*))) (paper omits d)."""
        return rappor_privacy(self.f, self.p, self.q, d)["instantaneous_eps_record"]

    def privacy(self, d: int = 1) -> dict[str, float]:
        """All labelled figures; see :func:`rappor_privacy`."""
        return rappor_privacy(self.f, self.p, self.q, d)
