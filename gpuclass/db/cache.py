"""The compiled database cache: a trust boundary, so no pickle and nothing unchecked.

A cache file holds a database's arrays: a fixed binary head (magic, format,
sizes), a table of every array's offset, length and CRC-32, a short JSON of
metadata, then the raw little-endian arrays.  It is memory-mapped; each group of
arrays is made, checksummed and value-checked the first time something reads it,
so a load costs the head alone and a damaged cache raises :class:`CacheError`
(callers rebuild) instead of answering wrongly.  Files are written atomically.

Checksums only show that a file is whole, not that it is honest, so everything
is checked as if an adversary wrote it: the file must be a regular file; the
metadata a flat JSON object of known keys and types; every array 8-byte aligned,
of its declared dtype, inside the payload; the keys sorted, the name offsets
inside the blob and on character boundaries, the names valid UTF-8.  And who
may write it matters: :func:`~gpuclass.cachedir.trust_problem` (the rules every
cache gpuclass keeps follows, in :mod:`gpuclass.cachedir`) refuses a cache
directory or file that another user could have written, as ssh and pip do, and
:func:`~gpuclass.cachedir.make_cache_dir` creates one that only its owner can.

>>> a = {"blob": np.frombuffer(b"#c\\nab xyz", np.uint8),
...      "name_start": np.array([3, 6], np.uint32), "name_end": np.array([5, 9], np.uint32)}
>>> c = compact_names(a); c["blob"].tobytes(), c["name_start"].tolist(), c["name_end"].tolist()
(b'abxyz', [0, 2], [2, 5])
"""

from __future__ import annotations

import codecs
import json
import os
import re
import zlib
from pathlib import Path

import numpy as np

from .._native import TABLES
from ..cachedir import ENV_CACHE_DIR, cache_dir, make_cache_dir, replace_refusal, replacing, trust_problem
from ..documents import DocumentError, load_json
from ..errors import CacheError
from .layout import ALIGN as _ALIGN
from .layout import ARRAYS, CACHE_FORMAT, CACHE_MAGIC, ITEMSIZE, MAX_META, map_file, parse_head
from .layout import HEAD as _CACHE_HEAD
from .layout import TABLE as _CACHE_TABLE

__all__ = ["ARRAYS", "CACHE_FORMAT", "CACHE_MAGIC", "ENV_CACHE_DIR", "CacheArrays", "EagerArrays",
           "cache_dir", "write_cache", "read_cache", "compact_names", "trust_problem", "make_cache_dir",
           "MAX_META"]

# The dtype each array of a cache file must declare (little-endian unsigned integers),
# so that nothing else is ever mapped: the layout's item sizes, as numpy dtypes.
_EXPECTED_DTYPES = {name: np.dtype(f"<u{size}") for name, size in ITEMSIZE.items()}
_META_KEYS = ("sha256", "source", "version", "date")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_ALIGN = 8


class EagerArrays:
    """Arrays held in memory (a freshly parsed database)."""

    __slots__ = ("_arrays",)

    def __init__(self, arrays: dict[str, np.ndarray]) -> None:
        self._arrays = arrays

    def get(self, name: str) -> np.ndarray:
        return self._arrays[name]

    def length(self, name: str) -> int:
        return len(self._arrays[name])

    def verify(self) -> None:
        pass


# Arrays checked together: each table's pair, and the three name arrays.
_GROUPS = {f"{t}_{part}": (f"{t}_keys", f"{t}_name") for t in TABLES for part in ("keys", "name")}
_GROUPS.update({a: ("name_start", "name_end", "blob") for a in ("name_start", "name_end", "blob")})


class CacheArrays:
    """Arrays of a memory-mapped cache file, made and verified on first use.

    Loading a cache therefore costs the header alone; each group of arrays has
    its CRC-32 and value checks run before anything reads it, so a damaged
    cache raises :class:`CacheError` rather than answering wrongly.
    """

    __slots__ = ("_payload", "_layout", "_made", "_where")

    def __init__(self, payload: memoryview, layout: dict, where: str) -> None:
        self._payload = payload
        self._layout = layout  # name -> (dtype, offset, count, crc)
        self._made: dict[str, np.ndarray] = {}
        self._where = where

    def length(self, name: str) -> int:
        return self._layout[name][2]

    def get(self, name: str) -> np.ndarray:
        arr = self._made.get(name)
        if arr is None:
            self._make(_GROUPS[name])
            arr = self._made[name]
        return arr

    def _make(self, parts) -> None:
        made = {}
        for part in parts:
            dt, offset, count, crc = self._layout[part]
            arr = np.frombuffer(self._payload, dtype=dt, count=count, offset=offset)
            if zlib.crc32(arr) != crc:
                raise CacheError(f"{self._where}: checksum mismatch in {part}")
            made[part] = arr
        _check_values(made, parts, self.length("name_start"), self.length("blob"), self._where)
        self._made.update(made)

    def verify(self) -> None:
        for name in ARRAYS:
            self.get(name)


def write_cache(path: Path, arrays: dict[str, np.ndarray], meta: dict) -> Path:
    """Write a database's arrays to a cache file atomically (temp file, fsync, rename).

    Only a regular file is ever replaced: a symlink, a FIFO, a device or a
    directory at ``path`` is a :class:`CacheError` and stays as it is.  A
    missing directory is created 0700.  The format (no pickle anywhere): a fixed
    binary head (magic, format, sizes), a binary table of every array's offset, length and CRC-32, a short JSON of
    ``meta`` (source, version, date, SHA-256), then the raw little-endian arrays,
    8-byte aligned.  The names are compacted back to back first.
    """
    path = Path(path)
    refused = replace_refusal(path)  # checked before any work; replacing() checks again
    if refused is not None:
        raise CacheError(refused)
    make_cache_dir(path.parent)
    # The arrays are written straight from their buffers and the names compacted on the
    # way out, so no copy of the payload is ever assembled; the head, which holds the
    # checksums, is written last, over a placeholder.
    new_start, new_end, blob_size, blob_chunks = _compacted(arrays)
    sources = {"blob": None, "name_start": new_start, "name_end": new_end}
    meta_bytes = json.dumps(meta, separators=(",", ":")).encode()
    meta_bytes += b" " * ((-(_CACHE_HEAD.size + _CACHE_TABLE.size + len(meta_bytes))) % 8)
    with replacing(path) as fh:
        fh.write(b"\0" * (_CACHE_HEAD.size + _CACHE_TABLE.size) + meta_bytes)
        table, offset = [], 0
        for name in ARRAYS:
            pad = (-offset) % 8
            fh.write(b"\0" * pad)
            offset += pad
            if name == "blob":
                crc = 0
                for part in blob_chunks:
                    crc = zlib.crc32(memoryview(part), crc)
                    fh.write(memoryview(part))
                table += [offset, blob_size, crc]
                offset += blob_size
                continue
            arr = np.ascontiguousarray(sources.get(name, arrays[name]), dtype=_EXPECTED_DTYPES[name])
            view = memoryview(arr).cast("B")
            table += [offset, int(arr.shape[0]), zlib.crc32(view)]
            fh.write(view)
            offset += arr.nbytes
        fh.seek(0)
        fh.write(_CACHE_HEAD.pack(CACHE_MAGIC, CACHE_FORMAT, len(meta_bytes), offset)
                 + _CACHE_TABLE.pack(*table))
        fh.flush()
        os.fsync(fh.fileno())
    return path


def read_cache(path: str | os.PathLike, expect_sha256: str | None = None,
               verify: bool = False, *, trusted: bool = False) -> tuple[CacheArrays, dict]:
    """Map a cache file: its arrays (checked on first use, or now with ``verify``) and metadata.

    The file must be a regular file (opened without following a link and
    without blocking); with ``trusted`` it must also pass :func:`trust_problem`'s
    owner and mode rules (checked on the open file).  The header, sizes,
    alignment, dtypes, bounds and metadata are checked at once; each group of
    arrays has its CRC-32 and value checks run before anything reads it.
    Anything wrong is a :class:`CacheError`.
    """
    name = os.fspath(path)
    raw = map_file(name, trusted)
    try:
        source, meta = _parse(raw, name, expect_sha256)
        if verify:
            source.verify()
        return source, meta
    except CacheError:
        raise
    except (ValueError, KeyError, TypeError, IndexError, OverflowError, RecursionError) as exc:
        raise CacheError(f"{name}: corrupt cache: {exc}") from None


def _meta(raw: bytes, name: str) -> dict:
    """The metadata: a flat JSON object of the known keys, strings or null."""
    if len(raw) > MAX_META:
        raise CacheError(f"{name}: metadata of {len(raw)} bytes (at most {MAX_META})")
    try:
        meta = load_json(raw.rstrip(b" "))
    except DocumentError as exc:
        raise CacheError(f"{name}: bad metadata: {exc}") from None
    if not isinstance(meta, dict) or set(meta) != set(_META_KEYS):
        raise CacheError(f"{name}: bad metadata: expected the keys {', '.join(_META_KEYS)}")
    for key in _META_KEYS:
        value = meta[key]
        if value is not None and (not isinstance(value, str) or len(value) > 4096):
            raise CacheError(f"{name}: bad metadata: {key} is not a short string")
    if meta["sha256"] is not None and not _SHA256.fullmatch(meta["sha256"]):
        raise CacheError(f"{name}: bad metadata: sha256 is not a SHA-256 digest")
    return meta


def _parse(raw, name: str, expect_sha256: str | None) -> tuple[CacheArrays, dict]:
    head = parse_head(raw, name)
    meta = _meta(bytes(raw[head.meta_at:head.payload_at]), name)
    if expect_sha256 is not None and meta.get("sha256") != expect_sha256:
        raise CacheError(f"{name}: stale cache (built from another pci.ids)")
    layout = {aname: (_EXPECTED_DTYPES[aname], *where) for aname, where in head.arrays.items()}
    payload = memoryview(raw)[head.payload_at:]
    return CacheArrays(payload, layout, name), meta


def _compacted(arrays: dict[str, np.ndarray], chunk: int = 1 << 13):
    """``(name_start, name_end, blob size, chunks)``: the names' offsets back to back, and
    an iterator over the compacted blob a few thousand names at a time (so that no
    index array is ever as large as the text: one int64 per byte of every name at
    once was eight times the text, and the whole blob a second copy of it)."""
    starts, ends = arrays["name_start"], arrays["name_end"]
    lengths = ends.astype(np.int64) - starts
    new_end = np.cumsum(lengths, dtype=np.int64)
    total = int(new_end[-1]) if len(new_end) else 0
    new_start = (new_end - lengths).astype(np.uint32)
    new_end = new_end.astype(np.uint32)
    del lengths
    blob = np.asarray(arrays["blob"])

    def chunks():
        for a in range(0, len(starts), chunk):
            start = starts[a:a + chunk].astype(np.int64)
            lengths = ends[a:a + chunk].astype(np.int64) - start
            at = int(new_start[a])
            count = int(lengths.sum())
            if count:
                # source position of every output byte: its name's start plus its offset
                gather = np.repeat(start - (at + np.cumsum(lengths) - lengths), lengths)
                yield blob[gather + np.arange(at, at + count)]

    return new_start, new_end, total, chunks()


def compact_names(arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The names back to back in a fresh blob, with their new offsets."""
    new_start, new_end, total, chunks = _compacted(arrays)
    parts = list(chunks)
    blob = np.concatenate(parts) if parts else np.empty(0, dtype=np.uint8)
    return {"blob": blob, "name_start": new_start, "name_end": new_end}


def _check_values(arrays: dict[str, np.ndarray], parts, n_names: int, blob_len: int, where: str) -> None:
    """Value checks that make a group of arrays safe to index, run with its checksums."""
    for part in parts:
        arr = arrays[part]
        if part == "name_end":
            start = arrays["name_start"]
            if n_names and (bool(np.any(arr < start)) or int(arr.max()) > blob_len):
                raise CacheError(f"{where}: name offsets outside the blob")
            _check_names(arrays["blob"], start, arr, where)
        elif part.endswith("_keys"):
            if len(arr) > 1 and not bool(np.all(arr[1:] > arr[:-1])):
                raise CacheError(f"{where}: {part} are not sorted")
        elif part.endswith("_name"):
            if len(arr) and int(arr.max()) >= n_names:
                raise CacheError(f"{where}: {part} point past the name table")


def _check_names(blob: np.ndarray, start: np.ndarray, end: np.ndarray, where: str) -> None:
    """Every name valid UTF-8: the blob decodes, and no name starts or ends inside a
    character (a continuation byte 10xxxxxx at a boundary)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(blob).cast("B")
    step = 1 << 20  # a megabyte at a time: never a second copy of the blob
    try:
        for at in range(0, len(view), step):
            decoder.decode(view[at:at + step])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        raise CacheError(f"{where}: names are not UTF-8") from None
    n = len(blob)
    for edge in (start, end):
        inside = edge[edge < n]
        if inside.size and bool(np.any((blob[inside] & 0xC0) == 0x80)):
            raise CacheError(f"{where}: a name boundary splits a UTF-8 character")
