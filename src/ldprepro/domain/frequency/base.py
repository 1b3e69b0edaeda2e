"""The frequency oracles' shared code: :class:`FrequencyOracle` (estimator, exact variance) and the
argument checks every oracle uses. The notation (``p_true``, ``p_other``) is explained in
``ldprepro.domain.frequency``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

# --------------------------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------------------------


def _check_k(k: Any) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 2:
        raise ValueError(f"domain size k must be an integer >= 2, got {k!r}")
    return int(k)


def _check_eps(eps: Any, name: str = "eps") -> float:
    try:
        e = float(eps)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive finite number, got {eps!r}") from None
    if not math.isfinite(e) or e <= 0:
        raise ValueError(f"{name} must be a positive finite number, got {eps!r}")
    return e


def _check_values(values: Any, k: int) -> np.ndarray:
    """Return ``values`` as a 1-d int64 array, raising ValueError naming the first bad value."""
    arr = np.asarray(values)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise ValueError(f"values must be a 1-d array of ints, got shape {arr.shape}")
    if arr.size == 0:
        return arr.astype(np.int64)
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise ValueError(f"values must be integers in 0..{k - 1}, got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.floating):
        bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if bad.any():
            raise ValueError(f"values must be integers in 0..{k - 1}, got {arr[np.argmax(bad)].item()!r}")
    bad = (arr < 0) | (arr >= k)
    if bad.any():
        raise ValueError(f"values must be integers in 0..{k - 1}, got {arr[np.argmax(bad)].item()!r}")
    return arr.astype(np.int64, copy=False)


#: largest ε the hashing, subset and Hadamard oracles accept: beyond it e^{−ε} leaves float64's normal
#: range and their laws (hence the exact loss) can no longer be computed to full precision
EPS_MAX_EXACT = 700.0


def _check_eps_exact(eps: Any) -> float:
    """:func:`_check_eps`, and ε ≤ ``EPS_MAX_EXACT`` (refused naming ε otherwise)."""
    e = _check_eps(eps)
    if e > EPS_MAX_EXACT:
        raise ValueError(f"eps={eps!r} is above {EPS_MAX_EXACT:g}: e^-eps underflows, the law would not be exact")
    return e


def _column_counts(reports: Any, k: int, what: str) -> np.ndarray:
    """Per-value counts of an (n, k) 0/1 report matrix (``what`` names its kind in the error):
    the number of reports with a 1 in each column, length-k int64."""
    r = np.asarray(reports)
    if r.ndim != 2 or r.shape[1] != k:
        raise ValueError(f"reports must be an (n, {k}) {what}, got shape {r.shape}")
    return r.sum(axis=0, dtype=np.int64)


def _check_true_counts(true_counts: Any, k: int) -> np.ndarray:
    c = np.asarray(true_counts)
    if c.shape != (k,):
        raise ValueError(f"true_counts must have shape ({k},), got {c.shape}")
    if not np.issubdtype(c.dtype, np.integer):
        if not np.all(np.isfinite(c)) or np.any(c != np.round(c)):
            raise ValueError(f"true_counts must be non-negative integers, got {c!r}")
    if np.any(c < 0):
        raise ValueError(f"true_counts must be non-negative integers, got {c[np.argmax(c < 0)].item()!r}")
    return c.astype(np.int64)


def _check_prob(x: Any, name: str, *, open_low: bool = False, open_high: bool = False) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a probability, got {x!r}") from None
    lo_ok = v > 0 if open_low else v >= 0
    hi_ok = v < 1 if open_high else v <= 1
    if not (math.isfinite(v) and lo_ok and hi_ok):
        lo = "(0" if open_low else "[0"
        hi = "1)" if open_high else "1]"
        raise ValueError(f"{name} must lie in {lo}, {hi}, got {x!r}")
    return v


def pair_law_loss(pair: np.ndarray) -> float:
    """Exact privacy loss from a 2×2 *support-pair law*: ``pair[a, b]`` = Pr(the report supports x0
    (a), supports x1 (b) | value x0), for a mechanism symmetric in its values (the law under x1 is
    the transpose). When the report's likelihood ratio between x0 and x1 is a function of (a, b) —
    true of local hashing, subset selection and Hadamard response — the pair is sufficient for that
    ratio, so ln max_{(a,b)} pair[a,b]/pair[b,a] over the cells of positive probability is the exact
    loss max_y ln Pr(y|x0)/Pr(y|x1)."""
    p = np.asarray(pair, dtype=float)
    if p.shape != (2, 2) or np.any(p < 0) or not math.isclose(p.sum(), 1.0, rel_tol=1e-12):
        raise ValueError(f"a support-pair law is a 2x2 probability table, got {p!r}")
    pos = p > 0
    if np.any(pos != pos.T):
        return math.inf
    with np.errstate(divide="ignore"):
        lp = np.log(np.where(pos, p, 1.0))
    return float(np.abs(lp - lp.T)[pos].max())


class FrequencyOracle:
    """Shared estimator/variance/validation code. Subclasses set ``k``, ``p_true``, ``p_other``."""

    name: str = "abstract"
    k: int
    p_true: float
    p_other: float

    # --- estimation ------------------------------------------------------------------------
    def estimate_counts(self, support: Any, n: int | None = None) -> np.ndarray:
        """Unbiased count estimate (c - n p_other)/(p_true - p_other), elementwise over ``support``.

        ``support`` has shape (..., k). ``n`` (number of users) is required for the unary encodings;
        for GRR it defaults to ``support.sum(-1)``.
        """
        c = np.asarray(support, dtype=float)
        if c.shape[-1:] != (self.k,):
            raise ValueError(f"support counts must have last axis of length {self.k}, got shape {c.shape}")
        if n is None:
            n = self._default_n(c)
        n_arr = np.asarray(n, dtype=float)
        if n_arr.ndim:
            n_arr = n_arr[..., None]
        return (c - n_arr * self.p_other) / (self.p_true - self.p_other)

    def _default_n(self, c: np.ndarray) -> np.ndarray:
        raise ValueError(f"{self.name}: the number of users n is required to estimate counts")

    def estimate_frequencies(self, support: Any, n: int | None = None) -> np.ndarray:
        """Unbiased frequency estimate: :meth:`estimate_counts` / n."""
        c = np.asarray(support, dtype=float)
        if n is None:
            n = self._default_n(c)
        n_arr = np.asarray(n, dtype=float)
        est = self.estimate_counts(c, n_arr)
        return est / (n_arr[..., None] if n_arr.ndim else n_arr)

    def estimate_from_reports(self, reports: Any) -> np.ndarray:
        """Estimated counts straight from a batch of per-user reports."""
        rep = np.asarray(reports)
        return self.estimate_counts(self.support_counts(rep), rep.shape[0])

    def count_variance(self, n: Any, true_counts: Any = 0, *, freq: Any = None) -> np.ndarray:
        """Exact variance of :meth:`estimate_counts` for value(s) with true count ``true_counts``.

        Var = (c p_t (1 - p_t) + (n - c) p_o (1 - p_o)) / (p_t - p_o)^2, with p_t = ``p_true``,
        p_o = ``p_other``. Pass ``freq`` instead of ``true_counts`` to give c = freq * n. With c = 0
        this is the usual "approximate variance" n p_o (1 - p_o)/(p_t - p_o)^2 of Wang et al. 2017.
        """
        n_arr = np.asarray(n, dtype=float)
        c = n_arr * np.asarray(freq, dtype=float) if freq is not None else np.asarray(true_counts, dtype=float)
        pt, po = self.p_true, self.p_other
        return (c * pt * (1 - pt) + (n_arr - c) * po * (1 - po)) / (pt - po) ** 2

    def frequency_variance(self, n: Any, freq: Any = 0) -> np.ndarray:
        """Exact variance of :meth:`estimate_frequencies` for true frequency ``freq``."""
        n_arr = np.asarray(n, dtype=float)
        return self.count_variance(n_arr, freq=freq) / n_arr**2

    # --- sufficient statistics ----------------------------------------------------------------
    def sample_support_counts(self, true_counts: Any, rng: np.random.Generator, size: int | None = None) -> np.ndarray:
        raise NotImplementedError

    # --- privacy -------------------------------------------------------------------------------
    @property
    def epsilon_exact(self) -> float:
        raise NotImplementedError

    def _validate(self, values: Any) -> np.ndarray:
        return _check_values(values, self.k)
