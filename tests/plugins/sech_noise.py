"""Hyperbolic-secant noise: a continuous plugin mechanism, written from scratch.

The output is x + Z, where Z has density f(z) = (a/π)·sech(a·z) with a = ε/2. Since
|d/dz log f(z)| = a·|tanh(a·z)| < a, two inputs at most 2 apart give a density ratio below
e^{2a} = e^ε at every output: ε-LDP. Z is symmetric, so the output is unbiased, and
Var[output | x] = π²/(4a²) = π²/ε² (about 1.23 × Laplace's 8/ε²). The CDF of Z is
(2/π)·arctan(e^{a·z}), so one uniform u gives Z = ln(tan(π·u/2))/a (inverse CDF).
"""

import math

import numpy as np

from ldprepro.mechanisms import Mechanism, register_mechanism


class SechNoise(Mechanism):
    name = "sech_noise"
    discrete = False  # no atoms
    continuous = True  # the whole law is a density

    def __init__(self, eps):
        super().__init__(eps)  # checks ε, sets self.eps
        self.rate = self.eps / 2.0  # a

    def _sample(self, x, u, lo=0.0, width=1.0):
        v = np.maximum((u - lo) / width, 2.0**-54)  # uniform on (0, 1): u = 0 would give −inf
        return x + np.log(np.tan(0.5 * np.pi * v)) / self.rate

    def variance(self, x):
        return np.full(np.shape(x), (math.pi / self.eps) ** 2)

    def worst_case_variance(self):
        return (math.pi / self.eps) ** 2

    # output_bounds() stays (−inf, inf), support() stays empty: the base class's defaults

    def logpdf(self, y, x):
        # log((a/π)·sech(a·z)) with log cosh(t) = |t| + log1p(e^{−2|t|}) − log 2: no overflow at large ε
        t = np.abs(self.rate * (np.asarray(y, dtype=float) - np.asarray(x, dtype=float)))
        return math.log(self.rate / math.pi) + math.log(2.0) - t - np.log1p(np.exp(-2.0 * t))

    def pdf(self, y, x):
        return np.exp(self.logpdf(y, x))


register_mechanism("sech_noise", SechNoise, label="sech noise (example plugin)", source="docs/extending.md")
