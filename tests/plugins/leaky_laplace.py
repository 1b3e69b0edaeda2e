"""A deliberately non-private plugin (tests only): claims ε but adds Laplace noise of scale 1/ε,
half of the 2/ε that ε-LDP on [−1, 1] needs, so its exact privacy loss is 2ε."""

from ldprepro.mechanisms import register_mechanism
from ldprepro.mechanisms.basic import Laplace


class LeakyLaplace(Laplace):
    def __init__(self, eps):
        super().__init__(2.0 * eps)  # the noise of a 2ε mechanism...
        self.eps = float(eps)  # ...presented as ε


register_mechanism("leaky_laplace", LeakyLaplace, label="leaky Laplace (test plugin)", source="tests/plugins")
