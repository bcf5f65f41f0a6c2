"""A progress report for long audits, drawn by tqdm on a terminal only.

It shows the input read (bytes of the files named, compressed or not, so the total
is known up front), the servers reported, the rate and the time left, in the
terminal's width; on anything that is not a terminal nothing is drawn.  tqdm is an
optional extra (``pip install 'gpuclass[audit]'``); without it nothing is drawn.

>>> import io
>>> p = Progress(100, io.StringIO())   # not a terminal: nothing drawn
>>> p.advance(60); p.row(); p.close()
>>> (p.done, p.rows, p.bar)
(60, 1, None)
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any

__all__ = ["Progress", "Counted"]


class Progress:
    """Bytes read out of ``total`` and servers reported, on ``stream`` (stderr by default)."""

    def __init__(self, total: int, stream: IO[str] | None = None, unit: str = "B") -> None:
        self.total = max(total, 1)
        self.done = 0
        self.rows = 0
        self.stream = stream if stream is not None else sys.stderr
        self.bar: Any = None
        if _is_tty(self.stream):
            try:
                from tqdm import tqdm
            except ImportError:  # an optional extra: no bar, nothing else changes
                return
            self.bar = tqdm(total=self.total, unit=unit, unit_scale=unit == "B", unit_divisor=1024,
                            file=self.stream, dynamic_ncols=True, leave=True, mininterval=0.2,
                            desc="audit")

    def advance(self, n: int) -> None:
        """``n`` more bytes (or rows) read."""
        if n <= 0:
            return
        self.done += n
        if self.bar is not None:
            self.bar.update(n)

    def row(self, n: int = 1) -> None:
        """``n`` more servers reported."""
        self.rows += n
        if self.bar is not None and self.rows % 256 == 0:
            self.bar.set_postfix_str(f"{self.rows} servers", refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(f"{self.rows} servers", refresh=False)
            self.bar.close()
            self.bar = None


def _is_tty(stream: IO[str]) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class Counted:
    """A binary file object whose reads advance a :class:`Progress`."""

    def __init__(self, fh: IO[bytes], progress: Progress) -> None:
        self.fh = fh
        self.progress = progress
        self.high = 0   # bytes read past once (a stream read again after a seek counts once)

    def read(self, n: int = -1) -> bytes:
        data = self.fh.read(n)
        pos = self.fh.tell() if self.fh.seekable() else self.high + len(data)
        if pos > self.high:
            self.progress.advance(pos - self.high)
            self.high = pos
        return data

    def __getattr__(self, name: str) -> Any:
        return getattr(self.fh, name)
