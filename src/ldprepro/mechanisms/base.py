"""Public path of the mechanism base class (``ldprepro.domain.mechanisms.base``)."""

from ldprepro.domain.mechanisms.base import EPS_MAX, EPS_MIN, Mechanism, Mixture

__all__ = ["EPS_MAX", "EPS_MIN", "Mechanism", "Mixture"]
