"""Public path of the basic mechanisms (``ldprepro.domain.mechanisms.basic``)."""

from ldprepro.domain.mechanisms.basic import Duchi, Harmony, Laplace

__all__ = ["Duchi", "Harmony", "Laplace"]
