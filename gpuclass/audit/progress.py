"""A progress bar on stderr for long audits (drawn only on a terminal)."""

from __future__ import annotations

import sys
import time
from typing import IO

__all__ = ["Progress"]


class Progress:
    """A one-line progress bar on stderr (only when it is a terminal)."""

    def __init__(self, total: int, stream: IO[str] | None = None) -> None:
        self.total = max(total, 1)
        self.done = 0
        self.base = 0
        self.stream = stream or sys.stderr
        self.last = 0.0

    def advance(self, n: int) -> None:
        self.done += n
        self._draw()

    def set(self, pos: int) -> None:
        self.done = self.base + pos
        self._draw()

    def next_file(self, size: int) -> None:
        self.base += size
        self.done = self.base

    def _draw(self, final: bool = False) -> None:
        now = time.monotonic()
        if not final and now - self.last < 0.2:
            return
        self.last = now
        frac = min(self.done / self.total, 1.0)
        bar = "#" * int(frac * 30)
        self.stream.write(f"\r[{bar:<30}] {frac * 100:5.1f}% {self.done >> 20} / {self.total >> 20} MiB")
        self.stream.flush()

    def close(self) -> None:
        self.done = self.total
        self._draw(final=True)
        self.stream.write("\n")
        self.stream.flush()
