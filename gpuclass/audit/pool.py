"""Large arrays from Arrow's memory pool (an audit's outputs, which Arrow columns then share).

>>> iota(4).tolist()
[0, 1, 2, 3]
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["pooled_empty", "iota"]

# Below this size an array is numpy's as usual; from it on, an audit's arrays come from
# Arrow's memory pool, which keeps freed memory for the next call.  glibc maps such blocks
# afresh each time in a process that returns memory to the system at once (Dask's nanny
# sets MALLOC_TRIM_THRESHOLD_ for its workers): a 1M-row audit paid a page fault per 4 KiB
# of its outputs there, every call.
_POOLED_FROM = 1 << 16


def pooled_empty(shape: int | tuple[int, ...], dtype: Any) -> np.ndarray:
    """An uninitialised, writeable array (C order) whose memory comes from Arrow's pool
    when it is large; the memory goes back to the pool with the last array or Arrow
    column that uses it.

    >>> a = pooled_empty((2, 100_000), np.int32)
    >>> a.shape, a.dtype.name, a.flags.writeable, a.flags.c_contiguous
    ((2, 100000), 'int32', True, True)
    """
    dtype = np.dtype(dtype)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if size < _POOLED_FROM:
        return np.empty(shape, dtype)
    import pyarrow as pa

    return np.frombuffer(pa.allocate_buffer(size), dtype).reshape(shape)


def iota(n: int) -> np.ndarray:
    """``np.arange(n)`` (int64) in a :func:`pooled_empty` array."""
    out = pooled_empty(n, np.int64)
    if n:
        out[0] = 0
        out[1:] = 1
        np.cumsum(out, out=out)
    return out
