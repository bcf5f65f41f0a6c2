"""The audit kernel pair: the compiled core and its twin read device-table columns alike.

Random tables of hostile and ordinary cells (blanks, brackets, 0x, bad digits, nulls,
integer and 64-bit-offset columns, sliced arrays) must give identical runs, totals,
per-card counts, problems and unsupported rows from both; and each cell must follow the
contract's rule.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")

from gpuclass import constants as C  # noqa: E402
from gpuclass._native import twin  # noqa: E402
from gpuclass._native.contract import audit as A  # noqa: E402
from gpuclass.audit.pool import pooled_empty  # noqa: E402
from gpuclass.errors import InputError  # noqa: E402
from gpuclass.policy import compile_policy  # noqa: E402

CELLS = ["10de", "27b0", "22bc", "1b80", "1b06", "2bb5", "26b1", "1e30", "8086", "0300", "030000",
         "0302", "0403", "0c0330", "", " ", None, " 10DE ", "[10de]", "0x10de", "0X2BB5", "[0x27b0]",
         "zz", "12345", "1234567", "0x", "[]", "10de\n", "\t0300\t", "1", "abcdefabcd", "\u00e9\u00e9"]
TABLES = compile_policy().tables


INDEX_TYPES = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32()]


@st.composite
def dictionary_array(draw, values, value_type):
    """``values`` (None: a missing cell) dictionary-encoded as a user's data may have them:
    entries in any order, some repeated, unused or missing themselves; indices of any
    integer type; a missing cell either a missing index (with anything under it) or an
    index to a missing entry."""
    distinct = list(dict.fromkeys(v for v in values if v is not None))
    pool = [v for v in values if v is not None] or [None]
    entries = distinct + draw(st.lists(st.one_of(st.none(), st.sampled_from(pool)), max_size=3))
    entries = draw(st.permutations(entries))
    itype = draw(st.sampled_from(INDEX_TYPES))
    dtype = np.dtype(itype.to_pandas_dtype())
    index = np.zeros(len(values), dtype)
    missing = np.zeros(len(values), bool)
    null_entries = [k for k, e in enumerate(entries) if e is None]
    for i, v in enumerate(values):
        where = [k for k, e in enumerate(entries) if e == v and v is not None]
        if v is None and (not null_entries or draw(st.booleans())):
            missing[i] = True  # anything under it: in range or not
            index[i] = draw(st.sampled_from([0, 1, len(entries), 100, -1 if dtype.kind == "i" else 7]))
        else:
            index[i] = draw(st.sampled_from(where if v is not None else null_entries))
    validity = pa.py_buffer(np.packbits(~missing, bitorder="little")) if missing.any() else None
    indices = pa.Array.from_buffers(itype, len(values), [validity, pa.py_buffer(index)],
                                    null_count=int(missing.sum()))
    return pa.DictionaryArray.from_arrays(indices, pa.array(entries, value_type))


# server keys of every length the kernel compares in its own way (0-3, 4-7, 8-16 bytes and
# longer), in pairs of one length that differ at the start, the middle or the end
SERVER_KEYS = ["a", "b", "c", "", None, "a-much-longer-server-name", "a-much-longer-server-namf",
               "xy", "xz", "abcd", "abce", "srv0001", "srv0002", "rack-a-1", "rack-b-1", "node-17.dc1",
               "node-17.dc2", "0123456789abcdef", "1123456789abcdef", "0123456789abcdefg", "0123456789abcdefh",
               "\u00f1odo-1", "\u00f1odo-2"]


@st.composite
def device_columns(draw):
    n = draw(st.integers(0, 120))
    servers = draw(st.lists(st.sampled_from(SERVER_KEYS), min_size=n, max_size=n))
    cols = [draw(dictionary_array(servers, pa.string())) if draw(st.integers(0, 3)) == 0
            else pa.array(servers, pa.string())]
    for _ in range(5):
        kind = draw(st.sampled_from(["str", "str", "large", "int", "dict", "dict int"]))
        if kind in ("int", "dict int"):
            values = draw(st.lists(st.one_of(st.none(), st.sampled_from([0x10DE, 0x27B0, 0x0300, 0x030000,
                                                                         -1, 1 << 24, 5])),
                                   min_size=n, max_size=n))
            cols.append(draw(dictionary_array(values, pa.int64())) if kind == "dict int"
                        else pa.array(values, pa.int64()))
        elif kind == "dict":
            values = draw(st.lists(st.sampled_from(CELLS), min_size=n, max_size=n))
            cols.append(draw(dictionary_array(values, draw(st.sampled_from([pa.string(), pa.large_string()])))))
        else:
            values = draw(st.lists(st.sampled_from(CELLS), min_size=n, max_size=n))
            cols.append(pa.array(values, pa.large_string() if kind == "large" else pa.string()))
    if n and draw(st.booleans()):  # an array that starts inside its buffers
        cols = [c.slice(1) for c in cols]
    return cols


def _run(core, cols):
    return core.audit_rows(TABLES, [A.column_of(c, "x") for c in cols], len(compile_policy().cards))


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(cols=device_columns())
def test_compiled_audit_equals_twin(compiled_core, cols):
    a, b = _run(compiled_core, cols), _run(twin, cols)
    for name, x, y in zip(a._fields, a, b):
        assert x.dtype == y.dtype and np.array_equal(x, y), name


def _decoded(col):
    """A dictionary array as the plain array of its values (None under a missing index)."""
    if not pa.types.is_dictionary(col.type):
        return col
    return pa.array(col.to_pylist(), col.type.value_type)


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(cols=device_columns())
def test_dictionary_columns_answer_as_their_values(core, cols):
    """A dictionary-encoded column (its entries parsed once) gives what its values give."""
    a, b = _run(core, cols), _run(core, [_decoded(c) for c in cols])
    for name, x, y in zip(a._fields, a, b):
        assert x.dtype == y.dtype and np.array_equal(x, y), name
    plain = [A.column_of(_decoded(c), "x") for c in cols[1:]]
    for c, p in zip(cols[1:], plain):
        made = A.column_of(c, "x")
        assert made.kind == (A.DICT if pa.types.is_dictionary(c.type) else p.kind)
        for i in range(len(c)):
            assert A.cell_value(made, i, 6) == A.cell_value(p, i, 6)
            assert A.cell_text(made, i) == A.cell_text(p, i)


def test_a_dictionary_index_outside_its_entries_is_refused(core):
    """Under a missing cell an index may be anything (Arrow leaves it undefined); under a
    present one it must name an entry, in both cores, whatever its slice."""
    entries = pa.array(["10de", "8086"])
    ok = [A.column_of(pa.array(["a", "a", "b"]), "s")] + [A.column_of(pa.array(["10de"] * 3), "x")] * 5
    for itype, bad in [(pa.int8(), 2), (pa.int16(), -1), (pa.int64(), 1 << 40), (pa.uint32(), 5)]:
        dtype = np.dtype(itype.to_pandas_dtype())
        index = np.array([0, bad, 1], dtype)
        under_null = pa.Array.from_buffers(itype, 3, [pa.py_buffer(np.packbits([1, 0, 1], bitorder="little")),
                                                      pa.py_buffer(index)], null_count=1)
        col = A.column_of(pa.DictionaryArray.from_arrays(under_null, entries), "vendor")
        assert A.cell_value(col, 1, 4) == (A.CELL_MISSING, 0, 0)
        core.audit_rows(TABLES, ok[:1] + [col] + ok[2:], 7)  # fine: the bad index is under a null
        present = pa.Array.from_buffers(itype, 3, [None, pa.py_buffer(index)])
        col = A.column_of(pa.DictionaryArray.from_arrays(present, entries, safe=False), "vendor")
        with pytest.raises(InputError, match="dictionary index"):
            core.audit_rows(TABLES, ok[:1] + [col] + ok[2:], 7)
        with pytest.raises(InputError, match="dictionary index"):
            core.key_hashes(col, 1)
    long = np.zeros(2 * A._SLICE + 5, np.int32)
    long[-1] = 9  # past the first slices
    col = A.column_of(pa.DictionaryArray.from_arrays(pa.array(long), entries, safe=False), "x")
    assert not A._indices_in_range(col, 2) and A._indices_in_range(col, 10)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cols=device_columns())
def test_runs_cover_every_row_once(core, cols):
    runs = _run(core, cols)
    n = len(cols[0])
    assert runs.starts[0] == 0 if n else len(runs.starts) == 1
    assert runs.starts[-1] == n and (np.diff(runs.starts) > 0).all()
    # every row is counted somewhere: GPUs, companions, VFs and flagged rows by class
    assert int(runs.totals[:, C.R_INVALID].sum()) == len(runs.problem_rows)
    assert int(runs.counts.sum()) == int(runs.totals[:, C.R_CARDS].sum())
    assert len(runs.unsupported_rows) == int(runs.totals[:, C.R_UNSUPPORTED].sum())


@pytest.mark.parametrize("size", list(range(1, 26)))  # (an empty key names no server)
def test_neighbouring_keys_of_one_length_are_told_apart_at_every_byte(core, size):
    """Two server keys of ``size`` bytes are one server exactly where every byte is equal:
    a key against itself, and against the same key with any one byte changed (the first,
    the last, any in between)."""
    key = "".join(chr(ord("a") + k % 26) for k in range(size))
    for at in range(-1, size):
        other = key if at < 0 else key[:at] + ("#" if key[at] != "#" else "%") + key[at + 1:]
        for cols in ([pa.array([key, other, other, key], pa.string())],
                     [pa.array([key, other, other, key], pa.large_string())],
                     [pa.array([key, other, other, key], pa.string()).dictionary_encode()]):
            cols += [pa.array(["10de"] * 4), pa.array(["2bb5"] * 4), pa.array(["0302"] * 4),
                     pa.array([None] * 4, pa.string()), pa.array([None] * 4, pa.string())]
            runs = _run(core, cols)
            want = [0, 4] if at < 0 else [0, 1, 3, 4]
            assert runs.starts.tolist() == want, (size, at)


@pytest.mark.parametrize("cell,want", [
    ("10de", (A.CELL_OK, 0x10DE, 4)), (" 0x10DE\t", (A.CELL_OK, 0x10DE, 4)),
    ("[10de]", (A.CELL_OK, 0x10DE, 4)), ("[0x10de]", (A.CELL_OK, 0x10DE, 4)),
    ("", (A.CELL_MISSING, 0, 0)), ("   ", (A.CELL_MISSING, 0, 0)), (None, (A.CELL_MISSING, 0, 0)),
    ("10de1", (A.CELL_BAD, 0, 0)), ("0x", (A.CELL_BAD, 0, 0)), ("1g", (A.CELL_BAD, 0, 0)),
    ("\u00e9", (A.CELL_BAD, 0, 0)), ("1", (A.CELL_OK, 1, 1)),
])
def test_cell_rule(cell, want):
    assert A.cell_value(A.column_of(pa.array([cell], pa.string()), "x"), 0, 4) == want


def test_class_width_decides_the_subclass(core):
    """0300 and 030000 are both a VGA controller: four digits are base class and subclass."""
    cols = [pa.array(["a", "b", "c"]), pa.array(["10de"] * 3), pa.array(["27b0"] * 3),
            pa.array(["0300", "030000", "0003"]), pa.array([None] * 3, pa.string()),
            pa.array([None] * 3, pa.string())]
    runs = _run(core, cols)
    assert runs.totals[:, C.R_CARDS].tolist() == [1, 1, 0]  # "0003": base class 0, subclass 3


def test_problems_are_coded_by_their_first_field(core):
    cols = [pa.array(["a"] * 4), pa.array(["10de", "zz", None, "10de"]),
            pa.array([None, "27b0", "27b0", "27b0"]), pa.array(["0300"] * 4),
            pa.array(["10de", None, None, "10de"]), pa.array([None, None, None, "1"])]
    runs = _run(core, cols)
    codes = dict(zip(runs.problem_rows.tolist(), runs.problem_codes.tolist()))
    assert codes[0] == 1 * 4 + A.CELL_MISSING          # device missing
    assert codes[1] == 0 * 4 + A.CELL_BAD              # vendor 'zz'
    assert codes[2] == 0 * 4 + A.CELL_MISSING          # vendor missing
    assert 3 not in codes                               # a full subsystem: fine
    cols[5] = pa.array([None, None, None, None], pa.string())
    runs = _run(core, cols)
    assert dict(zip(runs.problem_rows.tolist(), runs.problem_codes.tolist()))[3] == 3 * 4 + A.CELL_PAIR


def test_null_servers_are_runs_of_their_own(core):
    cols = [pa.array(["a", None, None, "a"]), pa.array(["10de"] * 4), pa.array(["27b0"] * 4),
            pa.array(["0300"] * 4), pa.array([None] * 4, pa.string()), pa.array([None] * 4, pa.string())]
    assert _run(core, cols).starts.tolist() == [0, 1, 2, 3, 4]


def test_bad_arguments_are_typed_errors(core):
    ok = [A.column_of(pa.array(["a"]), "s")] + [A.column_of(pa.array(["10de"]), "x")] * 5
    with pytest.raises(InputError, match="six Columns"):
        core.audit_rows(TABLES, ok[:5], 7)
    with pytest.raises(InputError, match="length"):
        core.audit_rows(TABLES, ok[:5] + [A.column_of(pa.array(["1", "2"]), "x")], 7)
    with pytest.raises(InputError, match="server column"):
        core.audit_rows(TABLES, [A.absent(1)] + ok[1:], 7)
    broken = ok[1]._replace(offsets=np.array([0, 1000], dtype=np.int32))
    with pytest.raises(InputError, match="string buffers"):
        core.audit_rows(TABLES, ok[:1] + [broken] + ok[2:], 7)


@pytest.mark.parametrize("at", [1, A._SLICE - 1, A._SLICE, A._SLICE + 1, 2 * A._SLICE, 2 * A._SLICE + 2])
def test_offsets_that_go_back_anywhere_are_refused(core, at):
    """The offsets are checked a slice at a time: a step back at a slice's edge counts."""
    n = 2 * A._SLICE + 2
    good = np.arange(n + 1, dtype=np.int32)
    data = np.zeros(n + 1, np.uint8)
    ok = A.Column(A.STR32, n, data, good, None, None, 0)
    assert A._nondecreasing(good)
    back = good.copy()
    back[at] = back[at - 1] - 1 if back[at - 1] else 0
    back[at - 1] = max(back[at - 1], 1)
    assert not A._nondecreasing(back) and bool((back[1:] < back[:-1]).any())
    cols = [ok] * 6
    for field in (0, 2):  # the server and an ID column
        bad = cols[:field] + [ok._replace(offsets=back)] + cols[field + 1:]
        with pytest.raises(InputError, match="string buffers"):
            core.audit_rows(TABLES, bad, 7)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=0, max_size=300), st.integers(1, 8))
def test_nondecreasing_agrees_with_the_whole_column_check(values, step):
    a = np.array(values, dtype=np.int64)
    old, A._SLICE = A._SLICE, step  # small slices: every edge case within a short array
    try:
        assert A._nondecreasing(a) == (len(a) < 2 or not bool((a[1:] < a[:-1]).any()))
    finally:
        A._SLICE = old


def _misaligned(values, type_):
    """An Arrow array like ``pa.array(values, type_)`` whose buffers start at an odd byte (as
    buffers that came through pickle or IPC may: a Dask worker's partitions)."""
    plain = pa.array(values, type_)
    moved = []
    for buf in plain.buffers():
        if buf is None:
            moved.append(None)
            continue
        raw = bytearray(b"\0" + buf.to_pybytes())
        moved.append(pa.py_buffer(memoryview(raw)[1:]))
    arr = pa.Array.from_buffers(type_, len(plain), moved, null_count=plain.null_count)
    assert any(b is not None and b.address % 8 for b in arr.buffers())
    return arr


def test_buffers_at_any_byte_are_read_where_they_are(core):
    """Arrow buffers that came through pickle or IPC (a Dask worker's partitions) may start
    at any byte: the kernels read offsets, integers and indices at any alignment, without a
    copy; arrays that are not one buffer (strided) are refused."""
    values = ["a", "a", "b", None, "c"]
    cols = [_misaligned(values, pa.large_string()), _misaligned(["10de", "10de", "8086", "10de", "zz"], pa.string()),
            pa.DictionaryArray.from_arrays(_misaligned([0, 0, 1, None, 1], pa.int64()), pa.array(["27b0", "1533"])),
            _misaligned([0x0300, 0x0300, 0x0200, None, 0x0300], pa.int64()), pa.array([None] * 5, pa.string()),
            pa.array([None] * 5, pa.string())]
    made = [A.column_of(c, "x") for c in cols]
    assert not made[0].offsets.flags.aligned and not made[2].index.flags.aligned  # read in place
    plain = [pa.array(c.to_pylist(), c.type.value_type if pa.types.is_dictionary(c.type) else c.type) for c in cols]
    a, b = core.audit_rows(TABLES, made, 7), _run(core, plain)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert a.totals[:, C.R_CARDS].tolist() == [2, 0, 0, 0]
    assert np.array_equal(core.key_hashes(made[0], 3), core.key_hashes(A.column_of(plain[0], "s"), 3))
    raw = np.zeros(49, np.uint8)
    odd = raw[1:].view(np.int64)  # six int64 at an odd address
    odd[:] = [0, 1, 2, 3, 3, 4]  # the server column's own offsets
    assert not odd.flags.aligned and made[0].offsets.tolist() == odd.tolist()
    assert np.array_equal(core.audit_rows(TABLES, [made[0]._replace(offsets=odd)] + made[1:], 7).starts, a.starts)
    strided = np.repeat(odd, 2)[::2]
    assert strided.tolist() == odd.tolist() and not strided.flags.c_contiguous
    for bad in (made[0]._replace(offsets=strided), A.Column(A.INT, 5, None, None, np.repeat(odd, 2)[:10:2], None, 0)):
        with pytest.raises(InputError):
            core.audit_rows(TABLES, [bad] + made[1:], 7)


def test_merge_runs_follows_the_rollup(core):
    """Merging runs gives what rolling the rows up per server at once gives."""
    rng = np.random.default_rng(3)
    n = 5000
    status = rng.choice([0, 1, 1, 2, 3, 4, 5], n).astype(np.uint8)
    card = np.where(status == 1, rng.integers(0, 7, n), -1).astype(np.int16)
    slices = np.where(status == 1, 4, 0).astype(np.uint16)
    server = np.sort(rng.integers(0, 300, n))
    new = (rng.random(n - 1) < 0.3) | (server[1:] != server[:-1])  # runs inside servers
    run = np.concatenate(([0], np.cumsum(new)))
    n_runs = int(run[-1]) + 1
    totals, counts = core.rollup(status, card, slices, run, n_runs, 7)
    run_server = np.zeros(n_runs, dtype=np.int64)
    run_server[run] = server
    got = core.merge_runs(run_server, totals, counts, 300)
    want = core.rollup(status, card, slices, server, 300, 7)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(keys=st.one_of(
    st.lists(st.one_of(st.none(), st.text(max_size=40)), max_size=60).map(lambda v: pa.array(v, pa.string())),
    st.lists(st.one_of(st.none(), st.binary(max_size=40)), max_size=60).map(
        lambda v: pa.array(v, pa.large_binary())),
    st.lists(st.one_of(st.none(), st.integers(-2**63, 2**63 - 1)), max_size=60).map(
        lambda v: pa.array(v, pa.int64()))),
    seed=st.integers(0, 2**64 - 1), cut=st.integers(0, 3))
def test_key_hashes_compiled_equals_twin_and_equal_keys_hash_equal(compiled_core, keys, seed, cut):
    keys = keys.slice(min(cut, len(keys)))
    col = A.column_of(keys, "server")
    a, b = compiled_core.key_hashes(col, seed), twin.key_hashes(col, seed)
    assert a.dtype == np.uint64 and np.array_equal(a, b)
    values = keys.to_pylist()
    for i, x in enumerate(values):
        if x is None:
            assert a[i] == 0
        for j in range(i):
            if values[j] == x and x is not None:
                assert a[i] == a[j]


def test_key_hashes_tell_keys_and_seeds_apart(core):
    keys = pa.array([f"srv{i:07d}" for i in range(2000)] + ["", "\x00", "\x00\x00", "a" * 8, "a" * 9])
    h = core.key_hashes(A.column_of(keys, "s"), 1)
    assert len(set(h.tolist())) == len(keys)  # no collision among these (length is mixed in)
    assert not np.array_equal(h, core.key_hashes(A.column_of(keys, "s"), 2))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), seed=st.integers(0, 2**64 - 1))
def test_key_hashes_of_a_dictionary_are_its_values(core, data, seed):
    values = data.draw(st.lists(st.one_of(st.none(), st.sampled_from(["a", "b", "", "a-much-longer-key"])),
                                max_size=40))
    col = data.draw(dictionary_array(values, pa.string()))
    got = core.key_hashes(A.column_of(col, "server"), seed)
    assert np.array_equal(got, core.key_hashes(A.column_of(pa.array(values, pa.string()), "server"), seed))


def test_key_hashes_arguments(core):
    with pytest.raises(InputError, match="Column with cells"):
        core.key_hashes(A.absent(3), 0)
    with pytest.raises(InputError, match="seed"):
        core.key_hashes(A.column_of(pa.array(["a"]), "s"), -1)
    broken = A.column_of(pa.array(["a"]), "s")._replace(offsets=np.array([0, 99], dtype=np.int32))
    with pytest.raises(InputError, match="string buffers"):
        core.key_hashes(broken, 0)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=st.lists(st.lists(st.integers(0, 40), max_size=300), max_size=6))
def test_keyset_compiled_equals_twin(compiled_core, batches):
    """Hashes from a small range repeat often, within a batch and across batches; the set
    grows past its first capacity."""
    a, b = compiled_core.KeySet(), twin.KeySet()
    base = 0
    first: dict[int, int] = {}
    for values in batches:
        h = (np.array(values, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)) if values else \
            np.empty(0, np.uint64)
        fa, pa_ = a.add(h, base)
        fb, pb = b.add(h, base)
        assert np.array_equal(fa, fb) and np.array_equal(pa_, pb)
        want = [(i, first.setdefault(int(v), base + i)) for i, v in enumerate(h.tolist())]
        assert [(i, p) for i, p in want if p != base + i] == list(zip(fa.tolist(), pa_.tolist()))
        base += len(values)
    assert len(a) == len(b) == len(first)


def test_keyset_grows_and_checks_arguments(core):
    s = core.KeySet()
    h = np.arange(1, 100_001, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    found, _ = s.add(h, 0)
    assert len(found) == 0 and len(s) == 100_000
    found, prior = s.add(h[::-1].copy(), 100_000)
    assert len(found) == 100_000 and prior.tolist() == list(range(99_999, -1, -1))
    with pytest.raises(InputError, match="uint64"):
        s.add(np.arange(3), 0)
    with pytest.raises(InputError, match="base"):
        s.add(h[:1], -1)


TEXT_TYPES = [pa.string(), pa.large_string(), pa.binary(), pa.large_binary()]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(st.one_of(st.text(max_size=6), st.sampled_from(["a", "ab", "b", "", "\x00", "é", "\uffff"])),
                       max_size=40),
       typ=st.sampled_from(TEXT_TYPES), cut=st.integers(0, 3), sort=st.booleans(), data=st.data())
def test_text_rising_and_take_text_compiled_equal_twin_and_arrow(compiled_core, values, typ, cut, sort, data):
    """``text_rising`` is Arrow's ``greater`` on each pair of neighbours, all true (bytes
    compared unsigned, a prefix first: Unicode text as its UTF-8); ``take_text`` is Arrow's
    ``take`` (an index below 0 an empty cell here, missing there); compiled and twin alike,
    on sliced arrays too."""
    import pyarrow.compute as pc

    if sort:
        values = sorted(set(values), key=lambda v: v.encode())
    raw = [v.encode() for v in values] if pa.types.is_binary(typ) or pa.types.is_large_binary(typ) else values
    keys = pa.array(raw, typ).slice(min(cut, len(raw)))
    col = A.column_of(keys, "server")
    n = len(keys)
    want = n < 2 or bool(pc.all(pc.greater(keys.slice(1), keys.slice(0, n - 1))).as_py())
    assert compiled_core.text_rising(col) == twin.text_rising(col) == want
    idx = np.array(data.draw(st.lists(st.integers(-2, max(n - 1, -1)), max_size=30)), dtype=np.int64)
    got, alike = compiled_core.take_text(col, idx), twin.take_text(col, idx)
    assert all(np.array_equal(a, b) and a.dtype == b.dtype for a, b in zip(got, alike))
    # the outputs made by a caller's allocator (Arrow's pool, as arrowfn.take_text asks)
    # hold the same
    made = []

    def empty(n, dtype):
        made.append(pooled_empty(n, dtype))
        return made[-1]
    for kernel in (compiled_core, twin):
        made.clear()
        pooled = kernel.take_text(col, idx, empty)
        assert all(np.array_equal(a, b) and a.dtype == b.dtype for a, b in zip(pooled, got))
        assert [a is b for a, b in zip(pooled, made)] == [True, True]
    off, body = got
    assert off.dtype == np.int64 and body.dtype == np.uint8 and len(off) == len(idx) + 1
    taken = pc.take(keys, pa.array(idx, mask=idx < 0)).to_pylist()
    as_bytes = [b"" if v is None else (v if isinstance(v, bytes) else v.encode()) for v in taken]
    assert [body[off[k]:off[k + 1]].tobytes() for k in range(len(idx))] == as_bytes


@pytest.mark.parametrize("bad", [
    lambda: A.column_of(pa.array(["a", None]), "s"),          # a missing cell
    lambda: A.column_of(pa.array([1, 2]), "s"),               # integers
    lambda: A.column_of(pa.array(["a", "b"]).dictionary_encode(), "s"),
    lambda: "not a column",
])
def test_text_kernels_refuse_what_they_do_not_read(core, bad):
    with pytest.raises(InputError):
        core.text_rising(bad())
    with pytest.raises(InputError):
        core.take_text(bad(), np.array([0]))


@pytest.mark.parametrize("empty", [
    lambda n, dtype: np.empty(n + 1, dtype),                   # too long
    lambda n, dtype: np.empty(max(n - 1, 0), dtype),           # too short
    lambda n, dtype: np.empty(n, np.int32),                    # another type
    lambda n, dtype: np.empty((n, 1), dtype),                  # 2-D
    lambda n, dtype: np.empty(2 * n, dtype)[::2],              # not contiguous
    lambda n, dtype: np.frombuffer(bytes(n * np.dtype(dtype).itemsize), dtype),  # read-only
    lambda n, dtype: bytearray(n * np.dtype(dtype).itemsize),  # not an array
])
def test_take_text_refuses_outputs_it_cannot_write_into(core, empty):
    """An allocator's arrays are checked before either kernel writes a byte into them."""
    col = A.column_of(pa.array(["ab", "c"]), "s")
    with pytest.raises(InputError, match="empty"):
        core.take_text(col, np.array([1, 0, 1]), empty)


@pytest.mark.parametrize("indices", [np.array([2]), np.array([[0]]), np.array([0.5]), np.array([1 << 40])])
def test_take_text_refuses_indices_past_the_cells(core, indices):
    with pytest.raises(InputError):
        core.take_text(A.column_of(pa.array(["a", "b"]), "s"), indices)
