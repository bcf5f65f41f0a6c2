"""The matcher's large outputs and the memory under them.

A call of ``_KEPT_FROM_ROWS`` rows or more writes its three outputs into memory kept from
earlier calls' outputs once their user let go of them (``match.pxi``): the answers must not
depend on what that memory held, an array (or a view of one) still in use must never be
written by a later call, and a call of another size lets the kept blocks go rather than
hold them beside new ones.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuclass._native import twin
from gpuclass._native.contract.match import build_match_tables

NV, AMD = 0x10DE, 0x1002
RULES = [(NV, 0x27B0, None, None, 0), (NV, 0x1E30, 0x10DE, 0x12BA, 1), (NV, 0x1E30, 0x10DE, 0x129E, -1),
         (NV, 0x2BB5, None, None, 1), (NV, 0x1B80, None, None, -1), (0x8086, 0x56C0, None, None, 2)]
TABLES = build_match_tables(RULES, [4, 8, 2], gpu_vendors=(NV, AMD))


def _rows(n: int, seed: int):
    rng = np.random.default_rng(seed)
    pick = lambda pool, dt: rng.choice(np.array(pool, dtype=dt), n)  # noqa: E731
    return (pick([NV, NV, AMD, 0x8086, 0x1AF4, 0x0000, 0xFFFF], np.uint16),
            pick([0x27B0, 0x1E30, 0x2BB5, 0x1B80, 0x56C0, 0x0000, 0xFFFF], np.uint16),
            pick([0x10DE, 0x1028, 0x0000], np.uint16),
            pick([0x12BA, 0x129E, 0x0000, 0xFFFF], np.uint16),
            pick([0x030000, 0x030200, 0x038000, 0x040300, 0x0C0330, 0x020000, 0], np.uint32))


def _slots(n: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    return {"domain": np.zeros(n, np.uint32), "bus": rng.integers(0, 4, n).astype(np.uint8),
            "slot": rng.integers(0, 32, n).astype(np.uint8), "group": np.arange(n, dtype=np.int64) // 6}


def _same(got, want):
    for x, y in zip(got, want):
        assert x.dtype == y.dtype and np.array_equal(x, y)


@pytest.fixture
def large(compiled_core):
    return compiled_core._KEPT_FROM_ROWS


def test_large_outputs_are_plain_writeable_arrays_equal_to_the_twins(compiled_core, large):
    rows = _rows(large, seed=1)
    got = compiled_core.match_devices(TABLES, *rows)
    for arr, dtype in zip(got, (np.uint8, np.int16, np.uint16)):
        assert arr.dtype == dtype and arr.shape == (large,)
        assert arr.flags.writeable and arr.flags.c_contiguous
    _same(got, twin.match_devices(TABLES, *rows))
    got[0][:] = 7  # the caller's to change
    assert (got[0] == 7).all()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(extra=st.integers(0, 5000), threads=st.integers(1, 4), fill=st.integers(0, 255),
       subsystem=st.booleans(), slots=st.booleans(), seed=st.integers(0, 2**16))
def test_answers_do_not_depend_on_what_the_kept_memory_held(compiled_core, large, extra, threads, fill,
                                                            subsystem, slots, seed):
    """The last call's outputs filled with any byte and let go, then a call of the same length
    (which writes into that memory) answers as the twin does, with every kernel variant."""
    n = large + extra
    old = compiled_core.match_devices(TABLES, *_rows(n, seed + 1))
    for arr in old:
        arr.view(np.uint8)[:] = fill
    del old, arr
    v, d, sv, sd, c = _rows(n, seed)
    args = (v, d, sv, sd, c) if subsystem else (v, d, None, None, c)
    kw = _slots(n, seed) if slots else {}
    _same(compiled_core.match_devices(TABLES, *args, **kw, threads=threads),
          twin.match_devices(TABLES, *args, **kw))


def test_outputs_in_use_are_never_written_by_a_later_call(compiled_core, large):
    first = compiled_core.match_devices(TABLES, *_rows(large, seed=2))
    view = first[1][100:]  # a view keeps its array's memory
    kept_status = first[0]
    want_view, want_status = view.copy(), kept_status.copy()
    del first
    for seed in range(3, 7):  # calls of the same length, each let go at once
        compiled_core.match_devices(TABLES, *_rows(large, seed=seed))
    assert np.array_equal(view, want_view) and np.array_equal(kept_status, want_status)


def test_let_go_outputs_are_kept_and_taken_by_the_next_call_of_their_length(compiled_core, large):
    n = large + 17
    compiled_core.match_devices(TABLES, *_rows(5 * n, seed=0))  # what earlier tests kept, let go
    assert sorted(compiled_core._kept_blocks()) == [5 * n, 10 * n, 10 * n]
    compiled_core.match_devices(TABLES, *_rows(n, seed=1))  # fits none of those: let go at once
    assert sorted(compiled_core._kept_blocks()) == [n, 2 * n, 2 * n]
    out = compiled_core.match_devices(TABLES, *_rows(n, seed=2))
    assert compiled_core._kept_blocks() == []  # all three taken, none new
    del out
    # a call of another length lets them go before it asks for memory of its own
    m = 3 * n
    out = compiled_core.match_devices(TABLES, *_rows(m, seed=3))
    assert compiled_core._kept_blocks() == []
    del out
    assert sorted(compiled_core._kept_blocks()) == [m, 2 * m, 2 * m]
    # a shorter call (over half the length) writes into the larger blocks
    k = 2 * n
    out = compiled_core.match_devices(TABLES, *_rows(k, seed=4))
    _same(out, twin.match_devices(TABLES, *_rows(k, seed=4)))
    assert compiled_core._kept_blocks() == []
    del out


def test_outputs_kept_stay_within_their_bound(compiled_core, large):
    """Outputs of more than the bound (128 MiB, six blocks) are let go, not kept."""
    n = (128 << 20) // 4  # 5 bytes a row: 160 MiB of outputs
    out = compiled_core.match_devices(TABLES, np.full(n, NV, np.uint16), np.full(n, 0x27B0, np.uint16),
                                      None, None, np.full(n, 0x030000, np.uint32))
    assert int(out[2].sum()) == 4 * n
    del out
    kept = compiled_core._kept_blocks()
    assert sum(kept) <= 128 << 20 and len(kept) <= 6


def test_calls_from_many_threads_keep_their_answers_apart(compiled_core, large):
    inputs = [_rows(large + 64 * k, seed=k) for k in range(4)]
    want = [twin.match_devices(TABLES, *rows) for rows in inputs]

    def work(k):
        got = []
        for _ in range(6):
            got.append(compiled_core.match_devices(TABLES, *inputs[k], threads=1))
            if len(got) > 2:
                got.pop(0)  # let some go while others are still held
        return got

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(work, range(4)))
    for k, got in enumerate(results):
        for answer in got:
            _same(answer, want[k])
