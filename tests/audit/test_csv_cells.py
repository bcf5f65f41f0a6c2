"""Device-table CSV read by the core's cell splitter (``csv_cells``, compiled and twin): the
same batches, errors and line numbers as the csv module's rows (``CsvRows``, one line at a
time), for any text; and the pair itself agreeing, errors included."""

from __future__ import annotations

import csv
import io

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

import gpuclass._native as native
from gpuclass._native import twin
from gpuclass.audit.ingest import columns, text
from gpuclass.audit.ingest.csv import BadCsvRow, CsvRows, _device_row, device_batches
from gpuclass.audit.ingest.text import Lines, Reader
from gpuclass.errors import InputError

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

HEADER = b"server,vendor,device,note,class\n"  # no field longer than the smallest limit below
# what a device table's lines are made of, and what goes wrong in them
PIECES = ["srv1", "10de", "2bb5", "0300", ",", ",", ",", '"', '""', "\n", "\r\n", "\r", " ", "\t", "é",
          "\u3000", "\x1c", "\x00", "\x85", "a" * 40, ",,", '"x,y"', '"10de"']


TEXTS = st.one_of(
    st.lists(st.sampled_from(PIECES), max_size=80).map(lambda p: "".join(p).encode()),
    st.lists(st.lists(st.sampled_from(["srv1", "s\u00e9rv", "10de", "27b0", "0300", '"a,b"', '""', " "]),
                      min_size=4, max_size=6).map(lambda c: ",".join(c)), max_size=40)
    .map(lambda rows: "\n".join(rows).encode()),
    st.binary(max_size=200),
)


def reference(data: bytes, server_column=None):
    """Every row as the csv module reads it, a line at a time: the columns and the errors
    (by row of the whole table)."""
    table = CsvRows(Reader(io.BytesIO(data)))
    rows = iter(table)
    header = next(rows)
    assume(not isinstance(header, BadCsvRow))  # a header the csv module cannot read is refused
    table.one_line = True
    idx = columns.device_columns(header, server_column, "t")
    present = [f for f in columns.DEVICE_FIELDS if idx[f] is not None]
    cols: dict = {f: [] for f in present}
    errors: dict = {}
    for k, cells in enumerate(rows):
        _device_row(cells, k, len(header), idx, present, cols, errors)
    return cols, errors


def batched(data: bytes, server_column=None):
    table = CsvRows(Reader(io.BytesIO(data)))
    header = next(iter(table))
    table.one_line = True
    cols: dict = {}
    errors: dict = {}
    base = 0
    sizes = []
    for batch, fields, errs in device_batches(table, header, server_column, "t"):
        batch.validate(full=True)
        sizes.append(batch.num_rows)
        for name, col in zip(batch.schema.names, batch.columns):
            assert col.type == pa.string()
            cols.setdefault(name, []).extend(col.to_pylist())
        errors.update({base + k: v for k, v in errs.items()})
        base += batch.num_rows
    return cols, errors, sizes


@pytest.fixture(params=["compiled", "twin"])
def kernel(request, monkeypatch):
    if request.param == "compiled":
        if not native.core.IS_COMPILED:
            pytest.skip("the compiled core is not loaded (GPUCLASS_NO_EXTENSIONS)")
        return native.core
    monkeypatch.setattr(native, "core", twin)
    return twin


@SETTINGS
@given(body=TEXTS, read_size=st.sampled_from([1, 3, 16, 4 << 20]), batch=st.sampled_from([1, 2, 5, 65536]),
       limit=st.sampled_from([6, 131072]))
@example(body=b'a,10de,27b0,x,0300\n"b",10de,"27b0",,0300\r\n\n  \n"c,10de,1,2,3\nd,1,2,3\n',
         read_size=4 << 20, batch=2, limit=131072)
def test_batches_equal_the_csv_modules_rows(kernel, monkeypatch, body, read_size, batch, limit):
    monkeypatch.setattr(text, "READ_SIZE", read_size)
    monkeypatch.setattr(columns, "BATCH_ROWS", batch)
    before = csv.field_size_limit(limit)
    try:
        data = HEADER + body
        want_cols, want_errors = reference(data)
        got_cols, got_errors, sizes = batched(data)
    finally:
        csv.field_size_limit(before)
    rows = len(want_cols["server"])
    assert got_cols == (want_cols if rows else {})
    assert got_errors == want_errors
    assert sizes == [batch] * (rows // batch) + ([rows % batch] if rows % batch else [])


def test_a_plain_table_is_split_by_the_core_alone(kernel, monkeypatch):
    """No line of a plain table but its header goes to the csv module."""
    calls = []
    real = CsvRows.line_row
    monkeypatch.setattr(CsvRows, "line_row", lambda self, at, line: calls.append(at) or real(self, at, line))
    rows = b"".join(b'"srv%d","10de","2bb5","x","030000"\r\n' % i for i in range(1000))
    cols, errors, _ = batched(HEADER + rows)
    assert calls == [1] and errors == {}  # the header alone
    assert cols["device"] == ["2bb5"] * 1000 and cols["server"][999] == "srv999"


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.lists(st.sampled_from(["a", "bb", "\n", "\n\n", "\r", "é", "\u2028", "\xff", "ccccccc"]), max_size=60)
       .map(lambda p: "".join(p).encode("utf-8").replace(b"\xc3\xbf", b"\xff")),
       read_size=st.sampled_from([1, 2, 3, 7, 64]), cap=st.sampled_from([None, 1, 3, 5, 10]))
def test_pieces_and_lines_are_the_text_cut_at_line_ends(monkeypatch, raw, read_size, cap):
    """Reader.lines: the decoded text cut after each ``\n``, a line over the cap a
    LongLine, whatever the read size; Reader.pieces: whole lines each (a LongLine alone),
    the same lines once cut."""
    monkeypatch.setattr(text, "READ_SIZE", read_size)
    decoded = raw.decode("utf-8-sig", errors="replace")
    want = [line for line in decoded.split("\n")]
    want = [w + "\n" for w in want[:-1]] + ([want[-1]] if want[-1] else [])
    limit = text.MAX_RECORD if cap is None else cap
    got = list(Reader(io.BytesIO(raw)).lines(cap))
    assert [str(g) if len(w) <= limit else w for g, w in zip(got, want)] == want
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert isinstance(g, text.LongLine) == (len(w) > limit)
        if isinstance(g, text.LongLine):  # its size, and its start as far as read when it passed the cap
            assert g.size == len(w) and w.startswith(str(g)) and 0 < len(str(g)) <= 200
    pieces = list(Reader(io.BytesIO(raw)).pieces(cap))
    assert all(p.endswith("\n") for p in pieces[:-1] if not isinstance(p, text.LongLine))
    assert [q for p in pieces for q in (list(Lines(iter([p]))) if not isinstance(p, text.LongLine) else [p])] == got


# -- the kernel pair --------------------------------------------------------------------

CELLS = st.tuples(st.binary(max_size=120), st.integers(0, 130), st.integers(1, 6), st.integers(0, 20),
                  st.integers(0, 12))


@SETTINGS
@given(args=CELLS, wanted=st.lists(st.integers(0, 6), max_size=4))  # out of range, twice: refused alike
def test_compiled_and_twin_split_alike(compiled_core, args, wanted):
    data, pos, width, limit, room = args
    results = []
    for mod in (compiled_core, twin):
        try:
            rows, end, cols = mod.csv_cells(data, pos, width, wanted, limit, room)
            results.append((rows, end, [(o.tolist(), d.tobytes()) for o, d in cols]))
        except InputError as exc:
            results.append(("error", str(exc)))
    assert results[0] == results[1]
    if results[0][0] != "error":
        rows, end, cols = results[0]
        assert rows <= room and pos <= end <= len(data)
        for offsets, cells in cols:
            assert len(offsets) == rows + 1 and offsets[-1] == len(cells)


def test_cells_as_the_csv_module_reads_them(compiled_core):
    data = b'a,"b,c",""\r\n"",x,y\n'
    rows, end, cols = compiled_core.csv_cells(data, 0, 3, [0, 1, 2], 100, 10)
    got = [[cols[j][1][cols[j][0][r]:cols[j][0][r + 1]].tobytes().decode() for j in range(3)] for r in range(rows)]
    assert got == list(csv.reader(io.StringIO(data.decode())))
    assert end == len(data)


@pytest.mark.parametrize("line", [b'a"b,c,d\n', b'"a"b,c,d\n', b'"a""b",c,d\n', b"a,b\rc,d\n", b"a,b\n",
                                  b"a,b,c,d\n", b"   \t\n", b"\xe3\x80\x80,\xe3\x80\x80,x\n"[:7] + b"\n",
                                  b'"abcd",b,c\n', b"a\x00,b,c\n"])
def test_a_line_that_is_not_plain_stops_the_scan(compiled_core, line):
    """Before it, nothing is taken; the line is left where it starts."""
    data = b"x,y,z\n" + line + b"p,q,r\n"
    for mod in (compiled_core, twin):
        rows, end, _ = mod.csv_cells(data, 0, 3, [0], 3, 10)
        assert (rows, end) == (1, 6), (mod, line)


def test_arguments_out_of_range_are_refused_alike(compiled_core):
    for args in [(b"a", 2, 1, [0], 1, 1), (b"a", 0, 0, [], 1, 1), (b"a", 0, 1, [1], 1, 1),
                 (b"a", 0, 1, [0], -1, 1), (np.zeros(2, np.int32), 0, 1, [0], 1, 1)]:
        errors = []
        for mod in (compiled_core, twin):
            with pytest.raises(InputError) as exc:
                mod.csv_cells(*args)
            errors.append(str(exc.value))
        assert errors[0] == errors[1]
