"""A plugin that adds no noise and declares no law (tests only; issue 29): perturb returns its input.
Before the law was verified it got exact loss 0, audit verdict "holds" and won the benchmark."""

import numpy as np

from ldprepro.mechanisms import Mechanism, register_mechanism


class NoNoise(Mechanism):
    name = "no_noise"

    def _perturb_block(self, x, rng):
        return x.copy()

    def variance(self, x):
        return np.zeros(np.shape(x))


register_mechanism("no_noise", NoNoise, label="no noise (test plugin)", source="tests/plugins")
