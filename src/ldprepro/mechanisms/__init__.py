"""Numeric LDP mechanisms on [-1, 1].

    >>> from ldprepro.mechanisms import get_mechanism, MECHANISMS
    >>> m = get_mechanism("pm_sub", 2.0)
    >>> y = m.perturb(x, rng)            # vectorised, same shape as x
    >>> m.variance(x), m.worst_case_variance(), m.pdf(y, x)

Names: laplace, duchi, harmony, pm, hm, three_outputs, pm_opt, pm_sub, hm_tp, dct.
``get_mechanism(name, eps, discretize=m)`` applies Zhao et al.'s Algorithm 5 with m segments per
side (continuous mechanisms, or the continuous branch of hm / hm_tp).
Every 1-D mechanism accepts a real ε in [EPS_MIN, EPS_MAX] = [1e-6, 700] and is numerically exact
there (see ``base``); anything else is refused with an error naming the mechanism and the value.
``get_multidim(name, eps, d)`` gives the multidimensional collection used by the papers.
"""

from __future__ import annotations

from collections.abc import Callable

from .base import EPS_MAX, EPS_MIN, Mechanism, Mixture, check_mechanism_eps
from .basic import Duchi, Harmony, Laplace
from .dct import DCT
from .discretize import Discretized, discretize
from .hybrid import HM, HMTP
from .multidim import DuchiMultiDim, LaplaceMultiDim, MultiDimMechanism, SampledMultiDim, sampling_k
from .piecewise import PM, Piecewise, PMOpt, PMSub
from .three_outputs import ThreeOutputs

#: name -> factory(eps, **params) for every 1-D mechanism.
MECHANISMS: dict[str, Callable[..., Mechanism]] = {
    "laplace": Laplace,
    "duchi": Duchi,
    "harmony": Harmony,
    "pm": PM,
    "hm": HM,
    "three_outputs": ThreeOutputs,
    "pm_opt": PMOpt,
    "pm_sub": PMSub,
    "hm_tp": HMTP,
    "dct": DCT,
}


def get_mechanism(name: str, eps: float, discretize: int | None = None, **params) -> Mechanism:
    """The 1-D mechanism ``name`` at budget ``eps`` (optionally discretised with m segments)."""
    try:
        factory = MECHANISMS[name]
    except KeyError:
        raise ValueError(f"unknown mechanism {name!r}; known: {', '.join(MECHANISMS)}") from None
    eps = check_mechanism_eps(eps, name)
    mech = factory(eps, **params)
    if discretize is not None:
        from .discretize import discretize as _discretize

        mech = _discretize(mech, discretize)
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
