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

__all__ = ["Reader", "Lines", "READ_SIZE", "MAX_RECORD", "LongLine"]

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

    def lines(self, limit: int | None = None) -> Lines:
        """Lines with their ``\n`` (the csv module needs it inside quoted fields).  A line
        longer than ``limit`` characters (default :data:`MAX_RECORD`) comes as a
        :class:`LongLine`: memory stays bounded by the limit (an unfinished line is kept
        in pieces, not copied again on every read)."""
        return Lines(self.pieces(limit))

    def pieces(self, limit: int | None = None) -> Iterator[str]:
        """The text in pieces of whole lines, as :meth:`lines` gives them: each piece is one
        or more lines, each with its ``\n`` (but the text's last line), or one
        :class:`LongLine`.  A piece is at most what one read decodes, or one line."""
        cap = MAX_RECORD if limit is None else limit
        parts: list[str] = []   # the unfinished line, in pieces
        size = 0                # its length
        long: LongLine | None = None
        while not self.eof:
            chunk = self.read()
            start = 0
            if size:  # a line left unfinished by the chunks before
                end = chunk.find("\n")
                if end >= 0:  # the unfinished line ends in this chunk
                    total = size + end + 1
                    if long is not None:
                        long.size = total
                        yield long
                        long = None
                    elif total > cap:
                        yield self._long(parts, chunk[:end + 1], total)
                    else:
                        parts.append(chunk[:end + 1])
                        yield "".join(parts)
                    parts, size = [], 0
                    start = end + 1
            last = chunk.rfind("\n", start)
            if last >= 0:
                if last + 1 - start <= cap:
                    yield chunk[start:last + 1]  # whole lines, none longer than the cap
                else:
                    yield from self._capped(chunk, start, last + 1, cap)
                start = last + 1
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

    def _capped(self, chunk: str, start: int, stop: int, cap: int) -> Iterator[str]:
        """The whole lines of ``chunk[start:stop]`` as pieces, each line longer than
        ``cap`` a :class:`LongLine` of its own."""
        begin = start  # of the lines not yet given
        while start < stop:
            end = chunk.find("\n", start) + 1
            if end - start > cap:
                if begin < start:
                    yield chunk[begin:start]
                yield self._long([], chunk[start:end], end - start)
                begin = end
            start = end
        if begin < stop:
            yield chunk[begin:stop]

    @staticmethod
    def _long(parts: list[str], last: str, size: int) -> LongLine:
        head = "".join(parts)[:200] if parts else ""
        line = LongLine((head + last[:200 - len(head)]) if len(head) < 200 else head)
        line.size = size
        return line


class Lines:
    """The lines of :meth:`Reader.pieces`, one at a time; :meth:`rest` gives the pieces
    not yet read, the current one's unread lines first (a reader that goes on a piece
    at a time from where the lines stopped)."""

    def __init__(self, pieces: Iterator[str]) -> None:
        self._pieces = pieces
        self._piece = ""
        self._pos = 0

    def __iter__(self) -> Lines:
        return self

    def __next__(self) -> str:
        piece, pos = self._piece, self._pos
        while pos >= len(piece):
            piece = next(self._pieces)
            if isinstance(piece, LongLine):
                self._piece, self._pos = "", 0
                return piece
            self._piece, pos = piece, 0
        end = piece.find("\n", pos) + 1 or len(piece)
        self._pos = end
        return piece[pos:end]

    def rest(self) -> Iterator[str]:
        """The pieces not yet read (the lines they hold are no longer given one by one)."""
        piece, pos = self._piece, self._pos
        self._piece, self._pos = "", 0
        if pos < len(piece):
            yield piece[pos:]
        yield from self._pieces
