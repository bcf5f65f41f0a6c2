"""What both Parquet encoders (``parquet.pxi``, ``parquet_py.py``) share: their argument
checks, which reject the same inputs with the same errors before any encoding.

>>> integers([3, 1]).dtype, indices([0, 1], 1).dtype
(dtype('int64'), dtype('uint8'))
>>> indices([0, 2], 1)
Traceback (most recent call last):
...
gpuclass.errors.InputError: indices: index 2 at position 1 does not fit 1 bits
"""

from __future__ import annotations

import numpy as np

from ...errors import InputError
from .args import contiguous

__all__ = ["DICT_SPAN", "DICT_MAX", "uvarint", "zigzag", "integers", "indices", "int64s", "texts"]

DICT_SPAN = 1 << 16  # the widest range of integers looked at for a dictionary
DICT_MAX = 256       # distinct values a dictionary at most


def uvarint(n: int) -> bytes:
    """``n`` (0 or more) as the format's unsigned varint (7 bits a byte, low first)."""
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def zigzag(n: int) -> int:
    """A signed 64-bit integer as the format's unsigned zigzag form."""
    return ((n << 1) ^ (n >> 63)) & 0xFFFF_FFFF_FFFF_FFFF


def _one_d(values, name: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise InputError(f"{name}: expected a 1-D array, got shape {arr.shape}")
    return arr


def integers(values, name: str = "values") -> np.ndarray:
    """A column's integers: int32 or int64 as they are, other integers as int64."""
    arr = _one_d(values, name)
    if arr.dtype in (np.int32, np.int64):
        return contiguous(arr)
    if arr.size == 0 or arr.dtype.kind in "iub":
        if arr.dtype == np.uint64 and arr.size and int(arr.max()) > 0x7FFFFFFFFFFFFFFF:
            raise InputError(f"{name}: value {int(arr.max())} exceeds the int64 range")
        return arr.astype(np.int64)
    raise InputError(f"{name}: expected an integer array, got dtype {arr.dtype}")


def int64s(values, name: str = "values") -> np.ndarray:
    """A column's integers as int64."""
    arr = integers(values, name)
    return arr if arr.dtype == np.int64 else arr.astype(np.int64)


def indices(values, width: int, name: str = "indices") -> np.ndarray:
    """Dictionary indices of ``width`` bits (1 to 8) as uint8."""
    if not isinstance(width, (int, np.integer)) or not 1 <= width <= 8:
        raise InputError(f"{name}: width must be 1 to 8 bits, got {width!r}")
    arr = _one_d(values, name)
    if arr.size and arr.dtype.kind not in "iu":
        raise InputError(f"{name}: expected an integer array, got dtype {arr.dtype}")
    if arr.size and (int(arr.min()) < 0 or int(arr.max()) >= 1 << width):
        bad = arr < 0 if int(arr.min()) < 0 else arr >= 1 << width
        at = int(np.argmax(bad))
        raise InputError(f"{name}: index {int(arr[at])} at position {at} does not fit {width} bits")
    return contiguous(arr.astype(np.uint8, copy=False))


def texts(starts, data) -> tuple[np.ndarray, np.ndarray]:
    """Texts as ``data[starts[i]:starts[i + 1]]``: at least one, the starts (int64) rising
    within ``data`` (bytes)."""
    s = contiguous(_one_d(starts, "starts").astype(np.int64, copy=False))
    d = contiguous(np.frombuffer(data, np.uint8) if isinstance(data, (bytes, bytearray, memoryview))
                   else _one_d(data, "data").view(np.uint8))
    if len(s) < 2:
        raise InputError("starts: at least one text (two starts) expected")
    if int(s[0]) < 0 or int(s[-1]) > len(d) or bool((s[1:] < s[:-1]).any()):
        raise InputError(f"starts: must rise from 0 or more to at most {len(d)}, the data's length")
    return s, d
