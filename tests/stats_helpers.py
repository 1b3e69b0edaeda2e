"""Statistical test helpers: tolerances come from the sampling distribution, never tuned.

- Means: |mean − μ| ≤ Z·σ/√n with σ² the *theoretical* variance.
- Variances of an unbiased mechanism: E[(y − t)²] = Var[y | t], so the mean of the squared
  errors of one half of the sample is compared with the closed form; its standard error
  sd((y − t)²)/√(n/2) comes from the other, independent half (an outlier-heavy sample cannot
  widen its own tolerance), plus a 1e-12 relative allowance for floating-point rounding.
- Laws: chi-square goodness of fit (discrete) and Kolmogorov–Smirnov (continuous) against the
  mechanism's exact pmf / cdf, at a fixed significance level.

Z = 5 keeps the family-wise false-alarm rate of a few thousand fixed-seed checks below 1e-3.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

Z = 5.0
ALPHA = 1e-4


def assert_mean(samples: np.ndarray, mu: float, var: float, label: str = "", z: float = Z) -> None:
    n = samples.size
    se = np.sqrt(var / n)
    err = samples.mean() - mu
    assert abs(err) <= z * se + 1e-12, f"{label}: mean {samples.mean():.6g} vs {mu:.6g} ({err / se:+.2f} SE)"


def assert_variance(samples: np.ndarray, mu: float, var: float, label: str = "", z: float = Z) -> None:
    """Samples of an unbiased output for input ``mu``: mean squared error vs ``var``, the standard
    error estimated on an independent half of the sample."""
    sq = ((np.asarray(samples, dtype=float) - mu) ** 2).ravel()
    half = sq.size // 2
    if half < 10:
        raise ValueError(f"{label}: {sq.size} samples are too few to test a variance")
    tested, spare = sq[half:], sq[:half]
    mse = tested.mean()
    se = spare.std(ddof=1) / np.sqrt(tested.size)
    tol = z * se + 1e-12 * var
    assert abs(mse - var) <= tol, f"{label}: E(y-t)^2 {mse:.6g} vs {var:.6g} (tolerance {tol:.3g})"


def assert_discrete_law(samples: np.ndarray, support: np.ndarray, probs: np.ndarray, label: str = "") -> None:
    """Chi-square test of samples (values in ``support``) against ``probs``."""
    idx = np.searchsorted(support, samples)
    idx = np.clip(idx, 0, len(support) - 1)
    assert np.allclose(support[idx], samples, rtol=0, atol=1e-9 * max(1.0, np.abs(support).max())), (
        f"{label}: samples outside the support"
    )
    counts = np.bincount(idx, minlength=len(support))
    expected = probs * samples.size
    keep = expected > 0
    assert counts[~keep].sum() == 0, f"{label}: samples on zero-probability atoms"
    # Pool cells with small expectation so the chi-square approximation holds.
    order = np.argsort(expected[keep])
    e, c = expected[keep][order], counts[keep][order]
    pooled_e, pooled_c, acc_e, acc_c = [], [], 0.0, 0
    for ei, ci in zip(e, c):
        acc_e += ei
        acc_c += ci
        if acc_e >= 20:
            pooled_e.append(acc_e)
            pooled_c.append(acc_c)
            acc_e, acc_c = 0.0, 0
    if acc_e > 0 and pooled_e:
        pooled_e[-1] += acc_e
        pooled_c[-1] += acc_c
    if len(pooled_e) < 2:
        # too little expectation outside the likeliest atom for a chi-square: test the count off
        # that atom exactly (binomial); a point mass was verified exactly above
        if samples.size == 0:
            raise AssertionError(f"{label}: no samples to test")
        if keep.sum() == 1:
            return
        top = int(np.argmax(expected))
        p_off = float(probs[keep].sum() - probs[top]) / float(probs[keep].sum())
        off = int(samples.size - counts[top])
        p = stats.binomtest(off, samples.size, p_off).pvalue
        assert p > ALPHA, (
            f"{label}: {off} of {samples.size} samples off the likeliest atom, expected "
            f"{p_off * samples.size:.3g} (exact binomial p = {p:.2e})"
        )
        return
    chi2 = stats.chisquare(np.array(pooled_c), np.array(pooled_e) * (sum(pooled_c) / sum(pooled_e)))
    assert chi2.pvalue > ALPHA, f"{label}: chi-square p = {chi2.pvalue:.2e}"


def assert_continuous_law(samples: np.ndarray, cdf, label: str = "") -> None:
    ks = stats.kstest(samples, cdf)
    assert ks.pvalue > ALPHA, f"{label}: KS p = {ks.pvalue:.2e} (D = {ks.statistic:.4g})"


def piecewise_cdf(pieces):
    """CDF of a piecewise-constant density given as [(lo, hi, density)] scalars."""
    pieces = [(float(lo), float(hi), float(d)) for lo, hi, d in pieces]

    def cdf(y):
        y = np.asarray(y, dtype=float)
        total = np.zeros_like(y)
        for lo, hi, d in pieces:
            total += d * np.clip(y - lo, 0.0, max(hi - lo, 0.0))
        return total

    return cdf


class FixedWords:
    """A stand-in ``numpy.random.Generator`` for the byte samplers (``random_bits.random_bytes``):
    its bit generator's 64-bit outputs are a fixed byte string read as little-endian words, in order,
    so a test decides every byte a sampler reads."""

    def __init__(self, data: bytes):
        self.data = data
        self.bit_generator = self

    def random_raw(self, words: int) -> np.ndarray:
        out, self.data = self.data[: 8 * words], self.data[8 * words :]
        assert len(out) == 8 * words, "asked for more words than given"
        return np.frombuffer(out, dtype="<u8").astype(np.uint64)
