"""Parquet files of an audit's typed columns, encoded by the native core.

An audit's output is a few columns per server whose values repeat (counts of a few cards,
a yes or no, one source, texts that are mostly empty), a row number that rises and a
server name each its own.  pyarrow's writer encodes them through generic encoders that
hash every value (at 10M input rows, a quarter of a Parquet to Parquet audit's CPU time
went to writing its 2M servers); this writer uses what it knows, each column chunk
encoded in one pass or two by the core's Parquet kernels (``core.parquet_*``):

- an integer column with at most 256 distinct values (within a range of 65,536) in a row
  group is dictionary-encoded (``RLE_DICTIONARY``: the indices bit-packed, or one RLE run
  where they are all the same), any other ``PLAIN``; the ``delta`` columns (the rising row
  numbers) ``DELTA_BINARY_PACKED``;
- a text column that is one value throughout (the source) is dictionary-encoded; any
  other, and the ``plain`` ones (the server names), ``DELTA_LENGTH_BYTE_ARRAY``: the
  lengths delta-packed (an empty text is a few bits), the bytes Arrow's own buffer as it is;
- booleans and floats ``PLAIN``; every column ``OPTIONAL`` (Arrow's fields are nullable),
  its definition levels one RLE run where nothing is missing, else the validity bits;
- data pages (v1) of at most 64Ki rows, compressed with snappy (Arrow's codec); min/max
  statistics for the ``statistics`` columns, null counts for all.

The file is Parquet format 2 as pyarrow writes it (``version`` 2, the logical type of
text ``STRING``, type-defined column orders), without pyarrow's own ``ARROW:schema``
metadata: a reader finds the same schema from the Parquet types.  It is held equal to
pyarrow's writer by ``tests/audit/test_parquet_file.py`` (hypothesis: any table of these
types, with Unicode and missing values, in any row groups and pages, read back by pyarrow,
DuckDB and polars, equals the table pyarrow's writer wrote).

>>> import io, pyarrow as pa, pyarrow.parquet as pq
>>> t = pa.table({"server": ["a", "b", None], "cards": pa.array([0, 2, 0], pa.int64())})
>>> buf = io.BytesIO()
>>> w = ParquetFileWriter(buf, t.schema, statistics=("server",), plain=("server",))
>>> w.write_table(t); w.close()
>>> pq.read_table(io.BytesIO(buf.getvalue())).equals(t)
True
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from ..._native import bitmap_bools as _bits
from ..._native import core, numpy_values, uvarint, zigzag

__all__ = ["ParquetFileWriter", "writes"]

_MAGIC = b"PAR1"
_PAGE_ROWS = 1 << 16       # rows a data page at most
_GROUP_ROWS = 1 << 20      # rows a row group at most (pyarrow's default)
_CREATED_BY = "gpuclass"

# Thrift compact protocol: field types
_TRUE, _FALSE, _I16, _I32, _I64, _BIN, _LIST, _STRUCT = 1, 2, 4, 5, 6, 8, 9, 12
# Parquet: physical types, encodings, codec, page types
_BOOLEAN, _INT64, _DOUBLE, _BYTE_ARRAY = 0, 2, 5, 6
_PLAIN, _RLE, _DELTA, _DELTA_LENGTH, _RLE_DICT = 0, 3, 5, 6, 8
_SNAPPY = 1
_DATA_PAGE, _DICT_PAGE = 0, 2
_OPTIONAL = 1
_UTF8 = 0


@lru_cache(maxsize=4096)
def _int(v: int) -> bytes:
    """``v`` as a zigzag varint (kept: a footer's and a page header's integers repeat)."""
    return uvarint(zigzag(v))


def _value(ttype: int, v: Any) -> bytes:
    if ttype in (_I16, _I32, _I64):
        return _int(int(v))
    if ttype == _BIN:
        return uvarint(len(v)) + v
    return bytes(v)  # a struct or a list, encoded


def _struct(*fields: tuple[int, int, Any]) -> bytes:
    """A Thrift compact struct of ``(id, type, value)`` fields in rising id order (a
    field whose value is None is left out)."""
    out = bytearray()
    last = 0
    for fid, ttype, v in fields:
        if v is None:
            continue
        if ttype in (_TRUE, _FALSE):
            ttype = _TRUE if v else _FALSE
        delta = fid - last
        if 0 < delta <= 15:
            out.append(delta << 4 | ttype)
        else:
            out.append(ttype)
            out += _int(fid)
        if _I16 <= ttype <= _I64:
            out += _int(int(v))
        elif ttype != _TRUE and ttype != _FALSE:
            out += _value(ttype, v)
        last = fid
    out.append(0)
    return bytes(out)


@lru_cache(maxsize=None)
def _head(delta: int, ttype: int) -> bytes:
    """A Thrift compact field's header, ``delta`` (1 to 15) ids after the field before."""
    return bytes([delta << 4 | ttype])


def _i64s(last: int, fields: tuple[tuple[int, Any], ...]) -> list[bytes]:
    """The encoded integer fields ``(id, value)`` (rising ids, each within 15 of the one
    before; a None value left out) of a struct whose last field so far is ``last``: what
    :func:`_struct` writes for them, as pieces (the hot structs of each page and column
    chunk are joined from these and cached prefixes: tests/audit/test_parquet_file.py holds
    the bytes equal to :func:`_struct`'s)."""
    out = []
    for fid, v in fields:
        if v is None:
            continue
        out.append(_head(fid - last, _I64))
        out.append(_int(v))
        last = fid
    return out


def _page_header(ptype: int, raw: int, packed: int, header_id: int, header: bytes) -> bytes:
    """A page's header: ``_struct((1, I32, ptype), (2, I32, raw), (3, I32, packed),
    (header_id, STRUCT, header))`` (``header_id`` 5 or 7), joined from cached pieces."""
    return b"".join((_PAGE_TYPE[ptype], _int(raw), _I32_NEXT, _int(packed),
                     _head(header_id - 3, _STRUCT), header, b"\x00"))


def _chunk_meta(start: int, head: bytes, values: int, raw: int, packed: int, data_offset: int,
                dict_offset: int | None, stats: bytes) -> bytes:
    """A column chunk: ``_struct((2, I64, start), (3, STRUCT, meta))``, its metadata ``meta``
    the struct of ``head`` (its encoded fields 1 to 4: type, encodings, path, codec) and
    ``(5, I64, values), (6, I64, raw), (7, I64, packed), (9, I64, data_offset), (11, I64,
    dict_offset), (12, STRUCT, stats)``."""
    last = 9 if dict_offset is None else 11
    return b"".join((_head(2, _I64), _int(start), _head(1, _STRUCT), head,
                     *_i64s(4, ((5, values), (6, raw), (7, packed), (9, data_offset), (11, dict_offset))),
                     _head(12 - last, _STRUCT), stats, b"\x00\x00"))


@lru_cache(maxsize=256)
def _dict_page_header(count: int) -> bytes:
    return _struct((1, _I32, count), (2, _I32, _PLAIN))


@lru_cache(maxsize=256)
def _null_statistics(nulls: int) -> bytes:
    return _struct((3, _I64, nulls))


@lru_cache(maxsize=256)
def _data_page_header(rows: int, encoding: int) -> bytes:
    return _struct((1, _I32, rows), (2, _I32, encoding), (3, _I32, _RLE), (4, _I32, _RLE))


def _list(ttype: int, items: Sequence[Any]) -> bytes:
    n = len(items)
    head = bytes([n << 4 | ttype]) if n < 15 else bytes([0xF0 | ttype]) + uvarint(n)
    return head + b"".join(_value(ttype, v) for v in items)


def _levels(valid: np.ndarray | None, n: int) -> bytes:
    """The definition levels (0 missing, 1 there) of ``n`` rows, length-prefixed."""
    if valid is None or valid.all():
        return _all_there(n)
    if not valid.any():
        body = uvarint(n << 1) + b"\x00"
    else:
        body = uvarint(-(-n // 8) << 1 | 1) + np.packbits(valid, bitorder="little").tobytes()
    return len(body).to_bytes(4, "little") + body


@lru_cache(maxsize=256)
def _all_there(n: int) -> bytes:
    body = uvarint(n << 1) + b"\x01"
    return len(body).to_bytes(4, "little") + body


class _Column:
    """One column chunk's values, as the encoders take them: ``valid`` (None: none
    missing), the values that are there (numbers, or text as lengths and bytes)."""

    def __init__(self, arr: Any, kind: str) -> None:
        self.n = n = len(arr)
        self._starts: np.ndarray | None = None
        off = arr.offset
        bufs = arr.buffers()
        self.valid = None if not arr.null_count else _bits(bufs[0], off, n)
        valid = self.valid
        self.kind = kind
        if arr.null_count == n:  # nothing there: definition levels only
            self.values = self.lens = np.empty(0, np.int64)
            self.data = np.empty(0, np.uint8)
        elif kind != "text":  # numbers (int32 in an int64 column too: written as int64), booleans
            vals = numpy_values(arr)
            self.values = vals if valid is None else vals[valid]
        else:
            offsets = np.frombuffer(bufs[1], np.int32, count=off + n + 1)[off:]
            data = np.frombuffer(bufs[2], np.uint8) if bufs[2] is not None else np.empty(0, np.uint8)
            lens = np.diff(offsets)
            if valid is None:
                self.lens, self.data = lens, data[offsets[0]:offsets[-1]]
            else:
                self.lens = lens[valid]
                if lens[~valid].any():  # missing cells that span bytes
                    self.data = data[offsets[0]:offsets[-1]][np.repeat(valid, lens)]
                else:
                    self.data = data[offsets[0]:offsets[-1]]

    def starts(self) -> np.ndarray:
        """Where each text there begins in :attr:`data`, and where the last ends."""
        if self._starts is None:
            self._starts = np.concatenate([np.zeros(1, np.int64), np.cumsum(self.lens, dtype=np.int64)])
        return self._starts

    def count(self) -> int:
        return len(self.values) if self.kind != "text" else len(self.lens)


class ParquetFileWriter:
    """A Parquet file written a table at a time (the interface of pyarrow's
    ``ParquetWriter``: :meth:`write_table`, :meth:`close`), for the columns' types an
    audit has (:func:`writes`).  ``out``: a path (created or truncated) or a binary file,
    written in order (a pipe will do)."""

    def __init__(self, out: Any, schema: Any, statistics: Sequence[str] = (), delta: Sequence[str] = (),
                 plain: Sequence[str] = ()) -> None:
        import pyarrow as pa

        self.schema = schema
        if not writes(schema):
            raise TypeError(f"not a schema this writer writes (see writes()): {schema}")
        self._kinds = [_kind(f.type) for f in schema]
        self._stats = {schema.get_field_index(c) for c in statistics if c in schema.names}
        self._delta = {schema.get_field_index(c) for c in delta if c in schema.names}
        self._plain = {schema.get_field_index(c) for c in plain if c in schema.names}
        self._codec = pa.Codec("snappy")
        self._own = isinstance(out, (str, os.PathLike))
        self._out = open(out, "wb") if self._own else out
        self._pos = 0
        self._groups: list[bytes] = []
        self._meta_heads: dict[tuple[int, int], bytes] = {}
        self._rows = 0
        self._closed = False
        self._put(_MAGIC)

    def _put(self, data: bytes) -> None:
        self._out.write(data)
        self._pos += len(data)

    def write_table(self, table: Any, row_group_size: int | None = None) -> None:
        """``table`` (of this writer's schema) as row groups of at most ``row_group_size``
        rows (pyarrow's default, 1Mi, where not given).  An int64 column of the schema may
        come as int32 (:meth:`AuditTable.narrow_typed
        <gpuclass.audit.results.table.AuditTable.narrow_typed>`): its values are written
        as int64, the same bytes as the table cast to the schema."""
        if not table.schema.equals(self.schema) and not self._narrower(table.schema):
            raise ValueError(f"table schema does not match the writer's:\n{table.schema}\nagainst\n{self.schema}")
        size = row_group_size or _GROUP_ROWS
        for lo in range(0, table.num_rows, size):
            self._row_group(table.slice(lo, size))

    def _narrower(self, schema: Any) -> bool:
        """Whether ``schema`` is this writer's, but for int32 in some of its int64 columns."""
        import pyarrow as pa

        mine = self.schema
        return not schema.metadata and schema.names == mine.names and all(
            f.nullable == g.nullable and not f.metadata
            and (f.type == g.type or (pa.types.is_int32(f.type) and pa.types.is_int64(g.type)))
            for f, g in zip(schema, mine))

    def _row_group(self, table: Any) -> None:
        import pyarrow as pa

        start = self._pos
        chunks, raw = [], 0
        for j, col in enumerate(table.columns):
            arr = col.chunks[0] if col.num_chunks == 1 else pa.concat_arrays(col.chunks)
            meta, size = self._column(j, arr)
            chunks.append(meta)
            raw += size
        self._groups.append(_struct((1, _LIST, _list(_STRUCT, chunks)), (2, _I64, raw),
                                    (3, _I64, table.num_rows), (5, _I64, start),
                                    (6, _I64, self._pos - start), (7, _I16, len(self._groups))))
        self._rows += table.num_rows

    def _page(self, ptype: int, body: bytes, header: tuple[int, bytes]) -> tuple[int, int]:
        """Write one page; its (uncompressed, compressed) sizes with its header."""
        packed = self._codec.compress(body, asbytes=True)
        head = _page_header(ptype, len(body), len(packed), *header)
        self._put(head)
        self._put(packed)
        return len(head) + len(body), len(head) + len(packed)

    def _column(self, j: int, arr: Any) -> tuple[bytes, int]:
        kind = self._kinds[j]
        col = _Column(arr, kind)
        start = self._pos
        raw = packed = 0
        dict_offset = None
        index, width, encoding = None, 0, _PLAIN
        if col.count() and j not in self._delta and j not in self._plain:
            found = _dictionary(col)
            if found is not None:
                page, count, index = found
                width = max(1, (count - 1).bit_length())
                dict_offset = self._pos
                u, c = self._page(_DICT_PAGE, page, (7, _dict_page_header(count)))
                raw, packed = raw + u, packed + c
                encoding = _RLE_DICT
        if encoding == _PLAIN and col.count():
            if j in self._delta and kind == "int64":
                encoding = _DELTA
            elif kind == "text":
                encoding = _DELTA_LENGTH
        data_offset = self._pos
        valid = col.valid
        at = 0  # values given out so far (rows that have one)
        for lo in range(0, max(col.n, 1), _PAGE_ROWS):
            hi = min(lo + _PAGE_ROWS, col.n)
            v = None if valid is None else valid[lo:hi]
            k = hi - lo if v is None else int(np.count_nonzero(v))
            body = [_levels(v, hi - lo)]
            if k:
                body.append(self._values(col, encoding, index, width, at, at + k))
            elif encoding in (_DELTA, _DELTA_LENGTH):  # a page of missing cells: an empty header
                body.append(core.parquet_delta(_NONE))
            elif encoding == _RLE_DICT:
                body.append(bytes([width]))
            at += k
            u, c = self._page(_DATA_PAGE, b"".join(body), (5, _data_page_header(hi - lo, encoding)))
            raw, packed = raw + u, packed + c
        stats = _statistics(col, arr) if j in self._stats else _null_statistics(arr.null_count)
        return _chunk_meta(start, self._meta_head(j, encoding), col.n, raw, packed, data_offset,
                           dict_offset, stats), raw

    def _meta_head(self, j: int, encoding: int) -> bytes:
        """Column ``j``'s metadata fields 1 to 4 (its type, encodings, path and codec), the
        same for each of its chunks of ``encoding``."""
        key = (j, encoding)
        head = self._meta_heads.get(key)
        if head is None:
            head = self._meta_heads[key] = _struct(
                (1, _I32, _PHYSICAL[self._kinds[j]]), (2, _LIST, _list(_I32, sorted({_PLAIN, _RLE, encoding}))),
                (3, _LIST, _list(_BIN, [self.schema[j].name.encode()])), (4, _I32, _SNAPPY))[:-1]
        return head

    def _values(self, col: _Column, encoding: int, index: Any, width: int, lo: int, hi: int) -> bytes:
        if encoding == _RLE_DICT:
            return bytes([width]) + core.parquet_hybrid(index[lo:hi], width)
        if col.kind == "text":
            lens = col.lens[lo:hi]
            starts = col.starts()
            data = col.data[starts[lo]:starts[hi]]
            return core.parquet_delta(lens) + data.tobytes()
        vals = col.values[lo:hi]
        if encoding == _DELTA:
            return core.parquet_delta(vals)
        if col.kind == "bool":
            return np.packbits(vals, bitorder="little").tobytes()
        return vals.astype("<i8" if col.kind == "int64" else "<f8", copy=False).tobytes()

    def close(self) -> None:
        """Write the footer (and close a file this writer opened)."""
        if self._closed:
            return
        self._closed = True
        try:
            children = [_struct((1, _I32, _PHYSICAL[k]), (3, _I32, _OPTIONAL), (4, _BIN, f.name.encode()),
                                (6, _I32, _UTF8 if k == "text" else None),
                                (10, _STRUCT, _struct((1, _STRUCT, b"\x00")) if k == "text" else None))
                        for f, k in zip(self.schema, self._kinds)]
            root = _struct((4, _BIN, b"schema"), (5, _I32, len(children)))
            orders = [_struct((1, _STRUCT, b"\x00"))] * len(children)
            footer = _struct((1, _I32, 2), (2, _LIST, _list(_STRUCT, [root, *children])), (3, _I64, self._rows),
                             (4, _LIST, _list(_STRUCT, self._groups)), (6, _BIN, _CREATED_BY.encode()),
                             (7, _LIST, _list(_STRUCT, orders)))
            self._put(footer + len(footer).to_bytes(4, "little") + _MAGIC)
            if hasattr(self._out, "flush"):
                self._out.flush()
        finally:
            if self._own:
                self._out.close()


_NONE = np.empty(0, np.int64)
# a page header's first field (its type, I32) for each page type, and the I32 fields after
_I32_NEXT = bytes([1 << 4 | _I32])
_PAGE_TYPE = {t: _I32_NEXT + _int(t) + _I32_NEXT for t in (_DATA_PAGE, _DICT_PAGE)}
_PHYSICAL = {"int64": _INT64, "double": _DOUBLE, "bool": _BOOLEAN, "text": _BYTE_ARRAY}


def _kind(t: Any) -> str | None:
    import pyarrow as pa

    if pa.types.is_int64(t):
        return "int64"
    if pa.types.is_float64(t):
        return "double"
    if pa.types.is_boolean(t):
        return "bool"
    if pa.types.is_string(t):
        return "text"
    return None


def writes(schema: Any) -> bool:
    """Whether :class:`ParquetFileWriter` writes ``schema`` as pyarrow's writer would, read
    back: flat nullable columns of int64, float64, bool or string, and no metadata (which
    pyarrow keeps in the file, and this writer does not)."""
    return not schema.metadata and all(f.nullable and not f.metadata and _kind(f.type) is not None
                                       for f in schema)


def _dictionary(col: _Column) -> tuple[bytes, int, np.ndarray] | None:
    """A column chunk's dictionary page (its values, ``PLAIN``), their count and each
    present value's index; None where it is better written without one: integers of more
    than 256 distinct values or a range of 65,536 or more (``core.parquet_dictionary``),
    text that is not one value throughout (texts are written with their lengths
    delta-packed, which makes the many empty ones of an audit's text columns a few bits
    each), floats and booleans."""
    if col.kind == "int64":
        found = core.parquet_dictionary(col.values)
        if found is None:
            return None
        distinct, index = found
        return distinct.astype("<i8", copy=False).tobytes(), len(distinct), index
    if col.kind == "text":
        lens, data = col.lens, col.data
        size = int(lens[0])
        if lens.min() != lens.max() or (size and (data[size:] != data[:-size]).any()):
            return None  # not one text throughout (each byte equal to the one a text before)
        # the dictionary page: the one text, PLAIN (its length, then its bytes)
        return size.to_bytes(4, "little") + data[:size].tobytes(), 1, np.zeros(len(lens), np.uint8)
    return None


def _statistics(col: _Column, arr: Any) -> bytes:
    """A column chunk's null count, least and greatest values."""
    lo = hi = None
    if col.count() and col.kind == "int64":
        lo, hi = (int(x).to_bytes(8, "little", signed=True) for x in (col.values.min(), col.values.max()))
    elif col.count() and col.kind == "text":
        starts = col.starts()
        first, last = core.parquet_text_bounds(starts, col.data)
        lo, hi = (col.data[starts[i]:starts[i + 1]].tobytes() for i in (first, last))
    return _struct((3, _I64, arr.null_count), (5, _BIN, hi), (6, _BIN, lo))
