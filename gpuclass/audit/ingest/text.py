"""Text of a byte stream, decoded incrementally (a byte-order mark dropped, bad bytes as U+FFFD).

>>> import io
>>> r = Reader(io.BytesIO(b"\\xef\\xbb\\xbfa,b\\nc\\n"))
>>> list(r.lines())
['a,b\\n', 'c\\n']
"""

from __future__ import annotations

import codecs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import IO

    from ..progress import Progress

__all__ = ["Reader", "READ_SIZE", "MAX_RECORD", "LongLine"]

READ_SIZE = 4 << 20  # bytes read at a time (a small feed in one piece: fewer fresh pages)
MAX_RECORD = 64 << 20  # characters of one record (a feed record, an NDJSON or CSV line), no more


class LongLine(str):
    """A line longer than the limit, in its place: its first 200 characters (the rest
    was read and dropped, never held); ``size`` is its length in characters."""

    size = 0


class Reader:
    """Text chunks of a binary file, decoded incrementally, reporting progress."""

    def __init__(self, fh: IO[bytes], progress: Progress | None = None) -> None:
        self.fh = fh
        self.progress = progress
        # utf-8-sig: a byte-order mark at the start is no part of the first field
        self.decoder = codecs.getincrementaldecoder("utf-8-sig")(errors="replace")
        self.eof = False

    def read(self) -> str:
        data = self.fh.read(READ_SIZE)
        if self.progress:
            self.progress.advance(len(data))
        if not data:
            self.eof = True
            return self.decoder.decode(b"", final=True)
        return self.decoder.decode(data)

    def lines(self, limit: int | None = None) -> Iterator[str]:
        """Lines with their ``\n`` (the csv module needs it inside quoted fields).  A line
        longer than ``limit`` characters (default :data:`MAX_RECORD`) comes as a
        :class:`LongLine`: memory stays bounded by the limit, and each character is
        copied once (an unfinished line is kept in pieces, not copied on every read)."""
        cap = MAX_RECORD if limit is None else limit
        parts: list[str] = []   # the unfinished line, in pieces
        size = 0                # its length
        long: LongLine | None = None
        while not self.eof:
            chunk = self.read()
            start = 0
            while True:
                end = chunk.find("\n", start)
                if end < 0:
                    break
                if long is not None:
                    long.size = size + end + 1 - start
                    yield long
                    long = None
                elif size + end + 1 - start > cap:
                    yield self._long(parts, chunk[start:end + 1], size + end + 1 - start)
                elif parts:
                    parts.append(chunk[start:end + 1])
                    yield "".join(parts)
                else:
                    yield chunk[start:end + 1]
                parts, size = [], 0
                start = end + 1
            rest = chunk[start:]
            if not rest:
                continue
            size += len(rest)
            if long is not None:
                continue
            if size > cap:
                long = self._long(parts, rest, size)
                parts = []
            else:
                parts.append(rest)
        if long is not None:
            long.size = size
            yield long
        elif parts:
            yield "".join(parts)

    @staticmethod
    def _long(parts: list[str], last: str, size: int) -> LongLine:
        head = "".join(parts)[:200] if parts else ""
        line = LongLine((head + last[:200 - len(head)]) if len(head) < 200 else head)
        line.size = size
        return line
