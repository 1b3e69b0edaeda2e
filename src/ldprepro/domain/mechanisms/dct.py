"""DCT: the "classified transformation" perturbation of paper 003 (Zhu, Wang, Sun), Algorithm 3.

Spec: docs/papers/dct.md. Implemented exactly as written, with distance parameter α
(paper: α = 5): d = 1/(α·ε), m = d/2,

1. draw a category bit b ~ Bernoulli(½), independently of the input v (Alg. 3 lines 1-6);
2. randomised response on b: keep it with probability (e^ε−1)/(e^ε+1), otherwise replace it by
   a fresh uniform bit (lines 7-12);
3. b = 1 → output uniform on the inner segment [v−m, v+m]; b = 0 → uniform on the outer
   segments [v−d, v−m) ∪ (v+m, v+d].

What it really is (docs/papers/dct.md §2, verified by the tests): the bit is ½/½ before and after step 2, so the
output is exactly v + Uniform[−d, d]: unbiased, Var = d²/3 = 1/(3α²ε²) for every v. The support
moves with v, so the density ratio between two inputs is unbounded: **DCT is not ε-LDP for any
ε** and the paper's Lemma 1 does not hold. ``pdf`` exposes that behaviour to the privacy audit.
"""

from __future__ import annotations

import math

import numpy as np

from ldprepro.domain.mechanisms import kernels
from ldprepro.domain.mechanisms.base import Mechanism, UniformMixture, samples_as


class DCT(Mechanism):
    name = "dct"
    #: Not ε-LDP: the support [v−d, v+d] depends on v (see module docstring).
    satisfies_ldp = False

    def __init__(self, eps: float, alpha: float = 5.0):
        super().__init__(eps)
        alpha = float(alpha)
        if not (math.isfinite(alpha) and alpha > 0):
            raise ValueError(f"DCT distance parameter alpha must be > 0, got {alpha!r}")
        self.alpha = alpha
        self.d = 1.0 / (alpha * self.eps)
        self.m = self.d / 2.0
        # keep = (e^ε−1)/(e^ε+1) = tanh(ε/2) and 1 − keep = 2e^{−ε}/(1+e^{−ε}), both exact (keep
        # rounds to 1 from ε ≈ 38 on; 1 − keep stays positive up to ε = 700).
        self.keep = math.tanh(self.eps / 2.0)
        self._replace = 2.0 * self.ie / (1.0 + self.ie)
        self._inv_keep, self._inv_replace = 1.0 / self.keep, 1.0 / self._replace

    def _perturb_block(self, x, rng):
        """Algorithm 3, step by step.

        Randomness: two fair bits per user from a byte stream (step 1's bit and step 2's fresh
        bit) and one uniform u that decides step 2's keep/replace (u < keep) and, rescaled within
        the chosen interval (where it is again uniform and independent of the decision), gives
        step 3's position.
        """
        bits = np.unpackbits(np.frombuffer(rng.bytes((2 * x.size + 7) // 8), dtype=np.uint8))
        bit, fresh = bits[: x.size].view(bool), bits[x.size : 2 * x.size].view(bool)  # step 1
        u = rng.random(x.shape)
        kept = u < self.keep  # step 2
        bit = bit ^ ((bit ^ fresh) & ~kept)  # the fresh bit where not kept
        # rescale u within its interval: u/keep if kept, (u − keep)/(1 − keep) otherwise
        replaced = (~kept).astype(float)
        u -= replaced * self.keep
        replaced *= self._inv_replace - self._inv_keep
        replaced += self._inv_keep
        u *= replaced
        return self._place(x, bit, u)  # step 3

    def uniform_mixture(self) -> UniformMixture | None:
        """Exactly v + Uniform[−d, d) (module docstring): no background (q = 0), the window
        [t − d, t + d). None for a subclass that replaces a step of the sampler."""
        if not samples_as(self, DCT, ("perturb", "_perturb_block", "_sample", "_place")):
            return None
        return UniformMixture(q=0.0, half_range=0.0, slope=1.0, offset=-self.d, width=2.0 * self.d)

    def _place(self, x, inner, w):
        """Uniform position w ∈ [0,1) on the inner (``inner`` True) or outer segments.

        With m = d/2 both the inner segment (length 2m) and the outer pair (total length
        2(d − m)) have length d, so s = d·w is the distance travelled along either:
        inner y = v − m + s; outer y = v − d + s (left piece, s < m) or v + s (right piece).
        That is y = v + (s − m) + [outer]·m·sign(s − m).
        """
        t = w * self.d
        t -= self.m
        jump = np.copysign(self.m, t)
        jump *= ~inner
        t += x
        t += jump
        return t

    def _sample(self, x, u, lo=0.0, width=1.0):
        # Same law from one uniform (used only inside mixtures/wrappers): the final bit is ½/½.
        w = (u - lo) * (2.0 / width)
        inner = w < 1.0
        w -= ~inner
        return self._place(x, inner, w)

    def _sample_kernel(self):
        return (kernels.DCT_ONE_UNIFORM, (self.d, self.m)) if type(self)._sample is DCT._sample else None

    def _fused(self):
        if type(self)._perturb_block is not DCT._perturb_block or type(self)._place is not DCT._place:
            return None
        return kernels.dct(self.keep, self._inv_keep, self._inv_replace, self.d, self.m)

    def prob_inner(self) -> float:
        """P(final bit = 1) = keep·½ + (1 − keep)·½ = ½ for every input."""
        return self.keep * 0.5 + self._replace * 0.5

    def variance(self, x):
        return np.full(np.shape(x), self.d**2 / 3.0)

    def worst_case_variance(self):
        return self.d**2 / 3.0

    def output_bounds(self):
        return (-1.0 - self.d, 1.0 + self.d)

    def pdf(self, y, x):
        y, x = np.asarray(y, dtype=float), np.asarray(x, dtype=float)
        dist = np.abs(y - x)
        p_in = self.prob_inner()
        inner = p_in / (2.0 * self.m)
        outer = (1.0 - p_in) / (2.0 * (self.d - self.m))
        return np.where(dist <= self.m, inner, np.where(dist <= self.d, outer, 0.0))

    def density_pieces(self, x):
        x = np.asarray(x, dtype=float)
        p_in = self.prob_inner()
        inner = np.full_like(x, p_in / (2.0 * self.m))
        outer = np.full_like(x, (1.0 - p_in) / (2.0 * (self.d - self.m)))
        return [(x - self.d, x - self.m, outer), (x - self.m, x + self.m, inner), (x + self.m, x + self.d, outer)]

    def __repr__(self):
        return f"DCT(eps={self.eps:g}, alpha={self.alpha:g})"
