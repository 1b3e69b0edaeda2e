"""Laplace, Duchi et al. (1-D) and Harmony.

References: Zhao et al. 2021 (paper 002) §1–2.1 of docs/papers/ldpfl.md;
Harmony: Nguyên et al., arXiv 1606.05053, Alg. 1 (docs/papers/hiera.md §2).
"""

from __future__ import annotations

import math

import numpy as np

from ldprepro.domain.mechanisms import exponential, kernels
from ldprepro.domain.mechanisms.base import Mechanism, as_input, check_mechanism_eps, samples_as


class Laplace(Mechanism):
    """t* = t + Lap(b), b = 2/ε (sensitivity 2 on [-1, 1]). Var = 2b² = 8/ε²."""

    name = "laplace"
    #: Larger blocks than the other mechanisms': each block also pays for its few slow words
    #: (exponential.py) and two compiled calls; 2¹⁷ users is 1 MiB of words.
    block_users = 1 << 17

    def __init__(self, eps: float):
        super().__init__(eps)
        self.scale = 2.0 / self.eps

    def _perturb_block(self, x, rng):
        # t + b·S·E with E ~ Exp(1) by the ziggurat and S an independent fair sign, both from one
        # 64-bit word per user (exponential.py): exactly Laplace(t, b), no logarithm per user.
        return exponential.laplace_block(x, rng, self.scale)

    def _fused(self):
        return kernels.laplace(self.scale) if type(self)._perturb_block is Laplace._perturb_block else None

    def _sample(self, x, u, lo=0.0, width=1.0):
        # Inverse CDF of the Laplace law: y = x − b·sign(w)·ln(1 − 2|w|), w = u' − ½
        # (measured faster than Generator.laplace when run block-wise).
        u = u * (1.0 / width)
        u -= lo / width + 0.5
        mag = np.abs(u)
        mag *= -2.0
        np.maximum(mag, -1.0 + 2.0**-53, out=mag)  # u' = 0 would give an infinite output
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
        return np.exp(self.logpdf(y, x))

    def logpdf(self, y, x):
        y, x = np.asarray(y, dtype=float), np.asarray(x, dtype=float)
        return -np.abs(y - x) / self.scale - math.log(2.0 * self.scale)


class _BinaryOutput(Mechanism):
    """Outputs ±C with P(+C | t) = 1/2 + t/(2C), which is unbiased; Var = C² − t².

    Parametrised by g = 1/C and 1 − g (passed separately so that it keeps its precision when g is
    within rounding of 1, at large ε): then P(±C | t) = ((1±t)(1+g) + (1∓t)(1−g))/4, a sum of
    non-negative terms, exact in relative terms for every t and ε.
    """

    discrete = True
    continuous = False

    def __init__(self, eps: float, g: float, one_minus_g: float, log_one_minus_g: float):
        super().__init__(eps)
        self.g, self._1mg, self._log_1mg = float(g), float(one_minus_g), float(log_one_minus_g)
        self.c = 1.0 / self.g
        self._cm1 = self._1mg / self.g  # C − 1, exact
        self._support = np.array([-self.c, self.c])

    def prob_plus(self, x):
        x = np.asarray(x, dtype=float)
        return 0.25 * ((1.0 + x) * (1.0 + self.g) + (1.0 - x) * self._1mg)

    def _sample(self, x, u, lo=0.0, width=1.0):
        # +C iff u' < ½ + t/(2C)  <=>  t − (u' − ½)·2C > 0 with u' = (u − lo)/width; the sign of
        # that difference is the output's sign (a tie has probability 2^-53 and goes to +C).
        k = 2.0 * self.c / width
        out = u * -k
        out += k * lo + self.c
        out += x
        np.copysign(self.c, out, out=out)
        return out

    def _sample_kernel(self):
        return (kernels.BINARY, (self.c,)) if type(self)._sample is _BinaryOutput._sample else None

    def variance(self, x):
        """C² − t² = ((1 − |t|) + (C − 1))·(C + |t|), free of cancellation when C → 1."""
        t = np.abs(np.asarray(x, dtype=float))
        return ((1.0 - t) + self._cm1) * (self.c + t)

    def worst_case_variance(self):
        return self.c**2

    def output_bounds(self):
        return (-self.c, self.c)

    def support(self):
        return self._support

    def pmf(self, x):
        x = np.asarray(x, dtype=float)
        return np.stack([self.prob_plus(-x), self.prob_plus(x)], axis=-1)

    def logpmf(self, x):
        x = np.asarray(x, dtype=float)
        lg = math.log1p(self.g) - math.log(4.0)
        lm = self._log_1mg - math.log(4.0)
        with np.errstate(divide="ignore"):
            lp, ln = np.log1p(x), np.log1p(-x)
        return np.stack([np.logaddexp(ln + lg, lp + lm), np.logaddexp(lp + lg, ln + lm)], axis=-1)


def binary_reports(mech) -> bool:
    """Whether ``mech`` reports ±C with its class's own sampler (Duchi's 1-D mechanism, Harmony; not a
    subclass that draws otherwise, e.g. a plugin): then the sum of its reports is drawn exactly from
    the count of +C reports (``domain.binary_sum``)."""
    return samples_as(mech, _BinaryOutput)


def _duchi_g(eps: float) -> tuple[float, float, float]:
    """g = 1/C_D = (e^ε−1)/(e^ε+1) = tanh(ε/2), 1 − g = 2e^{−ε}/(1+e^{−ε}) and log(1 − g)."""
    return (
        math.tanh(eps / 2.0),
        2.0 * math.exp(-eps) / (1.0 + math.exp(-eps)),
        math.log(2.0) - eps - math.log1p(math.exp(-eps)),
    )


class Duchi(_BinaryOutput):
    """Duchi et al. 1-D: outputs ±C_D, C_D = (e^ε+1)/(e^ε−1), P(+C_D|t) = ½ + (e^ε−1)t/(2(e^ε+1)).

    Docs/papers/ldpfl.md §2.1. Worst-case variance C_D² at t = 0.
    """

    name = "duchi"

    def __init__(self, eps: float):
        eps = check_mechanism_eps(eps, self.name)
        super().__init__(eps, *_duchi_g(eps))


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
        eps = check_mechanism_eps(eps, self.name)
        super().__init__(eps, *_duchi_g(eps))
        self.keep = 1.0 / (1.0 + math.exp(-eps))  # e^ε/(e^ε+1)

    def perturb_stepwise(self, x, rng):
        """Algorithm 1 step by step (two uniforms per user)."""
        x = as_input(x)
        discretised = 2.0 * rng.random(x.shape) - 1.0 < x  # step 1: +1 w.p. (1+v)/2
        flipped = rng.random(x.shape) >= self.keep  # step 2
        return np.where(discretised ^ flipped, self.c, -self.c)  # step 3: ±(e^ε+1)/(e^ε−1)
