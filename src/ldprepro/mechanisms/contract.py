"""Public path of the contract check (``ldprepro.domain.mechanisms.contract``)."""

from ldprepro.domain.mechanisms.contract import ContractReport, check_mechanism

__all__ = ["ContractReport", "check_mechanism"]
