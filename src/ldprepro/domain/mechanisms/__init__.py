"""Numeric LDP mechanisms on [-1, 1].

    >>> from ldprepro.domain.mechanisms import get_mechanism, MECHANISMS
    >>> m = get_mechanism("pm_sub", 2.0)
    >>> y = m.perturb(x, rng)            # vectorised, same shape as x
    >>> m.variance(x), m.worst_case_variance(), m.pdf(y, x)

Names: laplace, duchi, harmony, pm, hm, three_outputs, pm_opt, pm_sub, hm_tp, dct, and whatever
``register_mechanism`` adds (``registry``; plugins listed under ``mechanism_plugins`` in config.yaml).
``get_mechanism(name, eps, discretize=m)`` applies Zhao et al.'s Algorithm 5 with m segments per
side (continuous mechanisms, or the continuous branch of hm / hm_tp).
Every 1-D mechanism accepts a real ε in [EPS_MIN, EPS_MAX] = [1e-6, 700] and is numerically exact
there (see ``base``); anything else is refused with an error naming the mechanism and the value.
``get_multidim(name, eps, d)`` gives the multidimensional collection used by the papers.
"""

from __future__ import annotations

from ldprepro.domain.mechanisms.base import EPS_MAX, EPS_MIN, Mechanism, Mixture, check_mechanism_eps
from ldprepro.domain.mechanisms.basic import Duchi, Harmony, Laplace
from ldprepro.domain.mechanisms.dct import DCT
from ldprepro.domain.mechanisms.discretize import Discretized, discretize
from ldprepro.domain.mechanisms.hybrid import HM, HMTP
from ldprepro.domain.mechanisms.multidim import (
    DuchiMultiDim,
    LaplaceMultiDim,
    MultiDimMechanism,
    SampledMultiDim,
    sampling_k,
)
from ldprepro.domain.mechanisms.piecewise import PM, Piecewise, PMOpt, PMSub
from ldprepro.domain.mechanisms.registry import (
    MECHANISM_INFO,
    MECHANISMS,
    MechanismInfo,
    PluginError,
    load_plugins,
    register_mechanism,
    verify_plugin,
)
from ldprepro.domain.mechanisms.three_outputs import ThreeOutputs

# The built-in 1-D mechanisms, registered like any plugin (ldprepro.domain.mechanisms.registry).
for _name, _factory, _label, _source, _ldp in [
    ("laplace", Laplace, "Laplace", "standard (Dwork et al. 2006)", True),
    ("duchi", Duchi, "Duchi et al.", "Duchi et al. 2018 (1-D)", True),
    ("harmony", Harmony, "Harmony", "Nguyen et al. 2016 (paper 000 baseline)", True),
    ("pm", PM, "PM", "Wang et al. ICDE 2019, Alg. 2", True),
    ("hm", HM, "HM", "Wang et al. ICDE 2019, Alg. 3", True),
    ("three_outputs", ThreeOutputs, "Three-Outputs", "paper 002 Lemma 1", True),
    ("pm_opt", PMOpt, "PM-OPT", "paper 002 Lemma 6", True),
    ("pm_sub", PMSub, "PM-SUB", "paper 002", True),
    ("hm_tp", HMTP, "HM-TP", "paper 002 Lemma 10", True),
    # paper 003 presents DCT as LDP-like, but its output support moves with the input: not ε-LDP
    ("dct", DCT, "DCT (not LDP)", "paper 003 Lemma 1", False),
]:
    if _name not in MECHANISMS:  # a module reload keeps the registry
        register_mechanism(_name, _factory, label=_label, source=_source, presented_as_ldp=_ldp)


def get_mechanism(name: str, eps: float, discretize: int | None = None, **params) -> Mechanism:
    """The 1-D mechanism ``name`` at budget ``eps`` (optionally discretised with m segments)."""
    try:
        factory = MECHANISMS[name]
    except KeyError:
        raise ValueError(f"unknown mechanism {name!r}; known: {', '.join(MECHANISMS)}") from None
    eps = check_mechanism_eps(eps, name)
    mech = factory(eps, **params)
    if discretize is not None:
        from ldprepro.domain.mechanisms.discretize import discretize as _discretize

        mech = _discretize(mech, discretize)
    try:
        mech.registered_name = name  # errors name the mechanism as registered (law_check.describe)
    except AttributeError:  # a plugin class with __slots__
        pass
    verify_plugin(name, mech, discretize, params)
    return mech


def get_multidim(
    name: str,
    eps: float,
    d: int,
    discretize: int | None = None,
    duchi_ties: str = "half",
    k: int | None = None,
    **params,
) -> MultiDimMechanism:
    """Multidimensional collection under total budget ``eps`` as the papers run it:
    ``duchi`` → Duchi's d-dimensional mechanism, ``laplace`` → ε/d per attribute, anything
    else → attribute sampling (Zhao Alg. 6) around the 1-D mechanism."""
    if name == "duchi":
        return DuchiMultiDim(eps, d, ties=duchi_ties)
    if name == "laplace":
        return LaplaceMultiDim(eps, d)
    if name not in MECHANISMS:
        raise ValueError(f"unknown mechanism {name!r}; known: {', '.join(MECHANISMS)}")
    return SampledMultiDim(lambda e: get_mechanism(name, e, discretize=discretize, **params), eps, d, k=k, name=name)


__all__ = [
    "MECHANISMS",
    "MECHANISM_INFO",
    "MechanismInfo",
    "PluginError",
    "load_plugins",
    "register_mechanism",
    "EPS_MIN",
    "EPS_MAX",
    "get_mechanism",
    "get_multidim",
    "Mechanism",
    "Mixture",
    "Laplace",
    "Duchi",
    "Harmony",
    "Piecewise",
    "PM",
    "PMOpt",
    "PMSub",
    "ThreeOutputs",
    "HM",
    "HMTP",
    "DCT",
    "Discretized",
    "discretize",
    "SampledMultiDim",
    "DuchiMultiDim",
    "LaplaceMultiDim",
    "MultiDimMechanism",
    "sampling_k",
]
