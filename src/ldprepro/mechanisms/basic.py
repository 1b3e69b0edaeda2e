"""Laplace, Duchi et al. (1-D) and Harmony.

References: Zhao et al. 2021 (paper 002) §1–2.1 of ``shared/specs/zhao2021_numeric_mechanisms.md``;
Harmony: Nguyên et al., arXiv 1606.05053, Alg. 1 (``shared/specs/hiera.md`` §2).
"""

from __future__ import annotations

import math

import numpy as np

from .base import Mechanism, as_input, check_eps


class Laplace(Mechanism):
    """t* = t + Lap(b), b = 2/ε (sensitivity 2 on [-1, 1]). Var = 2b² = 8/ε²."""

    name = "laplace"

    def __init__(self, eps: float):
        super().__init__(eps)
        self.scale = 2.0 / self.eps

    def _sample(self, x, u, lo=0.0, width=1.0):
        # Inverse CDF of the Laplace law: y = x − b·sign(w)·ln(1 − 2|w|), w = u' − ½
        # (measured faster than Generator.laplace when run block-wise).
        u = u * (1.0 / width)
        u -= lo / width + 0.5
        mag = np.abs(u)
        mag *= -2.0
        np.log1p(mag, out=mag)
        mag *= -self.scale
        np.copysign(mag, u, out=mag)
        mag += x
        return mag

    def variance(self, x):
        return np.full(np.shape(x), 2.0 * self.scale**2)

    def worst_case_variance(self):
        return 2.0 * self.scale**2

    def pdf(self, y, x):
        y, x = np.asarray(y, dtype=float), np.asarray(x, dtype=float)
        return np.exp(-np.abs(y - x) / self.scale) / (2.0 * self.scale)


class _BinaryOutput(Mechanism):
    """Outputs ±C with P(+C | t) = 1/2 + t/(2C), which is unbiased; Var = C² − t²."""

    discrete = True
    continuous = False

    def __init__(self, eps: float, c: float):
        super().__init__(eps)
        self.c = float(c)
        self._support = np.array([-self.c, self.c])

    def prob_plus(self, x):
        return 0.5 + np.asarray(x, dtype=float) / (2.0 * self.c)

    def _sample(self, x, u, lo=0.0, width=1.0):
        # +C iff u' < ½ + t/(2C)  <=>  t − (u' − ½)·2C > 0 with u' = (u − lo)/width; the sign of
        # that difference is the output's sign (a tie has probability 2^-53 and goes to +C).
        k = 2.0 * self.c / width
        out = u * -k
        out += k * lo + self.c
        out += x
        np.copysign(self.c, out, out=out)
        return out

    def variance(self, x):
        x = np.asarray(x, dtype=float)
        return self.c**2 - x * x

    def worst_case_variance(self):
        return self.c**2

    def output_bounds(self):
        return (-self.c, self.c)

    def support(self):
        return self._support

    def pmf(self, x):
        p = self.prob_plus(x)
        return np.stack([1.0 - p, p], axis=-1)


class Duchi(_BinaryOutput):
    """Duchi et al. 1-D: outputs ±C_D, C_D = (e^ε+1)/(e^ε−1), P(+C_D|t) = ½ + (e^ε−1)t/(2(e^ε+1)).

    Spec §2.1. Worst-case variance C_D² at t = 0.
    """

    name = "duchi"

    def __init__(self, eps: float):
        eps = check_eps(eps)
        a = math.exp(eps)
        super().__init__(eps, (a + 1.0) / (a - 1.0))


class Harmony(_BinaryOutput):
    """Harmony (Nguyên et al. 2016, Alg. 1), 1-D.

    1. Discretise: v* = +1 w.p. (1+v)/2, else −1.
    2. Randomised response: keep v* w.p. p = e^ε/(e^ε+1), else flip.
    3. Calibrate: v* ← v*·(e^ε+1)/(e^ε−1).

    The composed law is P(+C|v) = ½(1+v)p + ½(1−v)(1−p) = ½ + v(e^ε−1)/(2(e^ε+1)): exactly
    Duchi's 1-D mechanism. ``perturb`` samples that composed Bernoulli (one uniform per user);
    ``perturb_stepwise`` runs the three steps literally, and the tests check the two agree.
    """

    name = "harmony"

    def __init__(self, eps: float):
        eps = check_eps(eps)
        a = math.exp(eps)
        super().__init__(eps, (a + 1.0) / (a - 1.0))
        self.keep = a / (a + 1.0)

    def perturb_stepwise(self, x, rng):
        """Algorithm 1 step by step (two uniforms per user)."""
        x = as_input(x)
        discretised = 2.0 * rng.random(x.shape) - 1.0 < x  # step 1: +1 w.p. (1+v)/2
        flipped = rng.random(x.shape) >= self.keep          # step 2
        return np.where(discretised ^ flipped, self.c, -self.c)  # step 3: ±(e^ε+1)/(e^ε−1)
