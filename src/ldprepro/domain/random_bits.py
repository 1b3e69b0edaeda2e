"""Random bits drawn more cheaply than a uniform each: what the byte samplers share.

- ``Generator.random`` returns k·2⁻⁵³ for a uniform integer k < 2⁵³ (the top 53 bits of one 64-bit
  output), so one uniform carries :data:`BITS_PER_UNIFORM` independent fair coins (Duchi's random
  signs, ``mechanisms.multidim``; the sums of uniforms, ``uniform_sum``).
- A Bernoulli(R·2⁻⁵⁶) event is "a uniform K on 56 bits is below R". Compared byte by byte from the
  most significant, K's first byte (:func:`random_bytes`, one per event) decides unless it equals
  R's, one time in 256; only then are K's six further bytes drawn (:func:`below_after_tie`). Used by
  ``uniform_sum.select_sum`` (which users report in PM's window) and
  ``multidim.DuchiMeanReports`` (Duchi's discretisation of each coordinate).
"""

from __future__ import annotations

import numpy as np

#: Random bits one ``Generator.random`` uniform carries (k·2⁻⁵³, k on 53 bits).
BITS_PER_UNIFORM = 53
#: Bits of the uniform K a byte-by-byte Bernoulli event compares with its threshold R (seven bytes).
SELECT_BITS = 56
#: The bits of K (and R) below the first byte.
LOWER_BITS = SELECT_BITS - 8


def random_bytes(k: int, rng: np.random.Generator) -> np.ndarray:
    """``k`` independent uniform bytes: the bit generator's 64-bit outputs, read as little-endian
    bytes whatever the machine's byte order (``Generator.bytes`` costs about seven times more)."""
    words = rng.bit_generator.random_raw(-(-k // 8))
    return np.asarray(words, dtype="<u8").view(np.uint8)[:k]


def below_after_tie(lower, rng: np.random.Generator) -> np.ndarray:
    """For events whose first byte tied with their threshold's: whether K's lower 48 bits, six
    further random bytes per event (most significant first, event after event), lie below the
    threshold's lower 48 bits ``lower`` (one per event). K equal to R is not below."""
    lower = np.asarray(lower, dtype=np.int64).reshape(-1)
    rest = random_bytes(6 * lower.size, rng).reshape(lower.size, 6).astype(np.int64)
    tail = np.zeros(lower.size, dtype=np.int64)
    for k in range(6):
        tail = (tail << 8) | rest[:, k]
    return tail < lower
