"""Device tables as Arrow columns: the one place that turns what a user hands over (a pyarrow
Table or RecordBatch, a pandas DataFrame, a dict of columns, a Parquet file's batches) into
the columns the device engine reads, or refuses it with a typed error.

The engine reads a server column and five ID columns as text (``string``, ``large_string``,
``binary``), integers, floats (whole numbers; NaN is a missing cell), or dictionaries of
those.  Anything else is made one of them here, the same way for every door:

- ``string_view`` and ``binary_view`` become ``large_string`` / ``large_binary``;
- a server column of ``binary`` (as Hive and Impala write names) becomes text, each cell
  decoded as UTF-8 (a byte that is not UTF-8 reads as U+FFFD); a server column of floats
  (pandas' integers with gaps) becomes integers where every value is whole;
- booleans, dates, times, timestamps, durations and decimals become their text, which is
  not an ID (the row is flagged, as the same table written to CSV is);
- a pandas ``object`` column mixing text and numbers is read cell by cell: text as it is,
  an integer as the hex text of its value (:func:`integer_text`: a class up to ``0xffff``
  with four digits, as an integer class column reads), a whole float as that integer, NaN
  and None as missing;
- nested types (lists, structs, maps, unions) hold no cell: an
  :class:`~gpuclass.errors.InputError` naming the column and its type.

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

__all__ = ["as_table", "device_arrays", "column_array", "integer_text", "cell_text_of"]

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
        return bytes(value).decode("utf-8", "replace")
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


def as_table(data: Any, server_column: str | None = None, what: str = "audit_table") -> Any:
    """``data`` (a pyarrow Table or RecordBatch, a pandas DataFrame, a dict of columns) as
    a pyarrow Table of its device columns, each converted by :func:`column_array`."""
    import pyarrow as pa

    if isinstance(data, pa.RecordBatch):
        data = pa.Table.from_batches([data])
    if isinstance(data, pa.Table):
        names = field_names(data.column_names, server_column)
        keep = list(dict.fromkeys(n for n in names.values() if n is not None))
        return data.select(keep)
    if type(data).__module__.startswith("pandas") and hasattr(data, "columns"):
        labels = list(data.columns)
        columns = {str(c): c for c in labels}
        if len(columns) != len(labels):
            raise InputError(f"{what}: the frame names a column twice ({labels})")
    elif isinstance(data, dict):
        columns = {str(k): k for k in data}
    else:
        raise InputError(f"{what}: expected a pyarrow Table or RecordBatch, a pandas DataFrame or a "
                         f"dict of columns, got {type(data).__name__}")
    names = field_names(list(columns), server_column)
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
    return pa.Table.from_arrays(arrays, names=keep)


def _text(arr: Any) -> Any:
    """The cells of ``arr`` as text, as pyarrow writes them (``true``, ``2024-01-31``, ...),
    booleans as ``True``/``False`` (as pandas writes them to CSV)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_boolean(arr.type):
        return pc.if_else(arr, pa.scalar("True"), pa.scalar("False"))
    return pc.cast(arr, pa.string())


def _server(arr: Any, name: str) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    t = arr.type
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_integer(t) or pa.types.is_null(t):
        return arr
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t) \
            or _is_view(t):
        try:
            return pc.cast(arr, pa.large_string() if _is_view(t) or pa.types.is_large_binary(t) else pa.string())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # not UTF-8: decoded cell by cell
            return pa.array([None if v is None else bytes(v).decode("utf-8", "replace")
                             for v in arr.to_pylist()], pa.string())
    if pa.types.is_floating(t):
        values = arr.to_numpy(zero_copy_only=False)
        whole = arr.null_count == len(arr) or bool(pc.all(pc.equal(pc.floor(arr), arr)).as_py())
        import numpy as np

        if whole and (arr.null_count == len(arr) or float(np.nanmax(np.abs(values))) < 2 ** 62):
            return pc.cast(arr, pa.int64())
        return _text(arr)
    return _text(arr)


def _is_view(t: Any) -> bool:
    import pyarrow as pa

    return any(getattr(pa.types, f, lambda _: False)(t) for f in ("is_string_view", "is_binary_view"))


def _ids(arr: Any, name: str) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    t = arr.type
    if (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t)
            or pa.types.is_large_binary(t) or pa.types.is_integer(t) or pa.types.is_floating(t)
            or pa.types.is_null(t)):
        return arr
    if _is_view(t) or pa.types.is_fixed_size_binary(t):
        return pc.cast(arr, pa.large_binary() if "binary" in str(t) else pa.large_string())
    return _text(arr)


def _plain(arr: Any, name: str, server: bool) -> Any:
    """One column in a type the engine reads (see the module docstring)."""
    import pyarrow as pa

    t = arr.type
    if isinstance(t, pa.ExtensionType):
        arr, t = arr.storage, t.storage_type
    if pa.types.is_dictionary(t):
        values = _plain(arr.dictionary, name, server)
        if values.type == arr.dictionary.type:
            return arr
        return pa.DictionaryArray.from_arrays(arr.indices, values)
    if pa.types.is_nested(t):
        raise InputError(f"column {name!r} holds {t}: a device table's cells are text or integers")
    return _server(arr, name) if server else _ids(arr, name)


def device_arrays(batch: Any, fields: dict[str, str | None]) -> tuple[Any, list[Any]]:
    """The server column and the five ID columns (``ID_FIELDS`` order; None where the table
    lacks one) of a record batch, in types the engine reads."""
    from .columns import ID_FIELDS

    server = _plain(batch.column(fields["server"]), fields["server"], True)
    ids = [None if fields[f] is None else _plain(batch.column(fields[f]), fields[f], False) for f in ID_FIELDS]
    return server, ids
