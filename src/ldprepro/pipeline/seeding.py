"""Deterministic randomness keyed by a job's parameters.

Every random stream in the pipeline is a ``numpy.random.Generator`` built from a
``numpy.random.SeedSequence`` whose entropy is the configured base seed and whose
``spawn_key`` is derived from a canonical encoding of the job's parameters. The same
(seed, key) always gives the same stream; different keys give statistically independent
streams (SeedSequence's hashing guarantees this, which is why we never add offsets to seeds).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np


def canonical_key(key: Any) -> str:
    """Canonical JSON encoding of a key (dict keys sorted, floats as repr) used for hashing."""
    return json.dumps(key, sort_keys=True, separators=(",", ":"), default=_default)


def _default(obj: Any) -> Any:
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating,)):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"cannot use {type(obj).__name__} in a seed key: {obj!r}")


def key_words(key: Any) -> tuple[int, ...]:
    """Eight 32-bit words from the SHA-256 of the canonical key (the SeedSequence spawn key)."""
    digest = hashlib.sha256(canonical_key(key).encode("utf-8")).digest()
    return tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 32, 4))


def seed_sequence(seed: int, key: Any = None) -> np.random.SeedSequence:
    """SeedSequence for base ``seed`` and job ``key`` (any JSON-encodable value)."""
    if not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    spawn_key = () if key is None else key_words(key)
    return np.random.SeedSequence(entropy=int(seed), spawn_key=spawn_key)


def rng_for(seed: int, key: Any = None) -> np.random.Generator:
    """A fresh ``Generator`` (PCG64) for base ``seed`` and job ``key``."""
    return np.random.Generator(np.random.PCG64(seed_sequence(seed, key)))
