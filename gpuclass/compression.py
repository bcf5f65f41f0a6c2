"""Compressed data, in one place: which compression a stream holds (by its first bytes), a
file name less its compression suffix, and the reader that decompresses each kind.

The PCI ID database (:mod:`gpuclass.db.locate`) and the audit's inputs
(:mod:`gpuclass.audit.ingest.compressed`, which bounds what a stream may expand to) both
read compressed data through here.  The compression modules are imported only when a
compressed stream is read.

>>> import gzip
>>> compression_of(gzip.compress(b"x")), compression_of(b"x"), plain_name("pci.ids.xz")
('gzip', None, 'pci.ids')
"""

from __future__ import annotations

import io
import sys
import zlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO

from .errors import InputError, MissingExtraError

__all__ = ["MAGIC", "SUFFIXES", "STDLIB_KINDS", "compression_of", "plain_name", "decompressing", "errors", "DamagedData"]

MAGIC = ((b"\x1f\x8b", "gzip"), (b"\xfd7zXZ\x00", "xz"), (b"BZh", "bz2"), (b"\x28\xb5\x2f\xfd", "zstd"))
# a compressed file's suffix, what its name ends with without it, and its kind
SUFFIXES = ((".gz", "", "gzip"), (".xz", "", "xz"), (".bz2", "", "bz2"), (".zst", "", "zstd"),
            (".tgz", ".tar", "gzip"), (".txz", ".tar", "xz"), (".tbz2", ".tar", "bz2"))
STDLIB_KINDS = ("gzip", "xz", "bz2")  # read without an extra (zstd needs zstandard)



def compression_of(head: bytes) -> str | None:
    """``gzip``, ``xz``, ``bz2``, ``zstd`` or None, from the first bytes of a stream."""
    return next((name for magic, name in MAGIC if head.startswith(magic)), None)


def plain_name(name: str) -> str:
    """A compressed file's name less its compression suffix (``sb-1200.json.gz``:
    ``sb-1200.json``; ``dumps.tgz``: ``dumps.tar``)."""
    low = name.lower()
    for suffix, plain, _ in SUFFIXES:
        if low.endswith(suffix):
            return name[: -len(suffix)] + plain
    return name


def decompressing(raw: IO[bytes], kind: str, name: str) -> IO[bytes]:
    """A reader of what ``raw`` (compressed as ``kind``) holds: every stream (every zstd
    frame) to the end of ``raw``, as ``gzip -dc``, ``xz -dc`` and ``zstd -dc`` read them.
    Between streams only what the format allows may stand (gzip's and xz's null padding,
    xz's in fours; zstd's skippable frames); anything else after a stream, and a stream or
    frame cut short, raises :class:`DamagedData` (one of :func:`errors`)."""
    if kind not in ("gzip", "xz", "bz2", "zstd"):
        raise InputError(f"unknown compression {kind!r}")
    if kind == "zstd":
        try:
            import zstandard  # noqa: F401
        except ImportError as exc:
            raise MissingExtraError("zstandard", "audit", f"{name}: reading zstd") from exc
    return io.BufferedReader(_Streams(raw, kind), _CHUNK)


class DamagedData(ValueError):
    """Compressed data that is cut short, fails its check, or is followed by what is not
    another stream."""


_CHUNK = 1 << 16
_OUT = 1 << 20      # the most one decompression step yields (bounded memory on a bomb)
_ZSTD_IN = 1 << 12  # zstd's decompressor takes no output bound: feed it a little at a time
_SKIPPABLE = range(0x184D2A50, 0x184D2A60)


def _decompressor(kind: str):
    if kind == "gzip":
        return zlib.decompressobj(31)
    if kind == "xz":
        import lzma

        return lzma.LZMADecompressor(lzma.FORMAT_XZ)
    if kind == "bz2":
        import bz2

        return bz2.BZ2Decompressor()
    import zstandard

    return zstandard.ZstdDecompressor().decompressobj()


class _Streams(io.RawIOBase):
    """The decompressed bytes of every stream in ``raw``, one after another."""

    def __init__(self, raw: IO[bytes], kind: str) -> None:
        super().__init__()
        self.raw = raw
        self.kind = kind
        self.pending = b""      # compressed bytes read but not yet given to a decompressor
        self.dec = None         # the decompressor of the stream being read (None: between)
        self.raw_done = False
        self.out = b""
        self.out_at = 0         # how much of ``out`` was given
        self.offset = 0         # compressed bytes taken so far (for the messages)
        self.pos = 0            # decompressed bytes given so far
        self.start = raw.tell() if raw.seekable() else 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return self.raw.seekable()

    def tell(self) -> int:
        return self.pos

    def seek(self, pos: int, whence: int = 0) -> int:
        """Forward by reading on; back by reading again from the first stream (as
        :class:`gzip.GzipFile` does)."""
        if whence == 1:
            pos += self.pos
        elif whence == 2:
            while self.read(_CHUNK):
                pass
            pos += self.pos
        if pos < self.pos:
            if not self.raw.seekable():
                raise OSError("cannot seek back in a compressed stream that is not seekable")
            self.raw.seek(self.start)
            self.pending, self.dec, self.raw_done, self.offset, self.pos = b"", None, False, 0, 0
            self.out, self.out_at = b"", 0
        buf = bytearray(_CHUNK)
        while self.pos < pos:
            n = self.readinto(memoryview(buf)[: min(_CHUNK, pos - self.pos)])
            if not n:
                break
        return self.pos

    def _fill(self, want: int) -> bool:
        """Read until ``pending`` holds ``want`` bytes; False at the end of ``raw``."""
        while len(self.pending) < want and not self.raw_done:
            data = self.raw.read(_CHUNK)
            if not data:
                self.raw_done = True
            else:
                self.pending += data
        return len(self.pending) >= want

    def _between(self) -> bool:
        """Past what may stand between streams; True where another stream starts, False
        at the clean end of ``raw``."""
        while True:
            if not self._fill(1):
                return False
            if self.kind in ("gzip", "xz") and self.pending[:1] == b"\0":
                pad = 0
                while self._fill(1) and self.pending[:1] == b"\0":
                    stripped = self.pending.lstrip(b"\0")
                    pad += len(self.pending) - len(stripped)
                    self.pending = stripped
                self.offset += pad
                if self.kind == "xz" and pad % 4:
                    raise DamagedData(f"xz stream padding of {pad} bytes (not a multiple of four) "
                                      f"before offset {self.offset}")
                continue
            magic = next(m for m, k in MAGIC if k == self.kind)
            if self.kind == "zstd" and self._fill(8):
                if int.from_bytes(self.pending[:4], "little") in _SKIPPABLE:
                    left = 8 + int.from_bytes(self.pending[4:8], "little")
                    while left:  # dropped as it is read, not held
                        if not self._fill(1):
                            raise DamagedData(f"zstd skippable frame cut short at offset {self.offset}")
                        gone = min(left, len(self.pending))
                        self.pending = self.pending[gone:]
                        self.offset += gone
                        left -= gone
                    continue
            self._fill(len(magic))
            if not self.pending.startswith(magic):
                raise DamagedData(f"trailing data after the end of the {self.kind} stream "
                                  f"at offset {self.offset}")
            return True

    def _step(self) -> bytes:
        """Some decompressed bytes; b"" at the clean end."""
        while True:
            if self.dec is None:
                if not self._between():
                    return b""
                self.dec = _decompressor(self.kind)
            dec = self.dec
            if self.kind == "gzip" and dec.unconsumed_tail:
                data = dec.unconsumed_tail  # input it took but has not read yet (counted)
            elif self.kind in ("xz", "bz2") and not dec.needs_input:
                data = b""
            else:
                data = self._take(_ZSTD_IN if self.kind == "zstd" else None)
            # zstd's decompressor takes no output limit: its input is fed in small pieces
            out = self._guard(dec.decompress, data, *(() if self.kind == "zstd" else (_OUT,)))
            if dec.eof:
                self._end(dec.unused_data)
            if out:
                return out

    def _take(self, limit: int | None) -> bytes:
        """The next compressed input (at most ``limit`` bytes); a stream that ends here is
        cut short."""
        if not self._fill(1):
            what = "frame" if self.kind == "zstd" else "stream"
            raise DamagedData(f"{self.kind} {what} cut short at offset {self.offset}")
        n = len(self.pending) if limit is None else limit
        data, self.pending = self.pending[:n], self.pending[n:]
        self.offset += len(data)
        return data

    def _guard(self, fn, *args) -> bytes:
        try:
            return fn(*args)
        except Exception as exc:
            if isinstance(exc, (zlib.error, EOFError, OSError)) or type(exc).__name__ in ("LZMAError", "ZstdError"):
                raise DamagedData(f"damaged {self.kind} data near offset {self.offset}: {exc}") from None
            raise

    def _end(self, unused: bytes) -> None:
        self.offset -= len(unused)
        self.pending = unused + self.pending
        self.dec = None

    def readinto(self, b) -> int:
        while self.out_at >= len(self.out):
            self.out, self.out_at = self._step(), 0
            if not self.out:
                return 0
        n = min(len(b), len(self.out) - self.out_at)
        b[:n] = self.out[self.out_at:self.out_at + n]
        self.out_at += n
        self.pos += n
        return n


_ERRORS: tuple[type[BaseException], ...] = (OSError, EOFError, zlib.error, ValueError, DamagedData)


def errors() -> tuple[type[BaseException], ...]:
    """What damaged compressed data raises (xz's and zstd's errors too once their modules
    are loaded: they load with the first such stream, not with every input)."""
    found = list(_ERRORS)
    lzma = sys.modules.get("lzma")
    if lzma is not None:
        found.append(lzma.LZMAError)
    zstd = sys.modules.get("zstandard")
    if zstd is not None:
        found.append(zstd.ZstdError)
    return tuple(found)
