"""Byte streams as an audit reads them: the head read to tell a kind, put back; a stream from
its start again; batches read ahead on a thread.

>>> import io
>>> fh = io.BytesIO(b"abcdef")
>>> head = read_head(fh, 2)
>>> head, Prefixed(head, fh).read()
(b'ab', b'abcdef')
"""

from __future__ import annotations

import io

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import IO, Any

__all__ = ["Prefixed", "read_head", "read_at_most", "rewound", "prefetch"]


class Prefixed(io.RawIOBase):
    """The bytes already read to tell a stream's kind, then the rest of the stream."""

    def __init__(self, head: bytes, rest: IO[bytes]) -> None:
        super().__init__()
        self.head, self.rest = head, rest
        self.at = 0  # how much of the head was handed out (never sliced off: no copies)

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        if self.at < len(self.head):
            n = min(len(b), len(self.head) - self.at)
            b[:n] = memoryview(self.head)[self.at:self.at + n]
            self.at += n
            if self.at == len(self.head):
                self.head, self.at = b"", 0
            return n
        if isinstance(self.rest, io.IOBase):  # straight into the caller's buffer: no copy
            return self.rest.readinto(b) or 0
        data = self.rest.read(len(b))  # a wrapper that counts what is read (progress)
        b[:len(data)] = data
        return len(data)


def read_head(fh: IO[bytes], size: int) -> bytes:
    """Up to ``size`` bytes from the start of ``fh`` (fewer only at its end)."""
    out = b""
    while len(out) < size:
        chunk = fh.read(size - len(out))
        if not chunk:
            break
        out += chunk
    return out


def read_at_most(fh: IO[bytes], limit: int, piece: int = 1 << 20) -> bytes:
    """Up to ``limit + 1`` bytes of ``fh`` (more than ``limit``: it is over), read a piece
    at a time: nothing is allocated for the limit up front (``read(limit + 1)`` asks for
    the whole limit at once), and a bounded stream checks its limits after each piece.

    >>> import io
    >>> len(read_at_most(io.BytesIO(b"x" * 10), 4, piece=3))
    5
    """
    parts = []
    size = 0
    while size <= limit:
        data = fh.read(min(piece, limit + 1 - size))
        if not data:
            break
        parts.append(data)
        size += len(data)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def rewound(fh: IO[bytes], head: bytes) -> IO[bytes]:
    """``fh`` from its start again, after ``head`` was read from it."""
    if fh.seekable():
        try:
            fh.seek(0)
            return fh
        except (OSError, ValueError):
            pass
    return io.BufferedReader(Prefixed(head, fh))


def prefetch(items: Iterable[Any], depth: int = 1, lead: int | None = None) -> Iterator[Any]:
    """``items`` produced by a background thread, up to ``depth`` ahead, from the moment
    this is called (a caller may import or compile what it needs while the first item is
    read): reading (pyarrow decodes without the GIL) goes on while the kernels work on
    what came before.  Until the consumer takes its first item, the producer may go up to
    ``lead`` items ahead (default ``depth``): a Parquet audit's reader decodes while the
    command still loads numpy and the engine.  An error in the producer is raised where
    the consumer reaches it; a consumer that stops early (or never starts: ``close()``,
    or the iterator dropped) stops the producer.

    One ahead by default (a device table's batches: one queued, the next being made):
    two held a 1M-row Parquet audit's peak 2.7 MiB higher in the same time, and with the
    batch let go once audited (``run._device_chunks``) 6.3 MiB higher at 1M rows and 14.6
    MiB at 10M, in 3-7% more CPU time (BENCHMARKS.md, session 49)."""
    return _Prefetch(items, depth, max(depth, lead or depth))


class _Prefetch:
    def __init__(self, items: Iterable[Any], depth: int, lead: int) -> None:
        import queue
        import threading

        self._q: queue.Queue = queue.Queue(maxsize=lead)
        self._depth = depth if lead > depth else None  # the bound from the first item taken on
        self._stop = threading.Event()
        self._empty = queue.Empty
        self._ended = False
        q, stop, full = self._q, self._stop, queue.Full

        def produce() -> None:
            try:
                for item in items:
                    while not stop.is_set():
                        try:
                            q.put((item, None), timeout=0.1)
                            break
                        except full:
                            continue
                    item = None  # the consumer's now: not held here while the next is made
                    if stop.is_set():
                        return
                q.put((_DONE, None))
            except BaseException as exc:  # handed to the consumer
                q.put((_DONE, exc))

        self._worker = threading.Thread(target=produce, name="gpuclass-prefetch", daemon=True)
        self._worker.start()

    def __iter__(self) -> _Prefetch:
        return self

    def __next__(self) -> Any:
        if self._ended:
            raise StopIteration
        try:
            item, exc = self._q.get()
        except BaseException:
            self.close()
            raise
        if self._depth is not None:
            with self._q.mutex:  # (put() reads maxsize under this lock)
                self._q.maxsize = self._depth
            self._depth = None
        if item is _DONE:
            self.close()
            if exc is not None:
                raise exc
            raise StopIteration
        return item

    def close(self) -> None:
        """Stop the producer and wait for it (what it holds is let go)."""
        self._ended = True
        self._stop.set()
        while self._worker.is_alive():  # let a blocked producer see the stop
            try:
                self._q.get_nowait()
            except self._empty:
                self._worker.join(0.05)

    def __del__(self) -> None:
        if not self._ended:
            self._stop.set()  # a producer left running sees it within its next put


_DONE = object()
