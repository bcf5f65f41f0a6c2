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
