"""Binary randomised response on {−C, C}: a discrete plugin mechanism, written from scratch.

Each user rounds x ∈ [−1, 1] at random to b = +1 (probability (1 + x)/2) or b = −1, keeps b with
probability 1 − q and flips it with probability q = 1/(1 + e^ε) (randomised response), and
reports C·b with C = (e^ε + 1)/(e^ε − 1) = 1/tanh(ε/2), the scaling that makes the output
unbiased: E[output | x] = C·x·(1 − 2q) = x. Var[output | x] = C² − x² = 1/sinh²(ε/2) + (1 − x²).
P(+C | x)/P(+C | x') ≤ (1 − q)/q = e^ε, so it is ε-LDP.
"""

import math

import numpy as np

from ldprepro.mechanisms import Mechanism, register_mechanism


class BinaryRR(Mechanism):
    name = "binary_rr"
    discrete = True  # every output is an atom (−C or C)
    continuous = False  # no density part

    def __init__(self, eps):
        super().__init__(eps)  # checks ε, sets self.eps
        self.q = 1.0 / (1.0 + math.exp(self.eps))  # flip probability, exact for every ε ≤ 700
        self.c = 1.0 / math.tanh(self.eps / 2.0)

    def prob_plus(self, x):
        """P(output = +C | x): a sum of two non-negative terms, exact even where q underflows 1."""
        x = np.asarray(x, dtype=float)
        return 0.5 * (1.0 + x) * (1.0 - self.q) + 0.5 * (1.0 - x) * self.q

    def _sample(self, x, u, lo=0.0, width=1.0):
        # (u − lo)/width is uniform on [0, 1): output +C when it falls below P(+C | x)
        return np.where((u - lo) / width < self.prob_plus(x), self.c, -self.c)

    def variance(self, x):
        x = np.asarray(x, dtype=float)
        return 1.0 / math.sinh(self.eps / 2.0) ** 2 + (1.0 - x * x)

    def worst_case_variance(self):
        return self.c**2  # at x = 0

    def output_bounds(self):
        return (-self.c, self.c)

    def support(self):
        return np.array([-self.c, self.c])

    def pmf(self, x):
        x = np.asarray(x, dtype=float)
        return np.stack([self.prob_plus(-x), self.prob_plus(x)], axis=-1)  # [P(−C | x), P(+C | x)]


register_mechanism("binary_rr", BinaryRR, label="binary RR (example plugin)", source="docs/extending.md")
