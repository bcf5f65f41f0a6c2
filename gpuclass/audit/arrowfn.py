"""Arrow's compute functions and numpy arrays as Arrow arrays, for the device engine's path,
without importing ``pyarrow.compute`` or ``numpy.ma``.

``import pyarrow.compute`` builds a Python wrapper for each of Arrow's ~400 functions (45-60
ms, a tenth of a 1M-row Parquet audit's whole process), and ``pa.array`` of a numpy array
first asks whether it is a pandas object, which imports ``numpy.ma`` (20-30 ms).  The same
kernels are called here by name (``pyarrow._compute.call_function``, which the wrappers
call too), and numpy arrays become Arrow arrays over their own memory.  The answers are
those of ``pyarrow.compute`` and ``pa.array`` (``tests/audit/test_arrowfn.py``).

A sorted device table's audit needs none of Arrow's compute kernels: its text keys are
ordered (:func:`rising`, :func:`greater_equal`) and gathered (:func:`take_text`) by the
core, and ``pyarrow._compute`` is imported only where another type or a missing value
asks for it (its function registry is about 7 MiB of a 100k-row Parquet audit's peak
memory).  ``tests/audit/test_arrowfn.py`` holds those answers equal to Arrow's.

>>> import numpy as np
>>> a = from_numpy(np.array([3, 1, 2], np.int64))
>>> take(a, np.array([2, 0])).to_pylist(), call("greater", a, 1).to_pylist()
([2, 3], [True, False, True])
>>> from_numpy(np.array([True, False])).to_pylist()
[True, False]
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from .._native import numpy_dtype, numpy_values
from .pool import pooled_empty

# Arrow's integer and float types by numpy's dtype (the native byte order's), without
# pyarrow's own numpy support (pa.from_numpy_dtype needs it)
_ARROW_OF = {numpy_dtype(t).str: t for t in (
    pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64(),
    pa.float16(), pa.float32(), pa.float64())}

__all__ = ["call", "from_numpy", "to_numpy", "take", "take_text", "cast", "fill_null", "rising",
           "greater_equal", "is_text", "is_null_mask", "indices_within"]


def call(name: str, *args: Any, options: Any = None) -> Any:
    """Arrow's compute function ``name`` on ``args`` (Python values become scalars)."""
    from pyarrow import _compute

    return _compute.call_function(name, [a if isinstance(a, (pa.Array, pa.ChunkedArray, pa.Scalar))
                                         else pa.scalar(a) for a in args], options)


def is_text(t: Any) -> bool:
    """Whether ``t`` is string, binary, or a large one of them."""
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) \
        or pa.types.is_large_binary(t)


def _plain_text(values: Any) -> bool:
    """A text array (string, binary, large or not) without a missing value: the core's."""
    return isinstance(values, pa.Array) and is_text(values.type) and not values.null_count


def from_numpy(values: np.ndarray, mask: np.ndarray | None = None) -> Any:
    """A 1-D numpy array of integers, floats or booleans as an Arrow array (over the same
    memory where Arrow's layout is numpy's: not booleans, which Arrow packs in bits);
    ``mask``: True where the value is missing."""
    values = np.ascontiguousarray(values)
    n = len(values)
    if values.dtype == np.bool_:
        data = pa.py_buffer(np.packbits(values, bitorder="little"))
        typ = pa.bool_()
    else:
        data = pa.py_buffer(values)
        typ = _ARROW_OF.get(values.dtype.str) or pa.from_numpy_dtype(values.dtype)
    validity = None
    nulls = 0
    if mask is not None and len(mask):
        mask = np.asarray(mask, dtype=bool)
        nulls = int(mask.sum())
        if nulls:
            validity = pa.py_buffer(np.packbits(~mask, bitorder="little"))
    return pa.Array.from_buffers(typ, n, [validity, data], null_count=nulls)


def to_numpy(values: Any) -> np.ndarray:
    """A column (an Arrow array, or a table's chunked column) without missing values as a
    numpy array (``ChunkedArray.to_numpy`` looks for pandas first, which imports it).
    Numbers and booleans are read from their buffers, so that this needs no numpy support
    in pyarrow itself: the command's process imports pyarrow before numpy (see
    :mod:`gpuclass.audit.ingest.parquet`)."""
    if isinstance(values, pa.ChunkedArray):
        chunks = values.chunks
        if len(chunks) == 1:
            return _numbers(chunks[0])
        if not chunks:
            return np.empty(0, numpy_dtype(values.type) or values.type.to_pandas_dtype())
        return np.concatenate([_numbers(c) for c in chunks])
    return _numbers(values)


def _numbers(arr: Any) -> np.ndarray:
    return numpy_values(arr) if not arr.null_count else arr.to_numpy(zero_copy_only=False)


def take(values: Any, indices: Any) -> Any:
    """``values.take(indices)`` (indices a numpy array or an Arrow array)."""
    if isinstance(indices, np.ndarray):
        indices = from_numpy(indices)
    return call("take", values, indices)


def take_text(values: Any, index: np.ndarray) -> Any:
    """``take(values, index)``, an index below 0 taking a missing value (a numpy array of
    integers); a text array without missing values is gathered by the core."""
    index = np.asarray(index)
    if not _plain_text(values) or (len(index) and int(index.max()) >= len(values)):
        return take(values, from_numpy(index, mask=index < 0))  # (Arrow raises its IndexError)
    from .._native import core, key_column

    # the bytes (which the result keeps) and the int64 offsets from Arrow's pool: a Dask
    # worker's glibc maps a numpy array afresh each time (see audit.pool).  The int32
    # offsets are numpy's: from Arrow's pool (mimalloc), a 1M-row partition's call took
    # 119 more page faults in a process of glibc's defaults, and saved 119 on a worker
    # (benchmarks/scripts/partition_faults.py)
    off, data = core.take_text(key_column(values, "values"), index, pooled_empty)
    m = len(index)
    if not (pa.types.is_large_string(values.type) or pa.types.is_large_binary(values.type)):
        if off[m] > 2**31 - 1:  # Arrow's offset overflow, as its take raises it
            return take(values, from_numpy(index, mask=index < 0))
        off = off.astype(np.int32)
    nulls, validity = 0, None
    if m and int(index.min()) < 0:  # (no mask made where none is missing)
        missing = index < 0
        nulls = int(missing.sum())
        validity = pa.py_buffer(np.packbits(~missing, bitorder="little"))
    return pa.Array.from_buffers(values.type, m, [validity, pa.py_buffer(off), pa.py_buffer(data)],
                                 null_count=nulls)


def cast(values: Any, target: Any) -> Any:
    """``pyarrow.compute.cast(values, target)`` (safe: a value that does not fit raises)."""
    from pyarrow import _compute

    return call("cast", values, options=_compute.CastOptions.safe(target))


def fill_null(values: Any, fill: Any) -> Any:
    """``values`` with each missing value ``fill``."""
    if not values.null_count:
        return values
    return call("coalesce", values, pa.scalar(fill, values.type))


def rising(keys: Any) -> bool:
    """Whether every key is greater than the one before (Arrow's ``greater``; a missing
    key compares as missing, which is not True)."""
    n = len(keys)
    if n < 2:
        return True
    if _plain_text(keys):
        from .._native import core, key_column

        return core.text_rising(key_column(keys, "keys"))
    if isinstance(keys, pa.Array) and pa.types.is_integer(keys.type) and not keys.null_count:
        v = numpy_values(keys)
        return bool((v[1:] > v[:-1]).all())
    above = call("greater", keys.slice(1), keys.slice(0, n - 1))
    return bool(call("all", above).as_py()) and not above.null_count


def greater_equal(a: Any, b: Any) -> tuple[bool, bool]:
    """``(a > b, a == b)`` of two present scalars of one type, as Arrow's ``greater`` and
    ``equal`` answer: text and binary values by their bytes, integers by value, others
    by Arrow's kernels."""
    t = a.type
    if is_text(t):
        x, y = a.as_buffer().to_pybytes(), b.as_buffer().to_pybytes()
    elif pa.types.is_integer(t):
        x, y = a.as_py(), b.as_py()
    else:
        return bool(call("greater", a, b).as_py()), bool(call("equal", a, b).as_py())
    return x > y, x == y


def is_null_mask(values: Any) -> np.ndarray:
    """A bool numpy array: True where ``values`` is missing."""
    return to_numpy(call("is_null", values))


def indices_within(col: Any) -> bool:
    """Whether every index of a dictionary array with none missing names one of its
    entries (numpy's min and max over the indices: Arrow's checks visit each index)."""
    indices = to_numpy(col.indices)
    return not len(indices) or 0 <= int(indices.min()) <= int(indices.max()) < len(col.dictionary)
