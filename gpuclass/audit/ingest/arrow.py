"""Device tables as Arrow columns: the one place that turns what a user hands over (a pyarrow
Table or RecordBatch, a pandas DataFrame, a dict of columns, a Parquet file's batches) into
the columns the device engine reads, or refuses it with a typed error.

The engine reads a server column and five ID columns as text (``string``, ``large_string``,
``binary``), integers, floats (whole numbers; NaN is a missing cell), or dictionaries of
those.  Anything else is made one of them here, the same way for every door:

- ``string_view`` and ``binary_view`` become ``large_string`` / ``large_binary``;
- a server column of ``binary``, ``large_binary``, ``binary_view`` or fixed-size binary (as
  Hive and Impala write names) becomes text, each cell decoded as UTF-8, the bytes of a
  cell that are not UTF-8 written as ``\\xNN`` (Python's ``backslashreplace``: two names
  that differ only there stay two, and JSON, table, CSV and Parquet outputs all write the
  same text); a server column of floats (pandas' integers with gaps; half floats too)
  becomes integers where every value is whole;
- booleans, dates, times, timestamps, durations and decimals become their text, which is
  not an ID (the row is flagged, as the same table written to CSV is);
- a pandas ``object`` column mixing text and numbers is read cell by cell: text as it is,
  an integer as the hex text of its value (:func:`integer_text`: a class up to ``0xffff``
  with four digits, as an integer class column reads), a whole float as that integer, NaN
  and None as missing;
- a dictionary is read as its values (decoded where they are not a type the engine
  reads), an extension type as its storage;
- every other type (lists of any kind, structs, maps, unions, run-end encoded, intervals)
  holds no ID: an :class:`~gpuclass.errors.InputError` naming the file (or "table"), the
  column and its type, raised before the first batch (:func:`refusal` decides, for every
  door: Parquet files, ``audit_table``, ``audit_frame``, dicts of columns, CSV batches).
- a column the table is read by named twice is an ``InputError`` naming it
  (:func:`~gpuclass.audit.ingest.columns.device_columns`).

>>> import pandas as pd
>>> t = as_table(pd.DataFrame({"server": ["a", "b"], "vendor": ["10de", 0x10DE],
...                            "device": [0x27B0, 0x27B0], "class": ["0300", 0x0300]}))
>>> t.column("vendor").to_pylist(), t.column("class").to_pylist()
(['10de', '10de'], ['0300', '300'])
"""

from __future__ import annotations

import math
from typing import Any

from ...errors import InputError
from .columns import DEVICE_FIELDS, field_names

__all__ = ["as_table", "device_arrays", "plain_column", "refusal", "check_schema", "is_view", "column_array",
           "integer_text", "cell_text_of"]

_BITS = {"vendor": 16, "device": 16, "subvendor": 16, "subdevice": 16, "class": 24}


def integer_text(value: int, field: str) -> str:
    """How an integer cell of a mixed column is written as text so that it reads as an
    integer column's cell would: the hex digits of its value (a class of at most ``0xffff``
    then has at most four, so it reads as base class and subclass, as an integer class that
    small does: :func:`gpuclass.ids.class_value`); a value outside the field's range (or any
    server name) as its decimal text.

    >>> integer_text(0x0300, "class"), integer_text(0x030000, "class"), integer_text(0x10DE, "vendor")
    ('300', '30000', '10de')
    >>> integer_text(-1, "vendor"), integer_text(7, "server")
    ('-1', '7')
    """
    bits = _BITS.get(field)
    if bits is None or not 0 <= value < 1 << bits:
        return str(value)
    return f"{value:x}"  # a class up to 0xffff has at most 4 digits, so it reads short too


def cell_text_of(value: Any, field: str) -> str | None:
    """One cell of a mixed column as the text :func:`column_array` gives it (None: missing)."""
    if value is None or type(value).__name__ in ("NAType", "NaTType"):
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", "backslashreplace")
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return str(bool(value))
    if hasattr(value, "__index__"):  # int, numpy's integers
        return integer_text(int(value.__index__()), field)
    if isinstance(value, float) or type(value).__module__ == "numpy":
        try:
            f = float(value)
        except (TypeError, ValueError):
            return str(value)
        if math.isnan(f):
            return None
        if f.is_integer() and abs(f) < 2 ** 63:
            return integer_text(int(f), field)
        return repr(f)
    return str(value)


def column_array(values: Any, field: str) -> Any:
    """A column (a pandas Series, a numpy array, a list, a pyarrow array) as a pyarrow array
    the engine reads (see the module docstring)."""
    import pyarrow as pa

    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        return values
    try:
        return pa.array(values, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError):
        cells = values.tolist() if hasattr(values, "tolist") else list(values)
        return pa.array([cell_text_of(v, field) for v in cells], pa.string())


def as_table(data: Any, server_column: str | None = None, what: str = "table") -> Any:
    """``data`` (a pyarrow Table or RecordBatch, a pandas DataFrame, a dict of columns) as
    a pyarrow Table of its device columns, each converted by :func:`column_array`; a
    column named twice or of a type no device column has (:func:`refusal`) is an
    :class:`~gpuclass.errors.InputError` naming ``what``, the column and its type."""
    import pyarrow as pa

    if isinstance(data, pa.RecordBatch):
        data = pa.Table.from_batches([data])
    if isinstance(data, pa.Table):
        names = field_names(data.column_names, server_column, what)
        check_schema(data.schema, names, what)
        keep = list(dict.fromkeys(n for n in names.values() if n is not None))
        return data.select(keep)
    if type(data).__module__.startswith("pandas") and hasattr(data, "columns"):
        labels = list(data.columns)
        columns = {str(c): c for c in labels}
        if len(columns) != len(labels):
            twice = sorted({str(c) for c in labels if [str(x) for x in labels].count(str(c)) > 1})
            raise InputError(f"{what}: column {', '.join(map(repr, twice))} is named twice ({labels})")
    elif isinstance(data, dict):
        columns = {str(k): k for k in data}
    else:
        raise InputError(f"{what}: expected a pyarrow Table or RecordBatch, a pandas DataFrame or a "
                         f"dict of columns, got {type(data).__name__}")
    names = field_names(list(columns), server_column, what)
    arrays, keep = [], []
    for field in DEVICE_FIELDS:
        name = names[field]
        if name is None or name in keep:
            continue
        keep.append(name)
        arrays.append(column_array(data[columns[name]], field))
    lengths = {len(a) for a in arrays}
    if len(lengths) > 1:
        raise InputError(f"{what}: the columns differ in length ({sorted(lengths)})")
    table = pa.Table.from_arrays(arrays, names=keep)
    check_schema(table.schema, {n: n for n in keep}, what)
    return table


def _text(arr: Any) -> Any:
    """The cells of ``arr`` as text, as pyarrow writes them (``true``, ``2024-01-31``, ...),
    booleans as ``True``/``False`` (as pandas writes them to CSV)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_boolean(arr.type):
        return pc.if_else(arr, pa.scalar("True"), pa.scalar("False"))
    return pc.cast(arr, pa.string())


def is_view(t: Any) -> bool:
    """Whether ``t`` is ``string_view`` or ``binary_view`` (few compute kernels take them)."""
    import pyarrow as pa

    return any(getattr(pa.types, f, lambda _: False)(t) for f in ("is_string_view", "is_binary_view"))


def _is_bytes(t: Any) -> bool:
    import pyarrow as pa

    return (pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t)
            or str(t) == "binary_view")


def _readable(t: Any) -> bool:
    """Whether a column of type ``t`` (no dictionary, no extension) holds cells the engine
    reads as they are or as their text: the one list of what a device column may be."""
    import pyarrow as pa

    return (pa.types.is_string(t) or pa.types.is_large_string(t) or is_view(t) or _is_bytes(t)
            or pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t)
            or pa.types.is_null(t) or pa.types.is_decimal(t)
            or (pa.types.is_temporal(t) and not pa.types.is_interval(t)))


def _storage(t: Any) -> Any:
    """``t`` with extension types and dictionaries taken off (their storage and values)."""
    import pyarrow as pa

    while True:
        if isinstance(t, pa.ExtensionType):
            t = t.storage_type
        elif pa.types.is_dictionary(t):
            t = t.value_type
        else:
            return t


def refusal(name: str, t: Any, where: str = "table") -> InputError | None:
    """The :class:`~gpuclass.errors.InputError` a device column ``name`` of Arrow type ``t``
    is refused with (None: it is read), naming ``where`` (the file, or "table"), the column
    and its type.  Every door asks this before its first batch (:func:`check_schema`), and
    :func:`plain_column` by it, so what one door refuses every door refuses.

    >>> import pyarrow as pa
    >>> refusal("device", pa.list_(pa.int64()), "x.parquet")
    InputError("x.parquet: column 'device' holds list<item: int64>: a device table's cells are text or integers")
    >>> refusal("device", pa.dictionary(pa.int8(), pa.binary())) is None
    True
    """
    if _readable(_storage(t)):
        return None
    return InputError(f"{where}: column {name!r} holds {t}: a device table's cells are text or integers")


def check_schema(schema: Any, fields: dict[str, str | None], where: str = "table") -> None:
    """Refuse (see :func:`refusal`) the first device column of ``schema`` the engine
    cannot read; ``fields`` the column of each device field (None: absent)."""
    for name in dict.fromkeys(n for n in fields.values() if n is not None):
        problem = refusal(name, schema.field(name).type, where)
        if problem is not None:
            raise problem


def _decoded(arr: Any) -> Any:
    """Bytes as text: UTF-8, where a cell is not UTF-8 its bad bytes written as ``\\xNN``
    (backslashreplace), so two servers that differ only in such bytes stay two and every
    output writes the same text."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if is_view(arr.type) or pa.types.is_fixed_size_binary(arr.type):
        arr = pc.cast(arr, pa.large_binary())
    target = pa.large_string() if pa.types.is_large_binary(arr.type) else pa.string()
    try:
        return pc.cast(arr, target)  # checks that every cell is UTF-8
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return pa.array([None if v is None else v.decode("utf-8", "backslashreplace")
                         for v in arr.to_pylist()], target)


def _server(arr: Any) -> Any:
    import pyarrow as pa

    t = arr.type
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_integer(t) or pa.types.is_null(t):
        return arr  # as the engine reads it (the common case: no pyarrow.compute import)
    import numpy as np
    import pyarrow.compute as pc

    if is_view(t) and not _is_bytes(t):
        return pc.cast(arr, pa.large_string())
    if _is_bytes(t):
        return _decoded(arr)
    if pa.types.is_floating(t):
        if pa.types.is_float16(t):  # compute has few kernels for half floats
            arr = pc.cast(arr, pa.float32())
        values = arr.to_numpy(zero_copy_only=False)
        whole = arr.null_count == len(arr) or bool(pc.all(pc.equal(pc.floor(arr), arr)).as_py())
        if whole and (arr.null_count == len(arr) or float(np.nanmax(np.abs(values))) < 2 ** 62):
            return pc.cast(arr, pa.int64())
    return _text(arr)


def _ids(arr: Any) -> Any:
    import pyarrow as pa

    t = arr.type
    if (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t)
            or pa.types.is_large_binary(t) or pa.types.is_integer(t) or pa.types.is_floating(t)
            or pa.types.is_null(t)):
        return arr
    import pyarrow.compute as pc

    if is_view(t) or pa.types.is_fixed_size_binary(t):
        return pc.cast(arr, pa.large_binary() if _is_bytes(t) else pa.large_string())
    return _text(arr)


def plain_column(arr: Any, name: str, server: bool, where: str = "table") -> Any:
    """One device column (``server``: the server column) in a type the engine reads (see
    the module docstring), or its :func:`refusal`: the one conversion every door's
    batches pass through on their way to the engine."""
    import pyarrow as pa

    problem = refusal(name, arr.type, where)
    if problem is not None:
        raise problem
    t = arr.type
    if isinstance(t, pa.ExtensionType):
        arr, t = arr.storage, t.storage_type
    if pa.types.is_dictionary(t):
        values = plain_column(arr.dictionary, name, server, where)
        if values.type == arr.dictionary.type:
            return arr
        return pa.DictionaryArray.from_arrays(arr.indices, values)
    return _server(arr) if server else _ids(arr)


def device_arrays(batch: Any, fields: dict[str, str | None], where: str = "table") -> tuple[Any, list[Any]]:
    """The server column and the five ID columns (``ID_FIELDS`` order; None where the table
    lacks one) of a record batch, in types the engine reads."""
    from .columns import ID_FIELDS

    server = plain_column(batch.column(fields["server"]), fields["server"], True, where)
    ids = [None if fields[f] is None else plain_column(batch.column(fields[f]), fields[f], False, where)
           for f in ID_FIELDS]
    return server, ids
