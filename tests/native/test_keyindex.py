"""KeyIndex, the hashed exact-match index, on both cores."""

from __future__ import annotations

import numpy as np
import pytest

from gpuclass.errors import InputError


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64])
def test_lookup_every_query_dtype(core, dtype):
    keys = np.array([0, 1, 7, 200, 255], dtype=np.uint32)
    idx = core.KeyIndex(keys)
    queries = np.array([255, 0, 8, 7, 201], dtype=dtype)
    assert idx.lookup(queries).tolist() == [4, 0, -1, 2, -1]
    assert idx.lookup(queries).dtype == np.int32


def test_wide_keys_and_zero_and_max(core):
    keys = np.array([0, 1, 2**32, 2**64 - 1], dtype=np.uint64)
    idx = core.KeyIndex(keys)
    assert idx.lookup(np.array([2**64 - 1, 2**32, 0, 5], dtype=np.uint64)).tolist() == [3, 2, 0, -1]
    assert [idx.find(k) for k in (0, 2**32, 2**64 - 1, 3, -1, 2**70)] == [0, 2, 3, -1, -1, -1]


def test_narrow_table_rejects_wide_queries_without_wrapping(core):
    idx = core.KeyIndex(np.array([5], dtype=np.uint32))
    # 2**32 + 5 must not alias 5
    assert idx.lookup(np.array([2**32 + 5, 5], dtype=np.uint64)).tolist() == [-1, 0]
    assert idx.find(2**32 + 5) == -1


def test_empty_keys_and_queries(core):
    idx = core.KeyIndex(np.array([], dtype=np.uint32))
    assert len(idx) == 0
    assert idx.lookup(np.array([1, 2], dtype=np.uint32)).tolist() == [-1, -1]
    assert core.KeyIndex(np.array([3], np.uint16)).lookup(np.array([], np.uint16)).tolist() == []


def test_many_keys_with_collisions(core):
    rng = np.random.default_rng(7)
    keys = np.unique(rng.integers(0, 2**32, 50_000, dtype=np.uint64)).astype(np.uint32)
    idx = core.KeyIndex(keys)
    probe = np.concatenate([keys, rng.integers(0, 2**32, 50_000, dtype=np.uint64).astype(np.uint32)])
    got = idx.lookup(probe)
    pos = np.searchsorted(keys, probe)
    pos[pos == len(keys)] = 0
    expected = np.where(keys[pos] == probe, pos, -1)
    assert np.array_equal(got, expected)


@pytest.mark.parametrize("keys, message", [
    (np.array([3, 1], dtype=np.uint32), "strictly increasing"),
    (np.array([1, 1], dtype=np.uint32), "strictly increasing"),
    (np.array([1.0, 2.0]), "integer array"),
    (np.array([-1, 2]), "negative"),
    (np.zeros((2, 2), dtype=np.uint32), "1-D"),
])
def test_bad_keys_same_error_in_both_cores(core, keys, message):
    with pytest.raises(InputError, match=message):
        core.KeyIndex(keys)


@pytest.mark.parametrize("queries, message", [
    (np.array([1.5]), "integer array"),
    (np.array([-3]), "negative"),
    (np.array(["a"]), "integer array"),
])
def test_bad_queries_same_error_in_both_cores(core, queries, message):
    with pytest.raises(InputError, match=message):
        core.KeyIndex(np.array([1, 2], dtype=np.uint32)).lookup(queries)


def test_non_contiguous_queries(core):
    keys = np.arange(0, 100, 3, dtype=np.uint32)
    q = np.arange(0, 100, dtype=np.uint32)[::2]
    assert not q.flags.c_contiguous
    got = core.KeyIndex(keys).lookup(q)
    assert got.tolist() == [int(v) // 3 if v % 3 == 0 else -1 for v in q]


# -- chosen keys ------------------------------------------------------------------------------

def _chosen(n: int, wide: bool) -> np.ndarray:
    """Keys a fixed multiplicative hash sends to consecutive home slots (the index's hash
    before it was keyed: 32-bit keys times 0x9E3779B1, 64-bit times 0x9E3779B97F4A7C15):
    each table probe walks the whole run, so building n of them cost O(n**2)."""
    bits, mult = (64, 0x9E3779B97F4A7C15) if wide else (32, 0x9E3779B1)
    inv = pow(mult, -1, 2**bits)
    base = 1 << (bits - 2)
    keys = [((base + j) * inv) % 2**bits for j in range(n)]
    return np.unique(np.array(keys, dtype=np.uint64 if wide else np.uint32))


def _timed(fn):
    import time

    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


@pytest.mark.parametrize("wide", [False, True])
def test_chosen_keys_cost_what_random_keys_cost(compiled_core, wide):
    n = 100_000
    chosen = _chosen(n, wide)
    rng = np.random.default_rng(7)
    random = np.unique(rng.integers(1 << 33 if wide else 0, 2**63 if wide else 2**32, n,
                                    dtype=np.uint64 if wide else np.uint32))

    def run(keys):
        def go():
            idx = compiled_core.KeyIndex(keys)
            assert np.array_equal(idx.lookup(keys), np.arange(len(keys), dtype=np.int32))
        return go

    t_chosen, t_random = _timed(run(chosen)), _timed(run(random))
    # before the keyed hash: 100k chosen keys took seconds, ~1000x random keys
    assert t_chosen < 3 * t_random + 0.02, (t_chosen, t_random)


@pytest.mark.parametrize("wide", [False, True])
def test_search_fallback_gives_the_same_answers(core, wide):
    rng = np.random.default_rng(3)
    keys = np.unique(rng.integers(0, 2**40 if wide else 2**20, 5000)).astype(np.uint64 if wide else np.uint32)
    queries = np.concatenate([keys, rng.integers(0, 2**40 if wide else 2**20, 5000).astype(keys.dtype)])
    hashed, searched = core.KeyIndex(keys), core.KeyIndex(keys, max_run=0)
    assert searched.strategy == "search"
    assert hashed.strategy == ("search" if core.__name__.endswith("twin") else "hash")
    want = np.searchsorted(keys, queries)
    want = np.where((want < len(keys)) & (keys[np.minimum(want, len(keys) - 1)] == queries), want, -1)
    assert np.array_equal(hashed.lookup(queries), want) and np.array_equal(searched.lookup(queries), want)
    assert [searched.find(k) for k in queries[:50].tolist()] == want[:50].tolist()


def test_every_index_has_its_own_seeds(compiled_core):
    """Two indexes of the same keys answer alike whatever their seeds (drawn per index)."""
    keys = _chosen(20_000, False)
    a, b = compiled_core.KeyIndex(keys), compiled_core.KeyIndex(keys)
    assert np.array_equal(a.lookup(keys), b.lookup(keys))
