"""The audit pair's contract: device-table columns as the kernels read them, and what they return.

A device table has a server column and five ID columns (vendor, device, class,
subvendor, subdevice).  :func:`column_of` turns each into a :class:`Column`: Arrow
string cells by their buffers (no copy), integer cells as int64, a missing column as
``ABSENT``, a dictionary-encoded column (Arrow's dictionary arrays, pandas categoricals,
Parquet read with ``read_dictionary``) as ``DICT``: its indices and its dictionary, a
column of its own, so that each distinct value is parsed once.  ``audit_rows``
(``audit.pxi`` compiled, ``audit_py.py`` the twin) parses every cell (``cell_value``:
:func:`gpuclass.ids.cell_parts`, the one hex-cell grammar, on the cell's bytes),
classifies the rows and rolls them up per run of equal server keys, and returns an
:class:`AuditRuns`; ``parse_id_cells`` parses one column's cells alone.

>>> import pyarrow as pa
>>> c = column_of(pa.array(["10de", " 0x1B80 ", None, "[8086]", "zz", "\u00a010de"]), "vendor")
>>> [cell_value(c, i, 4) for i in range(6)]
[(0, 4318, 4), (0, 7040, 4), (1, 0, 0), (0, 32902, 4), (2, 0, 0), (0, 4318, 4)]
"""

from typing import Any, NamedTuple

import numpy as np

from ...errors import InputError
from ...ids import CELL_BAD, CELL_MISSING, CELL_OK, cell_parts

__all__ = ["ABSENT", "STR32", "STR64", "INT", "DICT", "CELL_OK", "CELL_MISSING", "CELL_BAD", "CELL_PAIR",
           "FIELDS", "WIDTHS", "CHUNK", "Column", "AuditRuns", "column_of", "absent", "table_columns",
           "cell_value", "cell_text", "problem_text", "prepare_audit_args", "prepare_cells_args",
           "overflow_error"]

ABSENT, STR32, STR64, INT, DICT = range(5)
# a cell's state: gpuclass.ids' CELL_OK, CELL_MISSING, CELL_BAD, and a row's lone subsystem half
CELL_PAIR = 3
# The ID columns in the order the kernels parse them and report a row's first problem.
FIELDS = ("vendor", "device", "class", "subvendor", "subdevice")
WIDTHS = (4, 4, 6, 4, 4)
CHUNK = 2048  # rows classified at a time

class Column(NamedTuple):
    """One column as the kernels read it (see :func:`column_of`)."""

    kind: int
    n: int
    data: np.ndarray | None      # uint8: string bytes
    offsets: np.ndarray | None   # int32 or int64, n + 1 entries into data (one buffer, any alignment)
    ints: np.ndarray | None      # int64 cells
    valid: np.ndarray | None     # uint8 Arrow validity bitmap, or None: all valid
    voff: int                    # bit of row 0 in valid
    source: Any = None           # what it was made from (for messages)
    index: np.ndarray | None = None      # DICT: int8/16/32/64, the entry of each cell
    dictionary: "Column | None" = None   # DICT: the entries (STR32, STR64 or INT)


class AuditRuns(NamedTuple):
    """What ``audit_rows`` returns, per run of rows with one server key.

    ``starts`` (int64, runs + 1) the first row of each run and the row count last;
    ``totals`` (int32, runs x 8) the rollup columns of :mod:`gpuclass.constants`;
    ``counts`` (int32, runs x cards) supported cards by card index; ``problem_rows`` and
    ``problem_codes`` (int64) the rows with a problem and the first of it, coded
    ``field * 4 + CELL_*`` (fields of ``FIELDS``); ``unsupported_rows`` (int64) the
    rows of unsupported GPUs and ``unsupported_ids`` their ``vendor << 16 | device``;
    ``nameless`` (bool, runs) the runs of a row that names no server (a missing cell or
    blank text, see :func:`nameless`): each such row is a run of its own.
    """

    starts: np.ndarray
    totals: np.ndarray
    counts: np.ndarray
    problem_rows: np.ndarray
    problem_codes: np.ndarray
    unsupported_rows: np.ndarray
    unsupported_ids: np.ndarray
    nameless: np.ndarray


def absent(n: int) -> Column:
    """A column the table does not have (every cell missing)."""
    return Column(ABSENT, n, None, None, None, None, 0)


def numpy_dtype(t: Any) -> np.dtype | None:
    """numpy's dtype of the Arrow type ``t``'s values where its layout is numpy's: the
    integers and the floats (half ones too); None for any other type."""
    import pyarrow as pa

    if pa.types.is_integer(t):
        return np.dtype(f"{'i' if pa.types.is_signed_integer(t) else 'u'}{t.bit_width // 8}")
    if pa.types.is_floating(t):
        return np.dtype(f"f{t.bit_width // 8}")
    return None


def bitmap_bools(buf: Any, offset: int, n: int) -> np.ndarray:
    """The bools of an Arrow bitmap (validity or boolean values): ``n`` from bit ``offset``,
    read from the bytes that hold them."""
    first = offset // 8
    raw = np.frombuffer(buf, np.uint8, count=(offset + n + 7) // 8 - first, offset=first)
    return np.unpackbits(raw, bitorder="little", count=offset % 8 + n)[offset % 8:].view(np.bool_)


def numpy_values(arr: Any) -> np.ndarray:
    """An Arrow array's values as a numpy array, missing ones as whatever lies under them:
    integers and floats over the array's own buffer (read-only, as Arrow's zero-copy
    conversion gives them), booleans unpacked from their bits, anything else as
    ``to_numpy`` converts it.  Read from the buffers, this needs no numpy support in
    pyarrow: the command's process imports pyarrow before numpy
    (:mod:`gpuclass.audit.ingest.parquet`)."""
    import pyarrow as pa

    n = len(arr)
    dt = numpy_dtype(arr.type)
    if dt is not None or pa.types.is_boolean(arr.type):
        data = arr.buffers()[1]
        if dt is None:  # booleans: a bit each
            return bitmap_bools(data, arr.offset, n) if n and data is not None else np.zeros(n, np.bool_)
        if not n or data is None:
            return np.zeros(n, dt)
        return np.frombuffer(data, dt, count=n, offset=arr.offset * dt.itemsize)
    return arr.to_numpy(zero_copy_only=False)


def _missing(arr: Any) -> np.ndarray | None:
    """True where ``arr``'s value is missing; None where none is."""
    buf = arr.buffers()[0]
    if buf is None or arr.null_count == 0:
        return None
    return ~bitmap_bools(buf, arr.offset, len(arr))


def _bitmap(arr: Any) -> tuple[np.ndarray | None, int]:
    buf = arr.buffers()[0]
    if buf is None or arr.null_count == 0:
        return None, 0
    return np.frombuffer(buf, dtype=np.uint8), arr.offset


def column_of(values: Any, name: str) -> Column:
    """A column as the kernels read it: a pyarrow array or chunk, a numpy array or a list.

    Strings keep their Arrow buffers; integer columns become int64; floats (pandas' ints
    with gaps) become int64 where whole, NaN missing, anything else malformed; other
    types are read as their text.
    """
    import pyarrow as pa

    if values is None:
        raise InputError(f"{name}: no column")
    arr = values
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if not isinstance(arr, pa.Array):
        np_values = np.asarray(values)
        arr = pa.array(np_values if np_values.dtype.kind in "iufb" else list(values),
                       from_pandas=True)
    if pa.types.is_dictionary(arr.type):
        return _dictionary_column(arr, values, name)
    n = len(arr)
    t = arr.type
    if pa.types.is_null(t):
        return Column(INT, n, None, None, np.zeros(n, np.int64), np.zeros((n + 7) // 8, np.uint8), 0,
                      values)
    if pa.types.is_string(t) or pa.types.is_binary(t) or pa.types.is_large_string(t) \
            or pa.types.is_large_binary(t):
        wide = pa.types.is_large_string(t) or pa.types.is_large_binary(t)
        _, off_buf, data_buf = arr.buffers()
        dtype = np.int64 if wide else np.int32
        offsets = np.frombuffer(off_buf, dtype=dtype, count=n + 1, offset=arr.offset * dtype().itemsize)
        data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(1, np.uint8)
        valid, voff = _bitmap(arr)
        return Column(STR64 if wide else STR32, n, data, offsets, None, valid, voff, values)
    if pa.types.is_integer(t) or pa.types.is_boolean(t):
        raw = numpy_values(arr)
        missing = _missing(arr)
        ints = raw.astype(np.int64)
        if pa.types.is_unsigned_integer(t) and t.bit_width == 64:
            ints[raw > np.uint64(2**63 - 1)] = -1  # past int64: malformed, as any value out of range
        if missing is not None:
            ints[missing] = 0
        valid, voff = _bitmap(arr)
        return Column(INT, n, None, None, ints, valid, voff, values)
    if pa.types.is_floating(t):
        f = numpy_values(arr).astype(np.float64)
        missing = _missing(arr)
        if missing is not None:
            f[missing] = np.nan
        nan = np.isnan(f)
        whole = ~nan & (f == np.floor(f)) & (np.abs(f) < 2**62)
        ints = np.where(whole, f, -1).astype(np.int64)  # not a whole number: malformed
        valid = np.packbits(~nan, bitorder="little") if nan.any() else None
        return Column(INT, n, None, None, ints, valid, 0, values)
    return column_of(arr.cast(pa.string()), name)


# Arrow allows unsigned indices too; a kernel reads signed ones, each as wide as needed
_SIGNED = {np.dtype(np.uint8): np.int16, np.dtype(np.uint16): np.int32, np.dtype(np.uint32): np.int64,
           np.dtype(np.uint64): np.int64}


def _dictionary_column(arr: Any, values: Any, name: str) -> Column:
    """A dictionary array as a DICT Column: its indices as they are (no copy where signed)
    and its dictionary as a Column of its own."""
    entries = column_of(arr.dictionary, name)
    if entries.kind not in (STR32, STR64, INT):  # pragma: no cover - Arrow nests no dictionaries
        return column_of(arr.cast(arr.type.value_type), name)
    idx = arr.indices
    n = len(idx)
    dtype = numpy_dtype(idx.type)
    index = numpy_values(idx)
    if dtype in _SIGNED:
        index = index.astype(_SIGNED[dtype])
    valid, voff = _bitmap(idx)
    return Column(DICT, n, None, None, None, valid, voff, values, index, entries)


_M64 = (1 << 64) - 1


def _null(c: Column, i: int) -> bool:
    if c.valid is None:
        return False
    b = c.voff + i
    return not (int(c.valid[b >> 3]) >> (b & 7)) & 1


def _bytes(c: Column, i: int) -> bytes:
    return c.data[int(c.offsets[i]):int(c.offsets[i + 1])].tobytes()


def _entry(c: Column, i: int) -> tuple[Column, int] | None:
    """The column and row that hold cell ``i``'s value: its dictionary entry for a DICT
    column (None where the index is missing), the cell itself otherwise."""
    if c.kind != DICT:
        return c, i
    if _null(c, i):
        return None
    return c.dictionary, int(c.index[i])


def table_columns(server: Any, ids: list[Any], n: int) -> list[Column]:
    """The six columns ``audit_rows`` takes: the server, then ``ids`` (vendor, device,
    class, subvendor, subdevice; None for a column the table does not have)."""
    return [column_of(server, "server")] + [absent(n) if v is None else column_of(v, name)
                                            for v, name in zip(ids, FIELDS)]


def nameless(c: Column, i: int) -> bool:
    """Whether server cell ``i`` names no server: missing, or text that is empty or only
    whitespace (``str.isspace``)."""
    at = _entry(c, i)
    if at is None:
        return True
    c, i = at
    if c.kind == ABSENT or _null(c, i):
        return True
    if c.kind == INT:
        return False
    return _bytes(c, i).decode("utf-8", "surrogateescape").strip() == ""


def cell_value(c: Column, i: int, maxdigits: int) -> tuple[int, int, int]:
    """``(CELL_*, value, digits)`` of cell ``i``: the rule both kernels follow.

    A text cell is :func:`gpuclass.ids.cell_parts` of its bytes; an integer cell is its
    value (digits -1), ``CELL_BAD`` outside ``[0, 16**maxdigits)``; a dictionary cell is
    its entry's.
    """
    at = _entry(c, i)
    if at is None:
        return CELL_MISSING, 0, 0
    c, i = at
    if c.kind == ABSENT or _null(c, i):
        return CELL_MISSING, 0, 0
    if c.kind == INT:
        v = int(c.ints[i])
        return (CELL_OK, v, -1) if 0 <= v < (1 << (4 * maxdigits)) else (CELL_BAD, 0, 0)
    return cell_parts(_bytes(c, i), maxdigits)


def cell_text(c: Column, i: int) -> str | None:
    """Cell ``i`` as the user wrote it, for messages (None when missing)."""
    at = _entry(c, i)
    if at is None:
        return None
    c, i = at
    if c.kind == ABSENT or _null(c, i):
        return None
    if c.kind == INT:  # as given (a float such as 1.5 is read as -1: malformed)
        try:
            value = c.source[i]
            value = value.as_py() if hasattr(value, "as_py") else value
        except (TypeError, IndexError, KeyError):
            value = int(c.ints[i])
        return str(value)
    return _bytes(c, i).decode("utf-8", "replace")


def problem_text(code: int, cell: str | None) -> str:
    """A row's problem from its code (``field * 4 + CELL_*``) and the offending cell's text.

    >>> problem_text(1 * 4 + CELL_BAD, "zz"), problem_text(2 * 4 + CELL_MISSING, None)
    ("device 'zz' is not a hex ID", 'class missing')
    """
    field, kind = FIELDS[code // 4], code % 4
    if kind == CELL_PAIR:
        return "subvendor and subdevice go together"
    if kind == CELL_MISSING:
        return f"{field} missing"
    return f"{field} {cell!r} is not a hex ID"


# Offsets are compared a slice at a time: a whole column's comparison would allocate a
# temporary as long as the column, which a Dask worker (whose allocator maps every large
# block afresh) pays for in page faults on every call.
_SLICE = 1 << 16  # a 64 KiB temporary: below the allocator's mmap threshold


def _nondecreasing(a: np.ndarray) -> bool:
    """Whether ``a`` never decreases (checked in slices: no temporary as long as ``a``).

    >>> _nondecreasing(np.array([0, 2, 2, 5])), _nondecreasing(np.array([0, 3, 2]))
    (True, False)
    """
    last = a.shape[0] - 1
    for lo in range(0, last, _SLICE):
        hi = min(lo + _SLICE, last)
        if (a[lo + 1:hi + 1] < a[lo:hi]).any():
            return False
    return True


def _indices_in_range(c: Column, k: int) -> bool:
    """Whether every present cell of a DICT column names an entry in ``[0, k)`` (an index
    under a missing cell may be anything, as Arrow has it); checked in slices."""
    index = c.index
    n = index.shape[0]
    for lo in range(0, n, _SLICE):
        part = index[lo:lo + _SLICE]
        if int(part.min()) >= 0 and int(part.max()) < k:
            continue
        if c.valid is None:
            return False
        start = c.voff + lo
        first = start >> 3
        bits = np.unpackbits(c.valid[first:(start + len(part) + 7) >> 3], bitorder="little")
        present = bits[start - (first << 3):][:len(part)].astype(bool)
        if bool((((part < 0) | (part >= k)) & present).any()):
            return False
    return True


_INDEX_TYPES = (np.dtype(np.int8), np.dtype(np.int16), np.dtype(np.int32), np.dtype(np.int64))


def _check_column(name: str, c: Column) -> None:
    """A Column whose buffers hold its ``n`` cells (the kernels read them unchecked)."""
    n = c.n
    if c.kind not in (ABSENT, STR32, STR64, INT, DICT):
        raise InputError(f"{name}: unknown column kind {c.kind}")
    if c.kind == DICT:
        d = c.dictionary
        if not isinstance(d, Column) or d.kind not in (STR32, STR64, INT):
            raise InputError(f"{name}: a dictionary column needs its entries as a text or integer Column")
        _check_column(f"{name} (dictionary)", d)
        if (not isinstance(c.index, np.ndarray) or c.index.dtype not in _INDEX_TYPES
                or c.index.shape != (n,) or not c.index.flags.c_contiguous):
            raise InputError(f"{name}: expected {n} indices in one buffer (int8, int16, int32 or int64)")
    if c.kind in (STR32, STR64):
        want = np.int64 if c.kind == STR64 else np.int32
        if (c.offsets is None or c.offsets.dtype != want or c.offsets.shape != (n + 1,)
                or not c.offsets.flags.c_contiguous
                or c.data is None or c.data.dtype != np.uint8 or c.data.ndim != 1
                or not c.data.flags.c_contiguous
                or (n and (int(c.offsets[0]) < 0 or int(c.offsets[-1]) > c.data.shape[0]
                           or not _nondecreasing(c.offsets)))):
            raise InputError(f"{name}: inconsistent string buffers")
    if c.kind == INT and (c.ints is None or c.ints.dtype != np.int64 or c.ints.shape != (n,)
                          or not c.ints.flags.c_contiguous):
        raise InputError(f"{name}: expected {n} int64 cells in one buffer")
    if c.valid is not None and (c.valid.dtype != np.uint8 or c.valid.ndim != 1 or c.voff < 0
                                or not c.valid.flags.c_contiguous or c.valid.shape[0] * 8 < c.voff + n):
        raise InputError(f"{name}: validity bitmap too short or not one buffer")
    if c.kind == DICT and n and not _indices_in_range(c, c.dictionary.n):
        raise InputError(f"{name}: a dictionary index outside its {c.dictionary.n} entries")


def prepare_cells_args(column: Any, field: Any) -> tuple[Column, int, int, bool]:
    """Check ``parse_id_cells``' arguments: a Column and one of ``FIELDS``; returns the
    column, its length, the field's most digits and whether it is the class.

    >>> prepare_cells_args(absent(2), "class")[1:]
    (2, 6, True)
    """
    if not isinstance(column, Column):
        raise InputError("column: expected a Column")
    if field not in FIELDS:
        raise InputError(f"field: {field!r} is not one of {', '.join(FIELDS)}")
    _check_column(field, column)
    return column, column.n, WIDTHS[FIELDS.index(field)], field == "class"


def prepare_hash_args(column: Any, seed: Any) -> tuple[Column, int, int]:
    """Check ``key_hashes``' arguments: a present Column and a seed in [0, 2**64)."""
    if not isinstance(column, Column) or column.kind == ABSENT:
        raise InputError("column: expected a Column with cells")
    _check_column("column", column)
    seed = int(seed)
    if not 0 <= seed < 1 << 64:
        raise InputError("seed: expected an integer in [0, 2**64)")
    return column, column.n, seed


def prepare_text_args(column: Any) -> tuple[Column, int]:
    """Check ``text_rising``'s argument: a Column of text (32- or 64-bit offsets) without a
    missing cell."""
    if not isinstance(column, Column) or column.kind not in (STR32, STR64) or column.valid is not None:
        raise InputError("column: expected a Column of text without missing cells")
    _check_column("column", column)
    return column, column.n


def prepare_take_args(column: Any, indices: Any) -> tuple[Column, np.ndarray, int]:
    """Check ``take_text``'s arguments: a Column as ``text_rising`` takes, and 1-D integer
    indices below its cells (one below 0 names no cell)."""
    column, n = prepare_text_args(column)
    idx = np.asarray(indices)
    if idx.ndim != 1 or (idx.dtype.kind not in "iu" and len(idx)):
        raise InputError("indices: expected a 1-D array of integers")
    if len(idx) and int(idx.max()) >= n:
        raise InputError(f"indices: {int(idx.max())} is not below the column's {n} cells")
    idx = np.ascontiguousarray(idx, dtype=np.int64)
    return column, idx, idx.shape[0]


def take_output(empty: Any, n: int, dtype: Any, name: str) -> np.ndarray:
    """An output of ``take_text``: ``empty(n, dtype)`` (``numpy.empty`` where ``empty`` is
    None), refused unless it is a writeable, C-contiguous 1-D array of ``n`` ``dtype``
    items (both kernels write into it)."""
    out = (np.empty if empty is None else empty)(n, dtype)
    if not (isinstance(out, np.ndarray) and out.dtype == dtype and out.shape == (n,)
            and out.flags.c_contiguous and out.flags.writeable):
        raise InputError(f"empty: the {name} it gave are not a writeable, contiguous array of {n} {np.dtype(dtype)}")
    return out


def prepare_keyset_args(hashes: Any, base: Any) -> tuple[np.ndarray, int, int]:
    """Check ``KeySet.add``'s arguments: uint64 hashes (1-D) and a position >= 0."""
    h = np.ascontiguousarray(hashes)
    if h.dtype != np.uint64 or h.ndim != 1:
        raise InputError("hashes: expected a 1-D uint64 array")
    base = int(base)
    if not 0 <= base < 1 << 62:
        raise InputError("base: expected a position >= 0")
    return h, h.shape[0], base


def mix64(x: int) -> int:
    """The 64-bit finalizer both kernels use for key hashes (SplitMix64's)."""
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & _M64
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & _M64
    return x ^ (x >> 31)


def prepare_audit_args(tables: Any, columns: Any, n_cards: Any) -> tuple[list[Column], int, int]:
    """Check ``audit_rows``' arguments: six Columns of one length (server first)."""
    cols = list(columns)
    if len(cols) != 6 or not all(isinstance(c, Column) for c in cols):
        raise InputError("columns: expected six Columns (server, vendor, device, class, subvendor, "
                         "subdevice)")
    n = cols[0].n
    for name, c in zip(("server", *FIELDS), cols):
        if c.n != n:
            raise InputError(f"{name}: length {c.n} does not match the server column's {n}")
        _check_column(name, c)
    if cols[0].kind == ABSENT:
        raise InputError("server: a device table needs a server column")
    n_cards = int(n_cards)
    if not 0 <= n_cards <= 32766:
        raise InputError(f"n_cards: {n_cards} is not in [0, 32766]")
    return cols, n, n_cards


def overflow_error(row: int) -> InputError:
    return InputError(f"slices: the server of row {row} sums past the int32 range")
