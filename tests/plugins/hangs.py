"""A plugin whose perturb never returns (tests only; issue 29.5): Laplace's law, a sampler that waits."""

import time

from ldprepro.mechanisms import register_mechanism
from ldprepro.mechanisms.basic import Laplace


class Hangs(Laplace):
    def _perturb_block(self, x, rng):
        while True:
            time.sleep(0.05)


register_mechanism("hangs", Hangs, label="hangs (test plugin)", source="tests/plugins")
