"""Deterministic randomness keyed by a job's parameters.

Every random stream in the pipeline is a ``numpy.random.Generator`` built from a
``numpy.random.SeedSequence`` whose entropy is the configured base seed and whose
``spawn_key`` is derived from a canonical encoding of the job's parameters. The same
(seed, key) always gives the same stream; different keys give statistically independent
streams (SeedSequence's hashing guarantees this, which is why we never add offsets to seeds).

``rng_for`` builds that generator without ``SeedSequence``'s coercion of the spawn key (about
20 µs of Python per call, paid once per repetition of every Monte-Carlo job): it hands numpy the
entropy array ``SeedSequence(entropy=seed, spawn_key=words)`` assembles itself (the seed's 32-bit
words, zero-padded to the pool size, then the key's words), so the pool, the PCG64 state and every
draw are the same bits (``tests/test_seeding.py`` checks them against ``seed_sequence``).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np


def canonical_key(key: Any) -> str:
    """Canonical JSON encoding of a key (dict keys sorted, floats as repr) used for hashing:
    ``json.dumps(key, sort_keys=True, separators=(",", ":"), default=_default)``, by one encoder
    built once (``json.dumps`` with options builds a new one per call)."""
    return _ENCODER.encode(key)


def _default(obj: Any) -> Any:
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating,)):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"cannot use {type(obj).__name__} in a seed key: {obj!r}")


_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=_default)


#: numpy's ``SeedSequence`` pool size (``DEFAULT_POOL_SIZE``): with a spawn key, the run entropy is
#: zero-padded to this many words before the key's words are appended.
_POOL_SIZE = 4


def _key_digest_words(key: Any) -> np.ndarray:
    """The SHA-256 of the canonical key as eight little-endian uint32 words."""
    digest = hashlib.sha256(canonical_key(key).encode("utf-8")).digest()
    return np.frombuffer(digest, dtype="<u4")


def key_words(key: Any) -> tuple[int, ...]:
    """Eight 32-bit words from the SHA-256 of the canonical key (the SeedSequence spawn key)."""
    return tuple(int(w) for w in _key_digest_words(key))


def _checked_seed(seed: Any) -> int:
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)


def seed_sequence(seed: int, key: Any = None) -> np.random.SeedSequence:
    """SeedSequence for base ``seed`` and job ``key`` (any JSON-encodable value)."""
    seed = _checked_seed(seed)
    spawn_key = () if key is None else key_words(key)
    return np.random.SeedSequence(entropy=seed, spawn_key=spawn_key)


def _seed_words(seed: int) -> list[int]:
    """``seed`` as numpy coerces an int entropy: its 32-bit words, least significant first ([0] for 0)."""
    words = [seed & 0xFFFFFFFF]
    seed >>= 32
    while seed:
        words.append(seed & 0xFFFFFFFF)
        seed >>= 32
    return words


def rng_for(seed: int, key: Any = None) -> np.random.Generator:
    """A fresh ``Generator`` (PCG64) for base ``seed`` and job ``key``: the stream of
    ``Generator(PCG64(seed_sequence(seed, key)))``, built from the entropy array that sequence
    assembles (module docstring)."""
    seed = _checked_seed(seed)
    if key is None:
        return np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy=seed)))
    words = _seed_words(seed)
    entropy = np.zeros(max(len(words), _POOL_SIZE) + 8, dtype=np.uint32)
    entropy[: len(words)] = words
    entropy[-8:] = _key_digest_words(key)
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy=entropy)))
