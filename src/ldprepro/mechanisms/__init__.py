"""The public mechanism and plugin API, stable across releases.

A plugin (config.yaml ``mechanism_plugins``) or a user's script imports from here::

    from ldprepro.mechanisms import Mechanism, register_mechanism, get_mechanism, check_mechanism

The implementation lives in ``ldprepro.domain.mechanisms``; this package re-exports its public
names (and keeps ``ldprepro.mechanisms.base``, ``.basic`` and ``.contract`` importable for plugins
written against those paths).
"""

from ldprepro.domain.mechanisms import *  # noqa: F403
from ldprepro.domain.mechanisms import __all__ as _domain_all
from ldprepro.domain.mechanisms.contract import ContractReport, check_mechanism

__all__ = [*_domain_all, "ContractReport", "check_mechanism"]
