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
draw are the same bits. ``rngs_for`` builds the generators of many keys at once (a job's
repetitions): it runs SeedSequence's hash (the pool mixing and ``generate_state``, numpy's
documented algorithm after O'Neill's seed_seq_fe) on all the keys' entropy arrays together, as
uint32 array arithmetic, and hands each PCG64 its state words. ``tests/test_seeding.py`` checks
both against ``Generator(PCG64(seed_sequence(seed, key)))``, state for state.
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


def _assembled_entropy(seed: int, keys: list) -> np.ndarray:
    """(len(keys), L) uint32: row i is the entropy ``SeedSequence(entropy=seed, spawn_key=key_words(keys[i]))``
    assembles, the seed's words zero-padded to the pool size, then the key's eight words."""
    words = _seed_words(seed)
    entropy = np.zeros((len(keys), max(len(words), _POOL_SIZE) + 8), dtype=np.uint32)
    entropy[:, : len(words)] = words
    for row, key in enumerate(keys):
        entropy[row, -8:] = _key_digest_words(key)
    return entropy


def rng_for(seed: int, key: Any = None) -> np.random.Generator:
    """A fresh ``Generator`` (PCG64) for base ``seed`` and job ``key``: the stream of
    ``Generator(PCG64(seed_sequence(seed, key)))``, built from the entropy array that sequence
    assembles (module docstring)."""
    seed = _checked_seed(seed)
    if key is None:
        return np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy=seed)))
    entropy = _assembled_entropy(seed, [key])[0]
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy=entropy)))


# SeedSequence's hash constants (numpy.random.bit_generator; O'Neill's seed_seq_fe)
_INIT_A, _MULT_A = 0x43B0D7E5, 0x931E8875
_INIT_B, _MULT_B = 0x8B51F9DD, 0x58F38DED
_MIX_MULT_L, _MIX_MULT_R = np.uint32(0xCA01F9DD), np.uint32(0x4973F715)
_XSHIFT = np.uint32(16)
_MASK32 = 0xFFFFFFFF


def _pcg64_states(entropy: np.ndarray) -> np.ndarray:
    """(B, 4) uint64: ``SeedSequence(entropy=row).generate_state(4, np.uint64)`` for every row of
    ``entropy`` (B, L) uint32, L ≥ the pool size: the pool mixing, then the output hash, each step
    one uint32 array operation over the B rows (the hash constants evolve the same for every row)."""
    hash_const = _INIT_A

    def hashmix(value: np.ndarray) -> np.ndarray:
        nonlocal hash_const
        value = value ^ np.uint32(hash_const)
        hash_const = (hash_const * _MULT_A) & _MASK32
        value = value * np.uint32(hash_const)
        return value ^ (value >> _XSHIFT)

    def mix(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        result = _MIX_MULT_L * x - _MIX_MULT_R * y
        return result ^ (result >> _XSHIFT)

    width = entropy.shape[1]
    pool = [hashmix(entropy[:, i]) for i in range(_POOL_SIZE)]
    for src in range(_POOL_SIZE):
        for dst in range(_POOL_SIZE):
            if src != dst:
                pool[dst] = mix(pool[dst], hashmix(pool[src]))
    for src in range(_POOL_SIZE, width):
        for dst in range(_POOL_SIZE):
            pool[dst] = mix(pool[dst], hashmix(entropy[:, src]))
    hash_const = _INIT_B
    words = []
    for i in range(2 * 4):  # 4 uint64 = 8 uint32 words, cycling through the pool
        value = pool[i % _POOL_SIZE] ^ np.uint32(hash_const)
        hash_const = (hash_const * _MULT_B) & _MASK32
        value = value * np.uint32(hash_const)
        words.append(value ^ (value >> _XSHIFT))
    return np.ascontiguousarray(np.stack(words, axis=1).astype("<u4")).view("<u8").astype(np.uint64)


class _KeyedSeed(np.random.bit_generator.ISpawnableSeedSequence):
    """What PCG64 asks of a seed sequence, from words computed beforehand by ``_pcg64_states``;
    ``spawn`` is the assembled-entropy SeedSequence's, as for ``rng_for``'s generators."""

    __slots__ = ("entropy", "_state")

    def __init__(self, entropy: np.ndarray, state: np.ndarray):
        self.entropy, self._state = entropy, state

    def generate_state(self, n_words, dtype=np.uint32):
        if int(n_words) == 4 and np.dtype(dtype) == np.uint64:
            return self._state.copy()
        return np.random.SeedSequence(entropy=self.entropy).generate_state(n_words, dtype)

    def spawn(self, n_children):
        return np.random.SeedSequence(entropy=self.entropy).spawn(n_children)


def rngs_for(seed: int, keys: list) -> list[np.random.Generator]:
    """``[rng_for(seed, key) for key in keys]``, the same generators state for state, built
    together (module docstring): the keys' hashes, then one pass of array arithmetic for all of
    their PCG64 states. A ``None`` key gets ``rng_for(seed)``."""
    seed = _checked_seed(seed)
    keyed = [i for i, key in enumerate(keys) if key is not None]
    entropy = _assembled_entropy(seed, [keys[i] for i in keyed])
    states = _pcg64_states(entropy) if keyed else np.empty((0, 4), dtype=np.uint64)
    out: list = [None] * len(keys)
    for row, i in enumerate(keyed):
        out[i] = np.random.Generator(np.random.PCG64(_KeyedSeed(entropy[row], states[row])))
    return [rng if rng is not None else rng_for(seed) for rng in out]
