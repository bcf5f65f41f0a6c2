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

__all__ = ["Reader", "READ_SIZE"]

READ_SIZE = 4 << 20  # bytes read at a time (a small feed in one piece: fewer fresh pages)


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

    def lines(self) -> Iterator[str]:
        """Lines with their ``\n`` (the csv module needs it inside quoted fields)."""
        tail = ""
        while not self.eof:
            chunk = tail + self.read()
            parts = chunk.split("\n")
            tail = parts.pop()
            for part in parts:
                yield part + "\n"
        if tail:
            yield tail
