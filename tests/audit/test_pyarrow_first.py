"""The command's process imports pyarrow before numpy (``ingest.parquet.PYARROW_BEFORE_NUMPY``,
set by ``gpuclass audit``): pyarrow then starts without its numpy support, and the audit
converts through buffers (``contract.audit.numpy_values``, ``arrowfn.to_numpy``).  The
answers are those of a process that loaded numpy first, where pyarrow has its numpy
support: output files byte for byte, exit codes, messages."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from helpers import outside_tree  # noqa: E402

from gpuclass._native import numpy_dtype, numpy_values  # noqa: E402
from gpuclass.audit.arrowfn import from_numpy, to_numpy  # noqa: E402

# The command in a process of its own; "numpy-first" loads numpy before anything else (as
# a user's process, or a command that reads no Parquet, has it).  ``batch`` rows a batch.
_RUN = """import sys
mode, batch, *argv = sys.argv[1:]
if mode == "numpy-first":
    import numpy
from gpuclass.audit.ingest import parquet
parquet._BATCH_ROWS = int(batch)
from gpuclass.cli import console
sys.argv = ["gpuclass", *argv]
code = console()
import pyarrow.lib
print("\\n" + repr((code, pyarrow.lib.np is None)), end="")
"""


def _command(mode: str, *argv: str, batch: int = 1 << 18) -> tuple[int, bool, str, str]:
    proc = subprocess.run([sys.executable, "-c", _RUN, mode, str(batch), *argv], capture_output=True,
                          text=True, cwd=outside_tree(), timeout=120)
    head, _, last = proc.stdout.rpartition("\n")
    assert last.startswith("("), proc.stderr
    code, numpyless = eval(last)
    return code, numpyless, head, proc.stderr


def _both(tmp_path, src, fmt: str, batch: int) -> None:
    """The audit of ``src`` into ``fmt`` both ways: the same exit code, message and bytes."""
    said, outs = [], []
    for mode in ("pyarrow-first", "numpy-first"):
        out = tmp_path / f"{mode}.{fmt}"
        code, numpyless, stdout, stderr = _command(mode, "audit", str(src), "-o", str(out), "--format", fmt,
                                                   batch=batch)
        assert numpyless == (mode == "pyarrow-first"), stderr
        said.append((code, stdout, stderr.replace(str(out), "OUT")))
        outs.append(out.read_bytes() if out.exists() else None)
    assert said[0] == said[1]
    assert outs[0] == outs[1]


def test_a_parquet_audit_starts_pyarrow_without_numpy_and_answers_alike(tmp_path):
    rows = {"server": ["a", "a", "b", "c", None, "b"], "vendor": ["10de", "10de", "10de", "8086", "10de", "zz"],
            "device": ["27b0", "22bc", "2bb5", "1533", "1e30", "1"],
            "class": ["0300", "0403", "0302", "0200", "0300", "0300"]}
    src = tmp_path / "in.parquet"
    pq.write_table(pa.table(rows), src)
    for fmt in ("parquet", "csv", "json", "ndjson"):
        _both(tmp_path, src, fmt, 1 << 18)
    _both(tmp_path, src, "parquet", 2)  # a batch of two rows: servers across batches


def test_a_dictionary_index_outside_its_entries_is_the_same_error():
    """The reader that runs before numpy bounds the indices with Arrow's check: the same
    refusal, in the same words, as numpy's min and max give; a good column passes both."""
    from gpuclass.audit.ingest.parquet import check_batch

    typ = pa.dictionary(pa.int32(), pa.string())
    for index, refused in (([0, 5, 1], True), ([0, -1, 1], True), ([1, 0, 1], False)):
        col = pa.DictionaryArray.from_buffers(typ, 3, [None, pa.py_buffer(np.array(index, np.int32))],
                                              dictionary=pa.array(["10de", "8086"]))
        batch = pa.record_batch({"server": pa.array(["a", "b", "c"]), "vendor": col})
        errors = []
        for with_numpy in (True, False):
            try:
                check_batch(batch, with_numpy=with_numpy)
                errors.append(None)
            except pa.ArrowInvalid as exc:
                errors.append(str(exc))
        assert errors[0] == errors[1]
        assert errors[0] == ("column 'vendor': a dictionary index outside its 2 entries" if refused else None)


_SERVERS = st.sampled_from(["s1", "s2", "s3", "rack-a/node-01", "", " ", None, "\u00f1odo"])
_VENDORS = st.sampled_from(["10de", "10DE", "0x10de", "8086", "1002", "", None, "zz", "10de1"])
_DEVICES = st.sampled_from(["27b0", "2bb5", "26b1", "1b80", "1b06", "22bc", "1533", "0", None, "[27b0]"])
_CLASSES = st.sampled_from(["0300", "0302", "0403", "0200", "030000", "03", None, "x"])
_SUBS = st.sampled_from([None, "10de", "1028", "17aa", "bad!"])


@st.composite
def device_tables(draw):
    n = draw(st.integers(0, 40))
    cols = {"server": draw(st.lists(_SERVERS, min_size=n, max_size=n)),
            "vendor": draw(st.lists(_VENDORS, min_size=n, max_size=n)),
            "device": draw(st.lists(_DEVICES, min_size=n, max_size=n)),
            "class": draw(st.lists(_CLASSES, min_size=n, max_size=n))}
    if draw(st.booleans()):
        cols["subvendor"] = draw(st.lists(_SUBS, min_size=n, max_size=n))
        cols["subdevice"] = draw(st.lists(_SUBS, min_size=n, max_size=n))
    table = pa.table(cols)
    if n and draw(st.booleans()):  # IDs as integers
        ints = [None if v is None or not v.isalnum() or not all(c in "0123456789abcdefABCDEF" for c in v)
                else int(v, 16) for v in cols["device"]]
        table = table.set_column(table.schema.get_field_index("device"), "device", pa.array(ints, pa.int64()))
    if draw(st.booleans()):
        table = table.sort_by([("server", "ascending")])
    return table, draw(st.sampled_from([True, False])), draw(st.sampled_from([1, 3, 64])), \
        draw(st.sampled_from([2, 5, 1 << 18])), draw(st.sampled_from(["parquet", "csv", "json"]))


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(case=device_tables())
def test_any_device_table_answers_alike_either_way(tmp_path, case):
    """Tables of every shape the engine takes apart (sorted or not, servers repeated
    anywhere, missing and malformed cells, integer IDs, subsystem columns), written with
    and without dictionaries in row groups of 1 to 64 rows, read in batches of 2 rows up:
    the same output either way."""
    table, dictionary, group, batch, fmt = case
    src = tmp_path / "in.parquet"
    pq.write_table(table, src, use_dictionary=dictionary, row_group_size=group)
    _both(tmp_path, src, fmt, batch)


_TYPES = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64(),
          pa.float16(), pa.float32(), pa.float64(), pa.bool_()]


@settings(max_examples=200, deadline=None)
@given(typ=st.sampled_from(_TYPES), values=st.lists(st.integers(0, 100), max_size=70),
       cut=st.tuples(st.integers(0, 9), st.integers(0, 9)), gaps=st.lists(st.booleans(), max_size=70))
def test_numpy_values_are_arrows_own_conversion(typ, values, cut, gaps):
    """``numpy_values`` (read from the buffers) gives what pyarrow's ``to_numpy`` gives, for
    every number type and booleans, sliced anywhere; under a missing value, what lies
    there; ``to_numpy`` of a column without missing values, chunked or not, the same."""
    py = [bool(v % 2) if typ == pa.bool_() else v for v in values]
    mask = [g for g, _ in zip(gaps, py)] + [False] * (len(py) - len(gaps))

    def arrow(vals, missing=None):  # (half floats come from numpy's)
        if typ == pa.float16():
            return pa.array(np.array(vals, np.float16), typ, mask=None if missing is None else np.array(missing, bool))
        return pa.array(vals if missing is None else [None if m else v for v, m in zip(vals, missing)], typ)

    arr = arrow(py, mask)
    lo, hi = cut
    part = arr.slice(min(lo, len(arr)), max(0, len(arr) - lo - hi))
    got = numpy_values(part)
    want = part.fill_null(False if typ == pa.bool_() else 0).to_numpy(zero_copy_only=False)
    present = ~np.asarray(part.is_null(), dtype=bool)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got[present], want[present])
    if typ != pa.bool_():
        assert numpy_dtype(typ) == got.dtype
    full = arrow(py)
    chunked = pa.chunked_array([full.slice(0, len(full) // 2), full.slice(len(full) // 2)], typ)
    for col in (full, chunked, pa.chunked_array([full])):
        a, b = to_numpy(col), (col.to_numpy() if isinstance(col, pa.ChunkedArray)
                               else col.to_numpy(zero_copy_only=False))
        assert a.dtype == b.dtype and np.array_equal(a, b)


def test_from_numpy_types_without_pyarrows_numpy_support():
    for dtype in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
                  np.float16, np.float32, np.float64):
        arr = from_numpy(np.array([1, 2, 3], dtype))
        assert arr.type == pa.from_numpy_dtype(np.dtype(dtype)) and arr.to_pylist() == [1, 2, 3]


def test_the_version_is_read_from_pyarrows_files():
    from gpuclass.audit.ingest.parquet import _pyarrow_version

    assert _pyarrow_version() == tuple(int(x) for x in pa.__version__.split(".")[:2])


def test_a_pyarrow_before_16_loads_numpy_first(tmp_path):
    """pyarrow before 16 cannot start without numpy: there the command imports both as
    usual (shown by telling it the installed one is 15)."""
    src = tmp_path / "in.parquet"
    pq.write_table(pa.table({"server": ["a"], "vendor": ["10de"], "device": ["27b0"], "class": ["0300"]}), src)
    code = _RUN.replace("parquet._BATCH_ROWS = int(batch)",
                        "parquet._BATCH_ROWS = int(batch)\nparquet._pyarrow_version = lambda: (15, 0)")
    proc = subprocess.run([sys.executable, "-c", code, "pyarrow-first", "100", "audit", str(src), "-o",
                           str(tmp_path / "out.parquet")], capture_output=True, text=True, cwd=outside_tree(),
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.rpartition("\n")[2] == repr((0, False))
    assert pq.read_table(tmp_path / "out.parquet")["slices"].to_pylist() == [4]


def test_a_half_float_column_reads_as_its_float32_twin():
    """Every float width is read over its buffer alike: whole values as integers, others
    malformed, NaN and missing values missing."""
    from gpuclass._native import key_column

    values = np.array([16, 2.5, np.nan, 4096, 0], np.float16)
    mask = np.array([False, False, False, False, True])
    half = key_column(pa.array(values, pa.float16(), mask=mask), "device")
    single = key_column(pa.array(values.astype(np.float32), pa.float32(), mask=mask), "device")
    assert half.ints.tolist() == single.ints.tolist() == [16, -1, -1, 4096, -1]
    assert (half.valid is None) == (single.valid is None)
    if half.valid is not None:
        assert half.valid.tolist() == single.valid.tolist()
