"""The mechanism registry: one line adds a mechanism everywhere (tests, audit, benchmark, plots).

    from ldprepro.domain.mechanisms import register_mechanism
    register_mechanism("my_mech", MyMech, label="My mechanism", source="Doe et al. 2025, Eq. 3")

``MyMech(eps, **params)`` must honour the contract of :class:`ldprepro.domain.mechanisms.base.Mechanism`
(``perturb``, ``variance``, ``worst_case_variance``, ``support``/``pmf``/``pdf``,
``output_bounds``). A pipeline run loads user modules listed under ``mechanism_plugins`` in
config.yaml (:func:`load_plugins`, called by the set-up of every job that runs mechanisms), so a
plugin needs no edit of this package, and has the law of each plugin mechanism it builds verified
(:func:`require_verified_plugins`). :func:`ldprepro.domain.mechanisms.contract.check_mechanism`
runs the correctness checks on it.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

#: name -> factory(eps, **params) for every registered 1-D mechanism (shared, mutated in place)
MECHANISMS: dict[str, Callable] = {}
#: name -> what the audit, the plots and the benchmark need to know about it
MECHANISM_INFO: dict[str, MechanismInfo] = {}

_NAME = re.compile(r"[a-z][a-z0-9_]*")
_LOADED: dict[str, str] = {}  # plugin spec -> the names it registered


@dataclass(frozen=True)
class MechanismInfo:
    name: str
    label: str
    #: where the mechanism is defined (paper, section, equation), shown by the audit
    source: str
    #: False for mechanisms their paper does not present as ε-LDP (DCT): the tests then check
    #: that the exact loss is computed, not that it is ≤ ε
    presented_as_ldp: bool = True


class PluginError(ValueError):
    """A ``mechanism_plugins`` entry that cannot be imported or registers nothing."""


def register_mechanism(
    name: str,
    factory: Callable,
    *,
    label: str | None = None,
    source: str = "",
    presented_as_ldp: bool = True,
) -> Callable:
    """Register ``factory(eps, **params)`` under ``name`` (lower-case, digits, underscores).
    Refuses a name already taken or a factory that is not callable. Returns the factory."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(f"mechanism name {name!r}: use lower-case letters, digits and underscores")
    if name in MECHANISMS:
        raise ValueError(f"mechanism name {name!r} is already registered ({MECHANISM_INFO[name].source or 'built in'})")
    if not callable(factory):
        raise TypeError(f"mechanism {name!r}: the factory must be callable as factory(eps, **params)")
    MECHANISMS[name] = factory
    MECHANISM_INFO[name] = MechanismInfo(name, label or name, source, bool(presented_as_ldp))
    return factory


def unregister_mechanism(name: str) -> None:
    """Remove ``name`` (tests of plugins clean up with it)."""
    MECHANISMS.pop(name, None)
    MECHANISM_INFO.pop(name, None)
    for spec, names in list(_LOADED.items()):
        if name in names.split(","):
            del _LOADED[spec]


def _import(spec: str):
    if spec.endswith(".py"):
        path = Path(spec).resolve()
        if not path.is_file():
            raise PluginError(f"mechanism_plugins: {spec}: no such file")
        module_name = "ldprepro_plugin_" + hashlib.sha256(str(path).encode()).hexdigest()[:12]
        mod_spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(mod_spec)
        sys.modules[module_name] = module
        mod_spec.loader.exec_module(module)
        return module
    return importlib.import_module(spec)


def load_plugins(specs: Iterable[str] | None) -> list[str]:
    """Import every plugin (a module name or a .py path) once; each must register at least one
    mechanism. Returns the names registered by this call."""
    new = []
    for spec in specs or []:
        spec = str(spec)
        if spec in _LOADED:
            continue
        before = set(MECHANISMS)
        try:
            _import(spec)
        except PluginError:
            raise
        except Exception as exc:
            raise PluginError(f"mechanism_plugins: cannot import {spec!r}: {type(exc).__name__}: {exc}") from exc
        added = [n for n in MECHANISMS if n not in before]
        if not added:
            raise PluginError(
                f"mechanism_plugins: {spec!r} registered no mechanism "
                "(call ldprepro.mechanisms.register_mechanism(name, factory) in it; docs/extending.md)"
            )
        _LOADED[spec] = ",".join(added)
        new += added
    return new


#: what :func:`verify_plugin` does in this process: None (nothing: a library user's default),
#: "strict" (an unverifiable law is an error) or "report" (it is logged; the audit and the benchmark
#: judge the law themselves and report it "unverifiable"). Set by :func:`require_verified_plugins`.
_VERIFY = {"mode": None}
_VERIFIED: dict[tuple, str] = {}  # (name, ε, discretize, params) -> '' or the reason it failed


def require_verified_plugins(mode: str | None = "strict") -> None:
    """From now on, every plugin mechanism built by ``get_mechanism`` has its declared law and its
    ``perturb`` checked (``law_check.verify_law``) once per (name, ε, discretisation, params) in
    this process: a pipeline job that loads plugins calls this (``pipeline.jobsetup``). Output that
    is not one finite float per input is always an error; an unverifiable law is one in "strict"
    mode and a logged warning in "report" mode."""
    if mode not in (None, "strict", "report"):
        raise ValueError(f"require_verified_plugins: mode must be 'strict', 'report' or None, not {mode!r}")
    _VERIFY["mode"] = mode


def plugin_names() -> set[str]:
    """The names registered by :func:`load_plugins` in this process."""
    return {n for names in _LOADED.values() for n in names.split(",") if n}


def verify_plugin(name: str, mech, discretize=None, params=None) -> None:
    """What :func:`require_verified_plugins` asks for, for one mechanism ``get_mechanism`` built."""
    mode = _VERIFY["mode"]
    if mode is None or name not in plugin_names():
        return
    key = (name, float(mech.eps), discretize, repr(sorted((params or {}).items())))
    if key not in _VERIFIED:
        import logging

        from ldprepro.domain.mechanisms.law_check import verify_law

        check = verify_law(mech, name)  # raises MechanismOutputError on NaN / misshapen output
        _VERIFIED[key] = check.reason
        if check.ok:
            logging.getLogger("ldprepro").info("plugin mechanism %r at ε = %g: declared law verified", name, mech.eps)
        else:
            logging.getLogger("ldprepro").warning(
                "plugin mechanism %r at ε = %g: unverifiable law: %s", name, mech.eps, check.reason
            )
    reason = _VERIFIED[key]
    if reason and mode == "strict":
        raise UnverifiableMechanismError(
            f"mechanism {name!r} (mechanism_plugins) at ε = {mech.eps:g}: its declared law cannot be verified: "
            f"{reason}. Fix the plugin so that support()/pmf()/pdf() declare the law perturb() samples "
            "(check it with ldprepro.mechanisms.check_mechanism), or remove it from the configuration."
        )


class UnverifiableMechanismError(ValueError):
    """A plugin mechanism whose declared output law fails ``law_check.verify_law`` was asked to run."""


def plugin_files(specs: Iterable[str] | None) -> list[Path]:
    """The source files of the plugins (for the workflow's code fingerprint), without importing
    them: a .py path itself, or the file a module name resolves to."""
    out = []
    for spec in specs or []:
        spec = str(spec)
        if spec.endswith(".py"):
            out.append(Path(spec).resolve())
            continue
        found = importlib.util.find_spec(spec)
        if found is None or not found.origin:
            raise PluginError(f"mechanism_plugins: no module {spec!r} on the Python path")
        out.append(Path(found.origin))
    return out
