"""``rng_for`` is the stream of ``Generator(PCG64(seed_sequence(seed, key)))`` bit for bit (it skips
SeedSequence's spawn-key coercion by handing numpy the entropy array the sequence assembles)."""

from __future__ import annotations

import numpy as np
import pytest

from ldprepro.pipeline.seeding import key_words, rng_for, seed_sequence

SEEDS = [0, 1, 12345, 2**32 - 1, 2**32, 2**40 + 7, 2**96 + 3, 2**127 + 5, 2**128, 2**200 + 11]
KEYS = [
    None,
    {},
    {"paper": "dct", "figure": "fig2", "mechanism": "pm", "eps": 0.25, "rep": 17},
    {"eps": 1e-6, "rep": 0, "nested": {"b": [1, 2], "a": "x"}},
    [0.1, "s", 3],
    "a key",
    {"eps": np.float64(0.5), "rep": np.int64(3), "arr": np.arange(3)},
]


def _reference(seed, key):
    return np.random.Generator(np.random.PCG64(seed_sequence(seed, key)))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("key", KEYS, ids=range(len(KEYS)))
def test_rng_for_is_the_seed_sequence_stream(seed, key):
    ours, ref = rng_for(seed, key), _reference(seed, key)
    assert ours.bit_generator.state == ref.bit_generator.state
    np.testing.assert_array_equal(ours.random(64), ref.random(64))
    np.testing.assert_array_equal(ours.integers(0, 2**63, 16), ref.integers(0, 2**63, 16))


def test_many_keys_match_and_differ():
    """200 repetition keys: each the reference stream, and no two the same."""
    states = set()
    for rep in range(200):
        key = {"job": "j", "eps": 0.5, "rep": rep}
        ours = rng_for(7, key)
        assert ours.bit_generator.state == _reference(7, key).bit_generator.state
        states.add(ours.bit_generator.state["state"]["state"])
    assert len(states) == 200


def test_key_words_are_the_little_endian_digest_words():
    import hashlib

    from ldprepro.pipeline.seeding import canonical_key

    key = {"b": 1, "a": [0.5, "x"]}
    digest = hashlib.sha256(canonical_key(key).encode("utf-8")).digest()
    assert key_words(key) == tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 32, 4))


@pytest.mark.parametrize("seed", [-1, 1.5, "3", True, None])
def test_bad_seed_is_refused_by_value(seed):
    for make in (rng_for, seed_sequence):
        with pytest.raises(ValueError, match="seed must be a non-negative integer"):
            make(seed, {"rep": 0})


@pytest.mark.parametrize("key", KEYS[1:], ids=range(len(KEYS) - 1))
def test_canonical_key_is_the_json_dumps_encoding(key):
    import json

    from ldprepro.pipeline.seeding import _default, canonical_key

    assert canonical_key(key) == json.dumps(key, sort_keys=True, separators=(",", ":"), default=_default)


def test_a_key_json_cannot_encode_is_refused_by_type():
    with pytest.raises(TypeError, match="cannot use set in a seed key"):
        rng_for(1, {"rep": {1, 2}})


@pytest.mark.parametrize("seed", SEEDS)
def test_rngs_for_builds_rng_fors_generators_together(seed):
    """rngs_for: the generators of rng_for for every key, state for state (the batched SeedSequence
    hash), in order, a None key included; the next draws agree too."""
    from ldprepro.pipeline.seeding import rngs_for

    keys = [*KEYS, *({"job": "j", "eps": 0.5, "rep": rep} for rep in range(40))]
    ours = rngs_for(seed, keys)
    assert len(ours) == len(keys)
    for rng, key in zip(ours, keys):
        ref = rng_for(seed, key)
        assert rng.bit_generator.state == ref.bit_generator.state
        np.testing.assert_array_equal(rng.random(8), ref.random(8))
    assert rngs_for(seed, []) == []


def test_rngs_for_generators_spawn_and_seed_like_rng_fors():
    """A batched generator's seed sequence gives the same other state sizes and the same children
    as the assembled-entropy SeedSequence behind rng_for."""
    from ldprepro.pipeline.seeding import rngs_for

    key = {"rep": 3}
    ours, ref = rngs_for(11, [key])[0].bit_generator.seed_seq, rng_for(11, key).bit_generator.seed_seq
    np.testing.assert_array_equal(ours.generate_state(7), ref.generate_state(7))
    np.testing.assert_array_equal(ours.generate_state(4, np.uint64), ref.generate_state(4, np.uint64))
    assert [c.generate_state(4).tolist() for c in ours.spawn(3)] == [c.generate_state(4).tolist() for c in ref.spawn(3)]
