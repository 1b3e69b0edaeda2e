"""Plugins whose declared law or output is wrong (tests only; issue 29), each registered under
its own name: a Laplace law with a NaN pdf; a correct Laplace law but a sampler that adds no noise;
perturb returning NaN; perturb returning the wrong shape."""

import numpy as np

from ldprepro.mechanisms import register_mechanism
from ldprepro.mechanisms.basic import Laplace


class NanPdf(Laplace):
    def pdf(self, y, x):
        return np.full(np.broadcast(np.asarray(y), np.asarray(x)).shape, np.nan)

    def logpdf(self, y, x):
        return self.pdf(y, x)


class SilentLaplace(Laplace):
    """Declares Laplace's law (correctly) but outputs its input."""

    def _perturb_block(self, x, rng):
        return x.copy()


class NanOutput(Laplace):
    def _perturb_block(self, x, rng):
        return np.full(x.shape, np.nan)


class WrongShape(Laplace):
    def perturb(self, x, rng):
        return np.zeros(3)


register_mechanism("nan_pdf", NanPdf, source="tests/plugins")
register_mechanism("silent_laplace", SilentLaplace, source="tests/plugins")
register_mechanism("nan_output", NanOutput, source="tests/plugins")
register_mechanism("wrong_shape", WrongShape, source="tests/plugins")
