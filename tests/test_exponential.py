"""The ziggurat behind Laplace noise (``domain/mechanisms/exponential.py``) is Marsaglia & Tsang's.

Checked as the construction defines it: every layer has the area V (the base layer: rectangle plus
tail), the rectangle thresholds are the ratios of neighbouring widths, and the tables reproduce
numpy's own ziggurat exponential draw for draw when run on the same 64-bit words. Then the law:
Exp(1) on equiprobable bins and in the tail, and the sign independent of the magnitude.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ldprepro.domain.mechanisms import exponential
from ldprepro.domain.mechanisms.exponential import R, tables

V = float(exponential.V_TEXT)
TWO_53 = 2.0**53


def _widths():
    t = tables()
    x = t.we * TWO_53  # x_i for i ≥ 1; t.we[0] is the base layer's pseudo-width
    x[0] = 0.0
    return t, x


def test_every_layer_has_area_v():
    t, x = _widths()
    for i in range(2, 256):
        area = x[i] * (t.fe[i - 1] - t.fe[i])
        assert area == pytest.approx(V, rel=1e-12), i
    assert x[1] * (1.0 - t.fe[1]) == pytest.approx(V, rel=1e-12)  # the top layer closes at x_0 = 0
    assert R * math.exp(-R) + math.exp(-R) == pytest.approx(V, rel=1e-15)  # base: rectangle + tail
    assert t.we[0] * TWO_53 == pytest.approx(V / math.exp(-R), rel=1e-15)


def test_thresholds_are_the_width_ratios():
    t, x = _widths()
    assert t.ke[1] == 0
    assert abs(int(t.ke[0]) - R * math.exp(-R) / V * TWO_53) < 8  # the base layer's rectangle share
    for i in range(2, 256):
        assert abs(int(t.ke[i]) - x[i - 1] / x[i] * TWO_53) < 8, i
    assert (np.diff(x[1:]) > 0).all() and x[255] == R
    assert np.all(t.gap[1:] == pytest.approx(t.fe[:-1] - t.fe[1:], rel=1e-14))


def _numpy_ziggurat(rng: np.random.Generator, n: int) -> np.ndarray:
    """numpy's ``standard_exponential`` algorithm run word by word on ``exponential.tables()``:
    the fast path, the tail from one more uniform, a wedge's test with one more uniform, and a
    restart on rejection; ``rng`` supplies the words exactly as numpy's C code consumes them."""
    t = tables()
    bits = rng.bit_generator
    out = np.empty(n)
    for k in range(n):
        while True:
            w = int(bits.random_raw())
            layer, position = (w >> 3) & 0xFF, w >> 11
            x = position * float(t.we[layer])
            if position < int(t.ke[layer]):
                break
            u = (int(bits.random_raw()) >> 11) * 2.0**-53
            if layer == 0:
                x = R - math.log1p(-u)
                break
            if (float(t.fe[layer - 1]) - float(t.fe[layer])) * u + float(t.fe[layer]) < math.exp(-x):
                break
        out[k] = x
    return out


def test_the_tables_reproduce_numpys_exponential_draw_for_draw():
    """Same words, same algorithm: numpy's draws and ours agree to the tables' last digits (numpy
    rounds its tables differently, so a few ulp), and no fast/slow decision differs (a single
    one would shift every later draw)."""
    ours = _numpy_ziggurat(np.random.default_rng(2024), 20_000)
    numpys = np.random.default_rng(2024).standard_exponential(20_000)
    assert np.abs(ours - numpys).max() <= 4e-15 * numpys.max()
    assert np.allclose(ours, numpys, rtol=4e-15, atol=0)


def test_exponentials_follow_exp1():
    rng = np.random.default_rng(77)
    n = 2_000_000
    w = exponential.words(rng, n)
    e = exponential.exponentials(w, rng)
    layer, position = (w >> np.uint64(3)) & np.uint64(255), (w >> np.uint64(11)).astype(np.int64)
    slow = position >= tables().ke[layer.astype(np.intp)]
    assert 0.021 < slow.mean() < 0.0235  # 1 − mean(KE)/2⁵³ = 2.2 % of words take the slow path
    edges = -np.log1p(-np.linspace(0.0, 1.0, 401)[1:-1])  # 400 equiprobable bins under Exp(1)
    counts = np.bincount(np.searchsorted(edges, e), minlength=400)
    assert stats.chisquare(counts).pvalue > 1e-4
    # The slow words alone: their values follow Exp(1) restricted to what the rectangles miss,
    # so they are tested through the whole sample; the tail beyond R comes only from them.
    beyond = int((e > R).sum())
    assert stats.binomtest(beyond, n, math.exp(-R)).pvalue > 1e-4
    assert stats.kstest(e[slow], "expon").pvalue < 1e-6  # not Exp(1) on their own


def test_laplace_sign_is_fair_and_independent_of_the_magnitude():
    rng = np.random.default_rng(5)
    x = np.zeros(1_000_000)
    y = exponential.laplace_block(x, rng, 1.0)
    negative = y < 0
    assert stats.binomtest(int(negative.sum()), y.size, 0.5).pvalue > 1e-4
    assert stats.ks_2samp(-y[negative], y[~negative]).pvalue > 1e-4
    assert stats.kstest(np.abs(y), "expon").pvalue > 1e-4


def test_the_sign_is_bit_0_which_the_magnitude_never_reads():
    """Independence by construction: flipping bit 0 of every word leaves every magnitude (and every
    draw of the slow words) unchanged, and the output is negative exactly when bit 0 is set."""
    n = 200_000
    w = exponential.words(np.random.default_rng(3), n)
    e = exponential.exponentials(w, np.random.default_rng(4))
    flipped = exponential.exponentials(w ^ np.uint64(1), np.random.default_rng(4))
    assert (e == flipped).all()
    y = exponential.laplace_block(np.zeros(n), np.random.default_rng(5), 1.0)
    assert ((y < 0) == (exponential.words(np.random.default_rng(5), n) & np.uint64(1)).astype(bool)).all()
