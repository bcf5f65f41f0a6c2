"""Pure-Python twin of the Parquet encoders (``parquet.pxi``): the same bytes, from numpy.

>>> parquet_hybrid([1, 0, 1], 1).hex(), parquet_delta([5, 6, 8]).hex()
('0305', '800104030a020100000002000000')
"""

from __future__ import annotations

import numpy as np

from .contract.parquet import DICT_MAX, DICT_SPAN, indices, int64s, integers, texts
from .contract.parquet import uvarint as _uvarint
from .contract.parquet import zigzag as _zigzag

__all__ = ["parquet_dictionary", "parquet_hybrid", "parquet_delta", "parquet_text_bounds"]


def _pack(values: np.ndarray, width: int) -> bytes:
    """``values`` (unsigned, each below ``2**width``) ``width`` bits each, least significant
    bit first, padded with zeros to a multiple of 8 values."""
    n = len(values)
    if width == 0 or not n:
        return b""
    padded = np.zeros(-(-n // 8) * 8, np.uint64)
    padded[:n] = values
    bits = (padded[:, None] >> np.arange(width, dtype=np.uint64)) & np.uint64(1)
    return np.packbits(bits.astype(np.uint8).ravel(), bitorder="little").tobytes()


def parquet_dictionary(values):
    """The dictionary of a column chunk's integers (int32 or int64): ``(distinct,
    index)``, the distinct values (int64, rising) and each value's index (uint8); None where
    they span 65,536 or more, or are more than 256 distinct."""
    v = integers(values)
    if not len(v):
        return np.empty(0, np.int64), np.empty(0, np.uint8)
    lo, hi = int(v.min()), int(v.max())
    if hi - lo >= DICT_SPAN:
        return None
    shifted = v.astype(np.int64) - lo
    present = np.zeros(hi - lo + 1, bool)
    present[shifted] = True
    distinct = np.flatnonzero(present)
    if len(distinct) > DICT_MAX:
        return None
    code = np.cumsum(present) - 1
    return distinct.astype(np.int64) + lo, code[shifted].astype(np.uint8)


def parquet_hybrid(index, width: int) -> bytes:
    """Dictionary indices of ``width`` bits (1 to 8) in the RLE / bit-packed hybrid
    encoding: one RLE run where they are all the same, else one bit-packed run."""
    idx = indices(index, width)
    n = len(idx)
    if n and bool((idx == idx[0]).all()):
        return _uvarint(n << 1) + bytes([int(idx[0])])
    return _uvarint(-(-n // 8) << 1 | 1) + _pack(idx, width)


def parquet_delta(values) -> bytes:
    """Integers as ``DELTA_BINARY_PACKED``: blocks of 128 deltas in 4 miniblocks, every block
    with the least delta of all and the widest width (the same header each), the last block
    only as many miniblocks as its deltas fill (the others' widths 0)."""
    v = int64s(values)
    m = len(v)
    head = _uvarint(128) + _uvarint(4) + _uvarint(m) + _uvarint(_zigzag(int(v[0]) if m else 0))
    if m < 2:
        return head
    with np.errstate(over="ignore"):
        deltas = v[1:] - v[:-1]  # wraps as the format's arithmetic does
        least = int(deltas.min())
        u = (deltas - np.int64(least)).view(np.uint64)
    width = int(u.max()).bit_length()
    nd = len(u)
    full, rest = divmod(nd, 128)
    minis = -(-rest // 32)
    packed = _pack(np.concatenate([u, np.zeros(minis * 32 - rest, np.uint64)]), width)
    block = _uvarint(_zigzag(least))
    step = 16 * width
    out = [head]
    for b in range(full):
        out.append(block + bytes([width] * 4) + packed[b * step:(b + 1) * step])
    if rest:
        out.append(block + bytes([width] * minis + [0] * (4 - minis)) + packed[full * step:])
    return b"".join(out)


def parquet_text_bounds(starts, data) -> tuple[int, int]:
    """The positions of the least and greatest texts (``data[starts[i]:starts[i + 1]]``),
    compared byte by byte (a prefix first); the first of equal ones."""
    s, d = texts(starts, data)
    raw = d.tobytes()
    cells = [raw[a:b] for a, b in zip(s[:-1].tolist(), s[1:].tolist())]
    lo = min(range(len(cells)), key=cells.__getitem__)
    hi = max(range(len(cells)), key=cells.__getitem__)
    return lo, hi
