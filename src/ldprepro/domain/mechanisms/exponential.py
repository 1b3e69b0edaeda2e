"""Exact Exp(1) and Laplace noise from one 64-bit word per user: the ziggurat.

Laplace's mechanism (docs/papers/ldpfl.md §2.1, Eq. 1: t* = t + Lap(2/ε)) needs one Laplace
variate per user, t + b·S·E with E ~ Exp(1) and S an independent fair sign. E comes from Marsaglia
& Tsang's ziggurat for the exponential density e^{−x} (J. Stat. Softw. 5(8), 2000, §§2–3: 256
layers of equal area V, the base layer closing with the tail beyond R), in the form numpy's own
``Generator.standard_exponential`` uses: of a 64-bit word w, bits 3–10 pick the layer i and bits
11–63 the position ri < 2⁵³ in it, x = ri·WE[i]; about 97.8 % of words are inside the layer's
rectangle (ri < KE[i], :func:`tables`) and x is the draw. The rest go to :func:`finish_slow`: the tail (i = 0)
gives R + Exp(1) (memorylessness), a wedge (i > 0) accepts x when a uniform height in
[e^{−x_i}, e^{−x_{i−1}}] lies under e^{−x}, and a rejected word gives a fresh Exp(1) (the method
restarted). S is bit 0 of the same word, which the ziggurat never reads, so S and E are
independent. Exact as numpy's exponential is: the tables below are the ziggurat's, computed to 60
digits and rounded once to double (they agree with numpy's to about 10⁻¹⁵ relative,
``tests/test_exponential.py``).

One word per user is half the draws of an exponential plus a separate sign bit, and no logarithm:
the fused loop (``_jit.laplace_words``) runs the rectangle test, and ``_jit.laplace_finish`` repeats
:func:`finish_slow`'s operations in the same order on the same draws, with numpy's exp(−x) computed
by the caller as here, so the two paths' outputs are bit-identical.
"""

from __future__ import annotations

import functools
from decimal import Decimal, localcontext
from typing import NamedTuple

import numpy as np

#: Marsaglia & Tsang's constants for the 256-layer exponential ziggurat: R, where the base layer's
#: rectangle ends and the tail begins, and V, the area of every layer.
R_TEXT, V_TEXT = "7.69711747013104972", "0.0039496598225815571993"
LAYERS = 256
#: Bits of a word that give the position within a layer (a word is shifted right by 11 for it).
POSITION_BITS = 53


class Tables(NamedTuple):
    """The ziggurat's tables, per layer (see :func:`tables`)."""

    ke: np.ndarray
    we: np.ndarray
    fe: np.ndarray
    gap: np.ndarray


@functools.cache
def tables() -> Tables:
    """(KE, WE, FE, GAP) for layers 0..255, layer 255 the widest rectangle and 0 the base:
    x_255 = R, x_i from the equal-area recursion x_i = −ln(V/x_{i+1} + e^{−x_{i+1}}) down to x_1
    (and x_0 = 0), WE[i] = x_i/2⁵³ (WE[0] = (V/e^{−R})/2⁵³, the base layer as one rectangle),
    KE[i] = ⌊2⁵³·x_{i−1}/x_i⌋ (KE[0] = ⌊2⁵³·R·e^{−R}/V⌋, KE[1] = 0: the top layer has no
    rectangle), FE[i] = e^{−x_i} and GAP[i] = FE[i−1] − FE[i]; computed with 60 digits on first
    use (about 20 ms, which jobs that never draw Laplace noise do not pay)."""
    ke = np.zeros(LAYERS, dtype=np.int64)
    we, fe, gap = np.zeros(LAYERS), np.zeros(LAYERS), np.zeros(LAYERS)
    with localcontext() as ctx:
        ctx.prec = 60
        r, v, m = Decimal(R_TEXT), Decimal(V_TEXT), Decimal(2) ** POSITION_BITS
        x = [Decimal(0)] * LAYERS
        x[LAYERS - 1] = r
        for i in range(LAYERS - 2, 0, -1):
            x[i] = -((v / x[i + 1] + (-x[i + 1]).exp()).ln())
        f = [(-xi).exp() for xi in x]
        base = v / f[LAYERS - 1]
        we[0], ke[0] = float(base / m), int(r / base * m)
        fe[0] = 1.0
        for i in range(1, LAYERS):
            we[i] = float(x[i] / m)
            ke[i] = int(x[i - 1] / x[i] * m)
            fe[i] = float(f[i])
            gap[i] = float(f[i - 1] - f[i])
    return Tables(ke, we, fe, gap)


R = float(Decimal(R_TEXT))
_ALL_BITS = np.uint64(0xFFFF_FFFF_FFFF_FFFF)


def words(rng: np.random.Generator, n: int) -> np.ndarray:
    """n independent uniform 64-bit words (uint64) from ``rng``."""
    return rng.integers(_ALL_BITS, size=n, dtype=np.uint64, endpoint=True)


def _layer_and_position(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return ((w >> np.uint64(3)) & np.uint64(LAYERS - 1)).astype(np.intp), (w >> np.uint64(11)).astype(np.int64)


def slow_draws(rng: np.random.Generator, k: int) -> tuple[np.ndarray, np.ndarray]:
    """What k slow words draw, whatever each needs of it: k uniforms, then k exponentials."""
    return rng.random(k), rng.standard_exponential(k)


def finish_slow(layer: np.ndarray, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Exp(1) draws for the words that missed their layer's rectangle (the module docstring), given
    each word's layer and x = ri·WE[layer]; ``_jit.laplace_finish`` repeats these operations in the
    same order."""
    t = tables()
    u, fresh = slow_draws(rng, x.size)
    height = t.gap[layer] * u
    height += t.fe[layer]
    e = np.where(height < np.exp(-x), x, fresh)
    tail = layer == 0
    e[tail] = R + fresh[tail]
    return e


def exponentials(w: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One Exp(1) per word of ``w`` (words from :func:`words`); draws from ``rng`` only for the
    about 2.2 % of words outside their layer's rectangle."""
    t = tables()
    layer, position = _layer_and_position(w)
    e = position * t.we[layer]
    slow = np.flatnonzero(position >= t.ke[layer])
    if slow.size:
        e[slow] = finish_slow(layer[slow], e[slow], rng)
    return e


def laplace_block(x: np.ndarray, rng: np.random.Generator, scale: float) -> np.ndarray:
    """x + Laplace(0, scale) for a block of users, one word each (the module docstring): x + b·E,
    or x − b·E when the word's bit 0 is set."""
    w = words(rng, x.size)
    noise = exponentials(w, rng)
    noise *= scale
    minus = (w & np.uint64(1)).astype(bool)
    return np.where(minus, x - noise, x + noise)
