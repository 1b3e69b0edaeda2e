"""The staircase mechanism (Geng & Viswanath, "The optimal noise-adding mechanism in differential
privacy", IEEE Trans. Inf. Theory 2016, Theorem 3 and Algorithm 1) for inputs in [−1, 1]: a
correct plugin with an exact step-shaped density and no ``density_pieces`` (issue 54 item 6).

The output is x + Z, with sensitivity Δ = 2 and b = e^−ε. Z is symmetric with density, for
k = 0, 1, 2, … and |z| in [kΔ, (k + γ)Δ): a·b^k, and for |z| in [(k + γ)Δ, (k + 1)Δ): a·b^(k+1),
where a = (1 − b) / (2Δ(γ + (1 − γ)b)); it integrates to 1 exactly (two geometric series). Any
γ in (0, 1) gives ε-DP (neighbouring inputs shift z by at most Δ, and across one step of length Δ
the density falls by at most b); γ* = 1/(1 + e^{ε/2}) minimises the variance. Sampling (their
Algorithm 1): a sign S, G geometric with P(G = k) = (1 − b)b^k, B Bernoulli with
P(B = 0) = γ / (γ + (1 − γ)b), U uniform: Z = S·Δ·(G + γU) if B = 0, else S·Δ·(G + γ + (1 − γ)U).
"""

import math

import numpy as np

from ldprepro.mechanisms import Mechanism, register_mechanism

DELTA = 2.0


class Staircase(Mechanism):
    name = "staircase"
    discrete = False
    continuous = True

    def __init__(self, eps):
        super().__init__(eps)
        self.b = math.exp(-self.eps)
        self.gamma = 1.0 / (1.0 + math.exp(self.eps / 2.0))
        self.height = (1.0 - self.b) / (2.0 * DELTA * (self.gamma + (1.0 - self.gamma) * self.b))

    def _perturb_block(self, x, rng):
        n = x.size
        sign = np.where(rng.random(n) < 0.5, -1.0, 1.0)
        g = rng.geometric(1.0 - self.b, n) - 1.0  # numpy's geometric starts at 1
        outer = rng.random(n) >= self.gamma / (self.gamma + (1.0 - self.gamma) * self.b)
        u = rng.random(n)
        z = np.where(outer, g + self.gamma + (1.0 - self.gamma) * u, g + self.gamma * u)
        return x + sign * DELTA * z

    def _second_moment(self):
        # E[Z²] = 2·Σ_k ∫ z² f(z) dz over the steps of one side, summed in closed form numerically
        k = np.arange(0, 2000.0)
        g, b, a = self.gamma, self.b, self.height
        inner = ((k + g) ** 3 - k**3) * b**k
        outer = ((k + 1) ** 3 - (k + g) ** 3) * b ** (k + 1)
        return 2.0 * a * DELTA**3 / 3.0 * float(np.sum(inner + outer))

    def variance(self, x):
        return np.full(np.shape(x), self._second_moment())

    def worst_case_variance(self):
        return self._second_moment()

    def logpdf(self, y, x):
        z = np.abs(np.asarray(y, dtype=float) - np.asarray(x, dtype=float)) / DELTA
        k = np.floor(z)
        steps = k + (z - k >= self.gamma)  # the number of e^−ε falls from the centre
        return math.log(self.height) - self.eps * steps

    def pdf(self, y, x):
        return np.exp(self.logpdf(y, x))


register_mechanism("staircase", Staircase, label="staircase (Geng & Viswanath)", source="tests/plugins/staircase.py")
