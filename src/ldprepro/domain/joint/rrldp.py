"""RR-LDP user side (docs/papers/lremh.md §2, paper 004 Algorithm 1) and its privacy (§3).

Each user's record (d integer codes, attribute j in {0..|Ω_j|-1}) is one-hot encoded per attribute;
the strings are concatenated (length Σ_j |Ω_j|: 32 for NLTCS, 196 for Adult); every bit then goes
through the permanent RR (keep w.p. 1-f, else 0/1 w.p. f/2 each) and the instantaneous RR
(1 w.p. q if the permanent bit is 1, p if 0). The channel per original bit is
q* = ½f(p+q) + (1-f)q, p* = ½f(p+q) + (1-f)p (:func:`ldprepro.domain.frequency.rappor_channel`).

Two simulation paths, equal in distribution for one collection: :meth:`RRLDP.perturb_two_stage`
(the two stages, the permanent bits returned for memoisation) and :meth:`RRLDP.perturb` (one
Bernoulli(q*)/Bernoulli(p*) draw per bit).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ldprepro.domain.frequency import RapporUE, rappor_privacy

# Rows drawn per block: bounds the float temporaries whatever N is.
_BLOCK_ELEMENTS = 1 << 22


class RRLDP:
    """RR-LDP over records with per-attribute domain sizes ``sizes``."""

    def __init__(self, sizes: Sequence[int], f: float, p: float = 0.5, q: float = 0.75):
        self.sizes = tuple(int(s) for s in sizes)
        if not self.sizes or min(self.sizes) < 1:
            raise ValueError(f"domain sizes must be positive integers, got {sizes!r}")
        self.d = len(self.sizes)
        self.length = int(sum(self.sizes))
        self.offsets = np.concatenate([[0], np.cumsum(self.sizes)[:-1]]).astype(np.int64)
        # The same per-bit channel on every bit of the concatenated string.
        self.oracle = RapporUE(self.length, f, p, q)
        self.f, self.p, self.q = self.oracle.f, self.oracle.p, self.oracle.q
        self.q_star, self.p_star = self.oracle.q_star, self.oracle.p_star

    def __repr__(self) -> str:
        return f"RRLDP(sizes={self.sizes}, f={self.f!r}, p={self.p!r}, q={self.q!r})"

    # --- user side ------------------------------------------------------------------------------
    def _check_codes(self, codes: Any) -> np.ndarray:
        c = np.asarray(codes)
        if c.ndim != 2 or c.shape[1] != self.d:
            raise ValueError(f"records must be an (n, {self.d}) array of codes, got shape {c.shape}")
        if not np.issubdtype(c.dtype, np.integer):
            raise ValueError(f"records must hold integer codes, got dtype {c.dtype}")
        bad = (c < 0) | (c >= np.asarray(self.sizes))
        if bad.any():
            i, j = np.argwhere(bad)[0]
            raise ValueError(f"record {i}, attribute {j}: code {c[i, j]} outside 0..{self.sizes[j] - 1}")
        return c.astype(np.int64)

    def encode(self, codes: Any) -> np.ndarray:
        """Concatenated one-hot strings: (n, Σ|Ω_j|) uint8 with exactly d ones per row."""
        c = self._check_codes(codes)
        out = np.zeros((c.shape[0], self.length), dtype=np.uint8)
        out[np.arange(c.shape[0])[:, None], c + self.offsets] = 1
        return out

    def _draw(self, codes: np.ndarray, p1: float, p0: float, rng: np.random.Generator) -> np.ndarray:
        c = self._check_codes(codes)
        n = c.shape[0]
        out = np.empty((n, self.length), dtype=bool)
        block = max(1, _BLOCK_ELEMENTS // self.length)
        for start in range(0, n, block):
            stop = min(n, start + block)
            bits = out[start:stop]
            np.less(rng.random((stop - start, self.length)), p0, out=bits)
            rows = np.arange(stop - start)[:, None]
            bits[rows, c[start:stop] + self.offsets] = rng.random((stop - start, self.d)) < p1
        return out.view(np.uint8)

    def permanent(self, codes: Any, rng: np.random.Generator) -> np.ndarray:
        """Permanent RR (eq. 6) of the concatenated encoding; memoise it per user."""
        return self._draw(codes, 1.0 - self.f / 2, self.f / 2, rng)

    def instantaneous(self, permanent_bits: Any, rng: np.random.Generator) -> np.ndarray:
        """Instantaneous RR (eq. 7), fresh at every collection."""
        return self.oracle.instantaneous(permanent_bits, rng)

    def perturb_two_stage(self, codes: Any, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """(report, permanent bits) of one collection."""
        perm = self.permanent(codes, rng)
        return self.instantaneous(perm, rng), perm

    def perturb(self, codes: Any, rng: np.random.Generator) -> np.ndarray:
        """One-shot report: bit ~ Bernoulli(q*) if the original bit is 1, Bernoulli(p*) if 0."""
        return self._draw(codes, self.q_star, self.p_star, rng)

    # --- server side helpers ----------------------------------------------------------------------
    def blocks(self, reports: np.ndarray, attrs: Sequence[int]) -> list[np.ndarray]:
        """The reports' bit blocks of the attributes ``attrs`` (the estimators see only these)."""
        return [reports[:, self.offsets[j] : self.offsets[j] + self.sizes[j]] for j in attrs]

    # --- privacy ----------------------------------------------------------------------------------
    def privacy(self) -> dict[str, float]:
        return rappor_privacy(self.f, self.p, self.q, self.d)

    def privacy_report(self) -> str:
        return privacy_report(self.f, self.p, self.q, self.d)


def privacy_report(f: float, p: float, q: float, d: int) -> str:
    """Labelled privacy of RR-LDP for records of d attributes (docs/papers/lremh.md §3 and acceptance test 7)."""
    pr = rappor_privacy(f, p, q, d)
    return (
        f"RR-LDP f={f:g}, p={p:g}, q={q:g}, d={d}: q*={pr['q_star']:.4f}, p*={pr['p_star']:.4f}; "
        f"permanent RR (Theorem 1) eps1 = 2d ln((2-f)/f) = {pr['permanent_eps_record']:.4g}; "
        f"instantaneous RR as printed (Theorem 2, one attribute) eps2 = ln(q*(1-p*)/(p*(1-q*))) = "
        f"{pr['instantaneous_eps_per_attribute']:.4g}; "
        f"instantaneous RR for the whole record (d x eps2, the factor the paper omits) = "
        f"{pr['instantaneous_eps_record']:.4g}"
    )


# --- exact record-level privacy loss (the check of Theorems 1-2, docs/papers/lremh.md §3) -------------------------
def _bit_channel_loss(one: float, zero: float) -> tuple[float, float]:
    """Largest log-likelihood ratio one bit can contribute, for a bit that is 1 in x and 0 in x'
    (max over the reported bit of ln P(t|1)/P(t|0)) and for a bit that is 0 in x and 1 in x'."""
    l10 = max(math.log(one / zero), math.log((1 - one) / (1 - zero)))
    l01 = max(math.log(zero / one), math.log((1 - zero) / (1 - one)))
    return l10, l01


def record_loss(sizes: Sequence[int], one: float, zero: float) -> float:
    """Exact worst-case privacy loss max_{x, x', T} ln P(T|x)/P(T|x') of a per-bit channel
    (P(bit = 1) = ``one`` on the record's one-hot bits, ``zero`` elsewhere) over concatenated
    one-hot records of attributes with domain sizes ``sizes``.

    Exact, not a bound: given the record the report bits are independent, so the log-ratio is a
    sum over bits and its maximum over T is the sum of per-bit maxima; two records differ at two
    bits of attribute j (x_j's and x'_j's) when x_j ≠ x'_j, which is possible iff |Ω_j| ≥ 2. With
    (one, zero) = (q*, p*) this is the loss of one RR-LDP collection (Theorem 2's subject); with
    (1 − f/2, f/2) that of the permanent RR (Theorem 1's). Checked against brute-force
    enumeration (:func:`record_loss_enumerated`) in tests/test_lremh_claims.py."""
    l10, l01 = _bit_channel_loss(one, zero)
    return float(sum(l10 + l01 for s in sizes if int(s) >= 2))


def record_loss_enumerated(sizes: Sequence[int], one: float, zero: float) -> float:
    """The same maximum by enumerating every record pair and every report (small domains only)."""
    import itertools

    sizes = tuple(int(s) for s in sizes)
    length = sum(sizes)
    if length > 14:
        raise ValueError(f"enumeration over 2^{length} reports is too large; use record_loss")
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    records = np.array(list(itertools.product(*(range(s) for s in sizes))), dtype=np.int64)
    enc = np.zeros((len(records), length))
    enc[np.arange(len(records))[:, None], records + offsets] = 1.0
    reports = np.array(list(itertools.product((0.0, 1.0), repeat=length)))
    p1 = enc * one + (1 - enc) * zero  # P(bit = 1 | record), per record and bit
    ll = reports @ np.log(p1).T + (1 - reports) @ np.log1p(-p1).T  # (reports, records)
    return float((ll.max(axis=1) - ll.min(axis=1)).max())
