"""Frequency oracles over a finite domain {0, ..., k-1}.

Each oracle is a small immutable object, in the spirit of a frozen ``scipy.stats`` distribution:
it is built from its parameters, holds its exact output probabilities, and offers

* ``perturb(values, rng)``: the user-side randomiser, vectorised over an int array of n values
  (GRR returns an int array of n reports; the unary encodings return an (n, k) ``uint8`` bit matrix);
* ``support_counts(reports)``: the aggregated counts the collector sees (how many reports *support*
  each value: GRR, reports equal to v; unary encodings, reports whose bit v is 1);
* ``estimate_counts(support, n)`` / ``estimate_frequencies(support, n)``: the unbiased estimator
  ``(c_v - n * p_other) / (p_true - p_other)``;
* ``count_variance(n, true_counts)`` / ``frequency_variance(n, freqs)``: its exact variance;
* exact probabilities: GRR ``pmf(x)`` / ``channel``; unary encodings ``pmf_bit(true_bit, bit)`` and
  ``bit_probs(x)``; everything needed to compute the exact privacy loss (``epsilon_exact``);
* ``sample_support_counts(true_counts, rng, size=None)``: draws the aggregated noisy counts directly
  from their exact distribution (sufficient statistics), for large sweeps.

Notation shared by all oracles: ``p_true`` = Pr(a report supports v | the user's value is v) and
``p_other`` = Pr(a report supports v | the user's value is not v). For GRR these are Kairouz et al.'s
p = e^ε/(e^ε+k-1) and q = 1/(e^ε+k-1); for SUE/OUE they are Wang et al.'s (USENIX Security 2017)
p and q; for the RAPPOR-style oracle they are the combined channel q* and p* of
docs/papers/lremh.md §2 (note that that page's *instantaneous* parameters are named the other way round:
q = Pr(1 | permanent bit 1), p = Pr(1 | permanent bit 0)).

The support count of value v is exactly Binomial(c_v, p_true) + Binomial(n - c_v, p_other) (for GRR
this is the marginal of a multinomial), so with c_v the true count

    E[c] = c_v p_true + (n - c_v) p_other,
    Var[ĉ_v] = (c_v p_true (1 - p_true) + (n - c_v) p_other (1 - p_other)) / (p_true - p_other)^2.

All randomness comes from the ``numpy.random.Generator`` passed in; there is no global state.

Local hashing, subset selection and Hadamard response fit the same frame: a report *supports* x if
its hash value matches H(x) (OLH/BLH), if x is in the reported subset (SS) or if the output lies in
x's Hadamard set (HR); each module states its p_true, p_other, hash family and sampling path.

Modules: ``base`` (:class:`FrequencyOracle`, the checks), ``grr`` (:class:`GRR`, :func:`grr_perturb`),
``unary`` (:class:`UnaryEncoding`, :class:`SUE`, :class:`OUE`), ``local_hashing`` (:class:`OLH`,
:class:`BLH`), ``subset`` (:class:`SS`), ``hadamard`` (:class:`HR`), ``rappor`` (:class:`RapporUE`,
:func:`rappor_channel`, :func:`rappor_privacy`); every name is importable from this package, and
:func:`get_oracle` builds an oracle by name.
"""

from __future__ import annotations

from typing import Any

from ldprepro.domain.frequency.base import FrequencyOracle
from ldprepro.domain.frequency.grr import GRR, grr_perturb
from ldprepro.domain.frequency.hadamard import HR
from ldprepro.domain.frequency.local_hashing import BLH, OLH, LocalHashing, olh_g, splitmix_hash
from ldprepro.domain.frequency.rappor import RapporUE, rappor_channel, rappor_privacy
from ldprepro.domain.frequency.subset import SS, optimal_subset_size
from ldprepro.domain.frequency.unary import OUE, SUE, UnaryEncoding

__all__ = [
    "FrequencyOracle",
    "GRR",
    "UnaryEncoding",
    "SUE",
    "OUE",
    "RapporUE",
    "LocalHashing",
    "OLH",
    "BLH",
    "SS",
    "HR",
    "ORACLES",
    "EPS_ORACLES",
    "get_oracle",
    "grr_perturb",
    "olh_g",
    "optimal_subset_size",
    "splitmix_hash",
    "rappor_channel",
    "rappor_privacy",
]


ORACLES: dict[str, type[FrequencyOracle]] = {
    "grr": GRR,
    "sue": SUE,
    "oue": OUE,
    "olh": OLH,
    "blh": BLH,
    "ss": SS,
    "hr": HR,
    "rappor": RapporUE,
}
#: the ε-parameterised oracles (every one but ``rappor``), in the benchmark's order
EPS_ORACLES = ("grr", "sue", "oue", "olh", "blh", "ss", "hr")


def get_oracle(name: str, k: int, eps: float | None = None, **params: Any) -> FrequencyOracle:
    """Build an oracle by name: ``grr``, ``sue``, ``oue``, ``olh``, ``blh``, ``hr`` take ``eps``; ``ss``
    takes ``eps`` and optionally the subset size ``d``; ``rappor`` takes ``f`` (and optionally ``p``,
    ``q``; defaults 0.5, 0.75 as in the paper) and no ``eps``."""
    key = str(name).lower()
    if key not in ORACLES:
        raise ValueError(f"unknown frequency oracle {name!r}; choose one of {sorted(ORACLES)}")
    if key == "rappor":
        if eps is not None:
            raise ValueError(f"the rappor oracle is parameterised by f, p, q, not eps (got eps={eps!r})")
        if "f" not in params:
            raise ValueError("the rappor oracle needs the permanent-RR parameter f")
        unknown = set(params) - {"f", "p", "q"}
        if unknown:
            raise ValueError(f"unknown parameter(s) for rappor: {sorted(unknown)}")
        return RapporUE(k, **params)
    allowed = {"d"} if key == "ss" else set()
    if set(params) - allowed:
        raise ValueError(f"unknown parameter(s) for {key}: {sorted(set(params) - allowed)}")
    if eps is None:
        raise ValueError(f"oracle {key!r} needs eps")
    return ORACLES[key](k, eps, **params)
