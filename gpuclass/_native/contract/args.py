"""Argument checks shared by every kernel pair's ``def`` entry points.

Checks run in Python before any kernel so that the compiled core and the twin
reject exactly the same inputs with exactly the same error.

>>> as_key_array([1, 2]).dtype
dtype('uint64')
>>> as_key_array(np.array([-1]))
Traceback (most recent call last):
...
gpuclass.errors.InputError: keys: negative value -1 at index 0
"""

from __future__ import annotations

import os

import numpy as np

from ...errors import InputError

__all__ = ["as_key_array", "check_sorted_keys", "as_id_array", "as_unsigned", "as_int64",
           "contiguous", "usable_cpus"]

_UNSIGNED = (np.uint8, np.uint16, np.uint32, np.uint64)


def as_key_array(values, name: str = "keys") -> np.ndarray:
    """A 1-D unsigned integer array: unsigned input as is, other integers range-checked."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        if arr.ndim == 0:
            arr = arr.reshape(1)
        else:
            raise InputError(f"{name}: expected a 1-D array, got shape {arr.shape}")
    if arr.dtype.type in _UNSIGNED:
        return arr
    if arr.size == 0:
        return arr.astype(np.uint64)
    if arr.dtype.kind != "i":
        raise InputError(f"{name}: expected an integer array, got dtype {arr.dtype}")
    lo = int(arr.min())
    if lo < 0:
        at = int(np.argmin(arr))
        raise InputError(f"{name}: negative value {lo} at index {at}")
    return arr.astype(np.uint64)


def as_unsigned(values, name: str, dtype, limit: int) -> np.ndarray:
    """A 1-D array as ``dtype``: kept as is when it already has that dtype, else
    range-checked against ``limit`` and converted."""
    arr = as_key_array(values, name)
    if arr.dtype == dtype:
        return arr
    if arr.size and int(arr.max()) > limit:
        at = int(np.argmax(arr))
        raise InputError(f"{name}: value {int(arr[at]):#x} at index {at} exceeds {limit:#x}")
    return arr.astype(dtype)


def as_id_array(values, name: str, bits: int = 16) -> np.ndarray:
    """A 1-D array of IDs of ``bits`` bits (16: vendor/device; 24: class), as uint16/uint32."""
    return as_unsigned(values, name, np.uint16 if bits <= 16 else np.uint32, (1 << bits) - 1)


def check_sorted_keys(keys) -> np.ndarray:
    """Sorted, unique, unsigned keys for an index (a contiguous copy when needed)."""
    arr = as_key_array(keys, "keys")
    if arr.size > 1 and not bool(np.all(arr[1:] > arr[:-1])):
        raise InputError("keys: must be sorted in strictly increasing order")
    return contiguous(arr)


def as_int64(values, name: str) -> np.ndarray:
    """A 1-D int64 array of group ids (zero-copy for int64)."""
    arr = np.asarray(values)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise InputError(f"{name}: expected a 1-D array, got shape {arr.shape}")
    if arr.dtype == np.int64:
        return arr
    if arr.size == 0:
        return arr.astype(np.int64)
    if arr.dtype.kind not in "iu" and arr.dtype != np.bool_:
        raise InputError(f"{name}: expected an integer array, got dtype {arr.dtype}")
    if arr.dtype == np.uint64 and int(arr.max()) > 0x7FFFFFFFFFFFFFFF:
        at = int(np.argmax(arr))
        raise InputError(f"{name}: value {int(arr[at])} at index {at} exceeds the int64 range")
    return arr.astype(np.int64)


def contiguous(a: np.ndarray) -> np.ndarray:
    """``a`` as a C-contiguous, aligned array: zero-copy when it is one, one copy (never per
    row) if not.  An unaligned array (a view at an odd offset of a buffer, such as a
    memory-mapped file) would make the kernels' 64-bit loads misaligned."""
    if a.flags.c_contiguous and a.flags.aligned:
        return a
    return np.require(a, requirements=("C", "A"))


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask, where the platform has one),
    which is what a kernel that shares its work out to threads can use."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # no sched_getaffinity on this platform
        return os.cpu_count() or 1
