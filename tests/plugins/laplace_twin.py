"""A correct plugin (tests only): the Laplace mechanism under another name."""

from ldprepro.mechanisms import register_mechanism
from ldprepro.mechanisms.basic import Laplace

register_mechanism("laplace_twin", Laplace, label="Laplace twin (test plugin)", source="tests/plugins")
