"""Compressed inputs, recognised by their first bytes whatever their name, and bounded.

``.gz``, ``.xz``, ``.bz2`` and ``.zst`` streams are read as what they contain (a
snapshot ``sb-120000.json.gz`` is the JSON array inside).  Expansion is bounded: an
input (or an archive) may expand to at most ``Limits.max_expanded`` bytes in all, and,
once past ``Limits.ratio_after`` bytes, to at most ``Limits.max_ratio`` times the
bytes it was read from; past either limit the read stops with a
:class:`~gpuclass.errors.SourceError` naming the input and its member.

>>> import gzip, io
>>> compression_of(gzip.compress(b"[]")), compression_of(b"[]")
('gzip', None)
>>> Bounded(io.BytesIO(b"abc"), "x", Limits()).read()
b'abc'
"""

from __future__ import annotations

import io
import sys
from collections import namedtuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import IO

from ...compression import compression_of, decompressing
from ...compression import errors as compression_errors
from ...errors import SourceError

__all__ = ["Limits", "Bounded", "archive_kind", "compression_of", "decompress", "decompress_errors"]

def decompress_errors() -> tuple[type[BaseException], ...]:
    """What damaged compressed data raises (see :func:`gpuclass.compression.errors`)."""
    return compression_errors()


def _damaged() -> tuple[type[BaseException], ...]:
    """What damaged data raises: tar's and zip's errors too where an archive is read (their
    modules load with the first archive, not with every input)."""
    found = [getattr(sys.modules[m], n) for m, n in (("tarfile", "TarError"), ("zipfile", "BadZipFile"))
             if m in sys.modules]
    return (*found, *decompress_errors())


class Limits(namedtuple("Limits", ("max_expanded", "max_ratio", "ratio_after"),
                        defaults=(8 << 30, 250.0, 16 << 20))):
    """How far compressed inputs and archives may expand (see the module docstring):
    ``max_expanded`` bytes per input (8 GiB), ``max_ratio`` expanded / compressed (250),
    checked past ``ratio_after`` bytes (16 MiB: small inputs may be highly compressible).
    Immutable; ``Limits(max_ratio=1000)`` changes one."""

    __slots__ = ()


def archive_kind(head: bytes) -> str | None:
    """``tar`` or ``zip`` from the first bytes of a stream (after any decompression)."""
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return "zip"
    if head[257:262] == b"ustar":
        return "tar"
    return None


_PIECE = 1 << 20  # bytes expanded at a time before the limits are checked again


class Bounded(io.RawIOBase):
    """A readable (and seekable, where the inner stream is) view of ``inner`` that stops
    past the limits.  ``consumed`` returns how many compressed bytes were read so far
    (None: the stream is not compressed and only the total counts)."""

    def __init__(self, inner: IO[bytes], name: str, limits: Limits,
                 consumed: Callable[[], int] | None = None, total: list[int] | None = None) -> None:
        super().__init__()
        self.inner = inner
        self.name = name
        self.limits = limits
        self.consumed = consumed
        self.total = total if total is not None else [0]   # shared by the members of an archive
        self.high = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return self.inner.seekable()

    def tell(self) -> int:
        return self.inner.tell()

    def seek(self, pos: int, whence: int = 0) -> int:
        try:
            out = self.inner.seek(pos, whence)
        except SourceError as exc:  # from the stream this one reads: name this one
            raise SourceError(self.name, None, exc.reason) from None
        except _damaged() as exc:
            raise SourceError(self.name, None, f"damaged data: {exc}") from None
        self._count(out)
        return out

    def read(self, size: int = -1) -> bytes:
        """Up to ``size`` bytes (all, where negative), taken from ``inner`` a piece of at
        most ``_PIECE`` at a time, each counted before the next is expanded: a bomb is
        refused after one piece past the limit, whatever size its reader asks for (tarfile
        asks for a whole member at once), and nothing larger is held before the check."""
        pieces = []
        left = size if size is not None and size >= 0 else -1
        while left:
            piece = self._piece(_PIECE if left < 0 else min(left, _PIECE))
            if not piece:
                break
            pieces.append(piece)
            if left > 0:
                left -= len(piece)
        return pieces[0] if len(pieces) == 1 else b"".join(pieces)

    def readall(self) -> bytes:
        return self.read(-1)

    def readinto(self, b) -> int:
        view = memoryview(b).cast("B")
        n = 0
        while n < len(view):
            piece = self._piece(min(len(view) - n, _PIECE))
            if not piece:
                break
            view[n:n + len(piece)] = piece
            n += len(piece)
        return n

    def _piece(self, size: int) -> bytes:
        try:
            data = self.inner.read(size)
        except SourceError as exc:
            raise SourceError(self.name, None, exc.reason) from None
        except _damaged() as exc:
            raise SourceError(self.name, None, f"damaged data: {exc}") from None
        n = len(data)
        if n:
            self._count(self.high + n if not self.inner.seekable() else self.inner.tell())
        return data

    def _count(self, pos: int) -> None:
        if pos <= self.high:
            return
        self.total[0] += pos - self.high
        self.high = pos
        lim = self.limits
        if self.total[0] > lim.max_expanded:
            raise SourceError(self.name, None, f"expands past {lim.max_expanded} bytes "
                                               "(the limit on expanded input; an archive bomb?)")
        if self.consumed is not None and self.total[0] > lim.ratio_after:
            used = max(self.consumed(), 1)
            if self.total[0] > lim.max_ratio * used:
                raise SourceError(self.name, None, f"expands more than {lim.max_ratio:g} times "
                                                   f"({self.total[0]} bytes from {used}; an archive bomb?)")


class _Counting(io.RawIOBase):
    """``raw``, counting the compressed bytes the decompressor takes from it."""

    def __init__(self, raw: IO[bytes]) -> None:
        super().__init__()
        self.raw = raw
        self.count = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return self.raw.seekable()

    def seek(self, pos: int, whence: int = 0) -> int:
        return self.raw.seek(pos, whence)   # a rewind (a hard link read again) counts again

    def tell(self) -> int:
        return self.raw.tell()

    def readinto(self, b) -> int:
        data = self.raw.read(len(b))
        n = len(data)
        b[:n] = data
        self.count += n
        return n


def decompress(raw: IO[bytes], kind: str, name: str, limits: Limits,
               total: list[int] | None = None) -> Bounded:
    """A bounded stream of what ``raw`` (compressed as ``kind``, read from its current
    position on) holds."""
    counting = _Counting(raw)
    raw = io.BufferedReader(counting)

    def consumed() -> int:
        return counting.count
    return Bounded(decompressing(raw, kind, name), name, limits, consumed, total)
