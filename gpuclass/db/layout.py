"""The compiled database cache's layout, and the checks of its head: no numpy.

A cache file is a fixed binary head (magic, format, metadata length, payload
length), a table of every array's offset, length and CRC-32 (in :data:`ARRAYS`'
order), the metadata (a short JSON object), then the payload: the raw
little-endian arrays, each 8-byte aligned.  :func:`parse_head` checks everything
but the arrays' contents; :mod:`gpuclass.db.cache` (numpy arrays, value checks)
and :mod:`gpuclass.db.mapped` (memoryviews, for a start without numpy) both read
a file through it, so the two can never disagree on where an array lies.

>>> ITEMSIZE["subsys_keys"], KEY_FORMATS["subsys"], len(ARRAYS)
(8, 'Q', 17)
"""

from __future__ import annotations

import mmap
import os
import stat
import struct

from ..cachedir import file_problem
from ..errors import CacheError
from ..inputs import kind_of

__all__ = ["TABLES", "KEY_FORMATS", "ARRAYS", "ITEMSIZE", "FORMATS", "CACHE_MAGIC", "CACHE_FORMAT",
           "MAX_META", "ALIGN", "HEAD", "TABLE", "Head", "parse_head", "map_file"]

# The database's tables and their keys' struct formats (little-endian unsigned): the
# same order and widths as gpuclass._native.TABLES / KEY_DTYPES (a test holds them equal).
TABLES = ("vendor", "device", "subsys", "gensub", "class", "subclass", "progif")
KEY_FORMATS = dict(zip(TABLES, ("H", "I", "Q", "I", "B", "H", "I")))
ARRAYS = ("blob", "name_start", "name_end") + tuple(f"{t}_{part}" for t in TABLES for part in ("keys", "name"))
# each array's struct format: names' offsets and the tables' name indices are uint32
FORMATS = {"blob": "B", "name_start": "I", "name_end": "I",
           **{f"{t}_keys": KEY_FORMATS[t] for t in TABLES}, **{f"{t}_name": "I" for t in TABLES}}
ITEMSIZE = {name: struct.calcsize(fmt) for name, fmt in FORMATS.items()}
# Arrays that must have the same length.
SAME_LENGTH = (("name_start", "name_end"),) + tuple((f"{t}_keys", f"{t}_name") for t in TABLES)

CACHE_MAGIC = b"GPCLSDB\x01"
CACHE_FORMAT = 2
# magic, format, metadata length, payload length; then (offset, count, crc32)
# for every array of ARRAYS, in that order.
HEAD = struct.Struct("<8sIIQ")
TABLE = struct.Struct("<" + "QQI" * len(ARRAYS))
# The metadata: a flat object of known keys, at most 64 KiB.
MAX_META = 64 * 1024
ALIGN = 8


class Head:
    """A checked head: where the metadata and the payload lie, and per array its
    ``(offset in the payload, count, crc32)``."""

    __slots__ = ("meta_at", "payload_at", "arrays")

    def __init__(self, meta_at: int, payload_at: int, arrays: dict[str, tuple[int, int, int]]) -> None:
        self.meta_at = meta_at
        self.payload_at = payload_at
        self.arrays = arrays


def parse_head(raw, name: str) -> Head:
    """Check a mapped cache file's head and array table (magic, format, sizes, the
    metadata's bound, every array aligned and inside the payload, a table's arrays of
    one length); :class:`CacheError` naming ``name`` otherwise."""
    total = len(raw)
    if total < HEAD.size + TABLE.size:
        raise CacheError(f"{name}: not a gpuclass database cache")
    magic, fmt, meta_len, payload_len = HEAD.unpack_from(raw, 0)
    if magic != CACHE_MAGIC:
        raise CacheError(f"{name}: not a gpuclass database cache")
    if fmt != CACHE_FORMAT:
        raise CacheError(f"{name}: cache format {fmt}, expected {CACHE_FORMAT}")
    meta_at = HEAD.size + TABLE.size
    payload_at = meta_at + meta_len
    if payload_at + payload_len != total:
        raise CacheError(f"{name}: truncated or padded cache ({total} bytes, "
                         f"expected {payload_at + payload_len})")
    if payload_at % ALIGN:
        raise CacheError(f"{name}: payload not {ALIGN}-byte aligned")
    if meta_len > MAX_META:
        raise CacheError(f"{name}: metadata of {meta_len} bytes (at most {MAX_META})")
    table = TABLE.unpack_from(raw, HEAD.size)
    arrays: dict[str, tuple[int, int, int]] = {}
    it = iter(table)
    for aname, offset, count, crc in zip(ARRAYS, it, it, it):
        if offset % ALIGN:
            # a misaligned array would make the kernels' 64-bit loads misaligned
            raise CacheError(f"{name}: array {aname} at offset {offset}, not {ALIGN}-byte aligned")
        if offset + count * ITEMSIZE[aname] > payload_len:
            raise CacheError(f"{name}: array {aname} lies outside the payload")
        arrays[aname] = (offset, count, crc)
    if any(arrays[a][1] != arrays[b][1] for a, b in SAME_LENGTH):
        raise CacheError(f"{name}: arrays of one table differ in length")
    return Head(meta_at, payload_at, arrays)


_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
               | getattr(os, "O_NONBLOCK", 0))


def map_file(name: str, trusted: bool) -> mmap.mmap:
    """A cache file mapped read-only: opened without following a link and without
    blocking, a regular file only, and with ``trusted`` owned by this user or root and
    writable by no one else (:func:`~gpuclass.cachedir.file_problem`, judged on the file
    opened); :class:`CacheError` otherwise."""
    try:
        fd = os.open(name, _OPEN_FLAGS)
    except OSError as exc:
        raise CacheError(f"{name}: cannot read: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise CacheError(f"{name}: {kind_of(st.st_mode)}, not a regular file")
        problem = file_problem(st, name) if trusted else None
        if problem is not None:
            raise CacheError(problem)
        try:
            return mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
        except ValueError:  # mmap refuses an empty file
            raise CacheError(f"{name}: empty cache file") from None
        except OSError as exc:
            raise CacheError(f"{name}: cannot map: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
