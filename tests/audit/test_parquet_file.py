"""The audit's own Parquet writer (``gpuclass.audit.sinks.parquet_file``) against pyarrow's.

Any table of the types it writes (int64, float64, bool, text; missing values, Unicode,
empty texts), in any row groups and pages, must read back (pyarrow, DuckDB, polars) as the
table pyarrow's writer wrote; its statistics must be the values' own; and the reader's
cheap batch check must refuse exactly what Arrow's full validation refuses.
"""

from __future__ import annotations

import io
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from gpuclass.audit.ingest.parquet import check_batch  # noqa: E402
from gpuclass.audit.results.columns import typed_schema  # noqa: E402
from gpuclass.audit.sinks import parquet as sink  # noqa: E402
from gpuclass.audit.sinks import parquet_file  # noqa: E402
from gpuclass.audit.sinks.parquet_file import ParquetFileWriter, writes  # noqa: E402

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

TEXT = st.text(st.characters(codec="utf-8"), max_size=6)
VALUES = {
    "int64": st.one_of(st.integers(0, 5), st.integers(-2**63, 2**63 - 1), st.integers(-300, 300)),
    "double": st.floats(allow_nan=False),
    "bool": st.booleans(),
    "text": st.one_of(st.sampled_from(["", "a", "srv-1", "é"]), TEXT),
}
TYPES = {"int64": pa.int64(), "double": pa.float64(), "bool": pa.bool_(), "text": pa.string()}


@st.composite
def tables(draw):
    n = draw(st.integers(0, 90))
    cols = {}
    for j, kind in enumerate(draw(st.lists(st.sampled_from(sorted(TYPES)), min_size=1, max_size=6))):
        style = draw(st.sampled_from(["free", "one", "missing", "none"]))
        if style == "one":
            cells = [draw(VALUES[kind])] * n
        elif style == "none":
            cells = [None] * n
        else:
            cells = draw(st.lists(st.one_of(VALUES[kind], st.none()) if style == "missing" else VALUES[kind],
                                  min_size=n, max_size=n))
        cols[f"c{j}.{kind}"] = pa.array(cells, TYPES[kind])
    table = pa.table(cols)
    cut = draw(st.integers(0, n))  # a slice: buffers that start past 0
    return table.slice(cut // 3, n)


def _write(table, out, pieces, group, **kw):
    w = ParquetFileWriter(out, table.schema, **kw)
    step = max(1, -(-table.num_rows // pieces))
    for lo in range(0, table.num_rows, step):
        w.write_table(table.slice(lo, step), row_group_size=group)
    w.close()


@SETTINGS
@given(table=tables(), pieces=st.integers(1, 3), group=st.integers(1, 40), page=st.integers(1, 50), data=st.data())
def test_any_table_reads_back_as_pyarrows_writer_wrote_it(monkeypatch, table, pieces, group, page, data):
    monkeypatch.setattr(parquet_file, "_PAGE_ROWS", page)
    names = table.schema.names
    kw = {k: data.draw(st.lists(st.sampled_from(names), max_size=3)) for k in ("statistics", "delta", "plain")}
    ours = io.BytesIO()
    _write(table, ours, pieces, group, **kw)
    theirs = io.BytesIO()
    pq.write_table(table, theirs)
    got = pq.read_table(io.BytesIO(ours.getvalue()))
    assert got.equals(pq.read_table(io.BytesIO(theirs.getvalue())))
    assert got.equals(table)
    meta = pq.ParquetFile(io.BytesIO(ours.getvalue())).metadata
    assert meta.num_rows == table.num_rows
    for g in range(meta.num_row_groups):
        for j, name in enumerate(names):
            stats = meta.row_group(g).column(j).statistics
            assert stats.null_count == meta.row_group(g).column(j).num_values - _present(got, g, meta, j)
            if name in kw["statistics"] and stats.has_min_max:
                cells = [c for c in _group(got, g, meta).column(j).to_pylist() if c is not None]
                if name.endswith(".text"):
                    cells = [c.encode() for c in cells]
                    assert (stats.min_raw, stats.max_raw) == (min(cells), max(cells))
                elif name.endswith(".int64"):
                    assert (stats.min, stats.max) == (min(cells), max(cells))


def _group(table, g, meta):
    lo = sum(meta.row_group(k).num_rows for k in range(g))
    return table.slice(lo, meta.row_group(g).num_rows)


def _present(table, g, meta, j):
    part = _group(table, g, meta).column(j)
    return len(part) - part.null_count


@settings(max_examples=25, deadline=None)
@given(table=tables())
def test_duckdb_and_polars_read_it_as_written(tmp_path_factory, table):
    duckdb = pytest.importorskip("duckdb")
    pl = pytest.importorskip("polars")
    path = tmp_path_factory.mktemp("pq") / "t.parquet"
    _write(table, path, 2, 7, statistics=table.schema.names, plain=table.schema.names[:1])
    if table.num_rows:  # polars and DuckDB type an empty text column as they please
        assert pl.read_parquet(path).to_arrow().cast(table.schema).equals(table)
    got = duckdb.sql(f"SELECT * FROM read_parquet('{path}')").to_arrow_table()
    assert got.num_rows == table.num_rows
    if table.num_rows:
        assert got.cast(table.schema).equals(table)


def test_an_audits_typed_columns_go_to_this_writer_and_others_to_pyarrows(tmp_path):
    schema = typed_schema(["gtx-1080"])
    assert writes(schema)
    w = sink.parquet_writer(tmp_path / "a.parquet", schema)
    assert isinstance(w, ParquetFileWriter)
    w.close()
    assert pq.read_table(tmp_path / "a.parquet").schema == schema  # no rows: the schema all the same
    other = pa.schema([("when", pa.timestamp("s"))])
    assert not writes(other)
    # what pyarrow would keep and this writer would not: a required column, a large string
    # (both read back as another type), metadata
    for kept in (pa.schema([pa.field("n", pa.int64(), nullable=False)]), pa.schema([("t", pa.large_string())]),
                 pa.schema([("n", pa.int64())], metadata={"a": "b"}),
                 pa.schema([pa.field("n", pa.int64(), metadata={"a": "b"})])):
        assert not writes(kept)
    w = sink.parquet_writer(tmp_path / "b.parquet", other)
    assert not isinstance(w, ParquetFileWriter)
    w.close()
    with pytest.raises(TypeError):
        ParquetFileWriter(tmp_path / "c.parquet", other)


def test_a_pipe_is_written_in_order(tmp_path):
    table = pa.table({"server": ["a", "b", None], "n": pa.array([1, None, 3], pa.int64())})
    r, w = os.pipe()
    with os.fdopen(w, "wb") as out:
        writer = ParquetFileWriter(out, table.schema, statistics=["server"])
        writer.write_table(table)
        writer.close()
    with os.fdopen(r, "rb") as src:
        assert pq.read_table(io.BytesIO(src.read())).equals(table)


def test_a_table_of_another_schema_is_refused(tmp_path):
    w = ParquetFileWriter(tmp_path / "a.parquet", pa.schema([("n", pa.int64())]))
    with pytest.raises(ValueError, match="schema"):
        w.write_table(pa.table({"n": pa.array([1.0])}))
    w.close()


I64 = st.one_of(st.integers(0, 300), st.integers(0, 2**63 - 1), st.integers(-2**63, -1))


@SETTINGS
@given(ptype=st.sampled_from([0, 2]), raw=I64, packed=I64, header_id=st.sampled_from([5, 7]),
       header=st.binary(max_size=8).map(lambda b: b + b"\x00"), start=I64, values=I64, data_offset=I64,
       dict_offset=st.none() | I64, stats=st.binary(max_size=8).map(lambda b: b + b"\x00"),
       head=st.lists(st.tuples(st.sampled_from([1, 2, 3]), st.integers(0, 9)), max_size=3, unique_by=lambda f: f[0]),
       codec=st.integers(0, 7))
def test_the_hot_structs_are_the_generic_encoders_bytes(ptype, raw, packed, header_id, header, start, values,
                                                          data_offset, dict_offset, stats, head, codec):
    """Page headers and column chunks are joined from cached pieces: the bytes _struct
    makes of the same fields (sizes and offsets up to the int64 range; a chunk's metadata
    always ends its first fields with the codec, field 4)."""
    st_, I32, I64_, STRUCT = parquet_file._struct, parquet_file._I32, parquet_file._I64, parquet_file._STRUCT
    assert parquet_file._page_header(ptype, raw, packed, header_id, header) == st_(
        (1, I32, ptype), (2, I32, raw), (3, I32, packed), (header_id, STRUCT, header))
    fields = [*sorted((fid, I32, v) for fid, v in head), (4, I32, codec)]
    prefix = st_(*fields)[:-1]
    meta = st_(*fields, (5, I64_, values), (6, I64_, raw), (7, I64_, packed), (9, I64_, data_offset),
               (11, I64_, dict_offset), (12, STRUCT, stats))
    assert parquet_file._chunk_meta(start, prefix, values, raw, packed, data_offset, dict_offset, stats) == st_(
        (2, I64_, start), (3, STRUCT, meta))


def _narrowed(table):
    """``table`` with each int64 column whose values fit int32 as int32 (the rest as is)."""
    cols = []
    for col in table.columns:
        cells = [c for c in col.to_pylist() if c is not None]
        fits = pa.types.is_int64(col.type) and all(-2**31 <= c < 2**31 for c in cells)
        cols.append(col.cast(pa.int32()) if fits else col)
    return pa.Table.from_arrays(cols, names=table.schema.names)


@SETTINGS
@given(table=tables(), pieces=st.integers(1, 3), group=st.integers(1, 40), page=st.integers(1, 50), data=st.data())
def test_int32_in_an_int64_column_is_written_as_the_int64_table_is(monkeypatch, table, pieces, group, page, data):
    """AuditTable.narrow_typed's int32 counts go to the writer as they are: the file is the
    one the table cast to the schema's int64 gives, byte for byte."""
    monkeypatch.setattr(parquet_file, "_PAGE_ROWS", page)
    names = table.schema.names
    kw = {k: data.draw(st.lists(st.sampled_from(names), max_size=3)) for k in ("statistics", "delta", "plain")}
    narrow = _narrowed(table)
    wide, ours = io.BytesIO(), io.BytesIO()
    _write(table, wide, pieces, group, **kw)
    w = ParquetFileWriter(ours, table.schema, **kw)
    step = max(1, -(-table.num_rows // pieces))
    for lo in range(0, table.num_rows, step):
        w.write_table(narrow.slice(lo, step), row_group_size=group)
    w.close()
    assert ours.getvalue() == wide.getvalue()


def test_only_int32_may_stand_for_int64(tmp_path):
    w = ParquetFileWriter(tmp_path / "a.parquet", pa.schema([("n", pa.int64()), ("x", pa.float64())]))
    w.write_table(pa.table({"n": pa.array([1, -2], pa.int32()), "x": [1.0, 2.0]}))
    for other in ({"n": pa.array([1], pa.int16()), "x": [1.0]}, {"n": pa.array([1], pa.uint32()), "x": [1.0]},
                  {"n": pa.array([1], pa.int64()), "x": pa.array([1], pa.float32())},
                  {"x": [1.0], "n": pa.array([1], pa.int32())}):
        with pytest.raises(ValueError, match="schema"):
            w.write_table(pa.table(other))
    with pytest.raises(ValueError, match="schema"):  # a required column is not the schema's
        w.write_table(pa.table({"n": pa.array([1], pa.int32()), "x": [1.0]},
                               schema=pa.schema([pa.field("n", pa.int32(), nullable=False), ("x", pa.float64())])))
    w.close()
    assert pq.read_table(tmp_path / "a.parquet").equals(pa.table({"n": [1, -2], "x": [1.0, 2.0]}))


@st.composite
def batches(draw):
    n = draw(st.integers(1, 30))
    entries = draw(st.lists(st.sampled_from([b"10de", b"27b0", b"\xb0\x01", b"", b"0300"]), min_size=1, max_size=4))
    index = draw(st.lists(st.integers(-2, len(entries) + 1), min_size=n, max_size=n))
    missing = draw(st.lists(st.booleans(), min_size=n, max_size=n)) if draw(st.booleans()) else [False] * n
    dictionary = pa.array(entries, pa.binary()).view(pa.string())
    valid = pa.py_buffer(np.packbits(~np.array(missing), bitorder="little")) if any(missing) else None
    col = pa.DictionaryArray.from_buffers(pa.dictionary(pa.int32(), pa.string()), n,
                                          [valid, pa.py_buffer(np.array(index, np.int32))],
                                          dictionary=dictionary, null_count=sum(missing))
    server = pa.array(draw(st.lists(st.sampled_from([b"a", b"b\xff", b"\xc3\xa9"]), min_size=n, max_size=n)),
                      pa.binary()).view(pa.string())
    return pa.record_batch([server, col], ["server", "vendor"])


@settings(max_examples=200, deadline=None)
@given(batch=batches())
def test_the_readers_batch_check_refuses_what_full_validation_refuses(batch):
    def refused(check):
        try:
            check()
        except pa.ArrowInvalid:
            return True
        return False
    assert refused(lambda: check_batch(batch)) == refused(lambda: batch.validate(full=True))


@settings(max_examples=40, deadline=None)
@given(table=tables(), group=st.integers(1, 40), batch=st.integers(1, 50), as_file=st.booleans(), data=st.data())
def test_the_readers_batches_are_parquetfiles(tmp_path_factory, table, group, batch, as_file, data):
    """The reader opens pyarrow's ParquetReader itself (no ``pyarrow.parquet`` import): its
    schema, metadata and batches are ``ParquetFile``'s, given the same options."""
    from gpuclass.audit.ingest.parquet import _reader

    path = tmp_path_factory.mktemp("rd") / "t.parquet"
    pq.write_table(table, path, row_group_size=group)
    names = table.schema.names
    texts = [n for n in names if n.endswith(".text")]
    wanted = sorted(data.draw(st.sets(st.integers(0, len(names) - 1), min_size=1)))
    dictionary = data.draw(st.lists(st.sampled_from(texts), unique=True)) if texts else []
    with open(path, "rb") as fh:
        ours = _reader(fh if as_file else path, read_dictionary=dictionary)
        theirs = pq.ParquetFile(path, read_dictionary=dictionary)
        assert ours.schema_arrow.equals(theirs.schema_arrow) and ours.metadata.equals(theirs.metadata)
        got = list(ours.iter_batches(batch, range(theirs.metadata.num_row_groups), column_indices=wanted,
                                     use_threads=False))
        want = list(theirs.iter_batches(batch_size=batch, columns=[names[j] for j in wanted], use_threads=False))
    assert len(got) == len(want) and all(a.equals(b) for a, b in zip(got, want))
