"""gpuclass.audit.arrowfn against what it stands in for: pyarrow.compute's functions and
pa.array, on the same inputs (hypothesis), the same answers and the same error types; and
the device engine's path imports neither pyarrow.compute nor numpy.ma, and a sorted
table's not even pyarrow._compute (the core orders and gathers its text keys)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")

from hypothesis import given, settings, strategies as st  # noqa: E402

from gpuclass.audit import arrowfn as af  # noqa: E402

DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32, np.uint64, np.float64, np.bool_]
TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=8)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(DTYPES), st.lists(st.integers(-300, 300), max_size=70), st.data())
def test_from_numpy_is_pa_array(dtype, values, data):
    arr = np.array(values).astype(dtype)
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=len(arr), max_size=len(arr))), dtype=bool)
    got = af.from_numpy(arr)
    assert got.equals(pa.array(arr)) and got.type == pa.array(arr).type
    got.validate(full=True)
    masked = af.from_numpy(arr, mask=mask)
    masked.validate(full=True)
    assert masked.equals(pa.array(arr, mask=mask)) and masked.null_count == int(mask.sum())
    # a strided view is read as its values, not its memory
    assert af.from_numpy(arr[::2]).equals(pa.array(arr[::2]))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(st.none(), TEXT), max_size=40), st.lists(st.integers(-5, 45), max_size=40))
def test_take_is_pc_take(values, indices):
    arr = pa.array(values, pa.string())
    idx = np.array(indices, dtype=np.int64)

    def outcome(fn):
        try:
            return fn().to_pylist()
        except Exception as exc:  # the same error type, or the same answer
            return type(exc)
    assert outcome(lambda: af.take(arr, idx)) == outcome(lambda: pc.take(arr, pa.array(idx)))
    dict_arr = arr.dictionary_encode()
    assert outcome(lambda: af.take(dict_arr, idx)) == outcome(lambda: pc.take(dict_arr, pa.array(idx)))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(st.none(), TEXT), min_size=0, max_size=30))
def test_rising_fill_null_and_cast_are_pc(values):
    arr = pa.array(values, pa.string())
    pc_rising = len(arr) < 2 or (arr.null_count == 0 and pc.all(pc.greater(arr.slice(1), arr.slice(0, len(arr) - 1))).as_py())
    assert af.rising(arr) == bool(pc_rising)
    assert af.fill_null(arr, "").equals(pc.fill_null(arr, ""))
    assert af.cast(arr, pa.large_string()).equals(pc.cast(arr, pa.large_string()))
    assert af.cast(arr.dictionary_encode(), pa.string()).equals(pc.cast(arr.dictionary_encode(), pa.string()))
    assert af.is_null_mask(arr).tolist() == [v is None for v in values]
    if len(arr):
        assert af.call("greater", arr[0], arr[-1]).equals(pc.greater(arr[0], arr[-1]))


TEXT_TYPES = [pa.string(), pa.large_string(), pa.binary(), pa.large_binary()]
KEYS = st.one_of(TEXT, st.sampled_from(["", "a", "ab", "b", "\x00", "é", "\uffff", "\U0010ffff"]))


def _typed(values, typ):
    if pa.types.is_binary(typ) or pa.types.is_large_binary(typ):
        values = [None if v is None else v.encode() for v in values]
    return pa.array(values, typ)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), KEYS), max_size=30), st.sampled_from(TEXT_TYPES),
       st.lists(st.integers(-3, 33), max_size=30), st.integers(0, 2), st.booleans())
def test_take_text_is_pc_take(values, typ, indices, cut, nulls):
    """The core's gather of text (an index below 0 taking a missing value) is Arrow's
    take: the same values, type, validity and error type (an index past the end), on
    sliced arrays, with or without missing values (these go to Arrow's kernel)."""
    if not nulls:
        values = [v for v in values if v is not None]
    arr = _typed(values, typ).slice(cut)
    idx = np.array(indices, dtype=np.int64)

    def outcome(fn):
        try:
            got = fn()
        except Exception as exc:
            return type(exc)
        got.validate(full=True)
        return got.type, got.null_count, got.to_pylist()
    assert outcome(lambda: af.take_text(arr, idx)) == outcome(lambda: pc.take(arr, pa.array(idx, mask=idx < 0)))


@settings(max_examples=200, deadline=None)
@given(st.lists(KEYS, max_size=25), st.sampled_from(TEXT_TYPES), st.booleans(), st.integers(0, 2))
def test_rising_and_greater_equal_are_pcs_on_text(values, typ, sort, cut):
    """Text keys are ordered by their bytes (UTF-8 for text), as Arrow's greater and
    equal order them: the whole array (neighbours) and any two values."""
    if sort:
        values = sorted(set(values), key=lambda v: v.encode())
    arr = _typed(values, typ).slice(cut)
    n = len(arr)
    want = n < 2 or bool(pc.all(pc.greater(arr.slice(1), arr.slice(0, n - 1))).as_py())
    assert af.rising(arr) == want
    for i in range(min(n, 6)):
        for j in range(min(n, 6)):
            assert af.greater_equal(arr[i], arr[j]) == (pc.greater(arr[i], arr[j]).as_py(),
                                                       pc.equal(arr[i], arr[j]).as_py())


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(-2**63, 2**63 - 1), max_size=20),
       st.sampled_from([pa.int64(), pa.int32(), pa.uint64(), pa.int8(), pa.float64()]), st.booleans())
def test_rising_and_greater_equal_are_pcs_on_numbers(values, typ, sort):
    def fits(v):
        if pa.types.is_floating(typ):
            return abs(v) < 2**53
        if pa.types.is_unsigned_integer(typ):
            return 0 <= v < 1 << typ.bit_width
        return -(1 << (typ.bit_width - 1)) <= v < 1 << (typ.bit_width - 1)
    values = [v for v in values if fits(v)]
    if sort:
        values = sorted(set(values))
    arr = pa.array(values, typ)
    n = len(arr)
    want = n < 2 or bool(pc.all(pc.greater(arr.slice(1), arr.slice(0, n - 1))).as_py())
    assert af.rising(arr) == want
    if n:
        assert af.greater_equal(arr[0], arr[-1]) == (pc.greater(arr[0], arr[-1]).as_py(),
                                                     pc.equal(arr[0], arr[-1]).as_py())


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.integers(0, 19), st.lists(TEXT, min_size=1, max_size=3), max_size=20),
       st.integers(0, 20))
def test_a_problem_column_with_its_missing_text_is_the_filled_column(problems, extra):
    """``_problem_column(..., missing="")`` (built without missing values) is the column
    with its missing values filled by Arrow."""
    from gpuclass.audit.results.table import _problem_column

    n = 20 + extra
    plain = _problem_column(problems, n)
    assert plain.null_count == n - len(problems)
    filled = _problem_column(problems, n, missing="")
    filled.validate(full=True)
    assert filled.type == pa.string() and filled.null_count == 0
    assert filled.equals(pc.fill_null(plain, ""))


def test_cast_that_does_not_fit_raises_as_pc():
    arr = pa.array([1, 300], pa.int64())
    with pytest.raises(pa.ArrowInvalid):
        pc.cast(arr, pa.int8())
    with pytest.raises(pa.ArrowInvalid):
        af.cast(arr, pa.int8())


def test_parquet_to_parquet_imports_neither_pyarrow_compute_nor_numpy_ma(tmp_path):
    """A sorted Parquet table of text IDs audited to Parquet by the command (whose process
    keeps pandas out), in a fresh interpreter, never imports pyarrow.compute (45-60 ms) nor
    even pyarrow._compute (Arrow's kernels' registry: about 7 MiB),
    numpy.ma (20-30 ms), nor pyarrow.parquet and the filesystems it imports (15-20 ms,
    9 MiB: the reader opens pyarrow's ParquetReader, the output is gpuclass's own writer)."""
    import pyarrow.parquet as pq

    rows = [(f"s{k:04d}", "10de", "27b0" if k % 3 else "1e30", "", "", "0300") for k in range(3000)]
    rows += [("s2999", "zz", "27b0", "", "", "0300"), ("s3000", "10de", "2bb5", "", "", "0302")]
    names = ("server", "vendor", "device", "subvendor", "subdevice", "class")
    pq.write_table(pa.table({n: [r[i] for r in rows] for i, n in enumerate(names)}), tmp_path / "d.parquet",
                   row_group_size=700)
    code = ("import sys\n"
            "from gpuclass.audit.ingest import parquet\n"
            "parquet._BATCH_ROWS = 500\n"
            "from gpuclass.cli import console\n"
            f"sys.argv = ['gpuclass', 'audit', {str(tmp_path / 'd.parquet')!r}, '-o', {str(tmp_path / 'o.parquet')!r}]\n"
            "code = console()\n"
            "print(code, 'pyarrow.compute' in sys.modules, 'numpy.ma' in sys.modules,\n"
            "      'pyarrow.parquet' in sys.modules, 'pyarrow.fs' in sys.modules, 'pyarrow._compute' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["1", "False", "False", "False", "False", "False"]  # 1: a server is flagged (the bad vendor)
    assert pq.read_table(tmp_path / "o.parquet").num_rows == 3001
